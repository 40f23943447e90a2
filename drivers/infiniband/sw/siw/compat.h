/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Kernel API differences between the kernels siw is built for. The rest of
 * the module calls these wrappers only where an API is known to move, so a
 * port to a newer kernel touches this file first.
 *
 * Supported: Linux 6.1 (Debian 12). Next target: 6.12; see the notes below
 * for what to check there.
 */

#ifndef SIW_COMPAT_H
#define SIW_COMPAT_H

#include <linux/gfp.h>
#include <linux/netdevice.h>

/*
 * Tracked references to the bound netdev. netdev_hold()/netdev_put() exist
 * since 6.0 and are unchanged in 6.12; these keep every hold and put of the
 * netdev in one place.
 */
#define siw_netdev_hold(ndev, tracker) netdev_hold(ndev, tracker, GFP_KERNEL)
#define siw_netdev_put(ndev, tracker) netdev_put(ndev, tracker)

/*
 * To check when adding 6.12 (not verified against its source yet):
 * - ib_device_get_netdev() is private to the RDMA core in 6.1, which is why
 *   struct siw_device keeps its own netdev pointer; newer kernels export it.
 * - Newer cores may dispatch port state events for netdev-bound devices
 *   themselves; netdev.c must then not send them a second time.
 */

#endif /* SIW_COMPAT_H */
