// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work queue rings: their memory, and taking entries in and out of them.
 *
 * A slot changes hands through its flags only. siw reads them once, with
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
#include <linux/overflow.h>
#include <linux/string.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "mmap.h"
#include "queue.h"
#include "siw.h"

static noinline void *siw_ring_alloc(u32 num, size_t slot_size, bool user)
{
	size_t size = array_size(num, slot_size);

	return user ? vmalloc_user(size) : vzalloc(size);
}

ALLOW_ERROR_INJECTION(siw_ring_alloc, NULL);

static u32 siw_ring_num(u32 num)
{
	return roundup_pow_of_two(max(num, 1U));
}

int siw_sq_alloc(struct siw_sq *sq, u32 num, bool user)
{
	memset(sq, 0, sizeof(*sq));
	spin_lock_init(&sq->lock);
	sq->num = siw_ring_num(num);
	sq->slot = siw_ring_alloc(sq->num, sizeof(*sq->slot), user);
	return sq->slot ? 0 : -ENOMEM;
}

int siw_rq_alloc(struct siw_rq *rq, u32 num, bool user)
{
	memset(rq, 0, sizeof(*rq));
	spin_lock_init(&rq->lock);
	rq->num = siw_ring_num(num);
	rq->slot = siw_ring_alloc(rq->num, sizeof(*rq->slot), user);
	return rq->slot ? 0 : -ENOMEM;
}

static int siw_ring_share(void *mem, size_t size, struct ib_ucontext *uctx,
			  struct rdma_user_mmap_entry **entry, u64 *key)
{
	struct rdma_user_mmap_entry *e = siw_mmap_add(uctx, mem, size, key);

	if (IS_ERR(e))
		return PTR_ERR(e);
	*entry = e;
	return 0;
}

int siw_sq_share(struct siw_sq *sq, struct ib_ucontext *uctx, u64 *key)
{
	return siw_ring_share(sq->slot, array_size(sq->num, sizeof(*sq->slot)),
			      uctx, &sq->mmap, key);
}

int siw_rq_share(struct siw_rq *rq, struct ib_ucontext *uctx, u64 *key)
{
	return siw_ring_share(rq->slot, array_size(rq->num, sizeof(*rq->slot)),
			      uctx, &rq->mmap, key);
}

/* A shared ring goes with its mmap entry, once the process unmapped it. */
static void siw_ring_free(void *mem, struct rdma_user_mmap_entry **entry)
{
	if (*entry)
		siw_mmap_remove(*entry);
	else
		vfree(mem);
	*entry = NULL;
}

/*
 * The ring leaves the SQ under its lock before it goes: "rdma res show"
 * may look at a QP that is being destroyed (restrack.c).
 */
void siw_sq_free(struct siw_sq *sq)
{
	struct rdma_user_mmap_entry *mmap;
	unsigned long flags;
	void *slot;

	spin_lock_irqsave(&sq->lock, flags);
	slot = sq->slot;
	mmap = sq->mmap;
	sq->slot = NULL;
	sq->mmap = NULL;
	spin_unlock_irqrestore(&sq->lock, flags);
	siw_ring_free(slot, &mmap);
}

void siw_rq_free(struct siw_rq *rq)
{
	struct rdma_user_mmap_entry *mmap;
	unsigned long flags;
	void *slot;

	spin_lock_irqsave(&rq->lock, flags);
	slot = rq->slot;
	mmap = rq->mmap;
	rq->slot = NULL;
	rq->mmap = NULL;
	spin_unlock_irqrestore(&rq->lock, flags);
	siw_ring_free(slot, &mmap);
}

bool siw_sq_peek_raw(struct siw_sq *sq, struct siw_sqe *sqe)
{
	struct siw_sqe *slot = siw_sq_slot(sq, sq->get);
	u16 flags;

	lockdep_assert_held(&sq->lock);

	/* Acquire: the slot is copied only after VALID was seen. */
	flags = smp_load_acquire(&slot->flags);
	if (!(flags & SIW_WQE_VALID))
		return false;
	memcpy(sqe, slot, sizeof(*sqe));
	sqe->flags = flags;
	return true;
}

/*
 * libsiw rings the doorbell only if the slot before its first new one is
 * no longer VALID. The full barrier orders clearing this slot before
 * reading the next one, as the process orders writing the next one
 * before reading this one: either it sees this slot free and rings, or
 * siw sees the next slot VALID and keeps going.
 */
void siw_sq_consume_raw(struct siw_sq *sq)
{
	lockdep_assert_held(&sq->lock);

	/* Release: the copy is complete before the slot is handed back. */
	smp_store_release(&siw_sq_slot(sq, sq->get)->flags, 0);
	sq->get++;
	/* Pairs with the process's barrier between post and doorbell test. */
	smp_mb();
}

u32 siw_sq_discard(struct siw_sq *sq)
{
	struct siw_sqe sqe;
	u32 n;

	for (n = 0; n < sq->num && siw_sq_peek_raw(sq, &sqe); n++)
		siw_sq_consume_raw(sq);
	return n;
}

bool siw_rq_peek(struct siw_rq *rq, struct siw_rqe *rqe)
{
	struct siw_rqe *slot = siw_rq_slot(rq, rq->get);
	u16 flags;

	lockdep_assert_held(&rq->lock);

	/* Acquire: the slot is copied only after VALID was seen. */
	flags = smp_load_acquire(&slot->flags);
	if (!(flags & SIW_WQE_VALID))
		return false;
	memcpy(rqe, slot, sizeof(*rqe));
	rqe->flags = flags;
	return true;
}

void siw_rq_consume(struct siw_rq *rq)
{
	lockdep_assert_held(&rq->lock);

	/* Release: the copy is complete before the slot is handed back. */
	smp_store_release(&siw_rq_slot(rq, rq->get)->flags, 0);
	rq->get++;
}

u32 siw_rq_discard(struct siw_rq *rq)
{
	struct siw_rqe rqe;
	u32 n;

	for (n = 0; n < rq->num && siw_rq_peek(rq, &rqe); n++)
		siw_rq_consume(rq);
	return n;
}

u32 siw_rq_posted(struct siw_rq *rq, u32 max)
{
	u32 n;

	max = min(max, rq->num);
	for (n = 0; n < max; n++)
		if (!(READ_ONCE(siw_rq_slot(rq, rq->get + n)->flags) &
		      SIW_WQE_VALID))
			break;
	return n;
}

/* Total length of @num SGEs: a message is at most SIW_MAX_MSG_SIZE. */
static bool siw_sges_len_ok(const struct siw_sge *sge, u32 num)
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

int siw_rq_post(struct siw_rq *rq, const struct ib_recv_wr *wr, u32 max_sge)
{
	struct siw_rqe *slot;
	int i;

	lockdep_assert_held(&rq->lock);

	if (wr->num_sge < 0 || (u32)wr->num_sge > max_sge)
		return -EINVAL;
	if (rq->put - rq->get >= rq->num)
		return -ENOMEM;

	slot = siw_rq_slot(rq, rq->put);
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

int siw_rq_move(struct siw_rq *rq, struct siw_rq *new)
{
	u32 n = rq->put - rq->get, i;

	lockdep_assert_held(&rq->lock);

	if (n > new->num)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		*siw_rq_slot(new, i) = *siw_rq_slot(rq, rq->get + i);
	new->put = n;
	new->get = 0;

	swap(rq->slot, new->slot);
	swap(rq->num, new->num);
	swap(rq->put, new->put);
	swap(rq->get, new->get);
	return 0;
}
