// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * sqe_flip DEVICE [SECONDS]: a process that rewrites a VALID slot of its
 * own send queue while siw reads it must not make siw break the RDMA
 * Read limit it negotiated (ORD) with its peer.
 *
 * The SQ ring is shared with the process. To decide whether the ORD or a
 * read fence lets an SQE go, siw must look at its opcode; if it then
 * copies the slot once more to execute it, a process that flips the
 * opcode between RDMA Write and RDMA Read in between can make an SQE
 * that was admitted as a Write go out as a Read: more Reads outstanding
 * than the ORD. The responder, whose IRD that exceeds, ends the
 * connection with a Terminate ("more RDMA Reads outstanding than the
 * negotiated IRD"). A process may hurt its own QP by rewriting its ring
 * (the data is then undefined), but siw must not put on the wire what
 * the protocol forbids, and no verb lets a process have more Reads out
 * than the ORD.
 *
 * Two RC QPs of DEVICE connected without rdma_cm (GID 1): max_rd_atomic
 * 1 on both and max_dest_rd_atomic 1 (connect_qp_gid()), so IRD = ORD =
 * 1 each way. B, the responder, keeps its transmitter busy with RDMA
 * Writes of WRITE_LEN octets to A (a thread reposts them), far more than
 * its socket holds (the guest test also keeps TCP's send buffers small):
 * siw answers Read Requests between messages, so a Read Request waits
 * in B's IRD queue until the Write in progress is out, and one Read too
 * many is refused at once. A's SQ is written directly in the ring (found as
 * tests/progs/hostile_ring.c finds it). Each round writes one RDMA Read
 * (legitimate: it takes the one ORD slot until B answers) and then, as
 * long as that Read has not completed, one SQE after the other, each
 * VALID only once siw took the one before, while a second thread keeps
 * flipping that SQE's opcode between RDMA Write and RDMA Read; the
 * doorbell (raw write()) rings until siw took it. Every SQE is a valid
 * Write and a valid Read of 64 octets. siw may take an SQE that reads as
 * a Write, or wait with one that reads as a Read until the Read before
 * it completed; never send one as a Read while the other is out.
 *
 * Passes when, for SECONDS (default 15), every WR of A and B completes
 * with success and neither QP leaves RTS. The guest test also checks
 * the kernel log for the responder's IRD refusal. With "noflip" as the
 * third argument nothing is flipped (the SQEs stay Writes): a control
 * of the rig, which passes on any kernel.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/siw-abi.h>

#include "common.h"

#define GID_INDEX	1
#define ASK_SQ		1024
#define SMALL		64
#define WRITE_LEN	(4 * 1024 * 1024)	/* B's busy Writes */
#define B_DEPTH		2		/* of them outstanding */
#define ID_MAGIC	0x51f11900000000ull
#define ROUND_MS	20000

struct rig {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
	uint8_t *buf_a, *buf_b;		/* A: sinks/sources, B's Write target */
	struct ibv_mr *mr_a, *mr_b;
	struct siw_sqe *sq;		/* A's SQ ring */
	unsigned int nsq;
	unsigned int put;		/* next slot of A's ring */

	/* flipper: the slot it flips, as slot << 32 | 1 (0: none) */
	_Atomic uint64_t flip_range;
	_Atomic uint64_t flip_epoch;
	_Atomic unsigned int flipping;	/* slot + 1 being flipped, 0: none */
	atomic_bool stop;
	uint64_t flips;

	/* B's busy thread */
	uint64_t b_writes;
	char b_error[256];
};

/* Areas of buf_a and buf_b (each BUF_LEN). */
#define AREA_SMALL	0			/* two areas of 4 KiB */
#define AREA_BIG	(64 * 1024)		/* WRITE_LEN */
#define BUF_LEN		(AREA_BIG + WRITE_LEN)

/* ---------------------------------------------------------------------- */

/*
 * Finds A's SQ ring among the two mappings its create added (@fresh): the
 * one that is not the RQ. One receive with a known wr_id shows which
 * mapping is the RQ; A must be in INIT or later.
 */
static void find_sq(struct rig *r, const struct ring_map *fresh,
		    const struct ibv_qp_cap *cap)
{
	uint8_t *dummy = r->buf_a + AREA_BIG - 64;
	struct ibv_sge sge = { (uintptr_t)dummy, 16, r->mr_a->lkey };
	int i;

	post_recvs(r->a, ID_MAGIC, 1, &sge);
	i = *(uint64_t *)fresh[0].start == ID_MAGIC ? 1 : 0;
	if (*(uint64_t *)fresh[1 - i].start != ID_MAGIC)
		fail("libsiw's receive is in neither new mapping");
	if (page_round(cap->max_send_wr * sizeof(struct siw_sqe)) !=
	    fresh[i].len)
		fail("SQ mapping of %zu bytes does not fit %u SQEs",
		     fresh[i].len, cap->max_send_wr);
	r->sq = (struct siw_sqe *)fresh[i].start;
	r->nsq = cap->max_send_wr;
	note("A's SQ ring: %u slots at key %#" PRIx64, r->nsq, fresh[i].key);
}

static void setup(struct rig *r, const char *dev)
{
	struct qp_spec spec = { .max_send_wr = ASK_SQ, .max_recv_wr = 4,
				.max_sge = 1 };
	struct ring_map before[MAX_RING_MAPS], after[MAX_RING_MAPS];
	struct ring_map fresh[MAX_RING_MAPS];
	struct ibv_qp_cap cap;
	int nb, na, access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_WRITE;

	r->ctx = open_device(dev);
	r->pd = make_pd(r->ctx);
	r->cq_a = make_cq(r->ctx, 2 * ASK_SQ);
	r->cq_b = make_cq(r->ctx, 2 * ASK_SQ);
	r->buf_a = page_alloc(BUF_LEN);
	r->buf_b = page_alloc(BUF_LEN);
	r->mr_a = ibv_reg_mr(r->pd, r->buf_a, BUF_LEN, access);
	r->mr_b = ibv_reg_mr(r->pd, r->buf_b, BUF_LEN, access);
	if (!r->mr_a || !r->mr_b)
		fail_or_skip(errno, "ibv_reg_mr");

	spec.send_cq = spec.recv_cq = r->cq_a;
	nb = uverbs_maps(before, MAX_RING_MAPS);
	r->a = make_qp(r->pd, &spec, &cap);
	na = uverbs_maps(after, MAX_RING_MAPS);
	if (new_maps(before, nb, after, na, fresh, MAX_RING_MAPS) != 2)
		fail("ibv_create_qp: expected two new uverbs mappings (SQ, RQ)");
	spec.send_cq = spec.recv_cq = r->cq_b;
	spec.max_send_wr = 2 * B_DEPTH;
	r->b = make_qp(r->pd, &spec, NULL);
	connect_qp_gid(r->ctx, r->b, r->a->qp_num, GID_INDEX);
	connect_qp_gid(r->ctx, r->a, r->b->qp_num, GID_INDEX);
	find_sq(r, fresh, &cap);
	note("A: QP %u (requester, ORD 1) <-> B: QP %u (responder, IRD 1)",
	     r->a->qp_num, r->b->qp_num);
}

/* ---------------------------------------------------------------------- */

/* Keeps B_DEPTH RDMA Writes of WRITE_LEN from B to A outstanding. */
static void *b_busy(void *arg)
{
	struct rig *r = arg;
	struct ibv_sge sge = { (uintptr_t)(r->buf_b + AREA_BIG), WRITE_LEN,
			       r->mr_b->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc[B_DEPTH];
	int out = 0, n, i, err;
	uint64_t id = 0;

	wr.wr.rdma.remote_addr = (uintptr_t)(r->buf_a + AREA_BIG);
	wr.wr.rdma.rkey = r->mr_a->rkey;
	while (!atomic_load(&r->stop)) {
		while (out < B_DEPTH) {
			wr.wr_id = id++;
			err = ibv_post_send(r->b, &wr, &bad);
			if (err) {
				snprintf(r->b_error, sizeof(r->b_error),
					 "B's ibv_post_send: %s", errname(err));
				return NULL;
			}
			out++;
		}
		n = ibv_poll_cq(r->cq_b, B_DEPTH, wc);
		if (n < 0) {
			snprintf(r->b_error, sizeof(r->b_error),
				 "ibv_poll_cq(B) returned %d", n);
			return NULL;
		}
		for (i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(r->b_error, sizeof(r->b_error),
					 "B's RDMA Write %" PRIu64 " completed with %s",
					 (uint64_t)wc[i].wr_id,
					 ibv_wc_status_str(wc[i].status));
				return NULL;
			}
			r->b_writes++;
		}
		out -= n;
		if (!n)
			sleep_ms(1);
	}
	return NULL;
}

/*
 * Flips the opcode of the slot in flip_range (one slot, or none) between
 * WRITE and READ, FLIP_BURST times in a row, and says in r->flipping
 * which slot it flips (slot + 1; 0: none).
 */
#define FLIP_BURST	64
static void *flipper(void *arg)
{
	struct rig *r = arg;
	uint64_t n = 0;

	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		uint64_t range = atomic_load(&r->flip_range);
		unsigned int slot = range >> 32, k;
		struct siw_sqe *s = &r->sq[slot % r->nsq];

		if (!(uint32_t)range) {
			atomic_store(&r->flipping, 0);
		} else {
			atomic_store(&r->flipping, slot + 1);
			for (k = 0; k < FLIP_BURST; k++)
				__atomic_store_n(&s->opcode, k & 1 ?
						 SIW_OP_WRITE : SIW_OP_READ,
						 __ATOMIC_RELAXED);
			n += FLIP_BURST;
		}
		atomic_fetch_add(&r->flip_epoch, 1);
	}
	r->flips = n;
	return NULL;
}

