// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * QPs: create (mapping the SQ and, without an SRQ, the RQ), modify, query
 * and destroy. The data path is in post.c and qp_ex.c.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libsiw.h"

#define SIW_QP_EX_SEND_OPS                                                  \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_INV |               \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_READ)

static void *siw_map_ring(int cmd_fd, uint32_t num, size_t slot, uint64_t key,
			  size_t *len, const char *what)
{
	void *p;

	if (!num || (num & (num - 1))) {
		siw_err("%s of %u slots: not a power of two\n", what, num);
		errno = EPROTO;
		return NULL;
	}
	*len = (size_t)num * slot;
	p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
		 (off_t)key);
	if (p == MAP_FAILED) {
		siw_err("mapping %s (%zu bytes): %s\n", what, *len,
			strerror(errno));
		return NULL;
	}
	return p;
}

static int siw_check_qp_attr(struct ibv_qp_init_attr_ex *attr)
{
	uint32_t known = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			 IBV_QP_INIT_ATTR_CREATE_FLAGS;

	if (attr->comp_mask & ~known) {
		siw_err("create_qp: comp_mask 0x%x not supported\n",
			attr->comp_mask & ~known);
		return EOPNOTSUPP;
	}
	/* Creation flags may be given, as long as none is set. */
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags) {
		siw_err("create_qp: create flags 0x%x not supported\n",
			attr->create_flags);
		return EOPNOTSUPP;
	}
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		siw_err("create_qp: no PD\n");
		return EINVAL;
	}
	if (attr->qp_type != IBV_QPT_RC) {
		siw_err("create_qp: QP type %d not supported (RC only)\n",
			attr->qp_type);
		return EOPNOTSUPP;
	}
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~(uint64_t)SIW_QP_EX_SEND_OPS)) {
		siw_err("create_qp: send ops 0x%llx not supported (siw takes send, send with invalidate, RDMA write and read from processes)\n",
			(unsigned long long)(attr->send_ops_flags &
					     ~(uint64_t)SIW_QP_EX_SEND_OPS));
		return EOPNOTSUPP;
	}
	if (attr->cap.max_send_sge > SIW_MAX_SGE ||
	    attr->cap.max_recv_sge > SIW_MAX_SGE ||
	    attr->cap.max_inline_data > SIW_MAX_INLINE) {
		siw_err("create_qp: %u/%u SGEs, %u inline bytes exceed %u/%u/%zu\n",
			attr->cap.max_send_sge, attr->cap.max_recv_sge,
			attr->cap.max_inline_data, SIW_MAX_SGE, SIW_MAX_SGE,
			SIW_MAX_INLINE);
		return EINVAL;
	}
	return 0;
}

static struct siw_qp *siw_qp_create(struct ibv_context *ctx,
				    struct ibv_qp_init_attr_ex *attr)
{
	struct {
		struct ib_uverbs_create_qp_resp ibv;
		struct siw_uresp_create_qp siw;
	} resp;
	struct ibv_qp_init_attr_ex kattr;
	struct pabi_create_qp cmd;
	struct siw_qp *qp;
	int err;

	err = siw_check_qp_attr(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);

	/* The kernel command knows nothing of the extended send API. */
	kattr = *attr;
	kattr.comp_mask = IBV_QP_INIT_ATTR_PD;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_qp_ex(ctx, &qp->base, &kattr, &cmd, sizeof(cmd),
				   &resp.ibv, sizeof(resp));
	if (err) {
		siw_err("create_qp (%u/%u WRs, %u/%u SGEs): %s\n",
			attr->cap.max_send_wr, attr->cap.max_recv_wr,
			attr->cap.max_send_sge, attr->cap.max_recv_sge,
			strerror(err));
		goto free;
	}
	attr->cap = kattr.cap;

	qp->sq_num = resp.siw.num_sqe;
	qp->sq = siw_map_ring(ctx->cmd_fd, qp->sq_num, sizeof(struct siw_sqe),
			      resp.siw.sq_key, &qp->sq_map_len, "SQ");
	if (!qp->sq)
		goto destroy;
	if (attr->srq) {
		qp->srq = to_siw_srq(attr->srq);
	} else {
		qp->rq_num = resp.siw.num_rqe;
		qp->rq = siw_map_ring(ctx->cmd_fd, qp->rq_num,
				      sizeof(struct siw_rqe), resp.siw.rq_key,
				      &qp->rq_map_len, "RQ");
		if (!qp->rq)
			goto unmap_sq;
	}
	qp->sq_sig_all = attr->sq_sig_all;
	qp->max_send_sge = SIW_MAX_SGE;
	qp->max_recv_sge = SIW_MAX_SGE;
	qp->max_inline = SIW_MAX_INLINE;
	return qp;

unmap_sq:
	munmap(qp->sq, qp->sq_map_len);
destroy:
	err = errno;
	ibv_cmd_destroy_qp(&qp->base.qp);
free:
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	errno = err;
	return NULL;
}

struct ibv_qp *siw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex ex;
	struct siw_qp *qp;

	memset(&ex, 0, sizeof(ex));
	memcpy(&ex, attr, sizeof(*attr));
	ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	ex.pd = pd;
	qp = siw_qp_create(pd->context, &ex);
	if (!qp)
		return NULL;
	attr->cap = ex.cap;
	return &qp->base.qp;
}

struct ibv_qp *siw_create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr)
{
	struct siw_qp *qp = siw_qp_create(ctx, attr);

	if (!qp)
		return NULL;
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		siw_qp_ex_init(qp, attr->send_ops_flags);
	return &qp->base.qp;
}

int siw_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	struct pabi_modify_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_modify_qp(qp, attr, mask, &cmd, sizeof(cmd));
	if (err)
		siw_err("modify_qp %u (mask 0x%x, state %d): %s\n", qp->qp_num,
			mask, (mask & IBV_QP_STATE) ? (int)attr->qp_state : -1,
			strerror(err));
	return err;
}

int siw_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init)
{
	struct pabi_query_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_query_qp(qp, attr, mask, init, &cmd, sizeof(cmd));
	if (err)
		siw_err("query_qp %u: %s\n", qp->qp_num, strerror(err));
	return err;
}

int siw_destroy_qp(struct ibv_qp *ibqp)
{
	struct siw_qp *qp = to_siw_qp(ibqp);
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err) {
		siw_err("destroy_qp %u: %s\n", ibqp->qp_num, strerror(err));
		return err;
	}
	munmap(qp->sq, qp->sq_map_len);
	if (qp->rq)
		munmap(qp->rq, qp->rq_map_len);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}
