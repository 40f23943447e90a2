// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What the protocol engine does with a memory object it looked up: check
 * an access against the registration, reach the bytes of a range one page
 * piece at a time, and turn a failed check into a work completion status
 * or a Terminate error class.
 *
 * The data path reaches memory only through siw_mem_walk(), which checks
 * the access and visits the pages with the registration's lock held: an
 * invalidation, deregistration or fast-reg waits for a walk in progress,
 * and a walk after it is refused. So no octet goes into or comes out of
 * memory whose owner was told it is no longer reachable. Even so, every
 * page index is checked against the page list's capacity and every
 * kernel virtual address with virt_addr_valid().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/minmax.h>
#include <linux/mm.h>
#include <rdma/ib_verbs.h>

#include "mem.h"
#include "siw.h"

/* Is [addr, addr + len) inside [iova, iova + length)? Overflow-safe. */
static siw_mem_err_t siw_range_check(u64 iova, u64 length, u64 addr, u64 len)
{
	u64 off;

	if (!len)
		return SIW_MEM_OK;
	if (addr > U64_MAX - (len - 1))
		return SIW_MEM_ERR_WRAP;
	if (addr < iova)
		return SIW_MEM_ERR_BOUNDS;
	off = addr - iova;
	if (off >= length || len > length - off)
		return SIW_MEM_ERR_BOUNDS;
	return SIW_MEM_OK;
}

/* STag 0 exists for local access by kernel PDs only. */
static siw_mem_err_t siw_local_dma_check(struct ib_pd *pd, int ib_access,
					 u64 addr, u64 len)
{
	if (!pd || pd->uobject || (ib_access & ~IB_ACCESS_LOCAL_WRITE))
		return SIW_MEM_ERR_STAG;
	return siw_range_check(0, U64_MAX, addr, len);
}

static siw_mem_err_t siw_mem_check_locked(struct siw_mem *mem,
					  struct ib_pd *pd, int ib_access,
					  u64 addr, u64 len)
{
	lockdep_assert_held(&mem->lock);

	if (!mem->valid)
		return SIW_MEM_ERR_STAG;
	if (mem->pd != pd)
		return SIW_MEM_ERR_PD;
	if (ib_access & ~mem->access)
		return SIW_MEM_ERR_ACCESS;
	return siw_range_check(mem->iova, mem->length, addr, len);
}

siw_mem_err_t siw_mem_check(struct siw_mem *mem, struct ib_pd *pd,
			    int ib_access, u64 addr, u64 len)
{
	siw_mem_err_t err;

	if (siw_mem_is_local_dma(mem))
		return siw_local_dma_check(pd, ib_access, addr, len);

	spin_lock_bh(&mem->lock);
	err = siw_mem_check_locked(mem, pd, ib_access, addr, len);
	spin_unlock_bh(&mem->lock);
	return err;
}

/* A kernel virtual address in the direct map, up to its page's end. */
static siw_mem_err_t siw_piece_kva(u64 kva, u64 len,
				   struct siw_mem_piece *piece)
{
	const void *va = (const void *)(uintptr_t)kva;

	if (!virt_addr_valid(va))
		return SIW_MEM_ERR_BOUNDS;
	piece->page = virt_to_page(va);
	piece->offset = offset_in_page(kva);
	piece->len = min_t(u64, len, PAGE_SIZE - piece->offset);
	return SIW_MEM_OK;
}

static siw_mem_err_t siw_piece_user(struct siw_mem *mem, u64 addr, u64 len,
				    struct siw_mem_piece *piece)
{
	const struct siw_mem_user *user = &mem->user;
	u64 off, pos;

	/* A user MR's registration never changes: no lock needed. */
	if (addr < mem->iova || addr - mem->iova >= mem->length)
		return SIW_MEM_ERR_BOUNDS;
	off = addr - mem->iova;
	pos = off + user->offset;
	if (pos >> PAGE_SHIFT >= user->npages)
		return SIW_MEM_ERR_BOUNDS;

	piece->page = user->pages[pos >> PAGE_SHIFT];
	piece->offset = offset_in_page(pos);
	piece->len = min3(len, mem->length - off,
			  (u64)(PAGE_SIZE - piece->offset));
	return SIW_MEM_OK;
}

