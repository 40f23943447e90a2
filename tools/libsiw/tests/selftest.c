// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libsiw-selftest DEVICE [GID_INDEX]: exercises the siw project's provider
 * through the public verbs API, between two QPs of DEVICE connected to
 * each other without rdma_cm (modify_qp with an address GID, default 1).
 * Meant to run with RDMAV_DRIVERS pointing at our plugin; the first check
 * fails when the stock provider (no ibv_create_cq_ex) is the one loaded.
 *
 * Prints one "ok N - what" or "not ok N - what" line per check; exits 0
 * when every check passed, 1 otherwise.
 */

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#define BUF_SIZE	(1 << 16)
#define DEPTH		16

static int checks, failures;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s %d - ", ok ? "ok" : "not ok", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void die(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

struct end {
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_cq *scq, *rcq;
	char *buf;
	struct ibv_mr *mr;
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid_index = 1;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for one completion on @cq (busy polling; gives up after 30 s). */
static int poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now() + 30;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
	} while (now() < end);
	return 0;
}

static int poll_ok(struct ibv_cq *cq, enum ibv_wc_opcode op, uint32_t len)
{
	struct ibv_wc wc;

	if (poll_one(cq, &wc) != 1) {
		printf("# no completion\n");
		return 0;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != op ||
	    (len != (uint32_t)-1 && wc.byte_len != len)) {
		printf("# completion: status %s, opcode %d (want %d), %u bytes (want %d)\n",
		       ibv_wc_status_str(wc.status), wc.opcode, op, wc.byte_len,
		       (int)len);
		return 0;
	}
	return 1;
}

static void make_qp(struct end *e, struct ibv_cq *scq, struct ibv_cq *rcq,
		    struct ibv_srq *srq, int ex, uint32_t send_depth)
{
	struct ibv_qp_init_attr_ex attr;

	memset(&attr, 0, sizeof(attr));
	attr.qp_type = IBV_QPT_RC;
	attr.send_cq = scq;
	attr.recv_cq = rcq;
	attr.srq = srq;
	attr.cap.max_send_wr = send_depth;
	attr.cap.max_recv_wr = DEPTH;
	attr.cap.max_send_sge = 6;
	attr.cap.max_recv_sge = 6;
	attr.cap.max_inline_data = 64;
	attr.pd = pd;
	attr.comp_mask = IBV_QP_INIT_ATTR_PD;
	if (ex) {
		attr.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		attr.send_ops_flags = IBV_QP_EX_WITH_SEND |
				      IBV_QP_EX_WITH_RDMA_WRITE |
				      IBV_QP_EX_WITH_RDMA_READ |
				      IBV_QP_EX_WITH_SEND_WITH_INV;
	}
	e->qp = ibv_create_qp_ex(ctx, &attr);
	if (!e->qp)
		die("ibv_create_qp_ex");
	e->qpx = ex ? ibv_qp_to_qp_ex(e->qp) : NULL;
	e->scq = scq;
	e->rcq = rcq;
	e->buf = calloc(1, BUF_SIZE);
	e->mr = ibv_reg_mr(pd, e->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!e->buf || !e->mr)
		die("ibv_reg_mr");
}

static void to_rts(struct ibv_qp *qp, uint32_t peer)
{
	struct ibv_qp_attr a;
	union ibv_gid gid;

	if (ibv_query_gid(ctx, 1, gid_index, &gid))
		die("ibv_query_gid");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		die("modify_qp INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		die("modify_qp RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		die("modify_qp RTS");
}

static int post_recv(struct ibv_qp *qp, struct ibv_srq *srq, struct end *e,
		     uint64_t id, uint32_t off, uint32_t len, int nsge)
{
	struct ibv_sge sge[6];
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sge, .num_sge = nsge };
	struct ibv_recv_wr *bad;
	int i;

	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)e->buf + off + i * len;
		sge[i].length = len;
		sge[i].lkey = e->mr->lkey;
	}
	return srq ? ibv_post_srq_recv(srq, &wr, &bad) :
		     ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct end *e, enum ibv_wr_opcode op, uint32_t off,
		     uint32_t len, int nsge, unsigned int flags,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge[8];
	struct ibv_send_wr wr, *bad;
	int i;

	memset(&wr, 0, sizeof(wr));
	for (i = 0; i < nsge; i++) {
		sge[i].addr = (uintptr_t)e->buf + off + i * len;
		sge[i].length = len;
		sge[i].lkey = e->mr->lkey;
	}
	wr.wr_id = off;
	wr.opcode = op;
	wr.sg_list = sge;
	wr.num_sge = nsge;
	wr.send_flags = IBV_SEND_SIGNALED | flags;
	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(e->qp, &wr, &bad);
}

