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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/rdma_cma.h>

#include "cm_common.h"

int main(int argc, char **argv)
{
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

	ch = make_channel();
	ai = lookup(argv[1], argv[2], false);
	id = resolved_id(ch, ai);
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

	ev = next_event(ch, WAIT_MS, "the outcome of the connect");
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
