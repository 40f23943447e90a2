// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gid_watch DEVICE SECONDS: the device's MAC-based GID (GID 0) is in every
 * snapshot of the core's GID cache taken for SECONDS, while the caller
 * changes the netdev's addresses.
 *
 * rdma_cm finds the device behind an iWARP connection request (and behind
 * a local address to connect from) by looking the MAC-based GID up in that
 * cache. Each address change makes siw send IB_EVENT_GID_CHANGE, and the
 * core then rewrites the cache entry by entry, every entry absent for a
 * moment. ibv_query_gid_table() copies the table under the same lock as
 * rdma_cm's lookups, so a snapshot without the MAC GID is a moment in
 * which a connection would have been refused.
 *
 * Prints the number of snapshots, how many differed from the one before
 * (the table did change while watched: without that the check proved
 * nothing, which fails too) and how many lacked the MAC GID.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common.h"

#define MAX_GIDS	64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static bool has_gid(const struct ibv_gid_entry *e, ssize_t n,
		    const union ibv_gid *gid)
{
	ssize_t i;

	for (i = 0; i < n; i++)
		if (!memcmp(&e[i].gid, gid, sizeof(*gid)))
			return true;
	return false;
}

static bool same_table(const struct ibv_gid_entry *a, ssize_t na,
		       const struct ibv_gid_entry *b, ssize_t nb)
{
	ssize_t i;

	if (na != nb)
		return false;
	for (i = 0; i < na; i++)
		if (a[i].gid_index != b[i].gid_index ||
		    memcmp(&a[i].gid, &b[i].gid, sizeof(a[i].gid)))
			return false;
	return true;
}

int main(int argc, char **argv)
{
	static struct ibv_gid_entry snap[2][MAX_GIDS];
	unsigned long snaps = 0, changes = 0, missing = 0;
	ssize_t n[2] = { 0, 0 };
	struct ibv_context *ctx;
	const char *dev;
	union ibv_gid mac;
	double secs, end;
	int cur = 0;

	dev = prog_init(argc > 2 ? 2 : argc, argv);
	secs = argc > 2 ? atof(argv[2]) : 0;
	if (secs <= 0)
		fail("usage: %s DEVICE SECONDS", prog);
	ctx = open_device(dev);
	must(ibv_query_gid(ctx, 1, 0, &mac) ? errno : 0, "ibv_query_gid 0");

	end = now() + secs;
	while (now() < end) {
		n[cur] = ibv_query_gid_table(ctx, snap[cur], MAX_GIDS, 0);
		if (n[cur] < 0)
			fail_err((int)-n[cur], "ibv_query_gid_table");
		if (snaps++ && !same_table(snap[cur], n[cur], snap[!cur],
					   n[!cur]))
			changes++;
		if (!has_gid(snap[cur], n[cur], &mac)) {
			if (!missing)
				note("snapshot %lu: %zd GIDs, the MAC GID not among them",
				     snaps, n[cur]);
			missing++;
		}
		cur = !cur;
	}
	note("%lu snapshots, %lu table changes seen, %lu without the MAC GID",
	     snaps, changes, missing);
	if (missing)
		fail("the MAC GID was missing from %lu of %lu snapshots: a connection request then would have been refused",
		     missing, snaps);
	if (!changes)
		fail("the GID table never changed while watched: nothing was tested");
	pass();
}
