// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The extended send API (ibv_wr_start ... ibv_wr_complete).
 *
 * wr_start takes the SQ lock, which wr_complete or wr_abort drops. Each
 * WR is built in place in the next free slot, without VALID; wr_complete
 * makes the batch's slots VALID in ring order and rings the doorbell if
 * needed (post.c), wr_abort clears them. A WR siw cannot take makes the
 * whole batch fail at wr_complete, with nothing posted.
 */

#include <errno.h>
#include <string.h>

#include "libsiw.h"

static uint16_t siw_wr_flags(struct siw_qp *qp)
{
	unsigned int f = qp->base.qp_ex.wr_flags;
	uint16_t flags = SIW_WQE_VALID;

	if ((f & IBV_SEND_SIGNALED) || qp->sq_sig_all)
		flags |= SIW_WQE_SIGNALLED;
	if (f & IBV_SEND_SOLICITED)
		flags |= SIW_WQE_SOLICITED;
	if (f & IBV_SEND_FENCE)
		flags |= SIW_WQE_READ_FENCE;
	return flags;
}

static void siw_wr_fail(struct siw_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_cur = NULL;
}

/* Start a WR of @opcode in the next free slot. */
static struct siw_sqe *siw_wr_begin(struct ibv_qp_ex *ex, uint8_t opcode,
				    uint64_t op_flag)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);
	struct siw_sqe *slot;
	uint32_t used;

	if (qp->wr_err)
		return NULL;
	if (!(qp->send_ops & op_flag)) {
		siw_err("QP %u: send op 0x%llx not enabled at create_qp_ex\n",
			ex->qp_base.qp_num, (unsigned long long)op_flag);
		siw_wr_fail(qp, EINVAL);
		return NULL;
	}
	used = qp->sq_put - qp->wr_first;
	slot = &qp->sq[qp->sq_put & (qp->sq_num - 1)];
	if (used >= qp->sq_num ||
	    (siw_slot_flags16(&slot->flags) & SIW_WQE_VALID)) {
		siw_dbg("QP %u: SQ full (%u)\n", ex->qp_base.qp_num,
			qp->sq_num);
		siw_wr_fail(qp, ENOMEM);
		return NULL;
	}
	memset(slot, 0, sizeof(*slot));
	slot->id = ex->wr_id;
	slot->opcode = opcode;
	qp->wr_cur = slot;
	qp->wr_cur_flags = siw_wr_flags(qp);
	qp->sq_put++;
	return slot;
}

static void siw_wr_send(struct ibv_qp_ex *ex)
{
	siw_wr_begin(ex, SIW_OP_SEND, IBV_QP_EX_WITH_SEND);
}

static void siw_wr_send_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	struct siw_sqe *sqe = siw_wr_begin(ex, SIW_OP_SEND_REMOTE_INV,
					   IBV_QP_EX_WITH_SEND_WITH_INV);

	if (sqe)
		sqe->rkey = rkey;
}

static void siw_wr_rdma_write(struct ibv_qp_ex *ex, uint32_t rkey,
			      uint64_t raddr)
{
	struct siw_sqe *sqe = siw_wr_begin(ex, SIW_OP_WRITE,
					   IBV_QP_EX_WITH_RDMA_WRITE);

	if (sqe) {
		sqe->rkey = rkey;
		sqe->raddr = raddr;
	}
}

static void siw_wr_rdma_read(struct ibv_qp_ex *ex, uint32_t rkey,
			     uint64_t raddr)
{
	struct siw_sqe *sqe = siw_wr_begin(ex, SIW_OP_READ,
					   IBV_QP_EX_WITH_RDMA_READ);

	if (sqe) {
		sqe->rkey = rkey;
		sqe->raddr = raddr;
	}
}

/* Refused by siw for processes (kernel-only SQE opcodes). */
static void siw_wr_local_inv(struct ibv_qp_ex *ex, uint32_t rkey)
{
	(void)rkey;
	siw_err("QP %u: local invalidate is not available to processes\n",
		ex->qp_base.qp_num);
	siw_wr_fail(ex_to_siw_qp(ex), EOPNOTSUPP);
}

static struct siw_sqe *siw_wr_cur(struct ibv_qp_ex *ex, const char *what)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);

	if (qp->wr_err)
		return NULL;
	if (!qp->wr_cur) {
		siw_err("QP %u: %s without a WR\n", ex->qp_base.qp_num, what);
		siw_wr_fail(qp, EINVAL);
	}
	return qp->wr_cur;
}

static void siw_wr_set_sge_list(struct ibv_qp_ex *ex, size_t num,
				const struct ibv_sge *sge)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);
	struct siw_sqe *sqe = siw_wr_cur(ex, "set_sge");
	size_t i;

	if (!sqe)
		return;
	if (num > qp->max_send_sge || (sqe->opcode == SIW_OP_READ && num > 1)) {
		siw_err("QP %u: %zu SGEs for opcode %u\n", ex->qp_base.qp_num,
			num, sqe->opcode);
		siw_wr_fail(qp, EINVAL);
		return;
	}
	for (i = 0; i < num; i++) {
		sqe->sge[i].laddr = sge[i].addr;
		sqe->sge[i].length = sge[i].length;
		sqe->sge[i].lkey = sge[i].lkey;
	}
	sqe->num_sge = (uint8_t)num;
}

