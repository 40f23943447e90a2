// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Live object accounting: how many objects of each type a device holds,
 * capped by the device limits, and a loud report of any left at teardown.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>

#include "siw.h"

struct siw_obj_info {
	const char *name;	/* plural, for "leaked 2 PDs" */
	int limit;
};

static const struct siw_obj_info siw_obj_info[SIW_NUM_OBJ_TYPES] = {
	[SIW_OBJ_UCONTEXT] = { "ucontexts", SIW_MAX_UCONTEXT },
	[SIW_OBJ_PD] = { "PDs", SIW_MAX_PD },
	[SIW_OBJ_CQ] = { "CQs", SIW_MAX_CQ },
	[SIW_OBJ_QP] = { "QPs", SIW_MAX_QP },
	[SIW_OBJ_SRQ] = { "SRQs", SIW_MAX_SRQ },
	[SIW_OBJ_MR] = { "MRs", SIW_MAX_MR },
};

/* Count one more object of @type; false if the device is at its limit. */
bool siw_obj_get(struct siw_device *sdev, enum siw_obj_type type)
{
	atomic_t *count = &sdev->num_objs[type];

	if (atomic_inc_return(count) <= siw_obj_info[type].limit)
		return true;

	atomic_dec(count);
	siw_dbg(sdev, "no more %s (limit %d)\n", siw_obj_info[type].name,
		siw_obj_info[type].limit);
	return false;
}

void siw_obj_put(struct siw_device *sdev, enum siw_obj_type type)
{
	WARN_ON_ONCE(atomic_dec_return(&sdev->num_objs[type]) < 0);
}

/* Called once the device can no longer gain or lose objects. */
void siw_obj_report_leaks(struct siw_device *sdev)
{
	int type, n;

	for (type = 0; type < SIW_NUM_OBJ_TYPES; type++) {
		n = atomic_read(&sdev->num_objs[type]);
		if (n)
			siw_err(sdev, "leaked %d %s at teardown\n", n,
				siw_obj_info[type].name);
	}
}
