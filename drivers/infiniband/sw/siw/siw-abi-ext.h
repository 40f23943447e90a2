/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Extensions to the siw user ABI (version 1, <rdma/siw-abi.h>). Stock
 * libsiw never issues the commands these belong to, so they cannot change
 * what it sees. Documentation/abi.md describes how to use them.
 */

#ifndef SIW_ABI_EXT_H
#define SIW_ABI_EXT_H

#include <linux/types.h>

/*
 * Driver response to IB_USER_VERBS_CMD_RESIZE_CQ on a user CQ. The CQ now
 * lives in a new ring of num_cqe CQEs (a power of two, at least the size
 * asked for) plus struct siw_cq_ctrl, mapped at mmap offset cq_key.
 * Completions not yet consumed were moved to its first slots, in order;
 * the consumer continues at slot 0.
 */
struct siw_uresp_resize_cq {
	__u32 num_cqe;
	__u32 pad;
	__aligned_u64 cq_key;
};

#endif /* SIW_ABI_EXT_H */
