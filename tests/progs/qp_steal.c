// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qp_steal: rdma_cm names the QP of a connection by its number
 * (conn_param.qp_num) when the rdma_cm ID has no QP of its own, which is
 * how a process that made its QP with ibv_create_qp connects it. Only a
 * QP of the caller's own may be named that way: a process must not be
 * able to connect somebody else's QP to a peer of its choosing.
 *
 *	qp_steal victim DEVICE N DONEFILE
 *		Makes N RC QPs of DEVICE (one PD and CQ) and moves them to
 *		INIT, prints "victim QP <num>" for each, waits (up to 120 s)
 *		until DONEFILE exists, then checks that every QP is still in
 *		INIT and that no async event came. Run by the victim (root).
 *	qp_steal listen ADDR PORT SECS
 *		An rdma_cm listener that accepts every request with a QP of
 *		its own, for SECS seconds. A helper, exits 0.
 *	qp_steal connect ADDR PORT QPN
 *		rdma_connect() to ADDR:PORT with conn_param.qp_num = QPN and
 *		no QP on the ID. Passes when that is refused: rdma_connect
 *		fails, or the connection ends in an error event. Fails when
 *		the connection is established.
 *	qp_steal accept ADDR PORT QPN
 *		Listens on ADDR:PORT, connects to itself from a second ID
 *		that has a QP of its own, and answers the request with
 *		rdma_accept() naming QPN. Passes when the accept is refused
 *		(the request is then rejected), fails when the connection is
 *		established.
 *
 * The guest test (tests/vm/162-hostile-local.sh) runs victim as root and
 * connect/accept as user nobody and as another root process, naming the
 * victim's QPs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

#define MAX_VICTIMS	8
#define VICTIM_WAIT_S	120

static struct rdma_conn_param conn_param(uint32_t qpn)
{
	struct rdma_conn_param cp = {
		.responder_resources = 1,
		.initiator_depth = 1,
		.qp_num = qpn,
	};

	return cp;
}

/* ---------------------------------------------------------------------- */

