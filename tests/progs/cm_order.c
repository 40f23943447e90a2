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
 * they pair the wrong QPs. The network does not order separate TCP
 * connections: test 265 steers the veth's receive to one CPU (RPS)
 * while it runs this, so what it checks is siw's order and the CM's.
 *
 * Exit 0 when every round went in order, 1 otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

#define MAX_CONNS	64
/*
 * The first request of a round waits for the client to make its IDs, QPs
 * and routes: under load that took more than WAIT_MS after the listen, and
 * the server gave up, its listener went, and every SYN got a reset.
 */
#define FIRST_MS	(6 * WAIT_MS)

struct order_pd {
	uint32_t round;
	uint32_t place;
};

static int server(const char *addr, const char *port, uint32_t n,
		  uint32_t rounds)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *lid = listen_on(ch, addr, port, MAX_CONNS);
	uint32_t r, k;

	note("listening on %s:%s", addr, port);

	for (r = 0; r < rounds; r++) {
		for (k = 0; k < n; k++) {
			struct rdma_cm_event *ev = next_event(ch,
							      k ? WAIT_MS : FIRST_MS,
							      "a request");
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
		id[k] = resolved_id(ch, ai);
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
		struct rdma_cm_event *ev = next_event(ch, WAIT_MS,
						      "a refusal");

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
	struct rdma_event_channel *ch = make_channel();
	struct rdma_addrinfo *ai = lookup(addr, port, false);
	uint32_t r;

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
