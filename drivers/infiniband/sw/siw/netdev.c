// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Following the bound netdev: port state and its events, MTU, GID, its
 * addresses, and removal of the siw device when the netdev goes away.
 *
 * Netdev notifiers run under RTNL, so the snapshot in struct siw_device is
 * only ever written with RTNL held and needs no lock of its own.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/ib_verbs.h>

#include "siw.h"

static void siw_port_event(struct siw_device *sdev, enum ib_event_type type)
{
	struct ib_event event = {
		.device = &sdev->base,
		.event = type,
		.element.port_num = SIW_PORT,
	};

	ib_dispatch_event(&event);
}

/* Send PORT_ACTIVE or PORT_ERR, but only when the state really changes. */
static void siw_port_state_update(struct siw_device *sdev)
{
	enum ib_port_state state = siw_netdev_port_state(sdev->netdev);

	if (state == sdev->port_state)
		return;

	WRITE_ONCE(sdev->port_state, state);
	siw_dbg(sdev, "port %s\n", state == IB_PORT_ACTIVE ? "up" : "down");
	siw_port_event(sdev, state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						       IB_EVENT_PORT_ERR);
}

static void siw_mtu_update(struct siw_device *sdev)
{
	WRITE_ONCE(sdev->mtu, READ_ONCE(sdev->netdev->mtu));
}

void siw_gid_update(struct siw_device *sdev)
{
	if (siw_gid_refresh(sdev))
		siw_port_event(sdev, IB_EVENT_GID_CHANGE);
}

/*
 * Catch up with the netdev after registration, which runs without RTNL and
 * can miss events. A netdev that began to unregister meanwhile may already
 * have sent NETDEV_UNREGISTER, which did not find the device yet: remove the
 * device then, and return false.
 */
bool siw_netdev_sync(struct siw_device *sdev)
{
	bool alive;

	rtnl_lock();
	alive = sdev->netdev->reg_state == NETREG_REGISTERED;
	if (alive) {
		siw_mtu_update(sdev);
		siw_gid_update(sdev);
		siw_port_state_update(sdev);
	} else {
		siw_info(sdev, "netdev %s is going away, removing device\n",
			 sdev->netdev->name);
		ib_unregister_device_queued(&sdev->base);
	}
	rtnl_unlock();
	return alive;
}

static void siw_netdev_changed(struct siw_device *sdev, unsigned long event)
{
	switch (event) {
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		siw_port_state_update(sdev);
		break;
	case NETDEV_CHANGEMTU:
		siw_mtu_update(sdev);
		break;
	case NETDEV_CHANGEADDR:
		siw_gid_update(sdev);
		break;
	case NETDEV_UNREGISTER:
		/* Also sent when the netdev moves to another namespace. */
		siw_info(sdev, "netdev %s unregistering, removing device\n",
			 sdev->netdev->name);
		ib_unregister_device_queued(&sdev->base);
		break;
	}
}

int siw_netdev_event(struct notifier_block *nb, unsigned long event,
		     void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct ib_device *base;

	ASSERT_RTNL();

	/*
	 * Only registered devices are found; siw_netdev_sync() covers
	 * events that came before registration finished.
	 */
	base = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
	if (!base)
		return NOTIFY_DONE;

	siw_netdev_changed(to_siw_device(base), event);
	ib_device_put(base);
	return NOTIFY_OK;
}

/*
 * The one walk of a netdev's addresses (GIDs, wildcard listens): IPv4
 * ones if @v4, then IPv6 ones if @v6, each family in the kernel's order,
 * each handed to @v->add as a socket address with port 0 (a link-local
 * one with the netdev's scope) until it returns false. It runs under RCU
 * or the address list's lock: it must not sleep.
 */
void siw_netdev_walk_addrs(struct net_device *ndev, bool v4, bool v6,
			   struct siw_addr_visitor *v)
{
	struct sockaddr_storage addr = {};
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&addr;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&addr;
	const struct in_ifaddr *ifa;
	struct inet6_ifaddr *ifp;
	struct inet6_dev *idev;
	struct in_device *in;
	bool more = true;

	rcu_read_lock();
	in = v4 ? __in_dev_get_rcu(ndev) : NULL;
	if (in) {
		in_dev_for_each_ifa_rcu(ifa, in) {
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = ifa->ifa_local;
			more = v->add(v, &addr);
			if (!more)
				break;
		}
	}
	rcu_read_unlock();

	idev = v6 && more ? in6_dev_get(ndev) : NULL;
	if (!idev)
		return;
	read_lock_bh(&idev->lock);
	list_for_each_entry(ifp, &idev->addr_list, if_list) {
		memset(&addr, 0, sizeof(addr));
		s6->sin6_family = AF_INET6;
		s6->sin6_addr = ifp->addr;
		if (ipv6_addr_type(&ifp->addr) & IPV6_ADDR_LINKLOCAL)
			s6->sin6_scope_id = ndev->ifindex;
		if (!v->add(v, &addr))
			break;
	}
	read_unlock_bh(&idev->lock);
	in6_dev_put(idev);
}