static siw_mem_err_t siw_piece_fastreg(struct siw_mem *mem, u64 addr,
				       u64 len, struct siw_mem_piece *piece)
{
	const struct siw_mem_fastreg *fr = &mem->fr;
	u64 iova = READ_ONCE(mem->iova);
	u64 length = READ_ONCE(mem->length);
	unsigned int npages = min(READ_ONCE(fr->npages), fr->max_pages);
	unsigned int shift = READ_ONCE(fr->page_shift);
	u64 off, pos, in_page, idx;

	if (addr < iova || addr - iova >= length)
		return SIW_MEM_ERR_BOUNDS;
	off = addr - iova;
	pos = off + READ_ONCE(fr->offset);
	idx = pos >> shift;
	if (pos < off || idx >= npages)
		return SIW_MEM_ERR_BOUNDS;

	in_page = pos & ((1ULL << shift) - 1);
	len = min3(len, length - off, (1ULL << shift) - in_page);
	return siw_piece_kva(READ_ONCE(fr->addrs[idx]) + in_page, len, piece);
}

/*
 * The first piece of [addr, addr + len) of @mem (len > 0), a range that
 * was checked: advance addr and len by piece->len for the next.
 */
static siw_mem_err_t siw_mem_piece(struct siw_mem *mem, u64 addr, u64 len,
				   struct siw_mem_piece *piece)
{
	switch (mem->type) {
	case SIW_MEM_DMA:
		/* STag 0 and DMA MRs: addresses are kernel virtual ones. */
		return siw_piece_kva(addr, len, piece);
	case SIW_MEM_USER:
		return siw_piece_user(mem, addr, len, piece);
	case SIW_MEM_FASTREG:
		return siw_piece_fastreg(mem, addr, len, piece);
	default:
		return SIW_MEM_ERR_BOUNDS;
	}
}

/* Hand [addr, addr + len) of @mem to @fn piece by piece, until it says stop. */
static siw_mem_err_t siw_mem_walk_pieces(struct siw_mem *mem, u64 addr,
					 u64 len, siw_mem_piece_fn fn,
					 void *arg)
{
	struct siw_mem_piece piece;
	siw_mem_err_t err;

	while (len) {
		err = siw_mem_piece(mem, addr, len, &piece);
		if (err != SIW_MEM_OK)
			return err;
		if (!fn(&piece, arg))
			break;
		addr += piece.len;
		len -= piece.len;
	}
	return SIW_MEM_OK;
}

/* The same for a registration that can change: held still by its lock. */
static siw_mem_err_t siw_mem_walk_locked(struct siw_mem *mem, u64 addr,
					 u64 len, siw_mem_piece_fn fn,
					 void *arg)
{
	lockdep_assert_held(&mem->lock);
	return siw_mem_walk_pieces(mem, addr, len, fn, arg);
}

siw_mem_err_t siw_mem_walk(struct siw_mem *mem, u32 stag, struct ib_pd *pd,
			   int ib_access, u64 addr, u64 len, siw_mem_piece_fn fn,
			   void *arg)
{
	siw_mem_err_t err;

	/* STag 0 never changes: there is nothing to hold still. */
	if (siw_mem_is_local_dma(mem)) {
		if (stag != SIW_LOCAL_DMA_STAG)
			return SIW_MEM_ERR_STAG;
		err = siw_local_dma_check(pd, ib_access, addr, len);
		if (err == SIW_MEM_OK)
			err = siw_mem_walk_pieces(mem, addr, len, fn, arg);
		return err;
	}

	spin_lock_bh(&mem->lock);
	err = mem->stag != stag ? SIW_MEM_ERR_STAG :
	      siw_mem_check_locked(mem, pd, ib_access, addr, len);
	if (err == SIW_MEM_OK)
		err = siw_mem_walk_locked(mem, addr, len, fn, arg);
	spin_unlock_bh(&mem->lock);
	return err;
}

/*
 * A check of a local STag (an SGE of a work request) failed: the IB
 * "local protection error" for anything about the STag or the range, a
 * "local QP operation error" for a fast-reg or invalidation the MR cannot
 * take.
 */
enum siw_wc_status siw_mem_wc_status(siw_mem_err_t err)
{
	if (err == SIW_MEM_OK)
		return SIW_WC_SUCCESS;
	if (err == SIW_MEM_ERR_CANNOT_INV || err == SIW_MEM_ERR_STATE)
		return SIW_WC_LOC_QP_OP_ERR;
	return SIW_WC_LOC_PROT_ERR;
}

