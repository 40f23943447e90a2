// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * query_qp DEVICE: QP state and attributes read back through
 * ibv_query_qp after each modify, and create-time limits.
 *
 * Checks:
 * - a new QP reads INIT: an iWARP RNIC has no RESET apart from IDLE, and
 *   rdma-core's own test_query_rc_qp expects INIT from IBV_NODE_RNIC
 *   devices; it can be moved to RESET, and RESET -> INIT -> RTR each
 *   read back exactly; the
 *   access flags set with INIT read back; RTR -> RTS without a connection
 *   may be refused, and the state then still reads RTR; -> ERR reads ERR;
 *   ERR -> RESET -> INIT -> ERR works (any state may go to RESET; a reset
 *   QP is usable again); RESET -> ERR directly works;
 * - transitions IB forbids (RESET -> RTR, RESET -> RTS, INIT -> RTS) fail
 *   and leave the state unchanged;
 * - the capabilities and sq_sig_all read back as granted at create;
 * - creation beyond the device limits (WRs, SGEs, inline data) and of
 *   non-RC types (UC, UD) fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common.h"

#define INIT_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		     IBV_ACCESS_REMOTE_READ)

static void expect_state(struct ibv_qp *qp, enum ibv_qp_state want,
			 const char *after)
{
	enum ibv_qp_state got = get_state(qp);

	if (got != want)
		fail("after %s QP %u reads %s, expected %s", after, qp->qp_num,
		     state_name(got), state_name(want));
	note("after %s: %s", after, state_name(got));
}

static void to_state(struct ibv_qp *qp, enum ibv_qp_state from,
		     enum ibv_qp_state to)
{
	char what[64];

	set_state(qp, to);
	snprintf(what, sizeof(what), "%s -> %s", state_name(from),
		 state_name(to));
	expect_state(qp, to, what);
}

static void refused(struct ibv_qp *qp, enum ibv_qp_state from,
		    enum ibv_qp_state to)
{
	char what[80];
	int err = try_set_state(qp, to);

	snprintf(what, sizeof(what), "refused %s -> %s", state_name(from),
		 state_name(to));
	if (!err)
		fail("%s -> %s is not a valid transition but succeeded",
		     state_name(from), state_name(to));
	note("%s -> %s refused: %s", state_name(from), state_name(to),
	     errname(err));
	expect_state(qp, from, what);
}

static void check_caps(struct ibv_qp *qp, const struct ibv_qp_cap *granted,
		       int sig_all)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	memset(&init, 0, sizeof(init));
	memset(&attr, 0, sizeof(attr));
	must(ibv_query_qp(qp, &attr, IBV_QP_STATE | IBV_QP_CAP, &init),
	     "ibv_query_qp(IBV_QP_CAP)");
	note("query: send %u/%u sge, recv %u/%u sge, inline %u, sig_all %d",
	     init.cap.max_send_wr, init.cap.max_send_sge,
	     init.cap.max_recv_wr, init.cap.max_recv_sge,
	     init.cap.max_inline_data, init.sq_sig_all);
	if (init.cap.max_send_wr != granted->max_send_wr ||
	    init.cap.max_recv_wr != granted->max_recv_wr ||
	    init.cap.max_send_sge != granted->max_send_sge ||
	    init.cap.max_recv_sge != granted->max_recv_sge)
		fail("query_qp caps %u/%u/%u/%u differ from the granted %u/%u/%u/%u (send_wr/recv_wr/send_sge/recv_sge)",
		     init.cap.max_send_wr, init.cap.max_recv_wr,
		     init.cap.max_send_sge, init.cap.max_recv_sge,
		     granted->max_send_wr, granted->max_recv_wr,
		     granted->max_send_sge, granted->max_recv_sge);
	/* Inline room may be reported larger than granted, never smaller. */
	if (init.cap.max_inline_data < granted->max_inline_data)
		fail("query_qp max_inline_data %u below the granted %u",
		     init.cap.max_inline_data, granted->max_inline_data);
	if (memcmp(&attr.cap, &init.cap, sizeof(attr.cap)))
		fail("query_qp: attr.cap and init_attr.cap differ");
	if (!!init.sq_sig_all != !!sig_all)
		fail("query_qp: sq_sig_all %d, created with %d",
		     init.sq_sig_all, sig_all);
}

static void check_access(struct ibv_qp *qp, unsigned int want)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	memset(&attr, 0, sizeof(attr));
	must(ibv_query_qp(qp, &attr, IBV_QP_ACCESS_FLAGS, &init),
	     "ibv_query_qp(IBV_QP_ACCESS_FLAGS)");
	if (attr.qp_access_flags != want)
		fail("qp_access_flags read %#x, set %#x", attr.qp_access_flags,
		     want);
}

