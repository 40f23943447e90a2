// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * pd_cross DEVICE send|read: memory of one protection domain named by a
 * work request of another, in one process. A PD is the wall between the
 * memory registrations and QPs a process keeps apart; siw must refuse to
 * cross it and carry on.
 *
 * One device, PD1 with an MR (MR1), PD2 with two RC QPs A and B connected
 * to each other without rdma_cm (GID 1, connect_qp_gid()). A first WR of
 * PD2's own memory shows that the pair works. Then:
 *
 *  send: A posts a signalled Send whose SGE is MR1 (lkey of PD1).
 *	Expected within BOUND_MS: that Send completes with LOC_PROT_ERR,
 *	A gets IBV_EVENT_QP_ACCESS_ERR and is in ERROR, and the WRs posted
 *	after it flush (WR_FLUSH_ERR, in order); B receives nothing.
 *	KICKS more WRs are posted, each with one more raw doorbell: a WR
 *	that siw failed to frame must not be framed again at each doorbell
 *	(each try took one more reference to MR1 into an array of
 *	SIW_MAX_SGE slots).
 *  read: A posts an RDMA Read whose remote key is MR1's STag, i.e. of
 *	PD1, while its responder B is of PD2. Expected within BOUND_MS:
 *	the Read completes with an error status (REM_ACCESS_ERR: B refuses
 *	with a Terminate of class RDMAP remote protection; any error is
 *	taken, and named), B is in ERROR, and no octet of MR1 reaches A.
 *	B's and A's doorbells are rung KICKS times meanwhile (a Read
 *	Response siw failed to frame must not be framed again).
 *	Prints "responder QP <num>" for the guest test's log check.
 *
 * Both then connect a second pair of QPs of PD2 on the same device,
 * which must move PAIR_SENDS Sends, each checked octet by octet.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define GID_INDEX	1
#define LEN		4096
#define MSG		64
#define BAD_LEN		77	/* the refused WR's length, to spot it */
#define DEPTH		32
/* A refused WR completes at once; this only tells a hang from slowness. */
#define BOUND_MS	2000
#define KICKS		10
#define PAIR_SENDS	100

#define ID_LEGIT	0x100
#define ID_BAD		0xbad
#define ID_AFTER	0x200
#define PD1_PATTERN	0xd1

struct pair {
	struct ibv_cq *cq_a, *cq_b;
	struct ibv_qp *a, *b;
};

static int findings;

static void finding(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void finding(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	findings++;
}

/* Polls @cq for up to @ms until @want completions came; returns the count. */
static int poll_bounded(struct ibv_cq *cq, struct ibv_wc *wc, int want,
			int ms)
{
	int64_t end = mono_ms() + ms;
	int got = 0, n;

	while (got < want) {
		n = ibv_poll_cq(cq, want - got, wc + got);
		if (n < 0)
			fail("ibv_poll_cq returned %d", n);
		got += n;
		if (got < want && mono_ms() > end)
			break;
		if (!n)
			sleep_ms(1);
	}
	return got;
}

static void make_pair(struct ibv_context *ctx, struct ibv_pd *pd,
		      struct pair *p, const char *name)
{
	struct qp_spec spec = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
				.max_sge = 1 };

	p->cq_a = make_cq(ctx, 2 * DEPTH);
	p->cq_b = make_cq(ctx, 2 * DEPTH);
	spec.send_cq = spec.recv_cq = p->cq_a;
	p->a = make_qp(pd, &spec, NULL);
	spec.send_cq = spec.recv_cq = p->cq_b;
	p->b = make_qp(pd, &spec, NULL);
	connect_qp_gid(ctx, p->b, p->a->qp_num, GID_INDEX);
	connect_qp_gid(ctx, p->a, p->b->qp_num, GID_INDEX);
	note("%s: QP %u <-> QP %u (PD2)", name, p->a->qp_num, p->b->qp_num);
}

static void free_pair(struct pair *p)
{
	must(ibv_destroy_qp(p->a), "ibv_destroy_qp");
	must(ibv_destroy_qp(p->b), "ibv_destroy_qp");
	must(ibv_destroy_cq(p->cq_a), "ibv_destroy_cq");
	must(ibv_destroy_cq(p->cq_b), "ibv_destroy_cq");
}

static void post_send(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len,
		      uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int err = ibv_post_send(qp, &wr, &bad);

	if (err)
		fail_err(err, "ibv_post_send(Send %#" PRIx64 ") on QP %u", id,
			 qp->qp_num);
}

