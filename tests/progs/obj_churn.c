// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * obj_churn DEVICE ROUNDS: every verbs object made, used and destroyed,
 * ROUNDS times, taking whatever error a call returns (tests/vm/295: the
 * kernel fails allocations and siw's own steps on purpose meanwhile).
 *
 * A round opens DEVICE and makes a PD, a CQ, an SRQ, two RC QPs A and B
 * and a third on the SRQ, and registers a buffer; connects A and B to
 * each other without rdma_cm (GID 1); posts a receive on B, then on A a
 * Send, an RDMA Write and an RDMA Read of B's buffer; waits for their
 * completions; destroys everything. A call that fails is reported
 * ("refused: CALL: ERRNO") and the round unwinds from there: an error
 * code is a fine answer. What is not: a posted work request that neither
 * completes (in any status) within wait_s nor is on a QP in ERROR (a
 * hang), a destroy or dereg that fails (a leak), or a completion nobody
 * posted. Those fail the program (exit 1). At the end: "rounds N, calls
 * refused N, completions N (N in error)".
 *
 * OBJ_CHURN_ARM=1: the kernel's task-filtered fault injection (failslab,
 * fail_page_alloc) applies to this process from the first round on, not
 * before: it sets its own make-it-fail once its libraries and provider
 * are loaded and every page of them is resident (mlockall). In a test
 * guest they come over 9p, whose client an allocation failure can leave
 * broken for every process of the guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common.h"

#define LEN	4096
/*
 * How long posted work may take: beyond siw's qp_connect_timeout_ms (10 s
 * by default), after which a QP that never connected is in ERROR.
 * OBJ_CHURN_WAIT_S sets it (the debug kernel is several times slower).
 */
static int wait_s = 15;

static unsigned long refused, completions, wc_errors;

static bool ok(int err, const char *call)
{
	if (!err)
		return true;
	printf("refused: %s: %s\n", call, errname(err));
	refused++;
	return false;
}

/* ok() for the calls that return a pointer or NULL with errno. */
static bool made(const void *p, const char *call)
{
	return ok(p ? 0 : (errno ? errno : ENOMEM), call);
}

static void gone(int err, const char *call)
{
	if (err)
		fail_err(err, "%s failed: the object leaks", call);
}

static struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static struct ibv_qp *qp_on(struct ibv_pd *pd, struct ibv_cq *cq,
			    struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = srq ? 0 : 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(pd, &a);
}

static bool to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ,
	};

	return ok(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		  "ibv_modify_qp(INIT)");
}

static bool to_rts(struct ibv_context *ctx, struct ibv_qp *qp, uint32_t peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer, .max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .sgid_index = 1, .hop_limit = 1 } },
	};

	if (!ok(ibv_query_gid(ctx, 1, 1, &a.ah_attr.grh.dgid),
		"ibv_query_gid(1)") ||
	    !ok(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			      IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			      IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			      IBV_QP_MIN_RNR_TIMER), "ibv_modify_qp(RTR)"))
		return false;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ok(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
				IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
		  "ibv_modify_qp(RTS)");
}

static bool in_error(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &init) ||
	       a.qp_state == IBV_QPS_ERR;
}

