// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_cm listeners against hostile peers and users (tests/vm/268).
 *
 *	cm_hostile cycle ADDR PORT CYCLES SECS listen|eaddrinuse
 *	cm_hostile stale ADDR PORT1 PORT2 SECS
 *	cm_hostile hold ADDR PORT SECS [UNTIL]
 *	cm_hostile orphan ADDR PORT SECS
 *
 * cycle: up to CYCLES times (and for SECS seconds at most), one rdma_cm ID
 * is created, bound to ADDR:PORT, listens and is destroyed, while peers
 * keep connecting to that port. With "listen" every rdma_listen() must
 * succeed; the connection requests that reach the listener in between are
 * refused (rdma_reject) or dropped with their ID. With "eaddrinuse"
 * (another process holds one of the addresses of a wildcard listen)
 * every rdma_listen() must fail with EADDRINUSE. Every call must return
 * within 20 s.
 *
 * stale: two listeners, ADDR:PORT1 and ADDR:PORT2 (two users). The first
 * request on PORT1 is held without an answer; then the program waits for
 * a request on PORT2 (the test makes it once the driver gave up the one on
 * PORT1) and accepts the held PORT1 request with a QP. That accept must
 * fail: the driver dropped that connection. The PORT2 request must then
 * be accepted normally (ESTABLISHED). Each accept sends the text
 * "accepted on port N" as private data, so that the peers can tell which
 * listener answered them.
 *
 * hold: a consumer that never answers. Listens on ADDR:PORT (backlog 3),
 * takes every event for SECS seconds (or until the file UNTIL exists) and
 * answers no connection request (keeps its ID), then prints how many
 * requests came ("requests N") and destroys everything. The driver must
 * bound what such requests cost.
 *
 * orphan: listens on ADDR:PORT, waits up to SECS for one connection
 * request, destroys the listening ID, and only then accepts the request
 * with a QP of its own: the request was reported before its listener
 * went, so the accept must succeed (RDMA_CM_EVENT_ESTABLISHED), as a
 * TCP connection accepted from a listening socket outlives that socket.
 *
 * Exit 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

/* Bound of one rdma_cm call in a cycle. */
#define CALL_SECS	20

static const char *stage = "start";
static unsigned long cycle;

static void on_alarm(int sig)
{
	char msg[256];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg),
		     "FAIL: %s: cycle %lu: %s did not return within %d s\n",
		     prog, cycle, stage, CALL_SECS);
	if (write(STDERR_FILENO, msg, n) < 0)
		_exit(EXIT_FAIL);
	_exit(EXIT_FAIL);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sockaddr_in parse_addr(const char *addr, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		fail("%s is no IPv4 address", addr);
	sin.sin_port = htons(strtoul(port, NULL, 0));
	return sin;
}

/*
 * Take the events of @ch for up to @ms: a connection request is refused
 * or dropped with its ID, in turns (the peer may be gone already: a
 * refusal may fail). Returns how many requests came.
 */
static unsigned int drain(struct rdma_event_channel *ch, int ms)
{
	struct rdma_cm_event *ev;
	unsigned int reqs = 0;
	static unsigned int turn;

	while ((ev = event_within(ch, ms))) {
		struct rdma_cm_id *id = ev->id;
		enum rdma_cm_event_type type = ev->event;

		rdma_ack_cm_event(ev);
		ms = 0;
		if (type != RDMA_CM_EVENT_CONNECT_REQUEST) {
			note("cycle %lu: event %s on the listener", cycle,
			     rdma_event_str(type));
			continue;
		}
		reqs++;
		if (turn++ & 1) {
			stage = "rdma_reject";
			rdma_reject(id, NULL, 0);
		}
		stage = "rdma_destroy_id (a request)";
		rdma_destroy_id(id);
	}
	return reqs;
}

