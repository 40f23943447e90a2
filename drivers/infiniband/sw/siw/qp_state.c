// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The QP state machine: modify_qp and query_qp for the verbs, the moves
 * of the CM and the engine, and what a move to ERROR or RESET does to the
 * rings.
 *
 * The QP keeps an IB state (what the verbs set and query); its iWARP
 * state follows from it (see qp.h). The verbs may move a QP along
 *
 *	RESET -> INIT -> RTR, RTS -> SQD, and any state -> RESET or ERR,
 *
 * and stay in any state but SQE to change attributes. RTS is reached
 * only through the connection manager, which knows when the connection
 * is up: a verbs move to RTS is refused. SQE (TERMINATE) is entered by
 * the engine only.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bits.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "cm.h"
#include "qp.h"
#include "siw.h"
#include "trace.h"

/*
 * The one table of what a QP may do in each state (qp.h: siw_qp_may).
 * @may holds in the state; @may_qpc adds what a QP connected without
 * rdma_cm may do there too (qp_connect.c: armed): such a QP may stay in
 * RTR and send from there (perftest's ib_send_bw server does, returning
 * receive credits with RDMA Writes). The iWARP state of each (qp.h) says
 * why: IDLE (RESET, INIT, RTR) takes a connection and its ORD/IRD, RTS
 * and CLOSING (SQD) hold one, ERROR flushes; a responder answers RDMA
 * Reads from RTR on, as in IB.
 */
static const struct siw_qp_caps {
	u16 may;
	u16 may_qpc;
} siw_qp_caps_of[IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = {
		.may = SIW_QP_TAKES_CONNECTION | SIW_QP_TAKES_CEP |
		       SIW_QP_SETS_RD_ATOMIC,
	},
	[IB_QPS_INIT] = {
		.may = SIW_QP_TAKES_RQ | SIW_QP_TAKES_CONNECTION |
		       SIW_QP_TAKES_CEP | SIW_QP_SETS_RD_ATOMIC,
	},
	[IB_QPS_RTR] = {
		.may = SIW_QP_TAKES_RQ | SIW_QP_ANSWERS_READS |
		       SIW_QP_TAKES_CONNECTION | SIW_QP_TAKES_CEP |
		       SIW_QP_SETS_RD_ATOMIC,
		.may_qpc = SIW_QP_TAKES_SQ | SIW_QP_SENDS |
			   SIW_QP_QPC_CONNECTS,
	},
	[IB_QPS_RTS] = {
		.may = SIW_QP_TAKES_SQ | SIW_QP_TAKES_RQ | SIW_QP_SENDS |
		       SIW_QP_ANSWERS_READS | SIW_QP_TAKES_CEP |
		       SIW_QP_HOLDS_CONNECTION,
		.may_qpc = SIW_QP_QPC_CONNECTS,
	},
	[IB_QPS_SQD] = {
		.may = SIW_QP_TAKES_RQ | SIW_QP_ANSWERS_READS |
		       SIW_QP_TAKES_CEP | SIW_QP_HOLDS_CONNECTION,
	},
	[IB_QPS_SQE] = {
		.may = SIW_QP_TAKES_RQ | SIW_QP_TAKES_CEP,
	},
	[IB_QPS_ERR] = {
		.may = SIW_QP_TAKES_SQ | SIW_QP_TAKES_RQ | SIW_QP_FLUSHES,
	},
};

/* What any QP may do in @state (no connection without rdma_cm). */
static bool siw_qp_state_can(enum ib_qp_state state, unsigned int what)
{
	return siw_qp_caps_of[state].may & what;
}

bool siw_qp_can(struct siw_qp *qp, unsigned int what)
{
	const struct siw_qp_caps *caps = &siw_qp_caps_of[READ_ONCE(qp->state)];

	if (caps->may & what)
		return true;
	return (caps->may_qpc & what) && siw_qpc_armed(qp);
}

#define SIW_QPS(s) BIT(IB_QPS_##s)

/* Where the verbs may move a QP from each state (RTS: see above). */
static const u8 siw_qp_verbs_moves[IB_QPS_ERR + 1] = {
	[IB_QPS_RESET] = SIW_QPS(RESET) | SIW_QPS(INIT) | SIW_QPS(ERR),
	[IB_QPS_INIT] = SIW_QPS(RESET) | SIW_QPS(INIT) | SIW_QPS(RTR) |
			SIW_QPS(RTS) | SIW_QPS(ERR),
	[IB_QPS_RTR] = SIW_QPS(RESET) | SIW_QPS(RTR) | SIW_QPS(RTS) |
		       SIW_QPS(ERR),
	[IB_QPS_RTS] = SIW_QPS(RESET) | SIW_QPS(RTS) | SIW_QPS(SQD) |
		       SIW_QPS(ERR),
	[IB_QPS_SQD] = SIW_QPS(RESET) | SIW_QPS(SQD) | SIW_QPS(ERR),
	[IB_QPS_SQE] = SIW_QPS(RESET) | SIW_QPS(ERR),
	[IB_QPS_ERR] = SIW_QPS(RESET) | SIW_QPS(ERR),
};

