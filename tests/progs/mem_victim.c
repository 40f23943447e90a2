// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A verbs process that exposes memory to a hostile iWARP peer
 * (tests/vm/tools/iwarp_mem_peer.py in tests/vm/262-hostile-peer-mem.sh).
 *
 *	mem_victim listen ADDR PORT [--ird N] [--qp-access FLAGS]
 *		[--ready FILE] [--dereg-after N --dereg-done FILE]
 *		[--flush-within MS --flush-done FILE] [--wait S]
 *	mem_victim qpc-arm DEVICE PEER_ADDR --ready FILE --quit FILE [--wait S]
 *	mem_victim reader ADDR PORT [--wait S]
 *
 * listen: accepts one rdma_cm connection on ADDR:PORT. It makes PD1 and
 * PD2, the QP in PD2, and two buffers of MEM_LEN octets registered with
 * local write, remote write and remote read: one in PD2 (the QP's) filled
 * with pattern A (octet i = 7 i + 1), one in PD1 filled with pattern C
 * (octet i = 13 i + 5). The accept's private data names them to the peer
 * (struct victim_pd, big endian). Then:
 *   --ird N          the accept's responder_resources (default 1);
 *   --qp-access X    once connected, the QP's access flags become X;
 *   --ready FILE     FILE is created when the QP is set up as asked;
 *   --dereg-after N  once the first N octets of the PD2 buffer hold the
 *                    peer's octet (0xee), the PD2 MR is deregistered, the
 *                    buffer (still mapped) filled with pattern B (0x11),
 *                    and the file of --dereg-done created;
 *   --flush-within MS  a receive WR is posted before the accept; on the
 *                    first async error event (the peer's bad frame) the QP
 *                    is moved to ERROR, as a consumer that drains it does,
 *                    and one Send is posted: both WRs must complete with
 *                    WR_FLUSH_ERR within MS ms ("flush: ..."; a "FAIL:"
 *                    line and exit 1 if not); then the file of
 *                    --flush-done is created;
 *   --wait S         how long the connection may last (default 20 s).
 * When the connection has ended it reports, one line each: the async
 * events ("async event NAME"), "disconnected", "qp state NAME" and for each
 * buffer "buffer pdN: intact" or "buffer pdN: changed: ...". The caller
 * judges them. Exit 0 when it got that far, 1 (a "FAIL:" line) when it
 * could not set up, or the connection did not end within --wait.
 *
 * qpc-arm: moves a QP of DEVICE to RTR with an address vector naming
 * PEER_ADDR (QP 1) and GID 1 (our IPv4 address) as source, which makes
 * siw listen for QP connections without rdma_cm (qp_port) in this
 * network namespace; creates the --ready file, waits for the --quit file
 * and destroys the QP.
 *
 * reader: the other way round, a consumer that reads from the peer. It
 * connects to ADDR:PORT (rdma_cm, initiator depth 1) and, as soon as the
 * connection is established, posts one RDMA Read of the memory the peer
 * names in the private data of its MPA reply (struct reader_pd, big
 * endian), into a buffer of its own that it zeroed. The Read must complete
 * successfully and the buffer must then hold pattern A: "read: N octets of
 * pattern A", exit 0; anything else fails.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

#define MEM_LEN		(64 * 1024)
#define PEER_OCTET	0xee
#define PATTERN_B	0x11
#define VICTIM_MAGIC	"SIWV"

/* The accept's private data; every field big endian. */
struct victim_pd {
	char magic[4];
	uint32_t qpn;
	uint32_t len;		/* of each buffer */
	uint32_t stag_pd2;	/* the QP's PD */
	uint32_t stag_pd1;	/* another PD */
	uint64_t addr_pd2;
	uint64_t addr_pd1;
} __attribute__((packed));

struct opts {
	int ird;
	int qp_access;		/* -1: leave them */
	const char *ready;
	size_t dereg_after;	/* 0: no deregistration */
	const char *dereg_done;
	int flush_ms;		/* 0: no flush check */
	const char *flush_done;
	const char *quit;
	int wait_s;
};

static uint8_t pattern_a(size_t i) { return (uint8_t)(i * 7 + 1); }
static uint8_t pattern_c(size_t i) { return (uint8_t)(i * 13 + 5); }
static uint8_t pattern_b(size_t i) { (void)i; return PATTERN_B; }

static void touch(const char *path)
{
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		fail_err(errno, "create %s", path);
	close(fd);
}

static void wait_file(const char *path, int ms)
{
	int64_t end = mono_ms() + ms;

	while (access(path, F_OK)) {
		if (mono_ms() > end)
			fail("%s did not appear within %d ms", path, ms);
		sleep_ms(20);
	}
}

static void fill(volatile uint8_t *buf, uint8_t (*pat)(size_t))
{
	size_t i;

	for (i = 0; i < MEM_LEN; i++)
		buf[i] = pat(i);
}

/* "buffer NAME: intact" or what differs from @pat. */
static void report_buffer(const char *name, const volatile uint8_t *buf,
			  uint8_t (*pat)(size_t), const char *pat_name)
{
	size_t i, first = 0, last = 0, n = 0, peer = 0;

	for (i = 0; i < MEM_LEN; i++) {
		if (buf[i] == pat(i))
			continue;
		if (!n++)
			first = i;
		last = i;
		peer += buf[i] == PEER_OCTET;
	}
	if (!n) {
		printf("buffer %s: intact (pattern %s)\n", name, pat_name);
		return;
	}
	printf("buffer %s: changed: %zu of %d octets differ from pattern %s, offsets %zu..%zu, %zu of them hold the peer's 0x%02x\n",
	       name, n, MEM_LEN, pat_name, first, last, peer, PEER_OCTET);
}

/* Until the first @n octets of @buf hold the peer's octet. */
static void wait_peer_octets(const volatile uint8_t *buf, size_t n, int ms)
{
	int64_t end = mono_ms() + ms;
	size_t i = 0;

	while (i < n) {
		if (buf[i] == PEER_OCTET) {
			i++;
			continue;
		}
		if (mono_ms() > end)
			fail("the peer's Write reached only %zu of the first %zu octets within %d ms",
			     i, n, ms);
		sleep_ms(5);
	}
}

static void print_async(struct ibv_async_event *ev)
{
	static const char *const names[] = {
		[IBV_EVENT_COMM_EST] = "COMM_EST",
		[IBV_EVENT_SQ_DRAINED] = "SQ_DRAINED",
		[IBV_EVENT_QP_FATAL] = "QP_FATAL",
		[IBV_EVENT_QP_REQ_ERR] = "QP_REQ_ERR",
		[IBV_EVENT_QP_ACCESS_ERR] = "QP_ACCESS_ERR",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "QP_LAST_WQE_REACHED",
	};
	unsigned int t = ev->event_type;

	printf("async event %s (%s)\n",
	       t < ARRAY_SIZE(names) && names[t] ? names[t] : "other",
	       ibv_event_type_str(ev->event_type));
}

/*
 * Until the connection ends (DISCONNECTED) or @ms pass, printing async
 * events. Returns whether it ended.
 */
static bool wait_end(struct rdma_event_channel *ch, struct ibv_context *ctx,
		     int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = ch->fd, .events = POLLIN },
		{ .fd = ctx->async_fd, .events = POLLIN },
	};
	int64_t end = mono_ms() + ms;
	struct ibv_async_event aev;
	struct rdma_cm_event *ev;
	bool over = false;
	int left;

	while (!over && (left = (int)(end - mono_ms())) > 0) {
		if (poll(pfd, 2, left) < 0) {
			if (errno == EINTR)
				continue;
			fail_err(errno, "poll");
		}
		if (pfd[1].revents & POLLIN) {
			if (ibv_get_async_event(ctx, &aev))
				fail_err(errno, "ibv_get_async_event");
			ibv_ack_async_event(&aev);
			print_async(&aev);
		}
		if (pfd[0].revents & POLLIN) {
			if (rdma_get_cm_event(ch, &ev))
				fail_err(errno, "rdma_get_cm_event");
			printf("rdma_cm event %s (status %d)\n",
			       rdma_event_str(ev->event), ev->status);
			over = ev->event == RDMA_CM_EVENT_DISCONNECTED;
			rdma_ack_cm_event(ev);
		}
	}
	/* Async events that come with or just after the disconnection. */
	while (next_async_event(ctx, QUIET_MS, &aev))
		print_async(&aev);
	return over;
}

