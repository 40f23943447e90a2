// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Creating and destroying QPs, their numbers and their references.
 *
 * A QP number comes from the device's QP table, which maps it back to the
 * QP for the CM. Numbers are handed out cyclically and never 0 or 1,
 * which IB reserves for its management QPs.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/completion.h>
#include <linux/cred.h>
#include <linux/error-injection.h>
#include <linux/pid.h>
#include <linux/refcount.h>
#include <linux/sched.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "cq.h"
#include "qp.h"
#include "siw.h"
#include "srq.h"

/* QP numbers are 24 bits wide in the verbs. */
#define SIW_QPN_LIMIT	XA_LIMIT(2, 0xffffff)

void siw_qp_get(struct siw_qp *qp)
{
	refcount_inc(&qp->ref);
}

void siw_qp_put(struct siw_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/*
 * Under the table's lock, so that destroy_qp, which removes the QP from
 * the table first, never waits for a reference it has not seen.
 */
struct siw_qp *siw_qp_get_by_num(struct siw_device *sdev, u32 qpn)
{
	unsigned long flags;
	struct siw_qp *qp;

	xa_lock_irqsave(&sdev->qp_table, flags);
	qp = xa_load(&sdev->qp_table, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	xa_unlock_irqrestore(&sdev->qp_table, flags);
	return qp;
}

/*
 * May the calling task bind @qp to a connection (iw_cm connect/accept name
 * the QP by number, and any process may name any number)? A process's QP
 * only by the process that created it: another process, even of the same
 * user, has no business connecting it (and so granting a peer access to
 * its memory). A kernel QP only by the kernel: a kernel thread, or a task
 * privileged to run kernel ULPs (NVMe-oF, NFS, iSER are set up by such
 * tasks); never by an unprivileged process. Any context (iw_cm asks under
 * a spinlock).
 */
static bool siw_qp_caller_may_bind(const struct siw_qp *qp)
{
	if (qp->user)
		return !(current->flags & PF_KTHREAD) &&
		       task_tgid(current) == qp->owner;
	return (current->flags & PF_KTHREAD) ||
	       has_capability_noaudit(current, CAP_NET_ADMIN);
}

struct siw_qp *siw_qp_get_for_cm(struct siw_device *sdev, u32 qpn)
{
	struct siw_qp *qp = siw_qp_get_by_num(sdev, qpn);

	if (qp && !siw_qp_caller_may_bind(qp)) {
		siw_warn_rl(sdev, "QP %u: %s (pid %d, uid %u) may not connect %s QP; refused\n",
			    qpn, current->comm, task_tgid_nr(current),
			    from_kuid_munged(&init_user_ns, current_euid()),
			    qp->user ? "another process's" : "a kernel");
		siw_qp_put(qp);
		qp = NULL;
	}
	return qp;
}

static bool siw_is_siw_cq(struct siw_device *sdev, struct ib_cq *cq)
{
	return cq && cq->device == &sdev->base;
}

static int siw_qp_check_init_attr(struct siw_device *sdev,
				  const struct ib_qp_init_attr *attr)
{
	const struct ib_qp_cap *cap = &attr->cap;

	if (attr->qp_type != IB_QPT_RC) {
		siw_dbg(sdev, "create_qp: QP type %d not supported, RC only\n",
			attr->qp_type);
		return -EOPNOTSUPP;
	}
	if (attr->create_flags || attr->rwq_ind_tbl) {
		siw_dbg(sdev, "create_qp: create flags 0x%x not supported\n",
			attr->create_flags);
		return -EOPNOTSUPP;
	}
	if (cap->max_send_wr > SIW_MAX_QP_WR ||
	    (!attr->srq && cap->max_recv_wr > SIW_MAX_QP_WR) ||
	    cap->max_send_sge > SIW_MAX_SGE ||
	    cap->max_recv_sge > SIW_MAX_SGE ||
	    cap->max_inline_data > SIW_MAX_INLINE) {
		siw_dbg(sdev, "create_qp: caps %u/%u WRs, %u/%u SGEs, %u inline exceed %u/%u/%zu\n",
			cap->max_send_wr, cap->max_recv_wr, cap->max_send_sge,
			cap->max_recv_sge, cap->max_inline_data, SIW_MAX_QP_WR,
			SIW_MAX_SGE, SIW_MAX_INLINE);
		return -EINVAL;
	}
	if (!siw_is_siw_cq(sdev, attr->send_cq) ||
	    !siw_is_siw_cq(sdev, attr->recv_cq)) {
		siw_dbg(sdev, "create_qp: send and receive CQs must be siw's\n");
		return -EINVAL;
	}
	if (attr->srq && attr->srq->device != &sdev->base)
		return -EINVAL;
	return 0;
}

static noinline int siw_qp_alloc_rings(struct siw_qp *qp,
				       const struct ib_qp_init_attr *attr)
{
	int err;

	err = siw_ring_alloc(&qp->sq, attr->cap.max_send_wr,
			     sizeof(struct siw_sqe), 0, qp->user);
	if (err)
		return err;
	if (qp->srq) {
		/* No ring: the RQ functions must never be reached for it. */
		spin_lock_init(&qp->rq.lock);
		return 0;
	}
	err = siw_ring_alloc(&qp->rq, attr->cap.max_recv_wr,
			     sizeof(struct siw_rqe), 0, qp->user);
	if (err)
		siw_ring_free(&qp->sq);
	return err;
}

ALLOW_ERROR_INJECTION(siw_qp_alloc_rings, ERRNO);

static void siw_qp_free_rings(struct siw_qp *qp)
{
	siw_ring_free(&qp->sq);
	if (!qp->srq)
		siw_ring_free(&qp->rq);
}

/*
 * Offer the rings to the process. With an SRQ there is no RQ; libsiw then
 * does not map one, but refuses an rq_key of SIW_INVAL_UOBJ_KEY, so it
 * gets 0.
 */
static int siw_qp_share_rings(struct siw_qp *qp, struct ib_udata *udata)
{
	struct ib_ucontext *uctx = rdma_udata_to_uverbs_attr_bundle(udata)->context;
	struct siw_uresp_create_qp uresp = {
		.qp_id = siw_qp_num(qp),
		.num_sqe = qp->sq.num,
		.num_rqe = qp->rq.num,
	};
	int err;

	err = siw_ring_share(&qp->sq, uctx, &uresp.sq_key);
	if (!err && !qp->srq)
		err = siw_ring_share(&qp->rq, uctx, &uresp.rq_key);
	if (!err)
		err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	return err;
}

static void siw_qp_init(struct siw_qp *qp, struct siw_device *sdev,
			const struct ib_qp_init_attr *attr, bool user)
{
	qp->sdev = sdev;
	qp->owner = user ? get_pid(task_tgid(current)) : NULL;
	refcount_set(&qp->ref, 1);
	atomic_set(&qp->iw_handoff, 0);
	atomic64_set(&qp->traffic.tx_fpdus, 0);
	atomic64_set(&qp->traffic.tx_bytes, 0);
	atomic64_set(&qp->traffic.rx_fpdus, 0);
	atomic64_set(&qp->traffic.rx_bytes, 0);
	init_completion(&qp->released);
	spin_lock_init(&qp->state_lock);
	qp->state = IB_QPS_INIT;
	qp->user = user;
	qp->sq_sig_all = attr->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_send_sge = SIW_MAX_SGE;
	qp->max_recv_sge = SIW_MAX_SGE;
	qp->max_inline = SIW_MAX_INLINE;
	qp->scq = to_siw_cq(attr->send_cq);
	qp->rcq = to_siw_cq(attr->recv_cq);
	qp->srq = attr->srq ? to_siw_srq(attr->srq) : NULL;
}

static int siw_create_qp(struct ib_qp *base, struct ib_qp_init_attr *attr,
			 struct ib_udata *udata)
{
	struct siw_device *sdev = to_siw_device(base->device);
	struct siw_qp *qp = to_siw_qp(base);
	u32 qpn;
	int err;

	err = siw_qp_check_init_attr(sdev, attr);
	if (err)
		return err;
	if (udata && udata->outlen < sizeof(struct siw_uresp_create_qp))
		return -EINVAL;
	if (!siw_obj_get(sdev, SIW_OBJ_QP))
		return -ENOMEM;

	siw_qp_init(qp, sdev, attr, !!udata);
	siw_qpc_init(qp);
	err = siw_qp_alloc_rings(qp, attr);
	if (err)
		goto put_obj;
	err = siw_engine_init(qp);
	if (err)
		goto free_rings;

	/*
	 * Reserve the number, and publish the QP under it only once nothing
	 * can fail any more: the CM takes references to a QP it finds by
	 * number, and a QP that failed here is freed at once.
	 */
	err = xa_alloc_cyclic_irq(&sdev->qp_table, &qpn, NULL, SIW_QPN_LIMIT,
				  &sdev->qp_next_num, GFP_KERNEL);
	if (err < 0)
		goto free_engine;
	base->qp_num = qpn;

	if (udata) {
		err = siw_qp_share_rings(qp, udata);
		if (err)
			goto erase;
	}
	err = xa_err(xa_store_irq(&sdev->qp_table, qpn, qp, GFP_KERNEL));
	if (err)
		goto erase;
	siw_qp_caps(qp, &attr->cap);
	siw_qp_dbg(qp, "created: %u SQEs, %u RQEs%s\n", qp->sq.num,
		   qp->rq.num, qp->srq ? " (SRQ)" : "");
	return 0;

erase:
	xa_erase_irq(&sdev->qp_table, qpn);
free_engine:
	siw_engine_free(qp);
free_rings:
	siw_qp_free_rings(qp);
put_obj:
	put_pid(qp->owner);
	siw_obj_put(sdev, SIW_OBJ_QP);
	return err;
}

/*
 * Outstanding WRs of a process's QP complete with WR_FLUSH_ERR. Those of
 * a kernel QP are dropped without completions, as IB has it: a kernel
 * completion carries a pointer to the QP, which the core frees next, and
 * kernel consumers drain their QPs (ib_drain_qp) before destroying them.
 */
static void siw_qp_empty(struct siw_qp *qp)
{
	u32 n;

	if (qp->user) {
		siw_qp_flush(qp);
		return;
	}
	n = siw_qp_drop_wrs(qp);
	if (n)
		siw_qp_dbg(qp, "destroyed with %u WRs outstanding\n", n);
}

/*
 * Teardown, in this order: stop what could start new work on the QP, make
 * it unreachable, wait until nobody holds it, then free what it has.
 */
static int siw_destroy_qp(struct ib_qp *base, struct ib_udata *udata)
{
	struct siw_qp *qp = to_siw_qp(base);
	struct siw_device *sdev = qp->sdev;

	/*
	 * 1. ERROR: the verbs post no more, the engine takes no new WR,
	 *    and the CM closes the connection or its setup.
	 */
	siw_qp_stop(qp);
	/*
	 * 2. No connection without rdma_cm starts or retries any more (a
	 *    report of an attempt still running queues nothing).
	 */
	siw_qpc_stop(qp);
	/* 3. Nobody finds it by number any more: the CM, the listener. */
	xa_erase_irq(&sdev->qp_table, siw_qp_num(qp));
	/* 4. Wait for those that hold it (CM endpoints, the engine). */
	siw_qp_put(qp);
	wait_for_completion(&qp->released);
	/* 5. Nobody else reaches it: its WRs, engine and rings go. */
	siw_qp_empty(qp);
	siw_engine_free(qp);
	siw_qp_free_rings(qp);
	put_pid(qp->owner);
	siw_obj_put(sdev, SIW_OBJ_QP);
	siw_dbg(sdev, "QP %u destroyed\n", siw_qp_num(qp));
	return 0;
}

const struct ib_device_ops siw_qp_ops = {
	.create_qp = siw_create_qp,
	.destroy_qp = siw_destroy_qp,
	.modify_qp = siw_modify_qp,
	.post_recv = siw_post_recv,
	.post_send = siw_post_send,
	.query_qp = siw_query_qp,

	INIT_RDMA_OBJ_SIZE(ib_qp, siw_qp, base),
};
