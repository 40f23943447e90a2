// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a graceful disconnect promises: everything sent before it arrives.
 *
 *	close_drain serve ADDR PORT N SIZE [--answer]
 *	close_drain close ADDR PORT N SIZE [--no-cm-between]
 *
 * The client connects, Sends N messages of SIZE octets and, once all N
 * have completed (siw completes a Send when TCP has taken its octets, not
 * when the peer has them), calls rdma_disconnect() and rdma_destroy_qp()
 * at once, as rsockets' rclose() does. The server has N receives posted
 * and must get every message, intact and in order, and then the
 * disconnect. The guest test slows the client's link down, so that most
 * of the octets still wait in the client's socket when the QP goes.
 *
 * rdma_disconnect() asks for a graceful close (iw_cm moves the QP to SQD);
 * destroying the QP then moves it to ERROR, which alone would be an abort.
 * iw_cm, like an RNIC, leaves a connection that is closing gracefully
 * alone when its QP or its ID goes, and so must siw: an abort resets the
 * TCP connection and drops what the socket still holds.
 *
 * Whether the CM's work for the disconnect runs before the destroy comes
 * is timing (on the slow debug kernel it did not). --no-cm-between makes
 * it certain that it does not: for the disconnect and the destroy the
 * client runs SCHED_FIFO on the only online CPU (it takes the others
 * offline, and back once the destroy returned), so no kworker runs in
 * between. Needs root; without CPUs to take offline it says so and goes
 * on without.
 *
 * --answer: the server answers every message with a Send of ANS_SIZE
 * octets, as rsockets' credit updates do while its reader catches up, so
 * that the answers to the last messages reach the client after it closed.
 * A closing end that has let go of its socket answers those with a reset
 * (RFC 1122, 4.2.2.13), which drops what it had not sent yet; siw keeps
 * reading and dropping them until the peer closes too. The client keeps
 * N receives of ANS_SIZE octets posted in either case; what they get is
 * not checked.
 *
 * Exit 0 when the server got all N messages intact and then the
 * disconnect (server), or when all N Sends completed and the disconnect
 * was reported (client); 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

#define MAX_N		256
#define MAX_SIZE	(1u << 20)
#define ANS_SIZE	16

/* Octet @j of message @i: differs between messages and along each. */
static uint8_t pattern(uint32_t i, uint32_t j)
{
	return (uint8_t)(i * 131 + j * 7 + (j >> 8));
}

/* An RC QP on @id with the ID's PD and CQs, room for @n WRs each way. */
static void make_n_qp(struct rdma_cm_id *id, uint32_t n)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = n, .max_recv_wr = n,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.sq_sig_all = 1,
	};

	if (rdma_create_qp(id, NULL, &qpa))
		fail_err(errno, "rdma_create_qp(%u WRs)", n);
}

/*
 * Poll @cq for @n completions within @ms; each goes to @check. Returns how
 * many arrived.
 */
static uint32_t poll_n(struct ibv_cq *cq, uint32_t n, int ms,
		       void (*check)(const struct ibv_wc *wc, uint32_t k))
{
	int64_t end = mono_ms() + ms;
	uint32_t got = 0;

	while (got < n && mono_ms() < end) {
		struct ibv_wc wc;
		int rv = ibv_poll_cq(cq, 1, &wc);

		if (rv < 0)
			fail("ibv_poll_cq: %d", rv);
		if (rv)
			check(&wc, got++);
	}
	return got;
}

/*
 * Take every CPU but CPU 0 offline (@on false) or online again; returns
 * how many CPUs it changed.
 */
static int other_cpus(bool on)
{
	static bool was_offline[1024];
	int cpu, n = 0;

	for (cpu = 1; cpu < 1024; cpu++) {
		char path[64];
		FILE *f;

		if (on && !was_offline[cpu])
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/online", cpu);
		f = fopen(path, "w");
		if (!f) {
			if (errno == ENOENT && cpu > 64)
				break;
			continue;
		}
		if (fputs(on ? "1" : "0", f) >= 0 && !fclose(f)) {
			was_offline[cpu] = !on;
			n++;
		} else if (on) {
			fail("cannot bring CPU %d back online", cpu);
		}
	}
	return n;
}

static void cpus_back(void)
{
	other_cpus(true);
}

