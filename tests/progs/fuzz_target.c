// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fuzz_target ADDR PORT SECS [QUITFILE]: the verbs side of the live-wire fuzzer
 * (tests/vm/tools/wire_fuzz.py, tests/vm/269-wire-fuzz.sh), a server
 * that keeps working while a peer sends it garbage.
 *
 * For SECS seconds, or until QUITFILE exists, it accepts rdma_cm
 * connections on ADDR:PORT, up to
 * MAX_CONN at once (more are rejected), each with a QP, CQ and an MR of
 * BUF_LEN octets of its own (local write, remote read and write), named
 * to the peer in the accept's private data (struct fuzz_pd: magic "SIWF",
 * STag, address, length; big endian). While a connection lives it keeps
 * RECVS receives posted and, every TICK_MS, posts a Send of 64 octets and
 * an RDMA Read of 256 octets of the peer's STag PEER_STAG (the fuzzer
 * answers it, or not), so that both directions of the data path have
 * work in flight when the garbage comes. Completions of any status are
 * taken; a connection that ends (DISCONNECTED, an error event, a QP in
 * ERROR) is torn down and new ones are still accepted.
 *
 * Prints its counts at the end ("connections N, ..."); exit 0. Exit 1
 * only when a verbs or rdma_cm call of its own fails in a way no peer can
 * cause (it could not listen, make a PD, ...).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

#define MAX_CONN	8
#define BUF_LEN		(64 * 1024)
#define RECVS		16
#define MSG_LEN		256
#define TICK_MS		50
#define PEER_STAG	0x00F0F0F0u
#define FUZZ_MAGIC	"SIWF"

struct fuzz_pd {
	char magic[4];
	uint32_t stag;
	uint64_t addr;
	uint32_t len;
} __attribute__((packed));

struct conn {
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	int64_t next_tick;
	int recvs;		/* posted, not completed */
	bool live;		/* ESTABLISHED, not yet ended */
};

static struct conn conns[MAX_CONN];
static struct ibv_pd *pd;
static unsigned long n_conn, n_reject, n_wc, n_wc_err, n_post_err, n_ended;

static struct conn *conn_of(struct rdma_cm_id *id)
{
	int i;

	for (i = 0; i < MAX_CONN; i++)
		if (conns[i].id == id)
			return &conns[i];
	return NULL;
}

static struct conn *free_conn(void)
{
	return conn_of(NULL);
}

/* A post may fail once the QP is in ERROR: the peer's doing, counted. */
static void post_recv(struct conn *c)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->buf + c->recvs % RECVS * MSG_LEN,
		.length = MSG_LEN, .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->id->qp, &wr, &bad))
		n_post_err++;
	else
		c->recvs++;
}

static void post_work(struct conn *c)
{
	struct ibv_sge send_sge = {
		.addr = (uintptr_t)c->buf + BUF_LEN / 2, .length = 64,
		.lkey = c->mr->lkey,
	};
	struct ibv_sge read_sge = {
		.addr = (uintptr_t)c->buf + BUF_LEN / 2 + MSG_LEN,
		.length = MSG_LEN, .lkey = c->mr->lkey,
	};
	struct ibv_send_wr rd = {
		.wr_id = 3, .sg_list = &read_sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr snd = {
		.wr_id = 2, .sg_list = &send_sge, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.next = &rd,
	};
	struct ibv_send_wr *bad;

	rd.wr.rdma.rkey = PEER_STAG;
	rd.wr.rdma.remote_addr = 0;
	if (ibv_post_send(c->id->qp, &snd, &bad))
		n_post_err++;
}

static void conn_end(struct conn *c)
{
	if (!c->id)
		return;
	if (c->live) {
		rdma_disconnect(c->id);
		n_ended++;
	}
	if (c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->cq)
		must(ibv_destroy_cq(c->cq), "ibv_destroy_cq");
	if (c->mr)
		must(ibv_dereg_mr(c->mr), "ibv_dereg_mr");
	page_free(c->buf, BUF_LEN);
	if (rdma_destroy_id(c->id))
		fail_err(errno, "rdma_destroy_id");
	memset(c, 0, sizeof(*c));
}

static void conn_accept(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 64, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_conn_param cp = {
		.responder_resources = 4, .initiator_depth = 4,
	};
	struct conn *c = free_conn();
	struct fuzz_pd fpd;

	if (!c) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		n_reject++;
		return;
	}
	c->id = id;
	c->buf = page_alloc(BUF_LEN);
	memset(c->buf, 0x5a, BUF_LEN);
	c->mr = ibv_reg_mr(pd, c->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!c->mr)
		fail_err(errno, "ibv_reg_mr");
	c->cq = make_cq(id->verbs, 128);
	qpa.send_cq = qpa.recv_cq = c->cq;
	if (rdma_create_qp(id, pd, &qpa))
		fail_err(errno, "rdma_create_qp");
	while (c->recvs < RECVS)
		post_recv(c);

	memcpy(fpd.magic, FUZZ_MAGIC, sizeof(fpd.magic));
	fpd.stag = htobe32(c->mr->rkey);
	fpd.addr = htobe64((uintptr_t)c->buf);
	fpd.len = htobe32(BUF_LEN);
	cp.private_data = &fpd;
	cp.private_data_len = sizeof(fpd);
	/* The peer may be gone already: then the connection just ends. */
	if (rdma_accept(id, &cp))
		conn_end(c);
	n_conn++;
}

