// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Rings: their memory, and taking entries in and out of them (queue.h).
 *
 * A work queue's slot changes hands through its flags only. siw reads them once, with
 * acquire semantics, before copying the rest of the slot out, and hands a
 * slot back by clearing them with release semantics after the copy. What
 * the copy holds is checked before use: the producer of a user ring is
 * the process, and it may have rewritten the slot during the copy.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/error-injection.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "mmap.h"
#include "queue.h"
#include "siw.h"

noinline int __siw_ring_alloc(struct siw_ring *r, u32 num, size_t size,
			      size_t tail, bool user, struct lock_class_key *key,
			      const char *name)
{
	size_t bytes;

	memset(r, 0, sizeof(*r));
	spin_lock_init(&r->lock);
	lockdep_set_class_and_name(&r->lock, key, name);
	r->num = roundup_pow_of_two(max(num, 1U));
	r->size = size;
	r->tail = tail;
	bytes = size_add(array_size(r->num, size), tail);
	r->mem = user ? vmalloc_user(bytes) : kvzalloc(bytes, GFP_KERNEL);
	return r->mem ? 0 : -ENOMEM;
}

ALLOW_ERROR_INJECTION(__siw_ring_alloc, ERRNO);

/* The slots and the tail: what a process maps. */
static size_t siw_ring_bytes(const struct siw_ring *r)
{
	return size_add(array_size(r->num, r->size), r->tail);
}

int siw_ring_share(struct siw_ring *r, struct ib_ucontext *uctx, u64 *key)
{
	struct rdma_user_mmap_entry *e;

	e = siw_mmap_add(uctx, r->mem, siw_ring_bytes(r), key);
	if (IS_ERR(e))
		return PTR_ERR(e);
	r->mmap = e;
	return 0;
}

/*
 * A shared ring goes with its mmap entry, once the process unmapped it.
 * A ring that has no memory (never made, or made to fail by error
 * injection before it was initialised) has nothing to free.
 */
void siw_ring_free(struct siw_ring *r)
{
	struct rdma_user_mmap_entry *mmap;
	unsigned long flags;
	void *mem;

	if (!READ_ONCE(r->mem) && !READ_ONCE(r->mmap))
		return;
	spin_lock_irqsave(&r->lock, flags);
	mem = r->mem;
	mmap = r->mmap;
	r->mem = NULL;
	r->mmap = NULL;
	spin_unlock_irqrestore(&r->lock, flags);
	if (mmap)
		siw_mmap_remove(mmap);
	else
		kvfree(mem);
}

int siw_ring_move(struct siw_ring *r, struct siw_ring *new)
{
	u32 n = siw_ring_used(r), i;

	lockdep_assert_held(&r->lock);

	if (n > new->num || new->size != r->size)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		memcpy(siw_ring_at(new, i), siw_ring_at(r, r->get + i), r->size);
	new->put = n;
	new->get = 0;

	swap(r->mem, new->mem);
	swap(r->mmap, new->mmap);
	swap(r->num, new->num);
	swap(r->put, new->put);
	swap(r->get, new->get);
	return 0;
}

/* SQEs and RQEs keep their flags at one place: one peek serves both. */
static_assert(offsetof(struct siw_sqe, flags) ==
	      offsetof(struct siw_rqe, flags));
static_assert(sizeof_field(struct siw_sqe, flags) == sizeof(u16));
static_assert(sizeof_field(struct siw_rqe, flags) == sizeof(u16));

static u16 *siw_wqe_flags(void *slot)
{
	return slot + offsetof(struct siw_sqe, flags);
}

bool siw_wq_peek(struct siw_ring *wq, void *wqe)
{
	void *slot = siw_ring_at(wq, wq->get);
	u16 flags;

	lockdep_assert_held(&wq->lock);

	/* Acquire: the slot is copied only after VALID was seen. */
	flags = smp_load_acquire(siw_wqe_flags(slot));
	if (!(flags & SIW_WQE_VALID))
		return false;
	memcpy(wqe, slot, wq->size);
	*siw_wqe_flags(wqe) = flags;
	return true;
}

void siw_wq_consume(struct siw_ring *wq)
{
	lockdep_assert_held(&wq->lock);

	/* Release: the copy is complete before the slot is handed back. */
	smp_store_release(siw_wqe_flags(siw_ring_at(wq, wq->get)), 0);
	wq->get++;
}

