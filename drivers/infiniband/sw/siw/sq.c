// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The send queue: posting to it (kernel QPs write their WRs into the ring
 * here, processes write their own and ring the doorbell), taking SQEs out
 * of it for the engine, and flushing it.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/lockdep.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "qp.h"
#include "siw.h"

/* Opcodes a process may put in its SQ: no kernel-only ones (REG_MR...). */
static bool siw_sq_opcode_ok(u8 opcode, bool user)
{
	switch (opcode) {
	case SIW_OP_WRITE:
	case SIW_OP_READ:
	case SIW_OP_SEND:
	case SIW_OP_SEND_REMOTE_INV:
		return true;
	case SIW_OP_READ_LOCAL_INV:
	case SIW_OP_INVAL_STAG:
	case SIW_OP_REG_MR:
		return !user;
	default:
		return false;
	}
}

static bool siw_sq_opcode_has_data(u8 opcode)
{
	return opcode == SIW_OP_WRITE || opcode == SIW_OP_SEND ||
	       opcode == SIW_OP_SEND_REMOTE_INV;
}

static bool siw_sq_opcode_is_read(u8 opcode)
{
	return opcode == SIW_OP_READ || opcode == SIW_OP_READ_LOCAL_INV;
}

static enum siw_wc_status siw_sqe_check_inline(struct siw_sqe *sqe)
{
	if (!siw_sq_opcode_has_data(sqe->opcode))
		return SIW_WC_LOC_QP_OP_ERR;
	if (sqe->sge[0].length > SIW_MAX_INLINE)
		return SIW_WC_LOC_LEN_ERR;
	sqe->num_sge = 1;
	return SIW_WC_SUCCESS;
}

static enum siw_wc_status siw_sqe_check_sges(const struct siw_sqe *sqe)
{
	if (sqe->num_sge > SIW_MAX_SGE)
		return SIW_WC_LOC_QP_OP_ERR;
	/* An RDMA READ Request names one sink: one local SGE. */
	if (siw_sq_opcode_is_read(sqe->opcode) &&
	    sqe->num_sge > SIW_MAX_SGE_RD)
		return SIW_WC_LOC_QP_OP_ERR;
	return siw_sges_len_ok(sqe->sge, sqe->num_sge) ? SIW_WC_SUCCESS :
							 SIW_WC_LOC_LEN_ERR;
}

enum siw_wc_status siw_sqe_check(struct siw_sqe *sqe, bool user)
{
	if (!siw_sq_opcode_ok(sqe->opcode, user))
		return SIW_WC_LOC_QP_OP_ERR;
	/* Memory registration SQEs carry no SGEs. */
	if (sqe->opcode == SIW_OP_REG_MR || sqe->opcode == SIW_OP_INVAL_STAG) {
		sqe->num_sge = 0;
		return SIW_WC_SUCCESS;
	}
	if (sqe->flags & SIW_WQE_INLINE)
		return siw_sqe_check_inline(sqe);
	return siw_sqe_check_sges(sqe);
}

/*
 * Copy the oldest VALID SQE into *@sqe and check the copy: 0, -ENOENT if
 * there is none (or a flush owns the SQ), -EINVAL if it is malformed.
 */
static int siw_sq_peek(struct siw_qp *qp, struct siw_sqe *sqe)
{
	lockdep_assert_held(&qp->sq.lock);

	if (qp->sq.flushing || !siw_wq_peek(&qp->sq, sqe))
		return -ENOENT;
	if (siw_sqe_check(sqe, qp->user) != SIW_WC_SUCCESS)
		return -EINVAL;
	return 0;
}

/* Must @sqe wait for the engine? */
static bool siw_sqe_waits(const struct siw_sqe *sqe,
			  const struct siw_sq_gate *gate)
{
	if (gate->full)
		return true;
	if ((sqe->flags & SIW_WQE_READ_FENCE) && gate->reads_out)
		return true;
	/* With ORD 0 a Read never goes: the engine fails it at once. */
	return siw_sq_opcode_is_read(sqe->opcode) && gate->ord &&
	       gate->reads_out >= gate->ord;
}

u32 siw_sqe_len(const struct siw_sqe *sqe)
{
	u32 len = 0;
	int i;

	if (sqe->flags & SIW_WQE_INLINE)
		return sqe->sge[0].length;
	for (i = 0; i < sqe->num_sge; i++)
		len += sqe->sge[i].length;
	return len;
}

