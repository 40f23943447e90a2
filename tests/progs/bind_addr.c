// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bind_addr.so: an LD_PRELOAD shim that binds an rdma_cm listener to one
 * address. perftest's server always binds the wildcard address, and
 * rdma_cm then listens on every RDMA device of the kernel. With our siw
 * and Linux's siw in one guest (tests/vm/240), Linux's siw answers such a
 * listen with a 0.0.0.0 socket of its own in the server's namespace, and
 * our listener on the same port cannot bind beside it. Between two hosts
 * this never arises; here the shim does what a bind option of perftest
 * would: with SIW_BIND_ADDR set (an IPv4 or IPv6 address), a wildcard
 * rdma_bind_addr() binds that address instead, same port. Nothing else
 * changes.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/rdma_cma.h>

typedef int (*bind_fn)(struct rdma_cm_id *, struct sockaddr *);

static int wildcard(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
		       htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(
			&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return 0;
}

/* The address of SIW_BIND_ADDR with the port of @orig; 0 if none. */
static int bind_target(const struct sockaddr *orig,
		       struct sockaddr_storage *out)
{
	const char *want = getenv("SIW_BIND_ADDR");
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;
	struct sockaddr_in *s4 = (struct sockaddr_in *)out;
	in_port_t port;

	if (!want || !*want || !wildcard(orig))
		return 0;
	port = orig->sa_family == AF_INET ?
	       ((const struct sockaddr_in *)orig)->sin_port :
	       ((const struct sockaddr_in6 *)orig)->sin6_port;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, want, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = port;
		return 1;
	}
	if (inet_pton(AF_INET6, want, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = port;
		return 1;
	}
	fprintf(stderr, "bind_addr: SIW_BIND_ADDR=%s is no address\n", want);
	exit(2);
}

int rdma_bind_addr(struct rdma_cm_id *id, struct sockaddr *addr)
{
	bind_fn next = (bind_fn)dlsym(RTLD_NEXT, "rdma_bind_addr");
	struct sockaddr_storage target;

	if (!next) {
		fprintf(stderr, "bind_addr: no rdma_bind_addr after the shim\n");
		exit(2);
	}
	if (addr && bind_target(addr, &target)) {
		fprintf(stderr, "bind_addr: listening on %s only\n",
			getenv("SIW_BIND_ADDR"));
		return next(id, (struct sockaddr *)&target);
	}
	return next(id, addr);
}