static void on_event(struct rdma_cm_event *ev)
{
	struct rdma_cm_id *id = ev->id;
	enum rdma_cm_event_type type = ev->event;
	struct conn *c;

	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
		conn_accept(id);
		return;
	}
	c = conn_of(id);
	if (!c)
		return;
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		c->live = true;
		c->next_tick = mono_ms();
		return;
	}
	/* DISCONNECTED, CONNECT_ERROR, UNREACHABLE, REJECTED, ... */
	conn_end(c);
}

static void poll_conn(struct conn *c, int64_t now)
{
	struct ibv_wc wc[16];
	int n, i;

	n = ibv_poll_cq(c->cq, 16, wc);
	if (n < 0)
		fail("ibv_poll_cq: %d", n);
	for (i = 0; i < n; i++) {
		n_wc++;
		if (wc[i].status != IBV_WC_SUCCESS)
			n_wc_err++;
		if (wc[i].wr_id == 1)
			c->recvs--;
	}
	if (!c->live || now < c->next_tick)
		return;
	c->next_tick = now + TICK_MS;
	if (get_state(c->id->qp) == IBV_QPS_ERR) {
		conn_end(c);
		return;
	}
	while (c->recvs < RECVS) {
		unsigned long before = n_post_err;

		post_recv(c);
		if (n_post_err != before)
			break;
	}
	post_work(c);
}

int main(int argc, char **argv)
{
	struct rdma_event_channel *ch;
	struct rdma_cm_id *lid;
	struct rdma_cm_event *ev;
	int64_t end;
	int i;

	set_prog(argv[0]);
	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: %s ADDR PORT SECS [QUITFILE]\n", prog);
		return EXIT_FAIL;
	}
	end = mono_ms() + atoi(argv[3]) * 1000LL;
	ch = make_channel();
	lid = listen_on(ch, argv[1], argv[2], MAX_CONN);
	pd = make_pd(lid->verbs);
	note("listening on %s:%s for %s s", argv[1], argv[2], argv[3]);
	while (mono_ms() < end) {
		static int64_t look;
		int64_t now;

		if (argc == 5 && mono_ms() >= look) {
			if (!access(argv[4], F_OK))
				break;
			look = mono_ms() + 200;
		}

		ev = event_within(ch, 5);
		if (ev)
			on_event(ev);
		now = mono_ms();
		for (i = 0; i < MAX_CONN; i++)
			if (conns[i].id && conns[i].cq)
				poll_conn(&conns[i], now);
	}
	for (i = 0; i < MAX_CONN; i++)
		conn_end(&conns[i]);
	if (rdma_destroy_id(lid))
		fail_err(errno, "rdma_destroy_id(listener)");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	rdma_destroy_event_channel(ch);
	printf("connections %lu, rejected %lu, ended by the peer or an error %lu, completions %lu (%lu not successful), failed posts %lu\n",
	       n_conn, n_reject, n_ended, n_wc, n_wc_err, n_post_err);
	pass();
}
