// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * stag_index DEVICE: registers NR_MR MRs in one PD, one after the other,
 * and prints their STags, split into the kernel's 24-bit index
 * (stag >> 8) and the 8-bit key (the low octet, which the user may
 * choose: it is part of the ABI; libsiw chooses 0).
 *
 *	stag 0x00000100 index 1 key 0x00
 *	stag 0x00000200 index 2 key 0x00
 *	...
 *	first_index 1
 *
 * An STag is all a peer needs to reach registered memory (with the
 * address): indices that start at a known value or count up let a peer
 * that learnt one STag guess those of MRs it was never told. The program
 * fails when two live MRs share an index, when lkey and rkey differ, and
 * when an index follows the one registered before it (index + 1): with
 * random indices that happens once in 2^24. The guest test
 * (tests/vm/162-hostile-local.sh) also runs it on two fresh loads of the
 * module and compares the first indices.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>

#include "common.h"

#define LEN	4096
#define NR_MR	8

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	void *buf = page_alloc(NR_MR * LEN);
	struct ibv_mr *mr[NR_MR];
	int i, j;

	for (i = 0; i < NR_MR; i++) {
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
	for (i = 0; i < NR_MR; i++) {
		for (j = 0; j < i; j++)
			if (mr[i]->rkey >> 8 == mr[j]->rkey >> 8)
				fail("two live MRs share STag index %u",
				     mr[i]->rkey >> 8);
		if (i && mr[i]->rkey >> 8 == (mr[i - 1]->rkey >> 8) + 1)
			fail("MR %d got STag index %u, the one after MR %d's: a peer can guess it",
			     i, mr[i]->rkey >> 8, i - 1);
	}
	printf("first_index %u\n", mr[0]->rkey >> 8);
	for (i = 0; i < NR_MR; i++)
		must(ibv_dereg_mr(mr[i]), "ibv_dereg_mr");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	page_free(buf, NR_MR * LEN);
	ibv_close_device(ctx);
	pass();
}
