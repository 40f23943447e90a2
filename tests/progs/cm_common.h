/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rdma_cm helpers of the verbs test programs in tests/progs that connect
 * through librdmacm (cm_order, cm_foreign_qpn, qp_steal, cm_hostile,
 * create_qp_fault, mem_victim); link cm_common.o and -lrdmacm.
 *
 * Like common.h's, every helper that cannot do what it says fails the
 * program with one "FAIL:" line naming the call and the errno. Events
 * are taken from the channel's fd with poll(), so that no wait is
 * without a bound.
 */
#ifndef SIW_PROGS_CM_COMMON_H
#define SIW_PROGS_CM_COMMON_H

#include <stdbool.h>

#include <rdma/rdma_cma.h>

#include "common.h"

/*
 * Address and route resolution: Linux 6.1's rdma_cm may miss an ARP reply
 * that comes back faster than it queues the request (veth), and then
 * resolves only when the timeout expires; rping's 2 s keep that wait
 * short.
 */
#define RESOLVE_MS	2000

/* An event channel. */
struct rdma_event_channel *make_channel(void);

/*
 * The next event of @ch within @ms, or NULL when none came. The caller
 * acknowledges it (rdma_ack_cm_event).
 */
struct rdma_cm_event *event_within(struct rdma_event_channel *ch, int ms);
/* Same, but fails the program without an event, naming @what it awaited. */
struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms,
				 const char *what);
/*
 * Acknowledges the next event of @ch (within WAIT_MS); fails unless it is
 * @want for @id.
 */
void expect_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		  enum rdma_cm_event_type want);

/*
 * rdma_getaddrinfo of @addr:@port (TCP port space): to bind to when
 * @passive, to connect to otherwise. Free it with rdma_freeaddrinfo.
 */
struct rdma_addrinfo *lookup(const char *addr, const char *port,
			     bool passive);
/* "ADDR:PORT" of @sa (IPv6 as "[ADDR]:PORT"); valid until the next call. */
const char *addr_str(const struct sockaddr *sa);

/*
 * An ID on @ch whose address and route are resolved to @ai's destination
 * (each within RESOLVE_MS), ready for rdma_create_qp and rdma_connect.
 */
struct rdma_cm_id *resolved_id(struct rdma_event_channel *ch,
			       const struct rdma_addrinfo *ai);
/* An ID on @ch bound to @addr:@port and listening with @backlog. */
struct rdma_cm_id *listen_on(struct rdma_event_channel *ch, const char *addr,
			     const char *port, int backlog);

/*
 * An RC QP on @id (4 send and 4 receive WRs of one SGE) with the ID's own
 * PD and CQs.
 */
void make_cm_qp(struct rdma_cm_id *id);

#endif /* SIW_PROGS_CM_COMMON_H */