/*
 * --flush-within: wait for the async error event of the peer's bad frame,
 * move the QP to ERROR, post a Send, and give the two WRs (the receive
 * posted before the accept, wr_id 1, and the Send, wr_id 2) @o->flush_ms
 * to complete as flushed. Returns whether they did.
 */
static bool flush_check(struct ibv_context *ctx, struct ibv_qp *qp,
			struct ibv_cq *cq, const struct opts *o)
{
	struct ibv_qp_attr attr = { .qp_state = IBV_QPS_ERR };
	struct ibv_send_wr swr = { .wr_id = 2, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_async_event aev;
	struct ibv_wc wc[4];
	int64_t start, end;
	int err, n, got = 0, flushed = 0;

	for (;;) {
		if (!next_async_event(ctx, o->wait_s * 1000, &aev))
			fail("no async error event within %d s: the peer's bad frame was not refused",
			     o->wait_s);
		print_async(&aev);
		if (aev.event_type == IBV_EVENT_QP_FATAL ||
		    aev.event_type == IBV_EVENT_QP_REQ_ERR ||
		    aev.event_type == IBV_EVENT_QP_ACCESS_ERR)
			break;
	}
	start = mono_ms();
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE);
	if (err)
		fail_err(err, "ibv_modify_qp(QP %u, ERR)", qp->qp_num);
	printf("qp moved to ERR\n");
	err = ibv_post_send(qp, &swr, &bad);
	if (err)
		fail_err(err, "ibv_post_send in ERR");
	end = start + o->flush_ms;
	while (got < 2 && mono_ms() < end) {
		n = ibv_poll_cq(cq, (int)ARRAY_SIZE(wc) - got, wc + got);
		if (n < 0)
			fail("ibv_poll_cq: %d", n);
		if (!n)
			sleep_ms(1);
		got += n;
	}
	for (n = 0; n < got; n++) {
		printf("completion wr_id %" PRIu64 ": %s\n",
		       (uint64_t)wc[n].wr_id, ibv_wc_status_str(wc[n].status));
		flushed += wc[n].status == IBV_WC_WR_FLUSH_ERR;
	}
	if (flushed == 2 && got == 2) {
		printf("flush: the receive and the Send flushed %" PRId64 " ms after the move to ERR\n",
		       mono_ms() - start);
		return true;
	}
	printf("FAIL: %d of the 2 WRs completed as flushed within %d ms after the move to ERR\n",
	       flushed, o->flush_ms);
	return false;
}

