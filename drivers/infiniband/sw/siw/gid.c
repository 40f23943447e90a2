// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The GID table (one entry) and the node GUID, both made from the netdev's
 * hardware address.
 *
 * For iWARP, rdma_cm finds the RDMA device behind a local IP address by
 * looking up the netdev's hardware address, zero-padded to 16 bytes, in the
 * GID cache. GID 0 is therefore the MAC in bytes 0..5 and zero elsewhere.
 * The node GUID is the EUI-64 of the same MAC.
 *
 * A netdev without a MAC (loopback, tun, ...) gets a random locally
 * administered one, made once per device, so every siw device has a GID of
 * its own and none is zero (the core drops zero GIDs from its cache).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <net/addrconf.h>

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

/*
 * The one place that decides what GID 0 is. When the table learns to carry
 * IP addresses, this is what grows.
 */
static void siw_gid_compute(struct siw_device *sdev, u8 *mac,
			    union ib_gid *gid)
{
	siw_gid_pick_mac(sdev, mac);
	memset(gid, 0, sizeof(*gid));
	ether_addr_copy(gid->raw, mac);
}

/* At device creation, before the device can be queried. */
void siw_gid_init(struct siw_device *sdev)
{
	eth_random_addr(sdev->random_mac);
	siw_gid_compute(sdev, sdev->mac, &sdev->gid);
	/* The GUID is the device's identity: it stays if the MAC changes. */
	addrconf_addr_eui48((u8 *)&sdev->base.node_guid, sdev->mac);
}

/* Recompute the GID after a netdev address change; true if it changed. */
bool siw_gid_refresh(struct siw_device *sdev)
{
	union ib_gid gid;
	u8 mac[ETH_ALEN];
	bool changed;

	siw_gid_compute(sdev, mac, &gid);

	spin_lock(&sdev->gid_lock);
	changed = memcmp(&gid, &sdev->gid, sizeof(gid)) != 0;
	if (changed) {
		sdev->gid = gid;
		ether_addr_copy(sdev->mac, mac);
	}
	spin_unlock(&sdev->gid_lock);

	if (changed)
		siw_dbg(sdev, "GID now from %pM\n", mac);
	return changed;
}

int siw_query_gid(struct ib_device *base, u32 port, int index,
		  union ib_gid *gid)
{
	struct siw_device *sdev = to_siw_device(base);

	if (port != SIW_PORT || index != 0)
		return -EINVAL;

	spin_lock(&sdev->gid_lock);
	*gid = sdev->gid;
	spin_unlock(&sdev->gid_lock);
	return 0;
}
