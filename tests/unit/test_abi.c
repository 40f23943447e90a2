// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The kernel/user ABI of siw as the stock rdma-core provider (libsiw)
 * sees it: <rdma/siw-abi.h> from the system. The queue elements are
 * shared memory, so their sizes are part of the ABI.
 */
#include <rdma/siw-abi.h>

#include "siw_test.h"

static void abi_sizes(void)
{
	CHECK_EQ(sizeof(struct siw_sqe), 120);
	CHECK_EQ(sizeof(struct siw_rqe), 112);
	CHECK_EQ(sizeof(struct siw_cqe), 32);
	CHECK_EQ(sizeof(struct siw_cq_ctrl), 8);
}

static void abi_constants(void)
{
	CHECK_EQ(SIW_ABI_VERSION, 1);
	CHECK_EQ(SIW_MAX_SGE, 6);
	CHECK_EQ(sizeof(struct siw_sge), 16);
}

int main(void)
{
	RUN(abi_sizes);
	RUN(abi_constants);
	return siw_test_done();
}