/* Octets of payload a checked SQE puts on the wire. */
static u32 siw_sqe_payload(const struct siw_sqe *sqe)
{
	return siw_sq_opcode_has_data(sqe->opcode) ? siw_sqe_len(sqe) : 0;
}

int siw_sq_get(struct siw_qp *qp, struct siw_sqe *sqe,
	       const struct siw_sq_gate *gate)
{
	unsigned long flags;
	int err;

	spin_lock_irqsave(&qp->sq.lock, flags);
	err = siw_sq_peek(qp, sqe);
	if (!err && siw_sqe_waits(sqe, gate))
		err = -EAGAIN;
	else if (!err && siw_sqe_payload(sqe) >= gate->max_len)
		err = -EMSGSIZE;
	else if (err != -ENOENT)
		siw_sq_consume(&qp->sq);
	spin_unlock_irqrestore(&qp->sq.lock, flags);

	if (err == -EINVAL) {
		siw_err_rl(qp->sdev,
			   "QP %u: malformed SQE (opcode %u, %u SGEs, flags 0x%x); QP to ERROR\n",
			   siw_qp_num(qp), sqe->opcode, sqe->num_sge,
			   sqe->flags);
		siw_sqe_complete(qp, sqe, 0, siw_sqe_check(sqe, qp->user));
		siw_qp_fail(qp, IB_EVENT_QP_FATAL);
	}
	return err;
}

/*
 * One flusher at a time owns the SQ (sq.flushing): it takes the SQEs one
 * by one and completes each without the lock held, since a completion
 * handler may post to this QP again. What a re-entrant post adds, the
 * running flush picks up. A process can refill its ring as fast as siw
 * empties it, so one pass takes at most a ring's worth of its SQEs; a
 * look a tick later (siw_sq_recheck_later) takes the rest, and what a
 * process posted without a doorbell while the pass ran.
 */
static void siw_sqe_flush_one(void *qp, const void *sqe)
{
	siw_sqe_complete(qp, sqe, 0, SIW_WC_WR_FLUSH_ERR);
}

void siw_sq_flush(struct siw_qp *qp)
{
	struct siw_sqe sqe;

	if (siw_wq_flush(&qp->sq, qp->user ? qp->sq.num : U32_MAX, &sqe,
			 siw_sqe_flush_one, qp))
		siw_sq_recheck_later(qp);
}

/*
 * Two parties may kick at once: modify_qp storing RTS and the CM storing
 * the socket (siw_qpc_done). Each stores, then loads what the other
 * stored; the barrier makes sure at least one of them sees both.
 */
void siw_qp_sq_kick(struct siw_qp *qp)
{
	smp_mb();	/* pairs with the other kicker's, see above */
	if (siw_qp_can(qp, SIW_QP_FLUSHES))
		siw_qp_flush(qp);
	else if (siw_qp_can(qp, SIW_QP_SENDS))
		siw_tx_kick(qp);
}

static u16 siw_sqe_flags(const struct siw_qp *qp, const struct ib_send_wr *wr)
{
	u16 flags = SIW_WQE_VALID;

	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= SIW_WQE_SIGNALLED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		flags |= SIW_WQE_SOLICITED;
	if (wr->send_flags & IB_SEND_FENCE)
		flags |= SIW_WQE_READ_FENCE;
	return flags;
}

/* Opcode, remote address and key of @wr; -EINVAL if siw cannot do it. */
static int siw_sqe_set_op(struct siw_sqe *sqe, const struct ib_send_wr *wr)
{
	switch (wr->opcode) {
	case IB_WR_SEND:
		sqe->opcode = SIW_OP_SEND;
		break;
	case IB_WR_SEND_WITH_INV:
		sqe->opcode = SIW_OP_SEND_REMOTE_INV;
		sqe->rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE:
		sqe->opcode = SIW_OP_WRITE;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_RDMA_READ:
	case IB_WR_RDMA_READ_WITH_INV:
		/* With invalidation, the sink STag (sge[0].lkey) goes. */
		sqe->opcode = wr->opcode == IB_WR_RDMA_READ ?
			      SIW_OP_READ : SIW_OP_READ_LOCAL_INV;
		sqe->raddr = rdma_wr(wr)->remote_addr;
		sqe->rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_LOCAL_INV:
		sqe->opcode = SIW_OP_INVAL_STAG;
		sqe->rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_REG_MR:
		sqe->opcode = SIW_OP_REG_MR;
		sqe->base_mr = (uintptr_t)reg_wr(wr)->mr;
		sqe->rkey = reg_wr(wr)->key;
		sqe->access = reg_wr(wr)->access;
		break;
	default:
		/* Immediate data and atomics are not supported. */
		return -EINVAL;
	}
	return 0;
}

