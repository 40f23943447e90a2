// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Query verbs: device attributes, port attributes, P_Key table and
 * firmware version. The GID is queried in gid.c.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "siw.h"

#define SIW_FW_VER_U64	(((u64)SIW_FW_MAJOR << 32) | \
			 ((u64)SIW_FW_MINOR << 16) | SIW_FW_SUBMINOR)

static int siw_query_device(struct ib_device *base, struct ib_device_attr *attr,
			    struct ib_udata *udata)
{
	/* There is no driver-specific request or response. */
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = SIW_FW_VER_U64;
	attr->sys_image_guid = base->node_guid;
	attr->vendor_id = SIW_VENDOR_ID;
	attr->vendor_part_id = SIW_VENDOR_PART_ID;
	attr->hw_ver = SIW_HW_VER;

	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID;
	/* STag 0 serves kernel users as local_dma_lkey (mem.h). */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY;
	attr->atomic_cap = IB_ATOMIC_NONE;
	attr->masked_atomic_cap = IB_ATOMIC_NONE;

	attr->max_mr_size = SIW_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->max_qp = SIW_MAX_QP;
	attr->max_qp_wr = SIW_MAX_QP_WR;
	attr->max_send_sge = SIW_MAX_SGE;
	attr->max_recv_sge = SIW_MAX_SGE;
	attr->max_sge_rd = SIW_MAX_SGE_RD;
	attr->max_cq = SIW_MAX_CQ;
	attr->max_cqe = SIW_MAX_CQE;
	attr->max_mr = SIW_MAX_MR;
	attr->max_pd = SIW_MAX_PD;
	attr->max_qp_rd_atom = SIW_MAX_IRD;
	attr->max_qp_init_rd_atom = SIW_MAX_ORD;
	attr->max_res_rd_atom = SIW_MAX_QP * SIW_MAX_IRD;
	attr->max_srq = SIW_MAX_SRQ;
	attr->max_srq_wr = SIW_MAX_SRQ_WR;
	attr->max_srq_sge = SIW_MAX_SGE;
	attr->max_fast_reg_page_list_len = SIW_MAX_FR_PAGES;
	attr->max_pkeys = SIW_PKEY_TBL_LEN;
	return 0;
}

/*
 * Called by the core's iw_query_port(), which zeroes @attr and guesses a
 * state from the netdev's IP configuration. The port state here follows
 * the link only: up with carrier is ACTIVE, anything else DOWN, the same
 * rule that decides the port events (netdev.c).
 */
static int siw_query_port(struct ib_device *base, u32 port,
			  struct ib_port_attr *attr)
{
	struct siw_device *sdev = to_siw_device(base);
	unsigned int mtu = READ_ONCE(sdev->mtu);

	if (siw_netdev_port_state(sdev->netdev) == IB_PORT_ACTIVE) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = ib_mtu_int_to_enum(min_t(unsigned int, mtu,
						    INT_MAX));
	attr->phys_mtu = mtu;
	attr->gid_tbl_len = SIW_GID_TBL_LEN;
	attr->pkey_tbl_len = SIW_PKEY_TBL_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SIW_MAX_MSG_SIZE;
	/* A soft device has no line rate; report a plausible one. */
	attr->active_speed = IB_SPEED_EDR;
	attr->active_width = IB_WIDTH_1X;
	return 0;
}

static int siw_get_port_immutable(struct ib_device *base, u32 port,
				  struct ib_port_immutable *immutable)
{
	immutable->pkey_tbl_len = SIW_PKEY_TBL_LEN;
	immutable->gid_tbl_len = SIW_GID_TBL_LEN;
	immutable->core_cap_flags = RDMA_CORE_PORT_IWARP;
	return 0;
}

static int siw_query_pkey(struct ib_device *base, u32 port, u16 index,
			  u16 *pkey)
{
	if (index >= SIW_PKEY_TBL_LEN)
		return -EINVAL;

	*pkey = SIW_DEFAULT_PKEY;
	return 0;
}

static void siw_get_dev_fw_str(struct ib_device *base, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%u.%u.%u", SIW_FW_MAJOR,
		 SIW_FW_MINOR, SIW_FW_SUBMINOR);
}

const struct ib_device_ops siw_query_ops = {
	.get_dev_fw_str = siw_get_dev_fw_str,
	.get_port_immutable = siw_get_port_immutable,
	.query_device = siw_query_device,
	.query_gid = siw_query_gid,
	.query_pkey = siw_query_pkey,
	.query_port = siw_query_port,
};
