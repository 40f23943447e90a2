// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * srq_limit DEVICE: SRQ creation, query, limit arming and modify errors.
 *
 * Without traffic (the limit event when Sends consume receives is
 * srq_limit_traffic.c's):
 * - creation grants at least what was asked and query_srq reads back
 *   max_wr, max_sge and srq_limit 0; creation beyond max_srq_wr or
 *   max_srq_sge fails;
 * - receives can be posted; arming the limit (IBV_SRQ_LIMIT) reads back,
 *   re-arming with another value too, disarming (0) too;
 * - a limit above max_wr fails with EINVAL and changes nothing; resizing
 *   (IBV_SRQ_MAX_WR) fails unless the device claims SRQ_RESIZE;
 * - a QP attached to the SRQ pins it (destroying the SRQ fails with EBUSY)
 *   and moving that QP to ERROR flushes nothing of the SRQ's receives:
 *   they belong to the SRQ, not to the QP. IBV_EVENT_QP_LAST_WQE_REACHED,
 *   if the kernel sends one, is printed;
 * - arming a limit above the number of posted receives: any
 *   IBV_EVENT_SRQ_LIMIT_REACHED is printed, not required.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define ASK_WR 64
#define ASK_SGE 2
#define POSTED 16

static int set_limit(struct ibv_srq *srq, uint32_t limit)
{
	struct ibv_srq_attr attr = { .srq_limit = limit };

	return ibv_modify_srq(srq, &attr, IBV_SRQ_LIMIT);
}

static struct ibv_srq *try_srq(struct ibv_pd *pd, uint32_t wr, uint32_t sge)
{
	struct ibv_srq_init_attr init = {
		.attr = { .max_wr = wr, .max_sge = sge },
	};

	return ibv_create_srq(pd, &init);
}

static void test_create(struct ibv_context *ctx, struct ibv_pd *pd)
{
	struct ibv_device_attr dev;
	struct ibv_srq *srq;

	must(ibv_query_device(ctx, &dev), "ibv_query_device");
	step("creation beyond max_srq_wr (%d) or max_srq_sge (%d) fails",
	     dev.max_srq_wr, dev.max_srq_sge);
	srq = try_srq(pd, dev.max_srq_wr + 1, 1);
	if (srq)
		fail("SRQ of max_srq_wr + 1 entries was created");
	note("max_srq_wr + 1: %s", errname(errno));
	srq = try_srq(pd, 4, dev.max_srq_sge + 1);
	if (srq)
		fail("SRQ with max_srq_sge + 1 SGEs was created");
	note("max_srq_sge + 1: %s", errname(errno));
}

static void test_limit(struct ibv_context *ctx, struct ibv_srq *srq,
		       struct ibv_sge *sge)
{
	struct ibv_device_attr dev;
	struct ibv_srq_attr attr = srq_attr(srq);
	struct ibv_async_event ev;
	int err;

	step("post %d receives, arm the limit", POSTED);
	post_srq_recvs(srq, 0x100, POSTED, sge);
	must(set_limit(srq, POSTED / 2), "ibv_modify_srq(IBV_SRQ_LIMIT)");
	expect_srq_limit(srq, POSTED / 2, "after arming");
	must(set_limit(srq, POSTED / 4), "ibv_modify_srq(IBV_SRQ_LIMIT) again");
	expect_srq_limit(srq, POSTED / 4, "after re-arming");

	step("a limit above max_wr (%u) fails with EINVAL", attr.max_wr);
	err = set_limit(srq, attr.max_wr + 1);
	if (err != EINVAL)
		fail("srq_limit = max_wr + 1: %s, expected EINVAL",
		     err ? errname(err) : "succeeded");
	expect_srq_limit(srq, POSTED / 4, "after the refused modify");
	if (srq_attr(srq).max_wr != attr.max_wr)
		fail("refused modify changed max_wr");

	step("resize (IBV_SRQ_MAX_WR)");
	must(ibv_query_device(ctx, &dev), "ibv_query_device");
	attr.max_wr *= 2;
	err = ibv_modify_srq(srq, &attr, IBV_SRQ_MAX_WR);
	if (dev.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) {
		if (err)
			fail_err(err, "resize with SRQ_RESIZE claimed");
	} else if (!err) {
		fail("resize succeeded but the device does not claim SRQ_RESIZE");
	} else {
		note("resize refused: %s", errname(err));
	}

	step("disarm, then arm above the number of posted receives");
	must(set_limit(srq, 0), "ibv_modify_srq(srq_limit 0)");
	expect_srq_limit(srq, 0, "after disarming");
	must(set_limit(srq, POSTED * 2), "ibv_modify_srq(srq_limit > posted)");
	if (wait_async_event(ctx, IBV_EVENT_SRQ_LIMIT_REACHED, QUIET_MS, &ev))
		note("SRQ_LIMIT_REACHED on arming above the fill level");
	else
		note("no SRQ_LIMIT_REACHED on arming above the fill level");
}

static void test_attached_qp(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_srq *srq)
{
	struct ibv_cq *cq = make_cq(ctx, 64);
	struct qp_spec spec = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.max_send_wr = 4, .max_sge = 1,
	};
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(pd, &spec, &cap);
	struct ibv_async_event ev;
	struct ibv_wc wc[64];
	int err, n;

	step("a QP on the SRQ");
	note("QP %u on the SRQ: max_recv_wr %u", qp->qp_num, cap.max_recv_wr);
	err = ibv_destroy_srq(srq);
	if (err != EBUSY)
		fail("destroying an SRQ with a QP attached: %s, expected EBUSY",
		     err ? errname(err) : "succeeded");

	step("ERROR on the QP does not flush the SRQ's receives");
	set_state(qp, IBV_QPS_INIT);
	set_state(qp, IBV_QPS_ERR);
	n = collect_none(cq, wc, ARRAY_SIZE(wc));
	if (n)
		fail("QP going to ERROR flushed %d SRQ receives (first wr_id %#llx)",
		     n, (unsigned long long)wc[0].wr_id);
	if (wait_async_event(ctx, IBV_EVENT_QP_LAST_WQE_REACHED, QUIET_MS, &ev))
		note("QP_LAST_WQE_REACHED reported");
	else
		note("no QP_LAST_WQE_REACHED");
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
	must(ibv_destroy_cq(cq), "ibv_destroy_cq");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_srq_attr attr;
	struct ibv_srq *srq;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	void *buf;

	step("create an SRQ of %d WRs, %d SGEs", ASK_WR, ASK_SGE);
	srq = try_srq(pd, ASK_WR, ASK_SGE);
	if (!srq)
		fail_or_skip(errno, "ibv_create_srq");
	attr = srq_attr(srq);
	note("query: max_wr %u max_sge %u srq_limit %u", attr.max_wr,
	     attr.max_sge, attr.srq_limit);
	if (attr.max_wr < ASK_WR || attr.max_sge < ASK_SGE)
		fail("SRQ granted %u WRs / %u SGEs, asked %d / %d",
		     attr.max_wr, attr.max_sge, ASK_WR, ASK_SGE);
	if (attr.srq_limit != 0)
		fail("new SRQ reads srq_limit %u, expected 0", attr.srq_limit);

	buf = page_alloc(4096);
	mr = reg_or_null(pd, buf, 4096);
	sge = (struct ibv_sge){ (uintptr_t)buf, 64, mr ? mr->lkey : 0x1234 };

	test_create(ctx, pd);
	test_limit(ctx, srq, &sge);
	test_attached_qp(ctx, pd, srq);

	must(ibv_destroy_srq(srq), "ibv_destroy_srq");
	if (mr)
		must(ibv_dereg_mr(mr), "ibv_dereg_mr");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	pass();
}
