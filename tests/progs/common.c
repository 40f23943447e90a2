// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared helpers of the verbs test programs: opening the device, making
 * objects, posting, collecting completions, async events, and finding
 * libsiw's ring mappings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "common.h"

const char *prog = "prog";

void set_prog(const char *argv0)
{
	const char *slash = strrchr(argv0, '/');

	prog = slash ? slash + 1 : argv0;
	setvbuf(stdout, NULL, _IOLBF, 0);
}

const char *prog_init(int argc, char **argv)
{
	set_prog(argv[0]);
	if (argc != 2) {
		fprintf(stderr, "usage: %s RDMA-DEVICE\n", prog);
		exit(EXIT_FAIL);
	}
	return argv[1];
}

static void vsay(FILE *f, const char *tag, const char *fmt, va_list ap)
{
	fprintf(f, "%s%s: ", tag, prog);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

void step(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stdout, "== ", fmt, ap);
	va_end(ap);
}

void note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(stdout, "   ", fmt, ap);
	va_end(ap);
}

void fail(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	va_start(ap, fmt);
	vsay(stderr, "FAIL: ", fmt, ap);
	va_end(ap);
	exit(EXIT_FAIL);
}

void fail_err(int err, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fail("%s: %s", msg, errname(err));
}

void skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stderr);
	va_start(ap, fmt);
	vsay(stdout, "SKIP: ", fmt, ap);
	va_end(ap);
	exit(EXIT_SKIP);
}

void pass(void)
{
	printf("PASS: %s\n", prog);
	exit(EXIT_PASS);
}

void must(int err, const char *what)
{
	if (err)
		fail_err(err, "%s", what);
}

const char *errname(int err)
{
	static char buf[128];
	const char *name = strerrorname_np(err);

	snprintf(buf, sizeof(buf), "errno %d %s (%s)", err,
		 name ? name : "?", strerror(err));
	return buf;
}

bool is_unsupported(int err)
{
	return err == EOPNOTSUPP || err == ENOSYS;
}

void fail_or_skip(int err, const char *what)
{
	if (is_unsupported(err))
		skip("%s: %s: the kernel does not implement it yet", what,
		     errname(err));
	fail_err(err, "%s", what);
}

struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		fail_err(errno, "ibv_get_device_list");
	for (i = 0; i < n; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			fail_err(errno, "ibv_open_device(%s)", name);
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		fail("device %s not found (is the rdma link there?)", name);
	return ctx;
}

struct ibv_pd *make_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd)
		fail_or_skip(errno, "ibv_alloc_pd");
	return pd;
}

struct ibv_cq *make_cq(struct ibv_context *ctx, int cqe)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

	if (!cq)
		fail_or_skip(errno, "ibv_create_cq");
	if (cq->cqe < cqe)
		fail("ibv_create_cq(%d) granted only %d entries", cqe, cq->cqe);
	return cq;
}

struct ibv_qp *try_make_qp(struct ibv_pd *pd, const struct qp_spec *spec,
			   enum ibv_qp_type type, struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr attr = {
		.send_cq = spec->send_cq,
		.recv_cq = spec->recv_cq,
		.srq = spec->srq,
		.cap = {
			.max_send_wr = spec->max_send_wr,
			.max_recv_wr = spec->srq ? 0 : spec->max_recv_wr,
			.max_send_sge = spec->max_sge,
			.max_recv_sge = spec->srq ? 0 : spec->max_sge,
			.max_inline_data = spec->max_inline,
		},
		.qp_type = type,
		.sq_sig_all = spec->sig_all,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &attr);

	if (qp && cap)
		*cap = attr.cap;
	return qp;
}

struct ibv_qp *make_qp(struct ibv_pd *pd, const struct qp_spec *spec,
		       struct ibv_qp_cap *cap)
{
	struct ibv_qp_cap got;
	struct ibv_qp *qp = try_make_qp(pd, spec, IBV_QPT_RC, &got);

	if (!qp)
		fail_or_skip(errno, "ibv_create_qp(RC)");
	if (got.max_send_wr < spec->max_send_wr ||
	    (!spec->srq && got.max_recv_wr < spec->max_recv_wr))
		fail("ibv_create_qp granted %u/%u send/recv WRs, asked %u/%u",
		     got.max_send_wr, got.max_recv_wr, spec->max_send_wr,
		     spec->max_recv_wr);
	if (cap)
		*cap = got;
	return qp;
}

int try_set_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	struct ibv_qp_attr attr = { .qp_state = state };
	int mask = IBV_QP_STATE;

	if (state == IBV_QPS_INIT) {
		attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ;
		attr.port_num = 1;
		mask |= IBV_QP_ACCESS_FLAGS | IBV_QP_PORT;
	}
	return ibv_modify_qp(qp, &attr, mask);
}

void set_state(struct ibv_qp *qp, enum ibv_qp_state state)
{
	int err = try_set_state(qp, state);

	if (err)
		fail_err(err, "ibv_modify_qp(QP %u -> %s)", qp->qp_num,
			 state_name(state));
}