static void fill(char *p, size_t n, int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (char)(seed + i * 7);
}

/* The objects every part of the test shares. */
struct fix {
	struct ibv_cq_ex *cqx;		/* b's send CQ */
	struct ibv_cq *cq_a;		/* a's CQ, with a completion channel */
	struct ibv_cq *cq_b;		/* b's receive CQ, 3 CQEs at first */
	struct ibv_comp_channel *ch;
	struct end a, b;		/* two QPs connected to each other */
};

/* The CQs, two QPs on them and their connection; 0 to go on. */
static int setup(struct fix *f)
{
	struct ibv_cq_init_attr_ex cqa;

	/* Only our provider has the extended CQ. */
	memset(&cqa, 0, sizeof(cqa));
	cqa.cqe = DEPTH * 4;
	cqa.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_QP_NUM;
	f->cqx = ibv_create_cq_ex(ctx, &cqa);
	check(f->cqx != NULL, "ibv_create_cq_ex (our provider is loaded): %s",
	      f->cqx ? "ok" : strerror(errno));
	if (!f->cqx)
		return -1;
	cqa.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	check(!ibv_create_cq_ex(ctx, &cqa) && errno == EOPNOTSUPP,
	      "ibv_create_cq_ex with completion timestamps is refused");

	f->ch = ibv_create_comp_channel(ctx);
	f->cq_a = ibv_create_cq(ctx, DEPTH * 4, NULL, f->ch, 0);
	f->cq_b = ibv_create_cq(ctx, 3, NULL, NULL, 0);
	if (!f->ch || !f->cq_a || !f->cq_b)
		die("ibv_create_cq");
	check(f->cq_b->cqe >= 3, "CQ of 3 got %d CQEs", f->cq_b->cqe);

	make_qp(&f->a, f->cq_a, f->cq_a, NULL, 1, DEPTH);
	make_qp(&f->b, ibv_cq_ex_to_cq(f->cqx), f->cq_b, NULL, 0, DEPTH);
	to_rts(f->a.qp, f->b.qp->qp_num);
	to_rts(f->b.qp, f->a.qp->qp_num);

	/* The QPs connect in the background: one message shows they did. */
	post_recv(f->b.qp, NULL, &f->b, 1, 0, 64, 1);
	post_send(&f->a, IBV_WR_SEND, 0, 1, 1, 0, 0, 0);
	if (!poll_ok(f->cq_a, IBV_WC_SEND, -1) || !poll_ok(f->cq_b, IBV_WC_RECV, 1)) {
		printf("Bail out! QPs %u and %u did not connect\n",
		       f->a.qp->qp_num, f->b.qp->qp_num);
		return -1;
	}

	return 0;
}

static void test_sges(struct fix *f)
{
	int err;

	/* Send with 6 SGEs into a receive of 6 SGEs. */
	fill(f->a.buf, 6 * 100, 1);
	memset(f->b.buf, 0, BUF_SIZE);
	err = post_recv(f->b.qp, NULL, &f->b, 7, 0, 100, 6);
	check(!err, "post_recv with 6 SGEs: %s", strerror(err));
	err = post_send(&f->a, IBV_WR_SEND, 0, 100, 6, 0, 0, 0);
	check(!err, "post_send with 6 SGEs: %s", strerror(err));
	check(poll_ok(f->cq_a, IBV_WC_SEND, -1), "send completes");
	check(poll_ok(f->cq_b, IBV_WC_RECV, 600), "receive of 600 bytes completes");
	check(!memcmp(f->a.buf, f->b.buf, 600), "data of 6 SGEs arrived intact");
}