/* Attributes siw keeps. */
#define SIW_QP_ATTRS_USED	(IB_QP_STATE | IB_QP_CUR_STATE | \
				 IB_QP_ACCESS_FLAGS | IB_QP_PKEY_INDEX | \
				 IB_QP_PORT | IB_QP_MAX_QP_RD_ATOMIC | \
				 IB_QP_MAX_DEST_RD_ATOMIC)
/*
 * Attributes of IB transports, meaningless over TCP. They are accepted
 * and ignored, so that consumers written for IB get as far as RTS.
 */
#define SIW_QP_ATTRS_IB_ONLY	(IB_QP_AV | IB_QP_PATH_MTU | IB_QP_TIMEOUT | \
				 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | \
				 IB_QP_RQ_PSN | IB_QP_SQ_PSN | \
				 IB_QP_MIN_RNR_TIMER | IB_QP_DEST_QPN | \
				 IB_QP_QKEY | IB_QP_ALT_PATH | \
				 IB_QP_PATH_MIG_STATE | \
				 IB_QP_EN_SQD_ASYNC_NOTIFY)

#define SIW_QP_ACCESS		(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_MW_BIND)

void siw_qp_async_event(struct siw_qp *qp, enum ib_event_type type)
{
	struct ib_event event = {
		.device = qp->base.device,
		.element.qp = &qp->base,
		.event = type,
	};

	if (qp->base.event_handler)
		qp->base.event_handler(&event, qp->base.qp_context);
}

/*
 * The QP left RTS or SQD, or went to ERROR or RESET with an endpoint: the
 * connection manager closes the connection, gracefully when @graceful,
 * else by abort unless a graceful close was asked first (siw_cm_close()).
 */
static void siw_qp_drop_connection(struct siw_qp *qp, bool graceful)
{
	siw_qp_dbg(qp, "connection %s\n",
		   graceful ? "closing" : "aborted, unless closing already");
	siw_cm_close(qp, graceful);
}

/*
 * Does the move from @old to @next end the QP's connection? Leaving RTS
 * or SQD does (the state table). So does any move to ERROR or RESET while
 * the QP has an endpoint: in TERMINATE, whose Terminate may wait behind a
 * full socket for as long as the peer reads nothing, and in RTR when
 * connected without rdma_cm, the connection is up, and the engine keeps
 * its WRs, and the rings their flush, until the close detaches it
 * (siw_qp_flush()). An endpoint still being set up is ended too: in
 * ERROR its QP could not take it, and a dial without rdma_cm would
 * otherwise attach the engine to a QP its consumer reset.
 */
static bool siw_qp_move_drops(struct siw_qp *qp, enum ib_qp_state old,
			      enum ib_qp_state next)
{
	if (next == old)
		return false;
	if (siw_qp_state_can(old, SIW_QP_HOLDS_CONNECTION))
		return true;
	return (next == IB_QPS_ERR || next == IB_QPS_RESET) &&
	       READ_ONCE(qp->cep);
}

/* The one writer of a QP's state after creation. */
static void siw_qp_set_state(struct siw_qp *qp, enum ib_qp_state to)
{
	lockdep_assert_held(&qp->state_lock);
	trace_siw_qp_state(qp, qp->state, to);
	WRITE_ONCE(qp->state, to);
}

/* Move to ERROR; false if the QP was there already. */
static bool siw_qp_to_error(struct siw_qp *qp)
{
	enum ib_qp_state old;
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	old = qp->state;
	if (old != IB_QPS_ERR)
		siw_qp_set_state(qp, IB_QPS_ERR);
	spin_unlock_irqrestore(&qp->state_lock, flags);

	if (old == IB_QPS_ERR)
		return false;
	if (siw_qp_move_drops(qp, old, IB_QPS_ERR))
		siw_qp_drop_connection(qp, false);
	return true;
}

u32 siw_qp_drop_wrs(struct siw_qp *qp)
{
	u32 n = siw_wq_drop(&qp->sq);

	if (!qp->srq)
		n += siw_wq_drop(&qp->rq);
	return n;
}

void siw_qp_flush(struct siw_qp *qp)
{
	/*
	 * While connected, the engine holds older WRs than the rings: the
	 * CM flushes the rings after it detached the engine.
	 */
	if (siw_engine_attached(qp))
		return;
	siw_sq_flush(qp);
	siw_rq_flush(qp);
}

