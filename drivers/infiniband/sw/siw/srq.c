// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: the verbs, and handing their RQEs to QPs.
 *
 * The limit: once armed with modify_srq(IB_SRQ_LIMIT), the first time
 * taking an RQE leaves fewer than srq_limit posted, the consumer gets
 * IB_EVENT_SRQ_LIMIT_REACHED and the limit disarms (it reads 0 again).
 * Posted RQEs are counted as the run of VALID slots from the oldest, which
 * is exact for kernel SRQs and for processes, which post in ring order.
 *
 * Resizing (IB_SRQ_MAX_WR) is for kernel SRQs only: a process's ring is
 * mapped at a fixed size and stock libsiw has no way to learn of a new one.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "siw.h"
#include "srq.h"

static void siw_srq_event(struct siw_srq *srq, enum ib_event_type type)
{
	struct ib_event event = {
		.device = srq->base.device,
		.element.srq = &srq->base,
		.event = type,
	};

	if (srq->base.event_handler)
		srq->base.event_handler(&event, srq->base.srq_context);
}

int siw_srq_get_rqe(struct siw_srq *srq, struct siw_rqe *rqe)
{
	struct siw_ring *rq = &srq->rq;
	bool limit_reached = false;
	unsigned long flags;
	int err;

	spin_lock_irqsave(&rq->lock, flags);
	err = siw_rq_take(rq, rqe);
	if (err != -ENOENT && srq->limit &&
	    siw_wq_posted(rq, srq->limit) < srq->limit) {
		srq->limit = 0;
		limit_reached = true;
	}
	spin_unlock_irqrestore(&rq->lock, flags);

	if (limit_reached)
		siw_srq_event(srq, IB_EVENT_SRQ_LIMIT_REACHED);
	return err;
}

static int siw_srq_share(struct siw_srq *srq, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = rdma_udata_to_uverbs_attr_bundle(udata)->context;
	struct siw_uresp_create_srq uresp = {
		.num_rqe = srq->rq.num,
	};
	int err;

	err = siw_ring_share(&srq->rq, uctx, &uresp.srq_key);
	if (!err)
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	return err;
}

static int siw_srq_check_size(const struct ib_srq_attr *attr)
{
	return attr->max_wr && attr->max_wr <= SIW_MAX_SRQ_WR ? 0 : -EINVAL;
}

/* srq_limit at creation is ignored, as ibv_create_srq(3) says. */
static int siw_create_srq(struct ib_srq *base, struct ib_srq_init_attr *init,
			  struct ib_udata *udata)
{
	struct siw_device *sdev = to_siw_device(base->device);
	struct siw_srq *srq = to_siw_srq(base);
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC) {
		siw_dbg(sdev, "create_srq: SRQ type %d not supported\n",
			init->srq_type);
		return -EOPNOTSUPP;
	}
	if (siw_srq_check_size(attr) || attr->max_sge > SIW_MAX_SGE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(struct siw_uresp_create_srq))
		return -EINVAL;
	if (!siw_obj_get(sdev, SIW_OBJ_SRQ))
		return -ENOMEM;

	srq->user = !!udata;
	srq->max_sge = SIW_MAX_SGE;
	srq->limit = 0;
	err = siw_ring_alloc(&srq->rq, attr->max_wr, sizeof(struct siw_rqe), 0,
			     srq->user);
	if (err)
		goto put_obj;
	if (udata) {
		err = siw_srq_share(srq, udata);
		if (err)
			goto free_ring;
	}
	attr->max_wr = srq->rq.num;
	attr->max_sge = srq->max_sge;
	return 0;

free_ring:
	siw_ring_free(&srq->rq);
put_obj:
	siw_obj_put(sdev, SIW_OBJ_SRQ);
	return err;
}

/* Kernel SRQs: a new ring, with the posted RQEs moved over in order. */
static int siw_srq_resize(struct siw_srq *srq, u32 max_wr)
{
	struct siw_ring new;
	unsigned long flags;
	int err;

	err = siw_ring_alloc(&new, max_wr, sizeof(struct siw_rqe), 0, false);
	if (err)
		return err;

	spin_lock_irqsave(&srq->rq.lock, flags);
	if (srq->limit > new.num)
		err = -EINVAL;
	else
		err = siw_ring_move(&srq->rq, &new);
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	siw_ring_free(&new);
	return err;
}

static int siw_srq_set_limit(struct siw_srq *srq, u32 limit)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->rq.lock, flags);
	if (limit > srq->rq.num)
		err = -EINVAL;
	else
		srq->limit = limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	return err;
}

static int siw_modify_srq(struct ib_srq *base, struct ib_srq_attr *attr,
			  enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct siw_srq *srq = to_siw_srq(base);
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		if (srq->user) {
			siw_dbg(to_siw_device(base->device),
				"modify_srq: a user SRQ cannot be resized\n");
			return -EOPNOTSUPP;
		}
		err = siw_srq_check_size(attr);
		if (!err)
			err = siw_srq_resize(srq, attr->max_wr);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT)
		return siw_srq_set_limit(srq, attr->srq_limit);
	return 0;
}

static int siw_query_srq(struct ib_srq *base, struct ib_srq_attr *attr)
{
	struct siw_srq *srq = to_siw_srq(base);
	unsigned long flags;

	spin_lock_irqsave(&srq->rq.lock, flags);
	attr->max_wr = srq->rq.num;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->rq.lock, flags);
	attr->max_sge = srq->max_sge;
	return 0;
}

/* The core destroys an SRQ only once no QP uses it. */
static int siw_destroy_srq(struct ib_srq *base, struct ib_udata *udata)
{
	struct siw_srq *srq = to_siw_srq(base);

	siw_ring_free(&srq->rq);
	siw_obj_put(to_siw_device(base->device), SIW_OBJ_SRQ);
	return 0;
}

static int siw_post_srq_recv(struct ib_srq *base, const struct ib_recv_wr *wr,
			     const struct ib_recv_wr **bad_wr)
{
	struct siw_srq *srq = to_siw_srq(base);
	unsigned long flags;
	int err = 0;

	if (srq->user) {
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&srq->rq.lock, flags);
	while (wr && !err) {
		err = siw_rq_post(&srq->rq, wr, srq->max_sge);
		if (!err)
			wr = wr->next;
	}
	spin_unlock_irqrestore(&srq->rq.lock, flags);

	if (err)
		*bad_wr = wr;
	return err;
}

const struct ib_device_ops siw_srq_ops = {
	.create_srq = siw_create_srq,
	.destroy_srq = siw_destroy_srq,
	.modify_srq = siw_modify_srq,
	.post_srq_recv = siw_post_srq_recv,
	.query_srq = siw_query_srq,

	INIT_RDMA_OBJ_SIZE(ib_srq, siw_srq, base),
};