static void siw_wr_set_sge(struct ibv_qp_ex *ex, uint32_t lkey, uint64_t addr,
			   uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	siw_wr_set_sge_list(ex, 1, &sge);
}

static void siw_wr_set_inline_data_list(struct ibv_qp_ex *ex, size_t num,
					const struct ibv_data_buf *buf)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);
	struct siw_sqe *sqe = siw_wr_cur(ex, "set_inline_data");
	char *data;
	size_t len = 0, i;

	if (!sqe)
		return;
	if (sqe->opcode == SIW_OP_READ) {
		siw_err("QP %u: inline data for an RDMA read\n",
			ex->qp_base.qp_num);
		siw_wr_fail(qp, EINVAL);
		return;
	}
	data = (char *)&sqe->sge[1];
	for (i = 0; i < num; i++) {
		if (buf[i].length > qp->max_inline - len) {
			siw_err("QP %u: inline data over %u bytes\n",
				ex->qp_base.qp_num, qp->max_inline);
			siw_wr_fail(qp, EINVAL);
			return;
		}
		memcpy(data + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	sqe->sge[0].laddr = 0;
	sqe->sge[0].lkey = 0;
	sqe->sge[0].length = (uint32_t)len;
	sqe->num_sge = 1;
	qp->wr_cur_flags |= SIW_WQE_INLINE;
}

static void siw_wr_set_inline_data(struct ibv_qp_ex *ex, void *addr,
				   size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	siw_wr_set_inline_data_list(ex, 1, &buf);
}

/*
 * The flags of each WR are kept in its slot's flags word, without VALID,
 * until wr_complete: siw ignores slots that are not VALID.
 */
static void siw_wr_seal(struct siw_qp *qp)
{
	if (qp->wr_cur) {
		qp->wr_cur->flags = qp->wr_cur_flags & ~SIW_WQE_VALID;
		qp->wr_cur = NULL;
	}
}

static void siw_wr_start(struct ibv_qp_ex *ex)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr_first = qp->sq_put;
	qp->wr_cur = NULL;
	qp->wr_err = 0;
}

static void siw_wr_abort(struct ibv_qp_ex *ex)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);
	uint32_t i;

	for (i = qp->wr_first; i != qp->sq_put; i++)
		qp->sq[i & (qp->sq_num - 1)].flags = 0;
	qp->sq_put = qp->wr_first;
	qp->wr_cur = NULL;
	pthread_spin_unlock(&qp->sq_lock);
}

static int siw_wr_complete(struct ibv_qp_ex *ex)
{
	struct siw_qp *qp = ex_to_siw_qp(ex);
	int err;
	uint32_t i;

	siw_wr_seal(qp);	/* the last WR built */
	err = qp->wr_err;
	if (err) {
		siw_wr_abort(ex);
		return err;
	}
	for (i = qp->wr_first; i != qp->sq_put; i++) {
		struct siw_sqe *slot = &qp->sq[i & (qp->sq_num - 1)];

		siw_slot_give16(&slot->flags, slot->flags | SIW_WQE_VALID);
	}
	if (qp->sq_put != qp->wr_first)
		siw_sq_doorbell(qp, qp->wr_first);
	pthread_spin_unlock(&qp->sq_lock);
	return 0;
}

/*
 * Each wr_<op> seals the WR before it; the setters work on the current
 * one. Wrapped so that sealing happens before a new slot is taken.
 */
#define SIW_WR_SEALED(name, proto, args)				\
	static void name##_sealed proto					\
	{								\
		siw_wr_seal(ex_to_siw_qp(ex));				\
		name args;						\
	}

SIW_WR_SEALED(siw_wr_send, (struct ibv_qp_ex *ex), (ex))
SIW_WR_SEALED(siw_wr_send_inv, (struct ibv_qp_ex *ex, uint32_t rkey),
	      (ex, rkey))
SIW_WR_SEALED(siw_wr_rdma_write,
	      (struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr),
	      (ex, rkey, raddr))
SIW_WR_SEALED(siw_wr_rdma_read,
	      (struct ibv_qp_ex *ex, uint32_t rkey, uint64_t raddr),
	      (ex, rkey, raddr))

void siw_qp_ex_init(struct siw_qp *qp, uint64_t send_ops)
{
	struct ibv_qp_ex *ex = &qp->base.qp_ex;

	qp->send_ops = send_ops;
	ex->wr_send = siw_wr_send_sealed;
	ex->wr_send_inv = siw_wr_send_inv_sealed;
	ex->wr_rdma_write = siw_wr_rdma_write_sealed;
	ex->wr_rdma_read = siw_wr_rdma_read_sealed;
	ex->wr_local_inv = siw_wr_local_inv;
	ex->wr_set_sge = siw_wr_set_sge;
	ex->wr_set_sge_list = siw_wr_set_sge_list;
	ex->wr_set_inline_data = siw_wr_set_inline_data;
	ex->wr_set_inline_data_list = siw_wr_set_inline_data_list;
	ex->wr_start = siw_wr_start;
	ex->wr_complete = siw_wr_complete;
	ex->wr_abort = siw_wr_abort;
	qp->base.comp_mask |= PABI_QP_EX;
}
