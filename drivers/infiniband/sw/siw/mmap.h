/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Rings shared with userspace: vmalloc_user() memory that a process maps
 * through the mmap offset ("key") handed out in a create response.
 */

#ifndef SIW_MMAP_H
#define SIW_MMAP_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

/*
 * Offer @vmalloc_user_mem (@size bytes, from vmalloc_user()) to the process
 * of @uctx; *@key is the mmap offset to give it. On success the memory
 * belongs to the returned entry, and is released once siw_mmap_remove() was
 * called and the process has no mapping of it left. On failure an ERR_PTR
 * comes back and the memory is still the caller's.
 */
struct rdma_user_mmap_entry *siw_mmap_add(struct ib_ucontext *uctx,
					  void *vmalloc_user_mem, size_t size,
					  u64 *key);

/*
 * No new mappings of @entry; existing ones stay valid. The caller must not
 * touch the memory afterwards. NULL and ERR_PTR values are ignored.
 */
void siw_mmap_remove(struct rdma_user_mmap_entry *entry);

#endif /* SIW_MMAP_H */
