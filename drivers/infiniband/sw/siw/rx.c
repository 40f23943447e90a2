// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive: parse the byte stream into DDP segments and place their payload.
 *
 * Runs from the socket's sk_data_ready upcall (softirq, or the process
 * releasing the socket lock) through tcp_read_sock(), always under the
 * socket lock, which serialises it. The sans-IO parser (proto/rx.c) owns
 * the control octets; this file decides where each segment's payload
 * goes, copies it from the skb straight into the target pages and folds
 * each copied piece into the CRC while it is still in the cache.
 *
 * Anything wrong with a segment - a bad header, STag, bounds, MSN, no
 * receive WR, a CRC error - ends the stream: the QP enters TERMINATE, TX
 * sends a Terminate naming the error, and the CM closes the connection.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/highmem.h>
#include <linux/skbuff.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "cm.h"
#include "engine.h"
#include "mem.h"
#include "qp.h"
#include "siw.h"
#include "trace.h"
#include "proto/crc32c.h"
#include "proto/term.h"

/* Payload octets placed per walk over the memory (its lock held). */
#define SIW_RX_PLACE_MAX	(2 * PAGE_SIZE)

static const char * const siw_term_layer_str[] = {
	[SIW_TERM_LAYER_RDMAP] = "RDMAP",
	[SIW_TERM_LAYER_DDP] = "DDP",
	[SIW_TERM_LAYER_LLP] = "MPA",
};

static const char *siw_term_layer(const struct siw_term_code *tc)
{
	return tc->layer < ARRAY_SIZE(siw_term_layer_str) &&
	       siw_term_layer_str[tc->layer] ?
	       siw_term_layer_str[tc->layer] : "?";
}

static void siw_rx_put_ranges(struct siw_rxs *rx)
{
	while (rx->nr_range)
		siw_mem_put(rx->range[--rx->nr_range].mem);
	rx->cur = 0;
	rx->cur_off = 0;
}

/* A segment this QP cannot take: fail the stream with @tc. */
static __printf(3, 4) int siw_rx_refuse(struct siw_qp *qp,
					struct siw_term_code tc,
					const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	siw_conn_err(qp, "%pV; terminating (%s %u/%u/0x%02x)\n", &vaf,
		     siw_term_layer(&tc), tc.layer, tc.etype, tc.ecode);
	va_end(args);
	siw_stat_inc(qp->sdev, SIW_STAT_RX_PLACE_ERRORS);
	siw_rx_fail(&qp->rx.parser, &tc);
	return -EINVAL;
}

/*
 * The memory a segment goes into failed its check (@err), at the start of
 * the segment or in the middle of it (invalidated, deregistered or
 * registered again meanwhile). An RDMA Write named the peer's STag of
 * ours: a tagged-placement error. A Read Response or a Send goes into our
 * own WR's memory: the WR completes in error, and the peer hears of a
 * catastrophic error of ours.
 */
static int siw_rx_mem_refused(struct siw_qp *qp, const struct siw_iwarp_hdr *h,
			      siw_mem_err_t err)
{
	struct siw_rxs *rx = &qp->rx;
	struct siw_term_code tc;

	switch (h->opcode) {
	case SIW_RDMAP_WRITE:
		siw_mem_term_code(err, true, &tc);
		return siw_rx_refuse(qp, tc, "RDMA Write to STag 0x%08x refused: %s",
				     h->stag, siw_mem_err_str(err));
	case SIW_RDMAP_READ_RESP:
		siw_tx_read_done(qp, siw_mem_wc_status(err));
		return siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_CATASTROPHIC,
						  RDMAP_INVALID_STAG),
				     "local buffer (STag 0x%08x) of an RDMA Read: %s",
				     h->stag, siw_mem_err_str(err));
	default:
		if (rx->have_rqe)
			siw_rqe_complete(qp, &rx->rqe, 0, siw_mem_wc_status(err),
					 0, 0);
		rx->have_rqe = false;
		return siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_CATASTROPHIC,
						  RDMAP_INVALID_STAG),
				     "memory of the receive WR: %s",
				     siw_mem_err_str(err));
	}
}

