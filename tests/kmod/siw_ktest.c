// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A kernel verbs consumer for guest tests: does to a siw device what a
 * kernel ULP would (PD with the local DMA lkey, CQs with notification and
 * resize, RC QPs, SRQs) and checks what comes back. Loading it runs every
 * case once against the device named by dev=; results go to the kernel log
 * as "siw_ktest: PASS <case>" or "siw_ktest: FAIL <case>: <why>", then
 * "siw_ktest: done, N passed, N failed". Unload it afterwards.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/module.h>
#include <rdma/ib_verbs.h>

static char *dev = "siw0";
module_param(dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");

struct ktest {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	atomic_t comp_events;
	atomic_t cq_err_events;
	int passed;
	int failed;
};

#define KT_CHECK(cond, fmt, ...)					\
	do {								\
		if (!(cond)) {						\
			pr_err("FAIL %s: " fmt "\n", __func__,		\
			       ##__VA_ARGS__);				\
			return -EINVAL;					\
		}							\
	} while (0)

static void kt_comp(struct ib_cq *cq, void *ctx)
{
	struct ktest *kt = ctx;

	atomic_inc(&kt->comp_events);
}

static void kt_cq_event(struct ib_event *ev, void *ctx)
{
	struct ktest *kt = ctx;

	if (ev->event == IB_EVENT_CQ_ERR)
		atomic_inc(&kt->cq_err_events);
}

static struct ib_cq *kt_cq(struct ktest *kt, int cqe)
{
	struct ib_cq_init_attr attr = { .cqe = cqe };

	return ib_create_cq(kt->ibdev, kt_comp, kt_cq_event, kt, &attr);
}

static struct ib_qp *kt_qp(struct ktest *kt, struct ib_cq *cq,
			   struct ib_srq *srq, int rq_size)
{
	struct ib_qp_init_attr attr = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = {
			.max_send_wr = 16,
			.max_recv_wr = srq ? 0 : rq_size,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
	};

	return ib_create_qp(kt->pd, &attr);
}

/* A CQ of @cqe entries and an RC QP on it with an RQ of @rq_size. */
static int kt_setup(struct ktest *kt, int cqe, int rq_size,
		    struct ib_cq **cq, struct ib_qp **qp)
{
	*cq = kt_cq(kt, cqe);
	if (IS_ERR(*cq)) {
		pr_err("create_cq: %ld\n", PTR_ERR(*cq));
		return PTR_ERR(*cq);
	}
	*qp = kt_qp(kt, *cq, NULL, rq_size);
	if (IS_ERR(*qp)) {
		pr_err("create_qp: %ld\n", PTR_ERR(*qp));
		ib_destroy_cq(*cq);
		return PTR_ERR(*qp);
	}
	return 0;
}

static int kt_post_recvs(struct ib_qp *qp, u64 first, int n)
{
	const struct ib_recv_wr *bad;
	struct ib_recv_wr wr = {};
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = first + i;
		err = ib_post_recv(qp, &wr, &bad);
		if (err)
			return err;
	}
	return 0;
}

static int kt_to_error(struct ib_qp *qp)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };

	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/* Poll up to @n completions; all must be flushes with ids first, first+1.. */
static int kt_expect_flushes(struct ib_cq *cq, u64 first, int n)
{
	struct ib_wc wc;
	int i;

	for (i = 0; i < n; i++) {
		if (ib_poll_cq(cq, 1, &wc) != 1)
			return i;
		if (wc.status != IB_WC_WR_FLUSH_ERR || wc.wr_id != first + i)
			return -(i + 1);
	}
	return n;
}

static int test_pd_local_dma_lkey(struct ktest *kt)
{
	KT_CHECK(kt->ibdev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY,
		 "device does not offer a local DMA lkey");
	KT_CHECK(kt->pd->local_dma_lkey == kt->ibdev->local_dma_lkey,
		 "PD lkey %#x, device lkey %#x", kt->pd->local_dma_lkey,
		 kt->ibdev->local_dma_lkey);
	return 0;
}

static int test_flush_on_error(struct ktest *kt)
{
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_qp_attr attr;
	struct ib_qp_init_attr init;
	int got, err = 0;

	KT_CHECK(!kt_setup(kt, 32, 16, &cq, &qp), "setup failed");
	err = kt_post_recvs(qp, 100, 10);
	if (!err)
		err = ib_req_notify_cq(cq, IB_CQ_NEXT_COMP);
	if (!err)
		err = kt_to_error(qp);
	got = err ? 0 : kt_expect_flushes(cq, 100, 10);
	if (!err && !ib_query_qp(qp, &attr, IB_QP_STATE, &init) &&
	    attr.qp_state != IB_QPS_ERR)
		err = -EPROTO;
	ib_destroy_qp(qp);
	ib_destroy_cq(cq);
	KT_CHECK(!err, "post/modify/query: %d", err);
	KT_CHECK(got == 10, "expected 10 in-order flushes, got %d", got);
	KT_CHECK(atomic_read(&kt->comp_events) > 0, "armed CQ not notified");
	return 0;
}

/*
 * A kernel QP destroyed with receives outstanding: kernel completions carry
 * the ib_qp pointer, which the core frees right after destroy, so the CQ
 * must hold none of that QP's completions afterwards (kernel ULPs drain
 * before destroying). User QPs flush instead (tests/progs/qp_destroy_flush).
 */