static struct ibv_mr *reg(struct ibv_pd *pd, void *buf)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, MEM_LEN,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ);

	if (!mr)
		fail_err(errno, "ibv_reg_mr(%d octets, remote read and write)",
			 MEM_LEN);
	return mr;
}

static void set_qp_access(struct ibv_qp *qp, int flags)
{
	struct ibv_qp_attr attr = { .qp_access_flags = flags };
	struct ibv_qp_init_attr init;
	int err;

	err = ibv_modify_qp(qp, &attr, IBV_QP_ACCESS_FLAGS);
	if (err)
		fail_err(err, "ibv_modify_qp(QP %u, access flags 0x%x)",
			 qp->qp_num, flags);
	memset(&attr, 0, sizeof(attr));
	err = ibv_query_qp(qp, &attr, IBV_QP_ACCESS_FLAGS, &init);
	if (err)
		fail_err(err, "ibv_query_qp(QP %u)", qp->qp_num);
	printf("qp access flags now 0x%x\n", attr.qp_access_flags);
}

static int listen_one(const char *addr, const char *port,
		      const struct opts *o)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param cp = { 0 };
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	struct ibv_pd *pd1, *pd2;
	struct ibv_mr *mr1, *mr2;
	struct victim_pd vpd;
	struct ibv_context *ctx;
	uint8_t *buf1, *buf2;
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	uint8_t (*pat2)(size_t) = pattern_a;
	bool over, flushed = true;
	int err;

	ch = make_channel();
	lid = listen_on(ch, addr, port, 1);
	note("listening on %s:%s", addr, port);

	ev = next_event(ch, o->wait_s * 1000, "a connection request");
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		fail("event %s, expected a connection request",
		     rdma_event_str(ev->event));
	id = ev->id;
	rdma_ack_cm_event(ev);
	ctx = id->verbs;

	pd1 = make_pd(ctx);
	pd2 = make_pd(ctx);
	qpa.send_cq = qpa.recv_cq = make_cq(ctx, 8);
	if (rdma_create_qp(id, pd2, &qpa))
		fail_err(errno, "rdma_create_qp");
	buf1 = page_alloc(MEM_LEN);
	buf2 = page_alloc(MEM_LEN);
	fill(buf1, pattern_c);
	fill(buf2, pattern_a);
	mr1 = reg(pd1, buf1);
	mr2 = reg(pd2, buf2);
	if (o->flush_ms) {
		struct ibv_sge sge = { .addr = (uintptr_t)buf2, .length = 16,
				       .lkey = mr2->lkey };

		post_recvs(id->qp, 1, 1, &sge);
	}
	printf("qp %u (pd2), pd2 buffer stag 0x%08x at 0x%" PRIxPTR
	       ", pd1 buffer stag 0x%08x at 0x%" PRIxPTR ", %d octets each\n",
	       id->qp->qp_num, mr2->rkey, (uintptr_t)buf2, mr1->rkey,
	       (uintptr_t)buf1, MEM_LEN);

	memcpy(vpd.magic, VICTIM_MAGIC, sizeof(vpd.magic));
	vpd.qpn = htobe32(id->qp->qp_num);
	vpd.len = htobe32(MEM_LEN);
	vpd.stag_pd2 = htobe32(mr2->rkey);
	vpd.stag_pd1 = htobe32(mr1->rkey);
	vpd.addr_pd2 = htobe64((uintptr_t)buf2);
	vpd.addr_pd1 = htobe64((uintptr_t)buf1);
	cp.private_data = &vpd;
	cp.private_data_len = sizeof(vpd);
	cp.responder_resources = (uint8_t)o->ird;
	cp.initiator_depth = 1;
	if (rdma_accept(id, &cp))
		fail_err(errno, "rdma_accept(responder_resources %d)", o->ird);
	expect_event(ch, id, RDMA_CM_EVENT_ESTABLISHED);
	printf("established, responder_resources %d\n", o->ird);

	if (o->qp_access >= 0)
		set_qp_access(id->qp, o->qp_access);
	touch(o->ready);

	if (o->dereg_after) {
		wait_peer_octets(buf2, o->dereg_after, WAIT_MS);
		printf("the peer's Write placed the first %zu octets\n",
		       o->dereg_after);
		err = ibv_dereg_mr(mr2);
		if (err)
			fail_err(err, "ibv_dereg_mr(pd2 buffer)");
		mr2 = NULL;
		fill(buf2, pattern_b);
		pat2 = pattern_b;
		printf("pd2 MR deregistered, buffer filled with pattern B\n");
		touch(o->dereg_done);
	}

	if (o->flush_ms) {
		flushed = flush_check(ctx, id->qp, qpa.send_cq, o);
		touch(o->flush_done);
	}

	over = wait_end(ch, ctx, o->wait_s * 1000);
	if (over)
		printf("disconnected\n");
	memset(&qattr, 0, sizeof(qattr));
	err = ibv_query_qp(id->qp, &qattr, IBV_QP_STATE, &qinit);
	if (err)
		printf("qp state unknown: ibv_query_qp: %s\n", errname(err));
	else
		printf("qp state %s\n", state_name(qattr.qp_state));
	report_buffer("pd2", buf2, pat2, pat2 == pattern_a ? "A" : "B");
	report_buffer("pd1", buf1, pattern_c, "C");
	if (!over)
		fail("the connection did not end within %d s", o->wait_s);
	if (!flushed)
		fail("the WRs of a QP moved to ERROR did not flush");

	rdma_destroy_qp(id);
	if (mr2)
		must(ibv_dereg_mr(mr2), "ibv_dereg_mr(pd2 buffer)");
	must(ibv_dereg_mr(mr1), "ibv_dereg_mr(pd1 buffer)");
	must(ibv_destroy_cq(qpa.send_cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd2), "ibv_dealloc_pd(pd2)");
	must(ibv_dealloc_pd(pd1), "ibv_dealloc_pd(pd1)");
	if (rdma_destroy_id(id) || rdma_destroy_id(lid))
		fail_err(errno, "rdma_destroy_id");
	rdma_destroy_event_channel(ch);
	page_free(buf1, MEM_LEN);
	page_free(buf2, MEM_LEN);
	printf("done\n");
	return EXIT_PASS;
}

