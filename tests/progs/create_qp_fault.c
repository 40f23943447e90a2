// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * create_qp_fault DEVICE ADDR PORT [CREATES [SECONDS]]: a create_qp whose
 * response the kernel cannot write must fail cleanly, and the QP it
 * started to make must never be reachable by anyone meanwhile.
 *
 * siw gives a new QP its number (which the CM looks QPs up by) and then
 * copies its driver response (ring keys, QP id) to the process. Here that
 * copy fails: the process issues the uverbs CREATE_QP command itself
 * (write() on the uverbs file, as libibverbs' legacy path does) with the
 * response pointer placed so that the core's part of the response is in
 * a writable page and siw's part (struct siw_uresp_create_qp) in the
 * read-only page after it. Every such create must fail with EFAULT.
 *
 * While thread 1 does CREATES (default 5000) such creates, thread 2 calls
 * rdma_connect() to ADDR:PORT (a listener of the same device) in a loop,
 * with conn_param.qp_num set to the number the create in progress is
 * about to get (numbers are handed out cyclically: the next one after a
 * QP made normally). A QP that is not created must not be found: every
 * such rdma_connect must fail. One that succeeds bound a QP whose create
 * failed, and which the core frees at once (a use after free in the
 * kernel). The guest test then checks that no QP is left and that siw
 * unloads without leaks; the runner checks the kernel log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_cma.h>
#include <rdma/siw-abi.h>

#include "cm_common.h"

#define CORE_RESP	sizeof(struct ib_uverbs_create_qp_resp)
#define DRV_RESP	sizeof(struct siw_uresp_create_qp)

struct race {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	uint8_t *resp_pages;		/* RW page, then a PROT_READ page */
	const char *addr, *port;
	long creates;
	int64_t end_ms;

	_Atomic uint32_t target;	/* QP number of the create under way */
	atomic_bool done;

	/* thread 1 */
	long made, efault, other_err, succeeded;
	int first_other;
	/* thread 2 */
	_Atomic long connects;
	long refused_einval, refused_other, bound;
	int first_refusal;
	uint32_t bound_qpn;
};

/* CREATE_QP with @resp as the response; returns 0 or errno. */
static int raw_create_qp(struct race *r, void *resp)
{
	struct ib_uverbs_create_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	cmd.response = (uintptr_t)resp;
	cmd.pd_handle = r->pd->handle;
	cmd.send_cq_handle = r->cq->handle;
	cmd.recv_cq_handle = r->cq->handle;
	cmd.max_send_wr = 4;
	cmd.max_recv_wr = 4;
	cmd.max_send_sge = 1;
	cmd.max_recv_sge = 1;
	cmd.qp_type = IBV_QPT_RC;
	return uverbs_write(r->ctx->cmd_fd, IB_USER_VERBS_CMD_CREATE_QP, &cmd,
			  sizeof(cmd), CORE_RESP + DRV_RESP);
}

static void raw_destroy_qp(struct race *r, uint32_t handle)
{
	struct ib_uverbs_destroy_qp_resp resp;
	struct ib_uverbs_destroy_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	cmd.response = (uintptr_t)&resp;
	cmd.qp_handle = handle;
	err = uverbs_write(r->ctx->cmd_fd, IB_USER_VERBS_CMD_DESTROY_QP, &cmd,
			 sizeof(cmd), sizeof(resp));
	if (err)
		note("DESTROY_QP of handle %u: %s", handle, errname(err));
}

/* The number the next QP of the device will get: one after a new one. */
static uint32_t next_qpn(struct race *r)
{
	struct qp_spec spec = { .send_cq = r->cq, .recv_cq = r->cq,
				.max_send_wr = 4, .max_recv_wr = 4,
				.max_sge = 1 };
	struct ibv_qp *qp = make_qp(r->pd, &spec, NULL);
	uint32_t n = qp->qp_num;

	must(ibv_destroy_qp(qp), "ibv_destroy_qp");
	return n + 1;
}

static void *creator(void *arg)
{
	struct race *r = arg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	/* The core's part ends where the read-only page begins. */
	uint8_t *resp = r->resp_pages + page - CORE_RESP;
	uint32_t qpn = next_qpn(r);
	long i;
	int err;

	for (i = 0; i < r->creates && !atomic_load(&r->done); i++) {
		if (mono_ms() > r->end_ms)
			break;
		atomic_store(&r->target, qpn);
		err = raw_create_qp(r, resp);
		r->made++;
		if (err == EFAULT) {
			r->efault++;
		} else if (!err) {
			struct ib_uverbs_create_qp_resp *cr = (void *)resp;

			r->succeeded++;
			note("CREATE_QP succeeded (QP %u) although its response could not be written",
			     cr->qpn);
			raw_destroy_qp(r, cr->qp_handle);
		} else {
			if (!r->other_err++)
				r->first_other = err;
		}
		qpn++;
	}
	atomic_store(&r->target, 0);
	atomic_store(&r->done, true);
	return NULL;
}

static void *connector(void *arg)
{
	struct race *r = arg;
	struct rdma_event_channel *ch = make_channel();
	struct rdma_addrinfo *ai = lookup(r->addr, r->port, false);
	struct rdma_cm_id *id = resolved_id(ch, ai);

	while (!atomic_load(&r->done)) {
		struct rdma_conn_param cp = {
			.responder_resources = 1,
			.initiator_depth = 1,
		};

		cp.qp_num = atomic_load(&r->target);
		if (!cp.qp_num)
			continue;
		r->connects++;
		if (rdma_connect(id, &cp)) {
			if (errno == EINVAL) {
				r->refused_einval++;
			} else if (!r->refused_other++) {
				r->first_refusal = errno;
			}
			continue;
		}
		/* The kernel found a QP that create_qp is failing. */
		r->bound++;
		r->bound_qpn = cp.qp_num;
		atomic_store(&r->done, true);
	}
	rdma_destroy_id(id);
	rdma_freeaddrinfo(ai);
	rdma_destroy_event_channel(ch);
	return NULL;
}

int main(int argc, char **argv)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct race r;
	pthread_t t1, t2;
	uint32_t first, after;
	int secs = 40, err;

	set_prog(argv[0]);
	if (argc < 4 || argc > 6) {
		fprintf(stderr, "usage: %s DEVICE ADDR PORT [CREATES [SECONDS]]\n",
			prog);
		return EXIT_FAIL;
	}
	memset(&r, 0, sizeof(r));
	r.addr = argv[2];
	r.port = argv[3];
	r.creates = argc > 4 ? atol(argv[4]) : 5000;
	if (argc > 5)
		secs = atoi(argv[5]);
	r.ctx = open_device(argv[1]);
	r.pd = make_pd(r.ctx);
	r.cq = make_cq(r.ctx, 16);
	r.resp_pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r.resp_pages == MAP_FAILED)
		fail_err(errno, "mmap");
	if (mprotect(r.resp_pages + page, page, PROT_READ))
		fail_err(errno, "mprotect");

	step("one CREATE_QP whose driver response lands in a read-only page");
	first = next_qpn(&r);
	err = raw_create_qp(&r, r.resp_pages + page - CORE_RESP);
	if (err != EFAULT)
		fail("CREATE_QP with siw's response in a read-only page: %s, expected EFAULT",
		     err ? errname(err) : "success");
	after = next_qpn(&r);
	note("EFAULT; QP numbers: %u before, %u after it", first - 1,
	     after - 1);

	step("%ld such creates against rdma_connect() naming the QP number each is about to get (at most %d s)",
	     r.creates, secs);
	r.end_ms = mono_ms() + secs * 1000LL;
	err = pthread_create(&t2, NULL, connector, &r);
	if (err)
		fail_err(err, "pthread_create");
	/* Let the connector resolve its address first. */
	while (!r.connects && !atomic_load(&r.done) && mono_ms() < r.end_ms) {
		atomic_store(&r.target, 1);	/* never a QP: 0 and 1 are IB's */
		sleep_ms(10);
	}
	err = pthread_create(&t1, NULL, creator, &r);
	if (err)
		fail_err(err, "pthread_create");
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	note("the race took %lld ms",
	     (long long)(mono_ms() - r.end_ms + secs * 1000LL));
	note("%ld creates: %ld EFAULT, %ld other errors, %ld succeeded",
	     r.made, r.efault, r.other_err, r.succeeded);
	note("%ld rdma_connect(): %ld EINVAL, %ld other refusals%s%s, %ld taken",
	     r.connects, r.refused_einval, r.refused_other,
	     r.refused_other ? ", first " : "",
	     r.refused_other ? errname(r.first_refusal) : "", r.bound);

	if (r.bound)
		fail("rdma_connect() naming QP %u succeeded while CREATE_QP of that QP was failing: the QP was reachable by number before its create succeeded (and is freed under the connection)",
		     r.bound_qpn);
	if (r.succeeded || r.other_err)
		fail("%ld creates succeeded and %ld failed otherwise (first: %s); every one should fail with EFAULT",
		     r.succeeded, r.other_err,
		     r.other_err ? errname(r.first_other) : "-");
	if (r.made < r.creates)
		note("stopped after %ld creates (time bound)", r.made);

	must(ibv_destroy_cq(r.cq), "ibv_destroy_cq");
	must(ibv_dealloc_pd(r.pd), "ibv_dealloc_pd");
	ibv_close_device(r.ctx);
	pass();
}
