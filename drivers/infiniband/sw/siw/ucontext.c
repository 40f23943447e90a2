// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * User contexts: what a process gets when it opens the device through
 * libibverbs and the siw provider library.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "siw.h"

struct siw_ucontext {
	struct ib_ucontext base;
};

static int siw_alloc_ucontext(struct ib_ucontext *base, struct ib_udata *udata)
{
	struct siw_device *sdev = to_siw_device(base->device);
	struct siw_uresp_alloc_ctx uresp = {
		.dev_id = sdev->dev_id,
	};
	int err;

	if (!udata || udata->outlen < sizeof(uresp))
		return -EINVAL;

	if (!siw_obj_get(sdev, SIW_OBJ_UCONTEXT))
		return -ENOMEM;

	err = ib_copy_to_udata(udata, &uresp, sizeof(uresp));
	if (err) {
		siw_obj_put(sdev, SIW_OBJ_UCONTEXT);
		return err;
	}
	return 0;
}

static void siw_dealloc_ucontext(struct ib_ucontext *base)
{
	siw_obj_put(to_siw_device(base->device), SIW_OBJ_UCONTEXT);
}

/*
 * The device is going away while a process still has it open. The core
 * destroys the context's objects and zaps its rdma_user_mmap_entry
 * mappings itself; nothing else of siw's is tied to the process. Having
 * this callback lets unregistration and rmmod go ahead without waiting for
 * the process to close the device.
 */
static void siw_disassociate_ucontext(struct ib_ucontext *base)
{
}

const struct ib_device_ops siw_ucontext_ops = {
	.alloc_ucontext = siw_alloc_ucontext,
	.dealloc_ucontext = siw_dealloc_ucontext,
	.disassociate_ucontext = siw_disassociate_ucontext,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, siw_ucontext, base),
};
