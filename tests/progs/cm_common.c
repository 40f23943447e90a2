// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rdma_cm helpers of the verbs test programs: event channels and bounded
 * waits for their events, address lookup, resolved and listening IDs.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>

#include "cm_common.h"

struct rdma_event_channel *make_channel(void)
{
	struct rdma_event_channel *ch = rdma_create_event_channel();

	if (!ch)
		fail_err(errno, "rdma_create_event_channel");
	return ch;
}

struct rdma_cm_event *event_within(struct rdma_event_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	int64_t end = mono_ms() + ms;
	struct rdma_cm_event *ev;
	int n;

	for (;;) {
		n = poll(&pfd, 1, ms);
		if (n >= 0)
			break;
		if (errno != EINTR)
			fail_err(errno, "poll(rdma_cm channel)");
		ms = (int)(end - mono_ms());
		if (ms < 0)
			ms = 0;
	}
	if (!n)
		return NULL;
	if (rdma_get_cm_event(ch, &ev))
		fail_err(errno, "rdma_get_cm_event");
	return ev;
}

struct rdma_cm_event *next_event(struct rdma_event_channel *ch, int ms,
				 const char *what)
{
	struct rdma_cm_event *ev = event_within(ch, ms);

	if (!ev)
		fail("no rdma_cm event within %d ms (waiting for %s)", ms,
		     what);
	return ev;
}

void expect_event(struct rdma_event_channel *ch, struct rdma_cm_id *id,
		  enum rdma_cm_event_type want)
{
	struct rdma_cm_event *ev = next_event(ch, WAIT_MS,
					      rdma_event_str(want));
	enum rdma_cm_event_type got = ev->event;
	int status = ev->status;
	bool same = ev->id == id;

	rdma_ack_cm_event(ev);
	if (got != want || !same)
		fail("event %s (status %d)%s, expected %s",
		     rdma_event_str(got), status,
		     same ? "" : " for another ID", rdma_event_str(want));
}

struct rdma_addrinfo *lookup(const char *addr, const char *port,
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

const char *addr_str(const struct sockaddr *sa)
{
	static char buf[INET6_ADDRSTRLEN + 16];
	char a[INET6_ADDRSTRLEN] = "?";

	if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		inet_ntop(AF_INET6, &s6->sin6_addr, a, sizeof(a));
		snprintf(buf, sizeof(buf), "[%s]:%u", a, ntohs(s6->sin6_port));
	} else {
		const struct sockaddr_in *s4 = (const void *)sa;

		inet_ntop(AF_INET, &s4->sin_addr, a, sizeof(a));
		snprintf(buf, sizeof(buf), "%s:%u", a, ntohs(s4->sin_port));
	}
	return buf;
}

struct rdma_cm_id *resolved_id(struct rdma_event_channel *ch,
			       const struct rdma_addrinfo *ai)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		fail_err(errno, "rdma_create_id");
	if (rdma_resolve_addr(id, NULL, ai->ai_dst_addr, RESOLVE_MS))
		fail_err(errno, "rdma_resolve_addr(%s)",
			 addr_str(ai->ai_dst_addr));
	expect_event(ch, id, RDMA_CM_EVENT_ADDR_RESOLVED);
	if (rdma_resolve_route(id, RESOLVE_MS))
		fail_err(errno, "rdma_resolve_route");
	expect_event(ch, id, RDMA_CM_EVENT_ROUTE_RESOLVED);
	return id;
}

struct rdma_cm_id *listen_on(struct rdma_event_channel *ch, const char *addr,
			     const char *port, int backlog)
{
	struct rdma_addrinfo *ai = lookup(addr, port, true);
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, RDMA_PS_TCP))
		fail_err(errno, "rdma_create_id");
	if (rdma_bind_addr(id, ai->ai_src_addr))
		fail_err(errno, "rdma_bind_addr(%s:%s)", addr, port);
	rdma_freeaddrinfo(ai);
	if (rdma_listen(id, backlog))
		fail_err(errno, "rdma_listen(%s:%s)", addr, port);
	return id;
}

void make_cm_qp(struct rdma_cm_id *id)
{
	struct ibv_qp_init_attr qpa = {
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	if (rdma_create_qp(id, NULL, &qpa))
		fail_err(errno, "rdma_create_qp");
}
