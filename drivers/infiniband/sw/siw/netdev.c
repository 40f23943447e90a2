// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Following the bound netdev: port state and its events, MTU, GID, and
 * removal of the siw device when the netdev goes away.
 *
 * Netdev notifiers run under RTNL, so the snapshot in struct siw_device is
 * only ever written with RTNL held and needs no lock of its own.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
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
