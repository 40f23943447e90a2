// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive side of a QP: posting receive WRs (kernel QPs; processes
 * write their ring directly), taking them for the engine, from the QP's
 * own RQ or from its SRQ, and flushing the RQ.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "qp.h"
#include "siw.h"
#include "srq.h"

/* The QP's own RQ; the caller knows the QP has no SRQ. */
static int siw_qp_rq_take(struct siw_qp *qp, struct siw_rqe *rqe)
{
	unsigned long flags;
	int err;

	spin_lock_irqsave(&qp->rq.lock, flags);
	err = siw_rq_take(&qp->rq, rqe);
	spin_unlock_irqrestore(&qp->rq.lock, flags);
	return err;
}

int siw_rq_get(struct siw_qp *qp, struct siw_rqe *rqe)
{
	int err;

	if (qp->srq)
		err = siw_srq_get_rqe(qp->srq, rqe);
	else
		err = siw_qp_rq_take(qp, rqe);

	if (err == -EINVAL) {
		siw_err_rl(qp->sdev, "QP %u: malformed RQE (%u SGEs); QP to ERROR\n",
			   siw_qp_num(qp), rqe->num_sge);
		siw_rqe_complete(qp, rqe, 0, siw_rqe_check(rqe), 0, 0);
		siw_qp_fail(qp, IB_EVENT_QP_FATAL);
	}
	return err;
}

static void siw_rqe_flush_one(void *qp, const void *rqe)
{
	siw_rqe_complete(qp, rqe, 0, SIW_WC_WR_FLUSH_ERR, 0, 0);
}

/* As siw_sq_flush(): a pass takes at most a ring's worth of a process's. */
void siw_rq_flush(struct siw_qp *qp)
{
	struct siw_rqe rqe;

	if (qp->srq)
		return;
	siw_wq_flush(&qp->rq, qp->user ? qp->rq.num : U32_MAX, &rqe,
		     siw_rqe_flush_one, qp);
}

/*
 * Receive WRs may be posted in any state but RESET (iWARP consumers post
 * them before connecting). In ERROR they are flushed at once.
 */
int siw_post_recv(struct ib_qp *base, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct siw_qp *qp = to_siw_qp(base);
	struct siw_ring *rq = &qp->rq;
	unsigned long flags;
	int err = 0;

	if (qp->user || qp->srq) {
		siw_qp_dbg(qp, "post_recv on a %s refused\n",
			   qp->srq ? "QP with an SRQ" : "user QP");
		*bad_wr = wr;
		return -EINVAL;
	}

	spin_lock_irqsave(&rq->lock, flags);
	if (!siw_qp_can(qp, SIW_QP_TAKES_RQ)) {
		siw_qp_dbg(qp, "post_recv in state %d refused\n",
			   READ_ONCE(qp->state));
		err = -EINVAL;
	}
	while (wr && !err) {
		err = siw_rq_post(rq, wr, qp->max_recv_sge);
		if (!err)
			wr = wr->next;
	}
	spin_unlock_irqrestore(&rq->lock, flags);

	if (err)
		*bad_wr = wr;
	/* Not while the engine holds an older WR (siw_qp_flush()). */
	if (siw_qp_can(qp, SIW_QP_FLUSHES))
		siw_qp_flush(qp);
	return err;
}