/* Table indices of the errors, the values of siw_mem_err_t. */
enum {
	SIW_MEM_IDX_STAG = 1,
	SIW_MEM_IDX_PD,
	SIW_MEM_IDX_ACCESS,
	SIW_MEM_IDX_BOUNDS,
	SIW_MEM_IDX_WRAP,
	SIW_MEM_IDX_CANNOT_INV,
	SIW_MEM_IDX_STATE,
};

static unsigned int siw_mem_err_index(siw_mem_err_t err)
{
	return (__force unsigned int)err;
}

static_assert((__force unsigned int)SIW_MEM_ERR_STAG == SIW_MEM_IDX_STAG);
static_assert((__force unsigned int)SIW_MEM_ERR_STATE == SIW_MEM_IDX_STATE);
static_assert(SIW_MEM_IDX_STATE + 1 == SIW_MEM_NR_ERR);

/* RFC 5041 section 7.2: errors in tagged placement are DDP errors... */
static const struct siw_term_code siw_mem_term_tagged[SIW_MEM_NR_ERR] = {
	[SIW_MEM_IDX_STAG] = SIW_TERM(DDP, DDP_TAGGED, DDP_T_INVALID_STAG),
	[SIW_MEM_IDX_PD] = SIW_TERM(DDP, DDP_TAGGED, DDP_T_STAG_NOT_ASSOC),
	/* ...except access rights, which DDP does not know (RFC 5040). */
	[SIW_MEM_IDX_ACCESS] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
					RDMAP_ACCESS),
	[SIW_MEM_IDX_BOUNDS] = SIW_TERM(DDP, DDP_TAGGED, DDP_T_BASE_BOUNDS),
	[SIW_MEM_IDX_WRAP] = SIW_TERM(DDP, DDP_TAGGED, DDP_T_TO_WRAP),
	[SIW_MEM_IDX_CANNOT_INV] = SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
					    RDMAP_CANNOT_INV),
	[SIW_MEM_IDX_STATE] = SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
				       RDMAP_UNSPECIFIED),
};

/* RFC 5040 section 7.2: RDMAP checks the Read source and invalidation. */
static const struct siw_term_code siw_mem_term_rdmap[SIW_MEM_NR_ERR] = {
	[SIW_MEM_IDX_STAG] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
				      RDMAP_INVALID_STAG),
	[SIW_MEM_IDX_PD] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
				    RDMAP_STAG_NOT_ASSOC),
	[SIW_MEM_IDX_ACCESS] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
					RDMAP_ACCESS),
	[SIW_MEM_IDX_BOUNDS] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
					RDMAP_BASE_BOUNDS),
	[SIW_MEM_IDX_WRAP] = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
				      RDMAP_TO_WRAP),
	[SIW_MEM_IDX_CANNOT_INV] = SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
					    RDMAP_CANNOT_INV),
	[SIW_MEM_IDX_STATE] = SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
				       RDMAP_UNSPECIFIED),
};

void siw_mem_term_code(siw_mem_err_t err, bool tagged,
		       struct siw_term_code *tc)
{
	static const struct siw_term_code unknown =
		SIW_TERM(RDMAP, RDMAP_REMOTE_OP, RDMAP_UNSPECIFIED);
	unsigned int e = siw_mem_err_index(err);

	if (!e || e >= SIW_MEM_NR_ERR)
		*tc = unknown;
	else if (tagged)
		*tc = siw_mem_term_tagged[e];
	else
		*tc = siw_mem_term_rdmap[e];
}

static const char * const siw_mem_err_words[SIW_MEM_NR_ERR] = {
	[SIW_MEM_IDX_STAG] = "no such STag, or it was invalidated",
	[SIW_MEM_IDX_PD] = "the STag belongs to another protection domain",
	[SIW_MEM_IDX_ACCESS] = "the memory region does not grant that access",
	[SIW_MEM_IDX_BOUNDS] = "the range is outside the memory region",
	[SIW_MEM_IDX_WRAP] = "the range wraps around the address space",
	[SIW_MEM_IDX_CANNOT_INV] = "the STag cannot be invalidated",
	[SIW_MEM_IDX_STATE] = "the memory region is in the wrong state",
};

const char *siw_mem_err_str(siw_mem_err_t err)
{
	unsigned int e = siw_mem_err_index(err);

	if (!e)
		return "no error";
	if (e >= SIW_MEM_NR_ERR)
		return "unknown memory error";
	return siw_mem_err_words[e];
}