static void sched_fifo(bool on)
{
	struct sched_param sp = { .sched_priority = on ? 10 : 0 };

	if (sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp))
		fail_err(errno, "sched_setscheduler(%s)",
			 on ? "SCHED_FIFO" : "SCHED_OTHER");
}

static uint8_t *buf;		/* N messages, then N answers */
static uint32_t nmsg, msg_size;
static bool answer;
static struct rdma_cm_id *srv_id;
static struct ibv_mr *srv_mr;

static uint8_t *ans_buf(uint32_t k)
{
	return buf + (size_t)nmsg * msg_size + (size_t)k * ANS_SIZE;
}

/*
 * Post a Send (@send) or a receive of @len octets at @addr in @mr, as
 * work request @k; @what names it in a failure.
 */
static void post_one(struct rdma_cm_id *id, struct ibv_mr *mr, uint8_t *addr,
		     uint32_t len, uint32_t k, bool send, const char *what)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr swr = {
		.wr_id = k, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_SEND,
	}, *sbad;
	struct ibv_recv_wr rwr = {
		.wr_id = k, .sg_list = &sge, .num_sge = 1,
	}, *rbad;
	int err = send ? ibv_post_send(id->qp, &swr, &sbad) :
			 ibv_post_recv(id->qp, &rwr, &rbad);

	if (err)
		fail_err(err, "%s %s %u", send ? "ibv_post_send" :
			 "ibv_post_recv", what, k);
}

/* Send or receive answer @k (ANS_SIZE octets). */
static void post_answer(struct rdma_cm_id *id, struct ibv_mr *mr, uint32_t k,
			bool send)
{
	post_one(id, mr, ans_buf(k), ANS_SIZE, k, send, "answer");
}

static void check_recv(const struct ibv_wc *wc, uint32_t k)
{
	const uint8_t *m = buf + (size_t)k * msg_size;
	uint32_t j;

	if (wc->status != IBV_WC_SUCCESS)
		fail("receive %u of %u: %s; %u messages arrived intact before it (the connection lost what the client sent before its disconnect)",
		     k + 1, nmsg, ibv_wc_status_str(wc->status), k);
	if (wc->wr_id != k)
		fail("receive %u completed with wr_id %" PRIu64, k,
		     (uint64_t)wc->wr_id);
	if (wc->byte_len != msg_size)
		fail("message %u: %u octets, expected %u", k, wc->byte_len,
		     msg_size);
	for (j = 0; j < msg_size; j++)
		if (m[j] != pattern(k, j))
			fail("message %u: octet %u is %#x, expected %#x", k, j,
			     m[j], pattern(k, j));
	if (answer)
		post_answer(srv_id, srv_mr, k, true);
}

static void check_send(const struct ibv_wc *wc, uint32_t k)
{
	if (wc->status != IBV_WC_SUCCESS)
		fail("Send %u of %u: %s", k + 1, nmsg,
		     ibv_wc_status_str(wc->status));
}

static struct ibv_mr *reg(struct rdma_cm_id *id)
{
	struct ibv_mr *mr;

	size_t len = (size_t)nmsg * (msg_size + ANS_SIZE);

	buf = page_alloc(len);
	mr = ibv_reg_mr(id->pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
	if (!mr)
		fail_err(errno, "ibv_reg_mr");
	return mr;
}

static void post(struct rdma_cm_id *id, struct ibv_mr *mr, bool send)
{
	uint32_t k;

	for (k = 0; k < nmsg; k++)
		post_one(id, mr, buf + (size_t)k * msg_size, msg_size, k, send,
			 "message");
}

static int serve(const char *addr, const char *port)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *lid = listen_on(ch, addr, port, 1);
	struct rdma_conn_param cp = {
		.initiator_depth = 1, .responder_resources = 1,
	};
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id;
	struct ibv_mr *mr;
	uint32_t got;
	int64_t t0;

	note("listening on %s:%s%s", addr, port,
	     answer ? "; every message is answered" : "");
	ev = next_event(ch, 6 * WAIT_MS, "the connection request");
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		fail("event %s, expected a connection request",
		     rdma_event_str(ev->event));
	id = ev->id;
	rdma_ack_cm_event(ev);
	make_n_qp(id, nmsg);
	mr = reg(id);
	post(id, mr, false);
	srv_id = id;
	srv_mr = mr;
	if (rdma_accept(id, &cp))
		fail_err(errno, "rdma_accept");
	expect_event(ch, id, RDMA_CM_EVENT_ESTABLISHED);
	t0 = mono_ms();

