// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: a mapped ring of RQEs, posted to without system
 * calls like a QP's RQ. siw cannot resize a process's SRQ (its ring is
 * mapped at a fixed size); the limit goes through modify_srq.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "libsiw.h"

struct ibv_srq *siw_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct {
		struct ib_uverbs_create_srq_resp ibv;
		struct siw_uresp_create_srq siw;
	} resp;
	struct pabi_create_srq cmd;
	struct siw_srq *srq;
	uint32_t num;
	void *p;
	int err;

	if (attr->attr.max_sge > SIW_MAX_SGE) {
		siw_err("create_srq: %u SGEs, at most %u\n", attr->attr.max_sge,
			SIW_MAX_SGE);
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_srq(pd, &srq->base, attr, &cmd, sizeof(cmd),
				 &resp.ibv, sizeof(resp));
	if (err) {
		siw_err("create_srq of %u WRs: %s\n", attr->attr.max_wr,
			strerror(err));
		goto free;
	}
	num = resp.siw.num_rqe;
	if (!num || (num & (num - 1))) {
		siw_err("SRQ of %u RQEs: not a power of two\n", num);
		err = EPROTO;
		goto destroy;
	}
	srq->map_len = (size_t)num * sizeof(struct siw_rqe);
	p = mmap(NULL, srq->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 pd->context->cmd_fd, (off_t)resp.siw.srq_key);
	if (p == MAP_FAILED) {
		err = errno;
		siw_err("mapping an SRQ ring of %zu bytes: %s\n", srq->map_len,
			strerror(err));
		goto destroy;
	}
	srq->ring = p;
	srq->num = num;
	return &srq->base;

destroy:
	ibv_cmd_destroy_srq(&srq->base);
free:
	pthread_spin_destroy(&srq->lock);
	free(srq);
	errno = err;
	return NULL;
}

int siw_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask)
{
	struct pabi_modify_srq cmd;
	int err;

	if (mask & IBV_SRQ_MAX_WR) {
		siw_err("modify_srq: a process's SRQ cannot be resized\n");
		return EOPNOTSUPP;
	}
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_modify_srq(srq, attr, mask, &cmd, sizeof(cmd));
	if (err)
		siw_err("modify_srq (mask 0x%x): %s\n", mask, strerror(err));
	return err;
}

int siw_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct pabi_query_srq cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
	if (err)
		siw_err("query_srq: %s\n", strerror(err));
	return err;
}

int siw_destroy_srq(struct ibv_srq *ibsrq)
{
	struct siw_srq *srq = to_siw_srq(ibsrq);
	int err;

	err = ibv_cmd_destroy_srq(ibsrq);
	if (err) {
		siw_err("destroy_srq: %s\n", strerror(err));
		return err;
	}
	munmap(srq->ring, srq->map_len);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int siw_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	struct siw_srq *srq = to_siw_srq(ibsrq);

	return siw_rq_post(&srq->lock, srq->ring, srq->num, &srq->put,
			   SIW_MAX_SGE, wr, bad_wr);
}