static void siw_rx_add_range(struct siw_rxs *rx, struct siw_mem *mem,
			     u32 stag, int access, u64 addr, u32 len)
{
	struct siw_rx_range *r = &rx->range[rx->nr_range++];

	r->mem = mem;
	r->stag = stag;
	r->access = access;
	r->addr = addr;
	r->len = len;
}

/* Look up @stag for @access to [addr, addr + len): a reference, or why not. */
static siw_mem_err_t siw_rx_get_mem(struct siw_qp *qp, u32 stag, int access,
				    u64 addr, u32 len, struct siw_mem **memp)
{
	struct siw_mem *mem = siw_mem_get(qp->sdev, stag);
	siw_mem_err_t err;

	if (!mem)
		return SIW_MEM_ERR_STAG;
	err = siw_mem_check(mem, qp->base.pd, access, addr, len);
	if (err != SIW_MEM_OK) {
		siw_mem_put(mem);
		return err;
	}
	*memp = mem;
	return SIW_MEM_OK;
}

/* RDMA Write: the peer names our memory. */
static int siw_rx_begin_write(struct siw_qp *qp, const struct siw_iwarp_hdr *h)
{
	struct siw_mem *mem;
	siw_mem_err_t err;

	/* A zero length Write (e.g. an RTR) touches nothing. */
	if (!h->payload_len)
		return 0;
	if (!(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_WRITE))
		return siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
						  RDMAP_ACCESS),
				     "RDMA Write to STag 0x%08x refused: the QP does not allow remote writes",
				     h->stag);
	err = siw_rx_get_mem(qp, h->stag, IB_ACCESS_REMOTE_WRITE, h->to,
			     h->payload_len, &mem);
	if (err != SIW_MEM_OK)
		return siw_rx_mem_refused(qp, h, err);
	siw_rx_add_range(&qp->rx, mem, h->stag, IB_ACCESS_REMOTE_WRITE, h->to,
			 h->payload_len);
	return 0;
}

/* RDMA Read Response: data for our oldest outstanding Read. */
static int siw_rx_begin_rresp(struct siw_qp *qp, const struct siw_iwarp_hdr *h)
{
	struct siw_mem *mem;
	struct siw_sqe sqe;
	struct siw_sge *sink;
	siw_mem_err_t err;

	if (test_bit(SIW_TX_RTR_READ, &qp->tx.flags)) {
		/* Responses come in order: this one answers our Read RTR. */
		if (!h->payload_len)
			return 0;
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_TAGGED,
						  DDP_T_BASE_BOUNDS),
				     "RDMA Read Response to the zero length Read RTR carries data");
	}
	if (!siw_tx_read_sink(qp, &sqe))
		return siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
						  RDMAP_OPCODE),
				     "RDMA Read Response without a Read");
	if (!h->payload_len)
		return 0;
	sink = &sqe.sge[0];
	/* Exact for any TO: for STag 0 this is the only bound. */
	if (!sqe.num_sge || h->stag != sink->lkey || h->to < sink->laddr ||
	    h->payload_len > sink->length ||
	    h->to - sink->laddr > sink->length - h->payload_len)
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_TAGGED,
						  DDP_T_BASE_BOUNDS),
				     "RDMA Read Response outside the Read's buffer");
	err = siw_rx_get_mem(qp, h->stag, IB_ACCESS_LOCAL_WRITE, h->to,
			     h->payload_len, &mem);
	if (err != SIW_MEM_OK)
		return siw_rx_mem_refused(qp, h, err);
	siw_rx_add_range(&qp->rx, mem, h->stag, IB_ACCESS_LOCAL_WRITE, h->to,
			 h->payload_len);
	return 0;
}

static bool siw_rx_msn_ok(struct siw_rxs *rx, const struct siw_iwarp_hdr *h)
{
	return h->msn == rx->msn[h->qn] + 1;
}

