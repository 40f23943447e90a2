/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings: one type for every queue of siw. The send queue (struct siw_sqe
 * slots), the receive queue of a QP or an SRQ (struct siw_rqe), the
 * completion queue (struct siw_cqe, cq.c) and the engine's own rings (its
 * sent WRs and the peer's Read Requests, tx.c) are each a struct
 * siw_ring: a power-of-two number of fixed-size slots and two free-running
 * indices, put for the producer and get for the consumer.
 *
 * Two ways to tell a full slot from an empty one:
 * - Work queues shared with a process (the user ABI of <rdma/siw-abi.h>,
 *   used for kernel QPs alike): a slot holds a work request while
 *   SIW_WQE_VALID is set in its flags. The producer fills the slot and
 *   sets VALID last; siw, the consumer, clears the flags once it has
 *   copied the slot out, which hands it back. The process owns put; siw
 *   trusts only what it reads in a slot's flags, and reads them once.
 *   (The CQ turns the roles around: siw produces, cq.c.)
 * - Kernel-only rings: put - get slots are full. Nobody else writes them.
 *
 * What to trust: a process may rewrite any byte of a shared ring at any
 * time. siw never works on a shared slot in place: it copies the slot out
 * (siw_wq_peek) and checks the copy. No index or size is ever read from
 * shared memory.
 */

#ifndef SIW_QUEUE_H
#define SIW_QUEUE_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

struct siw_ring {
	spinlock_t lock;		/* indices, flushing, the slots */
	void *mem;			/* num slots, then the ring's tail */
	u32 num;			/* a power of two; 0: no ring */
	u32 size;			/* bytes per slot */
	u32 tail;			/* bytes after the last slot */
	u32 put;			/* next slot the producer fills */
	u32 get;			/* oldest slot not consumed yet */
	bool flushing;			/* a flush is pushing completions */
	struct rdma_user_mmap_entry *mmap;	/* shared rings only */
};

/*
 * Ring memory: @num slots of @size bytes, rounded up to a power of two,
 * then @tail bytes (the CQ's arm word), zeroed. vmalloc_user() for a ring
 * that will be shared (@user) so it can be mapped, kvzalloc() otherwise.
 *
 * Each place that makes a ring gives its lock a lockdep class of its own:
 * the locks of different rings nest (completing a sent WR under the sent
 * ring's lock takes the CQ's), which one class would report as recursion.
 */
int __siw_ring_alloc(struct siw_ring *r, u32 num, size_t size, size_t tail,
		     bool user, struct lock_class_key *key, const char *name);

#define siw_ring_alloc(r, num, size, tail, user)			\
({									\
	static struct lock_class_key __key;				\
									\
	__siw_ring_alloc(r, num, size, tail, user, &__key, #r ".lock");	\
})

/*
 * Offer a user ring to the process of @uctx; *@key is the mmap offset to
 * report. From then on the mmap entry owns the memory (mmap.h).
 */
int siw_ring_share(struct siw_ring *r, struct ib_ucontext *uctx, u64 *key);

/*
 * Drop the ring's memory: unshare it, or free it if it was never shared.
 * The memory leaves the ring under its lock: "rdma res show" may look at
 * a QP that is being destroyed (restrack.c).
 */
void siw_ring_free(struct siw_ring *r);

/* Slot @i; indices run freely and wrap. */
static inline void *siw_ring_at(const struct siw_ring *r, u32 i)
{
	return r->mem + (size_t)(i & (r->num - 1)) * r->size;
}

/* What follows the last slot (the CQ's struct siw_cq_ctrl). */
static inline void *siw_ring_tail(const struct siw_ring *r)
{
	return r->mem + (size_t)r->num * r->size;
}

#define siw_sqe_at(r, i)	((struct siw_sqe *)siw_ring_at(r, i))
#define siw_rqe_at(r, i)	((struct siw_rqe *)siw_ring_at(r, i))
#define siw_cqe_at(r, i)	((struct siw_cqe *)siw_ring_at(r, i))

/* Kernel-only rings: full slots are those from get up to put. */
static inline u32 siw_ring_used(const struct siw_ring *r)
{
	return r->put - r->get;
}

static inline bool siw_ring_full(const struct siw_ring *r)
{
	return siw_ring_used(r) >= r->num;
}

/*
 * Move the slots from get up to put into @new (allocated, empty, maybe
 * shared) to its first slots in order, then swap the memory and its
 * mapping: @new gets the old ring to free. -ENOSPC if they do not fit.
 * The caller holds the ring's lock; the tail is the caller's to copy.
 */
int siw_ring_move(struct siw_ring *r, struct siw_ring *new);

/*
 * Work queues (SQ, RQ, SRQ), consumer side; the caller holds the lock.
 *
 * peek copies the oldest slot out if it is VALID (false if not); nothing
 * in the copy is trusted before it was checked. consume hands the oldest
 * slot back to the producer. discard consumes every VALID slot without a
 * completion and says how many there were. posted counts the VALID slots
 * from the oldest on, at most @max.
 */
bool siw_wq_peek(struct siw_ring *wq, void *wqe);
void siw_wq_consume(struct siw_ring *wq);
u32 siw_wq_discard(struct siw_ring *wq);
u32 siw_wq_posted(struct siw_ring *wq, u32 max);

/* discard, taking the lock; a running flush completes them instead. */
u32 siw_wq_drop(struct siw_ring *wq);

/*
 * Complete the VALID slots, oldest first, through @complete(@ctx, copy),
 * which runs without the lock held (a completion handler may post again:
 * what it adds, this flush picks up), at most @budget of them. One
 * flusher at a time owns the ring (flushing); another returns 0 at once.
 * Returns how many were completed. @wqe is room for one slot's copy.
 */
u32 siw_wq_flush(struct siw_ring *wq, u32 budget, void *wqe,
		 void (*complete)(void *ctx, const void *wqe), void *ctx);

/*
 * The SQ hands a slot back with a full barrier after it: libsiw rings the
 * doorbell only if the slot before its first new one is no longer VALID
 * (queue.c). Discard and flush do so for every work queue.
 */
void siw_sq_consume(struct siw_ring *sq);

/*
 * Do @num SGEs (a process wrote their lengths) add up to a message of at
 * most SIW_MAX_MSG_SIZE octets? Used by every work queue's check.
 */
bool siw_sges_len_ok(const struct siw_sge *sge, u32 num);

/*
 * Check a copied RQE: SIW_WC_SUCCESS, or the status it completes with.
 * Sets the copy's opcode to SIW_OP_RECEIVE.
 */
enum siw_wc_status siw_rqe_check(struct siw_rqe *rqe);

/*
 * Take the oldest RQE of @rq, checked, with its lock held: 0, -ENOENT if
 * there is none (or a flush owns the ring), -EINVAL if it was malformed
 * (it is consumed all the same).
 */
int siw_rq_take(struct siw_ring *rq, struct siw_rqe *rqe);

/*
 * Write kernel receive WR @wr into the next free slot: -ENOMEM if the
 * ring is full, -EINVAL if it has more than @max_sge SGEs.
 */
int siw_rq_post(struct siw_ring *rq, const struct ib_recv_wr *wr, u32 max_sge);

#endif /* SIW_QUEUE_H */