static void post_read(struct ibv_qp *qp, uint64_t id, void *sink,
		      uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { (uintptr_t)sink, MSG, lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_RDMA_READ,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	int err;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		fail_err(err, "ibv_post_send(Read %#" PRIx64 ") on QP %u", id,
			 qp->qp_num);
}

static void post_recv(struct ibv_qp *qp, uint64_t id, void *addr, uint32_t len,
		      uint32_t lkey)
{
	struct ibv_sge sge = { (uintptr_t)addr, len, lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int err = ibv_post_recv(qp, &wr, &bad);

	if (err)
		fail_err(err, "ibv_post_recv on QP %u", qp->qp_num);
}

static void expect_one_ok(struct ibv_cq *cq, uint64_t id, const char *what)
{
	struct ibv_wc wc;

	if (poll_bounded(cq, &wc, 1, WAIT_MS) != 1)
		fail("%s: no completion within %d ms", what, WAIT_MS);
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id)
		fail("%s: completion of WR %#" PRIx64 " with %s, expected WR %#" PRIx64 " with success",
		     what, (uint64_t)wc.wr_id, ibv_wc_status_str(wc.status),
		     id);
}

/* The first pair works: one Send of PD2's memory from A to B. */
static void legit_send(struct pair *p, uint8_t *src, uint8_t *dst,
		       struct ibv_mr *mr2)
{
	memset(src, 0x11, MSG);
	post_recv(p->b, ID_LEGIT, dst, LEN, mr2->lkey);
	post_send(p->a, ID_LEGIT, src, MSG, mr2->lkey);
	expect_one_ok(p->cq_a, ID_LEGIT, "A's Send of PD2's memory");
	expect_one_ok(p->cq_b, ID_LEGIT, "B's receive of it");
}

static bool wait_state(struct ibv_qp *qp, enum ibv_qp_state want, int ms)
{
	int64_t end = mono_ms() + ms;

	while (get_state(qp) != want) {
		if (mono_ms() > end)
			return false;
		sleep_ms(10);
	}
	return true;
}

/* An async event of @type for @qp within @ms; other events are noted. */
static bool wait_qp_event(struct ibv_context *ctx, struct ibv_qp *qp,
			  enum ibv_event_type type, int ms)
{
	int64_t end = mono_ms() + ms;
	struct ibv_async_event ev;

	while (next_async_event(ctx, (int)(end - mono_ms()), &ev)) {
		uint32_t num = ev.element.qp ? ev.element.qp->qp_num : 0;

		note("async event %s (QP %u)",
		     ibv_event_type_str(ev.event_type), num);
		if (ev.event_type == type && ev.element.qp == qp)
			return true;
		if (mono_ms() > end)
			break;
	}
	return false;
}

static void cross_send(struct ibv_context *ctx, struct pair *p,
		       uint8_t *pd1_buf, struct ibv_mr *mr1, uint8_t *buf2,
		       struct ibv_mr *mr2)
{
	struct ibv_wc wc[KICKS + 2];
	int got, i, err;

	step("A (PD2) posts a Send from MR1 (PD1, lkey 0x%08x)", mr1->lkey);
	memset(pd1_buf, PD1_PATTERN, LEN);
	post_recv(p->b, ID_BAD, buf2 + LEN, LEN, mr2->lkey);
	post_send(p->a, ID_BAD, pd1_buf, BAD_LEN, mr1->lkey);
	got = poll_bounded(p->cq_a, wc, 1, BOUND_MS);
	if (!got) {
		finding("the Send from another PD's memory did not complete within %d ms (expected LOC_PROT_ERR)",
			BOUND_MS);
	} else if (wc[0].wr_id != ID_BAD || wc[0].status != IBV_WC_LOC_PROT_ERR) {
		finding("the Send from another PD's memory completed as WR %#" PRIx64 " with %s, expected WR %#x with LOC_PROT_ERR",
			(uint64_t)wc[0].wr_id, ibv_wc_status_str(wc[0].status),
			ID_BAD);
	} else {
		note("the Send from PD1's memory: LOC_PROT_ERR");
	}

	step("%d more Sends, each followed by a raw doorbell", KICKS);
	for (i = 0; i < KICKS; i++) {
		post_send(p->a, ID_AFTER + i, buf2, MSG, mr2->lkey);
		err = raw_doorbell(p->a);
		if (err)
			note("raw doorbell %d: %s", i, errname(err));
	}
	if (got && wc[0].status != IBV_WC_SUCCESS) {
		int n = poll_bounded(p->cq_a, wc, KICKS, BOUND_MS);

		if (n != KICKS)
			finding("%d of the %d WRs posted after the failed one completed within %d ms",
				n, KICKS, BOUND_MS);
		for (i = 0; i < n; i++)
			if (wc[i].wr_id != (uint64_t)(ID_AFTER + i) ||
			    wc[i].status != IBV_WC_WR_FLUSH_ERR) {
				finding("WR %d after the failed one: WR %#" PRIx64 " with %s, expected WR %#x with WR_FLUSH_ERR",
					i, (uint64_t)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status),
					ID_AFTER + i);
				break;
			}
		if (n == KICKS)
			note("the %d WRs after it flushed in order", n);
	}

	step("A is in ERROR, with IBV_EVENT_QP_ACCESS_ERR");
	if (!wait_state(p->a, IBV_QPS_ERR, BOUND_MS))
		finding("QP A %u is in %s, expected ERR", p->a->qp_num,
			state_name(get_state(p->a)));
	if (!wait_qp_event(ctx, p->a, IBV_EVENT_QP_ACCESS_ERR, BOUND_MS))
		finding("no IBV_EVENT_QP_ACCESS_ERR for QP A %u within %d ms",
			p->a->qp_num, BOUND_MS);

	/* B may see its receives flushed; never PD1's octets. */
	got = poll_bounded(p->cq_b, wc, ARRAY_SIZE(wc), QUIET_MS);
	for (i = 0; i < got; i++)
		if (wc[i].status == IBV_WC_SUCCESS)
			finding("B received %u octets (WR %#" PRIx64 ") after the refused Send",
				wc[i].byte_len, (uint64_t)wc[i].wr_id);
	if (buf2[LEN] == PD1_PATTERN)
		finding("PD1's octets reached B's receive buffer");
}

