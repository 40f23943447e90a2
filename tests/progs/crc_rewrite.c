// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * crc_rewrite DEVICE: a buffer rewritten under outstanding WRs must not
 * break a connection that runs with MPA CRC.
 *
 * Two RC QPs of DEVICE, connected without rdma_cm through GID 1 (an IPv4
 * address GID; the caller turns MPA CRC on with siw's mpa_crc=2). A
 * writer thread keeps rewriting the source buffer, and B's Write target
 * and receive buffer, while A posts rounds of large RDMA Writes and Sends
 * from it to B: more than the socket holds, so FPDUs wait, framed, for
 * room. What B's buffers hold then is undefined (verbs), but every WR
 * must complete with success on both sides: a CRC taken over other octets
 * than those on the wire (at A: the source after framing; at B: the
 * target after placement) would end the connection with a CRC error and
 * flush everything.
 *
 * After the rounds, with the writer stopped, one Write and one Send of a
 * known pattern must arrive intact, and neither QP may have had an async
 * event.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define GID_INDEX	1
#define MSG		(256 * 1024)	/* one Write or Send */
#define DEPTH		32		/* WRs per round */
#define ROUNDS		8
#define KNOWN		0x5a

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *qp_a, *qp_b;
	uint8_t *src, *dst, *rcv;
	struct ibv_mr *src_mr, *dst_mr, *rcv_mr;
	atomic_bool stop;
	uint64_t rewrites;
};

static void *rewriter(void *arg)
{
	struct rig *r = arg;
	volatile uint64_t *src = (volatile uint64_t *)r->src;
	volatile uint64_t *dst = (volatile uint64_t *)r->dst;
	volatile uint64_t *rcv = (volatile uint64_t *)r->rcv;
	uint64_t n = 0;
	size_t i;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		for (i = 0; i < MSG / sizeof(*src); i += 8) {
			src[i] = n;
			dst[i] = n;
			rcv[i] = n;
		}
		n++;
	}
	r->rewrites = n;
	return NULL;
}

static void setup(struct rig *r, const char *dev)
{
	struct qp_spec spec = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
				.max_sge = 1 };

	r->ctx = open_device(dev);
	r->pd = make_pd(r->ctx);
	r->cq_a = make_cq(r->ctx, 2 * DEPTH);
	r->cq_b = make_cq(r->ctx, 2 * DEPTH);
	r->src = page_alloc(MSG);
	r->dst = page_alloc(MSG);
	r->rcv = page_alloc(MSG);
	r->src_mr = ibv_reg_mr(r->pd, r->src, MSG, 0);
	r->dst_mr = ibv_reg_mr(r->pd, r->dst, MSG, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE);
	r->rcv_mr = ibv_reg_mr(r->pd, r->rcv, MSG, IBV_ACCESS_LOCAL_WRITE);
	if (!r->src_mr || !r->dst_mr || !r->rcv_mr)
		fail_or_skip(errno, "ibv_reg_mr");
	spec.send_cq = r->cq_a;
	spec.recv_cq = r->cq_a;
	r->qp_a = make_qp(r->pd, &spec, NULL);
	spec.send_cq = r->cq_b;
	spec.recv_cq = r->cq_b;
	r->qp_b = make_qp(r->pd, &spec, NULL);
	connect_qp_gid(r->ctx, r->qp_b, r->qp_a->qp_num, GID_INDEX);
	connect_qp_gid(r->ctx, r->qp_a, r->qp_b->qp_num, GID_INDEX);
	note("QP A %u -> QP B %u", r->qp_a->qp_num, r->qp_b->qp_num);
}

static void post_one(struct rig *r, uint64_t id, bool write)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->src, .length = MSG,
			       .lkey = r->src_mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int err;

	wr.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;
	if (write) {
		wr.wr.rdma.remote_addr = (uintptr_t)r->dst;
		wr.wr.rdma.rkey = r->dst_mr->rkey;
	}
	err = ibv_post_send(r->qp_a, &wr, &bad);
	if (err)
		fail_err(err, "ibv_post_send(%s %" PRIu64 ")",
			 write ? "Write" : "Send", id);
}

static void post_rcv(struct rig *r, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)r->rcv, .length = MSG,
			       .lkey = r->rcv_mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err;

	err = ibv_post_recv(r->qp_b, &wr, &bad);
	if (err)
		fail_err(err, "ibv_post_recv(%" PRIu64 ")", id);
}

