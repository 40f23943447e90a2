// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory region verbs: DMA MRs for kernel users, user MRs over pinned
 * pages, fast-reg MRs and their page lists, deregistration. The STag of
 * an MR is both its lkey and its rkey.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "mem.h"
#include "siw.h"

/* Hand the complete @mem to lookups and to the core as @mr. */
static struct ib_mr *siw_mr_publish(struct siw_mr *mr, struct siw_mem *mem)
{
	int err = siw_mem_publish(mem);

	if (err) {
		siw_mem_destroy(mem);
		kfree(mr);
		return ERR_PTR(err);
	}
	mr->mem = mem;
	mr->base.lkey = mem->stag;
	mr->base.rkey = mem->stag;
	return &mr->base;
}

/*
 * All of kernel virtual memory; only kernel users can ask for it. Local
 * write is implied: the core asks for remote rights alone when it makes
 * a PD's unsafe global rkey.
 */
static struct ib_mr *siw_get_dma_mr(struct ib_pd *pd, int access)
{
	struct siw_device *sdev = to_siw_device(pd->device);
	struct siw_mem *mem;
	struct siw_mr *mr;

	access |= IB_ACCESS_LOCAL_WRITE;
	if (!siw_access_ok(access) || (access & IB_ZERO_BASED))
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mem = siw_mem_create(sdev, pd, SIW_MEM_DMA, access,
			     siw_mem_random_key());
	if (IS_ERR(mem)) {
		kfree(mr);
		return ERR_CAST(mem);
	}
	mem->iova = 0;
	mem->length = U64_MAX;
	mem->valid = true;
	return siw_mr_publish(mr, mem);
}

/*
 * Pin [start, start + len) and list its pages. ib_umem_get() charges the
 * pages to the caller's RLIMIT_MEMLOCK (unless CAP_IPC_LOCK) and fails
 * with its own errno beyond it.
 */
static noinline int siw_mem_pin(struct siw_mem *mem, u64 start, u64 len,
				int access)
{
	struct siw_mem_user *user = &mem->user;
	struct sg_page_iter iter;
	unsigned long n = 0;

	user->umem = ib_umem_get(&mem->sdev->base, start, len, access);
	if (IS_ERR(user->umem)) {
		int err = PTR_ERR(user->umem);

		user->umem = NULL;
		return err;
	}

	user->npages = ib_umem_num_pages(user->umem);
	/* kvmalloc() refuses (loudly) sizes above INT_MAX. */
	if (user->npages > INT_MAX / sizeof(*user->pages))
		return -ENOMEM;
	user->pages = kvcalloc(user->npages, sizeof(*user->pages),
			       GFP_KERNEL);
	if (!user->pages)
		return -ENOMEM;

	for_each_sgtable_page(&user->umem->sgt_append.sgt, &iter, 0) {
		if (n == user->npages)
			return -EFAULT;
		user->pages[n++] = sg_page_iter_page(&iter);
	}
	if (n != user->npages)
		return -EFAULT;
	user->offset = ib_umem_offset(user->umem);
	return 0;
}

ALLOW_ERROR_INJECTION(siw_mem_pin, ERRNO);

static struct ib_mr *siw_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				     u64 virt_addr, int access,
				     struct ib_udata *udata)
{
	struct siw_device *sdev = to_siw_device(pd->device);
	struct siw_uresp_reg_mr uresp = {};
	struct siw_ureq_reg_mr ureq;
	struct siw_mem *mem;
	struct siw_mr *mr;
	int err;

	if (!udata || udata->inlen < sizeof(ureq) ||
	    udata->outlen < sizeof(uresp))
		return ERR_PTR(-EINVAL);
	if (!len || !siw_access_ok(access))
		return ERR_PTR(-EINVAL);
	err = ib_copy_from_udata(&ureq, udata, sizeof(ureq));
	if (err)
		return ERR_PTR(err);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mem = siw_mem_create(sdev, pd, SIW_MEM_USER, access, ureq.stag_key);
	if (IS_ERR(mem)) {
		kfree(mr);
		return ERR_CAST(mem);
	}

	err = siw_mem_pin(mem, start, len, access);
	if (err)
		goto fail;
	mem->iova = mem->zero_based ? 0 : virt_addr;
	mem->length = len;
	mem->valid = true;

	uresp.stag = mem->stag;
	err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (err)
		goto fail;
	return siw_mr_publish(mr, mem);

fail:
	siw_mem_destroy(mem);
	kfree(mr);
	return ERR_PTR(err);
}

/* A fast-reg MR: invalid until an IB_WR_REG_MR registers its page list. */
static struct ib_mr *siw_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
				  u32 max_num_sg)
{
	struct siw_device *sdev = to_siw_device(pd->device);
	struct siw_mem *mem;
	struct siw_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SIW_MAX_FR_PAGES)
		return ERR_PTR(-EINVAL);

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mem = siw_mem_create(sdev, pd, SIW_MEM_FASTREG, 0,
			     siw_mem_random_key());
	if (IS_ERR(mem)) {
		kfree(mr);
		return ERR_CAST(mem);
	}

	mem->fr.addrs = kcalloc(max_num_sg, sizeof(*mem->fr.addrs),
				GFP_KERNEL);
	if (!mem->fr.addrs) {
		siw_mem_destroy(mem);
		kfree(mr);
		return ERR_PTR(-ENOMEM);
	}
	mem->fr.max_pages = max_num_sg;
	return siw_mr_publish(mr, mem);
}

/* ib_sg_to_pages() callback: @addr is a kernel virtual address. */
static int siw_set_page(struct ib_mr *base, u64 addr)
{
	struct siw_mem_fastreg *fr = &to_siw_mr(base)->mem->fr;

	if (fr->map_npages >= fr->max_pages)
		return -ENOMEM;
	WRITE_ONCE(fr->addrs[fr->map_npages], addr);
	fr->map_npages++;
	return 0;
}

static int siw_map_mr_sg(struct ib_mr *base, struct scatterlist *sg,
			 int sg_nents, unsigned int *sg_offset)
{
	struct siw_mem_fastreg *fr = &to_siw_mr(base)->mem->fr;
	int n;

	fr->map_npages = 0;
	fr->map_offset = 0;
	if (!is_power_of_2(base->page_size))
		return -EINVAL;
	fr->map_page_shift = ilog2(base->page_size);

	n = ib_sg_to_pages(base, sg, sg_nents, sg_offset, siw_set_page);
	if (fr->map_npages)
		fr->map_offset = base->iova - fr->addrs[0];
	return n;
}

static int siw_dereg_mr(struct ib_mr *base, struct ib_udata *udata)
{
	struct siw_mr *mr = to_siw_mr(base);

	siw_mem_destroy(mr->mem);
	kfree(mr);
	return 0;
}

const struct ib_device_ops siw_mr_ops = {
	.alloc_mr = siw_alloc_mr,
	.dereg_mr = siw_dereg_mr,
	.get_dma_mr = siw_get_dma_mr,
	.map_mr_sg = siw_map_mr_sg,
	.reg_user_mr = siw_reg_user_mr,
};
