/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The protocol engine of a connected QP: DDP/RDMAP over one TCP socket.
 *
 * The connection manager (cm.c) hands the engine a connected socket once
 * MPA negotiation is done (siw_engine_attach()) and takes it back when
 * the connection ends (siw_engine_detach()). In between:
 *
 *	verbs -> SQ -> tx.c -> socket		(process context only)
 *	socket -> rx.c -> placement -> CQ	(socket upcall, softirq)
 *
 * TX runs in the posting context when that may sleep and nobody else is
 * transmitting, else in a work item; the work item resumes when the
 * socket has room again (sk_write_space). RX runs from sk_data_ready
 * under the socket lock; what it cannot do there (answer an RDMA Read,
 * send a Terminate) it queues for TX.
 *
 * The engine keeps the WRs it took out of the rings: the SQE being sent,
 * sent SQEs whose completion waits for an older RDMA Read (completions
 * leave the SQ in order), and the receive WR a Send is placed into. On
 * detach it flushes them, before the rings are flushed.
 */
#ifndef SIW_ENGINE_H
#define SIW_ENGINE_H

#include <linux/bitmap.h>
#include <linux/lockdep.h>
#include <linux/mutex.h>
#include <linux/net.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <rdma/siw-abi.h>

#include "proto/fpdu.h"
#include "proto/marker.h"
#include "proto/rx.h"
#include "queue.h"

struct siw_mem;
struct siw_qp;

/*
 * Page pieces of the largest FPDU payload: its pages, plus a partial page
 * at both ends of each SGE.
 */
#define SIW_TX_MAX_PIECES	(SIW_MPA_MAX_ULPDU / PAGE_SIZE + 1 + \
				 2 * SIW_MAX_SGE)
#define SIW_IRQ_SIZE		32	/* at least SIW_MAX_IRD */
/* header, pieces, trailer */
#define SIW_TX_MAX_KVEC		(SIW_TX_MAX_PIECES + 2)

/* An RDMA Read Request of the peer, to be answered (the IRQ). */
struct siw_rresp {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 src_stag;
	u64 src_to;
};

/* A sent SQE waiting for its completion: an RDMA Read, or a WR after one. */
struct siw_sent {
	struct siw_sqe sqe;
	u32 bytes;
	enum siw_wc_status status;
	bool done;
};

/* What TX is sending. */
enum siw_tx_kind {
	SIW_TX_IDLE,
	SIW_TX_SQE,		/* a WR from the SQ */
	SIW_TX_RRESP,		/* an RDMA Read Response */
	SIW_TX_TERM,		/* a Terminate */
	SIW_TX_RTR,		/* the MPA peer-to-peer ready-to-receive */
};

/*
 * How TX sizes its FPDUs (tx.c: siw_tx_mulpdu()). RFC 5044 asks for one
 * FPDU per TCP segment, and hardware RNICs take no more; larger ones go
 * only to a peer that said it takes them, or as the fpdu_max parameter
 * sets.
 */
enum siw_fpdu_size {
	SIW_FPDU_SEGMENT,	/* one TCP segment (the current EMSS) */
	SIW_FPDU_LARGE,		/* one GSO send: both sides offered it */
	SIW_FPDU_FIXED,		/* fpdu_max octets, to any peer */
};

/* tx.flags */
enum {
	SIW_TX_PENDING,		/* there may be something to send */
	SIW_TX_HOLD,		/* responder waits for the peer's RTR */
	SIW_TX_RTR_READ,	/* initiator: our Read RTR is unanswered */
};

struct siw_tx {
	struct mutex mutex;		/* one transmitter */
	struct work_struct work;
	struct delayed_work recheck;	/* see siw_tx_recheck() */
	bool sqe_taken;			/* this run took an SQE */
	unsigned long flags;
	struct socket *sock;		/* NULL while detached */
	bool crc;
	u8 rtr;				/* initiator: RTR to send first */
	enum siw_fpdu_size fpdu_size;
	u32 mulpdu;			/* LARGE, FIXED: the ULPDU bound */
	bool markers;			/* MPA markers in what we send */
	struct siw_mark_tx mark;	/* their positions, under mutex */
	u8 *mark_buf;			/* the FPDU with them, see siw_tx_mark() */

	/* Message in progress; under mutex. */
	enum siw_tx_kind kind;
	struct siw_sqe sqe;
	struct siw_rresp rresp;
	struct siw_iwarp_hdr hdr;	/* opcode, addressing of the message */
	u32 len;			/* message length */
	u32 done;			/* octets of it framed so far */
	u32 sge;			/* source position: SGE index ... */
	u32 sge_off;			/* ... and offset in it */
	u32 msn[SIW_QN_COUNT];		/* last MSN sent, per queue */

