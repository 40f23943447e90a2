// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq_limit_traffic DEVICE: IBV_EVENT_SRQ_LIMIT_REACHED with real traffic.
 *
 * Two RC QPs of DEVICE in one PD: A receives through an SRQ, B sends to A.
 * They are connected without rdma_cm (Documentation/engine.md): INIT, then
 * RTR with an AV whose dgid and sgid are GID 1 of DEVICE (its first
 * IPv4 address, which the netdev must have) and the other QP's number,
 * then RTS; the connection comes up in the background and the Sends wait
 * for it.
 *
 * The SRQ limit fires when the number of posted receives drops below it
 * (ibv_modify_srq(3)). With N receives posted and the limit armed at L:
 * - N - L Sends (L receives left): each completes with success on both
 *   sides (opcode, byte_len, wr_id in posting order, data pattern, no
 *   overrun) and no limit event comes within a quiet period; the limit
 *   still reads L;
 * - one more Send (L - 1 left): SRQ_LIMIT_REACHED comes, naming this SRQ,
 *   and query_srq reads srq_limit 0 (disarmed);
 * - more Sends: no second event;
 * - receives posted above the limit, re-armed, consumed again: nothing
 *   until the count drops below the limit, then the event once more.
 * Any other QP, CQ or SRQ async event fails the test; device events
 * (port, GID changes) are printed. Everything is destroyed at the end.
 * Every wait is bounded (WAIT_MS for what must come, QUIET_MS for what
 * must not).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define GID_INDEX	1
#define SRQ_WR		32
#define POSTED		16	/* N: receives posted before the first arming */
#define LIMIT		4	/* L */
#define REPOST		10	/* receives posted before re-arming */
#define AFTER_EVENT	2	/* Sends after the event that must not raise one */
#define SLOT		4096	/* one receive or send buffer */
#define SLOTS		64
#define FILL		0xee	/* receive slots before placement */

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_srq *srq;
	struct ibv_cq *rcq;	/* A's receives (A sends nothing) */
	struct ibv_cq *scq;	/* B's Sends */
	struct ibv_qp *qp_a;
	struct ibv_qp *qp_b;
	uint8_t *rbuf, *sbuf;
	struct ibv_mr *rmr, *smr;
	uint64_t next_rid;	/* next receive wr_id (= receive slot) to post */
	uint64_t next_cons;	/* next receive wr_id expected to complete */
	uint32_t next_seq;	/* next message number */
	int posted;		/* receives posted and not consumed */
};

static uint32_t msg_len(uint32_t seq)
{
	return 1 + (seq * 523 + 61) % SLOT;
}

static uint8_t msg_byte(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 29 + i * 7 + (i >> 8) + 1);
}

static void arm(struct rig *r, uint32_t limit)
{
	struct ibv_srq_attr attr = { .srq_limit = limit };

	must(ibv_modify_srq(r->srq, &attr, IBV_SRQ_LIMIT),
	     "ibv_modify_srq(IBV_SRQ_LIMIT)");
}

static void post_receives(struct rig *r, int n)
{
	struct ibv_recv_wr wr, *bad;
	struct ibv_sge sge;
	int i, err;

	for (i = 0; i < n; i++) {
		if (r->next_rid == SLOTS)
			fail("test bug: out of receive slots");
		memset(r->rbuf + r->next_rid * SLOT, FILL, SLOT);
		sge = (struct ibv_sge){
			.addr = (uintptr_t)(r->rbuf + r->next_rid * SLOT),
			.length = SLOT,
			.lkey = r->rmr->lkey,
		};
		wr = (struct ibv_recv_wr){
			.wr_id = r->next_rid, .sg_list = &sge, .num_sge = 1,
		};
		err = ibv_post_srq_recv(r->srq, &wr, &bad);
		if (err)
			fail_err(err, "ibv_post_srq_recv (wr_id %" PRIu64 ")",
				 r->next_rid);
		r->next_rid++;
		r->posted++;
	}
}

/* Device-wide events are printed; anything else about our objects fails. */
static bool device_event(enum ibv_event_type type)
{
	switch (type) {
	case IBV_EVENT_PORT_ACTIVE:
	case IBV_EVENT_PORT_ERR:
	case IBV_EVENT_LID_CHANGE:
	case IBV_EVENT_PKEY_CHANGE:
	case IBV_EVENT_GID_CHANGE:
	case IBV_EVENT_SM_CHANGE:
	case IBV_EVENT_CLIENT_REREGISTER:
		return true;
	default:
		return false;
	}
}