/* @n completions on @cq, all successful, in order from @first. */
static void expect_ok(struct ibv_cq *cq, const char *who, int n,
		      uint64_t first)
{
	struct ibv_wc wc[2 * DEPTH];
	int got, i;

	got = collect(cq, wc, n, 2 * DEPTH);
	for (i = 0; i < got; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			fail("%s: WR %" PRIu64 " completed with %s (vendor error %u): the connection broke",
			     who, wc[i].wr_id, ibv_wc_status_str(wc[i].status),
			     wc[i].vendor_err);
		if (wc[i].wr_id != first + i)
			fail("%s: completion %d is WR %" PRIu64 ", not %" PRIu64,
			     who, i, wc[i].wr_id, first + i);
	}
	if (got != n)
		fail("%s: %d completions, not %d", who, got, n);
}

static void round_trip(struct rig *r, int round)
{
	uint64_t first = (uint64_t)round * DEPTH;
	int i, sends = 0;

	for (i = 0; i < DEPTH; i++)
		if (i & 1) {
			post_rcv(r, first + i);
			sends++;
		}
	for (i = 0; i < DEPTH; i++)
		post_one(r, first + i, !(i & 1));
	expect_ok(r->cq_a, "A (sender)", DEPTH, first);
	/* B's receives: the odd ids, in order. */
	{
		struct ibv_wc wc[DEPTH];
		int got = collect(r->cq_b, wc, sends, DEPTH);

		for (i = 0; i < got; i++)
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].wr_id != first + 2 * i + 1 ||
			    wc[i].byte_len != MSG)
				fail("B (receiver): receive %d: WR %" PRIu64 ", %s, %u bytes",
				     i, wc[i].wr_id,
				     ibv_wc_status_str(wc[i].status),
				     wc[i].byte_len);
		if (got != sends)
			fail("B (receiver): %d receives completed, not %d",
			     got, sends);
	}
}

static void check_known(struct rig *r)
{
	uint64_t id = (uint64_t)ROUNDS * DEPTH;
	size_t i;

	memset(r->src, KNOWN, MSG);
	memset(r->dst, 0, MSG);
	memset(r->rcv, 0, MSG);
	post_rcv(r, id + 1);
	post_one(r, id, true);
	post_one(r, id + 1, false);
	expect_ok(r->cq_a, "A (sender), known pattern", 2, id);
	expect_ok(r->cq_b, "B (receiver), known pattern", 1, id + 1);
	for (i = 0; i < MSG; i++)
		if (r->dst[i] != KNOWN || r->rcv[i] != KNOWN)
			fail("octet %zu: Write placed 0x%02x, Send 0x%02x, not 0x%02x",
			     i, r->dst[i], r->rcv[i], KNOWN);
}

static void no_async_event(struct rig *r)
{
	struct ibv_async_event ev;

	if (next_async_event(r->ctx, 100, &ev))
		fail("async event %s", ibv_event_type_str(ev.event_type));
}

static void teardown(struct rig *r)
{
	must(ibv_destroy_qp(r->qp_a), "ibv_destroy_qp(A)");
	must(ibv_destroy_qp(r->qp_b), "ibv_destroy_qp(B)");
	must(ibv_destroy_cq(r->cq_a), "ibv_destroy_cq(A)");
	must(ibv_destroy_cq(r->cq_b), "ibv_destroy_cq(B)");
	must(ibv_dereg_mr(r->src_mr), "ibv_dereg_mr(source)");
	must(ibv_dereg_mr(r->dst_mr), "ibv_dereg_mr(Write target)");
	must(ibv_dereg_mr(r->rcv_mr), "ibv_dereg_mr(receive buffer)");
	must(ibv_dealloc_pd(r->pd), "ibv_dealloc_pd");
	page_free(r->src, MSG);
	page_free(r->dst, MSG);
	page_free(r->rcv, MSG);
	if (ibv_close_device(r->ctx))
		fail_err(errno, "ibv_close_device");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct rig r = { 0 };
	pthread_t t;
	int round, err;

	step("two RC QPs on %s, connected through GID %d", dev, GID_INDEX);
	setup(&r, dev);

	step("%d rounds of %d Writes and Sends of %d KiB, source and targets rewritten all along",
	     ROUNDS, DEPTH, MSG / 1024);
	err = pthread_create(&t, NULL, rewriter, &r);
	if (err)
		fail_err(err, "pthread_create");
	for (round = 0; round < ROUNDS; round++)
		round_trip(&r, round);
	atomic_store(&r.stop, true);
	pthread_join(t, NULL);
	note("%d WRs completed on both sides; the buffers were rewritten %" PRIu64 " times",
	     ROUNDS * DEPTH, r.rewrites);

	step("a Write and a Send of a known pattern arrive intact");
	check_known(&r);
	no_async_event(&r);

	teardown(&r);
	pass();
}