enum ibv_qp_state get_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;
	int err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = (enum ibv_qp_state)-1;
	err = ibv_query_qp(qp, &attr, IBV_QP_STATE, &init);
	if (err)
		fail_err(err, "ibv_query_qp(QP %u)", qp->qp_num);
	return attr.qp_state;
}

const char *state_name(enum ibv_qp_state state)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};
	static char other[32];

	if ((unsigned int)state < ARRAY_SIZE(names) && names[state])
		return names[state];
	snprintf(other, sizeof(other), "state(%d)", (int)state);
	return other;
}

void post_recvs(struct ibv_qp *qp, uint64_t first_id, int n,
		struct ibv_sge *sge)
{
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = first_id + i;
		err = ibv_post_recv(qp, &wr, &bad);
		if (err)
			fail_err(err, "ibv_post_recv #%d of %d on QP %u", i, n,
				 qp->qp_num);
	}
}

void post_srq_recvs(struct ibv_srq *srq, uint64_t first_id, int n,
		    struct ibv_sge *sge)
{
	struct ibv_recv_wr wr = { .sg_list = sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int i, err;

	for (i = 0; i < n; i++) {
		wr.wr_id = first_id + i;
		err = ibv_post_srq_recv(srq, &wr, &bad);
		if (err)
			fail_err(err, "ibv_post_srq_recv #%d of %d", i, n);
	}
}

int post_sends(struct ibv_qp *qp, uint64_t first_id, int n,
	       struct ibv_sge *sge)
{
	struct ibv_send_wr wr[64], *bad = NULL;
	int i;

	if (n < 1 || n > (int)ARRAY_SIZE(wr))
		fail("post_sends: %d WRs is out of range", n);
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < n; i++) {
		wr[i].wr_id = first_id + i;
		wr[i].sg_list = sge;
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	return ibv_post_send(qp, wr, &bad);
}

int test_slow(void)
{
	static int slow;
	const char *s;

	if (!slow) {
		s = getenv("SIW_TEST_SLOW");
		slow = s ? atoi(s) : 1;
		if (slow < 1 || slow > 50)
			slow = 1;
	}
	return slow;
}

int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Polls until @want are there or @ms passed; returns the new total. */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, int got, int want,
		    int max, int ms)
{
	int64_t end = mono_ms() + ms;
	int n;

	while (got < want) {
		n = ibv_poll_cq(cq, max - got, wc + got);
		if (n < 0)
			fail("ibv_poll_cq returned %d", n);
		got += n;
		if (got >= want || mono_ms() > end)
			break;
		if (!n)
			sleep_ms(5);
	}
	return got;
}

int collect(struct ibv_cq *cq, struct ibv_wc *wc, int want, int max)
{
	int got = poll_for(cq, wc, 0, want, max, WAIT_MS);

	/* Look for surplus completions, which no test expects. */
	return poll_for(cq, wc, got, max, max, QUIET_MS);
}

int collect_none(struct ibv_cq *cq, struct ibv_wc *wc, int max)
{
	return poll_for(cq, wc, 0, max, max, QUIET_MS);
}

void check_flushed(const char *what, const struct ibv_wc *wc, int n,
		   uint64_t first_id, uint32_t qp_num, int opcode)
{
	int i;

	for (i = 0; i < n; i++) {
		if (wc[i].wr_id != first_id + i)
			fail("%s: completion %d has wr_id %#" PRIx64
			     ", expected %#" PRIx64 " (lost, reordered or foreign WR)",
			     what, i, (uint64_t)wc[i].wr_id, first_id + i);
		if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
			fail("%s: completion %d (wr_id %#" PRIx64
			     ") has status %s, expected WR_FLUSH_ERR",
			     what, i, (uint64_t)wc[i].wr_id,
			     ibv_wc_status_str(wc[i].status));
		if (wc[i].qp_num != qp_num)
			fail("%s: completion %d names QP %u, expected %u",
			     what, i, wc[i].qp_num, qp_num);
		if (opcode >= 0 && (int)wc[i].opcode != opcode)
			fail("%s: completion %d has opcode %d, expected %d",
			     what, i, wc[i].opcode, opcode);
	}
}

bool next_async_event(struct ibv_context *ctx, int ms,
		      struct ibv_async_event *ev)
{
	int64_t end = mono_ms() + ms;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	int left, n;