static int test_destroy_leaves_no_dangling(struct ktest *kt)
{
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_wc wc;
	int err, n;

	KT_CHECK(!kt_setup(kt, 32, 16, &cq, &qp), "setup failed");
	err = kt_post_recvs(qp, 200, 5);
	ib_destroy_qp(qp);
	n = ib_poll_cq(cq, 1, &wc);
	ib_destroy_cq(cq);
	KT_CHECK(!err, "post_recv: %d", err);
	KT_CHECK(n == 0, "%d completion(s) of a destroyed QP left on the CQ", n);
	return 0;
}

static int test_cq_resize_in_flight(struct ktest *kt)
{
	struct ib_cq *cq;
	struct ib_qp *qp;
	int got = 0, err, small;

	KT_CHECK(!kt_setup(kt, 16, 16, &cq, &qp), "setup failed");
	err = kt_post_recvs(qp, 300, 12);
	if (!err)
		err = kt_to_error(qp);
	small = err ? 0 : ib_resize_cq(cq, 4);
	if (!err)
		err = ib_resize_cq(cq, 256);
	if (!err)
		got = kt_expect_flushes(cq, 300, 12);
	ib_destroy_qp(qp);
	ib_destroy_cq(cq);
	KT_CHECK(!err, "resize with 12 pending to 256: %d", err);
	KT_CHECK(small == -EINVAL, "resize below pending gave %d", small);
	KT_CHECK(got == 12, "expected 12 in-order entries, got %d", got);
	return 0;
}

static int test_cq_overflow(struct ktest *kt)
{
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_wc wc[16];
	int n, err, size;

	atomic_set(&kt->cq_err_events, 0);
	KT_CHECK(!kt_setup(kt, 4, 16, &cq, &qp), "setup failed");
	size = cq->cqe;
	err = kt_post_recvs(qp, 400, 16);
	if (!err)
		err = kt_to_error(qp);
	n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
	ib_destroy_qp(qp);
	ib_destroy_cq(cq);
	KT_CHECK(!err, "post/modify: %d", err);
	KT_CHECK(n >= 4 && n == size, "polled %d from a CQ of %d", n, size);
	KT_CHECK(atomic_read(&kt->cq_err_events) == 1, "%d CQ_ERR events",
		 atomic_read(&kt->cq_err_events));
	return 0;
}

static int test_srq_attrs(struct ktest *kt)
{
	struct ib_srq_init_attr init = {
		.attr = { .max_wr = 32, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr attr = { .srq_limit = 8 };
	struct ib_recv_wr wr = {};
	const struct ib_recv_wr *bad;
	struct ib_srq *srq;
	int i, err = 0, bad_limit;

	srq = ib_create_srq(kt->pd, &init);
	KT_CHECK(!IS_ERR(srq), "create_srq: %ld", PTR_ERR(srq));
	for (i = 0; i < 16 && !err; i++) {
		wr.wr_id = i;
		err = ib_post_srq_recv(srq, &wr, &bad);
	}
	if (!err)
		err = ib_modify_srq(srq, &attr, IB_SRQ_LIMIT);
	memset(&attr, 0, sizeof(attr));
	if (!err)
		err = ib_query_srq(srq, &attr);
	attr.srq_limit = 1000000;
	bad_limit = ib_modify_srq(srq, &attr, IB_SRQ_LIMIT);
	ib_destroy_srq(srq);
	KT_CHECK(!err, "post/modify/query: %d", err);
	KT_CHECK(bad_limit == -EINVAL, "limit above max_wr gave %d", bad_limit);
	return 0;
}

static void kt_run(struct ktest *kt, int (*fn)(struct ktest *kt),
		   const char *name)
{
	if (fn(kt)) {
		kt->failed++;
		return;
	}
	pr_info("PASS %s\n", name);
	kt->passed++;
}

#define KT_RUN(kt, fn) kt_run(kt, fn, #fn)

static int __init siw_ktest_init(void)
{
	struct ktest kt = {};

	kt.ibdev = ib_device_get_by_name(dev, RDMA_DRIVER_UNKNOWN);
	if (!kt.ibdev) {
		pr_err("no RDMA device %s\n", dev);
		return -ENODEV;
	}
	kt.pd = ib_alloc_pd(kt.ibdev, 0);
	if (IS_ERR(kt.pd)) {
		pr_err("FAIL alloc_pd: %ld\n", PTR_ERR(kt.pd));
		kt.failed++;
		goto out;
	}
	KT_RUN(&kt, test_pd_local_dma_lkey);
	KT_RUN(&kt, test_flush_on_error);
	KT_RUN(&kt, test_destroy_leaves_no_dangling);
	KT_RUN(&kt, test_cq_resize_in_flight);
	KT_RUN(&kt, test_cq_overflow);
	KT_RUN(&kt, test_srq_attrs);
	ib_dealloc_pd(kt.pd);
out:
	ib_device_put(kt.ibdev);
	pr_info("done, %d passed, %d failed\n", kt.passed, kt.failed);
	return 0;
}

static void __exit siw_ktest_exit(void)
{
}

module_init(siw_ktest_init);
module_exit(siw_ktest_exit);
MODULE_DESCRIPTION("Kernel verbs checks for siw guest tests");
MODULE_LICENSE("Dual BSD/GPL");
