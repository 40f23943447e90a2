// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_destroy_flush DEVICE: what happens to posted work requests when a QP
 * goes to ERROR or is destroyed.
 *
 * Checks:
 * 1. ERROR flushes everything posted: receives and sends posted in INIT
 *    (libsiw writes the SQEs into the ring, its doorbell may fail while the
 *    QP is not RTS, the SQEs stay there) each complete once with
 *    WR_FLUSH_ERR, wr_id intact, in posting order, opcode RECV / SEND, on
 *    their own CQ. Sends posted while in ERROR complete the same way (IB:
 *    WRs posted in the Error state complete with flush error; libsiw rings
 *    the doorbell for them).
 * 2. Destroying a QP with receives and sends outstanding, without moving it
 *    to ERROR first: IB lets the CQ hold flush completions for them or not;
 *    what arrives must be all of them or none, in order, WR_FLUSH_ERR. A QP
 *    created afterwards on the same CQs sees only its own wr_ids.
 * 3. Churn: QPs created, loaded and destroyed in a row leave only well
 *    formed completions; the guest test then checks the module unloads
 *    without leaks.
 * 4. A stream of sends posted in ERROR, in batches of 1..8 into a ring of
 *    16, as fast as completions free slots: each completes exactly once,
 *    in order, WR_FLUSH_ERR. siw flushes from the doorbell and again a
 *    tick later (libsiw skips the doorbell while the SQE before is still
 *    VALID), so flush passes run beside the posts.
 *
 * Receives posted while in ERROR are not tested: libsiw writes them into
 * the ring without telling the kernel, so nothing can flush them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define NRECV 16
#define NSEND 4
#define NSEND_ERR 3
#define CHURN_QPS 20
#define CHURN_RECV 8
#define CHURN_SEND 2
#define CQE 256

#define ID_RECV1 0x1000
#define ID_SEND1 0x1100
#define ID_SEND1_ERR 0x1200
#define ID_RECV2 0x2000
#define ID_SEND2 0x2100
#define ID_RECV3 0x3000
#define ID_CHURN_SEND 0x8000
#define ID_STREAM 0x100000
#define STREAM_SENDS 5000
#define STREAM_RING 16

static struct ibv_wc wc[2 * CQE];
static struct ibv_sge sge;

static struct ibv_qp *loaded_qp(struct ibv_pd *pd, struct ibv_cq *scq,
				struct ibv_cq *rcq, uint64_t recv_id, int nrecv,
				uint64_t send_id, int nsend)
{
	struct qp_spec spec = {
		.send_cq = scq, .recv_cq = rcq,
		.max_send_wr = 16, .max_recv_wr = 32, .max_sge = 1,
	};
	struct ibv_qp *qp = make_qp(pd, &spec, NULL);
	int err;

	set_state(qp, IBV_QPS_INIT);
	post_recvs(qp, recv_id, nrecv, &sge);
	if (nsend) {
		static int last_err = -12345;

		/* libsiw returns the doorbell's error; print each new one. */
		err = post_sends(qp, send_id, nsend, &sge);
		if (err != last_err)
			note("QP %u: ibv_post_send of %d SENDs in INIT returned %d%s%s",
			     qp->qp_num, nsend, err, err > 0 ? ": " : "",
			     err > 0 ? errname(err) : "");
		last_err = err;
	}
	return qp;
}

static void expect_flushes(const char *what, struct ibv_cq *cq, int n,
			   uint64_t first_id, uint32_t qp_num, int opcode)
{
	int got = collect(cq, wc, n, ARRAY_SIZE(wc));

	if (got != n)
		fail("%s: %d completions, expected %d", what, got, n);
	check_flushed(what, wc, n, first_id, qp_num, opcode);
	note("%s: %d flush completions in order", what, n);
}

/* 1. */
static void test_error_flushes(struct ibv_pd *pd, struct ibv_cq *scq,
			       struct ibv_cq *rcq)
{
	struct ibv_qp *qp;
	int err;

