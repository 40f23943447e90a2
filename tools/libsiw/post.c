// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path: posting send and receive work requests into the mapped
 * rings, and the SQ doorbell.
 *
 * Receives need no system call: siw looks at the RQ when a message comes
 * in. Sends do when siw might not look at the SQ again by itself. siw
 * takes SQEs in order and keeps taking them until it meets a slot that is
 * not VALID; taking a slot clears its flags and is followed by a full
 * barrier before the next slot is read. So after we have made our first
 * new SQE VALID and passed a full barrier of our own: if the slot before
 * it still reads VALID, siw has not taken that one yet and will read ours
 * after it; if it does not, siw may have stopped already, and we ring.
 * The doorbell is a post_send command with no WRs in it.
 */

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "libsiw.h"

void siw_sq_doorbell(struct siw_qp *qp, uint32_t first)
{
	struct siw_sqe *prev = &qp->sq[(first - 1) & (qp->sq_num - 1)];
	struct ib_uverbs_post_send_resp resp;
	struct pabi_post_send cmd;
	ssize_t n;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	/*
	 * When the new SQEs fill the whole ring, the slot before the first
	 * is the last new one (an SQ of one slot is always in that case):
	 * its VALID says nothing about siw, ring.
	 */
	if (qp->sq_put - first < qp->sq_num &&
	    (__atomic_load_n(&prev->flags, __ATOMIC_RELAXED) & SIW_WQE_VALID))
		return;

	memset(&cmd, 0, sizeof(cmd));
	cmd.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	cmd.hdr.in_words = sizeof(cmd) / 4;
	cmd.hdr.out_words = sizeof(resp) / 4;
	cmd.core.response = (uintptr_t)&resp;
	cmd.core.qp_handle = qp->base.qp.handle;
	cmd.core.wr_count = 0;
	cmd.core.sge_count = 0;
	cmd.core.wqe_size = sizeof(struct ib_uverbs_send_wr);
	n = write(qp->base.qp.context->cmd_fd, &cmd, sizeof(cmd));
	if (n != (ssize_t)sizeof(cmd))
		siw_err("QP %u: SQ doorbell failed: %s\n", qp->base.qp.qp_num,
			n < 0 ? strerror(errno) : "short write");
}

static bool siw_opcode_has_data(uint8_t op)
{
	return op == SIW_OP_SEND || op == SIW_OP_SEND_REMOTE_INV ||
	       op == SIW_OP_WRITE;
}

static int siw_sqe_from_wr(struct siw_qp *qp, struct siw_sqe *sqe,
			   const struct ibv_send_wr *wr, uint16_t *flags)
{
	int i;

	memset(sqe, 0, sizeof(*sqe));
	sqe->id = wr->wr_id;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		sqe->opcode = SIW_OP_SEND;
		break;
	case IBV_WR_SEND_WITH_INV:
		sqe->opcode = SIW_OP_SEND_REMOTE_INV;
		sqe->rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_RDMA_WRITE:
		sqe->opcode = SIW_OP_WRITE;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_RDMA_READ:
		sqe->opcode = SIW_OP_READ;
		sqe->raddr = wr->wr.rdma.remote_addr;
		sqe->rkey = wr->wr.rdma.rkey;
		break;
	default:
		siw_err("QP %u: send opcode %d not supported (no immediate data, atomics, memory windows or local invalidate from processes)\n",
			qp->base.qp.qp_num, wr->opcode);
		return EINVAL;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge) {
		siw_err("QP %u: %d SGEs, at most %u\n", qp->base.qp.qp_num,
			wr->num_sge, qp->max_send_sge);
		return EINVAL;
	}

	*flags = SIW_WQE_VALID;
	if ((wr->send_flags & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		*flags |= SIW_WQE_SIGNALLED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		*flags |= SIW_WQE_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		*flags |= SIW_WQE_READ_FENCE;

	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    siw_opcode_has_data(sqe->opcode)) {
		char *data = (char *)&sqe->sge[1];
		uint32_t len = 0;

		for (i = 0; i < wr->num_sge; i++) {
			uint32_t n = wr->sg_list[i].length;

			if (n > qp->max_inline - len) {
				siw_err("QP %u: inline data over %u bytes\n",
					qp->base.qp.qp_num, qp->max_inline);
				return EINVAL;
			}
			memcpy(data + len,
			       (void *)(uintptr_t)wr->sg_list[i].addr, n);
			len += n;
		}
		sqe->sge[0].length = len;
		sqe->num_sge = 1;
		*flags |= SIW_WQE_INLINE;
		return 0;
	}

	if (sqe->opcode == SIW_OP_READ && wr->num_sge > 1) {
		siw_err("QP %u: RDMA read into %d SGEs, siw takes one\n",
			qp->base.qp.qp_num, wr->num_sge);
		return EINVAL;
	}
	for (i = 0; i < wr->num_sge; i++) {
		sqe->sge[i].laddr = wr->sg_list[i].addr;
		sqe->sge[i].length = wr->sg_list[i].length;
		sqe->sge[i].lkey = wr->sg_list[i].lkey;
	}
	sqe->num_sge = (uint8_t)wr->num_sge;
	return 0;
}