/* Map the receive WR's SGEs from message offset @mo on, @len octets. */
static siw_mem_err_t siw_rx_map_rqe(struct siw_qp *qp, u32 mo, u32 len)
{
	struct siw_rxs *rx = &qp->rx;
	u32 i, pos = 0;

	for (i = 0; i < rx->rqe.num_sge && len; i++) {
		struct siw_sge *sge = &rx->rqe.sge[i];
		struct siw_mem *mem;
		siw_mem_err_t err;
		u32 skip, n;

		if (pos + sge->length <= mo) {
			pos += sge->length;
			continue;
		}
		skip = mo > pos ? mo - pos : 0;
		n = min(len, sge->length - skip);
		err = siw_rx_get_mem(qp, sge->lkey, IB_ACCESS_LOCAL_WRITE,
				     sge->laddr + skip, n, &mem);
		if (err != SIW_MEM_OK)
			return err;
		siw_rx_add_range(rx, mem, sge->lkey, IB_ACCESS_LOCAL_WRITE,
				 sge->laddr + skip, n);
		pos += sge->length;
		mo += n;
		len -= n;
	}
	return SIW_MEM_OK;
}

static int siw_rx_begin_send(struct siw_qp *qp, const struct siw_iwarp_hdr *h)
{
	struct siw_rxs *rx = &qp->rx;
	siw_mem_err_t merr;
	int err, i;

	if (!siw_rx_msn_ok(rx, h))
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
						  DDP_U_MSN_RANGE),
				     "Send out of sequence");
	if (!rx->have_rqe) {
		if (h->mo)
			return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
							  DDP_U_INVALID_MO),
					     "Send does not start at offset 0");
		err = siw_rq_get(qp, &rx->rqe);
		if (err)
			return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
							  DDP_U_MSN_NOBUF),
					     err == -ENOENT ?
					     "Send arrived but no receive WR is posted" :
					     "Send arrived but the receive WR is malformed");
		rx->have_rqe = true;
		rx->rqe_len = 0;
		for (i = 0; i < rx->rqe.num_sge; i++)
			rx->rqe_len += rx->rqe.sge[i].length;
	}
	if ((u64)h->mo + h->payload_len > rx->rqe_len)
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
						  DDP_U_TOO_LONG),
				     "Send longer than the posted receive WR");
	merr = siw_rx_map_rqe(qp, h->mo, h->payload_len);
	if (merr != SIW_MEM_OK)
		return siw_rx_mem_refused(qp, h, merr);
	return 0;
}

/* The peer's zero length Read RTR: its first FPDU, while TX waits for it. */
static bool siw_rx_is_rtr_read(struct siw_qp *qp,
			       const struct siw_iwarp_hdr *h)
{
	return h->opcode == SIW_RDMAP_READ_REQ && !h->u.rreq.size &&
	       test_bit(SIW_TX_HOLD, &qp->tx.flags);
}

static int siw_rx_begin_rreq(struct siw_qp *qp, const struct siw_iwarp_hdr *h)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;
	bool room;

	if (!siw_rx_msn_ok(&qp->rx, h))
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
						  DDP_U_MSN_RANGE),
				     "RDMA Read Request out of sequence");
	/* A zero length Read (e.g. an RTR) reads nothing. */
	if (h->u.rreq.size &&
	    !(READ_ONCE(qp->access) & IB_ACCESS_REMOTE_READ))
		return siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_REMOTE_PROT,
						  RDMAP_ACCESS),
				     "RDMA Read of STag 0x%08x refused: the QP does not allow remote reads",
				     h->u.rreq.src_stag);
	if (siw_rx_is_rtr_read(qp, h))
		return 0;	/* answered whatever the IRD */
	spin_lock_irqsave(&tx->irq.lock, flags);
	room = siw_irq_room(tx);
	spin_unlock_irqrestore(&tx->irq.lock, flags);
	if (!room)
		return siw_rx_refuse(qp, SIW_TERM(DDP, DDP_UNTAGGED,
						  DDP_U_MSN_NOBUF),
				     "more RDMA Reads outstanding than the negotiated IRD (%u)",
				     tx->ird);
	return 0;
}

