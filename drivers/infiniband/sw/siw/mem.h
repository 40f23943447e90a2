/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory objects and their STags: what the verbs register (mr.c) and what
 * the protocol engine looks up, checks and reads or writes (mem.c,
 * mem_access.c).
 *
 * An STag is a 24-bit index into the device's STag table and an 8-bit
 * consumer key: stag = index << 8 | key. Index 0 is never allocated; STag 0
 * is the privileged local STag of kernel users (ib_pd.local_dma_lkey),
 * which reaches kernel virtual addresses and only for local access by a
 * kernel PD.
 */

#ifndef SIW_MEM_H
#define SIW_MEM_H

#include <linux/kref.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "siw.h"
#include "proto/wire.h"

#define SIW_STAG_KEY_BITS	8
#define SIW_STAG_KEY_MASK	0xffU
#define SIW_STAG_INDEX_MAX	0xffffffU
#define SIW_LOCAL_DMA_STAG	0U

static inline u32 siw_stag_index(u32 stag)
{
	return stag >> SIW_STAG_KEY_BITS;
}

static inline u32 siw_stag_make(u32 index, u8 key)
{
	return index << SIW_STAG_KEY_BITS | key;
}

enum siw_mem_type {
	SIW_MEM_DMA,		/* kernel virtual addresses (STag 0, DMA MR) */
	SIW_MEM_USER,		/* pinned user pages (reg_user_mr) */
	SIW_MEM_FASTREG,	/* kernel page list (alloc_mr, IB_WR_REG_MR) */
	SIW_MEM_MW,		/* memory window: reserved, not implemented */
};

/* Pinned user memory: one page pointer per PAGE_SIZE page. */
struct siw_mem_user {
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	unsigned int offset;	/* of the first byte in pages[0] */
};

/*
 * Fast-register page list. map_mr_sg fills addrs[] (kernel virtual
 * addresses, siw having no DMA device) and the map_* fields; IB_WR_REG_MR
 * copies the mapping into the registered fields, which the data path uses.
 */
struct siw_mem_fastreg {
	u64 *addrs;
	unsigned int max_pages;		/* capacity of addrs[] */

	unsigned int map_npages;	/* set by map_mr_sg */
	unsigned int map_page_shift;
	u64 map_offset;			/* of mr->iova in addrs[0]'s page */

	unsigned int npages;		/* set by IB_WR_REG_MR */
	unsigned int page_shift;
	u64 offset;
};

/*
 * A registered memory object. It is reference counted: the STag table
 * holds one reference from registration until deregistration, and every
 * siw_mem_get() one more. Deregistration removes the STag from lookup at
 * once; the memory goes when the last reference does.
 */
struct siw_mem {
	struct kref ref;
	struct siw_device *sdev;	/* NULL for the static STag 0 object */
	enum siw_mem_type type;
	/* Owning PD; only compared, never dereferenced. NULL for STag 0. */
	struct ib_pd *pd;

	/*
	 * The registration; lock (bottom halves off) guards it against
	 * fast-reg, invalidation and deregistration, and holds it still
	 * while the data path reaches the memory (siw_mem_walk()).
	 */
	spinlock_t lock;
	u32 stag;		/* changes its key at fast-reg */
	bool valid;		/* fast-reg MRs start invalid */
	bool zero_based;	/* IB_ZERO_BASED: addresses start at 0 */
	int access;		/* IB_ACCESS_* */
	u64 iova;		/* address of the first byte */
	u64 length;

	union {
		struct siw_mem_user user;	/* SIW_MEM_USER */
		struct siw_mem_fastreg fr;	/* SIW_MEM_FASTREG */
	};

	struct work_struct free_work;	/* unpinning user memory may sleep */
	struct rcu_head rcu;		/* lookups run under RCU only */
};

/* The verbs' MR: deregistration frees it, the siw_mem may live on. */
struct siw_mr {
	struct ib_mr base;
	struct siw_mem *mem;
};

static inline struct siw_mr *to_siw_mr(struct ib_mr *base)
{
	return container_of(base, struct siw_mr, base);
}

/* STag 0, the kernel's local DMA STag. Its index never changes. */
static inline bool siw_mem_is_local_dma(const struct siw_mem *mem)
{
	return !siw_stag_index(READ_ONCE(mem->stag));
}

/*
 * Why an access check, fast-reg or invalidation failed. This is a type of
 * its own, not an errno: sparse refuses to mix it with an int, so it can
 * never be negated into an errno and read back as one (-ENOENT once meant
 * both "STag of another PD" and "nothing to send"). SIW_MEM_OK is 0.
 * siw_mem_wc_status() and siw_mem_term_code() translate the others for a
 * work completion and for a Terminate message, siw_mem_err_str() for the
 * log.
 */
typedef unsigned int __bitwise siw_mem_err_t;

