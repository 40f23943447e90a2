// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag_index DEVICE: registers two MRs in one PD and prints their STags,
 * split into the kernel's 24-bit index (stag >> 8) and the 8-bit key
 * (the low octet, which the user may choose: it is part of the ABI).
 *
 *	stag 0x00000100 index 1 key 0x00
 *	stag 0x00000200 index 2 key 0x00
 *	first_index 1
 *
 * An STag is all a peer needs to reach registered memory (with the
 * address): indices that start at 1 on a fresh device and count up let a
 * peer guess the STags of MRs it was never told. The guest test
 * (tests/vm/162-hostile-local.sh) runs this on two fresh loads of the
 * module and compares. The program itself only checks that the MRs
 * report the same key as lkey and rkey and that the indices differ.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "common.h"

#define LEN	4096

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	void *buf = page_alloc(2 * LEN);
	struct ibv_mr *mr[2];
	int i;

	for (i = 0; i < 2; i++) {
		mr[i] = ibv_reg_mr(pd, (char *)buf + i * LEN, LEN,
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_WRITE);
		if (!mr[i])
			fail_or_skip(errno, "ibv_reg_mr");
		if (mr[i]->lkey != mr[i]->rkey)
			fail("MR %d: lkey 0x%08x, rkey 0x%08x: siw's are one STag",
			     i, mr[i]->lkey, mr[i]->rkey);
		printf("stag 0x%08x index %u key 0x%02x\n", mr[i]->rkey,
		       mr[i]->rkey >> 8, mr[i]->rkey & 0xff);
	}
	if (mr[0]->rkey >> 8 == mr[1]->rkey >> 8)
		fail("two live MRs share STag index %u", mr[0]->rkey >> 8);
	printf("first_index %u\n", mr[0]->rkey >> 8);
	for (i = 0; i < 2; i++)
		must(ibv_dereg_mr(mr[i]), "ibv_dereg_mr");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	page_free(buf, 2 * LEN);
	ibv_close_device(ctx);
	pass();
}