	/* The slowed link takes its time: a bound per message. */
	got = poll_n(id->recv_cq, nmsg, WAIT_MS + nmsg * 500 * test_slow(),
		     check_recv);
	if (got < nmsg)
		fail("%u of %u messages arrived within the bound", got, nmsg);
	note("all %u messages of %u octets arrived intact (%" PRId64 " ms)",
	     nmsg, msg_size, mono_ms() - t0);
	ev = next_event(ch, WAIT_MS, "the disconnect");
	if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
		fail("event %s, expected the disconnect",
		     rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	note("then the disconnect");
	rdma_destroy_qp(id);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	pass();
}

static int close_after_sends(const char *addr, const char *port,
			     bool no_cm_between)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_addrinfo *ai = lookup(addr, port, false);
	struct rdma_cm_id *id = resolved_id(ch, ai);
	struct rdma_conn_param cp = {
		.initiator_depth = 1, .responder_resources = 1,
	};
	struct rdma_cm_event *ev;
	struct ibv_mr *mr;
	uint32_t k, j, got;

	rdma_freeaddrinfo(ai);
	make_n_qp(id, nmsg);
	mr = reg(id);
	for (k = 0; k < nmsg; k++) {
		for (j = 0; j < msg_size; j++)
			buf[(size_t)k * msg_size + j] = pattern(k, j);
		post_answer(id, mr, k, false);
	}
	if (rdma_connect(id, &cp))
		fail_err(errno, "rdma_connect to %s:%s", addr, port);
	expect_event(ch, id, RDMA_CM_EVENT_ESTABLISHED);
	post(id, mr, true);
	got = poll_n(id->send_cq, nmsg, WAIT_MS, check_send);
	if (got < nmsg)
		fail("%u of %u Sends completed within %d ms", got, nmsg,
		     WAIT_MS);
	if (no_cm_between) {
		atexit(cpus_back);
		if (!other_cpus(false))
			note("no CPU to take offline: the CM may run between the disconnect and the destroy");
		sched_fifo(true);
	}
	/* As rsockets' rclose(): disconnect, and the QP goes at once. */
	if (rdma_disconnect(id))
		fail_err(errno, "rdma_disconnect");
	rdma_destroy_qp(id);
	if (no_cm_between) {
		sched_fifo(false);
		cpus_back();
	}
	note("%u Sends of %u octets completed; disconnected and destroyed the QP%s",
	     nmsg, msg_size, no_cm_between ?
	     " (SCHED_FIFO on one CPU)" : "");
	ev = next_event(ch, WAIT_MS + nmsg * 500 * test_slow(),
			"the disconnect");
	if (ev->event != RDMA_CM_EVENT_DISCONNECTED)
		fail("event %s, expected the disconnect",
		     rdma_event_str(ev->event));
	rdma_ack_cm_event(ev);
	ibv_dereg_mr(mr);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	pass();
}

int main(int argc, char **argv)
{
	set_prog(argv[0]);
	bool no_cm_between = false;
	int i;

	for (i = 6; i < argc; i++) {
		if (!strcmp(argv[1], "close") &&
		    !strcmp(argv[i], "--no-cm-between"))
			no_cm_between = true;
		else if (!strcmp(argv[1], "serve") &&
			 !strcmp(argv[i], "--answer"))
			answer = true;
		else
			argc = 0;
	}
	if (argc < 6)
		fail("usage: close_drain serve ADDR PORT N SIZE [--answer] | close ADDR PORT N SIZE [--no-cm-between]");
	nmsg = strtoul(argv[4], NULL, 0);
	msg_size = strtoul(argv[5], NULL, 0);
	if (!nmsg || nmsg > MAX_N || !msg_size || msg_size > MAX_SIZE)
		fail("N must be 1..%u and SIZE 1..%u", MAX_N, MAX_SIZE);
	if (!strcmp(argv[1], "serve"))
		return serve(argv[2], argv[3]);
	if (!strcmp(argv[1], "close"))
		return close_after_sends(argv[2], argv[3], no_cm_between);
	fail("usage: close_drain serve ADDR PORT N SIZE [--answer] | close ADDR PORT N SIZE [--no-cm-between]");
}