static void cross_read(struct ibv_context *ctx, struct pair *p,
		       uint8_t *pd1_buf, struct ibv_mr *mr1, uint8_t *buf2,
		       struct ibv_mr *mr2)
{
	struct ibv_wc wc[4];
	int got, i, err;

	(void)ctx;
	step("A reads %d octets of PD2's memory from B (works)", MSG);
	memset(buf2 + LEN, 0x22, MSG);
	memset(buf2, 0, MSG);
	post_read(p->a, ID_LEGIT, buf2, mr2->lkey, (uintptr_t)(buf2 + LEN),
		  mr2->rkey);
	expect_one_ok(p->cq_a, ID_LEGIT, "A's Read of PD2's memory");
	if (buf2[0] != 0x22 || buf2[MSG - 1] != 0x22)
		fail("A's Read of PD2's memory placed 0x%02x..0x%02x, not 0x22",
		     buf2[0], buf2[MSG - 1]);

	step("A (PD2) reads from STag 0x%08x of MR1 (PD1); the responder B is QP %u (PD2)",
	     mr1->rkey, p->b->qp_num);
	printf("responder QP %u\n", p->b->qp_num);
	memset(pd1_buf, PD1_PATTERN, LEN);
	memset(buf2, 0, LEN);
	post_read(p->a, ID_BAD, buf2, mr2->lkey, (uintptr_t)pd1_buf, mr1->rkey);
	got = poll_bounded(p->cq_a, wc, 1, BOUND_MS);
	if (!got) {
		finding("the Read of another PD's STag did not complete within %d ms (expected an error, REM_ACCESS_ERR)",
			BOUND_MS);
	} else if (wc[0].wr_id != ID_BAD) {
		finding("completion of WR %#" PRIx64 " with %s, expected the Read (WR %#x)",
			(uint64_t)wc[0].wr_id, ibv_wc_status_str(wc[0].status),
			ID_BAD);
	} else if (wc[0].status == IBV_WC_SUCCESS) {
		finding("the Read of another PD's STag succeeded");
	} else {
		note("the Read completed with %s%s", ibv_wc_status_str(wc[0].status),
		     wc[0].status == IBV_WC_REM_ACCESS_ERR ? " (as expected)" :
		     " (an error, but not the expected REM_ACCESS_ERR)");
	}

	step("B's and A's doorbells rung %d times", KICKS);
	for (i = 0; i < KICKS; i++) {
		err = raw_doorbell(p->b);
		if (err)
			note("B's raw doorbell %d: %s", i, errname(err));
		err = raw_doorbell(p->a);
		if (err)
			note("A's raw doorbell %d: %s", i, errname(err));
	}