/* Flip @slot from now on; returns once the flipper is at it. */
static void flip_slot(struct rig *r, unsigned int slot)
{
	int64_t end = mono_ms() + WAIT_MS;

	slot %= r->nsq;
	atomic_store(&r->flip_range, (uint64_t)slot << 32 | 1);
	while (atomic_load(&r->flipping) != slot + 1) {
		if (mono_ms() > end)
			fail("the flipper thread stopped");
		sched_yield();
	}
}

/* Stop flipping and wait until the flipper is past its last store. */
static void flip_none(struct rig *r)
{
	uint64_t e;
	int64_t end = mono_ms() + WAIT_MS;

	atomic_store(&r->flip_range, 0);
	e = atomic_load(&r->flip_epoch);
	while (atomic_load(&r->flip_epoch) < e + 2) {
		if (mono_ms() > end)
			fail("the flipper thread stopped");
		sched_yield();
	}
}

/* ---------------------------------------------------------------------- */

static void write_sqe(struct rig *r, unsigned int slot, uint64_t id,
		      uint8_t opcode, unsigned int area)
{
	struct siw_sqe *s = &r->sq[slot % r->nsq];
	struct siw_sqe v;

	if (__atomic_load_n(&s->flags, __ATOMIC_ACQUIRE) & SIW_WQE_VALID)
		fail("A's SQ slot %u is still VALID when it is reused",
		     slot % r->nsq);
	memset(&v, 0, sizeof(v));
	v.id = id;
	v.opcode = opcode;
	v.num_sge = 1;
	/* Write: from A's area to B's; Read: from B's area into A's. */
	v.rkey = r->mr_b->rkey;
	v.raddr = (uintptr_t)(r->buf_b + AREA_SMALL + area * 4096);
	v.sge[0].laddr = (uintptr_t)(r->buf_a + AREA_SMALL + area * 4096);
	v.sge[0].length = SMALL;
	v.sge[0].lkey = r->mr_a->lkey;
	memcpy(s, &v, sizeof(v));
}