/* A header is complete: find out where its payload goes. */
static void siw_rx_begin(struct siw_qp *qp)
{
	const struct siw_iwarp_hdr *h = siw_rx_hdr(&qp->rx.parser);

	siw_rx_put_ranges(&qp->rx);
	switch (h->opcode) {
	case SIW_RDMAP_WRITE:
		siw_rx_begin_write(qp, h);
		break;
	case SIW_RDMAP_READ_RESP:
		siw_rx_begin_rresp(qp, h);
		break;
	case SIW_RDMAP_SEND:
	case SIW_RDMAP_SEND_INV:
	case SIW_RDMAP_SEND_SE:
	case SIW_RDMAP_SEND_SE_INV:
		siw_rx_begin_send(qp, h);
		break;
	case SIW_RDMAP_READ_REQ:
		siw_rx_begin_rreq(qp, h);
		break;
	case SIW_RDMAP_TERMINATE:
		break;
	default:
		siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_REMOTE_OP,
					   RDMAP_OPCODE),
			      "unsupported RDMAP opcode");
		break;
	}
}

/*
 * Copy @len octets of @skb at @off to @dst; with @crc, fold the octets
 * into *@st as they are read from the skb, not from @dst: the consumer
 * may write to its buffer meanwhile (its content is then undefined, as
 * the verbs say), and a CRC over @dst would fail the connection for it.
 * Returns the octets copied.
 */
static u32 siw_rx_copy(struct sk_buff *skb, u32 off, u8 *dst, u32 len,
		       bool crc, u32 *st)
{
	struct skb_seq_state seq;
	const u8 *src;
	u32 done = 0, n;

	if (!crc)
		return skb_copy_bits(skb, off, dst, len) ? 0 : len;
	skb_prepare_seq_read(skb, off, off + len, &seq);
	while ((n = skb_seq_read(done, &src, &seq))) {
		n = min(n, len - done);
		memcpy(dst + done, src, n);
		*st = siw_crc32c_update(*st, src, n);
		done += n;
		if (done == len) {
			skb_abort_seq_read(&seq);
			break;
		}
	}
	return done;
}

/* Payload being placed, see siw_rx_place(). */
struct siw_rx_placing {
	struct sk_buff *skb;
	u32 off;			/* in skb */
	bool crc;
	u32 st;				/* CRC state */
	u32 done;			/* octets placed */
	bool broken;			/* the skb did not hold them */
};

static bool siw_rx_place_piece(const struct siw_mem_piece *piece, void *arg)
{
	struct siw_rx_placing *pl = arg;
	u8 *dst = kmap_local_page(piece->page) + piece->offset;
	u32 n;

	n = siw_rx_copy(pl->skb, pl->off, dst, piece->len, pl->crc, &pl->st);
	kunmap_local(dst);
	pl->off += n;
	pl->done += n;
	pl->broken = n != piece->len;
	return !pl->broken;
}

/*
 * Place up to @len payload octets from @skb at @off; returns the count.
 * The memory is checked again as the octets go in (siw_mem_walk()): the
 * check at the segment's start does not cover a peer that stalls in the
 * middle of its payload while the memory is invalidated, deregistered or
 * registered anew.
 */
static u32 siw_rx_place(struct siw_qp *qp, struct sk_buff *skb, u32 off,
			u32 len)
{
	struct siw_rxs *rx = &qp->rx;
	struct siw_rx_placing pl = {
		.skb = skb,
		.off = off,
		.crc = rx->crc,
		.st = siw_rx_crc_state(&rx->parser),
	};
	struct siw_rx_range *r;
	siw_mem_err_t err;

	if (WARN_ON_ONCE(rx->cur >= rx->nr_range)) {
		siw_rx_refuse(qp, SIW_TERM(RDMAP, RDMAP_CATASTROPHIC,
					   RDMAP_UNSPECIFIED),
			      "placement failed");
		return 0;
	}
	r = &rx->range[rx->cur];
	/* A page or so per walk: the walk holds the MR's lock. */
	len = min3(len, r->len - rx->cur_off, (u32)SIW_RX_PLACE_MAX);
	err = siw_mem_walk(r->mem, r->stag, qp->base.pd, r->access,
			   r->addr + rx->cur_off, len, siw_rx_place_piece, &pl);
	if (err != SIW_MEM_OK) {
		siw_rx_mem_refused(qp, siw_rx_hdr(&rx->parser), err);
		return 0;
	}
	if (pl.broken) {
		/* tcp_read_sock() offered octets the skb does not hold */
		siw_rx_refuse(qp, SIW_TERM(LLP, LLP_MPA, LLP_CATASTROPHIC),
			      "cannot read the socket buffer");
		return 0;
	}
	siw_rx_payload_done(&rx->parser, pl.done, pl.st);
	rx->cur_off += pl.done;
	if (rx->cur_off == r->len) {
		rx->cur++;
		rx->cur_off = 0;
	}
	return pl.done;
}

