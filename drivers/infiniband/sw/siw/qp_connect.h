/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Connecting QPs without rdma_cm (qp_connect.c): the verbs' side in
 * modify_qp; its endpoints are a kind of the CM's (cm_cep.h).
 */
#ifndef SIW_QP_CONNECT_H
#define SIW_QP_CONNECT_H

#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct siw_qp;

/*
 * Per QP state, in struct siw_qp. Every field is written and read under
 * @lock (modify_qp, the work item, the CM's reports and the listener all
 * use it). It is a leaf: siw takes no other lock under it.
 * Only @armed is also read without it (siw_qpc_armed(): a hint to the
 * state table, which the work item checks again under the lock).
 */
struct siw_qpc {
	spinlock_t lock;		/* all of it, see above */
	bool armed;			/* RTR named a peer */
	bool active;			/* this side connects */
	u32 peer_qpn;
	struct sockaddr_storage local;	/* our address (from sgid_index) */
	struct sockaddr_storage peer;	/* the peer's, with qp_port */
	int status;			/* -EINPROGRESS until connected (0) */
	bool attempt;			/* a connection attempt is running */
	unsigned long deadline;		/* jiffies */
	struct delayed_work work;	/* attempts, deadline */
};

int siw_qpc_module_init(void);
void siw_qpc_module_exit(void);
void siw_qpc_init(struct siw_qp *qp);

/*
 * modify_qp to RTR with IB_QP_AV and IB_QP_DEST_QPN starts connecting in
 * the background; RTS is allowed from then on, and WRs wait for the
 * connection. siw_qpc_disarm() forgets the peer (RESET); siw_qpc_stop()
 * also waits for the work item, for destroy_qp: after it no attempt
 * starts and no report of one queues the work again.
 */
int siw_qpc_rtr(struct siw_qp *qp, const struct ib_qp_attr *attr);
void siw_qpc_start(struct siw_qp *qp);
bool siw_qpc_armed(struct siw_qp *qp);
void siw_qpc_disarm(struct siw_qp *qp);
void siw_qpc_stop(struct siw_qp *qp);

#endif /* SIW_QP_CONNECT_H */