static void make_valid(struct rig *r, unsigned int slot)
{
	__atomic_store_n(&r->sq[slot % r->nsq].flags,
			 (uint16_t)(SIW_WQE_VALID | SIW_WQE_SIGNALLED),
			 __ATOMIC_RELEASE);
}

static bool all_taken(struct rig *r, unsigned int first, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (__atomic_load_n(&r->sq[(first + i) % r->nsq].flags,
				    __ATOMIC_ACQUIRE) & SIW_WQE_VALID)
			return false;
	return true;
}

struct tally {
	uint64_t rounds, as_read, as_write, doorbells;
};

/* Ring A's doorbell until siw took @slot; fails after ROUND_MS. */
static void ring_until_taken(struct rig *r, unsigned int slot, int64_t end,
			     uint64_t round, struct tally *t)
{
	int err;

	while (!all_taken(r, slot, 1)) {
		err = raw_doorbell(r->a);
		if (err)
			fail_err(err, "A's doorbell (round %" PRIu64 ")", round);
		t->doorbells++;
		if (mono_ms() > end)
			fail("round %" PRIu64 ": siw did not take A's SQE in slot %u within %d ms",
			     round, slot % r->nsq, ROUND_MS);
	}
}

/*
 * One round: an RDMA Read, then, while it is outstanding, one flipping
 * SQE after the other, each made VALID only once siw took the one
 * before. Fails the program on an error completion or a hang.
 */
static void round_trip(struct rig *r, uint64_t round, struct tally *t,
		       struct ibv_wc *wc, bool flip)
{
	unsigned int first = r->put, n = 0, i, k;
	uint64_t base = round << 32;
	int64_t end = mono_ms() + ROUND_MS;
	int got = 0, m;

