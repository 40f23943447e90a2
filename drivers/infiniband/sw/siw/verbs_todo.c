// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Placeholders for the verbs not written yet: CQs, QPs and MRs.
 *
 * The RDMA core treats a device without these as unusable by kernel ULPs,
 * and it allocates struct ib_cq and struct ib_qp itself, sized by the
 * driver, before calling create. So they exist here, sized, and refuse
 * politely. Each moves to its own file (cq.c, qp.c, mem.c) when written,
 * and this file shrinks until it can be deleted.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "siw.h"

/* Stand-ins so the core allocates objects of a proper size. */
struct siw_todo_cq {
	struct ib_cq base;
};

struct siw_todo_qp {
	struct ib_qp base;
};

static int siw_todo_create_cq(struct ib_cq *cq,
			      const struct ib_cq_init_attr *attr,
			      struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

/* Nothing can be destroyed: nothing is ever created. */
static int siw_todo_destroy_cq(struct ib_cq *cq, struct ib_udata *udata)
{
	return 0;
}

static int siw_todo_poll_cq(struct ib_cq *cq, int num_entries,
			    struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

static int siw_todo_req_notify_cq(struct ib_cq *cq,
				  enum ib_cq_notify_flags flags)
{
	return -EOPNOTSUPP;
}

static int siw_todo_create_qp(struct ib_qp *qp,
			      struct ib_qp_init_attr *attr,
			      struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int siw_todo_modify_qp(struct ib_qp *qp, struct ib_qp_attr *attr,
			      int mask, struct ib_udata *udata)
{
	return -EOPNOTSUPP;
}

static int siw_todo_destroy_qp(struct ib_qp *qp, struct ib_udata *udata)
{
	return 0;
}

static int siw_todo_post_send(struct ib_qp *qp, const struct ib_send_wr *wr,
			      const struct ib_send_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static int siw_todo_post_recv(struct ib_qp *qp, const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	*bad_wr = wr;
	return -EOPNOTSUPP;
}

static struct ib_mr *siw_todo_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static struct ib_mr *siw_todo_reg_user_mr(struct ib_pd *pd, u64 start,
					  u64 length, u64 virt_addr,
					  int access, struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static int siw_todo_dereg_mr(struct ib_mr *mr, struct ib_udata *udata)
{
	return 0;
}

const struct ib_device_ops siw_todo_ops = {
	.create_cq = siw_todo_create_cq,
	.create_qp = siw_todo_create_qp,
	.dereg_mr = siw_todo_dereg_mr,
	.destroy_cq = siw_todo_destroy_cq,
	.destroy_qp = siw_todo_destroy_qp,
	.get_dma_mr = siw_todo_get_dma_mr,
	.modify_qp = siw_todo_modify_qp,
	.poll_cq = siw_todo_poll_cq,
	.post_recv = siw_todo_post_recv,
	.post_send = siw_todo_post_send,
	.reg_user_mr = siw_todo_reg_user_mr,
	.req_notify_cq = siw_todo_req_notify_cq,

	INIT_RDMA_OBJ_SIZE(ib_cq, siw_todo_cq, base),
	INIT_RDMA_OBJ_SIZE(ib_qp, siw_todo_qp, base),
};
