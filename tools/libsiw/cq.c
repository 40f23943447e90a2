// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues. siw writes CQEs into the mapped ring and sets VALID
 * last; we read a CQE only after seeing VALID (acquire) and hand the slot
 * back by clearing its flags (release). Arming writes the ctrl word after
 * the ring, which siw reads and clears when it signals the channel.
 * ibv_poll_cq and the extended start/next/end_poll API share the ring and
 * the lock; an extended poll holds the lock from start_poll to end_poll.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <rdma/siw-abi.h>

#include "../../drivers/infiniband/sw/siw/siw-abi-ext.h"
#include "libsiw.h"

static const enum ibv_wc_opcode siw_wc_opcode[SIW_NUM_OPCODES] = {
	[SIW_OP_WRITE] = IBV_WC_RDMA_WRITE,
	[SIW_OP_READ] = IBV_WC_RDMA_READ,
	[SIW_OP_READ_LOCAL_INV] = IBV_WC_RDMA_READ,
	[SIW_OP_SEND] = IBV_WC_SEND,
	[SIW_OP_SEND_WITH_IMM] = IBV_WC_SEND,
	[SIW_OP_SEND_REMOTE_INV] = IBV_WC_SEND,
	[SIW_OP_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	[SIW_OP_COMP_AND_SWAP] = IBV_WC_COMP_SWAP,
	[SIW_OP_RECEIVE] = IBV_WC_RECV,
	[SIW_OP_READ_RESPONSE] = IBV_WC_RDMA_READ,
	[SIW_OP_INVAL_STAG] = IBV_WC_LOCAL_INV,
	[SIW_OP_REG_MR] = IBV_WC_BIND_MW,
};

static const enum ibv_wc_status siw_wc_status[SIW_NUM_WC_STATUS] = {
	[SIW_WC_SUCCESS] = IBV_WC_SUCCESS,
	[SIW_WC_LOC_LEN_ERR] = IBV_WC_LOC_LEN_ERR,
	[SIW_WC_LOC_PROT_ERR] = IBV_WC_LOC_PROT_ERR,
	[SIW_WC_LOC_QP_OP_ERR] = IBV_WC_LOC_QP_OP_ERR,
	[SIW_WC_WR_FLUSH_ERR] = IBV_WC_WR_FLUSH_ERR,
	[SIW_WC_BAD_RESP_ERR] = IBV_WC_BAD_RESP_ERR,
	[SIW_WC_LOC_ACCESS_ERR] = IBV_WC_LOC_ACCESS_ERR,
	[SIW_WC_REM_ACCESS_ERR] = IBV_WC_REM_ACCESS_ERR,
	[SIW_WC_REM_INV_REQ_ERR] = IBV_WC_REM_INV_REQ_ERR,
	[SIW_WC_GENERAL_ERR] = IBV_WC_GENERAL_ERR,
};

static enum ibv_wc_opcode siw_cqe_opcode(const struct siw_cqe *cqe)
{
	return cqe->opcode < SIW_NUM_OPCODES ? siw_wc_opcode[cqe->opcode] :
					       IBV_WC_SEND;
}

static enum ibv_wc_status siw_cqe_status(const struct siw_cqe *cqe)
{
	return cqe->status < SIW_NUM_WC_STATUS ? siw_wc_status[cqe->status] :
						 IBV_WC_GENERAL_ERR;
}

static unsigned int siw_cqe_wc_flags(const struct siw_cqe *cqe)
{
	return (cqe->flags & SIW_WQE_REM_INVAL) ? IBV_WC_WITH_INV : 0;
}

/* The oldest CQE if siw has handed it to us, else NULL. */
static struct siw_cqe *siw_cq_peek(struct siw_cq *cq)
{
	struct siw_cqe *cqe = &cq->ring[cq->get & (cq->num - 1)];

	if (!(__atomic_load_n(&cqe->flags, __ATOMIC_ACQUIRE) & SIW_WQE_VALID))
		return NULL;
	return cqe;
}

/* Hand the oldest slot back to siw, once read. */
static void siw_cq_pop(struct siw_cq *cq, struct siw_cqe *cqe)
{
	__atomic_store_n(&cqe->flags, 0, __ATOMIC_RELEASE);
	cq->get++;
}

static void siw_cqe_to_wc(const struct siw_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->id;
	wc->status = siw_cqe_status(cqe);
	wc->opcode = siw_cqe_opcode(cqe);
	wc->byte_len = cqe->bytes;
	wc->qp_num = (uint32_t)cqe->qp_id;
	wc->wc_flags = siw_cqe_wc_flags(cqe);
	if (wc->wc_flags & IBV_WC_WITH_INV)
		wc->invalidated_rkey = cqe->inval_stag;
	if (wc->status != IBV_WC_SUCCESS)
		wc->vendor_err = cqe->status;
}

int siw_poll_cq(struct ibv_cq *ibcq, int num, struct ibv_wc *wc)
{
	struct siw_cq *cq = to_siw_cq(ibcq);
	struct siw_cqe *cqe;
	int n;

	pthread_spin_lock(&cq->lock);
	for (n = 0; n < num; n++) {
		cqe = siw_cq_peek(cq);
		if (!cqe)
			break;
		siw_cqe_to_wc(cqe, &wc[n]);
		siw_cq_pop(cq, cqe);
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Arms add up (an arm for any completion covers solicited ones too) until
 * siw fires and clears them. The atomic OR is a full barrier on the ways
 * we build for, so a poll after arming sees what siw pushed before it
 * read the arm.
 */
int siw_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct siw_cq *cq = to_siw_cq(ibcq);
	uint32_t arm = solicited_only ? SIW_NOTIFY_SOLICITED :
					SIW_NOTIFY_NEXT_COMPLETION;

	__atomic_fetch_or(&cq->ctrl->flags, arm, __ATOMIC_SEQ_CST);
	return 0;
}

/* Extended polling (ibv_start_poll & co.) */

static void siw_cq_ex_load(struct siw_cq *cq, struct siw_cqe *cqe)
{
	cq->cur = cqe;
	cq->ex.wr_id = cqe->id;
	cq->ex.status = siw_cqe_status(cqe);
}

static int siw_start_poll(struct ibv_cq_ex *ex, struct ibv_poll_cq_attr *attr)
{
	struct siw_cq *cq = ex_to_siw_cq(ex);
	struct siw_cqe *cqe;

	if (attr->comp_mask) {
		siw_err("start_poll: comp_mask 0x%x not supported\n",
			attr->comp_mask);
		return EINVAL;
	}
	pthread_spin_lock(&cq->lock);
	cqe = siw_cq_peek(cq);
	if (!cqe) {
		pthread_spin_unlock(&cq->lock);
		return ENOENT;
	}
	siw_cq_ex_load(cq, cqe);
	return 0;
}

static int siw_next_poll(struct ibv_cq_ex *ex)
{
	struct siw_cq *cq = ex_to_siw_cq(ex);
	struct siw_cqe *cqe;

	if (cq->cur) {
		siw_cq_pop(cq, cq->cur);
		cq->cur = NULL;
	}
	cqe = siw_cq_peek(cq);
	if (!cqe)
		return ENOENT;
	siw_cq_ex_load(cq, cqe);
	return 0;
}

static void siw_end_poll(struct ibv_cq_ex *ex)
{
	struct siw_cq *cq = ex_to_siw_cq(ex);

	if (cq->cur) {
		siw_cq_pop(cq, cq->cur);
		cq->cur = NULL;
	}
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode siw_read_opcode(struct ibv_cq_ex *ex)
{
	return siw_cqe_opcode(ex_to_siw_cq(ex)->cur);
}

static uint32_t siw_read_vendor_err(struct ibv_cq_ex *ex)
{
	const struct siw_cqe *cqe = ex_to_siw_cq(ex)->cur;

	return cqe->status == SIW_WC_SUCCESS ? 0 : cqe->status;
}

static uint32_t siw_read_byte_len(struct ibv_cq_ex *ex)
{
	return ex_to_siw_cq(ex)->cur->bytes;
}

/* Immediate data: siw's CQE has the room, no siw opcode delivers any yet. */
static __be32 siw_read_imm_data(struct ibv_cq_ex *ex)
{
	const struct siw_cqe *cqe = ex_to_siw_cq(ex)->cur;

	if (cqe->flags & SIW_WQE_REM_INVAL)
		return htobe32(cqe->inval_stag);
	return (__be32)cqe->imm_data;
}

static uint32_t siw_read_qp_num(struct ibv_cq_ex *ex)
{
	return (uint32_t)ex_to_siw_cq(ex)->cur->qp_id;
}

static uint32_t siw_read_zero32(struct ibv_cq_ex *ex)
{
	(void)ex;
	return 0;
}

static uint8_t siw_read_zero8(struct ibv_cq_ex *ex)
{
	(void)ex;
	return 0;
}

static unsigned int siw_read_wc_flags(struct ibv_cq_ex *ex)
{
	return siw_cqe_wc_flags(ex_to_siw_cq(ex)->cur);
}

#define SIW_CQ_EX_WC_FLAGS                                                  \
	(IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |                     \
	 IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |                    \
	 IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |                          \
	 IBV_WC_EX_WITH_DLID_PATH_BITS)

static void siw_cq_ex_set_ops(struct siw_cq *cq)
{
	struct ibv_cq_ex *ex = &cq->ex;

	ex->start_poll = siw_start_poll;
	ex->next_poll = siw_next_poll;
	ex->end_poll = siw_end_poll;
	ex->read_opcode = siw_read_opcode;
	ex->read_vendor_err = siw_read_vendor_err;
	ex->read_wc_flags = siw_read_wc_flags;
	ex->read_byte_len = siw_read_byte_len;
	ex->read_imm_data = siw_read_imm_data;
	ex->read_qp_num = siw_read_qp_num;
	ex->read_src_qp = siw_read_zero32;
	ex->read_slid = siw_read_zero32;
	ex->read_sl = siw_read_zero8;
	ex->read_dlid_path_bits = siw_read_zero8;
}

static int siw_cq_map(struct siw_cq *cq, int cmd_fd, uint32_t num,
		      uint64_t key)
{
	size_t len;
	void *p;

	if (!num || (num & (num - 1))) {
		siw_err("CQ of %u CQEs: not a power of two\n", num);
		return EPROTO;
	}
	len = (size_t)num * sizeof(struct siw_cqe) + sizeof(struct siw_cq_ctrl);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)key);
	if (p == MAP_FAILED) {
		int err = errno;

		siw_err("mapping a CQ ring of %zu bytes: %s\n", len,
			strerror(err));
		return err;
	}
	cq->ring = p;
	cq->ctrl = (struct siw_cq_ctrl *)((char *)p +
					  num * sizeof(struct siw_cqe));
	cq->map_len = len;
	cq->num = num;
	cq->get = 0;
	return 0;
}

static struct siw_cq *siw_cq_create(struct ibv_context *ctx, int cqe,
				    struct ibv_comp_channel *channel,
				    int vector)
{
	struct {
		struct ib_uverbs_create_cq_resp ibv;
		struct siw_uresp_create_cq siw;
	} resp;
	struct pabi_create_cq cmd;
	struct siw_cq *cq;
	int err;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_cq(ctx, cqe, channel, vector,
				ibv_cq_ex_to_cq(&cq->ex), &cmd, sizeof(cmd),
				&resp.ibv, sizeof(resp));
	if (err) {
		siw_err("create_cq of %d CQEs: %s\n", cqe, strerror(err));
		goto free;
	}
	cq->id = resp.siw.cq_id;
	err = siw_cq_map(cq, ctx->cmd_fd, resp.siw.num_cqe, resp.siw.cq_key);
	if (err) {
		ibv_cmd_destroy_cq(ibv_cq_ex_to_cq(&cq->ex));
		goto free;
	}
	return cq;

free:
	pthread_spin_destroy(&cq->lock);
	free(cq);
	errno = err;
	return NULL;
}

struct ibv_cq *siw_create_cq(struct ibv_context *ctx, int cqe,
			     struct ibv_comp_channel *channel, int vector)
{
	struct siw_cq *cq = siw_cq_create(ctx, cqe, channel, vector);

	return cq ? ibv_cq_ex_to_cq(&cq->ex) : NULL;
}

struct ibv_cq_ex *siw_create_cq_ex(struct ibv_context *ctx,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct siw_cq *cq;

	if (attr->comp_mask & ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_FLAGS) {
		siw_err("create_cq_ex: comp_mask 0x%x not supported\n",
			attr->comp_mask);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) && attr->flags) {
		siw_err("create_cq_ex: flags 0x%x not supported\n",
			attr->flags);
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)SIW_CQ_EX_WC_FLAGS) {
		siw_err("create_cq_ex: wc_flags 0x%llx not supported\n",
			(unsigned long long)(attr->wc_flags &
					     ~(uint64_t)SIW_CQ_EX_WC_FLAGS));
		errno = EOPNOTSUPP;
		return NULL;
	}
	cq = siw_cq_create(ctx, (int)attr->cqe, attr->channel,
			   (int)attr->comp_vector);
	if (!cq)
		return NULL;
	cq->extended = true;
	siw_cq_ex_set_ops(cq);
	return &cq->ex;
}