static void test_inline(struct fix *f)
{
	int err;

	/* Inline: the data is copied at post time. */
	err = post_recv(f->b.qp, NULL, &f->b, 8, 1000, 200, 1);
	fill(f->a.buf + 2000, 64, 3);
	err = err ?: post_send(&f->a, IBV_WR_SEND, 2000, 32, 2, IBV_SEND_INLINE,
			       0, 0);
	memset(f->a.buf + 2000, 0, 64);
	check(!err, "inline send of 2 x 32 bytes posted");
	check(poll_ok(f->cq_a, IBV_WC_SEND, -1) && poll_ok(f->cq_b, IBV_WC_RECV, 64),
	      "inline send completes");
	fill(f->a.buf + 2000, 64, 3);
	check(!memcmp(f->a.buf + 2000, f->b.buf + 1000, 64), "inline data intact");
	err = post_send(&f->a, IBV_WR_SEND, 0, 81, 1, IBV_SEND_INLINE, 0, 0);
	check(err == EINVAL, "inline send of 81 bytes refused: %s",
	      strerror(err));
	err = post_send(&f->a, IBV_WR_SEND, 0, 8, 7, 0, 0, 0);
	check(err == EINVAL, "send with 7 SGEs refused: %s", strerror(err));
	err = post_send(&f->a, IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, 1, 0, 0, 0);
	check(err == EINVAL, "atomic refused: %s", strerror(err));
}

static void test_rdma(struct fix *f)
{
	int err;

	/* RDMA write and read. */
	fill(f->a.buf + 4096, 4096, 5);
	err = post_send(&f->a, IBV_WR_RDMA_WRITE, 4096, 4096, 1, 0,
			(uintptr_t)f->b.buf + 8192, f->b.mr->rkey);
	check(!err && poll_ok(f->cq_a, IBV_WC_RDMA_WRITE, -1),
	      "RDMA write completes");
	check(!memcmp(f->a.buf + 4096, f->b.buf + 8192, 4096), "written data intact");
	fill(f->b.buf + 16384, 5000, 9);
	err = post_send(&f->a, IBV_WR_RDMA_READ, 20000, 5000, 1, 0,
			(uintptr_t)f->b.buf + 16384, f->b.mr->rkey);
	check(!err && poll_ok(f->cq_a, IBV_WC_RDMA_READ, 5000),
	      "RDMA read completes");
	check(!memcmp(f->a.buf + 20000, f->b.buf + 16384, 5000), "read data intact");
}

static void test_qp_ex(struct fix *f)
{
	struct ibv_wc wc;
	int n, ok, err;

	/* Extended QP: a batch of send, write, read. */
	fill(f->a.buf + 30000, 3000, 11);
	/* iWARP has no RNR: every send needs its receive posted first. */
	post_recv(f->b.qp, NULL, &f->b, 9, 40000, 1000, 1);
	post_recv(f->b.qp, NULL, &f->b, 10, 50000, 100, 1);
	ibv_wr_start(f->a.qpx);
	f->a.qpx->wr_id = 100;
	f->a.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(f->a.qpx);
	ibv_wr_set_sge(f->a.qpx, f->a.mr->lkey, (uintptr_t)f->a.buf + 30000, 1000);
	f->a.qpx->wr_id = 101;
	ibv_wr_rdma_write(f->a.qpx, f->b.mr->rkey, (uintptr_t)f->b.buf + 41000);
	ibv_wr_set_sge(f->a.qpx, f->a.mr->lkey, (uintptr_t)f->a.buf + 31000, 1000);
	f->a.qpx->wr_id = 102;
	ibv_wr_rdma_read(f->a.qpx, f->b.mr->rkey, (uintptr_t)f->b.buf + 41000);
	ibv_wr_set_sge(f->a.qpx, f->a.mr->lkey, (uintptr_t)f->a.buf + 33000, 1000);
	f->a.qpx->wr_id = 103;
	ibv_wr_send(f->a.qpx);
	ibv_wr_set_inline_data(f->a.qpx, f->a.buf + 32000, 16);
	err = ibv_wr_complete(f->a.qpx);
	check(!err, "ibv_wr_* batch of 4 posted: %s", strerror(err));
	ok = poll_ok(f->cq_a, IBV_WC_SEND, -1) &&
	     poll_ok(f->cq_a, IBV_WC_RDMA_WRITE, -1) &&
	     poll_ok(f->cq_a, IBV_WC_RDMA_READ, 1000) &&
	     poll_ok(f->cq_a, IBV_WC_SEND, -1);
	check(ok, "ibv_wr_* batch completes in order");
	check(!memcmp(f->a.buf + 30000, f->b.buf + 40000, 1000) &&
	      !memcmp(f->a.buf + 31000, f->b.buf + 41000, 1000) &&
	      !memcmp(f->a.buf + 31000, f->a.buf + 33000, 1000),
	      "ibv_wr_* data intact");

	check(poll_ok(f->cq_b, IBV_WC_RECV, 1000) && poll_ok(f->cq_b, IBV_WC_RECV, 16),
	      "batch sends received (1000 bytes, 16 bytes inline)");

	ibv_wr_start(f->a.qpx);
	f->a.qpx->wr_id = 200;
	ibv_wr_send(f->a.qpx);
	ibv_wr_set_sge(f->a.qpx, f->a.mr->lkey, (uintptr_t)f->a.buf, 10);
	ibv_wr_abort(f->a.qpx);
	ibv_wr_start(f->a.qpx);
	ibv_wr_local_inv(f->a.qpx, f->a.mr->rkey);
	err = ibv_wr_complete(f->a.qpx);
	check(err == EOPNOTSUPP, "ibv_wr_local_inv refused at complete: %s",
	      strerror(err));
	n = ibv_poll_cq(f->cq_a, 1, &wc);
	check(n == 0, "aborted and refused batches posted nothing (%d)", n);
}

