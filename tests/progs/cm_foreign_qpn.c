// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_connect() naming a QP that is not the caller's.
 *
 *	cm_foreign_qpn ADDR PORT QPN HOLD_S
 *
 * librdmacm lets a caller connect an rdma_cm ID that has no QP by giving
 * a QP number in rdma_conn_param.qp_num; for iWARP, iw_cm then asks the
 * driver for the QP of that number on the device. The number here is
 * someone else's: a kernel ULP's QP (tests/kmod/siw_ktarget.ko), and the
 * caller may be an unprivileged user. The connect must fail with EINVAL
 * and leave that QP alone.
 *
 * Exit 0 when rdma_connect() fails with EINVAL. When it succeeds and the
 * connection comes up, the program says so, holds it HOLD_S seconds (for
 * the caller to look at the QP), disconnects and fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "common.h"

#define RESOLVE_MS	2000

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

static void expect_event(struct rdma_event_channel *ch,
			 enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch, rdma_event_str(want));
	enum rdma_cm_event_type got = ev->event;
	int status = ev->status;

	rdma_ack_cm_event(ev);
	if (got != want)
		fail("event %s (status %d), expected %s", rdma_event_str(got),
		     status, rdma_event_str(want));
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP };
	struct rdma_event_channel *ch;
	struct rdma_conn_param cp = {
		.responder_resources = 1,
		.initiator_depth = 1,
	};
	enum rdma_cm_event_type got;
	struct rdma_cm_event *ev;
	struct rdma_addrinfo *ai;
	struct rdma_cm_id *id;
	unsigned long qpn, hold;
	int status;

	set_prog(argv[0]);
	if (argc != 5) {
		fprintf(stderr, "usage: %s ADDR PORT QPN HOLD_S\n", prog);
		return EXIT_FAIL;
	}
	qpn = strtoul(argv[3], NULL, 0);
	hold = strtoul(argv[4], NULL, 0);

	ch = rdma_create_event_channel();
	if (!ch)
		fail_err(errno, "rdma_create_event_channel");
	if (rdma_getaddrinfo(argv[1], argv[2], &hints, &ai))
		fail_err(errno, "rdma_getaddrinfo(%s, %s)", argv[1], argv[2]);
	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		fail_err(errno, "rdma_create_id");
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, RESOLVE_MS))
		fail_err(errno, "rdma_resolve_addr");
	expect_event(ch, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, RESOLVE_MS))
		fail_err(errno, "rdma_resolve_route");
	expect_event(ch, RDMA_CM_EVENT_ROUTE_RESOLVED);
	note("uid %u, device %s, no QP of our own; connecting with QP number %lu",
	     (unsigned int)getuid(), ibv_get_device_name(id->verbs->device),
	     qpn);

	cp.qp_num = qpn;
	if (rdma_connect(id, &cp)) {
		int err = errno;

		if (err != EINVAL)
			fail_err(err, "rdma_connect with QP number %lu failed, but not with EINVAL",
				 qpn);
		note("rdma_connect with QP number %lu: %s", qpn, errname(err));
		rdma_destroy_id(id);
		rdma_freeaddrinfo(ai);
		rdma_destroy_event_channel(ch);
		pass();
	}

	ev = next_event(ch, "the outcome of the connect");
	got = ev->event;
	status = ev->status;
	rdma_ack_cm_event(ev);
	if (got == RDMA_CM_EVENT_ESTABLISHED) {
		note("connected through QP %lu, which is not ours; holding it %lu s",
		     qpn, hold);
		sleep(hold);
		rdma_disconnect(id);
	}
	rdma_destroy_id(id);
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	fail("rdma_connect with QP number %lu, a QP this process does not own, succeeded (then %s, status %d); expected EINVAL",
	     qpn, rdma_event_str(got), status);
}