static int qpc_arm(const char *dev, const char *peer, const struct opts *o)
{
	struct qp_spec spec = { .max_send_wr = 1, .max_recv_wr = 1,
				.max_sge = 1 };
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_qp_attr attr;
	struct in_addr in;
	union ibv_gid gid;
	struct ibv_qp *qp;
	int err;

	if (!o->ready || !o->quit)
		fail("qpc-arm needs --ready and --quit");
	if (inet_pton(AF_INET, peer, &in) != 1)
		fail("%s is no IPv4 address", peer);
	err = ibv_query_gid(ctx, 1, 1, &gid);
	if (err || gid.global.subnet_prefix ||
	    be64toh(gid.global.interface_id) >> 32 != 0xffff)
		fail("GID 1 of %s is no IPv4 address GID", dev);
	spec.send_cq = spec.recv_cq = make_cq(ctx, 2);
	qp = make_qp(pd, &spec, NULL);
	set_state(qp, IBV_QPS_INIT);

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IBV_QPS_RTR;
	attr.path_mtu = IBV_MTU_1024;
	attr.dest_qp_num = 1;
	attr.max_dest_rd_atomic = 1;
	attr.ah_attr.is_global = 1;
	attr.ah_attr.port_num = 1;
	attr.ah_attr.grh.sgid_index = 1;
	attr.ah_attr.grh.hop_limit = 1;
	attr.ah_attr.grh.dgid.raw[10] = 0xff;
	attr.ah_attr.grh.dgid.raw[11] = 0xff;
	memcpy(&attr.ah_attr.grh.dgid.raw[12], &in, 4);
	err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_MAX_DEST_RD_ATOMIC);
	if (err)
		fail_err(err, "ibv_modify_qp(QP %u -> RTR, peer %s QP 1)",
			 qp->qp_num, peer);
	printf("qp %u in RTR, expects QP 1 of %s\n", qp->qp_num, peer);
	touch(o->ready);
	wait_file(o->quit, o->wait_s * 1000);
	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
	must(ibv_destroy_cq(spec.send_cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	printf("done\n");
	return EXIT_PASS;
}

/* The private data of the peer's MPA reply in reader mode; big endian. */
struct reader_pd {
	uint32_t stag;
	uint64_t to;
	uint32_t len;
} __attribute__((packed));

static void post_read(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t len,
		      const struct reader_pd *rpd)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)mr->addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	int err;

	wr.wr.rdma.remote_addr = be64toh(rpd->to);
	wr.wr.rdma.rkey = be32toh(rpd->stag);
	err = ibv_post_send(qp, &wr, &bad);
	if (err)
		fail_err(err, "ibv_post_send(RDMA Read of %u octets)", len);
}