	step("B is in ERROR, no octet of MR1 reached A");
	if (!wait_state(p->b, IBV_QPS_ERR, BOUND_MS))
		finding("responder QP B %u is in %s, expected ERR",
			p->b->qp_num, state_name(get_state(p->b)));
	for (i = 0; i < LEN; i++)
		if (buf2[i] == PD1_PATTERN) {
			finding("octet %d of A's Read sink holds PD1's pattern", i);
			break;
		}
}

/* PAIR_SENDS Sends over a fresh pair of PD2, each checked. */
static void second_pair(struct ibv_context *ctx, struct ibv_pd *pd2,
			uint8_t *buf2, struct ibv_mr *mr2)
{
	uint8_t *src = buf2, *dst = buf2 + LEN;
	struct ibv_wc wc;
	struct pair p;
	int i, k;

	step("a second pair of PD2 on the same device moves %d checked Sends",
	     PAIR_SENDS);
	make_pair(ctx, pd2, &p, "second pair");
	for (i = 0; i < PAIR_SENDS; i++) {
		uint32_t len = MSG + i;

		for (k = 0; k < (int)len; k++)
			src[k] = (uint8_t)(i * 7 + k);
		memset(dst, 0, LEN);
		post_recv(p.b, i, dst, LEN, mr2->lkey);
		post_send(p.a, i, src, len, mr2->lkey);
		expect_one_ok(p.cq_a, i, "second pair, Send");
		if (poll_bounded(p.cq_b, &wc, 1, WAIT_MS) != 1)
			fail("second pair: receive %d did not complete within %d ms",
			     i, WAIT_MS);
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != (uint64_t)i ||
		    wc.byte_len != len)
			fail("second pair: receive %d: WR %" PRIu64 ", %s, %u octets (expected %u)",
			     i, (uint64_t)wc.wr_id,
			     ibv_wc_status_str(wc.status), wc.byte_len, len);
		if (memcmp(src, dst, len))
			fail("second pair: Send %d arrived altered", i);
	}
	note("%d Sends arrived intact", PAIR_SENDS);
	free_pair(&p);
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd1, *pd2;
	struct ibv_mr *mr1, *mr2;
	uint8_t *pd1_buf, *buf2;
	bool read;
	struct pair p;

	set_prog(argv[0]);
	if (argc != 3 || (strcmp(argv[2], "send") && strcmp(argv[2], "read"))) {
		fprintf(stderr, "usage: %s DEVICE send|read\n", prog);
		return EXIT_FAIL;
	}
	read = !strcmp(argv[2], "read");
	ctx = open_device(argv[1]);
	pd1 = make_pd(ctx);
	pd2 = make_pd(ctx);
	pd1_buf = page_alloc(LEN);
	buf2 = page_alloc(2 * LEN);
	mr1 = ibv_reg_mr(pd1, pd1_buf, LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	mr2 = ibv_reg_mr(pd2, buf2, 2 * LEN, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr1 || !mr2)
		fail_or_skip(errno, "ibv_reg_mr");
	note("MR1 (PD1) STag 0x%08x, MR2 (PD2) STag 0x%08x", mr1->rkey,
	     mr2->rkey);

	step("PD2: QPs A and B connected through GID %d", GID_INDEX);
	make_pair(ctx, pd2, &p, "first pair");
	if (read)
		cross_read(ctx, &p, pd1_buf, mr1, buf2, mr2);
	else {
		legit_send(&p, buf2, buf2 + LEN, mr2);
		cross_send(ctx, &p, pd1_buf, mr1, buf2, mr2);
	}

	second_pair(ctx, pd2, buf2, mr2);

	free_pair(&p);
	must(ibv_dereg_mr(mr1), "ibv_dereg_mr(MR1)");
	must(ibv_dereg_mr(mr2), "ibv_dereg_mr(MR2)");
	must(ibv_dealloc_pd(pd1), "ibv_dealloc_pd(PD1)");
	must(ibv_dealloc_pd(pd2), "ibv_dealloc_pd(PD2)");
	page_free(pd1_buf, LEN);
	page_free(buf2, 2 * LEN);
	ibv_close_device(ctx);
	if (findings)
		fail("%d findings above: siw let a WR cross from PD2 into PD1's memory, or did not refuse it cleanly",
		     findings);
	pass();
}