int siw_destroy_cq(struct ibv_cq *ibcq)
{
	struct siw_cq *cq = to_siw_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err) {
		siw_err("destroy_cq: %s\n", strerror(err));
		return err;
	}
	munmap(cq->ring, cq->map_len);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

/*
 * siw moves the CQEs not yet consumed into a new ring, mapped at a new
 * key, and we continue at its slot 0 (siw-abi-ext.h). Nobody polls while
 * we hold the lock, so nothing is consumed between siw's copy and our
 * switch.
 */
int siw_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct siw_cq *cq = to_siw_cq(ibcq);
	struct {
		struct ib_uverbs_resize_cq_resp ibv;
		struct siw_uresp_resize_cq siw;
	} resp;
	struct pabi_resize_cq cmd;
	struct siw_cqe *old_ring;
	size_t old_len;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	pthread_spin_lock(&cq->lock);
	old_ring = cq->ring;
	old_len = cq->map_len;
	err = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv,
				sizeof(resp));
	if (err) {
		pthread_spin_unlock(&cq->lock);
		siw_err("resize_cq to %d CQEs: %s\n", cqe, strerror(err));
		return err;
	}
	err = siw_cq_map(cq, ibcq->context->cmd_fd, resp.siw.num_cqe,
			 resp.siw.cq_key);
	if (!err)
		munmap(old_ring, old_len);
	pthread_spin_unlock(&cq->lock);
	return err;
}