/*
 * Waits up to @ms for an async event other than a device event. Returns
 * false on timeout, true with *type and *srq (the SRQ, for SRQ events,
 * else NULL) of the event, which is acknowledged.
 */
static bool next_event(struct rig *r, int ms, enum ibv_event_type *type,
		       struct ibv_srq **srq)
{
	int64_t end = mono_ms() + ms;
	struct ibv_async_event ev;

	while (next_async_event(r->ctx, (int)(end - mono_ms()), &ev)) {
		*type = ev.event_type;
		*srq = NULL;
		if (*type == IBV_EVENT_SRQ_ERR ||
		    *type == IBV_EVENT_SRQ_LIMIT_REACHED)
			*srq = ev.element.srq;
		if (!device_event(*type))
			return true;
		note("device event %s (ignored)", ibv_event_type_str(*type));
	}
	return false;
}

static void expect_no_event(struct rig *r, const char *when)
{
	enum ibv_event_type type;
	struct ibv_srq *srq;

	if (next_event(r, QUIET_MS, &type, &srq))
		fail("%s: unexpected async event %s (%d)%s", when,
		     ibv_event_type_str(type), type,
		     type == IBV_EVENT_SRQ_LIMIT_REACHED ?
		     " with receives posted still at or above the limit" : "");
	note("%s: no async event within %d ms", when, QUIET_MS);
}

static void expect_limit_event(struct rig *r, const char *when)
{
	enum ibv_event_type type;
	struct ibv_srq *srq;

	if (!next_event(r, WAIT_MS, &type, &srq))
		fail("%s: no IBV_EVENT_SRQ_LIMIT_REACHED within %d ms", when,
		     WAIT_MS);
	if (type != IBV_EVENT_SRQ_LIMIT_REACHED)
		fail("%s: async event %s (%d), expected SRQ_LIMIT_REACHED",
		     when, ibv_event_type_str(type), type);
	if (srq != r->srq)
		fail("%s: SRQ_LIMIT_REACHED names SRQ %p, ours is %p", when,
		     (void *)srq, (void *)r->srq);
	note("%s: SRQ_LIMIT_REACHED for our SRQ", when);
}

static void check_data(struct rig *r, uint64_t slot, uint32_t seq)
{
	const uint8_t *p = r->rbuf + slot * SLOT;
	uint32_t len = msg_len(seq), i;

	for (i = 0; i < len; i++)
		if (p[i] != msg_byte(seq, i))
			fail("message %u in receive %" PRIu64 ": byte %u is %#x, expected %#x",
			     seq, slot, i, p[i], msg_byte(seq, i));
	if (len < SLOT && p[len] != FILL)
		fail("message %u in receive %" PRIu64 ": byte %u after its %u bytes was written (%#x)",
		     seq, slot, len, len, p[len]);
}

/*
 * B sends @n messages to A; each must complete with success on both
 * sides, the receives in the order they were posted to the SRQ.
 */