/* Post on B and A; wait for what was posted. */
static void traffic(struct ibv_qp *a, struct ibv_qp *b, struct ibv_cq *cq,
		    struct ibv_mr *mr)
{
	uint8_t *buf = mr->addr;
	struct ibv_sge rsge = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_sge ssge = { (uintptr_t)buf + 64, 64, mr->lkey };
	struct ibv_sge wsge = { (uintptr_t)buf + 128, 64, mr->lkey };
	struct ibv_sge dsge = { (uintptr_t)buf + 256, 64, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr rd = {
		.wr_id = 4, .sg_list = &dsge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &wsge, .num_sge = 1, .next = &rd,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr sd = {
		.wr_id = 2, .sg_list = &ssge, .num_sge = 1, .next = &wr,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_recv_wr *rbad;
	struct ibv_send_wr *sbad;
	struct ibv_wc wc[8];
	int64_t end;
	int want, got = 0, n, i;

	rd.wr.rdma.remote_addr = wr.wr.rdma.remote_addr =
		(uintptr_t)buf + 1024;
	rd.wr.rdma.rkey = wr.wr.rdma.rkey = mr->rkey;
	if (!ok(ibv_post_recv(b, &rwr, &rbad), "ibv_post_recv"))
		return;
	want = 1;
	if (ok(ibv_post_send(a, &sd, &sbad), "ibv_post_send"))
		want += 3;
	end = mono_ms() + wait_s * 1000;
	while (got < want) {
		n = ibv_poll_cq(cq, 8, wc);
		if (n < 0)
			fail("ibv_poll_cq: %d", n);
		for (i = 0; i < n; i++) {
			if (wc[i].wr_id < 1 || wc[i].wr_id > 4)
				fail("a completion with wr_id %llu, which nobody posted",
				     (unsigned long long)wc[i].wr_id);
			completions++;
			wc_errors += wc[i].status != IBV_WC_SUCCESS;
		}
		got += n;
		if (mono_ms() < end) {
			if (!n)
				sleep_ms(5);
			continue;
		}
		if (in_error(a) || in_error(b)) {
			/* Flushes come; give them a moment more. */
			if (mono_ms() < end + 2000)
				continue;
			printf("note: %d of %d completions, the QPs in ERROR\n",
			       got, want);
			return;
		}
		fail("%d of %d work requests completed within %d s, and neither QP is in ERROR: they hang",
		     got, want, wait_s);
	}
}

static void round_once(const char *dev)
{
	struct ibv_context *ctx = open_by_name(dev);
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_qp *a = NULL, *b = NULL, *c = NULL;
	struct ibv_srq *srq = NULL;
	struct ibv_mr *mr = NULL;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *pd = NULL;
	void *buf = page_alloc(LEN);

	if (!made(ctx, "ibv_open_device"))
		goto out;
	if (!made(pd = ibv_alloc_pd(ctx), "ibv_alloc_pd") ||
	    !made(cq = ibv_create_cq(ctx, 32, NULL, NULL, 0), "ibv_create_cq") ||
	    !made(mr = ibv_reg_mr(pd, buf, LEN, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ), "ibv_reg_mr") ||
	    !made(srq = ibv_create_srq(pd, &sa), "ibv_create_srq") ||
	    !made(a = qp_on(pd, cq, NULL), "ibv_create_qp(A)") ||
	    !made(b = qp_on(pd, cq, NULL), "ibv_create_qp(B)") ||
	    !made(c = qp_on(pd, cq, srq), "ibv_create_qp(C, SRQ)"))
		goto out;
	if (to_init(a) && to_init(b) && to_rts(ctx, a, b->qp_num) &&
	    to_rts(ctx, b, a->qp_num))
		traffic(a, b, cq, mr);
out:
	if (c)
		gone(ibv_destroy_qp(c), "ibv_destroy_qp(C)");
	if (b)
		gone(ibv_destroy_qp(b), "ibv_destroy_qp(B)");
	if (a)
		gone(ibv_destroy_qp(a), "ibv_destroy_qp(A)");
	if (srq)
		gone(ibv_destroy_srq(srq), "ibv_destroy_srq");
	if (mr)
		gone(ibv_dereg_mr(mr), "ibv_dereg_mr");
	if (cq)
		gone(ibv_destroy_cq(cq), "ibv_destroy_cq");
	if (pd)
		gone(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	if (ctx)
		gone(ibv_close_device(ctx), "ibv_close_device");
	page_free(buf, LEN);
}

/* OBJ_CHURN_ARM (above): load, pin, then let allocations fail. */
static void arm(const char *dev)
{
	struct ibv_context *ctx = open_by_name(dev);
	FILE *f;

	if (!ctx)
		fail("cannot open %s before arming", dev);
	ibv_close_device(ctx);
	if (mlockall(MCL_CURRENT))
		fail_err(errno, "mlockall");
	fflush(stdout);
	f = fopen("/proc/self/make-it-fail", "w");
	if (!f || fputs("1", f) == EOF || fclose(f))
		fail_err(errno, "/proc/self/make-it-fail");
}

int main(int argc, char **argv)
{
	int rounds, i;

	set_prog(argv[0]);
	if (argc != 3 || (rounds = atoi(argv[2])) < 1) {
		fprintf(stderr, "usage: %s DEVICE ROUNDS\n", prog);
		return EXIT_FAIL;
	}
	if (getenv("OBJ_CHURN_WAIT_S"))
		wait_s = atoi(getenv("OBJ_CHURN_WAIT_S"));
	if (wait_s < 1) {
		fprintf(stderr, "%s: OBJ_CHURN_WAIT_S must be seconds\n", prog);
		return EXIT_FAIL;
	}
	if (getenv("OBJ_CHURN_ARM") && !strcmp(getenv("OBJ_CHURN_ARM"), "1"))
		arm(argv[1]);
	for (i = 0; i < rounds; i++)
		round_once(argv[1]);
	printf("rounds %d, calls refused %lu, completions %lu (%lu in error)\n",
	       rounds, refused, completions, wc_errors);
	pass();
}
