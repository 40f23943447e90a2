/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Work queue rings: the send queue (struct siw_sqe slots) and the receive
 * queue (struct siw_rqe slots) of a QP, the latter also being the ring of
 * an SRQ. The layout is the user ABI of <rdma/siw-abi.h>: a slot holds a
 * work request while SIW_WQE_VALID is set in its flags. Whoever posts
 * fills the slot and sets VALID last; siw clears the flags when it
 * consumes the slot, which hands it back.
 *
 * For user QPs and SRQs the ring is shared with the process, which may
 * rewrite any byte at any time. siw therefore never works on a shared
 * slot in place: it copies the slot out and checks the copy.
 */

#ifndef SIW_QUEUE_H
#define SIW_QUEUE_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

struct siw_sq {
	spinlock_t lock;		/* indices, flushing, the slots */
	struct siw_sqe *slot;		/* num entries */
	u32 num;			/* a power of two */
	u32 put;			/* next slot kernel post_send fills */
	u32 get;			/* oldest slot not consumed yet */
	bool flushing;			/* a flush is pushing completions */
	struct rdma_user_mmap_entry *mmap;	/* user rings only */
};

struct siw_rq {
	spinlock_t lock;		/* indices, flushing, the slots */
	struct siw_rqe *slot;		/* num entries */
	u32 num;			/* a power of two; 0: no ring */
	u32 put;			/* next slot kernel post_recv fills */
	u32 get;			/* oldest slot not consumed yet */
	bool flushing;			/* a flush is pushing completions */
	struct rdma_user_mmap_entry *mmap;	/* user rings only */
};

/*
 * Ring memory: zeroed, vmalloc_user() for user rings (@user) so it can be
 * mapped, vzalloc() otherwise. @num is rounded up to a power of two.
 */
int siw_sq_alloc(struct siw_sq *sq, u32 num, bool user);
int siw_rq_alloc(struct siw_rq *rq, u32 num, bool user);

/*
 * Offer a user ring to the process of @uctx; *@key is the mmap offset to
 * report. From then on the mmap entry owns the memory (mmap.h).
 */
int siw_sq_share(struct siw_sq *sq, struct ib_ucontext *uctx, u64 *key);
int siw_rq_share(struct siw_rq *rq, struct ib_ucontext *uctx, u64 *key);

/* Drop the ring: unshare it, or free it if it was never shared. */
void siw_sq_free(struct siw_sq *sq);
void siw_rq_free(struct siw_rq *rq);

/* Slot @i of a ring; indices run freely and wrap. */
static inline struct siw_sqe *siw_sq_slot(struct siw_sq *sq, u32 i)
{
	return &sq->slot[i & (sq->num - 1)];
}

static inline struct siw_rqe *siw_rq_slot(struct siw_rq *rq, u32 i)
{
	return &rq->slot[i & (rq->num - 1)];
}

/*
 * Ring access; the caller holds the ring's lock.
 *
 * peek copies the oldest slot out if it is VALID (false if not); nothing
 * in the copy is trusted before it was checked. consume hands the oldest
 * slot back to the producer. discard consumes every VALID slot without a
 * completion and says how many there were.
 */
bool siw_sq_peek_raw(struct siw_sq *sq, struct siw_sqe *sqe);
void siw_sq_consume_raw(struct siw_sq *sq);
u32 siw_sq_discard(struct siw_sq *sq);

bool siw_rq_peek(struct siw_rq *rq, struct siw_rqe *rqe);
void siw_rq_consume(struct siw_rq *rq);
u32 siw_rq_discard(struct siw_rq *rq);

/* VALID slots from the oldest on, counting at most @max. */
u32 siw_rq_posted(struct siw_rq *rq, u32 max);

/*
 * Check a copied RQE: SIW_WC_SUCCESS, or the status it completes with.
 * Sets the copy's opcode to SIW_OP_RECEIVE.
 */
enum siw_wc_status siw_rqe_check(struct siw_rqe *rqe);

/*
 * Write kernel receive WR @wr into the next free slot: -ENOMEM if the
 * ring is full, -EINVAL if it has more than @max_sge SGEs.
 */
int siw_rq_post(struct siw_rq *rq, const struct ib_recv_wr *wr, u32 max_sge);

/*
 * Move the posted WRs of a kernel ring into @new (allocated, empty) in
 * order, then swap the memory: @new gets the old ring to free. -ENOSPC if
 * they do not fit.
 */
int siw_rq_move(struct siw_rq *rq, struct siw_rq *new);

#endif /* SIW_QUEUE_H */
