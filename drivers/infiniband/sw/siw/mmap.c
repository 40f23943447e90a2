// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Mapping rings into processes.
 *
 * Each ring offered to a process gets an rdma_user_mmap_entry: the RDMA
 * core hands out its mmap offset and finds it again when the process
 * calls mmap() on the uverbs file. Rings are vmalloc_user() memory and are
 * mapped page by page with remap_vmalloc_range(), which takes a reference
 * on every page it maps. So the entry can be freed (and the ring vfree()d)
 * as soon as the object is destroyed: pages still mapped live on until the
 * process unmaps them or exits, and no siw code is attached to the
 * mapping, so it may even outlive the module.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/err.h>
#include <linux/error-injection.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "mmap.h"
#include "siw.h"

struct siw_mmap_entry {
	struct rdma_user_mmap_entry base;
	void *mem;			/* from vmalloc_user() */
};

static struct siw_mmap_entry *to_siw_mmap_entry(struct rdma_user_mmap_entry *e)
{
	return container_of(e, struct siw_mmap_entry, base);
}

/*
 * Stock libsiw takes the key SIW_INVAL_UOBJ_KEY for "no ring", so no ring
 * may start at that offset: entries go below it or, once that space is
 * taken, above it.
 */
#define SIW_MMAP_INVAL_PGOFF	(SIW_INVAL_UOBJ_KEY >> PAGE_SHIFT)

static int siw_mmap_insert(struct ib_ucontext *uctx,
			   struct rdma_user_mmap_entry *entry, size_t size)
{
	int err;

	BUILD_BUG_ON(SIW_INVAL_UOBJ_KEY % PAGE_SIZE);

	err = rdma_user_mmap_entry_insert_range(uctx, entry, size, 0,
						SIW_MMAP_INVAL_PGOFF - 1);
	if (err)
		err = rdma_user_mmap_entry_insert_range(uctx, entry, size,
							SIW_MMAP_INVAL_PGOFF + 1,
							U32_MAX);
	return err;
}

struct rdma_user_mmap_entry *siw_mmap_add(struct ib_ucontext *uctx,
					  void *vmalloc_user_mem, size_t size,
					  u64 *key)
{
	struct siw_mmap_entry *entry;
	int err;

	if (!vmalloc_user_mem || !size)
		return ERR_PTR(-EINVAL);

	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return ERR_PTR(-ENOMEM);

	entry->mem = vmalloc_user_mem;
	err = siw_mmap_insert(uctx, &entry->base, size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	*key = rdma_user_mmap_get_offset(&entry->base);
	return &entry->base;
}

ALLOW_ERROR_INJECTION(siw_mmap_add, ERRNO);

void siw_mmap_remove(struct rdma_user_mmap_entry *entry)
{
	if (!IS_ERR_OR_NULL(entry))
		rdma_user_mmap_entry_remove(entry);
}

/*
 * The core checks that the mapping is shared and exactly as long as the
 * entry (in pages), and that the entry was not removed yet.
 */
static int siw_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *entry;
	int err;

	entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!entry)
		return -EINVAL;

	err = remap_vmalloc_range(vma, to_siw_mmap_entry(entry)->mem, 0);
	rdma_user_mmap_entry_put(entry);
	return err;
}

/* Last reference to the entry gone: nobody can map the ring any more. */
static void siw_mmap_free(struct rdma_user_mmap_entry *base)
{
	struct siw_mmap_entry *entry = to_siw_mmap_entry(base);

	vfree(entry->mem);
	kfree(entry);
}

const struct ib_device_ops siw_mmap_ops = {
	.mmap = siw_mmap,
	.mmap_free = siw_mmap_free,
};
