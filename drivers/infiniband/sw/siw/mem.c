// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The STag table of a device and the life of memory objects: creation,
 * lookup by STag, references, the two state changes a fast-reg MR goes
 * through (IB_WR_REG_MR and invalidation) and freeing.
 *
 * The table is an xarray indexed by STag index. Verbs change it, in
 * process context; the protocol engine only reads it, under RCU, from any
 * context. Objects are freed after an RCU grace period, so a lookup racing
 * with deregistration either gets a reference first or finds nothing.
 *
 * Unpinning user pages may sleep, but the last reference to a user MR can
 * be dropped by the engine in softirq context; such frees go to a work
 * item on the device's mem_wq, which device teardown drains.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "mem.h"
#include "siw.h"

/*
 * STag 0: kernel virtual addresses for local access by kernel PDs
 * (siw_mem_check() enforces both). One object serves every device; it is
 * never counted, never published in a table and never freed.
 */
static struct siw_mem siw_local_dma_mem = {
	.ref = KREF_INIT(1),
	.type = SIW_MEM_DMA,
	.lock = __SPIN_LOCK_UNLOCKED(siw_local_dma_mem.lock),
	.stag = SIW_LOCAL_DMA_STAG,
	.valid = true,
	.access = IB_ACCESS_LOCAL_WRITE,
	.iova = 0,
	.length = U64_MAX,
};

int siw_mem_table_init(struct siw_device *sdev)
{
	xa_init_flags(&sdev->mem_table, XA_FLAGS_ALLOC1);
	sdev->mem_wq = alloc_workqueue("siw_mem%u", WQ_UNBOUND, 0,
				       sdev->dev_id);
	return sdev->mem_wq ? 0 : -ENOMEM;
}

/*
 * Called when no object of the device can exist any more except through
 * a leak: waits for deferred frees, which drop their object counts.
 */
void siw_mem_table_destroy(struct siw_device *sdev)
{
	if (sdev->mem_wq) {
		destroy_workqueue(sdev->mem_wq);
		sdev->mem_wq = NULL;
	}
	xa_destroy(&sdev->mem_table);
}

/*
 * Access rights a registration may carry: the IB rule is that remote
 * write or remote atomic needs local write. Bits in IB_ACCESS_OPTIONAL
 * are hints that may be ignored; any other unknown bit is refused, and so
 * is on-demand paging.
 */
bool siw_access_ok(int access)
{
	const int known = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC |
			  IB_ACCESS_MW_BIND | IB_ZERO_BASED |
			  IB_ACCESS_HUGETLB | IB_ACCESS_OPTIONAL;
	const int needs_write = IB_ACCESS_REMOTE_WRITE |
				IB_ACCESS_REMOTE_ATOMIC;

	if (access & ~known)
		return false;
	if ((access & needs_write) && !(access & IB_ACCESS_LOCAL_WRITE))
		return false;
	return true;
}

/* Frees what the object holds; process context for user memory. */
static void siw_mem_free(struct siw_mem *mem)
{
	switch (mem->type) {
	case SIW_MEM_USER:
		kvfree(mem->user.pages);
		ib_umem_release(mem->user.umem);
		break;
	case SIW_MEM_FASTREG:
		kfree(mem->fr.addrs);
		break;
	default:
		break;
	}
	siw_obj_put(mem->sdev, SIW_OBJ_MR);
	kfree_rcu(mem, rcu);
}

static void siw_mem_free_work(struct work_struct *work)
{
	siw_mem_free(container_of(work, struct siw_mem, free_work));
}

/* Last reference dropped in any context. */
static void siw_mem_release(struct kref *ref)
{
	struct siw_mem *mem = container_of(ref, struct siw_mem, ref);

	if (mem->type == SIW_MEM_USER)
		queue_work(mem->sdev->mem_wq, &mem->free_work);
	else
		siw_mem_free(mem);
}

/* Last reference dropped by a verb, in process context. */
static void siw_mem_release_sync(struct kref *ref)
{
	siw_mem_free(container_of(ref, struct siw_mem, ref));
}

/*
 * Every STag index is drawn at random, and the kernel's own keys are
 * random too: a peer that learnt one STag learns nothing about the STags
 * of other MRs (a process chooses its keys, the ABI says so, and libsiw
 * always chooses 0). Should the table be that full, the lowest free
 * index. A NULL entry only reserves the index: lookups find nothing.
 */
#define SIW_STAG_INDEX_TRIES	16

static int siw_mem_reserve_index(struct siw_device *sdev, u32 *index)
{
	int i, err;

	for (i = 0; i < SIW_STAG_INDEX_TRIES; i++) {
		*index = get_random_u32_inclusive(1, SIW_STAG_INDEX_MAX);
		err = xa_insert(&sdev->mem_table, *index, NULL, GFP_KERNEL);
		if (err != -EBUSY)
			return err;
	}
	return xa_alloc(&sdev->mem_table, index, NULL,
			XA_LIMIT(1, SIW_STAG_INDEX_MAX), GFP_KERNEL);
}

/*
 * A new memory object of @type in @pd, counted against the device limit,
 * with a reserved STag made of a fresh index and @key. Not yet visible to
 * lookups: siw_mem_publish() does that once the object is complete. Undo
 * with siw_mem_destroy().
 */
struct siw_mem *siw_mem_create(struct siw_device *sdev, struct ib_pd *pd,
			       enum siw_mem_type type, int access, u8 key)
{
	struct siw_mem *mem;
	u32 index;
	int err;