/*
 * Inline data goes into the SQE itself, from sge[1] on. The core maps
 * kernel buffers of a device without a DMA device to their virtual
 * addresses, so sg_list[].addr points at the data.
 */
static int siw_sqe_set_inline(struct siw_qp *qp, struct siw_sqe *sqe,
			      const struct ib_send_wr *wr)
{
	u8 *data = (u8 *)&sqe->sge[1];
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		u32 n = wr->sg_list[i].length;

		if (n > qp->max_inline - len)
			return -EINVAL;
		memcpy(data + len, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		len += n;
	}
	sqe->sge[0].laddr = 0;
	sqe->sge[0].length = len;
	sqe->sge[0].lkey = 0;
	sqe->num_sge = 1;
	return 0;
}

static int siw_sqe_set_sges(struct siw_qp *qp, struct siw_sqe *sqe,
			    const struct ib_send_wr *wr)
{
	int i;

	if ((u32)wr->num_sge > qp->max_send_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].laddr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sqe->num_sge = wr->num_sge;
	return 0;
}

/* Fill a free slot from @wr, VALID last. */
static int siw_sqe_write(struct siw_qp *qp, struct siw_sqe *slot,
			 const struct ib_send_wr *wr)
{
	struct siw_sqe sqe = {};
	u16 flags = siw_sqe_flags(qp, wr);
	int err;

	if (wr->num_sge < 0)
		return -EINVAL;
	err = siw_sqe_set_op(&sqe, wr);
	if (err)
		return err;

	sqe.id = wr->wr_id;
	if (sqe.opcode == SIW_OP_REG_MR || sqe.opcode == SIW_OP_INVAL_STAG) {
		sqe.num_sge = 0;
	} else if ((wr->send_flags & IB_SEND_INLINE) &&
		   siw_sq_opcode_has_data(sqe.opcode)) {
		flags |= SIW_WQE_INLINE;
		err = siw_sqe_set_inline(qp, &sqe, wr);
	} else {
		err = siw_sqe_set_sges(qp, &sqe, wr);
	}
	if (err)
		return err;

	sqe.flags = flags;
	if (siw_sqe_check(&sqe, false) != SIW_WC_SUCCESS)
		return -EINVAL;

	sqe.flags = 0;
	*slot = sqe;
	/* Release: the slot is filled before it reads VALID. */
	smp_store_release(&slot->flags, flags);
	return 0;
}

/* Kernel QPs: write @wr and the WRs after it into the ring. */
static int siw_sq_post(struct siw_qp *qp, const struct ib_send_wr *wr,
		       const struct ib_send_wr **bad_wr)
{
	struct siw_ring *sq = &qp->sq;
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&sq->lock, flags);
	/* In ERROR the WRs go in anyway, to be flushed below. */
	if (!siw_qp_can(qp, SIW_QP_TAKES_SQ))
		err = -EINVAL;
	if (err)
		siw_qp_dbg(qp, "post_send in state %d refused\n",
			   READ_ONCE(qp->state));
	while (wr && !err) {
		if (siw_ring_full(sq)) {
			err = -ENOMEM;
			break;
		}
		err = siw_sqe_write(qp, siw_sqe_at(sq, sq->put), wr);
		if (!err) {
			sq->put++;
			wr = wr->next;
		}
	}
	spin_unlock_irqrestore(&sq->lock, flags);

	if (err)
		*bad_wr = wr;
	siw_qp_sq_kick(qp);
	return err;
}

/*
 * Processes write their SQEs into the shared ring themselves; libsiw's
 * post_send with no WRs is the doorbell. WRs passed through the system
 * call are refused: siw has no way to return a ring slot for them.
 */
int siw_post_send(struct ib_qp *base, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct siw_qp *qp = to_siw_qp(base);

	if (!qp->user)
		return siw_sq_post(qp, wr, bad_wr);

	if (wr) {
		siw_qp_dbg(qp, "post_send with WRs on a user QP refused\n");
		*bad_wr = wr;
		return -EINVAL;
	}
	siw_qp_sq_kick(qp);
	return 0;
}