	for (;;) {
		left = (int)(end - mono_ms());
		if (left < 0)
			return false;
		n = poll(&pfd, 1, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			fail_err(errno, "poll(async_fd)");
		if (n == 0)
			return false;
		if (ibv_get_async_event(ctx, ev))
			fail_err(errno, "ibv_get_async_event");
		ibv_ack_async_event(ev);
		return true;
	}
}

bool wait_async_event(struct ibv_context *ctx, enum ibv_event_type type,
		      int ms, struct ibv_async_event *ev)
{
	int64_t end = mono_ms() + ms;

	while (next_async_event(ctx, (int)(end - mono_ms()), ev)) {
		note("async event %s", ibv_event_type_str(ev->event_type));
		if (ev->event_type == type)
			return true;
	}
	return false;
}

size_t page_round(size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (len + page - 1) / page * page;
}

void *page_alloc(size_t len)
{
	void *p = mmap(NULL, page_round(len), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		fail_err(errno, "mmap(%zu bytes)", len);
	return p;
}

void page_free(void *p, size_t len)
{
	munmap(p, page_round(len));
}

struct ibv_mr *reg_or_null(struct ibv_pd *pd, void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);

	if (!mr) {
		if (!is_unsupported(errno))
			fail_err(errno, "ibv_reg_mr(%zu bytes)", len);
		note("no MRs in the kernel yet: SGEs carry a made-up lkey");
	}
	return mr;
}

int uverbs_maps(struct ring_map *maps, int max)
{
	char line[512], path[256];
	unsigned long start, end;
	unsigned long long off;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		fail_err(errno, "open /proc/self/maps");
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %255s", &start, &end,
			   &off, path) < 3)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22))
			continue;
		if (n == max)
			fail("more than %d uverbs mappings", max);
		maps[n].start = start;
		maps[n].len = end - start;
		maps[n].key = off;
		n++;
	}
	fclose(f);
	return n;
}

int new_maps(const struct ring_map *before, int nb,
	     const struct ring_map *after, int na,
	     struct ring_map *out, int max)
{
	int i, j, n = 0;

	for (i = 0; i < na; i++) {
		for (j = 0; j < nb; j++)
			if (after[i].start == before[j].start &&
			    after[i].len == before[j].len)
				break;
		if (j < nb)
			continue;
		if (n == max)
			fail("too many new uverbs mappings");
		out[n++] = after[i];
	}
	return n;
}

int uverbs_write(int fd, uint32_t command, const void *cmd,
			size_t cmd_len, size_t resp_len)
{
	struct ib_uverbs_cmd_hdr hdr = {
		.command = command,
		.in_words = (uint16_t)((sizeof(hdr) + cmd_len) / 4),
		.out_words = (uint16_t)(resp_len / 4),
	};
	uint8_t buf[256];
	ssize_t n;

	memcpy(buf, &hdr, sizeof(hdr));
	memcpy(buf + sizeof(hdr), cmd, cmd_len);
	n = write(fd, buf, sizeof(hdr) + cmd_len);
	if (n == (ssize_t)(sizeof(hdr) + cmd_len))
		return 0;
	return n < 0 ? errno : EIO;
}

int raw_doorbell(struct ibv_qp *qp)
{
	struct ib_uverbs_post_send_resp resp = { 0 };
	struct ib_uverbs_post_send cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = qp->handle;
	cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return uverbs_write(qp->context->cmd_fd, IB_USER_VERBS_CMD_POST_SEND,
			    &cmd, sizeof(cmd), sizeof(resp));
}

int query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ib_uverbs_query_srq_resp resp = { 0 };
	struct ib_uverbs_query_srq cmd;
	int err = ibv_query_srq(srq, attr);

	if (err != EOPNOTSUPP)
		return err;
	memset(&cmd, 0, sizeof(cmd));
	cmd.response = (uintptr_t)&resp;
	cmd.srq_handle = srq->handle;
	err = uverbs_write(srq->context->cmd_fd, IB_USER_VERBS_CMD_QUERY_SRQ,
			   &cmd, sizeof(cmd), sizeof(resp));
	if (err)
		return err;
	attr->max_wr = resp.max_wr;
	attr->max_sge = resp.max_sge;
	attr->srq_limit = resp.srq_limit;
	return 0;
}

struct ibv_srq_attr srq_attr(struct ibv_srq *srq)
{
	struct ibv_srq_attr attr;

	memset(&attr, 0xff, sizeof(attr));
	must(query_srq(srq, &attr), "query_srq");
	return attr;
}

void expect_srq_limit(struct ibv_srq *srq, uint32_t want, const char *when)
{
	uint32_t got = srq_attr(srq).srq_limit;

	if (got != want)
		fail("%s: query_srq reads srq_limit %u, expected %u", when, got,
		     want);
	note("%s: srq_limit %u", when, got);
}

void connect_qp_gid(struct ibv_context *ctx, struct ibv_qp *qp,
		    uint32_t peer, int gid_index)
{
	struct ibv_qp_attr attr;
	int err;

	set_state(qp, IBV_QPS_INIT);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = peer;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = 1;
	attr.min_rnr_timer = 12;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.sgid_index = gid_index;
	attr.ah_attr.grh.hop_limit = 1;
	err = ibv_query_gid(ctx, 1, gid_index, &attr.ah_attr.grh.dgid);
	if (err)
		fail("ibv_query_gid(index %d): %d", gid_index, err);
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (err)
		fail_err(err, "ibv_modify_qp(QP %u -> RTR, peer QP %u)",
			 qp->qp_num, peer);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = 1;
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
	if (err)
		fail_err(err, "ibv_modify_qp(QP %u -> RTS)", qp->qp_num);
}
