// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Connection requests reach the listener in the order they were made.
 *
 *	cm_order server ADDR PORT N ROUNDS
 *	cm_order client ADDR PORT N ROUNDS
 *
 * Each round the client resolves N rdma_cm IDs with a QP each, then calls
 * rdma_connect() on all N back to back, the private data of each naming
 * its round and its place. The server refuses every request with
 * rdma_reject() and checks that request k of a round is the k-th it sees;
 * the client checks that all N were refused. Applications pair the
 * connections they open with the ones the peer accepts by this order
 * (perftest -q N does): when a later request overtakes an earlier one,
 * they pair the wrong QPs.
 *
 * Exit 0 when every round went in order, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "common.h"

#define MAX_CONNS	64
/*
 * Address resolution: Linux 6.1's rdma_cm may miss an ARP reply that comes
 * back faster than it queues the request (veth), and then resolves only
 * when the timeout expires; rping's 2 s keep that wait short.
 */
#define RESOLVE_MS	2000

struct order_pd {
	uint32_t round;
	uint32_t place;
};

/*
 * The next event of @ch within WAIT_MS; fails the program without one,
 * naming @what it waited for.
 */
static struct rdma_cm_event *next_event(struct rdma_event_channel *ch,
					const char *what)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&pfd, 1, WAIT_MS) != 1)
		fail("no rdma_cm event within %d ms (waiting for %s)", WAIT_MS,
		     what);
	if (rdma_get_cm_event(ch, &ev))
		fail_err(errno, "rdma_get_cm_event");
	return ev;
}

/* Acknowledge the next event of @ch; fail unless it is @want for @id. */
static void expect_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
			 enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch, rdma_event_str(want));
	enum rdma_cm_event_type got = ev->event;
	int status = ev->status;
	bool same = ev->id == id;

	rdma_ack_cm_event(ev);
	if (got != want || !same)
		fail("event %s (status %d)%s, expected %s",
		     rdma_event_str(got), status,
		     same ? "" : " for another ID", rdma_event_str(want));
}

static struct rdma_addrinfo *lookup(const char *addr, const char *port,
				    bool passive)
{
	struct rdma_addrinfo hints = {
		.ai_flags = passive ? RAI_PASSIVE : 0,
		.ai_port_space = RDMA_PS_TCP,
	};
	struct rdma_addrinfo *ai;

	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		fail_err(errno, "rdma_getaddrinfo(%s, %s)", addr, port);
	return ai;
}

static int server(const char *addr, const char *port, uint32_t n,
		  uint32_t rounds)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lookup(addr, port, true);
	struct rdma_cm_id *lid;
	uint32_t r, k;

	if (!ch)
		fail_err(errno, "rdma_create_event_channel");
	if (rdma_create_id(ch, &lid, NULL, RDMA_PS_TCP))
		fail_err(errno, "rdma_create_id");
	if (rdma_bind_addr(lid, ai->ai_src_addr))
		fail_err(errno, "rdma_bind_addr(%s:%s)", addr, port);
	if (rdma_listen(lid, MAX_CONNS))
		fail_err(errno, "rdma_listen");
	rdma_freeaddrinfo(ai);
	note("listening on %s:%s", addr, port);

	for (r = 0; r < rounds; r++) {
		for (k = 0; k < n; k++) {
			struct rdma_cm_event *ev = next_event(ch, "a request");
			struct order_pd pd = { UINT32_MAX, UINT32_MAX };
			struct rdma_cm_id *id = ev->id;

			if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
				fail("event %s, expected a connection request",
				     rdma_event_str(ev->event));
			if (ev->param.conn.private_data_len >= sizeof(pd))
				memcpy(&pd, ev->param.conn.private_data,
				       sizeof(pd));
			rdma_ack_cm_event(ev);
			if (rdma_reject(id, NULL, 0))
				fail_err(errno, "rdma_reject");
			rdma_destroy_id(id);
			if (pd.round != r || pd.place != k)
				fail("round %u: request %u came as request %u of round %u",
				     pd.round, pd.place, k, r);
		}
		note("round %u: %u requests in the order they were made", r, n);
	}
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	pass();
}

static void client_round(struct rdma_event_channel *ch,
			 struct rdma_addrinfo *ai, uint32_t n, uint32_t round)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct rdma_cm_id *id[MAX_CONNS];
	struct order_pd pd[MAX_CONNS];
	uint32_t k;

	for (k = 0; k < n; k++) {
		if (rdma_create_id(ch, &id[k], NULL, RDMA_PS_TCP))
			fail_err(errno, "rdma_create_id");
		if (rdma_resolve_addr(id[k], NULL, ai->ai_dst_addr,
				      RESOLVE_MS))
			fail_err(errno, "rdma_resolve_addr");
		expect_event(ch, id[k], RDMA_CM_EVENT_ADDR_RESOLVED);
		if (rdma_resolve_route(id[k], RESOLVE_MS))
			fail_err(errno, "rdma_resolve_route");
		expect_event(ch, id[k], RDMA_CM_EVENT_ROUTE_RESOLVED);
		if (rdma_create_qp(id[k], NULL, &qpa))
			fail_err(errno, "rdma_create_qp");
	}
	/* Back to back: nothing between one request and the next. */
	for (k = 0; k < n; k++) {
		struct rdma_conn_param cp = {
			.private_data = &pd[k],
			.private_data_len = sizeof(pd[k]),
			.responder_resources = 1,
			.initiator_depth = 1,
		};

		pd[k].round = round;
		pd[k].place = k;
		if (rdma_connect(id[k], &cp))
			fail_err(errno, "rdma_connect (request %u)", k);
	}
	for (k = 0; k < n; k++) {
		struct rdma_cm_event *ev = next_event(ch, "a refusal");

		if (ev->event != RDMA_CM_EVENT_REJECTED)
			fail("round %u: event %s (status %d), expected the refusal",
			     round, rdma_event_str(ev->event), ev->status);
		rdma_ack_cm_event(ev);
	}
	for (k = 0; k < n; k++) {
		rdma_destroy_qp(id[k]);
		rdma_destroy_id(id[k]);
	}
}

static int client(const char *addr, const char *port, uint32_t n,
		  uint32_t rounds)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();
	struct rdma_addrinfo *ai = lookup(addr, port, false);
	uint32_t r;

	if (!ch)
		fail_err(errno, "rdma_create_event_channel");
	for (r = 0; r < rounds; r++) {
		client_round(ch, ai, n, r);
		note("round %u: %u requests made and refused", r, n);
	}
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	pass();
}

int main(int argc, char **argv)
{
	unsigned long n, rounds;

	set_prog(argv[0]);
	if (argc != 6) {
		fprintf(stderr, "usage: %s server|client ADDR PORT N ROUNDS\n",
			prog);
		return EXIT_FAIL;
	}
	n = strtoul(argv[4], NULL, 0);
	rounds = strtoul(argv[5], NULL, 0);
	if (!n || n > MAX_CONNS || !rounds)
		fail("N must be 1..%d and ROUNDS at least 1", MAX_CONNS);
	if (!strcmp(argv[1], "server"))
		return server(argv[2], argv[3], n, rounds);
	if (!strcmp(argv[1], "client"))
		return client(argv[2], argv[3], n, rounds);
	fail("the first argument is server or client, not %s", argv[1]);
}
