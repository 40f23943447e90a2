// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Protection domains. A PD only groups objects; it has no state of its own
 * beyond being counted against the device limit.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>

#include "siw.h"

struct siw_pd {
	struct ib_pd base;
};

static int siw_alloc_pd(struct ib_pd *base, struct ib_udata *udata)
{
	if (!siw_obj_get(to_siw_device(base->device), SIW_OBJ_PD))
		return -ENOMEM;
	return 0;
}

static int siw_dealloc_pd(struct ib_pd *base, struct ib_udata *udata)
{
	siw_obj_put(to_siw_device(base->device), SIW_OBJ_PD);
	return 0;
}

const struct ib_device_ops siw_pd_ops = {
	.alloc_pd = siw_alloc_pd,
	.dealloc_pd = siw_dealloc_pd,

	INIT_RDMA_OBJ_SIZE(ib_pd, siw_pd, base),
};