static int cycles(const char *addr, const char *port, unsigned long n,
		  double secs, bool want_listen)
{
	struct sockaddr_in sin = parse_addr(addr, port);
	struct rdma_event_channel *ch = make_channel();
	unsigned long reqs = 0, inuse = 0;
	double t0 = now_s();

	signal(SIGALRM, on_alarm);
	for (cycle = 0; cycle < n && now_s() - t0 < secs; cycle++) {
		struct rdma_cm_id *id;
		int err = 0;

		alarm(CALL_SECS);
		stage = "rdma_create_id";
		if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
			fail_err(errno, "cycle %lu: rdma_create_id", cycle);
		stage = "rdma_bind_addr";
		if (rdma_bind_addr(id, (struct sockaddr *)&sin))
			fail_err(errno, "cycle %lu: rdma_bind_addr(%s:%s)",
				 cycle, addr, port);
		stage = "rdma_listen";
		if (rdma_listen(id, 64))
			err = errno;
		if (want_listen && err)
			fail_err(err, "cycle %lu: rdma_listen on %s:%s", cycle,
				 addr, port);
		if (!want_listen && err != EADDRINUSE)
			fail("cycle %lu: rdma_listen on %s:%s: %s, expected EADDRINUSE",
			     cycle, addr, port, err ? errname(err) : "success");
		inuse += err == EADDRINUSE;
		/* Destroy at once, right after a look, or a while later. */
		if (cycle % 3)
			reqs += drain(ch, cycle % 3 == 1 ? 0 : 10);
		stage = "rdma_destroy_id (the listener)";
		rdma_destroy_id(id);
		stage = "draining the channel";
		reqs += drain(ch, 0);
		alarm(0);
	}
	rdma_destroy_event_channel(ch);
	note("%lu cycles in %.1f s: %lu connection requests reached the listener, %lu listens refused with EADDRINUSE",
	     cycle, now_s() - t0, reqs, inuse);
	pass();
}

static struct rdma_cm_id *wait_request(struct rdma_event_channel *ch,
				       const char *port, int secs)
{
	struct rdma_cm_event *ev = event_within(ch, secs * 1000);
	struct rdma_cm_id *id;

	if (!ev)
		fail("no connection request on port %s within %d s", port,
		     secs);
	if (ev->event != RDMA_CM_EVENT_CONNECT_REQUEST)
		fail("event %s (status %d) on port %s, expected a connection request",
		     rdma_event_str(ev->event), ev->status, port);
	id = ev->id;
	rdma_ack_cm_event(ev);
	note("connection request on port %s from %s", port,
	     addr_str(rdma_get_peer_addr(id)));
	return id;
}

/* rdma_accept() with "accepted on port N" as private data; 0 or errno. */
static int accept_as(struct rdma_cm_id *id, const char *port)
{
	char pd[32];
	struct rdma_conn_param cp = {
		.private_data = pd,
		.responder_resources = 1,
		.initiator_depth = 1,
	};

	cp.private_data_len = snprintf(pd, sizeof(pd), "accepted on port %s",
				       port);
	return rdma_accept(id, &cp) ? errno : 0;
}

/* The event that came to @ch within @ms, by name ("none" without one). */
static const char *event_of(struct rdma_event_channel *ch, int ms,
			    int *status)
{
	struct rdma_cm_event *ev = event_within(ch, ms);
	const char *name;

	*status = 0;
	if (!ev)
		return "none";
	name = rdma_event_str(ev->event);
	*status = ev->status;
	rdma_ack_cm_event(ev);
	return name;
}

static int stale(const char *addr, const char *port1, const char *port2,
		 int secs)
{
	struct rdma_event_channel *ch1 = make_channel();
	struct rdma_event_channel *ch2 = make_channel();
	struct rdma_cm_id *l1, *l2, *id1, *id2;
	char peer1[64];
	const char *ev;
	int err, status;

	l1 = listen_on(ch1, addr, port1, 8);
	l2 = listen_on(ch2, addr, port2, 8);
	note("listening on %s:%s and %s:%s", addr, port1, addr, port2);

	id1 = wait_request(ch1, port1, secs);
	snprintf(peer1, sizeof(peer1), "%s",
		 addr_str(rdma_get_peer_addr(id1)));
	make_cm_qp(id1);
	note("holding the request on port %s without an answer", port1);

	id2 = wait_request(ch2, port2, secs);
	make_cm_qp(id2);
	ev = event_of(ch1, 0, &status);
	if (strcmp(ev, "none"))
		note("meanwhile on port %s: %s (status %d)", port1, ev,
		     status);

	step("accepting the held request of port %s (from %s)", port1, peer1);
	err = accept_as(id1, port1);
	if (!err) {
		ev = event_of(ch1, WAIT_MS, &status);
		note("then on port %s: %s (status %d)", port1, ev, status);
		err = accept_as(id2, port2);
		note("and rdma_accept of the request on port %s: %s", port2,
		     err ? errname(err) : "success");
		fail("rdma_accept of the request on port %s from %s, which the driver had dropped, succeeded (%s): its QP answered another connection, the one waiting on port %s",
		     port1, peer1, ev, port2);
	}
	note("refused as it must be: %s", errname(err));

	step("accepting the request of port %s", port2);
	err = accept_as(id2, port2);
	if (err)
		fail_err(err, "rdma_accept of the fresh request on port %s",
			 port2);
	ev = event_of(ch2, WAIT_MS, &status);
	if (strcmp(ev, "RDMA_CM_EVENT_ESTABLISHED"))
		fail("after rdma_accept on port %s: %s (status %d), expected RDMA_CM_EVENT_ESTABLISHED",
		     port2, ev, status);
	note("port %s: %s", port2, ev);

	rdma_disconnect(id2);
	rdma_destroy_qp(id2);
	rdma_destroy_qp(id1);
	rdma_destroy_id(id2);
	rdma_destroy_id(id1);
	rdma_destroy_id(l2);
	rdma_destroy_id(l1);
	rdma_destroy_event_channel(ch2);
	rdma_destroy_event_channel(ch1);
	pass();
}