/*
 * libsiw rings the doorbell only if the slot before its first new one is
 * no longer VALID. The full barrier orders clearing this slot before
 * reading the next one, as the process orders writing the next one
 * before reading this one: either it sees this slot free and rings, or
 * siw sees the next slot VALID and keeps going. Discard and flush take
 * slots this way from any work queue: they are not on a fast path.
 */
void siw_sq_consume(struct siw_ring *sq)
{
	siw_wq_consume(sq);
	/* Pairs with the process's barrier between post and doorbell test. */
	smp_mb();
}

u32 siw_wq_discard(struct siw_ring *wq)
{
	union {
		struct siw_sqe sqe;
		struct siw_rqe rqe;
	} copy;
	u32 n;

	lockdep_assert_held(&wq->lock);

	if (WARN_ON_ONCE(wq->size > sizeof(copy)))
		return 0;
	for (n = 0; n < wq->num && siw_wq_peek(wq, &copy); n++)
		siw_sq_consume(wq);
	return n;
}

u32 siw_wq_drop(struct siw_ring *wq)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&wq->lock, flags);
	if (!wq->flushing)
		n = siw_wq_discard(wq);
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

u32 siw_wq_posted(struct siw_ring *wq, u32 max)
{
	u32 n;

	lockdep_assert_held(&wq->lock);

	max = min(max, wq->num);
	for (n = 0; n < max; n++)
		if (!(READ_ONCE(*siw_wqe_flags(siw_ring_at(wq, wq->get + n))) &
		      SIW_WQE_VALID))
			break;
	return n;
}

u32 siw_wq_flush(struct siw_ring *wq, u32 budget, void *wqe,
		 void (*complete)(void *ctx, const void *wqe), void *ctx)
{
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&wq->lock, flags);
	if (wq->flushing) {
		spin_unlock_irqrestore(&wq->lock, flags);
		return 0;
	}
	wq->flushing = true;
	while (n < budget && siw_wq_peek(wq, wqe)) {
		/*
		 * The slot goes back before its completion shows: a process
		 * that sees the completion may post into that slot at once.
		 */
		siw_sq_consume(wq);
		spin_unlock_irqrestore(&wq->lock, flags);
		complete(ctx, wqe);
		spin_lock_irqsave(&wq->lock, flags);
		n++;
	}
	wq->flushing = false;
	spin_unlock_irqrestore(&wq->lock, flags);
	return n;
}

bool siw_sges_len_ok(const struct siw_sge *sge, u32 num)
{
	u64 total = 0;
	u32 i;

	for (i = 0; i < num; i++)
		total += sge[i].length;
	return total <= SIW_MAX_MSG_SIZE;
}

enum siw_wc_status siw_rqe_check(struct siw_rqe *rqe)
{
	rqe->opcode = SIW_OP_RECEIVE;
	if (rqe->num_sge > SIW_MAX_SGE)
		return SIW_WC_LOC_QP_OP_ERR;
	if (!siw_sges_len_ok(rqe->sge, rqe->num_sge))
		return SIW_WC_LOC_LEN_ERR;
	return SIW_WC_SUCCESS;
}

int siw_rq_take(struct siw_ring *rq, struct siw_rqe *rqe)
{
	enum siw_wc_status status;

	lockdep_assert_held(&rq->lock);

	if (rq->flushing || !siw_wq_peek(rq, rqe))
		return -ENOENT;
	status = siw_rqe_check(rqe);
	siw_wq_consume(rq);
	return status == SIW_WC_SUCCESS ? 0 : -EINVAL;
}

int siw_rq_post(struct siw_ring *rq, const struct ib_recv_wr *wr, u32 max_sge)
{
	struct siw_rqe *slot;
	int i;

	lockdep_assert_held(&rq->lock);

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge)
		return -EINVAL;
	if (siw_ring_full(rq))
		return -ENOMEM;

	slot = siw_rqe_at(rq, rq->put);
	slot->id = wr->wr_id;
	slot->num_sge = wr->num_sge;
	slot->opcode = SIW_OP_RECEIVE;
	slot->unused = 0;
	for (i = 0; i < wr->num_sge; i++) {
		slot->sge[i].laddr = wr->sg_list[i].addr;
		slot->sge[i].length = wr->sg_list[i].length;
		slot->sge[i].lkey = wr->sg_list[i].lkey;
	}
	if (!siw_sges_len_ok(slot->sge, slot->num_sge))
		return -EINVAL;

	/* Release: the slot is filled before it reads VALID. */
	smp_store_release(&slot->flags, SIW_WQE_VALID);
	rq->put++;
	return 0;
}