static void test_cq_ex(struct fix *f)
{
	struct ibv_poll_cq_attr pa = {};
	double t0;
	int i, n;

	/* Extended CQ polling: b sends 3 signalled messages to f->a. */
	for (i = 0; i < 3; i++)
		post_recv(f->a.qp, NULL, &f->a, 300 + i, 60000 + i * 100, 100, 1);
	for (i = 0; i < 3; i++)
		post_send(&f->b, IBV_WR_SEND, 100 * i, 10 + i, 1, 0, 0, 0);
	for (i = 0; i < 3; i++)
		poll_ok(f->cq_a, IBV_WC_RECV, 10 + i);
	for (n = 0, t0 = now(); n < 3 && now() < t0 + 30;) {
		if (ibv_start_poll(f->cqx, &pa))
			continue;
		do {
			if (f->cqx->status == IBV_WC_SUCCESS &&
			    ibv_wc_read_opcode(f->cqx) == IBV_WC_SEND &&
			    ibv_wc_read_qp_num(f->cqx) == f->b.qp->qp_num &&
			    f->cqx->wr_id == (uint64_t)n * 100)
				n++;
			else
				printf("# cq_ex: status %d opcode %d wr_id %llu\n",
				       f->cqx->status, ibv_wc_read_opcode(f->cqx),
				       (unsigned long long)f->cqx->wr_id);
		} while (!ibv_next_poll(f->cqx));
		ibv_end_poll(f->cqx);
	}
	check(n == 3, "ibv_start_poll/next_poll/end_poll saw 3 sends (%d)", n);
}

static void test_comp_channel(struct fix *f)
{
	struct ibv_poll_cq_attr pa = {};
	struct pollfd pfd = { .fd = f->ch->fd, .events = POLLIN };
	struct ibv_cq *ev_cq;
	void *ev_ctx;
	int n, ok, err;
	double t0;

	/* Completion channel: arm, send, get the event. */
	err = ibv_req_notify_cq(f->cq_a, 0);
	post_recv(f->a.qp, NULL, &f->a, 400, 0, 100, 1);
	post_send(&f->b, IBV_WR_SEND, 0, 8, 1, 0, 0, 0);
	n = poll(&pfd, 1, 20000);
	ok = n == 1 && !ibv_get_cq_event(f->ch, &ev_cq, &ev_ctx) &&
	     ev_cq == f->cq_a;
	check(!err && ok, "completion event after req_notify_cq");
	if (ok)
		ibv_ack_cq_events(f->cq_a, 1);
	check(poll_ok(f->cq_a, IBV_WC_RECV, 8), "event's CQE polled");
	/* b's send went to the extended CQ. */
	for (ok = 0, t0 = now(); !ok && now() < t0 + 30;) {
		if (ibv_start_poll(f->cqx, &pa))
			continue;
		ok = f->cqx->status == IBV_WC_SUCCESS;
		ibv_end_poll(f->cqx);
	}
	check(ok, "extended CQ: sender's completion");
}

