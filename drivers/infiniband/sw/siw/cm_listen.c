// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Listening for iWARP connections: iw_cm's listens (a wildcard listen binds
 * each address of the device's netdev, so that a listen serves its own
 * device only) and qp_connect.c's per-namespace listener. Each accepted
 * TCP connection becomes a passive endpoint (cm.c) that waits for the
 * peer's MPA request.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/inetdevice.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <net/addrconf.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "cm.h"
#include "cm_cep.h"
#include "portmap.h"
#include "siw.h"

/* Addresses a wildcard listen binds to, per listener. */
#define SIW_CM_MAX_LISTEN_ADDRS		16

/*
 * Endpoints that wait for their peer's MPA request, or for the answer of
 * the listener's consumer to it, cost memory, a socket and a timer each,
 * and a peer can open TCP connections that say nothing, or ask and never
 * hear back from a consumer that is slow to answer. A listener keeps at
 * most its backlog of them (within these bounds); more wait in TCP's
 * accept queue, which the backlog bounds too, until one of them was
 * answered or gave up. Over all listeners at most SIW_CM_MAX_WAITING:
 * beyond that a new connection is closed at once.
 */
#define SIW_CM_MIN_WAITING		16
#define SIW_CM_MAX_LISTEN_WAITING	1024
#define SIW_CM_MAX_WAITING		4096

static atomic_t siw_cm_waiting = ATOMIC_INIT(0);

/* A listening socket; a wildcard listen has one per address. */
struct siw_lsock {
	struct socket *sock;
	struct siw_listener *l;
	void (*sk_data_ready)(struct sock *sk);
};

struct siw_listener {
	struct kref ref;
	struct siw_device *sdev;	/* NULL for the QP connection one */
	struct iw_cm_id *cm_id;		/* referenced until release */
	const struct siw_cep_ops *ops;	/* its endpoints' kind */
	struct work_struct accept_work;
	spinlock_t lock;		/* ceps, closing, nr_waiting */
	struct list_head ceps;
	bool closing;
	u32 nr_waiting;			/* ceps waiting for their request */
	u32 max_waiting;
	u32 nr_lsock;
	struct siw_lsock lsock[SIW_CM_MAX_LISTEN_ADDRS];
};

bool siw_listener_closing(struct siw_listener *l)
{
	bool closing;

	spin_lock_bh(&l->lock);
	closing = l->closing;
	spin_unlock_bh(&l->lock);
	return closing;
}

struct iw_cm_id *siw_listener_cm_id(const struct siw_listener *l)
{
	return l->cm_id;
}

static void siw_listener_release(struct kref *ref)
{
	struct siw_listener *l = container_of(ref, struct siw_listener, ref);

	if (l->cm_id)
		l->cm_id->rem_ref(l->cm_id);
	kfree(l);
}

/* Queue the accept work, unless it is queued already. */
static void siw_listener_kick(struct siw_listener *l)
{
	kref_get(&l->ref);
	if (!queue_work(siw_cm_wq, &l->accept_work))
		kref_put(&l->ref, siw_listener_release);
}

/*
 * @cep leaves the listener's room (accepted, refused, closed): make room
 * for another connection. Under cep->mutex.
 */
static void siw_listener_free_room(struct siw_cep *cep)
{
	struct siw_listener *l = cep->listener;
	bool kick;

	lockdep_assert_held(&cep->mutex);
	if (!l || !cep->waiting)
		return;
	cep->waiting = false;
	atomic_dec(&siw_cm_waiting);
	spin_lock_bh(&l->lock);
	kick = l->nr_waiting-- == l->max_waiting && !l->closing;
	spin_unlock_bh(&l->lock);
	/* The accept work stopped at max_waiting: connections may wait. */
	if (kick)
		siw_listener_kick(l);
}

/* A passive endpoint leaves its listener (accepted, refused, closed). */
void siw_listener_unlink(struct siw_cep *cep)
{
	struct siw_listener *l = cep->listener;

	if (!l)
		return;
	siw_listener_free_room(cep);
	spin_lock_bh(&l->lock);
	list_del_init(&cep->lnode);
	spin_unlock_bh(&l->lock);
	cep->listener = NULL;
	kref_put(&l->ref, siw_listener_release);
}

