// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gate_wait DEVICE: work requests that must wait for an RDMA Read to
 * complete go on once it has, in order, without another doorbell.
 *
 * siw's transmitter leaves an SQE in the ring while the Read limit (ORD)
 * is taken, while a fenced WR has Reads before it outstanding, and while
 * every slot of its completion-ordering ring is taken by WRs waiting
 * behind an unfinished Read. The Read's completion (in the receive path)
 * must then wake the transmitter. It does so only when an SQE is known
 * to wait (Documentation/engine.md, Transmit), so a wake that is missed
 * leaves the WRs in the ring for good. Three rounds on two RC QPs of
 * DEVICE connected to each other without rdma_cm (GID 1), ORD = IRD = 1:
 *
 *   ord    48 RDMA Reads of 4 KiB posted in one list: each waits for the
 *          one before it;
 *   fence  16 pairs of an RDMA Read of 64 KiB and an RDMA Write with
 *          IBV_SEND_FENCE, in one list: each Write waits for its Read;
 *   full   an RDMA Read of 4 MiB, then 96 RDMA Writes of 64 octets on a
 *          send queue of 16, each posted as soon as the queue takes it:
 *          the Writes behind the Read fill the ordering ring and wait
 *          (a Read of 8, 16, 32 MiB if they never had to wait).
 *
 * Each round must complete every WR with success, in posting order,
 * within WAIT_MS (common.c), and the Read data must have arrived.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define GID_INDEX	1
#define SQ_DEPTH	64
#define SQ_SMALL	16
#define BIG		(4 * 1024 * 1024)
#define BIG_MAX		(32 * 1024 * 1024)	/* the longest Read of "full" */
#define BUF_LEN		(BIG_MAX + BIG)
#define ORD_READS	48
#define ORD_LEN		4096
#define FENCE_PAIRS	16
#define FENCE_LEN	(64 * 1024)
#define FULL_WRITES	96

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *a, *b;
	uint8_t *src, *dst;	/* B's memory read from, A's read into */
	struct ibv_mr *mr_src, *mr_dst;
};

static void fill(uint8_t *p, size_t len, uint32_t seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)((i * 131 + seed) >> 3);
}

static void rig_up(struct rig *r, const char *dev, uint32_t sq_depth)
{
	struct qp_spec spec = { .max_send_wr = sq_depth, .max_recv_wr = 4,
				.max_sge = 1 };
	int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
		     IBV_ACCESS_REMOTE_WRITE;

	r->ctx = open_device(dev);
	r->pd = make_pd(r->ctx);
	r->cq = make_cq(r->ctx, 4 * SQ_DEPTH + FULL_WRITES);
	r->src = page_alloc(BUF_LEN);
	r->dst = page_alloc(BUF_LEN);
	r->mr_src = ibv_reg_mr(r->pd, r->src, BUF_LEN, access);
	r->mr_dst = ibv_reg_mr(r->pd, r->dst, BUF_LEN, access);
	if (!r->mr_src || !r->mr_dst)
		fail_or_skip(errno, "ibv_reg_mr");
	spec.send_cq = spec.recv_cq = r->cq;
	r->a = make_qp(r->pd, &spec, NULL);
	r->b = make_qp(r->pd, &spec, NULL);
	connect_qp_gid(r->ctx, r->b, r->a->qp_num, GID_INDEX);
	connect_qp_gid(r->ctx, r->a, r->b->qp_num, GID_INDEX);
}

static void rig_down(struct rig *r)
{
	if (ibv_destroy_qp(r->a) || ibv_destroy_qp(r->b) ||
	    ibv_dereg_mr(r->mr_src) || ibv_dereg_mr(r->mr_dst) ||
	    ibv_destroy_cq(r->cq) || ibv_dealloc_pd(r->pd) ||
	    ibv_close_device(r->ctx))
		fail("tearing the QPs down failed");
	page_free(r->src, BUF_LEN);
	page_free(r->dst, BUF_LEN);
}

/*
 * An RDMA Read from B's memory into A's, or an RDMA Write from A's into
 * B's, of @len octets at @off of both buffers (src is the side read).
 */
static void set_rdma(struct rig *r, struct ibv_send_wr *wr,
		     struct ibv_sge *sge, enum ibv_wr_opcode op, uint64_t off,
		     uint32_t len)
{
	bool read = op == IBV_WR_RDMA_READ;
	uint8_t *local = read ? r->dst : r->src, *remote = read ? r->src : r->dst;

	sge->addr = (uintptr_t)(local + off);
	sge->length = len;
	sge->lkey = read ? r->mr_dst->lkey : r->mr_src->lkey;
	memset(wr, 0, sizeof(*wr));
	wr->sg_list = sge;
	wr->num_sge = 1;
	wr->opcode = op;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->wr.rdma.remote_addr = (uintptr_t)(remote + off);
	wr->wr.rdma.rkey = read ? r->mr_src->rkey : r->mr_dst->rkey;
}

/* @n completions of A's WRs, with success, wr_id 0 .. n-1 in order. */
static void expect_in_order(struct rig *r, const char *round, int n,
			    int64_t t0)
{
	struct ibv_wc *wc = calloc(n + 8, sizeof(*wc));
	int got, i;

	if (!wc)
		fail("out of memory");
	got = collect(r->cq, wc, n, n + 8);
	if (got != n)
		fail("%s: %d of %d WRs completed within the wait (the rest stayed in the send queue?)",
		     round, got, n);
	for (i = 0; i < n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			fail("%s: WR %" PRIu64 " completed with %s", round,
			     (uint64_t)wc[i].wr_id,
			     ibv_wc_status_str(wc[i].status));
		if (wc[i].wr_id != (uint64_t)i)
			fail("%s: completion %d is of WR %" PRIu64 ", expected WR %d (out of order)",
			     round, i, (uint64_t)wc[i].wr_id, i);
		if (wc[i].qp_num != r->a->qp_num)
			fail("%s: completion %d names QP %u", round, i,
			     wc[i].qp_num);
	}
	note("%s: %d WRs completed in order, %" PRId64 " ms", round, n,
	     mono_ms() - t0);
	free(wc);
}