void siw_qp_fail(struct siw_qp *qp, enum ib_event_type event)
{
	if (!siw_qp_to_error(qp))
		return;
	siw_qp_dbg(qp, "failed, event %d\n", event);
	siw_qp_async_event(qp, event);
	siw_qp_flush(qp);
}

void siw_qp_stop(struct siw_qp *qp)
{
	siw_qp_to_error(qp);
	/* Also a connection still being set up. */
	siw_cm_close(qp, false);
}

/* Move from one of @from (SIW_QPS() bits) to @to; -EINVAL if not there. */
static int siw_qp_move(struct siw_qp *qp, u8 from, enum ib_qp_state to)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (BIT(qp->state) & from)
		siw_qp_set_state(qp, to);
	else
		err = -EINVAL;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return err;
}

int siw_qp_enter(struct siw_qp *qp, enum siw_qp_state to)
{
	int err;

	switch (to) {
	case SIW_QP_RTS:
		err = siw_qp_move(qp, SIW_QPS(INIT) | SIW_QPS(RTR), IB_QPS_RTS);
		/* A process may have posted SQEs while the QP was idle. */
		if (!err)
			siw_qp_sq_kick(qp);
		return err;
	case SIW_QP_CLOSING:
		return siw_qp_move(qp, SIW_QPS(RTS), IB_QPS_SQD);
	case SIW_QP_TERMINATE:
		return siw_qp_move(qp, SIW_QPS(RTS) | SIW_QPS(SQD), IB_QPS_SQE);
	case SIW_QP_ERROR:
		if (siw_qp_to_error(qp))
			siw_qp_flush(qp);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Values of the attributes in @mask, whatever the state. */
static int siw_qp_check_attrs(struct siw_qp *qp, const struct ib_qp_attr *attr,
			      int mask)
{
	if (mask & ~(SIW_QP_ATTRS_USED | SIW_QP_ATTRS_IB_ONLY)) {
		siw_qp_dbg(qp, "modify: unsupported attributes 0x%x\n",
			   mask & ~(SIW_QP_ATTRS_USED | SIW_QP_ATTRS_IB_ONLY));
		return -EOPNOTSUPP;
	}
	if ((mask & IB_QP_STATE) && attr->qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SIW_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SIW_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != SIW_PORT)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) && attr->max_rd_atomic > SIW_MAX_ORD)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SIW_MAX_IRD)
		return -EINVAL;
	return 0;
}

/*
 * Without rdma_cm (qp_connect.c): RTR with an address vector and a
 * destination QP names the peer and starts connecting; RTS may follow at
 * once, its WRs wait for the connection.
 */
static int siw_qp_connect_steps(struct siw_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	enum ib_qp_state cur = READ_ONCE(qp->state);
	unsigned long flags;

	if (!(mask & IB_QP_STATE) || READ_ONCE(qp->cep))
		return 0;
	if (attr->qp_state == IB_QPS_RTR &&
	    (mask & (IB_QP_AV | IB_QP_DEST_QPN)) ==
	    (IB_QP_AV | IB_QP_DEST_QPN) &&
	    (cur == IB_QPS_INIT || cur == IB_QPS_RTR)) {
		if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
			spin_lock_irqsave(&qp->state_lock, flags);
			qp->ird = attr->max_dest_rd_atomic;
			spin_unlock_irqrestore(&qp->state_lock, flags);
		}
		return siw_qpc_rtr(qp, attr);
	}
	if (attr->qp_state == IB_QPS_RESET)
		siw_qpc_disarm(qp);
	return 0;
}

/* May the verbs move the QP from @cur to @next with the attributes? */
static int siw_qp_check_move(struct siw_qp *qp, const struct ib_qp_attr *attr,
			     int mask, enum ib_qp_state cur,
			     enum ib_qp_state next)
{
	if ((mask & IB_QP_CUR_STATE) && attr->cur_qp_state != cur) {
		siw_qp_dbg(qp, "modify: QP is in state %d, not %d\n", cur,
			   attr->cur_qp_state);
		return -EINVAL;
	}
	if (!(siw_qp_verbs_moves[cur] & BIT(next))) {
		siw_qp_dbg(qp, "modify: no move from state %d to %d\n", cur,
			   next);
		return -EINVAL;
	}
	if (next == IB_QPS_RTS && cur != IB_QPS_RTS &&
	    !(cur == IB_QPS_RTR && siw_qpc_armed(qp))) {
		siw_qp_dbg(qp, "modify: RTS needs a connection: through rdma_cm, or an address vector and dest_qp_num at RTR\n");
		return -EINVAL;
	}
	/* MPA negotiates ORD and IRD with the peer; they are set before. */
	if ((mask & (IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MAX_DEST_RD_ATOMIC)) &&
	    !siw_qp_state_can(cur, SIW_QP_SETS_RD_ATOMIC)) {
		siw_qp_dbg(qp, "modify: ORD/IRD fixed once connected\n");
		return -EINVAL;
	}
	return 0;
}

