// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GID table and the node GUID.
 *
 * GID 0 is the netdev's hardware address, zero-padded to 16 bytes: for
 * iWARP, rdma_cm finds the RDMA device behind a local IP address by looking
 * that up in the GID cache. The node GUID is the EUI-64 of the same MAC.
 * A netdev without a MAC (loopback, tun, ...) gets a random locally
 * administered one, made once per device, so no GID 0 is zero (the core
 * drops zero GIDs from its cache).
 *
 * GIDs 1 and up carry the netdev's IP addresses as RoCE does: IPv4 as
 * IPv4-mapped IPv6 (::ffff:a.b.c.d), then IPv6. They are what consumers
 * that exchange GIDs out of band (ibv_rc_pingpong -g, perftest without
 * -R) hand to modify_qp as the peer's address: siw connects QPs to it
 * (qp_connect.c). The table follows address changes; unused entries are
 * zero.
 *
 * The last entry repeats GID 0. At every GID_CHANGE the core rewrites its
 * cache entry by entry, each one absent for a moment; an rdma_cm lookup of
 * the MAC GID in that moment (a connection request arriving, an address
 * being resolved) would find no device and refuse the connection. With two
 * copies, one is always there.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>

#include "siw.h"

/* The MAC the device identifies itself with: the netdev's, if it has one. */
static void siw_gid_pick_mac(struct siw_device *sdev, u8 *mac)
{
	struct net_device *ndev = sdev->netdev;

	if (ndev->addr_len == ETH_ALEN && !is_zero_ether_addr(ndev->dev_addr))
		ether_addr_copy(mac, ndev->dev_addr);
	else
		ether_addr_copy(mac, sdev->random_mac);
}

/* Filling the table from GID 1 on, up to the copy of GID 0. */
struct siw_gid_fill {
	struct siw_addr_visitor v;
	union ib_gid *gid;
	u32 n;
};

/* An address as a GID: IPv4 ones IPv4-mapped. */
static bool siw_gid_add_addr(struct siw_addr_visitor *v,
			     const struct sockaddr_storage *a)
{
	struct siw_gid_fill *f = container_of(v, struct siw_gid_fill, v);
	struct in6_addr *g = (struct in6_addr *)f->gid[f->n].raw;

	if (a->ss_family == AF_INET)
		ipv6_addr_set_v4mapped(((struct sockaddr_in *)a)->sin_addr.s_addr,
				       g);
	else
		*g = ((struct sockaddr_in6 *)a)->sin6_addr;
	return ++f->n < SIW_GID_MAC_COPY;
}

/* The one place that decides what the table holds. */
static void siw_gid_compute(struct siw_device *sdev, u8 *mac,
			    union ib_gid *gid)
{
	struct siw_gid_fill fill = {
		.v.add = siw_gid_add_addr,
		.gid = gid,
		.n = 1,
	};

	memset(gid, 0, sizeof(*gid) * SIW_GID_TBL_LEN);
	siw_gid_pick_mac(sdev, mac);
	ether_addr_copy(gid[0].raw, mac);
	gid[SIW_GID_MAC_COPY] = gid[0];
	siw_netdev_walk_addrs(sdev->netdev, true, true, &fill.v);
}

static void siw_gid_work(struct work_struct *work)
{
	struct siw_device *sdev = container_of(work, struct siw_device,
					       gid_work);

	siw_gid_update(sdev);
}

/* At device creation, before the device can be queried. */
void siw_gid_init(struct siw_device *sdev)
{
	eth_random_addr(sdev->random_mac);
	INIT_WORK(&sdev->gid_work, siw_gid_work);
	siw_gid_compute(sdev, sdev->mac, sdev->gid);
	/* The GUID is the device's identity: it stays if the MAC changes. */
	addrconf_addr_eui48((u8 *)&sdev->base.node_guid, sdev->mac);
}