static int victim(const char *dev, int n, const char *done)
{
	struct ibv_context *ctx = open_device(dev);
	struct ibv_pd *pd = make_pd(ctx);
	struct ibv_cq *cq = make_cq(ctx, 16);
	struct qp_spec spec = { .send_cq = cq, .recv_cq = cq,
				.max_send_wr = 4, .max_recv_wr = 4,
				.max_sge = 1 };
	struct ibv_qp *qp[MAX_VICTIMS];
	struct ibv_async_event ev;
	int64_t end = mono_ms() + VICTIM_WAIT_S * 1000 * test_slow();
	int i, bad = 0;

	if (n < 1 || n > MAX_VICTIMS)
		fail("N must be 1..%d", MAX_VICTIMS);
	for (i = 0; i < n; i++) {
		qp[i] = make_qp(pd, &spec, NULL);
		set_state(qp[i], IBV_QPS_INIT);
		printf("victim QP %u\n", qp[i]->qp_num);
	}
	fflush(stdout);
	while (access(done, F_OK)) {
		if (mono_ms() > end)
			fail("%s did not appear within %d s", done,
			     VICTIM_WAIT_S * test_slow());
		sleep_ms(50);
	}
	while (next_async_event(ctx, 100, &ev)) {
		note("async event %s on QP %u",
		     ibv_event_type_str(ev.event_type),
		     ev.element.qp ? ev.element.qp->qp_num : 0);
		bad++;
	}
	for (i = 0; i < n; i++) {
		enum ibv_qp_state s = get_state(qp[i]);

		note("victim QP %u is in %s", qp[i]->qp_num, state_name(s));
		if (s != IBV_QPS_INIT) {
			fprintf(stderr, "%s: victim QP %u is in %s, not INIT: another process connected it\n",
				prog, qp[i]->qp_num, state_name(s));
			bad++;
		}
	}
	if (bad)
		fail("the victim's QPs were touched by another process (%d findings above)",
		     bad);
	for (i = 0; i < n; i++)
		must(ibv_destroy_qp(qp[i]), "ibv_destroy_qp");
	must(ibv_destroy_cq(cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	pass();
}

/* ---------------------------------------------------------------------- */

static int listener(const char *addr, const char *port, int secs)
{
	struct rdma_event_channel *ch = make_channel();
	int64_t end = mono_ms() + (int64_t)secs * 1000;
	int requests = 0, established = 0;
	struct rdma_cm_id *lid;

	lid = listen_on(ch, addr, port, 16);
	printf("listening on %s:%s\n", addr, port);
	fflush(stdout);
	while (mono_ms() < end) {
		struct rdma_cm_event *ev = event_within(ch, 200);
		struct rdma_cm_id *id;
		enum rdma_cm_event_type type;

		if (!ev)
			continue;
		id = ev->id;
		type = ev->event;
		rdma_ack_cm_event(ev);
		switch (type) {
		case RDMA_CM_EVENT_CONNECT_REQUEST: {
			struct rdma_conn_param cp = conn_param(0);

			requests++;
			make_cm_qp(id);
			if (rdma_accept(id, &cp)) {
				note("rdma_accept: %s", errname(errno));
				rdma_destroy_qp(id);
				rdma_destroy_id(id);
			}
			break;
		}
		case RDMA_CM_EVENT_ESTABLISHED:
			established++;
			break;
		case RDMA_CM_EVENT_DISCONNECTED:
		case RDMA_CM_EVENT_CONNECT_ERROR:
			rdma_disconnect(id);
			rdma_destroy_qp(id);
			rdma_destroy_id(id);
			break;
		default:
			note("event %s", rdma_event_str(type));
			break;
		}
	}
	note("%d requests, %d established", requests, established);
	rdma_destroy_id(lid);
	/* IDs still connected go with the channel's process. */
	return EXIT_PASS;
}

/* ---------------------------------------------------------------------- */

static int connect_foreign(const char *addr, const char *port, uint32_t qpn)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_conn_param cp = conn_param(qpn);
	struct rdma_cm_event *ev;
	enum rdma_cm_event_type type;
	struct rdma_addrinfo *ai;
	struct rdma_cm_id *id;
	int status;

	note("uid %u: rdma_connect to %s:%s naming QP %u, which is not ours",
	     getuid(), addr, port, qpn);
	ai = lookup(addr, port, false);
	id = resolved_id(ch, ai);
	rdma_freeaddrinfo(ai);
	if (rdma_connect(id, &cp)) {
		note("rdma_connect refused: %s", errname(errno));
		rdma_destroy_id(id);
		rdma_destroy_event_channel(ch);
		pass();
	}
	ev = event_within(ch, WAIT_MS);
	if (!ev)
		fail("rdma_connect naming QP %u was taken, and no event followed within %d ms",
		     qpn, WAIT_MS);
	type = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (type == RDMA_CM_EVENT_ESTABLISHED) {
		rdma_disconnect(id);
		fail("rdma_connect naming another process's QP %u: connection established (the QP is now connected to a peer its owner never chose)",
		     qpn);
	}
	note("rdma_connect was taken, then %s (status %d): refused",
	     rdma_event_str(type), status);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	pass();
}

/* ---------------------------------------------------------------------- */

static int accept_foreign(const char *addr, const char *port, uint32_t qpn)
{
	struct rdma_event_channel *ch = make_channel();
	struct rdma_conn_param cp = conn_param(0);
	struct rdma_cm_id *lid, *cid, *req = NULL;
	bool accepted = false, refused = false, up = false, over = false;
	struct rdma_addrinfo *ai;
	int64_t end;

	note("uid %u: rdma_accept on %s:%s naming QP %u, which is not ours",
	     getuid(), addr, port, qpn);
	lid = listen_on(ch, addr, port, 16);
	ai = lookup(addr, port, false);
	cid = resolved_id(ch, ai);
	rdma_freeaddrinfo(ai);
	make_cm_qp(cid);
	if (rdma_connect(cid, &cp))
		fail_err(errno, "rdma_connect of our own QP %u", cid->qp->qp_num);

	end = mono_ms() + WAIT_MS;
	while (!over) {
		struct rdma_cm_event *ev;
		enum rdma_cm_event_type type;
		struct rdma_cm_id *id;
		int status;

		ev = event_within(ch, (int)(end - mono_ms()) > 0 ?
				    (int)(end - mono_ms()) : 0);
		if (!ev)
			fail("no rdma_cm event within %d ms (accepted: %s, refused: %s)",
			     WAIT_MS, accepted ? "yes" : "no",
			     refused ? "yes" : "no");
		id = ev->id;
		type = ev->event;
		status = ev->status;
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
			struct rdma_conn_param acp = conn_param(qpn);

			req = id;
			if (rdma_accept(req, &acp)) {
				note("rdma_accept refused: %s", errname(errno));
				refused = true;
				if (rdma_reject(req, NULL, 0))
					note("rdma_reject: %s", errname(errno));
			} else {
				accepted = true;
			}
			continue;
		}
		if (type == RDMA_CM_EVENT_ESTABLISHED) {
			/* Either end: the client's or the listener's ID. */
			up = true;
			over = id == cid || !accepted;
			if (id != cid)
				note("ESTABLISHED on the accepting ID");
			continue;
		}
		if (id == cid) {
			note("our client saw %s (status %d)",
			     rdma_event_str(type), status);
			over = true;
			continue;
		}
		note("event %s (status %d)", rdma_event_str(type), status);
	}
	if (up) {
		rdma_disconnect(cid);
		fail("rdma_accept naming another process's QP %u: connection established (the QP is now connected to a peer its owner never chose)",
		     qpn);
	}
	if (accepted)
		note("rdma_accept was taken, but the connection did not come up");
	rdma_destroy_qp(cid);
	rdma_destroy_id(cid);
	if (req)
		rdma_destroy_id(req);
	rdma_destroy_id(lid);
	rdma_destroy_event_channel(ch);
	pass();
}

int main(int argc, char **argv)
{
	set_prog(argv[0]);
	if (argc == 5 && !strcmp(argv[1], "victim"))
		return victim(argv[2], atoi(argv[3]), argv[4]);
	if (argc == 5 && !strcmp(argv[1], "listen"))
		return listener(argv[2], argv[3], atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "connect"))
		return connect_foreign(argv[2], argv[3],
				       (uint32_t)strtoul(argv[4], NULL, 0));
	if (argc == 5 && !strcmp(argv[1], "accept"))
		return accept_foreign(argv[2], argv[3],
				      (uint32_t)strtoul(argv[4], NULL, 0));
	fprintf(stderr,
		"usage: %s victim DEVICE N DONEFILE | listen ADDR PORT SECS |\n"
		"       %s connect|accept ADDR PORT QPN\n", prog, prog);
	return EXIT_FAIL;
}