/*
 * Is the peer's protection error about one of our RDMA Reads? When the
 * Terminate echoes the offending FPDU's header, that header says; when it
 * echoes none, the peer found the error answering a Read (the source it
 * was to read), as our own responder does.
 */
static bool siw_rx_term_names_read(struct siw_qp *qp,
				   const struct siw_iwarp_hdr *h,
				   const struct siw_term_code *tc)
{
	const struct siw_term_info *ti = &h->u.term;
	const u8 *opt = siw_rx_term_opt(&qp->rx.parser);
	u32 pos = ti->hdrct & SIW_TERM_F_M ? SIW_MPA_LEN_SIZE : 0;

	if (tc->layer != SIW_TERM_LAYER_RDMAP ||
	    tc->etype != SIW_TERM_RDMAP_REMOTE_PROT)
		return false;
	if (!(ti->hdrct & SIW_TERM_F_D))
		return true;
	return ti->opt_len >= pos + 2 && !(opt[pos] & SIW_DDP_F_TAGGED) &&
	       (opt[pos + 1] & SIW_RDMAP_OPCODE_MASK) == SIW_RDMAP_READ_REQ;
}

static void siw_rx_peer_terminated(struct siw_qp *qp,
				   const struct siw_iwarp_hdr *h)
{
	struct siw_term_code tc = h->u.term.code;
	bool swapped = siw_term_code_unswap(&tc);
	const char *words = siw_term_code_str(&tc);

	siw_stat_inc(qp->sdev, siw_stat_term(tc.layer, false));
	trace_siw_terminate(qp, &tc, false);

	siw_conn_err(qp, "peer sent Terminate: %s (%s %u/%u/0x%02x%s)\n",
		     words ? words : "error class no RFC defines",
		     siw_term_layer(&tc), tc.layer, tc.etype, tc.ecode,
		     swapped ? "; sent with layer and type swapped" : "");
	qp->rx.dead = true;
	/* The oldest Read is the one answered: it failed, the others flush. */
	if (siw_rx_term_names_read(qp, h, &tc))
		siw_tx_read_done(qp, SIW_WC_REM_ACCESS_ERR);
	siw_qp_enter(qp, SIW_QP_TERMINATE);
	siw_qp_async_event(qp, IB_EVENT_QP_FATAL);
	siw_cm_close(qp, true);
}

static void siw_rx_send_done(struct siw_qp *qp, const struct siw_iwarp_hdr *h)
{
	struct siw_rxs *rx = &qp->rx;
	siw_mem_err_t err;
	u16 flags = 0;

	if (h->opcode == SIW_RDMAP_SEND_SE || h->opcode == SIW_RDMAP_SEND_SE_INV)
		flags |= SIW_WQE_SOLICITED;
	if (h->opcode == SIW_RDMAP_SEND_INV ||
	    h->opcode == SIW_RDMAP_SEND_SE_INV) {
		err = siw_mem_invalidate(qp->sdev, qp->base.pd, h->inval_stag);
		if (err != SIW_MEM_OK) {
			struct siw_term_code tc;

			siw_rqe_complete(qp, &rx->rqe, h->mo + h->payload_len,
					 SIW_WC_REM_INV_REQ_ERR, 0, 0);
			rx->have_rqe = false;
			siw_mem_term_code(err, false, &tc);
			siw_rx_refuse(qp, tc,
				      "Send with Invalidate of STag 0x%08x refused: %s",
				      h->inval_stag, siw_mem_err_str(err));
			return;
		}
		flags |= SIW_WQE_REM_INVAL;
	}
	rx->have_rqe = false;
	rx->msn[SIW_QN_SEND]++;
	siw_rqe_complete(qp, &rx->rqe, h->mo + h->payload_len, SIW_WC_SUCCESS,
			 flags, h->inval_stag);
}