static void siw_qp_set_attrs(struct siw_qp *qp, const struct ib_qp_attr *attr,
			     int mask)
{
	if (mask & IB_QP_ACCESS_FLAGS)
		WRITE_ONCE(qp->access, attr->qp_access_flags);
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->ord = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->ird = attr->max_dest_rd_atomic;
}

/*
 * On the passive side iw_cm grants the QP remote read and write when it is
 * accepted (its INIT attributes). On the active side rdma_cm asks for the
 * INIT attributes before an iw_cm id exists, gets no remote access, and a
 * process's QP keeps that: its peer could not read or write it, which no
 * consumer of rdma_cm on iWARP expects (rping's server reads the client's
 * buffer). So a QP that iw_cm connects with no access flags at all gets
 * what the passive side gets; flags a consumer set stay as they are, and
 * modify_qp may take them away again once connected.
 */
void siw_qp_connect_access(struct siw_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (!qp->access) {
		WRITE_ONCE(qp->access,
			   IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ);
		siw_qp_dbg(qp, "connecting through iw_cm: remote read and write granted\n");
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
}

/* RESET empties the rings without completions. */
static void siw_qp_discard(struct siw_qp *qp)
{
	u32 n = siw_qp_drop_wrs(qp);

	if (n)
		siw_qp_dbg(qp, "reset discarded %u WRs\n", n);
}

int siw_modify_qp(struct ib_qp *base, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct siw_qp *qp = to_siw_qp(base);
	enum ib_qp_state cur, next;
	unsigned long flags;
	int err;

	err = siw_qp_check_attrs(qp, attr, mask);
	if (err)
		return err;
	err = siw_qp_connect_steps(qp, attr, mask);
	if (err)
		return err;

	spin_lock_irqsave(&qp->state_lock, flags);
	cur = qp->state;
	next = mask & IB_QP_STATE ? attr->qp_state : cur;
	/*
	 * librdmacm's rdma_disconnect() moves an iWARP QP to SQD itself,
	 * also when the peer closed first and the QP is in ERR (or SQE):
	 * the connection is gone already, which is what was asked.
	 */
	if (next == IB_QPS_SQD && (cur == IB_QPS_ERR || cur == IB_QPS_SQE))
		next = cur;
	err = siw_qp_check_move(qp, attr, mask, cur, next);
	if (!err) {
		siw_qp_set_attrs(qp, attr, mask);
		if (next != cur)
			siw_qp_set_state(qp, next);
		/* Back in RESET the QP has no connection to show (restrack). */
		if (next == IB_QPS_RESET)
			memset(&qp->link, 0, sizeof(qp->link));
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (err)
		return err;

	if (mask & SIW_QP_ATTRS_IB_ONLY)
		siw_qp_dbg(qp, "modify: ignored IB attributes 0x%x\n",
			   mask & SIW_QP_ATTRS_IB_ONLY);
	if (siw_qp_move_drops(qp, cur, next))
		siw_qp_drop_connection(qp, next == IB_QPS_SQD);
	/* Connecting without rdma_cm starts once the QP is in RTR. */
	if (next == IB_QPS_RTR && cur != IB_QPS_RTR)
		siw_qpc_start(qp);
	/* Connected without rdma_cm: send what waited for RTS. */
	if (cur == IB_QPS_RTR && next == IB_QPS_RTS)
		siw_qp_sq_kick(qp);
	/* Every move to ERR, also from ERR, is a flush pass. */
	if (next == IB_QPS_ERR)
		siw_qp_flush(qp);
	else if (next == IB_QPS_RESET && cur != IB_QPS_RESET)
		siw_qp_discard(qp);
	return 0;
}

int siw_query_qp(struct ib_qp *base, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct siw_qp *qp = to_siw_qp(base);
	unsigned int mtu = READ_ONCE(qp->sdev->mtu);
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	spin_lock_irqsave(&qp->state_lock, flags);
	attr->qp_state = qp->state;
	attr->qp_access_flags = qp->access;
	attr->max_rd_atomic = qp->ord;
	attr->max_dest_rd_atomic = qp->ird;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cur_qp_state = attr->qp_state;
	attr->path_mtu = ib_mtu_int_to_enum(min_t(unsigned int, mtu, INT_MAX));
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->port_num = SIW_PORT;
	siw_qp_caps(qp, &attr->cap);

	init->qp_type = IB_QPT_RC;
	init->event_handler = base->event_handler;
	init->qp_context = base->qp_context;
	init->send_cq = base->send_cq;
	init->recv_cq = base->recv_cq;
	init->srq = base->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->port_num = SIW_PORT;
	return 0;
}
