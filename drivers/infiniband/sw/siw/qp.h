/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs: RC only. A QP owns a send queue ring and, unless it uses an
 * SRQ, a receive queue ring (queue.h). This header is also the interface
 * of the protocol engine and the connection manager to a QP: its state,
 * the next work requests to process, and their completions.
 */

#ifndef SIW_QP_H
#define SIW_QP_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/uidgid.h>
#include <linux/refcount.h>
#include <linux/socket.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/siw-abi.h>

#include "engine.h"
#include "qp_connect.h"
#include "queue.h"

struct siw_cep;
struct siw_cq;
struct siw_device;
struct siw_srq;

/*
 * iWARP QP states (RFC 5040, RDMAC verbs). The verbs see IB states; the
 * map between the two is fixed:
 *
 *	IB RESET, INIT, RTR	IDLE	  not connected
 *	IB RTS			RTS	  connected; reached only through the CM
 *	IB SQD			CLOSING	  graceful close in progress
 *	IB SQE			TERMINATE a Terminate was sent or received
 *	IB ERR			ERROR	  all work flushed
 *
 * A new QP is IDLE and reports INIT, as iWARP RNICs do (an iWARP QP has no
 * RESET distinct from IDLE; rdma-core's tests expect INIT from RNICs).
 */
enum siw_qp_state {
	SIW_QP_IDLE,
	SIW_QP_RTS,
	SIW_QP_CLOSING,
	SIW_QP_TERMINATE,
	SIW_QP_ERROR,
};

/*
 * What the connection's MPA exchange settled (RFC 5044, 6581), kept for
 * "rdma res show qp -dd" (restrack.c). The CM writes it when the QP goes
 * live, under state_lock; IRD and ORD are the QP's own fields.
 */
struct siw_qp_link {
	struct sockaddr_storage local_addr;
	u8 mpa_rev;
	bool crc;
	bool markers_tx;	/* we send MPA markers */
	bool markers_rx;	/* the peer sends them */
	u8 rtr;			/* peer-to-peer: the SIW_MPA_RTR_* used, or 0 */
};

/*
 * A QP's traffic since it was created: DDP segments and their payload
 * octets (what the consumers moved; headers, markers, pad and CRC are
 * not counted), each way. TX counts an FPDU when it frames it, RX a
 * segment once it is placed, before its completion: a consumer that saw
 * a completion sees it counted. Any context reads them.
 */
struct siw_qp_traffic {
	atomic64_t tx_fpdus;
	atomic64_t tx_bytes;
	atomic64_t rx_fpdus;
	atomic64_t rx_bytes;
};

struct siw_qp {
	struct ib_qp base;		/* must stay first */
	struct siw_device *sdev;

	/*
	 * References: one for the verbs (dropped by destroy_qp), one per
	 * user elsewhere (CM, engine) taken with siw_qp_get(). destroy_qp
	 * waits for the last one before the core frees the QP.
	 */
	refcount_t ref;
	struct completion released;
	atomic_t iw_handoff;		/* see siw_cm_get_qp() */

	/*
	 * state_lock guards state changes and the attributes below it.
	 * Readers elsewhere may READ_ONCE(state): the rings' locks order a
	 * move to ERROR before the flush that follows it.
	 */
	spinlock_t state_lock;
	enum ib_qp_state state;		/* the one record of the state */
	int access;			/* IB_ACCESS_* granted to the peer */
	u8 ord;				/* max_rd_atomic: our READs in flight */
	u8 ird;				/* max_dest_rd_atomic: peer's READs */

	/* Fixed at creation. */
	bool user;			/* rings shared with a process */
	struct pid *owner;		/* process QP: its creator's tgid */
	bool sq_sig_all;		/* every SQE completes */
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	struct siw_cq *scq;
	struct siw_cq *rcq;
	struct siw_srq *srq;		/* or NULL: then rq is used */

	struct siw_ring sq;
	struct siw_ring rq;		/* num 0 with an SRQ */

	/* The connection, if any: the CM sets it under state_lock. */
	struct siw_cep *cep;
	struct sockaddr_storage peer_addr;	/* for log lines */
	struct siw_qp_link link;		/* under state_lock too */
	struct siw_qp_traffic traffic;
	struct siw_qpc qpc;		/* connecting without rdma_cm */
	struct siw_tx tx;		/* engine: transmit (tx.c) */
	struct siw_rxs rx;		/* engine: receive (rx.c) */
};

static inline struct siw_qp *to_siw_qp(struct ib_qp *base)
{
	return container_of(base, struct siw_qp, base);
}

static inline u32 siw_qp_num(const struct siw_qp *qp)
{
	return qp->base.qp_num;
}