	step("ERROR flushes %d receives and %d sends posted in INIT",
	     NRECV, NSEND);
	qp = loaded_qp(pd, scq, rcq, ID_RECV1, NRECV, ID_SEND1, NSEND);
	set_state(qp, IBV_QPS_ERR);
	expect_flushes("receives flushed by ERROR", rcq, NRECV, ID_RECV1,
		       qp->qp_num, IBV_WC_RECV);
	expect_flushes("sends flushed by ERROR", scq, NSEND, ID_SEND1,
		       qp->qp_num, IBV_WC_SEND);

	step("sends posted in ERROR complete with WR_FLUSH_ERR");
	err = post_sends(qp, ID_SEND1_ERR, NSEND_ERR, &sge);
	if (err)
		fail_err(err, "ibv_post_send in ERROR (libsiw's doorbell)");
	expect_flushes("sends posted in ERROR", scq, NSEND_ERR, ID_SEND1_ERR,
		       qp->qp_num, IBV_WC_SEND);
	if (collect_none(rcq, wc, ARRAY_SIZE(wc)))
		fail("receive CQ got completions after the flush");
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
}

/* What a destroy left in @cq: all @n of the WRs from @first_id, or none. */
static int destroy_leftovers(const char *what, struct ibv_cq *cq, int n,
			     uint64_t first_id, uint32_t qp_num, int opcode)
{
	int got = collect_none(cq, wc, ARRAY_SIZE(wc));

	if (got != 0 && got != n)
		fail("%s: %d completions after destroy, expected %d or none",
		     what, got, n);
	check_flushed(what, wc, got, first_id, qp_num, opcode);
	note("%s: destroy left %d of %d as flush completions", what, got, n);
	return got;
}

/* 2. */
static void test_destroy(struct ibv_pd *pd, struct ibv_cq *scq,
			 struct ibv_cq *rcq)
{
	struct ibv_qp *qp;
	uint32_t qpn;

	step("destroy a QP with %d receives and %d sends outstanding",
	     NRECV, NSEND);
	qp = loaded_qp(pd, scq, rcq, ID_RECV2, NRECV, ID_SEND2, NSEND);
	qpn = qp->qp_num;
	must(ibv_destroy_qp(qp), "ibv_destroy_qp with WRs outstanding");
	destroy_leftovers("receives of a destroyed QP", rcq, NRECV, ID_RECV2,
			  qpn, IBV_WC_RECV);
	destroy_leftovers("sends of a destroyed QP", scq, NSEND, ID_SEND2,
			  qpn, IBV_WC_SEND);

	step("a new QP on the same CQs sees only its own WRs");
	qp = loaded_qp(pd, scq, rcq, ID_RECV3, 4, 0, 0);
	set_state(qp, IBV_QPS_ERR);
	expect_flushes("new QP after destroy", rcq, 4, ID_RECV3, qp->qp_num,
		       IBV_WC_RECV);
	if (collect_none(scq, wc, ARRAY_SIZE(wc)))
		fail("send CQ got completions nobody posted (wr_id %#" PRIx64 ")",
		     (uint64_t)wc[0].wr_id);
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
}

/* Completions of churned QP @q carry ids (q << 8) + i, sends + 0x8000. */
static void check_churn(struct ibv_cq *cq, const uint32_t *qpn, bool send)
{
	int next[CHURN_QPS] = { 0 };
	int got = collect_none(cq, wc, ARRAY_SIZE(wc));
	int i, q, idx;

	for (i = 0; i < got; i++) {
		uint64_t id = wc[i].wr_id - (send ? ID_CHURN_SEND : 0);

		q = (int)(id >> 8);
		idx = (int)(id & 0xff);
		if (q < 0 || q >= CHURN_QPS || idx != next[q] ||
		    wc[i].qp_num != qpn[q] ||
		    wc[i].status != IBV_WC_WR_FLUSH_ERR)
			fail("churn: unexpected completion wr_id %#" PRIx64
			     " QP %u status %s",
			     (uint64_t)wc[i].wr_id, wc[i].qp_num,
			     ibv_wc_status_str(wc[i].status));
		next[q]++;
	}
	for (q = 0; q < CHURN_QPS; q++) {
		int want = send ? CHURN_SEND : CHURN_RECV;

		/* Odd QPs went to ERROR before destroy: all flushed. */
		if (next[q] != want && (q % 2 || next[q] != 0))
			fail("churn: QP %u (%s before destroy) has %d of %d %s flushed",
			     qpn[q], q % 2 ? "ERROR" : "INIT", next[q], want,
			     send ? "sends" : "receives");
	}
	note("churn: %d %s completions, all well formed", got,
	     send ? "send" : "receive");
}