static void send_msgs(struct rig *r, int n)
{
	struct ibv_send_wr wr[SLOTS], *bad = NULL;
	struct ibv_sge sge[SLOTS];
	struct ibv_wc wc[SLOTS + 4];
	uint32_t seq0 = r->next_seq, seq, len;
	uint8_t *p;
	int i, got, err;

	if (n > r->posted)
		fail("test bug: %d Sends for %d receives", n, r->posted);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		seq = seq0 + i;
		len = msg_len(seq);
		p = r->sbuf + (seq % SLOTS) * SLOT;
		for (uint32_t j = 0; j < len; j++)
			p[j] = msg_byte(seq, j);
		sge[i] = (struct ibv_sge){
			.addr = (uintptr_t)p, .length = len,
			.lkey = r->smr->lkey,
		};
		wr[i].wr_id = 0x10000 + seq;
		wr[i].sg_list = &sge[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	err = ibv_post_send(r->qp_b, wr, &bad);
	if (err)
		fail_err(err, "ibv_post_send of %d Sends (messages %u..%u)", n,
			 seq0, seq0 + n - 1);

	got = collect(r->scq, wc, n, ARRAY_SIZE(wc));
	if (got != n)
		fail("messages %u..%u: %d Send completions within %d ms, expected %d",
		     seq0, seq0 + n - 1, got, WAIT_MS, n);
	for (i = 0; i < n; i++) {
		seq = seq0 + i;
		if (wc[i].status != IBV_WC_SUCCESS)
			fail("Send of message %u: status %s (wr_id %#" PRIx64 ")",
			     seq, ibv_wc_status_str(wc[i].status),
			     (uint64_t)wc[i].wr_id);
		if (wc[i].wr_id != 0x10000 + seq)
			fail("Send completion %d: wr_id %#" PRIx64 ", expected %#x",
			     i, (uint64_t)wc[i].wr_id, 0x10000 + seq);
		if (wc[i].opcode != IBV_WC_SEND)
			fail("Send of message %u: opcode %d, expected IBV_WC_SEND",
			     seq, wc[i].opcode);
		if (wc[i].qp_num != r->qp_b->qp_num)
			fail("Send of message %u: completion names QP %u, expected %u",
			     seq, wc[i].qp_num, r->qp_b->qp_num);
	}

	got = collect(r->rcq, wc, n, ARRAY_SIZE(wc));
	if (got != n)
		fail("messages %u..%u: %d receive completions within %d ms, expected %d",
		     seq0, seq0 + n - 1, got, WAIT_MS, n);
	for (i = 0; i < n; i++) {
		seq = seq0 + i;
		if (wc[i].status != IBV_WC_SUCCESS)
			fail("receive of message %u: status %s (wr_id %" PRIu64 ")",
			     seq, ibv_wc_status_str(wc[i].status),
			     (uint64_t)wc[i].wr_id);
		if (wc[i].wr_id != r->next_cons)
			fail("message %u landed in SRQ receive %" PRIu64 ", expected %" PRIu64 " (SRQ receives are taken in posting order)",
			     seq, (uint64_t)wc[i].wr_id, r->next_cons);
		if (wc[i].opcode != IBV_WC_RECV)
			fail("receive of message %u: opcode %d, expected IBV_WC_RECV",
			     seq, wc[i].opcode);
		if (wc[i].byte_len != msg_len(seq))
			fail("receive of message %u: byte_len %u, expected %u",
			     seq, wc[i].byte_len, msg_len(seq));
		if (wc[i].qp_num != r->qp_a->qp_num)
			fail("receive of message %u: completion names QP %u, expected %u",
			     seq, wc[i].qp_num, r->qp_a->qp_num);
		if (wc[i].wc_flags & IBV_WC_WITH_IMM)
			fail("receive of message %u: flagged with immediate data",
			     seq);
		check_data(r, wc[i].wr_id, seq);
		r->next_cons++;
	}
	r->next_seq += n;
	r->posted -= n;
	note("messages %u..%u: %d Sends and receives completed, data checked; %d receives left",
	     seq0, seq0 + n - 1, n, r->posted);
}

static void check_gid(struct rig *r)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;
	int err;

	err = ibv_query_gid(r->ctx, 1, GID_INDEX, &gid);
	if (err)
		fail("ibv_query_gid(index %d): %d: the netdev needs an IPv4 address",
		     GID_INDEX, err);
	if (memcmp(gid.raw, mapped, sizeof(mapped)))
		fail("GID %d is not an IPv4-mapped address GID: the netdev needs an IPv4 address",
		     GID_INDEX);
	note("GID %d: ::ffff:%u.%u.%u.%u", GID_INDEX, gid.raw[12], gid.raw[13],
	     gid.raw[14], gid.raw[15]);
}