static int reader(const char *addr, const char *port, const struct opts *o)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param cp = {
		.initiator_depth = 1, .responder_resources = 1,
	};
	struct rdma_addrinfo *ai = lookup(addr, port, false);
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *id = resolved_id(ch, ai);
	struct rdma_cm_event *ev;
	struct reader_pd rpd;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	uint8_t *buf;
	uint32_t len, i;

	pd = make_pd(id->verbs);
	qpa.send_cq = qpa.recv_cq = make_cq(id->verbs, 8);
	if (rdma_create_qp(id, pd, &qpa))
		fail_err(errno, "rdma_create_qp");
	buf = page_alloc(MEM_LEN);
	memset(buf, 0, MEM_LEN);
	mr = reg(pd, buf);
	if (rdma_connect(id, &cp))
		fail_err(errno, "rdma_connect to %s:%s", addr, port);
	ev = next_event(ch, o->wait_s * 1000, "the connection");
	if (ev->event != RDMA_CM_EVENT_ESTABLISHED)
		fail("event %s (status %d), expected RDMA_CM_EVENT_ESTABLISHED",
		     rdma_event_str(ev->event), ev->status);
	if (ev->param.conn.private_data_len < sizeof(rpd))
		fail("the MPA reply carries %u octets of private data, not the %zu that name the peer's memory",
		     ev->param.conn.private_data_len, sizeof(rpd));
	memcpy(&rpd, ev->param.conn.private_data, sizeof(rpd));
	rdma_ack_cm_event(ev);
	len = be32toh(rpd.len);
	if (!len || len > MEM_LEN)
		fail("the peer names %u octets to read", len);
	post_read(id->qp, mr, len, &rpd);
	printf("established; RDMA Read of %u octets at STag 0x%08x posted\n",
	       len, be32toh(rpd.stag));
	if (collect(qpa.send_cq, &wc, 1, 1) != 1)
		fail("the RDMA Read did not complete");
	if (wc.status != IBV_WC_SUCCESS)
		fail("the RDMA Read completed with %s",
		     ibv_wc_status_str(wc.status));
	for (i = 0; i < len; i++)
		if (buf[i] != pattern_a(i))
			fail("the RDMA Read completed, but octet %u of the buffer is 0x%02x, not 0x%02x: its data never came",
			     i, buf[i], pattern_a(i));
	printf("read: %u octets of pattern A\n", len);
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	must(ibv_dereg_mr(mr), "ibv_dereg_mr");
	must(ibv_destroy_cq(qpa.send_cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	if (rdma_destroy_id(id))
		fail_err(errno, "rdma_destroy_id");
	rdma_destroy_event_channel(ch);
	rdma_freeaddrinfo(ai);
	page_free(buf, MEM_LEN);
	return EXIT_PASS;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: %s listen ADDR PORT [--ird N] [--qp-access FLAGS] [--ready FILE]\n"
		"          [--dereg-after N --dereg-done FILE]\n"
		"          [--flush-within MS --flush-done FILE] [--wait S]\n"
		"       %s qpc-arm DEVICE PEER_ADDR --ready FILE --quit FILE [--wait S]\n"
		"       %s reader ADDR PORT [--wait S]\n",
		prog, prog, prog);
	exit(EXIT_FAIL);
}

