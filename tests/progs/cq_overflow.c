// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cq_overflow DEVICE: a CQ that overflows with flush completions.
 *
 * A receive CQ of N entries (N = what the kernel granted), an RC QP whose
 * receive queue holds N + EXTRA receives, all posted; moving the QP to
 * ERROR flushes them into the CQ, which has room for N only.
 *
 * Checks:
 * - the process gets IBV_EVENT_CQ_ERR for that CQ (ibv_get_async_event
 *   behind poll() with a timeout), and only once;
 * - exactly N completions can be polled: the first N receives in posting
 *   order, each WR_FLUSH_ERR from this QP, and nothing after them;
 * - the QP reads back as ERR, everything can be destroyed; the guest test
 *   checks the kernel log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common.h"

#define ASK_CQE 8
#define EXTRA 8
#define SEND_CQE 16

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_cq *rcq, *scq;
	struct qp_spec spec = { .max_send_wr = 4, .max_sge = 1 };
	struct ibv_async_event ev;
	struct ibv_wc *wc;
	struct ibv_mr *mr;
	struct ibv_sge sge;
	struct ibv_qp *qp;
	int n, posted, got;
	void *buf;

	step("CQ of %d entries, RQ larger than the CQ", ASK_CQE);
	rcq = make_cq(ctx, ASK_CQE);
	scq = make_cq(ctx, SEND_CQE);
	n = rcq->cqe;
	note("receive CQ has %d entries", n);
	if (n > 4096)
		fail("CQ of %d entries granted %d: too many to overflow",
		     ASK_CQE, n);
	posted = n + EXTRA;
	spec.send_cq = scq;
	spec.recv_cq = rcq;
	spec.max_recv_wr = posted;
	qp = make_qp(pd, &spec, NULL);

	buf = page_alloc(4096);
	mr = reg_or_null(pd, buf, 4096);
	sge = (struct ibv_sge){ (uintptr_t)buf, 64, mr ? mr->lkey : 0x1234 };

	set_state(qp, IBV_QPS_INIT);
	step("post %d receives, then move the QP to ERROR", posted);
	post_recvs(qp, 0, posted, &sge);
	set_state(qp, IBV_QPS_ERR);

	step("IBV_EVENT_CQ_ERR arrives for the receive CQ");
	if (!wait_async_event(ctx, IBV_EVENT_CQ_ERR, WAIT_MS, &ev))
		fail("no IBV_EVENT_CQ_ERR within %d ms after %d flushes into a CQ of %d",
		     WAIT_MS, posted, n);
	if (ev.element.cq != rcq)
		fail("IBV_EVENT_CQ_ERR names CQ %p, the overflowed CQ is %p",
		     (void *)ev.element.cq, (void *)rcq);

	step("exactly %d flush completions, the first %d receives", n, n);
	wc = calloc(posted + 1, sizeof(*wc));
	if (!wc)
		fail("out of memory");
	got = collect(rcq, wc, n, posted + 1);
	if (got != n)
		fail("polled %d completions from a CQ of %d after posting %d",
		     got, n, posted);
	check_flushed("overflowed CQ", wc, got, 0, qp->qp_num, IBV_WC_RECV);
	if (collect_none(scq, wc, posted + 1))
		fail("send CQ got a completion with nothing posted");

	step("CQ_ERR is reported once");
	if (wait_async_event(ctx, IBV_EVENT_CQ_ERR, QUIET_MS, &ev))
		fail("IBV_EVENT_CQ_ERR reported more than once");
	if (get_state(qp) != IBV_QPS_ERR)
		fail("QP is in %s after the overflow, expected ERR",
		     state_name(get_state(qp)));

	step("tear down");
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
	must(ibv_destroy_cq(rcq), "ibv_destroy_cq(receive CQ)");
	must(ibv_destroy_cq(scq), "ibv_destroy_cq(send CQ)");
	if (mr)
		must(ibv_dereg_mr(mr), "ibv_dereg_mr");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	free(wc);
	pass();
}