/*
 * TCP makes each connection's socket as a copy of the listening one,
 * callbacks and sk_user_data included, so until siw_listener_accept()
 * resets it a child socket calls here as well, and TCP may have read the
 * callback just before the endpoint hooked the child: its sk_user_data
 * is then a siw_cep. Only a listening socket carries a siw_lsock.
 */
static void siw_lsock_data_ready(struct sock *sk)
{
	struct siw_lsock *ls = NULL;

	read_lock_bh(&sk->sk_callback_lock);
	if (inet_sk_state_load(sk) == TCP_LISTEN)
		ls = sk->sk_user_data;
	if (ls)
		siw_listener_kick(ls->l);
	read_unlock_bh(&sk->sk_callback_lock);
}

/*
 * Give an accepted socket the callbacks of a socket of its own: nothing of
 * the listener stays in it, however long the endpoint outlives the
 * listener.
 */
static void siw_lsock_reset_child(struct siw_lsock *ls, struct socket *sock)
{
	struct sock *sk = sock->sk;

	write_lock_bh(&sk->sk_callback_lock);
	if (sk->sk_data_ready == siw_lsock_data_ready)
		WRITE_ONCE(sk->sk_data_ready, ls->sk_data_ready);
	/* TCP copies without this lock: even a torn copy ends here. */
	sk->sk_user_data = NULL;
	write_unlock_bh(&sk->sk_callback_lock);
}

/* May the listener take one more endpoint that waits for its request? */
static bool siw_listener_has_room(struct siw_listener *l)
{
	bool room;

	spin_lock_bh(&l->lock);
	room = !l->closing && l->nr_waiting < l->max_waiting;
	spin_unlock_bh(&l->lock);
	return room;
}

/*
 * Did TCP queue something on an accepted socket before the endpoint hooked
 * it: octets, the peer's FIN or a reset? Those raised no upcall of ours.
 * Whatever comes later raises one as it arrives, and so puts the
 * endpoint's work in line in the order the requests arrived. An event
 * queued at accept time for a request still on its way would hold a place
 * ahead of requests that arrive first on other connections: with 8
 * requests back to back, the listener saw request 5 before request 4.
 */
static bool siw_lsock_child_has_news(struct sock *sk)
{
	bool news;

	/*
	 * TCP queues a segment and calls the upcall under the socket's
	 * spinlock, or leaves it to release_sock() while the socket is
	 * owned. So with the endpoint's upcalls in place, a segment is
	 * either in the queue when we look or comes with our upcall.
	 */
	lock_sock(sk);
	news = !skb_queue_empty(&sk->sk_receive_queue) ||
	       siw_sk_peer_gone(sk);
	release_sock(sk);
	return news;
}

static void siw_listener_new_cep(struct siw_listener *l, struct socket *sock)
{
	struct siw_cep *cep;
	bool full;

	if (atomic_inc_return(&siw_cm_waiting) > SIW_CM_MAX_WAITING) {
		atomic_dec(&siw_cm_waiting);
		siw_warn_rl(l->sdev,
			    "%d connections to siw listeners wait for their MPA request or its answer; closing a new one\n",
			    SIW_CM_MAX_WAITING);
		sock_release(sock);
		return;
	}
	cep = siw_cep_alloc(l->sdev, l->ops);
	if (!cep) {
		atomic_dec(&siw_cm_waiting);
		sock_release(sock);
		return;
	}
	kernel_getsockname(sock, (struct sockaddr *)&cep->laddr);
	kernel_getpeername(sock, (struct sockaddr *)&cep->raddr);
	siw_cep_set_state(cep, SIW_CEP_AWAIT_REQUEST);
	siw_cep_sock_hook(cep, sock);

	spin_lock_bh(&l->lock);
	if (!l->closing) {
		kref_get(&l->ref);
		cep->listener = l;
		list_add_tail(&cep->lnode, &l->ceps);
		cep->waiting = true;
		l->nr_waiting++;
	}
	full = l->nr_waiting == l->max_waiting;
	spin_unlock_bh(&l->lock);
	if (!cep->listener) {
		atomic_dec(&siw_cm_waiting);
		siw_cep_close(cep, false, 0);
	} else {
		if (full)
			siw_warn_rl(l->sdev,
				    "listener %pISpc: %u connections wait for their MPA request or its answer; accepting more once one of them ends\n",
				    &cep->laddr, l->max_waiting);
		siw_cep_arm(cep, siw_cm_mpa_timeout_ms());
		if (siw_lsock_child_has_news(sock->sk))
			siw_cep_event(cep, SIW_CEP_EV_DATA);
	}
	siw_cep_unlock(cep);
}

