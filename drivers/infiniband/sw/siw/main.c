// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module entry and exit: the "siw" RDMA link type and the netdev notifier.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_netlink.h>

#include "cm.h"
#include "engine.h"
#include "qp_connect.h"
#include "siw.h"

/* "rdma link add NAME type siw netdev NETDEV" */
static struct rdma_link_ops siw_link_ops = {
	.type = "siw",
	.newlink = siw_device_add,
};

static struct notifier_block siw_netdev_notifier = {
	.notifier_call = siw_netdev_event,
};

static int __init siw_init(void)
{
	int err;

	err = siw_tx_module_init();
	if (err)
		return err;
	err = siw_cm_module_init();
	if (err)
		goto tx_exit;
	err = siw_qpc_module_init();
	if (err)
		goto cm_exit;
	err = siw_gid_notifiers_register();
	if (err)
		goto qpc_exit;
	/* Devices exist only through links, so nothing to do for old ones. */
	err = register_netdevice_notifier(&siw_netdev_notifier);
	if (err) {
		pr_err("cannot register netdev notifier: %d\n", err);
		goto gid_exit;
	}
	rdma_link_register(&siw_link_ops);
	return 0;

gid_exit:
	siw_gid_notifiers_unregister();
qpc_exit:
	siw_qpc_module_exit();
cm_exit:
	siw_cm_module_exit();
tx_exit:
	siw_tx_module_exit();
	return err;
}

static void __exit siw_exit(void)
{
	/* No new links; this waits for a link being added to finish. */
	rdma_link_unregister(&siw_link_ops);
	/* Unregisters every siw device and waits for its dealloc_driver. */
	ib_unregister_driver(RDMA_DRIVER_SIW);
	/* Last, so that no netdev event is missed while devices exist. */
	unregister_netdevice_notifier(&siw_netdev_notifier);
	siw_gid_notifiers_unregister();
	siw_qpc_module_exit();
	siw_cm_module_exit();
	siw_tx_module_exit();
}

module_init(siw_init);
module_exit(siw_exit);

MODULE_ALIAS_RDMA_LINK("siw");
MODULE_AUTHOR("siw authors");
MODULE_DESCRIPTION("Software iWARP (siw) RDMA provider");
MODULE_LICENSE("Dual BSD/GPL");
