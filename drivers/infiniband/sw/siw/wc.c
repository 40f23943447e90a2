// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work completions of a QP's WRs: an SQE or RQE becomes a struct siw_wc
 * on the QP's send or receive CQ.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "cq.h"
#include "qp.h"
#include "siw.h"

/*
 * The opcode of a failed WR is undefined for the consumer, but libsiw
 * indexes a table with it: keep whatever a process wrote in range.
 */
static u8 siw_wc_opcode(u8 opcode)
{
	return opcode < SIW_NUM_OPCODES ? opcode : SIW_OP_SEND;
}

static int siw_wc_push(struct siw_qp *qp, struct siw_cq *cq,
		       const struct siw_wc *wc, bool solicited)
{
	int err = siw_cq_push(cq, wc, solicited);

	if (err) {
		siw_err_rl(qp->sdev,
			   "QP %u: CQ %u full, completion of WR 0x%llx lost; QP to ERROR\n",
			   siw_qp_num(qp), cq->id, wc->id);
		siw_qp_fail(qp, IB_EVENT_QP_FATAL);
	}
	return err;
}

int siw_sqe_complete(struct siw_qp *qp, const struct siw_sqe *sqe,
		     u32 bytes, enum siw_wc_status status)
{
	struct siw_wc wc = {
		.id = sqe->id,
		.opcode = siw_wc_opcode(sqe->opcode),
		.status = status,
		.bytes = bytes,
		.qp = &qp->base,
	};

	if (status == SIW_WC_SUCCESS && !(sqe->flags & SIW_WQE_SIGNALLED) &&
	    !qp->sq_sig_all)
		return 0;
	return siw_wc_push(qp, qp->scq, &wc, false);
}

int siw_rqe_complete(struct siw_qp *qp, const struct siw_rqe *rqe,
		     u32 bytes, enum siw_wc_status status, u16 flags,
		     u32 inval_stag)
{
	struct siw_wc wc = {
		.id = rqe->id,
		.opcode = SIW_OP_RECEIVE,
		.status = status,
		.bytes = bytes,
		.qp = &qp->base,
	};

	if (flags & SIW_WQE_REM_INVAL) {
		wc.flags = SIW_WQE_REM_INVAL;
		wc.inval_stag = inval_stag;
	}
	return siw_wc_push(qp, qp->rcq, &wc, flags & SIW_WQE_SOLICITED);
}