/*
 * Take what TCP accepted, as far as there is room. The listener's sockets
 * stay until siw_listener_destroy() has waited for this work.
 */
static void siw_listener_accept(struct work_struct *work)
{
	struct siw_listener *l = container_of(work, struct siw_listener,
					      accept_work);
	struct socket *sock;
	u32 i;

	for (i = 0; i < l->nr_lsock; i++) {
		while (siw_listener_has_room(l) &&
		       !kernel_accept(l->lsock[i].sock, &sock, O_NONBLOCK)) {
			siw_lsock_reset_child(&l->lsock[i], sock);
			siw_listener_new_cep(l, sock);
		}
	}
	kref_put(&l->ref, siw_listener_release);
}

/*
 * A socket of @l listening on @addr. @mapped: the port is one that iwpmd
 * mapped; if a socket holds it (iwpmd's reservation), siw's shares it
 * (portmap.c), unless a host socket listens there.
 */
static noinline int siw_listener_add(struct siw_listener *l, struct net *net,
				     const struct sockaddr_storage *addr,
				     int backlog, bool mapped)
{
	struct siw_lsock *ls = &l->lsock[l->nr_lsock];
	struct socket *sock;
	struct sock *sk;
	int err;

	err = sock_create_kern(net, addr->ss_family, SOCK_STREAM, IPPROTO_TCP,
			       &sock);
	if (err)
		return err;
	sk = sock->sk;
	sock_set_reuseaddr(sk);
	if (addr->ss_family == AF_INET6)
		ip6_sock_set_v6only(sk);
	err = kernel_bind(sock, (struct sockaddr *)addr, siw_addr_len(addr));
	if (err == -EADDRINUSE && mapped) {
		/* iwpmd's reservation of the port (portmap.c). */
		err = siw_pm_share_listen_port(sk, l->sdev->netdev);
		if (!err)
			err = kernel_bind(sock, (struct sockaddr *)addr,
					  siw_addr_len(addr));
		if (!err)
			err = siw_pm_may_listen(sk, addr, l->sdev->netdev);
	}
	if (!err)
		err = kernel_listen(sock, backlog);
	if (err) {
		sock_release(sock);
		return err;
	}
	ls->sock = sock;
	ls->l = l;
	ls->sk_data_ready = NULL;	/* not hooked yet */
	l->nr_lsock++;
	return 0;
}

ALLOW_ERROR_INJECTION(siw_listener_add, ERRNO);

/*
 * The listener is complete: let its sockets report connections, and take
 * those that came while it was being set up.
 */
static void siw_listener_start(struct siw_listener *l)
{
	u32 i;

	for (i = 0; i < l->nr_lsock; i++) {
		struct siw_lsock *ls = &l->lsock[i];
		struct sock *sk = ls->sock->sk;

		write_lock_bh(&sk->sk_callback_lock);
		ls->sk_data_ready = sk->sk_data_ready;
		WRITE_ONCE(sk->sk_data_ready, siw_lsock_data_ready);
		sk->sk_user_data = ls;
		write_unlock_bh(&sk->sk_callback_lock);
	}
	siw_listener_kick(l);
}

/* After this no socket upcall queues the accept work. */
static void siw_listener_unhook(struct siw_listener *l)
{
	u32 i;

	for (i = 0; i < l->nr_lsock; i++) {
		struct siw_lsock *ls = &l->lsock[i];
		struct sock *sk = ls->sock->sk;

		write_lock_bh(&sk->sk_callback_lock);
		if (ls->sk_data_ready) {
			WRITE_ONCE(sk->sk_data_ready, ls->sk_data_ready);
			sk->sk_user_data = NULL;
		}
		write_unlock_bh(&sk->sk_callback_lock);
	}
}