/* 3. */
static void test_churn(struct ibv_pd *pd, struct ibv_cq *scq,
		       struct ibv_cq *rcq)
{
	uint32_t qpn[CHURN_QPS];
	struct ibv_qp *qp;
	int q;

	step("churn: %d QPs created, loaded and destroyed", CHURN_QPS);
	for (q = 0; q < CHURN_QPS; q++) {
		qp = loaded_qp(pd, scq, rcq, (uint64_t)q << 8, CHURN_RECV,
			       ID_CHURN_SEND + ((uint64_t)q << 8), CHURN_SEND);
		qpn[q] = qp->qp_num;
		if (q % 2)
			set_state(qp, IBV_QPS_ERR);
		must(ibv_destroy_qp(qp), "ibv_destroy_qp (churn)");
	}
	check_churn(rcq, qpn, false);
	check_churn(scq, qpn, true);
}

/* 4. */
static void test_error_stream(struct ibv_pd *pd, struct ibv_cq *scq,
			      struct ibv_cq *rcq)
{
	struct qp_spec spec = {
		.send_cq = scq, .recv_cq = rcq,
		.max_send_wr = STREAM_RING, .max_recv_wr = 1, .max_sge = 1,
	};
	struct ibv_qp *qp = make_qp(pd, &spec, NULL);
	int posted = 0, done = 0, idle_ms = 0, batch = 1, k, n, err;

	step("%d sends posted in ERROR in batches, each flushed once, in order",
	     STREAM_SENDS);
	set_state(qp, IBV_QPS_INIT);
	set_state(qp, IBV_QPS_ERR);
	while (done < STREAM_SENDS) {
		k = batch;
		if (k > STREAM_RING - (posted - done))
			k = STREAM_RING - (posted - done);
		if (k > STREAM_SENDS - posted)
			k = STREAM_SENDS - posted;
		if (k > 0) {
			err = post_sends(qp, ID_STREAM + posted, k, &sge);
			if (err)
				fail_err(err, "ibv_post_send of %d in ERROR (%d posted, %d flushed)",
					 k, posted, done);
			posted += k;
			batch = batch % 8 + 1;
		}
		n = ibv_poll_cq(scq, ARRAY_SIZE(wc), wc);
		if (n < 0)
			fail("ibv_poll_cq returned %d", n);
		check_flushed("stream in ERROR", wc, n, ID_STREAM + done,
			      qp->qp_num, IBV_WC_SEND);
		done += n;
		if (done > posted)
			fail("stream in ERROR: %d completions for %d sends",
			     done, posted);
		if (n || k > 0) {
			idle_ms = 0;
			continue;
		}
		if (idle_ms >= WAIT_MS)
			fail("stream in ERROR: %d sends posted, %d flushed, the rest stuck for %d ms",
			     posted, done, idle_ms);
		sleep_ms(1);
		idle_ms++;
	}
	if (collect_none(scq, wc, ARRAY_SIZE(wc)))
		fail("stream in ERROR: completions beyond the %d sends",
		     STREAM_SENDS);
	note("stream in ERROR: %d sends flushed once each, in order",
	     STREAM_SENDS);
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_cq *scq = make_cq(ctx, CQE), *rcq = make_cq(ctx, CQE);
	void *buf = page_alloc(4096);
	struct ibv_mr *mr = reg_or_null(pd, buf, 4096);

	sge = (struct ibv_sge){ (uintptr_t)buf, 64, mr ? mr->lkey : 0x1234 };
	test_error_flushes(pd, scq, rcq);
	test_destroy(pd, scq, rcq);
	test_churn(pd, scq, rcq);
	test_error_stream(pd, scq, rcq);

	must(ibv_destroy_cq(scq), "ibv_destroy_cq");
	must(ibv_destroy_cq(rcq), "ibv_destroy_cq");
	if (mr)
		must(ibv_dereg_mr(mr), "ibv_dereg_mr");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	pass();
}