static void siw_rx_rresp_done(struct siw_qp *qp)
{
	struct siw_sqe sqe;

	if (test_and_clear_bit(SIW_TX_RTR_READ, &qp->tx.flags))
		return;		/* the RTR's answer */
	if (!siw_tx_read_sink(qp, &sqe))
		return;
	if (sqe.opcode == SIW_OP_READ_LOCAL_INV && sqe.num_sge &&
	    siw_mem_invalidate(qp->sdev, qp->base.pd, sqe.sge[0].lkey) !=
	    SIW_MEM_OK) {
		siw_tx_read_done(qp, SIW_WC_LOC_QP_OP_ERR);
		return;
	}
	siw_tx_read_done(qp, SIW_WC_SUCCESS);
}

/* A segment passed its CRC: act on it. */
static void siw_rx_end(struct siw_qp *qp)
{
	struct siw_rxs *rx = &qp->rx;
	const struct siw_iwarp_hdr *h = siw_rx_hdr(&rx->parser);
	bool rtr = siw_rx_is_rtr_read(qp, h);
	struct siw_rresp rr;

	siw_stat_inc(qp->sdev, SIW_STAT_RX_FPDUS);
	atomic64_inc(&qp->traffic.rx_fpdus);
	atomic64_add(h->payload_len, &qp->traffic.rx_bytes);
	trace_siw_fpdu_rx(qp, h, h->payload_len, h->ulpdu_len);
	siw_rx_put_ranges(rx);
	if (test_and_clear_bit(SIW_TX_HOLD, &qp->tx.flags))
		siw_tx_schedule(qp);	/* the peer's RTR arrived */
	if (!h->last)
		return;

	switch (h->opcode) {
	case SIW_RDMAP_SEND:
	case SIW_RDMAP_SEND_INV:
	case SIW_RDMAP_SEND_SE:
	case SIW_RDMAP_SEND_SE_INV:
		siw_rx_send_done(qp, h);
		break;
	case SIW_RDMAP_READ_RESP:
		siw_rx_rresp_done(qp);
		break;
	case SIW_RDMAP_READ_REQ:
		rx->msn[SIW_QN_READ_REQ]++;
		rr.sink_stag = h->u.rreq.sink_stag;
		rr.sink_to = h->u.rreq.sink_to;
		rr.size = h->u.rreq.size;
		rr.src_stag = h->u.rreq.src_stag;
		rr.src_to = h->u.rreq.src_to;
		/*
		 * Room was checked at the header, and only TX takes from the
		 * ring since: a Read that found none would never be answered.
		 */
		if (WARN_ON_ONCE(!siw_tx_push_rresp(qp, &rr, rtr)))
			siw_qp_fail(qp, IB_EVENT_QP_FATAL);
		break;
	case SIW_RDMAP_TERMINATE:
		siw_rx_peer_terminated(qp, h);
		break;
	default:
		break;
	}
}

/* The parser failed: Terminate with what it knows of the bad FPDU. */
static void siw_rx_failed(struct siw_qp *qp)
{
	struct siw_rxs *rx = &qp->rx;
	const struct siw_term_code *tc = siw_rx_term(&rx->parser);
	enum siw_rx_err err = siw_rx_error(&rx->parser);
	const u8 *hdr;
	u16 hdrct;
	u32 len;

	/* siw_rx_refuse() has told and counted its own refusals. */
	if (err != SIW_RX_E_CALLER) {
		siw_stat_inc(qp->sdev, err == SIW_RX_E_CRC ?
			     SIW_STAT_RX_CRC_ERRORS : SIW_STAT_RX_BAD_FPDUS);
		siw_conn_err(qp, "bad FPDU: %s; terminating (%s %u/%u/0x%02x)\n",
			     siw_rx_err_str(err), siw_term_layer(tc),
			     tc->layer, tc->etype, tc->ecode);
	}
	rx->dead = true;
	siw_rx_put_ranges(rx);
	hdr = siw_rx_err_hdr(&rx->parser, &len, &hdrct);
	siw_qp_enter(qp, SIW_QP_TERMINATE);
	siw_qp_async_event(qp, tc->layer == SIW_TERM_LAYER_LLP ?
			   IB_EVENT_QP_FATAL : IB_EVENT_QP_ACCESS_ERR);
	siw_tx_terminate(qp, tc, hdrct, hdr, len);
}

