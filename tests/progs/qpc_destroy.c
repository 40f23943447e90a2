// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * qpc_destroy DEVICE GID_INDEX ROUNDS: pairs of QPs of one device,
 * connected to each other without rdma_cm (RTR with the GID at GID_INDEX
 * on both ends, then RTS), destroyed while that connection is still
 * being set up, at a different moment each round: right after RTR, right
 * after RTS, or up to 3 ms later, in either order.
 *
 * This is what rdma-core's pyverbs tests do when they skip a test after
 * building their QPs. destroy_qp waits until nothing holds the QP; an
 * endpoint that took the QP after destroy_qp had closed its connection
 * would hold it forever (the process hangs in destroy). Every destroy
 * must return 0; prints the slowest one.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void to_rtr(struct ibv_qp *qp, uint32_t peer, const union ibv_gid *gid,
		   int gid_index)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = {
			.is_global = 1,
			.grh = { .dgid = *gid, .sgid_index = gid_index,
				 .hop_limit = 1 },
			.port_num = 1,
		},
	};
	int err = ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_AV |
				IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER);

	must(err, "modify_qp to RTR");
}

static void to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_RTS,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
		.max_rd_atomic = 1,
	};

	must(ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_TIMEOUT |
			   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			   IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC),
	     "modify_qp to RTS");
}

static double destroy(struct ibv_qp *qp)
{
	double t = now_ms();
	int err = ibv_destroy_qp(qp);

	if (err)
		fail_err(err, "ibv_destroy_qp");
	return now_ms() - t;
}

int main(int argc, char **argv)
{
	struct qp_spec spec = { .max_send_wr = 4, .max_recv_wr = 4,
				.max_sge = 1 };
	double slowest = 0, ms;
	struct ibv_context *ctx;
	struct ibv_qp *qp[2];
	union ibv_gid gid;
	int gid_index, rounds, r, i;
	struct ibv_pd *pd;
	const char *dev;

	dev = prog_init(argc > 3 ? 2 : argc, argv);
	gid_index = argc > 3 ? atoi(argv[2]) : 0;
	rounds = argc > 3 ? atoi(argv[3]) : 0;
	if (gid_index <= 0 || rounds <= 0)
		fail("usage: %s DEVICE GID_INDEX ROUNDS", prog);
	ctx = open_device(dev);
	must(ibv_query_gid(ctx, 1, gid_index, &gid) ? errno : 0,
	     "ibv_query_gid");
	pd = make_pd(ctx);
	spec.send_cq = make_cq(ctx, 16);
	spec.recv_cq = spec.send_cq;

	for (r = 0; r < rounds; r++) {
		for (i = 0; i < 2; i++) {
			qp[i] = make_qp(pd, &spec, NULL);
			set_state(qp[i], IBV_QPS_INIT);
		}
		to_rtr(qp[0], qp[1]->qp_num, &gid, gid_index);
		to_rtr(qp[1], qp[0]->qp_num, &gid, gid_index);
		if (r % 4) {
			to_rts(qp[0]);
			to_rts(qp[1]);
		}
		if (r % 4 > 1)
			usleep((r * 97) % 3000);
		for (i = 0; i < 2; i++) {
			ms = destroy(qp[(r / 4 + i) % 2]);
			if (ms > slowest)
				slowest = ms;
		}
	}
	note("%d pairs destroyed while connecting; slowest destroy %.1f ms",
	     rounds, slowest);
	pass();
}