static int hold(const char *addr, const char *port, int secs,
		const char *until)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *l = listen_on(ch, addr, port, 3);
	struct rdma_cm_id **ids = NULL;
	struct rdma_cm_event *ev;
	unsigned int n = 0, i;
	double end = now_s() + secs;

	note("listening on %s:%s (backlog 3), answering nothing for %d s",
	     addr, port, secs);
	while (now_s() < end && !(until && !access(until, F_OK))) {
		ev = event_within(ch, 200);
		if (!ev)
			continue;
		if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST) {
			ids = realloc(ids, (n + 1) * sizeof(*ids));
			if (!ids)
				fail("out of memory");
			ids[n++] = ev->id;
		} else {
			note("event %s (status %d)", rdma_event_str(ev->event),
			     ev->status);
		}
		rdma_ack_cm_event(ev);
	}
	printf("requests %u\n", n);
	for (i = 0; i < n; i++)
		rdma_destroy_id(ids[i]);
	free(ids);
	rdma_destroy_id(l);
	rdma_destroy_event_channel(ch);
	pass();
}

static int orphan(const char *addr, const char *port, int secs)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_cm_id *l = listen_on(ch, addr, port, 8);
	struct rdma_cm_id *id;
	const char *ev;
	int err, status;

	note("listening on %s:%s", addr, port);
	id = wait_request(ch, port, secs);
	make_cm_qp(id);
	step("destroying the listener, then accepting its request");
	rdma_destroy_id(l);
	err = accept_as(id, port);
	if (err)
		fail_err(err, "rdma_accept of a request reported before its listener went");
	ev = event_of(ch, WAIT_MS, &status);
	if (strcmp(ev, "RDMA_CM_EVENT_ESTABLISHED"))
		fail("after rdma_accept: %s (status %d), expected RDMA_CM_EVENT_ESTABLISHED",
		     ev, status);
	note("%s", ev);
	rdma_disconnect(id);
	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	pass();
}

int main(int argc, char **argv)
{
	set_prog(argv[0]);
	if (argc == 7 && !strcmp(argv[1], "cycle")) {
		bool want = !strcmp(argv[6], "listen");

		if (!want && strcmp(argv[6], "eaddrinuse"))
			fail("the last argument is listen or eaddrinuse");
		return cycles(argv[2], argv[3], strtoul(argv[4], NULL, 0),
			      strtod(argv[5], NULL), want);
	}
	if (argc == 6 && !strcmp(argv[1], "stale"))
		return stale(argv[2], argv[3], argv[4], atoi(argv[5]));
	if ((argc == 5 || argc == 6) && !strcmp(argv[1], "hold"))
		return hold(argv[2], argv[3], atoi(argv[4]),
			    argc == 6 ? argv[5] : NULL);
	if (argc == 5 && !strcmp(argv[1], "orphan"))
		return orphan(argv[2], argv[3], atoi(argv[4]));
	fprintf(stderr,
		"usage: %s cycle ADDR PORT CYCLES SECS listen|eaddrinuse\n"
		"       %s stale ADDR PORT1 PORT2 SECS\n"
		"       %s hold ADDR PORT SECS [UNTIL]\n"
		"       %s orphan ADDR PORT SECS\n", prog, prog, prog, prog);
	return EXIT_FAIL;
}