static bool siw_addr_any(const struct sockaddr_storage *a)
{
	if (a->ss_family == AF_INET6)
		return ipv6_addr_any(&((struct sockaddr_in6 *)a)->sin6_addr);
	return ((struct sockaddr_in *)a)->sin_addr.s_addr == htonl(INADDR_ANY);
}

/* The addresses of a wildcard listen, with its port. */
struct siw_addr_list {
	struct siw_addr_visitor v;
	struct sockaddr_storage *addr;	/* SIW_CM_MAX_LISTEN_ADDRS */
	__be16 port;
	u32 n;
};

static bool siw_addr_list_add(struct siw_addr_visitor *v,
			      const struct sockaddr_storage *a)
{
	struct siw_addr_list *l = container_of(v, struct siw_addr_list, v);
	struct sockaddr_storage *s = &l->addr[l->n++];

	*s = *a;
	if (s->ss_family == AF_INET6)
		((struct sockaddr_in6 *)s)->sin6_port = l->port;
	else
		((struct sockaddr_in *)s)->sin_port = l->port;
	return l->n < SIW_CM_MAX_LISTEN_ADDRS;
}

static noinline struct siw_listener *
siw_listener_alloc(struct siw_device *sdev, int backlog)
{
	struct siw_listener *l = kzalloc(sizeof(*l), GFP_KERNEL);

	if (!l)
		return NULL;
	kref_init(&l->ref);
	l->sdev = sdev;
	INIT_WORK(&l->accept_work, siw_listener_accept);
	spin_lock_init(&l->lock);
	INIT_LIST_HEAD(&l->ceps);
	l->max_waiting = clamp(backlog, SIW_CM_MIN_WAITING,
			       SIW_CM_MAX_LISTEN_WAITING);
	return l;
}

ALLOW_ERROR_INJECTION(siw_listener_alloc, NULL);

/*
 * Teardown, in this order:
 * 1. closing: no endpoint joins any more, and a freed waiting slot
 *    kicks no accept work;
 * 2. the sockets' upcalls are unhooked: nothing queues the accept work;
 * 3. the accept work is cancelled, or waited for: it may be inside
 *    kernel_accept() on the sockets;
 * 4. only then the sockets go;
 * 5. endpoints still waiting for their MPA request are aborted; those
 *    reported to iw_cm wait for its accept or reject, and hold the
 *    listener (and its cm_id) until they leave it (SIW_CEP_EV_UNLISTEN);
 * 6. the creation reference goes.
 * This is also the way out of a create that failed half way.
 */
static void siw_listener_destroy(struct siw_listener *l)
{
	struct siw_cep *cep;
	u32 i;

	spin_lock_bh(&l->lock);
	l->closing = true;
	spin_unlock_bh(&l->lock);
	siw_listener_unhook(l);
	if (cancel_work_sync(&l->accept_work))
		kref_put(&l->ref, siw_listener_release);
	for (i = 0; i < l->nr_lsock; i++)
		sock_release(l->lsock[i].sock);
	l->nr_lsock = 0;

	spin_lock_bh(&l->lock);
	list_for_each_entry(cep, &l->ceps, lnode)
		siw_cep_event(cep, SIW_CEP_EV_UNLISTEN);
	spin_unlock_bh(&l->lock);
	kref_put(&l->ref, siw_listener_release);
}

/*
 * Why a listen failed, where the reason is the host's port space: any
 * process may listen through rdma_cm, so rate limited.
 */
static void siw_listen_failed(struct iw_cm_id *id, int err, bool mapped)
{
	struct siw_device *sdev = to_siw_device(id->device);

	if (err != -EADDRINUSE) {
		siw_dbg(sdev, "listen on %pISpc failed: %d\n",
			&id->m_local_addr, err);
	} else if (mapped) {
		siw_warn_rl(sdev,
			    "cannot listen on %pISpc: iwpmd mapped it to port %u, which siw cannot share: a TCP socket of this host listens there (or a BPF sk_lookup program may steer its connections)\n",
			    &id->local_addr, ntohs(siw_pm_port(&id->m_local_addr)));
	} else {
		siw_warn_rl(sdev,
			    "cannot listen on %pISpc: a TCP socket of this host holds the port (siw shares the host's TCP ports; %s)\n",
			    &id->local_addr, id->mapped ?
			    "iwpmd did not map it: is iwpmd running?" :
			    "with iwpmd running, iw_cm maps an iWARP listener to a port of its own");
	}
}

