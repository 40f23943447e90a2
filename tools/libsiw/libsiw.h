/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libsiw: the siw project's rdma-core provider. Objects, ring access and
 * the helpers shared by the provider's files.
 *
 * Rings (<rdma/siw-abi.h>) are shared with the kernel: a slot belongs to
 * whoever may write it next, as told by SIW_WQE_VALID in its flags. For
 * the SQ, RQ and SRQ we fill a free slot and store VALID last (release);
 * siw clears the flags when it has taken the slot. For the CQ, siw fills
 * and sets VALID, and we clear the flags once we have read the CQE.
 * Each queue has its own lock; the rings are indexed by free-running
 * 32-bit counters modulo their size, a power of two.
 */

#ifndef LIBSIW_H
#define LIBSIW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/siw-abi.h>

#include "abi.h"

#define siw_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

struct siw_device {
	struct pabi_device base;
};

struct siw_context {
	struct verbs_context base;
	uint32_t dev_id;
};

struct siw_cq {
	/* ibv_cq is the start of ibv_cq_ex: one object for both APIs. */
	struct ibv_cq_ex ex;
	pthread_spinlock_t lock;
	struct siw_cqe *ring;
	struct siw_cq_ctrl *ctrl;
	size_t map_len;
	uint32_t num;		/* slots, a power of two */
	uint32_t get;		/* next slot to read */
	uint32_t id;
	bool extended;		/* created with ibv_create_cq_ex */
	struct siw_cqe *cur;	/* extended polling: CQE being read */
};

struct siw_srq {
	struct ibv_srq base;
	pthread_spinlock_t lock;
	struct siw_rqe *ring;
	size_t map_len;
	uint32_t num;
	uint32_t put;
};

struct siw_qp {
	struct pabi_qp base;
	struct siw_srq *srq;

	pthread_spinlock_t sq_lock;
	struct siw_sqe *sq;
	size_t sq_map_len;
	uint32_t sq_num;
	uint32_t sq_put;
	bool sq_sig_all;
	uint32_t max_send_sge;
	uint32_t max_inline;

	pthread_spinlock_t rq_lock;
	struct siw_rqe *rq;
	size_t rq_map_len;
	uint32_t rq_num;
	uint32_t rq_put;
	uint32_t max_recv_sge;

	/* ibv_wr_*() batch, under sq_lock from wr_start to its end. */
	uint32_t wr_first;	/* slot of the batch's first WR */
	struct siw_sqe *wr_cur;	/* slot being built, not VALID yet */
	uint16_t wr_cur_flags;
	int wr_err;
	uint64_t send_ops;	/* IBV_QP_EX_WITH_* allowed */
};

static inline struct siw_context *to_siw_ctx(struct ibv_context *ctx)
{
	return siw_container_of(ctx, struct siw_context, base.context);
}

static inline struct siw_cq *to_siw_cq(struct ibv_cq *cq)
{
	return siw_container_of((struct ibv_cq_ex *)cq, struct siw_cq, ex);
}

static inline struct siw_cq *ex_to_siw_cq(struct ibv_cq_ex *cq)
{
	return siw_container_of(cq, struct siw_cq, ex);
}

static inline struct siw_qp *to_siw_qp(struct ibv_qp *qp)
{
	return siw_container_of(qp, struct siw_qp, base.qp);
}

static inline struct siw_qp *ex_to_siw_qp(struct ibv_qp_ex *qp)
{
	return siw_container_of(qp, struct siw_qp, base.qp_ex);
}

static inline struct siw_srq *to_siw_srq(struct ibv_srq *srq)
{
	return siw_container_of(srq, struct siw_srq, base);
}

/* Slot ownership: acquire on reading VALID, release on handing over. */
static inline uint16_t siw_slot_flags16(uint16_t *flags)
{
	return __atomic_load_n(flags, __ATOMIC_ACQUIRE);
}

static inline void siw_slot_give16(uint16_t *flags, uint16_t val)
{
	__atomic_store_n(flags, val, __ATOMIC_RELEASE);
}

/* Diagnostics (VERBS_LOG_LEVEL / VERBS_LOG_FILE, as rdma-core has them). */
enum {
	SIW_LOG_ERR = 1,
	SIW_LOG_WARN = 2,
	SIW_LOG_INFO = 3,
	SIW_LOG_DEBUG = 4,
};

void siw_log(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
#define siw_err(fmt, ...) siw_log(SIW_LOG_ERR, fmt, ##__VA_ARGS__)
#define siw_dbg(fmt, ...) siw_log(SIW_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* device.c */
int siw_query_device_ex(struct ibv_context *ctx,
			const struct ibv_query_device_ex_input *input,
			struct ibv_device_attr_ex *attr, size_t attr_size);
int siw_query_port(struct ibv_context *ctx, uint8_t port,
		   struct ibv_port_attr *attr);

/* pd_mr.c */
struct ibv_pd *siw_alloc_pd(struct ibv_context *ctx);
int siw_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *siw_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
			  uint64_t hca_va, int access);
int siw_dereg_mr(struct pabi_mr *mr);

/* cq.c */
struct ibv_cq *siw_create_cq(struct ibv_context *ctx, int cqe,
			     struct ibv_comp_channel *channel, int vector);
struct ibv_cq_ex *siw_create_cq_ex(struct ibv_context *ctx,
				   struct ibv_cq_init_attr_ex *attr);
int siw_destroy_cq(struct ibv_cq *cq);
int siw_poll_cq(struct ibv_cq *cq, int num, struct ibv_wc *wc);
int siw_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int siw_resize_cq(struct ibv_cq *cq, int cqe);

/* qp.c */
struct ibv_qp *siw_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *siw_create_qp_ex(struct ibv_context *ctx,
				struct ibv_qp_init_attr_ex *attr);
int siw_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask);
int siw_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask,
		 struct ibv_qp_init_attr *init);
int siw_destroy_qp(struct ibv_qp *qp);

/* post.c: the send and receive data path */
int siw_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int siw_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);
int siw_rq_post(pthread_spinlock_t *lock, struct siw_rqe *ring, uint32_t num,
		uint32_t *put, uint32_t max_sge, struct ibv_recv_wr *wr,
		struct ibv_recv_wr **bad_wr);
void siw_sq_doorbell(struct siw_qp *qp, uint32_t first);

/* qp_ex.c: ibv_wr_*() */
void siw_qp_ex_init(struct siw_qp *qp, uint64_t send_ops);

/* srq.c */
struct ibv_srq *siw_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr);
int siw_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int siw_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int siw_destroy_srq(struct ibv_srq *srq);
int siw_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

#endif /* LIBSIW_H */