/* What the QP offers: at least what its creator asked for. */
static inline void siw_qp_caps(const struct siw_qp *qp, struct ib_qp_cap *cap)
{
	cap->max_send_wr = qp->sq.num;
	cap->max_recv_wr = qp->rq.num;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;
	cap->max_inline_data = qp->max_inline;
}

/* QP log helpers: the device and the QP number on every line. */
#define siw_qp_err(qp, fmt, ...) do {					\
	const struct siw_qp *__qp = (qp);				\
									\
	siw_err(__qp->sdev, "QP %u: " fmt, siw_qp_num(__qp),		\
		##__VA_ARGS__);						\
} while (0)
/* For what a peer or a process can make happen many times a second. */
#define siw_qp_err_rl(qp, fmt, ...) do {				\
	const struct siw_qp *__qp = (qp);				\
									\
	siw_err_rl(__qp->sdev, "QP %u: " fmt, siw_qp_num(__qp),	\
		   ##__VA_ARGS__);					\
} while (0)
#define siw_qp_dbg(qp, fmt, ...) do {					\
	const struct siw_qp *__qp = (qp);				\
									\
	siw_dbg(__qp->sdev, "QP %u: " fmt, siw_qp_num(__qp),		\
		##__VA_ARGS__);						\
} while (0)

/*
 * Connection log lines also name the peer. A peer can make them happen
 * once per connection, as often as it connects: rate limited.
 */
#define siw_conn_err(qp, fmt, ...) do {					\
	const struct siw_qp *__cqp = (qp);				\
									\
	siw_qp_err_rl(__cqp, "peer %pISpc: " fmt, &__cqp->peer_addr,	\
		      ##__VA_ARGS__);					\
} while (0)

/*
 * References (qp.c). siw_qp_get_by_num() returns a referenced QP or NULL;
 * any context.
 */
void siw_qp_get(struct siw_qp *qp);
void siw_qp_put(struct siw_qp *qp);
struct siw_qp *siw_qp_get_by_num(struct siw_device *sdev, u32 qpn);
/*
 * The same for the CM, which binds a QP named by number to a connection:
 * NULL also when the calling task may not use that QP (a process may bind
 * the QPs of its own user only, see qp.c). Any context.
 */
struct siw_qp *siw_qp_get_for_cm(struct siw_device *sdev, u32 qpn);

/*
 * What a QP may do in its state. One table (qp_state.c) answers every
 * caller through siw_qp_can(); a QP connected without rdma_cm
 * (qp_connect.c) may do more in RTR, where it can stay: iWARP knows no
 * RTR. Any context; the answer holds for the state read, so a caller
 * that must not race a move holds the QP's state_lock.
 */
enum siw_qp_may {
	SIW_QP_TAKES_SQ		= BIT(0),  /* post_send takes WRs */
	SIW_QP_TAKES_RQ		= BIT(1),  /* post_recv takes WRs */
	SIW_QP_SENDS		= BIT(2),  /* the SQ's WRs go to the wire */
	SIW_QP_ANSWERS_READS	= BIT(3),  /* Read Responses go out */
	SIW_QP_FLUSHES		= BIT(4),  /* WRs complete as flushed */
	SIW_QP_TAKES_CONNECTION	= BIT(5),  /* the CM may accept it */
	SIW_QP_TAKES_CEP	= BIT(6),  /* it may get a CM endpoint */
	SIW_QP_SETS_RD_ATOMIC	= BIT(7),  /* ORD and IRD may change */
	SIW_QP_HOLDS_CONNECTION	= BIT(8),  /* leaving the state closes it */
	SIW_QP_QPC_CONNECTS	= BIT(9),  /* qp_connect.c keeps trying */
};

bool siw_qp_can(struct siw_qp *qp, unsigned int what);

/*
 * Moves the CM and the engine make (the verbs use modify_qp):
 * IDLE (INIT or RTR) -> RTS when the connection is up (this is
 * siw_qp_connected(); it also kicks the SQ), RTS -> CLOSING, RTS or
 * CLOSING -> TERMINATE, and anything -> ERROR with a flush but no event
 * (siw_qp_fail() sends one). Returns 0, or -EINVAL for any other move.
 */
int siw_qp_enter(struct siw_qp *qp, enum siw_qp_state to);

static inline int siw_qp_connected(struct siw_qp *qp)
{
	return siw_qp_enter(qp, SIW_QP_RTS);
}

/*
 * Move to ERROR and flush. The move (not a repeat) dispatches @event to
 * the consumer, e.g. IB_EVENT_QP_FATAL.
 */
void siw_qp_fail(struct siw_qp *qp, enum ib_event_type event);

/* Dispatch an asynchronous event of the QP to its consumer. */
void siw_qp_async_event(struct siw_qp *qp, enum ib_event_type type);