static void check_data(struct rig *r, const char *round, uint64_t off,
		       size_t len)
{
	if (memcmp(r->dst + off, r->src + off, len))
		fail("%s: the data read at offset %" PRIu64 " differs from the source",
		     round, off);
}

static void round_ord(const char *dev)
{
	struct ibv_send_wr wr[ORD_READS], *bad;
	struct ibv_sge sge[ORD_READS];
	struct rig r;
	int64_t t0;
	int i, err;

	step("ord: %d RDMA Reads in one list, ORD 1", ORD_READS);
	rig_up(&r, dev, SQ_DEPTH);
	fill(r.src, ORD_READS * ORD_LEN, 1);
	for (i = 0; i < ORD_READS; i++) {
		set_rdma(&r, &wr[i], &sge[i], IBV_WR_RDMA_READ, (uint64_t)i * ORD_LEN,
			 ORD_LEN);
		wr[i].wr_id = i;
		wr[i].next = i + 1 < ORD_READS ? &wr[i + 1] : NULL;
	}
	t0 = mono_ms();
	err = ibv_post_send(r.a, wr, &bad);
	if (err)
		fail_err(err, "ord: ibv_post_send");
	expect_in_order(&r, "ord", ORD_READS, t0);
	check_data(&r, "ord", 0, ORD_READS * ORD_LEN);
	rig_down(&r);
}

static void round_fence(const char *dev)
{
	struct ibv_send_wr wr[2 * FENCE_PAIRS], *bad;
	struct ibv_sge sge[2 * FENCE_PAIRS];
	struct rig r;
	uint64_t off;
	int64_t t0;
	int i, err;

	step("fence: %d pairs of an RDMA Read and a fenced RDMA Write", FENCE_PAIRS);
	rig_up(&r, dev, SQ_DEPTH);
	fill(r.src, BIG, 2);
	for (i = 0; i < FENCE_PAIRS; i++) {
		off = (uint64_t)i * FENCE_LEN;
		set_rdma(&r, &wr[2 * i], &sge[2 * i], IBV_WR_RDMA_READ, off,
			 FENCE_LEN);
		/* The Write goes to the second half, away from the Reads. */
		set_rdma(&r, &wr[2 * i + 1], &sge[2 * i + 1], IBV_WR_RDMA_WRITE,
			 BIG + off, 64);
		wr[2 * i + 1].send_flags |= IBV_SEND_FENCE;
	}
	for (i = 0; i < 2 * FENCE_PAIRS; i++) {
		wr[i].wr_id = i;
		wr[i].next = i + 1 < 2 * FENCE_PAIRS ? &wr[i + 1] : NULL;
	}
	t0 = mono_ms();
	err = ibv_post_send(r.a, wr, &bad);
	if (err)
		fail_err(err, "fence: ibv_post_send");
	expect_in_order(&r, "fence", 2 * FENCE_PAIRS, t0);
	check_data(&r, "fence", 0, FENCE_PAIRS * FENCE_LEN);
	rig_down(&r);
}

/*
 * One try of "full" with a Read of @len: returns how often the send queue
 * was found full, i.e. how often Writes had to wait behind the Read.
 */
static int full_try(const char *dev, uint32_t len)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge;
	int64_t t0, end;
	struct rig r;
	int i, err, busy = 0;

	step("full: an RDMA Read of %u MiB, then %d RDMA Writes on a send queue of %d",
	     len >> 20, FULL_WRITES, SQ_SMALL);
	rig_up(&r, dev, SQ_SMALL);
	fill(r.src, len, 3);
	t0 = mono_ms();
	set_rdma(&r, &wr, &sge, IBV_WR_RDMA_READ, 0, len);
	wr.wr_id = 0;
	err = ibv_post_send(r.a, &wr, &bad);
	if (err)
		fail_err(err, "full: ibv_post_send(Read)");
	end = t0 + 60000;
	for (i = 1; i <= FULL_WRITES; i++) {
		set_rdma(&r, &wr, &sge, IBV_WR_RDMA_WRITE,
			 BIG_MAX + (uint64_t)(i % 64) * 64, 64);
		wr.wr_id = i;
		for (;;) {
			err = ibv_post_send(r.a, &wr, &bad);
			/* The stock libsiw returns -ENOMEM. */
			if (err != ENOMEM && err != -ENOMEM)
				break;
			/* The queue is full until siw takes the next SQE. */
			busy++;
			if (mono_ms() > end)
				fail("full: the send queue stayed full for 60 s (WR %d)", i);
			sleep_ms(1);
		}
		if (err)
			fail_err(err, "full: ibv_post_send(Write %d)", i);
	}
	note("full: the send queue was full %d times", busy);
	expect_in_order(&r, "full", FULL_WRITES + 1, t0);
	check_data(&r, "full", 0, len);
	rig_down(&r);
	return busy;
}

/*
 * The Writes fill the sent ring only if the Read is still out when the
 * queue's worth of them went: a longer Read until they had to wait.
 */
static void round_full(const char *dev)
{
	uint32_t len;

	for (len = BIG; len <= BIG_MAX; len *= 2)
		if (full_try(dev, len))
			return;
	fail("full: the Writes never had to wait behind a Read of up to %d MiB: the case did not happen",
	     BIG_MAX >> 20);
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);

	round_ord(dev);
	round_fence(dev);
	round_full(dev);
	pass();
}