static void test_resize(struct fix *f)
{
	int i, ok, err;

	/* Resize: CQEs pending in the old ring move to the new one. */
	for (i = 0; i < 3; i++)
		post_recv(f->b.qp, NULL, &f->b, 500 + i, 0, 100, 1);
	for (i = 0; i < 3; i++)
		post_send(&f->a, IBV_WR_SEND, 0, 20 + i, 1, 0, 0, 0);
	for (i = 0; i < 3; i++)
		poll_ok(f->cq_a, IBV_WC_SEND, -1);
	/* Let the 3 receives land in f->cq_b (4 slots), unpolled. Should one
	 * come late, it lands in the new ring: the check holds either way. */
	usleep(500000);
	err = ibv_resize_cq(f->cq_b, 100);
	check(!err && f->cq_b->cqe >= 100, "ibv_resize_cq to 100: %s (%d CQEs)",
	      strerror(err), f->cq_b->cqe);
	for (ok = 1, i = 0; i < 3; i++)
		ok &= poll_ok(f->cq_b, IBV_WC_RECV, 20 + i);
	check(ok, "CQEs pending at resize kept, in order");
	for (i = 0; i < 12; i++)
		post_recv(f->b.qp, NULL, &f->b, 600 + i, 0, 100, 1);
	for (i = 0; i < 12; i++) {
		err = post_send(&f->a, IBV_WR_SEND, 0, 4, 1, 0, 0, 0);
		if (!err)
			poll_ok(f->cq_a, IBV_WC_SEND, -1);
	}
	for (ok = 1, i = 0; i < 12; i++)
		ok &= poll_ok(f->cq_b, IBV_WC_RECV, 4);
	check(ok, "resized CQ takes 12 more completions");
}

static void test_load(struct fix *f)
{
	int sent = 0, done = 0, rcvd = 0, posted = 0;
	const int total = 5000;
	struct ibv_wc wc;
	double t0;
	int i, n;

	/* Doorbell rule under load: many small sends, deep batches. */
	for (i = 0; i < DEPTH; i++, posted++)
		post_recv(f->b.qp, NULL, &f->b, 700, 0, 64, 1);
	t0 = now();
	while (rcvd < total && now() < t0 + 300) {
		while (sent < total && sent - done < DEPTH &&
		       posted - rcvd > sent - rcvd) {
			if (post_send(&f->a, IBV_WR_SEND, 0, 8, 1, 0, 0, 0))
				break;
			sent++;
		}
		n = ibv_poll_cq(f->cq_a, 1, &wc);
		if (n == 1 && wc.status != IBV_WC_SUCCESS)
			break;
		done += n == 1;
		n = ibv_poll_cq(f->cq_b, 1, &wc);
		if (n == 1 && wc.status != IBV_WC_SUCCESS)
			break;
		if (n == 1) {
			rcvd++;
			if (!post_recv(f->b.qp, NULL, &f->b, 700, 0, 64, 1))
				posted++;
		}
	}
	while (done < sent && poll_one(f->cq_a, &wc) == 1)
		done++;
	check(rcvd == total && done == total,
	      "%d sends through a %d-deep SQ: %d sent, %d received",
	      total, DEPTH, done, rcvd);
}

static void test_full_sq(struct fix *f)
{
	struct ibv_send_wr wrs[DEPTH], *bad;
	struct ibv_sge sge = { .addr = (uintptr_t)f->a.buf, .length = 16,
			       .lkey = f->a.mr->lkey };
	int i, ok, err;

	/* One post_send call that fills the whole (empty) SQ. */
	for (i = 0; i < DEPTH; i++)
		post_recv(f->b.qp, NULL, &f->b, 900 + i, 0, 64, 1);
	memset(wrs, 0, sizeof(wrs));
	for (i = 0; i < DEPTH; i++) {
		wrs[i].wr_id = 900 + i;
		wrs[i].opcode = IBV_WR_SEND;
		wrs[i].sg_list = &sge;
		wrs[i].num_sge = 1;
		wrs[i].send_flags = IBV_SEND_SIGNALED;
		wrs[i].next = i + 1 < DEPTH ? &wrs[i + 1] : NULL;
	}
	err = ibv_post_send(f->a.qp, wrs, &bad);
	for (ok = !err, i = 0; i < DEPTH; i++)
		ok &= poll_ok(f->cq_a, IBV_WC_SEND, -1) &&
		      poll_ok(f->cq_b, IBV_WC_RECV, 16);
	check(ok, "%d sends in one post_send call fill the SQ and complete",
	      DEPTH);
}