static void setup(struct rig *r, const char *dev)
{
	struct ibv_srq_init_attr sinit = {
		.attr = { .max_wr = SRQ_WR, .max_sge = 1 },
	};
	struct qp_spec spec_a, spec_b;

	r->ctx = open_device(dev);
	check_gid(r);
	r->pd = make_pd(r->ctx);
	r->srq = ibv_create_srq(r->pd, &sinit);
	if (!r->srq)
		fail_or_skip(errno, "ibv_create_srq");
	r->rcq = make_cq(r->ctx, SLOTS);
	r->scq = make_cq(r->ctx, SLOTS);
	r->rbuf = page_alloc(SLOTS * SLOT);
	r->sbuf = page_alloc(SLOTS * SLOT);
	r->rmr = ibv_reg_mr(r->pd, r->rbuf, SLOTS * SLOT,
			    IBV_ACCESS_LOCAL_WRITE);
	if (!r->rmr)
		fail_or_skip(errno, "ibv_reg_mr(receive buffer)");
	r->smr = ibv_reg_mr(r->pd, r->sbuf, SLOTS * SLOT, 0);
	if (!r->smr)
		fail_or_skip(errno, "ibv_reg_mr(send buffer)");

	spec_a = (struct qp_spec){
		.send_cq = r->rcq, .recv_cq = r->rcq, .srq = r->srq,
		.max_send_wr = 1, .max_sge = 1,
	};
	spec_b = (struct qp_spec){
		.send_cq = r->scq, .recv_cq = r->scq,
		.max_send_wr = SLOTS, .max_recv_wr = 1, .max_sge = 1,
	};
	r->qp_a = make_qp(r->pd, &spec_a, NULL);
	r->qp_b = make_qp(r->pd, &spec_b, NULL);
	note("QP A %u (on the SRQ), QP B %u", r->qp_a->qp_num,
	     r->qp_b->qp_num);
}

static void teardown(struct rig *r)
{
	must(ibv_destroy_qp(r->qp_b), "ibv_destroy_qp(B)");
	must(ibv_destroy_qp(r->qp_a), "ibv_destroy_qp(A)");
	must(ibv_destroy_srq(r->srq), "ibv_destroy_srq");
	must(ibv_destroy_cq(r->scq), "ibv_destroy_cq(send)");
	must(ibv_destroy_cq(r->rcq), "ibv_destroy_cq(receive)");
	must(ibv_dereg_mr(r->smr), "ibv_dereg_mr(send buffer)");
	must(ibv_dereg_mr(r->rmr), "ibv_dereg_mr(receive buffer)");
	must(ibv_dealloc_pd(r->pd), "ibv_dealloc_pd");
	page_free(r->sbuf, SLOTS * SLOT);
	page_free(r->rbuf, SLOTS * SLOT);
	if (ibv_close_device(r->ctx))
		fail_err(errno, "ibv_close_device");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct rig r = { 0 };
	int above;

	step("two RC QPs on %s, A on an SRQ, connected through GID %d",
	     dev, GID_INDEX);
	setup(&r, dev);
	post_receives(&r, POSTED);
	connect_qp_gid(r.ctx, r.qp_a, r.qp_b->qp_num, GID_INDEX);
	connect_qp_gid(r.ctx, r.qp_b, r.qp_a->qp_num, GID_INDEX);

	step("%d receives posted, limit armed at %d", POSTED, LIMIT);
	arm(&r, LIMIT);
	expect_srq_limit(r.srq, LIMIT, "armed");
	expect_no_event(&r, "armed above the fill level");

	step("%d Sends leave %d receives (= the limit): no event",
	     POSTED - LIMIT, LIMIT);
	send_msgs(&r, POSTED - LIMIT);
	expect_no_event(&r, "at the limit");
	expect_srq_limit(r.srq, LIMIT, "at the limit");

	step("one more Send leaves %d (below the limit): SRQ_LIMIT_REACHED",
	     LIMIT - 1);
	send_msgs(&r, 1);
	expect_limit_event(&r, "below the limit");
	expect_srq_limit(r.srq, 0, "after the event");

	step("%d more Sends: no second event", AFTER_EVENT);
	send_msgs(&r, AFTER_EVENT);
	expect_no_event(&r, "disarmed");
	expect_srq_limit(r.srq, 0, "disarmed");

	step("post %d receives, re-arm at %d", REPOST, LIMIT);
	post_receives(&r, REPOST);
	above = r.posted - LIMIT;
	note("%d receives posted", r.posted);
	arm(&r, LIMIT);
	expect_srq_limit(r.srq, LIMIT, "re-armed");
	expect_no_event(&r, "re-armed above the fill level");

	step("%d Sends down to the limit: no event; one more: the event",
	     above);
	send_msgs(&r, above);
	expect_no_event(&r, "at the limit again");
	expect_srq_limit(r.srq, LIMIT, "at the limit again");
	send_msgs(&r, 1);
	expect_limit_event(&r, "below the limit again");
	expect_srq_limit(r.srq, 0, "after the second event");
	expect_no_event(&r, "after the second event");

	step("destroy everything");
	teardown(&r);
	pass();
}