static void test_states(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct qp_spec spec = {
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 32,
		.max_recv_wr = 64, .max_sge = 2, .max_inline = 32,
		.sig_all = true,
	};
	struct ibv_qp_cap cap;
	struct ibv_qp *qp = make_qp(pd, &spec, &cap);
	int err;

	step("create: INIT (RNIC), capabilities read back");
	expect_state(qp, IBV_QPS_INIT, "create");
	if (cap.max_send_sge < 2 || cap.max_recv_sge < 2 ||
	    cap.max_inline_data < 32)
		fail("granted %u/%u SGEs and %u inline bytes, asked 2/2 and 32",
		     cap.max_send_sge, cap.max_recv_sge, cap.max_inline_data);
	check_caps(qp, &cap, 1);
	refused(qp, IBV_QPS_INIT, IBV_QPS_RTS);
	to_state(qp, IBV_QPS_INIT, IBV_QPS_RESET);

	step("invalid transitions from RESET are refused");
	refused(qp, IBV_QPS_RESET, IBV_QPS_RTR);
	refused(qp, IBV_QPS_RESET, IBV_QPS_RTS);

	step("RESET -> INIT -> RTR");
	to_state(qp, IBV_QPS_RESET, IBV_QPS_INIT);
	check_access(qp, INIT_ACCESS);
	refused(qp, IBV_QPS_INIT, IBV_QPS_RTS);
	to_state(qp, IBV_QPS_INIT, IBV_QPS_RTR);

	step("RTR -> RTS without a connection");
	err = try_set_state(qp, IBV_QPS_RTS);
	if (err) {
		note("RTR -> RTS refused: %s", errname(err));
		expect_state(qp, IBV_QPS_RTR, "refused RTR -> RTS");
	} else {
		expect_state(qp, IBV_QPS_RTS, "RTR -> RTS");
	}

	step("-> ERR -> RESET -> INIT -> ERR");
	to_state(qp, get_state(qp), IBV_QPS_ERR);
	to_state(qp, IBV_QPS_ERR, IBV_QPS_RESET);
	check_caps(qp, &cap, 1);
	to_state(qp, IBV_QPS_RESET, IBV_QPS_INIT);
	to_state(qp, IBV_QPS_INIT, IBV_QPS_ERR);
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");

	step("RESET -> ERR");
	spec.sig_all = false;
	qp = make_qp(pd, &spec, &cap);
	check_caps(qp, &cap, 0);
	to_state(qp, IBV_QPS_INIT, IBV_QPS_RESET);
	to_state(qp, IBV_QPS_RESET, IBV_QPS_ERR);
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
}

static void must_not_create(struct ibv_pd *pd, const struct qp_spec *spec,
			    enum ibv_qp_type type, const char *why)
{
	struct ibv_qp *qp = try_make_qp(pd, spec, type, NULL);

	if (qp)
		fail("%s: ibv_create_qp succeeded (QP %u)", why, qp->qp_num);
	note("%s: refused, %s", why, errname(errno));
}

static void test_limits(struct ibv_context *ctx, struct ibv_pd *pd,
			struct ibv_cq *cq)
{
	struct ibv_device_attr dev;
	struct qp_spec ok = {
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4,
		.max_recv_wr = 4, .max_sge = 1,
	};
	struct qp_spec bad;

	must(ibv_query_device(ctx, &dev), "ibv_query_device");
	step("creation beyond the device limits fails");
	bad = ok;
	bad.max_send_wr = dev.max_qp_wr + 1;
	must_not_create(pd, &bad, IBV_QPT_RC, "max_send_wr > max_qp_wr");
	bad = ok;
	bad.max_recv_wr = dev.max_qp_wr + 1;
	must_not_create(pd, &bad, IBV_QPT_RC, "max_recv_wr > max_qp_wr");
	bad = ok;
	bad.max_sge = dev.max_sge + 1;
	must_not_create(pd, &bad, IBV_QPT_RC, "max_sge > device max_sge");
	bad = ok;
	bad.max_inline = 4096;
	must_not_create(pd, &bad, IBV_QPT_RC, "4 KiB inline data");

	step("only RC QPs");
	must_not_create(pd, &ok, IBV_QPT_UC, "UC QP");
	must_not_create(pd, &ok, IBV_QPT_UD, "UD QP");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_cq *cq = make_cq(ctx, 64);

	test_states(pd, cq);
	test_limits(ctx, pd, cq);

	must(ibv_destroy_cq(cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	pass();
}
