/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues: one ring of struct siw_rqe (queue.h) that any
 * number of QPs take receive WRs from, plus the limit event.
 */

#ifndef SIW_SRQ_H
#define SIW_SRQ_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "queue.h"

struct siw_srq {
	struct ib_srq base;		/* must stay first */
	struct siw_ring rq;		/* rq.lock also guards limit */
	u32 max_sge;
	u32 limit;			/* armed while non-zero */
	bool user;			/* ring shared with a process */
};

static inline struct siw_srq *to_siw_srq(struct ib_srq *base)
{
	return container_of(base, struct siw_srq, base);
}

/*
 * Take the oldest receive WR of @srq into *@rqe. Returns 0 (the caller
 * owns the copy), -ENOENT (none posted) or -EINVAL (malformed: *@rqe
 * holds its id, the caller completes it with an error). If this leaves
 * fewer WRs posted than an armed limit, IB_EVENT_SRQ_LIMIT_REACHED fires
 * and the limit disarms. Any context.
 */
int siw_srq_get_rqe(struct siw_srq *srq, struct siw_rqe *rqe);

#endif /* SIW_SRQ_H */