#define SIW_MEM_OK		((__force siw_mem_err_t)0)
/* no such STag, wrong key, or invalid */
#define SIW_MEM_ERR_STAG	((__force siw_mem_err_t)1)
/* STag of another protection domain */
#define SIW_MEM_ERR_PD		((__force siw_mem_err_t)2)
/* access rights do not allow the operation */
#define SIW_MEM_ERR_ACCESS	((__force siw_mem_err_t)3)
/* range outside the registration */
#define SIW_MEM_ERR_BOUNDS	((__force siw_mem_err_t)4)
/* addr + len wraps around 2^64 */
#define SIW_MEM_ERR_WRAP	((__force siw_mem_err_t)5)
/* STag can not be invalidated */
#define SIW_MEM_ERR_CANNOT_INV	((__force siw_mem_err_t)6)
/* fast-reg of a non fast-reg or valid MR */
#define SIW_MEM_ERR_STATE	((__force siw_mem_err_t)7)
#define SIW_MEM_NR_ERR		8

/* One page's piece of a memory range, for the data path. */
struct siw_mem_piece {
	struct page *page;
	unsigned int offset;	/* in page */
	unsigned int len;	/* never past the end of page */
};

/* mem.c: the STag table and memory object lifetime. */
int siw_mem_table_init(struct siw_device *sdev);
void siw_mem_table_destroy(struct siw_device *sdev);
bool siw_access_ok(int access);
struct siw_mem *siw_mem_create(struct siw_device *sdev, struct ib_pd *pd,
			       enum siw_mem_type type, int access, u8 key);
u8 siw_mem_random_key(void);
int siw_mem_publish(struct siw_mem *mem);
void siw_mem_destroy(struct siw_mem *mem);

/*
 * Look up @stag (index and key must match) and take a reference, or
 * return NULL. Any context; the reference is dropped with siw_mem_put(),
 * also from any context.
 */
struct siw_mem *siw_mem_get(struct siw_device *sdev, u32 stag);
void siw_mem_put(struct siw_mem *mem);

/*
 * Execute IB_WR_REG_MR of @mr on a QP of @pd: @new_key_stag is the STag
 * with its new key, @access the IB_ACCESS_* rights.
 */
siw_mem_err_t siw_mem_fastreg(struct siw_device *sdev, struct ib_pd *pd,
			      struct ib_mr *mr, u32 new_key_stag, int access);
/*
 * Local Invalidate, or remote (Send with Invalidate). Once it returned, no
 * placement into the MR and no framing from it happens any more: both
 * run under mem->lock, see siw_mem_lock_range().
 */
siw_mem_err_t siw_mem_invalidate(struct siw_device *sdev, struct ib_pd *pd,
				 u32 stag);

/* mem_access.c: checks and the data path. */

/*
 * May a QP of @pd access [addr, addr + len) of @mem with @ib_access
 * (0 for local read, else IB_ACCESS_LOCAL_WRITE, IB_ACCESS_REMOTE_READ or
 * IB_ACCESS_REMOTE_WRITE)? A check at the start of a message: the
 * registration may change right after it.
 */
siw_mem_err_t siw_mem_check(struct siw_mem *mem, struct ib_pd *pd,
			    int ib_access, u64 addr, u64 len);

/*
 * Called by siw_mem_walk() for each page piece of a range in turn; false
 * stops the walk.
 */
typedef bool (*siw_mem_piece_fn)(const struct siw_mem_piece *piece,
				 void *arg);

/*
 * Check as siw_mem_check() does, and that @mem still carries @stag (the
 * STag it was looked up by: a fast-reg MR changes its key when it is
 * registered again), then call @fn for each page piece of [addr, addr +
 * len), holding the registration still all along: no invalidation,
 * deregistration or fast-reg completes in between. The data path reaches
 * the octets of a range only so: once an invalidation returned, nothing is
 * placed into or framed from the memory it covered. @fn runs under a
 * spinlock with bottom halves off; a walk should cover a few pages at
 * most. Returns the check's verdict; a walk @fn stopped is SIW_MEM_OK.
 */
siw_mem_err_t siw_mem_walk(struct siw_mem *mem, u32 stag, struct ib_pd *pd,
			   int ib_access, u64 addr, u64 len, siw_mem_piece_fn fn,
			   void *arg);

/* Does @mem hold kernel memory that only its owner keeps alive? */
static inline bool siw_mem_is_kernel(const struct siw_mem *mem)
{
	return mem->type == SIW_MEM_DMA || mem->type == SIW_MEM_FASTREG;
}

/* Work completion status for a failed check of a local STag. */
enum siw_wc_status siw_mem_wc_status(siw_mem_err_t err);
/*
 * Terminate error class for a failed check of the peer's STag: @tagged
 * for tagged placement (RDMA Write, Read Response: DDP errors), else an
 * RDMAP error (Read Request source, Send with Invalidate).
 */
void siw_mem_term_code(siw_mem_err_t err, bool tagged,
		       struct siw_term_code *tc);
/* What went wrong, in words, for a log line. */
const char *siw_mem_err_str(siw_mem_err_t err);

#endif /* SIW_MEM_H */