static int siw_rx_actor(read_descriptor_t *desc, struct sk_buff *skb,
			unsigned int off, size_t len)
{
	struct siw_qp *qp = desc->arg.data;
	struct siw_rxs *rx = &qp->rx;
	u8 buf[SIW_FPDU_MAX_HDR];
	size_t left = len;
	u32 n;
	int rv;

	while (!rx->dead) {
		struct siw_rx_want w = siw_rx_want(&rx->parser);

		/* Segment ends are handled even when the octets ran out. */
		if (!left && (w.state == SIW_RX_HDR ||
			      w.state == SIW_RX_PAYLOAD ||
			      w.state == SIW_RX_TRAILER ||
			      w.state == SIW_RX_MARKER))
			break;
		switch (w.state) {
		case SIW_RX_HDR:
		case SIW_RX_TRAILER:
		case SIW_RX_MARKER:
			n = min_t(size_t, left, min_t(u32, w.len, sizeof(buf)));
			if (skb_copy_bits(skb, off, buf, n))
				goto broken;
			rv = siw_rx_feed_hdr(&rx->parser, buf, n);
			if (rv > 0) {
				off += rv;
				left -= rv;
			}
			break;
		case SIW_RX_HDR_DONE:
			siw_rx_begin(qp);
			if (siw_rx_want(&rx->parser).state == SIW_RX_HDR_DONE)
				siw_rx_next(&rx->parser);
			break;
		case SIW_RX_PAYLOAD:
			n = siw_rx_place(qp, skb, off,
					 min_t(size_t, left, w.len));
			off += n;
			left -= n;
			break;
		case SIW_RX_SEG_DONE:
			siw_rx_end(qp);
			if (siw_rx_want(&rx->parser).state == SIW_RX_SEG_DONE)
				siw_rx_next(&rx->parser);
			break;
		case SIW_RX_ERROR:
			siw_rx_failed(qp);
			break;
		}
	}
	/* After an error the rest of the stream is dropped. */
	siw_stat_add(qp->sdev, SIW_STAT_RX_OCTETS, len - left);
	return len;

broken:
	siw_rx_refuse(qp, SIW_TERM(LLP, LLP_MPA, LLP_CATASTROPHIC),
		      "cannot read the socket buffer");
	siw_rx_failed(qp);
	return len;
}

void siw_rx_read_sock(struct siw_qp *qp, struct sock *sk)
{
	read_descriptor_t desc = { .arg.data = qp, .count = 1 };

	if (!qp->rx.attached)
		return;
	tcp_read_sock(sk, &desc, siw_rx_actor);
}

void siw_rx_reset(struct siw_qp *qp, bool crc, bool markers)
{
	struct siw_rxs *rx = &qp->rx;

	siw_rx_init(&rx->parser, crc);
	siw_rx_set_markers(&rx->parser, markers);
	rx->crc = crc;
	memset(rx->msn, 0, sizeof(rx->msn));
	rx->have_rqe = false;
	rx->nr_range = 0;
	rx->cur = 0;
	rx->cur_off = 0;
	rx->dead = false;
	rx->attached = true;
}

/* The receive WR a Send was going into goes back flushed. */
void siw_rx_flush(struct siw_qp *qp)
{
	struct siw_rxs *rx = &qp->rx;

	siw_rx_put_ranges(rx);
	if (rx->have_rqe)
		siw_rqe_complete(qp, &rx->rqe, 0, SIW_WC_WR_FLUSH_ERR, 0, 0);
	rx->have_rqe = false;
	rx->attached = false;
}