static void test_srq(struct fix *f)
{
	struct ibv_srq_init_attr srqa;
	struct ibv_srq_attr sattr;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_srq *srq;
	struct end c, d;
	int i, ok, err;

	/* SRQ: two QPs on one SRQ. */
	memset(&srqa, 0, sizeof(srqa));
	srqa.attr.max_wr = 8;
	srqa.attr.max_sge = 2;
	srq = ibv_create_srq(pd, &srqa);
	check(srq != NULL, "ibv_create_srq");
	if (!srq)
		return;
	memset(&sattr, 0, sizeof(sattr));
	err = ibv_query_srq(srq, &sattr);
	check(!err && sattr.max_wr >= 8, "ibv_query_srq: %u WRs",
	      sattr.max_wr);
	sattr.srq_limit = 2;
	err = ibv_modify_srq(srq, &sattr, IBV_SRQ_LIMIT);
	check(!err, "ibv_modify_srq limit: %s", strerror(err));
	sattr.max_wr = 64;
	err = ibv_modify_srq(srq, &sattr, IBV_SRQ_MAX_WR);
	check(err == EOPNOTSUPP, "SRQ resize refused: %s",
	      strerror(err));
	/* c's SQ has one slot: every post fills the ring. */
	make_qp(&c, f->cq_a, f->cq_a, NULL, 0, 1);
	make_qp(&d, f->cq_b, f->cq_b, srq, 0, DEPTH);
	to_rts(c.qp, d.qp->qp_num);
	to_rts(d.qp, c.qp->qp_num);
	for (i = 0; i < 4; i++)
		post_recv(NULL, srq, &d, 800 + i, i * 100, 100, 1);
	err = ibv_post_recv(d.qp, &rwr, &rbad);
	check(err, "post_recv on a QP with an SRQ refused");
	for (ok = 1, i = 0; i < 4; i++) {
		ok &= !post_send(&c, IBV_WR_SEND, 0, 30 + i, 1, 0, 0, 0);
		ok &= poll_ok(f->cq_a, IBV_WC_SEND, -1);
	}
	for (i = 0; i < 4; i++)
		ok &= poll_ok(f->cq_b, IBV_WC_RECV, 30 + i);
	check(ok, "4 sends from a 1-slot SQ through the SRQ");
	ibv_destroy_qp(c.qp);
	ibv_destroy_qp(d.qp);
	ibv_dereg_mr(c.mr);
	ibv_dereg_mr(d.mr);
	free(c.buf);
	free(d.buf);
	check(!ibv_destroy_srq(srq), "ibv_destroy_srq");
}

static void teardown(struct fix *f)
{
	check(!ibv_destroy_qp(f->a.qp) && !ibv_destroy_qp(f->b.qp), "destroy QPs");
	check(!ibv_destroy_cq(ibv_cq_ex_to_cq(f->cqx)) && !ibv_destroy_cq(f->cq_a) &&
	      !ibv_destroy_cq(f->cq_b), "destroy CQs");
	check(!ibv_destroy_comp_channel(f->ch), "destroy completion channel");
	ibv_dereg_mr(f->a.mr);
	ibv_dereg_mr(f->b.mr);
	free(f->a.buf);
	free(f->b.buf);
	check(!ibv_dealloc_pd(pd), "dealloc PD");
	ibv_close_device(ctx);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct fix f;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [GID_INDEX]\n", argv[0]);
		return 2;
	}
	if (argc > 2)
		gid_index = atoi(argv[2]);
	list = ibv_get_device_list(NULL);
	if (!list)
		die("ibv_get_device_list");
	for (i = 0; list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			break;
	if (!list[i]) {
		printf("Bail out! no device %s\n", argv[1]);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx)
		die("ibv_open_device");
	pd = ibv_alloc_pd(ctx);
	if (!pd)
		die("ibv_alloc_pd");

	memset(&f, 0, sizeof(f));
	if (setup(&f))
		return 1;
	test_sges(&f);
	test_inline(&f);
	test_rdma(&f);
	test_qp_ex(&f);
	test_cq_ex(&f);
	test_comp_channel(&f);
	test_resize(&f);
	test_load(&f);
	test_full_sq(&f);
	test_srq(&f);
	teardown(&f);
	ibv_free_device_list(list);
	printf("1..%d\n# %d of %d checks failed\n", checks, failures, checks);
	return failures ? 1 : 0;
}
