// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Creating, registering and freeing the siw ib_device of a netdev.
 *
 * A device lives from "rdma link add" until "rdma link delete", removal of
 * its netdev, or module unload. The RDMA core frees it; dealloc_driver is
 * the last callback and drops what the device holds.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "mem.h"
#include "cm.h"
#include "siw.h"

/* Serialises link creation: two links must not both find a netdev free. */
static DEFINE_MUTEX(siw_add_mutex);

static atomic_t siw_last_dev_id = ATOMIC_INIT(0);

static void siw_dealloc_driver(struct ib_device *base)
{
	struct siw_device *sdev = to_siw_device(base);

	cancel_work_sync(&sdev->gid_work);
	siw_cm_device_gone(sdev);
	siw_mem_table_destroy(sdev);
	siw_obj_report_leaks(sdev);
	xa_destroy(&sdev->qp_table);
	siw_stats_free(sdev);
	siw_netdev_put(sdev->netdev, &sdev->netdev_tracker);
	sdev->netdev = NULL;
}

static const struct ib_device_ops siw_device_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_SIW,
	.uverbs_abi_ver = SIW_ABI_VERSION,
	.dealloc_driver = siw_dealloc_driver,
};

static void siw_device_set_ops(struct ib_device *base)
{
	ib_set_device_ops(base, &siw_device_ops);
	ib_set_device_ops(base, &siw_query_ops);
	ib_set_device_ops(base, &siw_ucontext_ops);
	ib_set_device_ops(base, &siw_pd_ops);
	ib_set_device_ops(base, &siw_cq_ops);
	ib_set_device_ops(base, &siw_mmap_ops);
	ib_set_device_ops(base, &siw_mr_ops);
	ib_set_device_ops(base, &siw_qp_ops);
	ib_set_device_ops(base, &siw_srq_ops);
	ib_set_device_ops(base, &siw_cm_ops);
	ib_set_device_ops(base, &siw_restrack_ops);
	ib_set_device_ops(base, &siw_stats_ops);
}

/* A device that is not registered yet, bound to @ndev. */
static struct siw_device *siw_device_create(struct net_device *ndev)
{
	struct siw_device *sdev;
	struct ib_device *base;
	int err;

	sdev = ib_alloc_device(siw_device, base);
	if (!sdev)
		return ERR_PTR(-ENOMEM);
	base = &sdev->base;

	siw_netdev_hold(ndev, &sdev->netdev_tracker);
	sdev->netdev = ndev;
	sdev->dev_id = atomic_inc_return(&siw_last_dev_id);
	sdev->port_state = siw_netdev_port_state(ndev);
	sdev->mtu = READ_ONCE(ndev->mtu);
	spin_lock_init(&sdev->gid_lock);
	siw_gid_init(sdev);
	xa_init_flags(&sdev->qp_table, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);

	base->node_type = RDMA_NODE_RNIC;
	base->phys_port_cnt = 1;
	base->num_comp_vectors = SIW_NUM_COMP_VECTORS;
	strscpy(base->node_desc, SIW_NODE_DESC_COMMON, sizeof(base->node_desc));
	/* libsiw rings the send queue doorbell with an empty post_send. */
	base->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND);
	siw_device_set_ops(base);
	/* iw_cm names the interface to the port mapper (iwpmd). */
	strscpy(base->iw_ifname, ndev->name, sizeof(base->iw_ifname));
	/* Kernel users reach their memory through STag 0 (mem.h). */
	base->local_dma_lkey = SIW_LOCAL_DMA_STAG;

	err = siw_stats_alloc(sdev);
	if (!err)
		err = siw_mem_table_init(sdev);
	if (!err)
		err = ib_device_set_netdev(base, ndev, SIW_PORT);
	if (err) {
		/* dealloc_driver drops the netdev reference. */
		ib_dealloc_device(base);
		return ERR_PTR(err);
	}
	return sdev;
}

/* One siw device per netdev, and names must be free. */
static int siw_device_check_free(const char *name, struct net_device *ndev)
{
	struct ib_device *other;

	other = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
	if (other) {
		pr_err("netdev %s already has siw device %s, not adding %s\n",
		       ndev->name, other->name, name);
		ib_device_put(other);
		return -EEXIST;
	}

	other = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (other) {
		pr_err("RDMA device name %s already exists, not adding it on %s\n",
		       name, ndev->name);
		ib_device_put(other);
		return -EEXIST;
	}
	return 0;
}

/*
 * After registration the device can be unregistered and freed at any time
 * by a queued unregistration, so it is only touched again through a
 * reference taken by looking it up.
 */
static int siw_device_start(struct net_device *ndev)
{
	struct ib_device *base;
	struct siw_device *sdev;
	int err = 0;

	base = ib_device_get_by_netdev(ndev, RDMA_DRIVER_SIW);
	if (!base)
		return -ENODEV;

	sdev = to_siw_device(base);
	if (siw_netdev_sync(sdev))
		siw_info(sdev, "added on netdev %s\n", ndev->name);
	else
		err = -ENODEV;
	ib_device_put(base);
	return err;
}

/* The newlink callback of the "siw" RDMA link type. */
int siw_device_add(const char *name, struct net_device *ndev)
{
	struct siw_device *sdev;
	int err;

	mutex_lock(&siw_add_mutex);

	err = siw_device_check_free(name, ndev);
	if (err)
		goto unlock;

	sdev = siw_device_create(ndev);
	if (IS_ERR(sdev)) {
		err = PTR_ERR(sdev);
		goto unlock;
	}

	/* No DMA device: the core then uses virtual addresses as DMA ones. */
	err = ib_register_device(&sdev->base, name, NULL);
	if (err) {
		pr_err("cannot register %s on netdev %s: %d\n", name,
		       ndev->name, err);
		ib_dealloc_device(&sdev->base);
		goto unlock;
	}

	err = siw_device_start(ndev);
unlock:
	mutex_unlock(&siw_add_mutex);
	return err;
}