/* Recompute the table after a netdev address change; true if it changed. */
bool siw_gid_refresh(struct siw_device *sdev)
{
	union ib_gid gid[SIW_GID_TBL_LEN];
	u8 mac[ETH_ALEN];
	bool changed;

	siw_gid_compute(sdev, mac, gid);

	spin_lock_bh(&sdev->gid_lock);
	changed = memcmp(gid, sdev->gid, sizeof(gid)) != 0;
	if (changed) {
		memcpy(sdev->gid, gid, sizeof(gid));
		ether_addr_copy(sdev->mac, mac);
	}
	spin_unlock_bh(&sdev->gid_lock);

	if (changed)
		siw_dbg(sdev, "GID table updated (MAC %pM)\n", mac);
	return changed;
}

int siw_query_gid(struct ib_device *base, u32 port, int index,
		  union ib_gid *gid)
{
	struct siw_device *sdev = to_siw_device(base);

	if (port != SIW_PORT || index < 0 || index >= SIW_GID_TBL_LEN)
		return -EINVAL;

	spin_lock_bh(&sdev->gid_lock);
	*gid = sdev->gid[index];
	spin_unlock_bh(&sdev->gid_lock);
	return 0;
}

/* The IP address in an address GID; false for GID 0 style or zero GIDs. */
bool siw_gid_to_addr(struct siw_device *sdev, const union ib_gid *gid,
		     struct sockaddr_storage *addr)
{
	const struct in6_addr *a = (const struct in6_addr *)gid->raw;

	memset(addr, 0, sizeof(*addr));
	if (ipv6_addr_v4mapped(a)) {
		struct sockaddr_in *s = (struct sockaddr_in *)addr;

		s->sin_family = AF_INET;
		s->sin_addr.s_addr = a->s6_addr32[3];
		return s->sin_addr.s_addr != 0;
	}
	/* GID 0 style: a MAC, the last ten bytes zero. */
	if (!memchr_inv(gid->raw + ETH_ALEN, 0, sizeof(*gid) - ETH_ALEN))
		return false;
	if (ipv6_addr_any(a))
		return false;
	((struct sockaddr_in6 *)addr)->sin6_family = AF_INET6;
	((struct sockaddr_in6 *)addr)->sin6_addr = *a;
	if (ipv6_addr_type(a) & IPV6_ADDR_LINKLOCAL)
		((struct sockaddr_in6 *)addr)->sin6_scope_id =
			sdev->netdev->ifindex;
	return true;
}

/* The local address of GID @index: 0, or -EINVAL if it holds none. */
int siw_gid_addr(struct siw_device *sdev, u32 index,
		 struct sockaddr_storage *addr)
{
	union ib_gid gid;

	if (index >= SIW_GID_TBL_LEN)
		return -EINVAL;
	spin_lock_bh(&sdev->gid_lock);
	gid = sdev->gid[index];
	spin_unlock_bh(&sdev->gid_lock);
	return siw_gid_to_addr(sdev, &gid, addr) ? 0 : -EINVAL;
}

/* An address of @ndev changed: refresh its device's table, if it has one. */
void siw_gid_schedule(struct net_device *ndev)
{
	struct ib_device *base = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);

	if (!base)
		return;
	queue_work(system_wq, &to_siw_device(base)->gid_work);
	ib_device_put(base);
}

static int siw_inetaddr_event(struct notifier_block *nb, unsigned long event,
			      void *arg)
{
	const struct in_ifaddr *ifa = arg;

	siw_gid_schedule(ifa->ifa_dev->dev);
	return NOTIFY_DONE;
}

static int siw_inet6addr_event(struct notifier_block *nb, unsigned long event,
			       void *arg)
{
	const struct inet6_ifaddr *ifp = arg;

	siw_gid_schedule(ifp->idev->dev);
	return NOTIFY_DONE;
}

static struct notifier_block siw_inetaddr_nb = {
	.notifier_call = siw_inetaddr_event,
};

static struct notifier_block siw_inet6addr_nb = {
	.notifier_call = siw_inet6addr_event,
};

int siw_gid_notifiers_register(void)
{
	int err = register_inetaddr_notifier(&siw_inetaddr_nb);

	if (err)
		return err;
	err = register_inet6addr_notifier(&siw_inet6addr_nb);
	if (err)
		unregister_inetaddr_notifier(&siw_inetaddr_nb);
	return err;
}

void siw_gid_notifiers_unregister(void)
{
	unregister_inet6addr_notifier(&siw_inet6addr_nb);
	unregister_inetaddr_notifier(&siw_inetaddr_nb);
}