	/* FPDU in progress: kvecs over hdr, source memory and trl. */
	struct kvec kvec[SIW_TX_MAX_KVEC];
	u32 nr_kvec;
	/* kvecs TCP may take by page reference (see siw_tx_push_zcopy()) */
	DECLARE_BITMAP(zcopy, SIW_TX_MAX_KVEC);
	u32 fpdu_len;
	u32 fpdu_sent;
	bool fpdu_last;			/* last FPDU of the message */
	/* kvecs whose page the FPDU holds a reference to (kernel memory) */
	DECLARE_BITMAP(pinned, SIW_TX_MAX_KVEC);
	struct siw_mem *mem[SIW_MAX_SGE];	/* held for the kvecs */
	u32 nr_mem;
	u8 hdr_buf[SIW_FPDU_MAX_HDR];
	u8 trl_buf[SIW_FPDU_MAX_TRAILER];
	u8 *copy_buf;			/* see siw_tx_copy_payload() */
	int sock_err;			/* why the socket failed */

	/* Terminate to send; under term_lock (RX sets it). */
	spinlock_t term_lock;
	bool term_pending;
	bool term_sent;			/* nothing else goes out after it */
	struct siw_term_code term;
	u16 term_hdrct;
	u8 term_opt[SIW_TERM_MAX_OPT];
	u32 term_opt_len;

	/*
	 * Sent WRs completing in order (see above): struct siw_sent slots,
	 * as many as the SQ has; reads_out under sent.lock too.
	 */
	struct siw_ring sent;
	u32 reads_out;			/* RDMA Reads waiting for data */
	bool gated;			/* an SQE waits for them, under sent.lock */
	u32 ord;			/* negotiated outbound Reads */

	/*
	 * Peer's Read Requests to answer: SIW_IRQ_SIZE struct siw_rresp
	 * slots; irq_busy under irq.lock too.
	 */
	struct siw_ring irq;
	bool irq_busy;			/* one popped is being answered */
	u32 ird;			/* negotiated inbound Reads */
};

/*
 * May the peer have one more Read outstanding? The one being answered
 * counts until its response's last FPDU is framed: the peer counts it
 * until that FPDU arrives. Under irq.lock.
 */
static inline bool siw_irq_room(const struct siw_tx *tx)
{
	lockdep_assert_held(&tx->irq.lock);
	return siw_ring_used(&tx->irq) + tx->irq_busy < tx->ird;
}

/* What RX places the payload of the current segment into. */
struct siw_rx_range {
	struct siw_mem *mem;		/* referenced */
	u32 stag;			/* it was looked up by */
	int access;			/* IB_ACCESS_* placement needs */
	u64 addr;
	u32 len;
};

struct siw_rxs {
	struct siw_rx parser;
	bool attached;
	bool dead;			/* error seen: ignore the rest */
	bool crc;
	u32 msn[SIW_QN_COUNT];		/* last MSN received, per queue */

	/* Untagged: the receive WR of the Send in progress. */
	bool have_rqe;
	struct siw_rqe rqe;
	u32 rqe_len;

	/* Placement targets of the current segment. */
	struct siw_rx_range range[SIW_MAX_SGE];
	u32 nr_range;
	u32 cur;			/* range being filled */
	u32 cur_off;			/* octets of it filled */
};

struct siw_engine_params {
	struct socket *sock;
	bool crc;
	u16 ird;
	u16 ord;
	u8 rtr_send;			/* initiator: SIW_MPA_RTR_* to send */
	bool rtr_wait;			/* responder: hold TX until RTR */
	bool large;			/* both offered FPDUs above a segment */
	bool markers_tx;		/* the peer wants MPA markers */
	bool markers_rx;		/* we asked for them */
};

/* Per QP life (qp.c): allocate and free what the engine needs. */
int siw_engine_init(struct siw_qp *qp);
void siw_engine_free(struct siw_qp *qp);

/* The CM's side, process context. */
int siw_engine_attach(struct siw_qp *qp, const struct siw_engine_params *p);
void siw_engine_detach(struct siw_qp *qp);
bool siw_engine_attached(struct siw_qp *qp);

/* tx.c */
void siw_tx_kick(struct siw_qp *qp);
void siw_tx_schedule(struct siw_qp *qp);
void siw_sq_recheck_later(struct siw_qp *qp);
void siw_tx_write_space(struct siw_qp *qp, struct sock *sk);
bool siw_tx_offers_large(void);
void siw_tx_terminate(struct siw_qp *qp, const struct siw_term_code *tc,
		      u16 hdrct, const u8 *opt, u32 opt_len);
bool siw_tx_push_rresp(struct siw_qp *qp, const struct siw_rresp *rr,
		       bool rtr);
bool siw_tx_read_sink(struct siw_qp *qp, struct siw_sqe *sqe);
void siw_tx_read_done(struct siw_qp *qp, enum siw_wc_status status);
int siw_tx_module_init(void);
void siw_tx_module_exit(void);

/* rx.c: siw_rx_read_sock() runs under the socket lock. */
void siw_rx_read_sock(struct siw_qp *qp, struct sock *sk);
void siw_rx_reset(struct siw_qp *qp, bool crc, bool markers);
void siw_rx_flush(struct siw_qp *qp);

#endif /* SIW_ENGINE_H */
