// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * hostile_ring DEVICE: a process that writes garbage into its own queue
 * rings must not hurt the kernel, and gets completions only for what it
 * put there.
 *
 * How the rings are found. Stock libsiw mmaps each ring it gets from the
 * kernel (CQ, SQ, RQ, SRQ) with MAP_SHARED on the uverbs file at the key
 * the create response names, and keeps the pointers in its private QP/CQ
 * structs, which a program cannot see. The program therefore diffs the
 * /dev/infiniband/uverbs* mappings in /proc/self/maps around each create:
 * a CQ adds one mapping (num_cqe * 32 + 8 bytes, page rounded), a QP two
 * (SQ num_sqe * 120, RQ num_rqe * 112). The RQ is told apart from the SQ
 * by posting one receive with a known wr_id through libsiw and looking for
 * it in slot 0; the sizes are checked against the granted capabilities.
 * The maps' file offsets are the mmap keys, used for the mmap tests.
 * The doorbell is rung either through ibv_post_send (libsiw writes its SQE
 * at its own put index and rings) or, for garbage, with the same raw
 * write() of IB_USER_VERBS_CMD_POST_SEND that libsiw issues.
 *
 * Phases (a completion is only counted after its raw CQE was checked in
 * the ring: opcode < SIW_NUM_OPCODES and status < SIW_NUM_WC_STATUS, as
 * libsiw indexes its tables with them unchecked, and the QP id is ours):
 * 1. QP in INIT: every SQ slot gets a garbage SQE (VALID with bad opcode
 *    200, kernel-only opcodes, num_sge 255, bad lkey, kernel addresses,
 *    length 0xffffffff, INLINE with a huge length, random bytes, ...), the
 *    RQ slots after libsiw's receive get garbage RQEs, the send CQ's
 *    control word gets all ones; the doorbell is rung in INIT. Moving to
 *    ERROR must give one non-success completion per garbage SQE and one
 *    WR_FLUSH_ERR receive completion per RQE (opcode RECEIVE, whatever the
 *    RQE's opcode byte said), each wr_id in ring order, nothing else; all
 *    slots are released (VALID cleared).
 * 2. QP in ERROR: a full ring of garbage again plus the raw doorbell: one
 *    completion per SQE, in order, slots released.
 * 3. A harmless SEND through ibv_post_send (libsiw's put index is back at
 *    slot 0): one WR_FLUSH_ERR completion with its wr_id.
 * 4. mmap abuse on the uverbs file: a known key with a larger length, an
 *    offset inside a ring, an unknown key all fail; a second MAP_SHARED
 *    view of the SQ outlives the QP (writing to it after destroy_qp is
 *    safe) and the key is dead once the QP is gone.
 * 5. SRQ (if the kernel has SRQs): a garbage-filled SRQ ring under a QP
 *    that goes to ERROR and is destroyed: no completions, no crash.
 * The guest test then checks the kernel log and that siw unloads cleanly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/siw-abi.h>

#include "common.h"

#define ASK_SQ 64
#define ASK_RQ 64
#define CQE 256
#define ID_MAGIC 0x5157c0ffee000001ull
#define ID_GARBAGE1 0xbad1000ull
#define ID_GARBAGE2 0xbad2000ull
#define ID_RQ_GARBAGE 0xbad3000ull
#define ID_HARMLESS 0x600dull
#define KERNEL_ADDR 0xffff888000000000ull

struct cq_ring {
	struct ibv_cq *cq;
	volatile struct siw_cqe *cqe;
	struct siw_cq_ctrl *ctrl;
	unsigned int num;
	unsigned int get;	/* mirrors libsiw's cq_get */
};

static size_t page;
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static struct ring_map one_new_map(const struct ring_map *before, int nb,
				   const char *what)
{
	struct ring_map after[MAX_RING_MAPS], fresh[MAX_RING_MAPS];
	int na = uverbs_maps(after, MAX_RING_MAPS);

	if (new_maps(before, nb, after, na, fresh, MAX_RING_MAPS) != 1)
		fail("%s: expected one new uverbs mapping", what);
	return fresh[0];
}

static struct cq_ring make_cq_ring(struct ibv_context *ctx)
{
	struct ring_map before[MAX_RING_MAPS], m;
	int nb = uverbs_maps(before, MAX_RING_MAPS);
	struct cq_ring r = { .cq = make_cq(ctx, CQE) };

	m = one_new_map(before, nb, "ibv_create_cq");
	r.num = (unsigned int)r.cq->cqe;
	if (page_round(r.num * sizeof(struct siw_cqe) +
		       sizeof(struct siw_cq_ctrl)) != m.len)
		fail("CQ of %u entries, but its ring mapping is %zu bytes",
		     r.num, m.len);
	r.cqe = (volatile struct siw_cqe *)m.start;
	r.ctrl = (struct siw_cq_ctrl *)(m.start +
					r.num * sizeof(struct siw_cqe));
	note("CQ ring of %u at %#" PRIxPTR ", key %#" PRIx64, r.num,
	     m.start, m.key);
	return r;
}

/*
 * Polls @want completions through libsiw, checking each CQE in the ring
 * before libsiw reads it; then makes sure no more come.
 */
static void ring_collect(struct cq_ring *r, struct ibv_wc *wc, int want,
			 uint32_t qp_num)
{
	int got = 0, tries = 0, quiet = 0;

	while (quiet * 10 < QUIET_MS) {
		volatile struct siw_cqe *c = &r->cqe[r->get % r->num];
		uint8_t flags = __atomic_load_n(&c->flags, __ATOMIC_ACQUIRE);

		if (!(flags & SIW_WQE_VALID)) {
			if (got >= want)
				quiet++;
			else if (++tries * 10 > WAIT_MS)
				break;
			sleep_ms(10);
			continue;
		}
		if (got == want)
			fail("surplus completion: wr_id %#" PRIx64 " after the %d expected",
			     (uint64_t)c->id, want);
		if (c->opcode >= SIW_NUM_OPCODES || c->status >= SIW_NUM_WC_STATUS)
			fail("CQE %d (wr_id %#" PRIx64 ") has opcode %u status %u: out of libsiw's tables",
			     got, (uint64_t)c->id, c->opcode, c->status);
		if ((uint32_t)c->qp_id != qp_num)
			fail("CQE %d names QP %" PRIu64 ", expected %u", got,
			     (uint64_t)c->qp_id, qp_num);
		if (ibv_poll_cq(r->cq, 1, &wc[got]) != 1)
			fail("libsiw did not poll the VALID CQE %d", got);
		r->get++;
		got++;
	}
	if (got != want)
		fail("%d completions within %d ms, expected %d", got, WAIT_MS,
		     want);
}

/* One garbage SQE; which kind depends on @i. Flags are stored last. */
static void garbage_sqe(struct siw_sqe *slot, unsigned int i, uint64_t id)
{
	uint16_t flags = SIW_WQE_VALID | SIW_WQE_SIGNALLED;
	struct siw_sqe s;
	unsigned int k;

	memset(&s, 0, sizeof(s));
	s.opcode = SIW_OP_SEND;
	s.num_sge = 1;
	s.sge[0].laddr = 0x1000;
	s.sge[0].length = 64;
	s.sge[0].lkey = 0x1234;
	switch (i % 16) {
	case 0:
		s.opcode = 200;
		break;
	case 1:
		s.num_sge = 255;
		break;
	case 2:
		s.sge[0].lkey = 0xdeadbeef;
		s.sge[0].laddr = KERNEL_ADDR;
		break;
	case 3:
		s.sge[0].length = 0xffffffff;
		break;
	case 4:
		flags |= SIW_WQE_INLINE;
		s.sge[0].length = 0xffffffff;
		break;
	case 5:
		s.opcode = SIW_OP_REG_MR;
		s.base_mr = KERNEL_ADDR;
		s.access = ~0ull;
		break;
	case 6:
		s.opcode = SIW_OP_INVAL_STAG;
		s.rkey = 0xffffffff;
		break;
	case 7:
		s.opcode = SIW_OP_READ_RESPONSE;
		break;
	case 8:
		s.opcode = SIW_OP_READ;
		s.num_sge = SIW_MAX_SGE;
		s.rkey = 0xdeadbeef;
		s.raddr = ~0ull;
		for (k = 0; k < SIW_MAX_SGE; k++)
			s.sge[k].length = 0xffffffff;
		break;
	case 9:
		s.opcode = SIW_OP_COMP_AND_SWAP;
		break;
	case 10:
		s.opcode = SIW_NUM_OPCODES;
		break;
	case 11:
		s.num_sge = SIW_MAX_SGE + 1;
		break;
	case 12:
		flags |= SIW_WQE_INLINE;
		s.num_sge = 0;
		s.sge[0].length = SIW_MAX_INLINE + 1;
		break;
	case 13:
		flags = 0xffff;
		s.opcode = 0xff;
		s.num_sge = 0xff;
		break;
	case 14:
		flags = SIW_WQE_VALID; /* unsignalled */
		break;
	default:
		for (k = 0; k < sizeof(s) / 8; k++)
			((uint64_t *)&s)[k] = rnd();
		flags = (uint16_t)rnd() | SIW_WQE_VALID;
		break;
	}
	s.id = id;
	s.flags = 0;
	memcpy(slot, &s, sizeof(s));
	__atomic_store_n(&slot->flags, flags, __ATOMIC_RELEASE);
}

static void garbage_rqe(struct siw_rqe *slot, unsigned int i, uint64_t id)
{
	uint16_t flags = SIW_WQE_VALID;
	struct siw_rqe r;
	unsigned int k;

	memset(&r, 0, sizeof(r));
	r.num_sge = 1;
	r.sge[0].laddr = 0x1000;
	r.sge[0].length = 64;
	r.sge[0].lkey = 0x1234;
	switch (i % 8) {
	case 0:
		r.num_sge = 255;
		break;
	case 1:
		r.num_sge = 0;
		break;
	case 2:
		r.num_sge = SIW_MAX_SGE + 1;
		break;
	case 3:
		r.sge[0].lkey = 0xdeadbeef;
		r.sge[0].laddr = KERNEL_ADDR;
		break;
	case 4:
		r.sge[0].length = 0xffffffff;
		break;
	case 5:
		r.opcode = SIW_OP_REG_MR;
		r.unused = ~0u;
		break;
	case 6:
		flags = 0xffff;
		r.opcode = 200;
		break;
	default:
		for (k = 0; k < sizeof(r) / 8; k++)
			((uint64_t *)&r)[k] = rnd();
		flags = (uint16_t)rnd() | SIW_WQE_VALID;
		break;
	}
	r.id = id;
	r.flags = 0;
	memcpy(slot, &r, sizeof(r));
	__atomic_store_n(&slot->flags, flags, __ATOMIC_RELEASE);
}

static void expect_released(const void *ring, size_t stride, unsigned int n,
			    unsigned int from, const char *what)
{
	unsigned int i;

	for (i = from; i < n; i++) {
		const uint16_t *flags = (const uint16_t *)
			((const char *)ring + i * stride + 8);

		if (__atomic_load_n(flags, __ATOMIC_ACQUIRE) & SIW_WQE_VALID)
			fail("%s slot %u still VALID after its completion",
			     what, i);
	}
}

static void check_ids(const struct ibv_wc *wc, int n, uint64_t first,
		      bool flush_only, const char *what)
{
	int i;

	for (i = 0; i < n; i++) {
		if (wc[i].wr_id != first + i)
			fail("%s: completion %d has wr_id %#" PRIx64 ", expected %#" PRIx64,
			     what, i, (uint64_t)wc[i].wr_id, first + i);
		if (wc[i].status == IBV_WC_SUCCESS ||
		    (flush_only && wc[i].status != IBV_WC_WR_FLUSH_ERR))
			fail("%s: completion %d (wr_id %#" PRIx64 ") has status %s",
			     what, i, (uint64_t)wc[i].wr_id,
			     ibv_wc_status_str(wc[i].status));
	}
}

/* Prints how many of @n completions had each status. */
static void note_statuses(const struct ibv_wc *wc, int n, const char *what)
{
	int count[IBV_WC_GENERAL_ERR + 1] = { 0 };
	int i;

	for (i = 0; i < n; i++)
		if ((unsigned int)wc[i].status < ARRAY_SIZE(count))
			count[wc[i].status]++;
	for (i = 0; i < (int)ARRAY_SIZE(count); i++)
		if (count[i])
			note("%s: %d x %s", what, count[i],
			     ibv_wc_status_str((enum ibv_wc_status)i));
}

struct qp_rings {
	struct ibv_qp *qp;
	struct siw_sqe *sq;
	struct siw_rqe *rq;
	struct ring_map sq_map;
	unsigned int nsq, nrq;
};

/* Creates the QP and finds its rings; one receive (ID_MAGIC) is posted. */
static struct qp_rings make_qp_rings(struct ibv_pd *pd, struct cq_ring *scq,
				     struct cq_ring *rcq)
{
	struct qp_spec spec = {
		.send_cq = scq->cq, .recv_cq = rcq->cq,
		.max_send_wr = ASK_SQ, .max_recv_wr = ASK_RQ, .max_sge = 1,
	};
	struct ring_map before[MAX_RING_MAPS], after[MAX_RING_MAPS];
	struct ring_map fresh[MAX_RING_MAPS], rq_map;
	struct ibv_sge sge = { 0x1000, 64, 0x1234 };
	int nb = uverbs_maps(before, MAX_RING_MAPS), na, i;
	struct ibv_qp_cap cap;
	struct qp_rings q;

	q.qp = make_qp(pd, &spec, &cap);
	na = uverbs_maps(after, MAX_RING_MAPS);
	if (new_maps(before, nb, after, na, fresh, MAX_RING_MAPS) != 2)
		fail("ibv_create_qp: expected two new uverbs mappings (SQ, RQ)");
	q.nsq = cap.max_send_wr;
	q.nrq = cap.max_recv_wr;
	if (q.nsq > CQE || q.nrq > CQE)
		fail("granted %u/%u WRs, more than the CQs hold", q.nsq, q.nrq);
	set_state(q.qp, IBV_QPS_INIT);
	post_recvs(q.qp, ID_MAGIC, 1, &sge);
	i = *(uint64_t *)fresh[0].start == ID_MAGIC ? 0 : 1;
	if (*(uint64_t *)fresh[i].start != ID_MAGIC)
		fail("libsiw's receive is in neither new mapping");
	rq_map = fresh[i];
	q.sq_map = fresh[1 - i];
	if (page_round(q.nsq * sizeof(struct siw_sqe)) != q.sq_map.len ||
	    page_round(q.nrq * sizeof(struct siw_rqe)) != rq_map.len)
		fail("ring mappings of %zu/%zu bytes do not fit %u SQEs / %u RQEs",
		     q.sq_map.len, rq_map.len, q.nsq, q.nrq);
	q.sq = (struct siw_sqe *)q.sq_map.start;
	q.rq = (struct siw_rqe *)rq_map.start;
	note("SQ ring %u at key %#" PRIx64 ", RQ ring %u at key %#" PRIx64,
	     q.nsq, q.sq_map.key, q.nrq, rq_map.key);
	return q;
}

static void phase1(struct qp_rings *q, struct cq_ring *scq,
		   struct cq_ring *rcq, struct ibv_wc *wc)
{
	unsigned int i;
	int err;

	step("1: garbage in every SQ slot and RQ slot, doorbell in INIT, ERROR");
	for (i = 0; i < q->nsq; i++)
		garbage_sqe(&q->sq[i], i, ID_GARBAGE1 + i);
	for (i = 1; i < q->nrq; i++)
		garbage_rqe(&q->rq[i], i, ID_RQ_GARBAGE + i);
	__atomic_store_n(&scq->ctrl->flags, ~0u, __ATOMIC_RELEASE);
	err = raw_doorbell(q->qp);
	note("doorbell in INIT: %s", err ? errname(err) : "accepted");
	set_state(q->qp, IBV_QPS_ERR);

	ring_collect(rcq, wc, q->nrq, q->qp->qp_num);
	check_ids(wc, 1, ID_MAGIC, true, "libsiw's receive");
	check_ids(wc + 1, q->nrq - 1, ID_RQ_GARBAGE + 1, true, "garbage RQEs");
	for (i = 0; i < q->nrq; i++)
		if (wc[i].opcode != IBV_WC_RECV)
			fail("receive flush %u has opcode %d, not RECV", i,
			     wc[i].opcode);
	expect_released(q->rq, sizeof(struct siw_rqe), q->nrq, 0, "RQ");
	note("%u RQEs: %u flush completions in order", q->nrq, q->nrq);

	ring_collect(scq, wc, q->nsq, q->qp->qp_num);
	check_ids(wc, q->nsq, ID_GARBAGE1, false, "garbage SQEs flushed by ERROR");
	note_statuses(wc, q->nsq, "garbage SQEs flushed by ERROR");
	expect_released(q->sq, sizeof(struct siw_sqe), q->nsq, 0, "SQ");
	note("%u garbage SQEs: %u error completions in order", q->nsq, q->nsq);
}

static void phase2(struct qp_rings *q, struct cq_ring *scq, struct ibv_wc *wc)
{
	unsigned int i;
	int err;

	step("2: a full ring of garbage in ERROR, raw doorbell");
	for (i = 0; i < q->nsq; i++)
		garbage_sqe(&q->sq[i], i + 3, ID_GARBAGE2 + i);
	err = raw_doorbell(q->qp);
	if (err)
		fail_err(err, "doorbell in ERROR");
	ring_collect(scq, wc, q->nsq, q->qp->qp_num);
	check_ids(wc, q->nsq, ID_GARBAGE2, false, "garbage SQEs in ERROR");
	note_statuses(wc, q->nsq, "garbage SQEs in ERROR");
	expect_released(q->sq, sizeof(struct siw_sqe), q->nsq, 0, "SQ");
}

static void phase3(struct qp_rings *q, struct cq_ring *scq, struct ibv_wc *wc)
{
	char buf[64];
	struct ibv_sge sge = { (uintptr_t)buf, sizeof(buf), 0x1234 };
	int err;

	step("3: a harmless SEND through libsiw in ERROR");
	err = post_sends(q->qp, ID_HARMLESS, 1, &sge);
	if (err)
		fail_err(err, "ibv_post_send in ERROR");
	ring_collect(scq, wc, 1, q->qp->qp_num);
	check_ids(wc, 1, ID_HARMLESS, true, "harmless SEND");
	if (wc[0].opcode != IBV_WC_SEND)
		fail("harmless SEND flushed with opcode %d", wc[0].opcode);
}

static void expect_mmap_fails(int fd, size_t len, uint64_t key,
			      const char *what)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		       (off_t)key);

	if (p != MAP_FAILED)
		fail("mmap of %s (%zu bytes at key %#" PRIx64 ") succeeded",
		     what, len, key);
	note("mmap of %s: %s", what, errname(errno));
}

