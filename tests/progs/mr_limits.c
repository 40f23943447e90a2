// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mr_limits DEVICE: memory registration against RLIMIT_MEMLOCK, and the
 * access flags a registration accepts.
 *
 * Must run without privileges (no CAP_IPC_LOCK) under a small, finite
 * RLIMIT_MEMLOCK, e.g. as the guest test does:
 *   ulimit -l 1024; setpriv --reuid=65534 --regid=65534 --clear-groups \
 *	mr_limits siw0
 *
 * Checks:
 * - registrations that fit in the limit succeed; one that would take the
 *   pinned total over it fails with ENOMEM, EPERM or EAGAIN, as does a
 *   single registration larger than the limit;
 * - deregistration gives the pages back: the failed size then fits, and
 *   register/deregister cycles of 3/4 of the limit never run out;
 * - REMOTE_WRITE or REMOTE_ATOMIC without LOCAL_WRITE, unknown access bits
 *   and ON_DEMAND (siw has no ODP) are refused with EINVAL (ON_DEMAND:
 *   EOPNOTSUPP too);
 * - writable access to read-only memory and registering unmapped memory
 *   fail, read-only access to read-only memory works;
 * - a remote-access MR has lkey == rkey (one STag); live MRs have distinct
 *   keys.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common.h"

#define REMOTE_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		       IBV_ACCESS_REMOTE_READ)
#define NUM_KEYED_MRS 32
#define CYCLES 100

static size_t page;

static struct ibv_mr *reg(struct ibv_pd *pd, void *buf, size_t len,
			  unsigned int access)
{
	return ibv_reg_mr(pd, buf, len, access);
}

static void must_reg_fail(struct ibv_pd *pd, void *buf, size_t len,
			  unsigned int access, const char *why,
			  const int *errs, int nerrs)
{
	struct ibv_mr *mr = reg(pd, buf, len, access);
	int i, err = errno;

	if (mr)
		fail("%s: ibv_reg_mr(%zu bytes, access %#x) succeeded, lkey %#x",
		     why, len, access, mr->lkey);
	for (i = 0; i < nerrs; i++)
		if (err == errs[i])
			break;
	if (nerrs && i == nerrs)
		fail_err(err, "%s: ibv_reg_mr(%zu bytes, access %#x) failed with the wrong errno",
			 why, len, access);
	note("%s: refused, %s", why, errname(err));
}

static void dereg(struct ibv_mr *mr)
{
	must(ibv_dereg_mr(mr), "ibv_dereg_mr");
}

static size_t memlock_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		fail_err(errno, "getrlimit(RLIMIT_MEMLOCK)");
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (64u << 20) ||
	    rl.rlim_cur < 64 * page)
		fail("RLIMIT_MEMLOCK is %llu: run under 'ulimit -l N' with N between %zu and 65536",
		     (unsigned long long)rl.rlim_cur, 64 * page / 1024);
	if (geteuid() == 0)
		fail("running as root: CAP_IPC_LOCK would bypass the limit (use setpriv)");
	return rl.rlim_cur / page * page;
}

static void test_limit(struct ibv_pd *pd, size_t budget)
{
	static const int nomem[] = { ENOMEM, EPERM, EAGAIN };
	size_t half = budget / 2 / page * page;
	size_t over = half + 2 * page;
	void *a = page_alloc(half), *b = page_alloc(over);
	void *c = page_alloc(budget + page);
	struct ibv_mr *ma, *mb;
	int i;

	step("register half of RLIMIT_MEMLOCK (%zu KiB of %zu KiB)",
	     half >> 10, budget >> 10);
	ma = reg(pd, a, half, IBV_ACCESS_LOCAL_WRITE);
	if (!ma)
		fail_or_skip(errno, "ibv_reg_mr within RLIMIT_MEMLOCK");
	note("lkey %#x rkey %#x", ma->lkey, ma->rkey);

	step("a second registration that crosses the limit fails");
	must_reg_fail(pd, b, over, IBV_ACCESS_LOCAL_WRITE,
		      "pinned total over RLIMIT_MEMLOCK", nomem,
		      ARRAY_SIZE(nomem));

	step("a single registration larger than the limit fails");
	must_reg_fail(pd, c, budget + page, IBV_ACCESS_LOCAL_WRITE,
		      "one MR larger than RLIMIT_MEMLOCK", nomem,
		      ARRAY_SIZE(nomem));

	step("after deregistration the budget is back");
	dereg(ma);
	mb = reg(pd, b, over, IBV_ACCESS_LOCAL_WRITE);
	if (!mb)
		fail_err(errno, "ibv_reg_mr(%zu bytes) after freeing %zu bytes",
			 over, half);
	dereg(mb);

	step("%d register/deregister cycles of 3/4 of the limit", CYCLES);
	for (i = 0; i < CYCLES; i++) {
		mb = reg(pd, c, budget / 4 * 3 / page * page,
			 IBV_ACCESS_LOCAL_WRITE);
		if (!mb)
			fail_err(errno, "cycle %d: ibv_reg_mr (pinned pages not given back?)",
				 i);
		dereg(mb);
	}
	page_free(a, half);
	page_free(b, over);
	page_free(c, budget + page);
}