int siw_cm_create_listen(struct iw_cm_id *id, int backlog)
{
	struct siw_device *sdev = to_siw_device(id->device);
	struct sockaddr_storage *addr = &id->m_local_addr;
	struct net *net = dev_net(sdev->netdev);
	bool mapped = siw_pm_remapped(id, true);
	struct sockaddr_storage *addrs;
	struct siw_listener *l;
	int err = 0;
	u32 i, n;

	if (addr->ss_family != AF_INET && addr->ss_family != AF_INET6)
		return -EAFNOSUPPORT;
	addrs = kcalloc(SIW_CM_MAX_LISTEN_ADDRS, sizeof(*addrs), GFP_KERNEL);
	l = siw_listener_alloc(sdev, backlog);
	if (!l || !addrs) {
		kfree(l);
		kfree(addrs);
		return -ENOMEM;
	}
	/* Complete before a socket listens: its requests go to this id. */
	l->ops = &siw_cep_iw_ops;
	l->cm_id = id;
	id->add_ref(id);

	/*
	 * A wildcard listen serves the device's own addresses only. An
	 * IPv6 wildcard takes IPv4 too unless the listener asked for IPv6
	 * only (svcrdma listens on 0.0.0.0 and on [::] IPv6-only, both on
	 * one port).
	 */
	if (siw_addr_any(addr)) {
		bool v6 = addr->ss_family == AF_INET6;
		struct siw_addr_list list = {
			.v.add = siw_addr_list_add,
			.addr = addrs,
			.port = ((struct sockaddr_in *)addr)->sin_port,
		};

		siw_netdev_walk_addrs(sdev->netdev, !v6 || !id->afonly, v6,
				      &list.v);
		n = list.n;
	} else {
		addrs[0] = *addr;
		n = 1;
	}
	for (i = 0; i < n && !err; i++)
		err = siw_listener_add(l, net, &addrs[i], backlog, mapped);
	kfree(addrs);
	if (err) {
		siw_listen_failed(id, err, mapped);
		siw_listener_destroy(l);
		return err;
	}
	id->provider_data = l;
	siw_listener_start(l);
	siw_dbg(sdev, "listening on %pISpc (%u sockets)\n", addr, l->nr_lsock);
	return 0;
}

int siw_cm_destroy_listen(struct iw_cm_id *id)
{
	struct siw_listener *l = id->provider_data;

	if (l) {
		id->provider_data = NULL;
		siw_listener_destroy(l);
	}
	return 0;
}

/*
 * A listener of no device on @port in @net, every address, IPv4 and IPv6:
 * its endpoints are of @ops' kind (qp_connect.c's).
 */
struct siw_listener *siw_cm_listen_port(struct net *net, u16 port,
					const struct siw_cep_ops *ops)
{
	struct sockaddr_storage a = {};
	struct siw_listener *l = siw_listener_alloc(NULL, SOMAXCONN);
	int err;

	if (!l)
		return ERR_PTR(-ENOMEM);
	l->ops = ops;
	((struct sockaddr_in *)&a)->sin_family = AF_INET;
	((struct sockaddr_in *)&a)->sin_port = htons(port);
	err = siw_listener_add(l, net, &a, SOMAXCONN, false);
	if (!err && IS_ENABLED(CONFIG_IPV6)) {
		memset(&a, 0, sizeof(a));
		((struct sockaddr_in6 *)&a)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&a)->sin6_port = htons(port);
		err = siw_listener_add(l, net, &a, SOMAXCONN, false);
		/*
		 * An IPv4-only namespace listens on IPv4 only. Any other
		 * failure (a socket of someone else's on the IPv6 port)
		 * fails the listen: connections to IPv6 addresses would go
		 * to that socket.
		 */
		if (err == -EAFNOSUPPORT || err == -EADDRNOTAVAIL) {
			pr_debug("no IPv6 listener on port %u: %d\n", port, err);
			err = 0;
		}
	}
	if (err) {
		siw_listener_destroy(l);
		return ERR_PTR(err);
	}
	siw_listener_start(l);
	return l;
}

void siw_cm_unlisten(struct siw_listener *l)
{
	siw_listener_destroy(l);
}