/* Returns a second view of the SQ, to be used after the QP is gone. */
static void *phase4(struct ibv_context *ctx, struct qp_rings *q)
{
	int fd = ctx->cmd_fd;
	void *view;

	step("4: mmap abuse on the uverbs file");
	expect_mmap_fails(fd, q->sq_map.len + page, q->sq_map.key,
			  "the SQ key, one page too long");
	expect_mmap_fails(fd, page, q->sq_map.key + page,
			  "the SQ's second page");
	expect_mmap_fails(fd, page, 0x7ffff000ull << 12, "an unknown key");
	view = mmap(NULL, q->sq_map.len, PROT_READ | PROT_WRITE, MAP_SHARED,
		    fd, (off_t)q->sq_map.key);
	if (view == MAP_FAILED)
		fail_err(errno, "a second mapping of the SQ key");
	if (memcmp(view, q->sq, q->sq_map.len))
		fail("the second SQ mapping shows other memory");
	return view;
}

static void phase4_after_destroy(struct ibv_context *ctx, void *view,
				 const struct ring_map *sq_map)
{
	step("4: the second SQ view outlives the QP; the key is dead");
	memset(view, 0xa5, sq_map->len);
	expect_mmap_fails(ctx->cmd_fd, sq_map->len, sq_map->key,
			  "the SQ key after destroy_qp");
	if (munmap(view, sq_map->len))
		fail_err(errno, "munmap of the second SQ view");
}