int siw_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct siw_qp *qp = to_siw_qp(ibqp);
	struct siw_sqe sqe;
	uint32_t first;
	uint16_t flags;
	int err = 0;

	pthread_spin_lock(&qp->sq_lock);
	first = qp->sq_put;
	for (; wr; wr = wr->next) {
		struct siw_sqe *slot = &qp->sq[qp->sq_put & (qp->sq_num - 1)];

		if (siw_slot_flags16(&slot->flags) & SIW_WQE_VALID) {
			siw_dbg("QP %u: SQ full (%u)\n", ibqp->qp_num,
				qp->sq_num);
			err = ENOMEM;
			break;
		}
		err = siw_sqe_from_wr(qp, &sqe, wr, &flags);
		if (err)
			break;
		sqe.flags = 0;
		memcpy(slot, &sqe, sizeof(sqe));
		siw_slot_give16(&slot->flags, flags);
		qp->sq_put++;
	}
	if (qp->sq_put != first)
		siw_sq_doorbell(qp, first);
	pthread_spin_unlock(&qp->sq_lock);

	if (err)
		*bad_wr = wr;
	return err;
}

int siw_rq_post(pthread_spinlock_t *lock, struct siw_rqe *ring, uint32_t num,
		uint32_t *put, uint32_t max_sge, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad_wr)
{
	int err = 0, i;

	pthread_spin_lock(lock);
	for (; wr; wr = wr->next) {
		struct siw_rqe *slot = &ring[*put & (num - 1)];

		if (siw_slot_flags16(&slot->flags) & SIW_WQE_VALID) {
			siw_dbg("receive queue full (%u)\n", num);
			err = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > max_sge) {
			siw_err("receive WR with %d SGEs, at most %u\n",
				wr->num_sge, max_sge);
			err = EINVAL;
			break;
		}
		slot->id = wr->wr_id;
		slot->num_sge = (uint8_t)wr->num_sge;
		slot->opcode = 0;
		slot->unused = 0;
		for (i = 0; i < wr->num_sge; i++) {
			slot->sge[i].laddr = wr->sg_list[i].addr;
			slot->sge[i].length = wr->sg_list[i].length;
			slot->sge[i].lkey = wr->sg_list[i].lkey;
		}
		siw_slot_give16(&slot->flags, SIW_WQE_VALID);
		(*put)++;
	}
	pthread_spin_unlock(lock);

	if (err)
		*bad_wr = wr;
	return err;
}

int siw_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct siw_qp *qp = to_siw_qp(ibqp);

	if (qp->srq) {
		siw_err("QP %u: post_recv on a QP with an SRQ\n", ibqp->qp_num);
		*bad_wr = wr;
		return EINVAL;
	}
	return siw_rq_post(&qp->rq_lock, qp->rq, qp->rq_num, &qp->rq_put,
			   qp->max_recv_sge, wr, bad_wr);
}