int main(int argc, char **argv)
{
	struct opts o = { .ird = 1, .qp_access = -1, .wait_s = 20 };
	int i;

	set_prog(argv[0]);
	if (argc < 4)
		usage();
	for (i = 4; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!val)
			usage();
		i++;
		if (!strcmp(opt, "--ird"))
			o.ird = atoi(val);
		else if (!strcmp(opt, "--qp-access"))
			o.qp_access = (int)strtol(val, NULL, 0);
		else if (!strcmp(opt, "--ready"))
			o.ready = val;
		else if (!strcmp(opt, "--dereg-after"))
			o.dereg_after = strtoul(val, NULL, 0);
		else if (!strcmp(opt, "--dereg-done"))
			o.dereg_done = val;
		else if (!strcmp(opt, "--flush-within"))
			o.flush_ms = atoi(val);
		else if (!strcmp(opt, "--flush-done"))
			o.flush_done = val;
		else if (!strcmp(opt, "--quit"))
			o.quit = val;
		else if (!strcmp(opt, "--wait"))
			o.wait_s = atoi(val);
		else
			usage();
	}
	if (o.ird < 0 || o.ird > 255 || o.wait_s < 1 ||
	    o.dereg_after > MEM_LEN || (o.dereg_after && !o.dereg_done) ||
	    o.flush_ms < 0 || (o.flush_ms && !o.flush_done))
		usage();
	if (!strcmp(argv[1], "listen"))
		return listen_one(argv[2], argv[3], &o);
	if (!strcmp(argv[1], "qpc-arm"))
		return qpc_arm(argv[2], argv[3], &o);
	if (!strcmp(argv[1], "reader"))
		return reader(argv[2], argv[3], &o);
	usage();
}