static void phase5(struct ibv_pd *pd, struct cq_ring *rcq)
{
	struct ibv_srq_init_attr init = { .attr = { .max_wr = 32, .max_sge = 1 } };
	struct qp_spec spec = {
		.send_cq = rcq->cq, .recv_cq = rcq->cq,
		.max_send_wr = 4, .max_sge = 1,
	};
	struct ring_map before[MAX_RING_MAPS], m;
	struct ibv_sge sge = { 0x1000, 64, 0x1234 };
	int nb = uverbs_maps(before, MAX_RING_MAPS);
	struct ibv_wc wc[64];
	struct ibv_srq *srq;
	struct ibv_qp *qp;
	unsigned int i, n;

	step("5: garbage in an SRQ ring");
	srq = ibv_create_srq(pd, &init);
	if (!srq) {
		if (!is_unsupported(errno))
			fail_err(errno, "ibv_create_srq");
		note("no SRQs in the kernel yet: phase 5 not run");
		return;
	}
	m = one_new_map(before, nb, "ibv_create_srq");
	post_srq_recvs(srq, ID_MAGIC, 1, &sge);
	if (*(uint64_t *)m.start != ID_MAGIC)
		fail("libsiw's SRQ receive is not in the new mapping");
	n = (unsigned int)(m.len / sizeof(struct siw_rqe));
	if (n > init.attr.max_wr)
		n = init.attr.max_wr;
	for (i = 1; i < n; i++)
		garbage_rqe(&((struct siw_rqe *)m.start)[i], i,
			    ID_RQ_GARBAGE + i);
	spec.srq = srq;
	qp = make_qp(pd, &spec, NULL);
	set_state(qp, IBV_QPS_INIT);
	set_state(qp, IBV_QPS_ERR);
	if (collect_none(rcq->cq, wc, ARRAY_SIZE(wc)))
		fail("a QP going to ERROR completed SRQ receives");
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
	must(ibv_destroy_srq(srq), "ibv_destroy_srq with a garbage ring");
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct cq_ring scq, rcq;
	struct ring_map sq_map;
	struct qp_rings q;
	struct ibv_wc *wc;
	void *view;

	page = (size_t)sysconf(_SC_PAGESIZE);
	wc = calloc(2 * CQE, sizeof(*wc));
	if (!wc)
		fail("out of memory");
	scq = make_cq_ring(ctx);
	rcq = make_cq_ring(ctx);
	q = make_qp_rings(pd, &scq, &rcq);

	phase1(&q, &scq, &rcq, wc);
	phase2(&q, &scq, wc);
	phase3(&q, &scq, wc);
	view = phase4(ctx, &q);
	sq_map = q.sq_map;
	must(ibv_destroy_qp(q.qp), "ibv_destroy_qp");
	phase4_after_destroy(ctx, view, &sq_map);
	/* libsiw polled the send CQ; the receive CQ is reused below. */
	phase5(pd, &rcq);

	must(ibv_destroy_cq(scq.cq), "ibv_destroy_cq");
	must(ibv_destroy_cq(rcq.cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	free(wc);
	pass();
}
