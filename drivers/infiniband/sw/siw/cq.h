/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues. A CQ is a ring of struct siw_cqe followed by a struct
 * siw_cq_ctrl (see <rdma/siw-abi.h>); a slot belongs to the consumer while
 * SIW_WQE_VALID is set in its flags. User CQs share the ring with the
 * process, kernel CQs keep it in kernel memory.
 */

#ifndef SIW_CQ_H
#define SIW_CQ_H

#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "queue.h"

struct siw_cq {
	struct ib_cq base;		/* must stay first */

	/*
	 * CQEs, then the arm word (struct siw_cq_ctrl, the ring's tail);
	 * resize_cq swaps the memory. siw produces at put; get is where
	 * poll_cq reads (kernel CQs). ring.lock also guards overflowed.
	 */
	struct siw_ring ring;
	bool overflowed;		/* IB_EVENT_CQ_ERR was dispatched */

	u32 id;
	bool is_user;
};

static inline struct siw_cq *to_siw_cq(struct ib_cq *base)
{
	return container_of(base, struct siw_cq, base);
}

/* A work completion as the QP engine reports it. */
struct siw_wc {
	u64 id;
	u8 opcode;		/* enum siw_opcode */
	u16 status;		/* enum siw_wc_status */
	u32 bytes;
	u8 flags;		/* SIW_WQE_*, e.g. SIW_WQE_REM_INVAL */
	u32 inval_stag;
	u64 imm_data;
	struct ib_qp *qp;
};

/*
 * Add @wc to @cq and fire the completion handler if the CQ is armed for it
 * (@solicited matters for IB_CQ_SOLICITED). Any context, including
 * softirq. Returns 0, or -ENOSPC when the CQ is full: the completion is
 * dropped, IB_EVENT_CQ_ERR is dispatched (once per CQ) and the caller then
 * moves its QP to ERROR.
 */
int siw_cq_push(struct siw_cq *cq, const struct siw_wc *wc, bool solicited);

#endif /* SIW_CQ_H */