	flip_none(r);
	write_sqe(r, first, base, SIW_OP_READ, 0);
	make_valid(r, first);
	ring_until_taken(r, first, end, round, t);
	/* Up to a ring less two, as long as the Read has not completed. */
	while (!got && 1 + n < r->nsq - 1) {
		k = first + 1 + n;
		write_sqe(r, k, base + 1 + n, SIW_OP_WRITE, 1);
		if (flip)
			flip_slot(r, k);
		make_valid(r, k);
		n++;
		ring_until_taken(r, k, end, round, t);
		m = ibv_poll_cq(r->cq_a, 1, wc);
		if (m < 0)
			fail("ibv_poll_cq(A) returned %d", m);
		got += m;
	}
	r->put += 1 + n;

	while (got < (int)(1 + n)) {
		m = ibv_poll_cq(r->cq_a, 1 + n - got, wc + got);
		if (m < 0)
			fail("ibv_poll_cq(A) returned %d", m);
		got += m;
		if (got < (int)(1 + n) && mono_ms() > end)
			fail("round %" PRIu64 ": %d of A's %u WRs completed within %d ms",
			     round, got, 1 + n, ROUND_MS);
		if (!m)
			sleep_ms(1);
	}
	for (i = 0; i <= n; i++) {
		if (wc[i].status != IBV_WC_SUCCESS)
			fail("round %" PRIu64 ": A's WR %u of the round completed with %s (vendor error %u): the connection broke, the responder's log line tells why (before this round, flipping SQEs went as %" PRIu64 " Reads and %" PRIu64 " Writes)",
			     round, i, ibv_wc_status_str(wc[i].status),
			     wc[i].vendor_err, t->as_read, t->as_write);
		if (wc[i].wr_id != base + i)
			fail("round %" PRIu64 ": completion %u is WR %#" PRIx64 ", expected %#" PRIx64,
			     round, i, (uint64_t)wc[i].wr_id, base + i);
		if (i && wc[i].opcode == IBV_WC_RDMA_READ)
			t->as_read++;
		else if (i)
			t->as_write++;
	}
	t->rounds++;
}

int main(int argc, char **argv)
{
	struct rig r;
	struct tally t = { 0 };
	struct ibv_wc *wc;
	pthread_t tb, tf;
	int64_t end;
	int secs = 15, err;
	bool flip = true;

	set_prog(argv[0]);
	if (argc < 2 || argc > 4 ||
	    (argc == 4 && strcmp(argv[3], "noflip"))) {
		fprintf(stderr, "usage: %s DEVICE [SECONDS [noflip]]\n", prog);
		return EXIT_FAIL;
	}
	if (argc >= 3)
		secs = atoi(argv[2]);
	flip = argc != 4;
	memset(&r, 0, sizeof(r));
	setup(&r, argv[1]);
	wc = calloc(r.nsq, sizeof(*wc));
	if (!wc)
		fail("out of memory");

	step("B keeps %d RDMA Writes of %d KiB to A outstanding", B_DEPTH,
	     WRITE_LEN / 1024);
	err = pthread_create(&tb, NULL, b_busy, &r);
	if (err)
		fail_err(err, "pthread_create");
	err = pthread_create(&tf, NULL, flipper, &r);
	if (err)
		fail_err(err, "pthread_create");

	step("for %d s: rounds of 1 Read, then while it is outstanding one SQE after the other %s",
	     secs, flip ? "flipping between Write and Read" : "(Writes, no flips)");
	end = mono_ms() + secs * 1000LL;
	while (mono_ms() < end && !r.b_error[0])
		round_trip(&r, t.rounds, &t, wc, flip);
	atomic_store(&r.stop, true);
	pthread_join(tf, NULL);
	pthread_join(tb, NULL);
	note("%" PRIu64 " rounds, %" PRIu64 " doorbells; flipping SQEs went as %" PRIu64 " Reads and %" PRIu64 " Writes; %" PRIu64 " flips; B completed %" PRIu64 " Writes",
	     t.rounds, t.doorbells, t.as_read, t.as_write, r.flips,
	     r.b_writes);
	if (r.b_error[0])
		fail("%s (the connection broke; the kernel log tells why)",
		     r.b_error);
	if (get_state(r.a) != IBV_QPS_RTS || get_state(r.b) != IBV_QPS_RTS)
		fail("QP A is in %s, B in %s, expected RTS",
		     state_name(get_state(r.a)), state_name(get_state(r.b)));
	pass();
}