/*
 * Flush what the rings hold now; the QP is in ERROR. Every SQE and RQE
 * completes with WR_FLUSH_ERR, unsignalled ones too (a WR that ends in
 * error always completes), in ring order. SRQ entries are not the QP's
 * and stay. WRs the engine took out of the rings are the engine's to
 * flush, before it drops its QP reference.
 *
 * Flush passes run on entering ERROR, on every SQ doorbell and every
 * kernel post in ERROR, and on modify to ERR again. libsiw posts receive
 * WRs without a system call, so RQEs a process posts in ERROR complete
 * at the next pass: its next doorbell, modify to ERR, or destroy_qp.
 */
void siw_qp_flush(struct siw_qp *qp);
void siw_sq_flush(struct siw_qp *qp);
void siw_rq_flush(struct siw_qp *qp);

/*
 * Empty the rings without completions (RESET, and destroy of a kernel
 * QP); a ring a flush owns is left to it. Returns how many WRs went.
 */
u32 siw_qp_drop_wrs(struct siw_qp *qp);

/*
 * The SQ doorbell, rung by a zero-WR post_send (libsiw) and by kernel
 * post_send: in RTS it starts the engine on the SQ, in ERROR it flushes,
 * otherwise the SQEs wait for RTS.
 */
void siw_qp_sq_kick(struct siw_qp *qp);

/*
 * The engine's side of the SQ (sq.c).
 *
 * What the engine can take now: a WR needs a slot to wait for its
 * completion in (@full: none free), a fenced WR waits for older Reads,
 * and a Read for a free ORD slot.
 */
struct siw_sq_gate {
	bool full;
	u32 reads_out;		/* our RDMA Reads waiting for data */
	u32 ord;		/* Reads allowed out; 0: none may be sent */
	u64 max_len;		/* take less payload than this only */
};

/*
 * Take the oldest SQE if @gate lets it go: the decision is made on the
 * same copy that is returned, under the SQ lock, so a process rewriting
 * its ring cannot have one copy judged and another one executed. Returns
 * 0 (the caller owns *@sqe, and must complete it with siw_sqe_complete,
 * or flush it if the QP fails), -ENOENT (none), -EAGAIN (the oldest
 * must wait for the gate), -EMSGSIZE (it carries @gate->max_len octets
 * or more: it stays for a transmitter that takes it), or -EINVAL (a
 * malformed SQE was completed with an error and the QP failed).
 */
int siw_sq_get(struct siw_qp *qp, struct siw_sqe *sqe,
	       const struct siw_sq_gate *gate);

/*
 * Check a copied SQE: SIW_WC_SUCCESS, or the status it completes with.
 * @user: taken from a process's ring, which may not use kernel-only
 * opcodes. An inline SQE's num_sge becomes 1 (its data, sge[0].length
 * bytes, is at &sqe->sge[1]).
 */
enum siw_wc_status siw_sqe_check(struct siw_sqe *sqe, bool user);

/*
 * Length of a checked SQE's SGEs (its inline data): what a Send or Write
 * carries, or what a Read asks for. siw_sqe_check() bounds it.
 */
u32 siw_sqe_len(const struct siw_sqe *sqe);

/*
 * Take the next receive WR, from the SRQ if the QP has one (where the SRQ
 * limit event fires). Returns 0 (the caller owns *@rqe and completes it
 * with siw_rqe_complete), -ENOENT (none posted), or -EINVAL (a malformed
 * RQE was completed with an error and the QP failed).
 */
int siw_rq_get(struct siw_qp *qp, struct siw_rqe *rqe);

/*
 * Completions (wc.c). An SQE completes if it is signalled or @status is
 * an error; an RQE always completes. @flags of an RQE completion:
 * SIW_WQE_REM_INVAL (the SEND invalidated @inval_stag) and
 * SIW_WQE_SOLICITED (the SEND asked for a solicited event). If the CQ is
 * full the QP fails. Return 0 or -ENOSPC.
 */
int siw_sqe_complete(struct siw_qp *qp, const struct siw_sqe *sqe,
		     u32 bytes, enum siw_wc_status status);
int siw_rqe_complete(struct siw_qp *qp, const struct siw_rqe *rqe,
		     u32 bytes, enum siw_wc_status status, u16 flags,
		     u32 inval_stag);

/* Verbs of the other QP files, collected in siw_qp_ops (qp.c). */
int siw_modify_qp(struct ib_qp *base, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int siw_query_qp(struct ib_qp *base, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int siw_post_send(struct ib_qp *base, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int siw_post_recv(struct ib_qp *base, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);

/* iw_cm connects the QP (qp_state.c): see there for its access flags. */
void siw_qp_connect_access(struct siw_qp *qp);

/*
 * For destroy_qp (qp_state.c): move to ERROR without an event and without
 * flushing, closing any connection.
 */
void siw_qp_stop(struct siw_qp *qp);

#endif /* SIW_QP_H */