	if (!siw_obj_get(sdev, SIW_OBJ_MR))
		return ERR_PTR(-ENOMEM);

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem) {
		siw_obj_put(sdev, SIW_OBJ_MR);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&mem->ref);
	spin_lock_init(&mem->lock);
	INIT_WORK(&mem->free_work, siw_mem_free_work);
	mem->sdev = sdev;
	mem->pd = pd;
	mem->type = type;
	mem->access = access;
	mem->zero_based = access & IB_ZERO_BASED;

	err = siw_mem_reserve_index(sdev, &index);
	if (err) {
		siw_mem_release_sync(&mem->ref);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}
	mem->stag = siw_stag_make(index, key);
	return mem;
}

ALLOW_ERROR_INJECTION(siw_mem_create, ERRNO);

u8 siw_mem_random_key(void)
{
	return get_random_u8();
}

/* Make a complete object visible to siw_mem_get(). */
int siw_mem_publish(struct siw_mem *mem)
{
	return xa_err(xa_store(&mem->sdev->mem_table,
			       siw_stag_index(mem->stag), mem, GFP_KERNEL));
}

/*
 * Deregistration: the STag stops resolving at once, and stops working for
 * the engine, which may hold a reference, once the object is invalid: no
 * octet is placed into it or framed from it after this returns. The
 * memory is freed when the engine drops its last reference, or now.
 */
void siw_mem_destroy(struct siw_mem *mem)
{
	spin_lock_bh(&mem->lock);
	mem->valid = false;
	spin_unlock_bh(&mem->lock);
	xa_erase(&mem->sdev->mem_table, siw_stag_index(mem->stag));
	kref_put(&mem->ref, siw_mem_release_sync);
}

struct siw_mem *siw_mem_get(struct siw_device *sdev, u32 stag)
{
	struct siw_mem *mem;

	if (!siw_stag_index(stag))
		return stag == SIW_LOCAL_DMA_STAG ? &siw_local_dma_mem : NULL;

	rcu_read_lock();
	mem = xa_load(&sdev->mem_table, siw_stag_index(stag));
	if (mem && (READ_ONCE(mem->stag) != stag ||
		    !kref_get_unless_zero(&mem->ref)))
		mem = NULL;
	rcu_read_unlock();
	return mem;
}

void siw_mem_put(struct siw_mem *mem)
{
	if (mem != &siw_local_dma_mem)
		kref_put(&mem->ref, siw_mem_release);
}

/*
 * Why IB_WR_REG_MR may not register what map_mr_sg mapped for @mr, an MR
 * of this device.
 */
static siw_mem_err_t siw_fastreg_refusal(struct siw_mem *mem,
					 struct ib_pd *pd, struct ib_mr *mr,
					 u32 new_key_stag, int access)
{
	u64 mapped;

	if (mem->type != SIW_MEM_FASTREG)
		return SIW_MEM_ERR_STATE;
	if (siw_stag_index(new_key_stag) != siw_stag_index(mem->stag))
		return SIW_MEM_ERR_STAG;
	if (mem->pd != pd)
		return SIW_MEM_ERR_PD;
	if (!siw_access_ok(access))
		return SIW_MEM_ERR_ACCESS;
	if (!mem->fr.map_npages)
		return SIW_MEM_ERR_STATE;

	mapped = (u64)mem->fr.map_npages << mem->fr.map_page_shift;
	if (mr->length > mapped - mem->fr.map_offset)
		return SIW_MEM_ERR_BOUNDS;
	if (mr->length && mr->iova > U64_MAX - (mr->length - 1))
		return SIW_MEM_ERR_WRAP;
	return SIW_MEM_OK;
}

siw_mem_err_t siw_mem_fastreg(struct siw_device *sdev, struct ib_pd *pd,
			      struct ib_mr *mr, u32 new_key_stag, int access)
{
	struct siw_mem *mem;
	siw_mem_err_t err;

	if (mr->device != &sdev->base)
		return SIW_MEM_ERR_STATE;
	mem = to_siw_mr(mr)->mem;
	err = siw_fastreg_refusal(mem, pd, mr, new_key_stag, access);
	if (err != SIW_MEM_OK)
		return err;

	spin_lock_bh(&mem->lock);
	if (mem->valid) {
		/* Only an invalid (free) MR can be registered. */
		err = SIW_MEM_ERR_STATE;
	} else {
		mem->access = access;
		mem->zero_based = access & IB_ZERO_BASED;
		WRITE_ONCE(mem->iova, mem->zero_based ? 0 : mr->iova);
		WRITE_ONCE(mem->length, mr->length);
		WRITE_ONCE(mem->fr.npages, mem->fr.map_npages);
		WRITE_ONCE(mem->fr.page_shift, mem->fr.map_page_shift);
		WRITE_ONCE(mem->fr.offset, mem->fr.map_offset);
		WRITE_ONCE(mem->stag, new_key_stag);
		mem->valid = true;
	}
	spin_unlock_bh(&mem->lock);
	return err;
}

siw_mem_err_t siw_mem_invalidate(struct siw_device *sdev, struct ib_pd *pd,
				 u32 stag)
{
	struct siw_mem *mem = siw_mem_get(sdev, stag);
	siw_mem_err_t err = SIW_MEM_OK;

	if (!mem)
		return SIW_MEM_ERR_STAG;

	if (siw_mem_is_local_dma(mem)) {
		err = SIW_MEM_ERR_STAG;
	} else if (mem->pd != pd) {
		err = SIW_MEM_ERR_PD;
	} else if (mem->type != SIW_MEM_FASTREG) {
		/* Only fast-reg MRs (and, later, memory windows). */
		err = SIW_MEM_ERR_CANNOT_INV;
	} else {
		/* Invalidating an invalid MR is allowed and changes nothing. */
		spin_lock_bh(&mem->lock);
		mem->valid = false;
		spin_unlock_bh(&mem->lock);
	}
	siw_mem_put(mem);
	return err;
}