static void test_access_flags(struct ibv_pd *pd)
{
	static const int einval[] = { EINVAL };
	static const int odp[] = { EINVAL, EOPNOTSUPP };
	void *buf = page_alloc(page);
	struct ibv_mr *mr;

	step("REMOTE_WRITE without LOCAL_WRITE");
	must_reg_fail(pd, buf, page, IBV_ACCESS_REMOTE_WRITE,
		      "REMOTE_WRITE without LOCAL_WRITE", einval, 1);
	step("REMOTE_ATOMIC without LOCAL_WRITE");
	must_reg_fail(pd, buf, page, IBV_ACCESS_REMOTE_ATOMIC,
		      "REMOTE_ATOMIC without LOCAL_WRITE", einval, 1);
	step("unknown access bits");
	must_reg_fail(pd, buf, page, IBV_ACCESS_LOCAL_WRITE | (1u << 12),
		      "unknown access bit 12", einval, 1);
	must_reg_fail(pd, buf, page, IBV_ACCESS_LOCAL_WRITE | (1u << 30),
		      "unknown access bit 30", einval, 1);
	step("ON_DEMAND (siw has no ODP)");
	must_reg_fail(pd, buf, page, IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_ON_DEMAND, "ON_DEMAND", odp, 2);

	step("no access flags at all (local read) works");
	mr = reg(pd, buf, page, 0);
	if (!mr)
		fail_err(errno, "ibv_reg_mr(access 0)");
	dereg(mr);

	step("remote-access MR: lkey == rkey");
	mr = reg(pd, buf, page, REMOTE_ACCESS);
	if (!mr)
		fail_err(errno, "ibv_reg_mr(LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ)");
	note("lkey %#x rkey %#x", mr->lkey, mr->rkey);
	if (mr->lkey != mr->rkey)
		fail("remote-access MR has lkey %#x != rkey %#x (iWARP has one STag)",
		     mr->lkey, mr->rkey);
	if (mr->addr != buf || mr->length != page)
		fail("MR reports addr %p length %zu, registered %p %zu",
		     mr->addr, mr->length, buf, page);
	dereg(mr);
	page_free(buf, page);
}

static void test_bad_memory(struct ibv_pd *pd)
{
	void *ro, *gone;
	struct ibv_mr *mr;

	ro = mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
		  -1, 0);
	if (ro == MAP_FAILED)
		fail_err(errno, "mmap(PROT_READ)");

	step("LOCAL_WRITE on read-only memory fails");
	must_reg_fail(pd, ro, 2 * page, IBV_ACCESS_LOCAL_WRITE,
		      "writable MR on PROT_READ memory", NULL, 0);
	must_reg_fail(pd, ro, 2 * page, REMOTE_ACCESS,
		      "remote-writable MR on PROT_READ memory", NULL, 0);

	step("read-only access to read-only memory works");
	mr = reg(pd, ro, 2 * page, IBV_ACCESS_REMOTE_READ);
	if (!mr)
		fail_err(errno, "ibv_reg_mr(REMOTE_READ) of PROT_READ memory");
	dereg(mr);
	munmap(ro, 2 * page);

	step("unmapped memory fails");
	gone = page_alloc(4 * page);
	page_free(gone, 4 * page);
	must_reg_fail(pd, gone, 4 * page, IBV_ACCESS_LOCAL_WRITE,
		      "MR over unmapped memory", NULL, 0);
}

static void test_distinct_keys(struct ibv_pd *pd)
{
	struct ibv_mr *mr[NUM_KEYED_MRS];
	char *buf = page_alloc(NUM_KEYED_MRS * page);
	int i, j;

	step("%d live MRs have distinct keys", NUM_KEYED_MRS);
	for (i = 0; i < NUM_KEYED_MRS; i++) {
		mr[i] = reg(pd, buf + i * page, page,
			    i % 2 ? REMOTE_ACCESS : IBV_ACCESS_LOCAL_WRITE);
		if (!mr[i])
			fail_err(errno, "ibv_reg_mr #%d", i);
	}
	for (i = 0; i < NUM_KEYED_MRS; i++)
		for (j = 0; j < i; j++)
			if (mr[i]->lkey == mr[j]->lkey ||
			    (i % 2 && j % 2 && mr[i]->rkey == mr[j]->rkey))
				fail("MR #%d and #%d share a key: lkey %#x/%#x rkey %#x/%#x",
				     j, i, mr[j]->lkey, mr[i]->lkey,
				     mr[j]->rkey, mr[i]->rkey);
	for (i = 0; i < NUM_KEYED_MRS; i++)
		dereg(mr[i]);

	step("the same buffer registered twice gives two keys");
	mr[0] = reg(pd, buf, page, REMOTE_ACCESS);
	mr[1] = reg(pd, buf, page, REMOTE_ACCESS);
	if (!mr[0] || !mr[1])
		fail_err(errno, "ibv_reg_mr of one buffer twice");
	if (mr[0]->lkey == mr[1]->lkey)
		fail("two MRs of one buffer share lkey %#x", mr[0]->lkey);
	dereg(mr[0]);
	dereg(mr[1]);
	page_free(buf, NUM_KEYED_MRS * page);
}

int main(int argc, char **argv)
{
	const char *dev = prog_init(argc, argv);
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	size_t budget;

	page = (size_t)sysconf(_SC_PAGESIZE);
	budget = memlock_budget();
	ctx = open_device(dev);
	pd = make_pd(ctx);

	test_limit(pd, budget);
	test_access_flags(pd);
	test_bad_memory(pd);
	test_distinct_keys(pd);

	must(ibv_dealloc_pd(pd), "ibv_dealloc_pd");
	ibv_close_device(ctx);
	pass();
}
