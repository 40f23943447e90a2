// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * siw and the iWARP port mapper.
 *
 * With iwpmd running, iw_cm asks it for a port of its own for every
 * listen and connect, and hands the provider the mapped addresses
 * (m_local_addr, m_remote_addr), which are what goes on the wire; the
 * application keeps the addresses it asked for (local_addr,
 * remote_addr), and iw_cm translates a passive side's request back to
 * them. That lets an iSER target listen on the iSCSI portal's own
 * ip:port, as RNICs do: their TCP port space is not the host's.
 *
 * siw's port space is the host's. iwpmd keeps every port it hands out
 * bound by a socket of its own (bound, never listening, no SO_REUSEADDR),
 * so that no host socket takes it, and siw's socket on a mapped port
 * must share the port with that reservation: SK_FORCE_REUSE skips TCP's
 * bind conflict check for it. siw asks for that only where iw_cm used a
 * mapper and a plain bind found the port taken, and a listening socket
 * then
 *  - is bound to its device, so that it takes no connection that comes
 *    in on another one, where a host socket may listen;
 *  - listens only if no host socket would take a connection to its
 *    address and port on that device (checked once it is bound: a host
 *    socket that starts to listen after that conflicts with it).
 * iw_cm takes its mapping answers from whoever sends them on the RDMA
 * netlink socket, so the port is not trusted to be iwpmd's: a listener
 * beside another listener would take its connections. A BPF sk_lookup
 * program can steer connections past the listener lookup that the check
 * does, so with one attached the port is not shared. An active socket
 * takes no connections, and connect() still keeps its 4-tuple unique.
 *
 * Without iwpmd, iw_cm's mapped addresses equal the application's, and
 * nothing here applies.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/filter.h>
#include <linux/netdevice.h>
#include <net/inet6_hashtables.h>
#include <net/inet_hashtables.h>
#include <net/l3mdev.h>
#include <net/sock.h>
#include <rdma/iw_cm.h>

#include "portmap.h"

__be16 siw_pm_port(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ((const struct sockaddr_in6 *)a)->sin6_port;
	return ((const struct sockaddr_in *)a)->sin_port;
}

/*
 * Did iwpmd give @id's local (@local) or remote port? Then the wire port
 * is not the one the application asked for.
 */
bool siw_pm_remapped(const struct iw_cm_id *id, bool local)
{
	if (!id->mapped)
		return false;
	if (local)
		return siw_pm_port(&id->local_addr) !=
		       siw_pm_port(&id->m_local_addr);
	return siw_pm_port(&id->remote_addr) != siw_pm_port(&id->m_remote_addr);
}

/*
 * Why the peer's port of @id, which iwpmd did not move, may answer no MPA
 * request: a peer whose iwpmd maps its listeners is reached only through
 * a mapping that the two iwpmds agreed on. For the log, after a reason.
 */
const char *siw_pm_no_peer_map_hint(const struct iw_cm_id *id)
{
	return id->mapped ?
	       "; iw_cm got no mapping for it: is iwpmd running here and on the peer?" :
	       "; a peer whose ports iwpmd maps is reached only with iwpmd running here too";
}

/*
 * Would a connection to @a coming in on @ndev reach a listening socket?
 * Looked up as TCP's receive path does (a VRF's master as the device,
 * @ndev as the slave).
 */
static bool siw_pm_has_listener(struct net *net,
				const struct sockaddr_storage *a,
				const struct net_device *ndev)
{
	struct inet_hashinfo *hi = net->ipv4.tcp_death_row.hashinfo;
	struct sock *sk = NULL;
	int dif, sdif;

	rcu_read_lock();
	dif = l3mdev_master_ifindex_rcu(ndev);
	sdif = dif ? ndev->ifindex : 0;
	if (!dif)
		dif = ndev->ifindex;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *s = (const struct sockaddr_in *)a;

		sk = inet_lookup_listener(net, hi, NULL, 0, 0, 0,
					  s->sin_addr.s_addr, s->sin_port,
					  dif, sdif);
	}
#if IS_ENABLED(CONFIG_IPV6)
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)a;

		sk = inet6_lookup_listener(net, hi, NULL, 0, &in6addr_any, 0,
					   &s->sin6_addr, ntohs(s->sin6_port),
					   dif, sdif);
	}
#endif
	rcu_read_unlock();
	/* Listeners are freed after RCU: only whether there was one. */
	return sk;
}

/*
 * Let the socket @sk, not yet bound, share a port that iwpmd mapped and
 * iwpmd's own socket holds.
 */
void siw_pm_share_port(struct sock *sk)
{
	sk->sk_reuse = SK_FORCE_REUSE;
}

/*
 * The same for a socket that is to listen: it is bound to @ndev. It may
 * listen once bound, if siw_pm_may_listen() says so (0).
 */
int siw_pm_share_listen_port(struct sock *sk, const struct net_device *ndev)
{
	int err;

	if (static_branch_unlikely(&bpf_sk_lookup_enabled))
		return -EADDRINUSE;
	err = sock_bindtoindex(sk, ndev->ifindex, true);
	if (err)
		return err;
	siw_pm_share_port(sk);
	return 0;
}

/*
 * @sk, bound to @addr after siw_pm_share_listen_port(), may listen. It is
 * not listening yet, so a listener found is another socket.
 */
int siw_pm_may_listen(struct sock *sk, const struct sockaddr_storage *addr,
		      const struct net_device *ndev)
{
	return siw_pm_has_listener(sock_net(sk), addr, ndev) ? -EADDRINUSE : 0;
}
