// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Transmit: turn work into FPDUs and push them into the socket.
 *
 * One transmitter at a time holds tx.mutex. It picks, in this order, a
 * Terminate, the peer-to-peer RTR, an RDMA Read Response (the peer waits
 * for it), then the next SQE. A message goes out as FPDUs of one TCP
 * segment each, as RFC 5044 asks and hardware peers need (or larger, see
 * siw_tx_mulpdu()), each gathered with kvecs straight from the registered
 * memory: TCP copies it once; the CRC, when on, is one more read of the
 * same octets. Read Responses go without that copy: TCP takes their pages
 * by reference (see siw_tx_push_zcopy()).
 *
 * The socket is non-blocking. When it is full, the transmitter leaves
 * with the FPDU half sent and sk_write_space brings it back in a work
 * item, which resumes where the socket stopped.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/error-injection.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/sock.h>
#include <net/tcp.h>

#include "cm.h"
#include "compat.h"
#include "engine.h"
#include "mem.h"
#include "qp.h"
#include "siw.h"
#include "trace.h"
#include "proto/crc32c.h"
#include "proto/mpa.h"

static_assert(SIW_MAX_IRD <= SIW_IRQ_SIZE);

static struct workqueue_struct *siw_tx_wq;

static bool tx_zcopy = true;
module_param(tx_zcopy, bool, 0644);
MODULE_PARM_DESC(tx_zcopy,
		 "Send RDMA Read Responses from their pages without a copy (default: on)");

/* Below a page of payload a copy costs less than a page reference. */
#define SIW_TX_ZCOPY_MIN	PAGE_SIZE

static bool large_fpdu = true;
module_param(large_fpdu, bool, 0644);
MODULE_PARM_DESC(large_fpdu,
		 "Offer FPDUs larger than one TCP segment (MPA flag 0x0800, as Linux siw's try_gso), and send such to a peer that offers them too (default: on)");

static uint fpdu_max;
module_param(fpdu_max, uint, 0644);
MODULE_PARM_DESC(fpdu_max,
		 "Send FPDUs of up to this many octets to every peer, whatever it offered (e.g. 16384 for a Chelsio T6 set to take them); 0: one TCP segment, or larger to a peer that offers it (default: 0)");

static uint tx_direct_max = 16384;
module_param(tx_direct_max, uint, 0644);
MODULE_PARM_DESC(tx_direct_max,
		 "A process that posts sends its messages itself, in its system call, while their payload adds up to less than this many octets; larger messages and the rest go to siw's TX work item, which runs beside the process (default: 16384; 0: the work item sends all)");

/* Below this, an FPDU spans segments: a Read Response must carry data. */
#define SIW_TX_MIN_MULPDU	128

/*
 * The largest FPDU with its markers: a marker at most every 508 octets of
 * the FPDU proper, one more at either end.
 */
#define SIW_TX_MAX_CLEAN	(SIW_MPA_LEN_SIZE + SIW_MPA_MAX_ULPDU + \
				 SIW_FPDU_MAX_TRAILER)
#define SIW_TX_MARK_BUF		(SIW_TX_MAX_CLEAN + SIW_MPA_MARKER_SIZE * \
				 (SIW_TX_MAX_CLEAN / (SIW_MPA_MARKER_SPACING - \
						      SIW_MPA_MARKER_SIZE) + 2))

/*
 * High priority: a work item here is what a peer waits for (a Read
 * Response, the rest of a message the socket had no room for), and it
 * should not queue behind the busy-polling processes of this host.
 */
int siw_tx_module_init(void)
{
	siw_tx_wq = alloc_workqueue("siw_tx",
				    WQ_UNBOUND | WQ_MEM_RECLAIM | WQ_HIGHPRI, 0);
	return siw_tx_wq ? 0 : -ENOMEM;
}

void siw_tx_module_exit(void)
{
	destroy_workqueue(siw_tx_wq);
}

/* ------------------------------------------------------------------------
 * Completions leave the SQ in order: the sent ring.
 */

static struct siw_sent *siw_sent_at(struct siw_tx *tx, u32 i)
{
	return siw_ring_at(&tx->sent, i);
}

/* The slot a WR leaving the engine now takes; the ring has room. */
static struct siw_sent *siw_sent_add(struct siw_tx *tx)
{
	lockdep_assert_held(&tx->sent.lock);
	return siw_sent_at(tx, tx->sent.put++);
}

/* The oldest WR still waiting for its data (a Read), or NULL. */
static struct siw_sent *siw_sent_waiting(struct siw_tx *tx)
{
	u32 i;

	lockdep_assert_held(&tx->sent.lock);
	for (i = tx->sent.get; i != tx->sent.put; i++)
		if (!siw_sent_at(tx, i)->done)
			return siw_sent_at(tx, i);
	return NULL;
}

/* Complete what is done at the head. */
static void siw_sent_reap(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;

	lockdep_assert_held(&tx->sent.lock);
	while (siw_ring_used(&tx->sent)) {
		struct siw_sent *s = siw_sent_at(tx, tx->sent.get);

		if (!s->done)
			break;
		tx->sent.get++;
		siw_sqe_complete(qp, &s->sqe, s->bytes, s->status);
	}
}

/* A WR left the engine with @status: complete it now or after older Reads. */
static void siw_tx_complete(struct siw_qp *qp, const struct siw_sqe *sqe,
			    u32 bytes, enum siw_wc_status status)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_sent *s;
	unsigned long flags;

	spin_lock_irqsave(&tx->sent.lock, flags);
	if (!siw_ring_used(&tx->sent)) {
		siw_sqe_complete(qp, sqe, bytes, status);
	} else if (status != SIW_WC_SUCCESS ||
		   (sqe->flags & SIW_WQE_SIGNALLED) || qp->sq_sig_all) {
		s = siw_sent_add(tx);
		s->sqe = *sqe;
		s->bytes = bytes;
		s->status = status;
		s->done = true;
	}
	spin_unlock_irqrestore(&tx->sent.lock, flags);
}

/* An RDMA Read Request goes out: its completion waits for the data. */
static void siw_tx_read_sent(struct siw_qp *qp, const struct siw_sqe *sqe)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_sent *s;
	unsigned long flags;

	spin_lock_irqsave(&tx->sent.lock, flags);
	s = siw_sent_add(tx);
	s->sqe = *sqe;
	s->bytes = sqe->num_sge ? sqe->sge[0].length : 0;
	s->status = SIW_WC_SUCCESS;
	s->done = false;
	tx->reads_out++;
	spin_unlock_irqrestore(&tx->sent.lock, flags);
}

bool siw_tx_read_sink(struct siw_qp *qp, struct siw_sqe *sqe)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;
	struct siw_sent *s;

	spin_lock_irqsave(&tx->sent.lock, flags);
	s = siw_sent_waiting(tx);
	if (s)
		*sqe = s->sqe;
	spin_unlock_irqrestore(&tx->sent.lock, flags);
	return s;
}

void siw_tx_read_done(struct siw_qp *qp, enum siw_wc_status status)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;
	struct siw_sent *s;
	bool wake;

	spin_lock_irqsave(&tx->sent.lock, flags);
	s = siw_sent_waiting(tx);
	if (s) {
		s->done = true;
		s->status = status;
		tx->reads_out--;
	}
	siw_sent_reap(qp);
	wake = tx->gated;
	tx->gated = false;
	spin_unlock_irqrestore(&tx->sent.lock, flags);
	/*
	 * An ORD slot or a sent slot is free, a fence may be lifted: TX is
	 * woken if an SQE waits for that (siw_tx_wait_gate()), and only
	 * then. A requester polling for this Read's completion would
	 * otherwise have the work item run on its CPU after every Read, for
	 * nothing.
	 */
	if (wake)
		siw_tx_schedule(qp);
}

/* ------------------------------------------------------------------------
 * The peer's RDMA Read Requests (IRQ).
 */

/*
 * Queue the answer to a Read Request of the peer, within the IRD. The
 * peer's zero length Read RTR (@rtr) is part of connection setup, not a
 * Read of the consumer's: it is answered also with an IRD of 0 (RFC 6581
 * leaves no other way to finish the setup).
 */
bool siw_tx_push_rresp(struct siw_qp *qp, const struct siw_rresp *rr,
		       bool rtr)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&tx->irq.lock, flags);
	ok = (rtr && !siw_ring_full(&tx->irq)) || siw_irq_room(tx);
	if (ok)
		*(struct siw_rresp *)siw_ring_at(&tx->irq, tx->irq.put++) = *rr;
	spin_unlock_irqrestore(&tx->irq.lock, flags);
	if (ok)
		siw_tx_schedule(qp);
	return ok;
}

/* The Read being answered stays counted until its response is out. */
static bool siw_tx_pop_rresp(struct siw_tx *tx, struct siw_rresp *rr)
{
	unsigned long flags;
	bool ok;

	spin_lock_irqsave(&tx->irq.lock, flags);
	ok = siw_ring_used(&tx->irq);
	if (ok) {
		*rr = *(struct siw_rresp *)siw_ring_at(&tx->irq, tx->irq.get++);
		tx->irq_busy = true;
	}
	spin_unlock_irqrestore(&tx->irq.lock, flags);
	return ok;
}

/* The Read Response in progress is framed to its end, or will not go. */
static void siw_tx_rresp_done(struct siw_tx *tx)
{
	unsigned long flags;

	spin_lock_irqsave(&tx->irq.lock, flags);
	tx->irq_busy = false;
	spin_unlock_irqrestore(&tx->irq.lock, flags);
}

void siw_tx_terminate(struct siw_qp *qp, const struct siw_term_code *tc,
		      u16 hdrct, const u8 *opt, u32 opt_len)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;

	spin_lock_irqsave(&tx->term_lock, flags);
	if (!tx->term_pending && !tx->term_sent) {
		tx->term_pending = true;
		tx->term = *tc;
		tx->term_opt_len = min_t(u32, opt_len, sizeof(tx->term_opt));
		memcpy(tx->term_opt, opt, tx->term_opt_len);
		tx->term_hdrct = tx->term_opt_len ? hdrct : 0;
	}
	spin_unlock_irqrestore(&tx->term_lock, flags);
	siw_tx_schedule(qp);
}

/* ------------------------------------------------------------------------
 * Framing.
 */

/*
 * Drop what the FPDU in progress held for its kvecs: the pages pinned for
 * it and the memory objects. TCP has the octets, or they are not going.
 */
static void siw_tx_release(struct siw_tx *tx)
{
	unsigned int i;

	for_each_set_bit(i, tx->pinned, SIW_TX_MAX_KVEC)
		put_page(virt_to_page(tx->kvec[i].iov_base));
	bitmap_zero(tx->pinned, SIW_TX_MAX_KVEC);
	while (tx->nr_mem)
		siw_mem_put(tx->mem[--tx->nr_mem]);
}

/*
 * Keep @mem (referenced) until the FPDU is out. An FPDU gathers from one
 * memory object per SGE at most, and siw_tx_frame() starts empty.
 */
static siw_mem_err_t siw_tx_hold(struct siw_tx *tx, struct siw_mem *mem)
{
	if (WARN_ON_ONCE(tx->nr_mem >= ARRAY_SIZE(tx->mem))) {
		siw_mem_put(mem);
		return SIW_MEM_ERR_STATE;
	}
	tx->mem[tx->nr_mem++] = mem;
	return SIW_MEM_OK;
}

static void siw_tx_add_kvec(struct siw_tx *tx, void *base, u32 len)
{
	tx->kvec[tx->nr_kvec].iov_base = base;
	tx->kvec[tx->nr_kvec].iov_len = len;
	tx->nr_kvec++;
}

/* How siw_tx_add_mem() takes a range. */
enum {
	SIW_TX_ZCOPY = BIT(0),	/* TCP may take its pages by reference */
	SIW_TX_PIN = BIT(1),	/* its pages live only as long as the MR */
};

/* A range being added as kvecs, see siw_tx_add_mem(). */
struct siw_tx_adding {
	struct siw_tx *tx;
	unsigned int how;
	u32 off;			/* of the next piece in the payload */
	bool full;			/* out of kvecs */
	bool no_copy;			/* a piece had to be copied: no room */
};

/*
 * A piece of kernel memory that cannot be held by a page reference (slab
 * memory) is copied now, while the walk holds the MR still: into the copy
 * buffer at its own place in the payload, where siw_tx_copy_payload()
 * finds it already.
 */
static void *siw_tx_copy_piece(struct siw_tx_adding *ad,
			       const struct siw_mem_piece *piece)
{
	u8 *dst = ad->tx->copy_buf + ad->off;

	if (!ad->tx->copy_buf || ad->off + piece->len > SIW_MPA_MAX_ULPDU)
		return NULL;
	memcpy(dst, page_address(piece->page) + piece->offset, piece->len);
	return dst;
}

static bool siw_tx_add_piece(const struct siw_mem_piece *piece, void *arg)
{
	struct siw_tx_adding *ad = arg;
	struct siw_tx *tx = ad->tx;
	void *base = page_address(piece->page) + piece->offset;

	if (tx->nr_kvec >= SIW_TX_MAX_KVEC - 1) {
		ad->full = true;
		return false;
	}
	if ((ad->how & SIW_TX_PIN) && !sendpage_ok(piece->page)) {
		base = siw_tx_copy_piece(ad, piece);
		if (!base) {
			ad->no_copy = true;
			return false;
		}
	} else if (ad->how & SIW_TX_PIN) {
		/* The MR is valid: its owner holds the page. */
		get_page(piece->page);
		__set_bit(tx->nr_kvec, tx->pinned);
	}
	if ((ad->how & SIW_TX_ZCOPY) && sendpage_ok(piece->page))
		__set_bit(tx->nr_kvec, tx->zcopy);
	siw_tx_add_kvec(tx, base, piece->len);
	ad->off += piece->len;
	return true;
}

/* Octets of payload framed so far: the kvecs after the header's. */
static u32 siw_tx_payload_len(const struct siw_tx *tx)
{
	u32 i, len = 0;

	for (i = 1; i < tx->nr_kvec; i++)
		len += tx->kvec[i].iov_len;
	return len;
}

/*
 * Add [addr, addr + len) of @mem, looked up by @stag, as kvecs, if a QP of
 * @pd may access it with @access. The check and the walk over the pages
 * are one (siw_mem_walk()): an invalidation either comes first and the
 * range is refused, or it waits for the walk.
 *
 * The kvecs of kernel memory (SIW_TX_PIN) point into pages that stay only
 * as long as the MR does: once the MR is invalidated or deregistered its
 * owner may free them, also while this FPDU still waits for room in the
 * socket. Each such page gets a reference here, dropped once TCP has the
 * octets, so that nobody else can get it meanwhile; a piece that cannot be
 * held that way (slab memory) is copied during the walk
 * (siw_tx_copy_piece()). User memory is pinned by its MR, which tx->mem
 * holds.
 */
static siw_mem_err_t siw_tx_add_mem(struct siw_tx *tx, struct siw_mem *mem,
				    u32 stag, struct ib_pd *pd, int access,
				    u64 addr, u32 len, unsigned int how)
{
	struct siw_tx_adding ad = {
		.tx = tx,
		.how = how,
		.off = siw_tx_payload_len(tx),
	};
	siw_mem_err_t err;

	err = siw_mem_walk(mem, stag, pd, access, addr, len, siw_tx_add_piece,
			   &ad);
	if (err == SIW_MEM_OK && ad.full)
		err = SIW_MEM_ERR_BOUNDS;
	if (err == SIW_MEM_OK && WARN_ON_ONCE(ad.no_copy))
		err = SIW_MEM_ERR_STATE;
	return err;
}

/* Gather @len octets of the SQE's SGEs from the current position. */
static siw_mem_err_t siw_tx_gather_sges(struct siw_qp *qp, u32 len)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_sqe *sqe = &tx->sqe;
	siw_mem_err_t err;

	if (sqe->flags & SIW_WQE_INLINE) {
		siw_tx_add_kvec(tx, (u8 *)&sqe->sge[1] + tx->sge_off, len);
		tx->sge_off += len;
		return SIW_MEM_OK;
	}
	while (len) {
		struct siw_sge *sge = &sqe->sge[tx->sge];
		u32 n = min(len, sge->length - tx->sge_off);
		struct siw_mem *mem;

		if (!n) {
			tx->sge++;
			tx->sge_off = 0;
			continue;
		}
		mem = siw_mem_get(qp->sdev, sge->lkey);
		if (!mem)
			return SIW_MEM_ERR_STAG;
		err = siw_tx_hold(tx, mem);
		if (err == SIW_MEM_OK)
			err = siw_tx_add_mem(tx, mem, sge->lkey, qp->base.pd, 0,
					     sge->laddr + tx->sge_off, n, 0);
		if (err != SIW_MEM_OK)
			return err;
		tx->sge_off += n;
		len -= n;
	}
	return SIW_MEM_OK;
}

static siw_mem_err_t siw_tx_gather_rresp(struct siw_qp *qp, u32 len)
{
	struct siw_tx *tx = &qp->tx;
	unsigned int how = 0;
	struct siw_mem *mem;
	siw_mem_err_t err;

	if (!len)
		return SIW_MEM_OK;
	mem = siw_mem_get(qp->sdev, tx->rresp.src_stag);
	if (!mem)
		return SIW_MEM_ERR_STAG;
	err = siw_tx_hold(tx, mem);
	if (err != SIW_MEM_OK)
		return err;
	if (siw_mem_is_kernel(mem))
		how |= SIW_TX_PIN;
	if (READ_ONCE(tx_zcopy) && len >= SIW_TX_ZCOPY_MIN)
		how |= SIW_TX_ZCOPY;
	return siw_tx_add_mem(tx, mem, tx->rresp.src_stag, qp->base.pd,
			      IB_ACCESS_REMOTE_READ, tx->rresp.src_to + tx->done,
			      len, how);
}

/*
 * Must the payload be copied before it is framed? With CRC on, when the
 * payload is memory its owner may still write: the CRC must cover exactly
 * the octets TCP is given, and TCP copies a kvec only when it is pushed,
 * which is after framing and, with the socket full, may be much later.
 * Meanwhile the consumer may write to a buffer whose WR has not completed
 * (perftest rewrites its credit word so). The peer may then get either
 * value (undefined data, as the verbs say) but must not get a CRC that
 * matches neither: that ends the connection. Inline data is already a
 * copy; a zero-copy Read Response is safe by contract
 * (siw_tx_push_zcopy()).
 */
static bool siw_tx_wants_copy(const struct siw_tx *tx, u32 payload)
{
	if (!payload || tx->nr_kvec < 2)
		return false;
	if (!tx->crc || !bitmap_empty(tx->zcopy, SIW_TX_MAX_KVEC))
		return false;
	if (tx->kind == SIW_TX_SQE)
		return !(tx->sqe.flags & SIW_WQE_INLINE);
	return tx->kind == SIW_TX_RRESP;
}

/*
 * CRC and TCP both take the copy; the source is let go. A piece copied
 * during the walk (siw_tx_copy_piece()) is in its place already.
 */
static void siw_tx_copy_payload(struct siw_tx *tx, u32 payload)
{
	u32 i, off = 0;

	if (!siw_tx_wants_copy(tx, payload))
		return;
	/* Without the buffer (no memory) the CRC is over the source. */
	if (!tx->copy_buf || payload > SIW_MPA_MAX_ULPDU)
		return;
	for (i = 1; i < tx->nr_kvec; i++) {
		if (tx->kvec[i].iov_base != tx->copy_buf + off)
			memcpy(tx->copy_buf + off, tx->kvec[i].iov_base,
			       tx->kvec[i].iov_len);
		off += tx->kvec[i].iov_len;
	}
	siw_tx_release(tx);
	bitmap_zero(tx->zcopy, SIW_TX_MAX_KVEC);
	tx->nr_kvec = 1;
	siw_tx_add_kvec(tx, tx->copy_buf, off);
}

/* The largest ULPDU whose FPDU, markers included, fits in @wire octets. */
static u32 siw_tx_ulpdu_in(const struct siw_tx *tx, u32 wire)
{
	return tx->markers ? siw_mark_mulpdu(wire) : siw_mpa_mulpdu(wire);
}

/*
 * The largest ULPDU of the next FPDU. In SEGMENT mode it follows the MSS
 * TCP uses now (RFC 5044's EMSS: a path MTU change shows in the next
 * FPDU), and each FPDU ends its skb (siw_tx_push()), so that TCP neither
 * appends the next one to it nor splits it: one FPDU per segment.
 */
static u32 siw_tx_mulpdu(const struct siw_tx *tx)
{
	u32 emss;

	if (tx->fpdu_size != SIW_FPDU_SEGMENT)
		return tx->mulpdu;
	emss = READ_ONCE(tcp_sk(tx->sock->sk)->mss_cache);
	return max_t(u32, siw_tx_ulpdu_in(tx, emss), SIW_TX_MIN_MULPDU);
}

/*
 * With markers the FPDU is written out whole into mark_buf, each marker
 * at its stream position (RFC 5044 section 5), and the CRC is taken over
 * that: TCP gets one kvec, and the sources are let go. The positions
 * advance as the FPDU is framed: FPDUs go out in the order framed, and
 * nothing else goes into the stream after the MPA frame.
 */
static siw_mem_err_t siw_tx_mark(struct siw_tx *tx, u32 ulpdu)
{
	static const u8 zero_pad[SIW_MPA_ALIGN];
	u32 clean = siw_fpdu_wire_len(ulpdu), i, o;
	u8 *buf = tx->mark_buf;
	__le32 crc = 0;

	if (WARN_ON_ONCE(!buf ||
			 siw_mark_wire_len(tx->mark.pos, clean) >
			 SIW_TX_MARK_BUF))
		return SIW_MEM_ERR_STATE;
	o = siw_mark_begin(&tx->mark, buf);
	for (i = 0; i < tx->nr_kvec; i++)
		o += siw_mark_copy(&tx->mark, buf + o, tx->kvec[i].iov_base,
				   tx->kvec[i].iov_len);
	o += siw_mark_copy(&tx->mark, buf + o, zero_pad, siw_mpa_pad(ulpdu));
	/* A marker just before the CRC is inside the FPDU: CRC'd too. */
	o += siw_mark_flush(&tx->mark, buf + o);
	if (tx->crc)
		crc = cpu_to_le32(siw_crc32c(buf, o));
	o += siw_mark_copy(&tx->mark, buf + o, &crc, sizeof(crc));

	siw_tx_release(tx);
	bitmap_zero(tx->zcopy, SIW_TX_MAX_KVEC);
	tx->nr_kvec = 0;
	siw_tx_add_kvec(tx, buf, o);
	tx->fpdu_len = o;
	return SIW_MEM_OK;
}

/* Frame the next FPDU of the message in progress. */
static siw_mem_err_t siw_tx_frame(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_iwarp_hdr *h = &tx->hdr;
	siw_mem_err_t err = SIW_MEM_OK;
	u32 payload, room, ulpdu, i, st;
	int hlen;

	room = siw_fpdu_max_payload(siw_tx_mulpdu(tx), h->opcode);
	if (h->opcode == SIW_RDMAP_TERMINATE || h->opcode == SIW_RDMAP_READ_REQ)
		room = tx->len;
	payload = min(tx->len - tx->done, room);
	h->last = tx->done + payload == tx->len;
	if (!h->tagged)
		h->mo = tx->done;
	else if (tx->kind == SIW_TX_RRESP)
		h->to = tx->rresp.sink_to + tx->done;
	else
		h->to = tx->sqe.raddr + tx->done;

	siw_tx_release(tx);
	tx->nr_kvec = 0;
	bitmap_zero(tx->zcopy, SIW_TX_MAX_KVEC);
	hlen = siw_fpdu_build_hdr(tx->hdr_buf, sizeof(tx->hdr_buf), h,
				  payload);
	if (WARN_ON_ONCE(hlen < 0))
		return SIW_MEM_ERR_STATE;
	siw_tx_add_kvec(tx, tx->hdr_buf, hlen);

	switch (tx->kind) {
	case SIW_TX_SQE:
		if (h->opcode != SIW_RDMAP_READ_REQ)
			err = siw_tx_gather_sges(qp, payload);
		break;
	case SIW_TX_RRESP:
		err = siw_tx_gather_rresp(qp, payload);
		break;
	case SIW_TX_TERM:
		if (payload)
			siw_tx_add_kvec(tx, tx->term_opt, payload);
		break;
	default:
		break;
	}
	if (err != SIW_MEM_OK)
		return err;

	ulpdu = hlen - SIW_MPA_LEN_SIZE + payload;
	if (tx->markers) {
		err = siw_tx_mark(tx, ulpdu);
		if (err != SIW_MEM_OK)
			return err;
		goto framed;
	}
	siw_tx_copy_payload(tx, payload);
	st = siw_crc32c_init();
	if (tx->crc) {
		for (i = 0; i < tx->nr_kvec; i++)
			st = siw_crc32c_update(st, tx->kvec[i].iov_base,
					       tx->kvec[i].iov_len);
	}
	siw_tx_add_kvec(tx, tx->trl_buf,
			siw_fpdu_build_trailer(tx->trl_buf, ulpdu, st, tx->crc));
	/* The pad goes into the CRC too: build_trailer folded it in. */
	tx->fpdu_len = siw_fpdu_wire_len(ulpdu);

framed:
	tx->done += payload;
	tx->fpdu_sent = 0;
	tx->fpdu_last = h->last;
	/*
	 * Count what the peer counts as payload: a Terminate's optional
	 * data and a fixed-size message's fields are its header.
	 */
	if (h->opcode == SIW_RDMAP_TERMINATE ||
	    siw_op_info(h->opcode)->no_payload)
		payload = 0;
	atomic64_inc(&qp->traffic.tx_fpdus);
	atomic64_add(payload, &qp->traffic.tx_bytes);
	trace_siw_fpdu_tx(qp, h, payload, ulpdu);
	/*
	 * The peer may send its next Read as soon as it has this FPDU, and
	 * TCP may deliver it before sendmsg even returns here: the Read is
	 * answered, as the peer counts, once its last FPDU is framed.
	 */
	if (tx->kind == SIW_TX_RRESP && h->last) {
		siw_tx_rresp_done(tx);
		siw_stat_inc(qp->sdev, SIW_STAT_READ_REQS_SERVED);
	}
	return SIW_MEM_OK;
}

/* ------------------------------------------------------------------------
 * Starting a message.
 */

static u8 siw_tx_rdmap_opcode(const struct siw_sqe *sqe)
{
	switch (sqe->opcode) {
	case SIW_OP_WRITE:
		return SIW_RDMAP_WRITE;
	case SIW_OP_READ:
	case SIW_OP_READ_LOCAL_INV:
		return SIW_RDMAP_READ_REQ;
	case SIW_OP_SEND_REMOTE_INV:
		return sqe->flags & SIW_WQE_SOLICITED ? SIW_RDMAP_SEND_SE_INV :
						       SIW_RDMAP_SEND_INV;
	default:
		return sqe->flags & SIW_WQE_SOLICITED ? SIW_RDMAP_SEND_SE :
						       SIW_RDMAP_SEND;
	}
}

static void siw_tx_begin(struct siw_tx *tx, enum siw_tx_kind kind, u8 opcode,
			 u32 len)
{
	const struct siw_op_info *oi = siw_op_info(opcode);

	memset(&tx->hdr, 0, sizeof(tx->hdr));
	tx->kind = kind;
	tx->hdr.opcode = opcode;
	tx->hdr.tagged = oi->tagged;
	if (!oi->tagged) {
		tx->hdr.qn = oi->qn;	/* for the tracepoint: the header has it */
		tx->hdr.msn = ++tx->msn[oi->qn];
	}
	tx->len = len;
	tx->done = 0;
	tx->sge = 0;
	tx->sge_off = 0;
}

/*
 * A local error in the message being framed: a WR that names memory it
 * may not use completes with the error and fails the QP; a Read Response
 * for memory the peer may not read ends the stream with a Terminate.
 */
static void siw_tx_local_error(struct siw_qp *qp, siw_mem_err_t err)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_term_code tc;

	siw_tx_release(tx);
	tx->fpdu_len = 0;
	tx->fpdu_sent = 0;
	if (tx->kind == SIW_TX_RRESP) {
		siw_mem_term_code(err, false, &tc);
		siw_conn_err(qp, "RDMA Read of STag 0x%08x refused: %s; terminating (RDMAP %u/%u/0x%02x)\n",
			     tx->rresp.src_stag, siw_mem_err_str(err),
			     tc.layer, tc.etype, tc.ecode);
		tx->kind = SIW_TX_IDLE;
		siw_tx_rresp_done(tx);
		siw_qp_enter(qp, SIW_QP_TERMINATE);
		siw_qp_async_event(qp, IB_EVENT_QP_ACCESS_ERR);
		siw_tx_terminate(qp, &tc, 0, NULL, 0);
		return;
	}
	if (tx->kind == SIW_TX_SQE && tx->hdr.opcode != SIW_RDMAP_READ_REQ) {
		siw_qp_err(qp, "work request 0x%llx refused: its memory: %s; QP to ERROR\n",
			   tx->sqe.id, siw_mem_err_str(err));
		siw_tx_complete(qp, &tx->sqe, 0, siw_mem_wc_status(err));
	}
	tx->kind = SIW_TX_IDLE;
	siw_qp_fail(qp, IB_EVENT_QP_ACCESS_ERR);
}

/* Frame the next FPDU of the message; a memory error ends the message. */
static void siw_tx_next_fpdu(struct siw_qp *qp)
{
	siw_mem_err_t err = siw_tx_frame(qp);

	if (err != SIW_MEM_OK)
		siw_tx_local_error(qp, err);
}

/* Memory registration WRs act locally, in SQ order. */
static void siw_tx_local_op(struct siw_qp *qp, struct siw_sqe *sqe)
{
	struct ib_mr *mr = (struct ib_mr *)(uintptr_t)sqe->base_mr;
	siw_mem_err_t err;

	if (sqe->opcode == SIW_OP_REG_MR)
		err = siw_mem_fastreg(qp->sdev, qp->base.pd, mr, sqe->rkey,
				      (int)sqe->access);
	else
		err = siw_mem_invalidate(qp->sdev, qp->base.pd, sqe->rkey);
	siw_tx_complete(qp, sqe, 0, siw_mem_wc_status(err));
	if (err != SIW_MEM_OK) {
		siw_qp_err(qp, "%s of STag 0x%08x failed: %s; QP to ERROR\n",
			   sqe->opcode == SIW_OP_REG_MR ? "fast registration" :
			   "local invalidation", sqe->rkey, siw_mem_err_str(err));
		siw_qp_fail(qp, IB_EVENT_QP_FATAL);
	}
}

/* What the sent ring and the ORD let go now (see siw_sq_get()). */
static void siw_tx_gate(struct siw_tx *tx, struct siw_sq_gate *gate)
{
	unsigned long flags;

	spin_lock_irqsave(&tx->sent.lock, flags);
	gate->full = siw_ring_full(&tx->sent);
	gate->reads_out = tx->reads_out;
	spin_unlock_irqrestore(&tx->sent.lock, flags);
	/*
	 * Only this transmitter adds to the sent ring; RX only empties it.
	 * So the gate can only be too strict, and then the Read completing
	 * schedules TX again.
	 */
	gate->ord = tx->ord;
}

/*
 * The oldest SQE waits for the gate: have the next Read completion wake
 * TX (siw_tx_read_done()). Unless the gate moved since it was read, in
 * which case TX looks again at once: a completion in between saw no
 * waiter.
 */
static bool siw_tx_wait_gate(struct siw_tx *tx, const struct siw_sq_gate *gate)
{
	unsigned long flags;
	bool moved;

	spin_lock_irqsave(&tx->sent.lock, flags);
	moved = tx->reads_out != gate->reads_out ||
		siw_ring_full(&tx->sent) != gate->full;
	if (!moved)
		tx->gated = true;
	spin_unlock_irqrestore(&tx->sent.lock, flags);
	return moved;
}

/* What one step of the transmitter did. */
enum siw_tx_step {
	SIW_TX_STEP_PROGRESS,	/* framed, pushed, failed or did a local op */
	SIW_TX_STEP_BEGUN,	/* began a message: the next step frames it */
	SIW_TX_STEP_IDLE,	/* nothing to send now */
	SIW_TX_STEP_LEAVE,	/* the next SQE is too large for a doorbell */
	SIW_TX_STEP_FULL,	/* the socket has no room: sk_write_space */
	SIW_TX_STEP_BROKEN,	/* the socket failed: tx->sock_err says how */
};

/* An RDMA Read with ORD 0: nothing may be asked of the peer. */
static void siw_tx_read_refused(struct siw_qp *qp, struct siw_sqe *sqe)
{
	siw_qp_err(qp, "RDMA Read posted, but the connection allows no Reads (ORD 0); QP to ERROR\n");
	siw_tx_complete(qp, sqe, 0, SIW_WC_LOC_QP_OP_ERR);
	siw_qp_fail(qp, IB_EVENT_QP_REQ_ERR);
}

/* Take the next SQE if it carries less than @max_len octets, and begin it. */
static enum siw_tx_step siw_tx_start_sqe(struct siw_qp *qp, u64 max_len)
{
	struct siw_tx *tx = &qp->tx;
	struct siw_sqe *sqe = &tx->sqe;
	struct siw_sq_gate gate;
	int err;

	siw_tx_gate(tx, &gate);
	gate.max_len = max_len;
	err = siw_sq_get(qp, sqe, &gate);
	if (err == -EAGAIN)
		return siw_tx_wait_gate(tx, &gate) ? SIW_TX_STEP_PROGRESS :
						     SIW_TX_STEP_IDLE;
	if (err == -EMSGSIZE)
		return SIW_TX_STEP_LEAVE;
	if (err == -ENOENT)
		return SIW_TX_STEP_IDLE;
	if (err)
		return SIW_TX_STEP_PROGRESS;
	tx->sqe_taken = true;

	switch (sqe->opcode) {
	case SIW_OP_REG_MR:
	case SIW_OP_INVAL_STAG:
		siw_tx_local_op(qp, sqe);
		return SIW_TX_STEP_PROGRESS;
	case SIW_OP_READ:
	case SIW_OP_READ_LOCAL_INV:
		if (!tx->ord) {
			siw_tx_read_refused(qp, sqe);
			return SIW_TX_STEP_PROGRESS;
		}
		siw_tx_begin(tx, SIW_TX_SQE, SIW_RDMAP_READ_REQ, 0);
		tx->hdr.u.rreq.sink_stag = sqe->num_sge ? sqe->sge[0].lkey : 0;
		tx->hdr.u.rreq.sink_to = sqe->num_sge ? sqe->sge[0].laddr : 0;
		tx->hdr.u.rreq.size = siw_sqe_len(sqe);
		tx->hdr.u.rreq.src_stag = sqe->rkey;
		tx->hdr.u.rreq.src_to = sqe->raddr;
		/* Before it is sent: the response may beat sendmsg back. */
		siw_tx_read_sent(qp, sqe);
		break;
	default:
		siw_tx_begin(tx, SIW_TX_SQE, siw_tx_rdmap_opcode(sqe),
			     siw_sqe_len(sqe));
		tx->hdr.stag = sqe->rkey;
		tx->hdr.inval_stag = sqe->rkey;
		break;
	}
	return SIW_TX_STEP_BEGUN;
}

static void siw_tx_start_rresp(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;

	siw_tx_begin(tx, SIW_TX_RRESP, SIW_RDMAP_READ_RESP, tx->rresp.size);
	tx->hdr.stag = tx->rresp.sink_stag;
}

static bool siw_tx_take_term(struct siw_tx *tx)
{
	unsigned long flags;
	bool take;

	spin_lock_irqsave(&tx->term_lock, flags);
	take = tx->term_pending;
	if (take) {
		tx->term_pending = false;
		tx->term_sent = true;
	}
	spin_unlock_irqrestore(&tx->term_lock, flags);
	return take;
}

static void siw_tx_start_term(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;

	siw_tx_begin(tx, SIW_TX_TERM, SIW_RDMAP_TERMINATE, tx->term_opt_len);
	tx->hdr.u.term.code = tx->term;
	tx->hdr.u.term.hdrct = tx->term_hdrct;
}

/* MPA peer-to-peer mode: a zero length Write, Read or Send comes first. */
static void siw_tx_start_rtr(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	u8 opcode = SIW_RDMAP_SEND;

	if (tx->rtr & SIW_MPA_RTR_WRITE) {
		opcode = SIW_RDMAP_WRITE;
	} else if (tx->rtr & SIW_MPA_RTR_READ) {
		opcode = SIW_RDMAP_READ_REQ;
		/* Its answer is no answer to a Read of the consumer's. */
		set_bit(SIW_TX_RTR_READ, &tx->flags);
	}
	tx->rtr = 0;
	siw_tx_begin(tx, SIW_TX_RTR, opcode, 0);
	memset(&tx->sqe, 0, sizeof(tx->sqe));
}

/*
 * Pick the next message and begin it; the next step frames its first
 * FPDU. An SQE is taken only if it carries less than @max_len octets.
 */
static enum siw_tx_step siw_tx_start(struct siw_qp *qp, u64 max_len)
{
	struct siw_tx *tx = &qp->tx;

	if (siw_tx_take_term(tx)) {
		siw_tx_start_term(qp);
		return SIW_TX_STEP_BEGUN;
	}
	if (READ_ONCE(tx->term_sent))
		return SIW_TX_STEP_IDLE;
	if (tx->rtr) {
		siw_tx_start_rtr(qp);
		return SIW_TX_STEP_BEGUN;
	}
	if (test_bit(SIW_TX_HOLD, &tx->flags))
		return SIW_TX_STEP_IDLE;
	/*
	 * A responder answers RDMA Reads from RTR on, as in IB: a QP
	 * connected without rdma_cm may stay there (perftest's server).
	 */
	if (!siw_qp_can(qp, SIW_QP_ANSWERS_READS))
		return SIW_TX_STEP_IDLE;
	if (siw_tx_pop_rresp(tx, &tx->rresp)) {
		siw_tx_start_rresp(qp);
		return SIW_TX_STEP_BEGUN;
	}
	if (!siw_qp_can(qp, SIW_QP_SENDS))
		return SIW_TX_STEP_IDLE;
	return siw_tx_start_sqe(qp, max_len);
}

/* ------------------------------------------------------------------------
 * Sending.
 */

/*
 * Whether each FPDU ends its skb (MSG_EOR on its last octet): TCP then
 * starts the next FPDU in a new skb, and with FPDUs of at most one
 * segment no segment holds parts of two. Large FPDUs span segments
 * anyway; they share skbs as TCP likes.
 */
static bool siw_tx_ends_skb(const struct siw_tx *tx)
{
	return tx->fpdu_size != SIW_FPDU_LARGE;
}

/*
 * Push the FPDU with its marked kvecs as page references. Safe for Read
 * Responses only: a responder learns that its memory may change again
 * only from the requester, once the Read completed there, so once the
 * requester's TCP has every octet, and a retransmission it does not need
 * cannot alter what it placed. A Send or Write completes here when TCP
 * has taken it, before the peer has it: those are copied. The socket lock
 * is taken once for all of the FPDU's pieces.
 */
static int siw_tx_push_zcopy(struct siw_tx *tx)
{
	struct sock *sk = tx->sock->sk;
	u32 skip = tx->fpdu_sent, i, len;
	int rv = 0;

	lock_sock(sk);
	for (i = 0; i < tx->nr_kvec; i++) {
		struct kvec piece = tx->kvec[i];
		bool more, eor;

		if (skip >= piece.iov_len) {
			skip -= piece.iov_len;
			continue;
		}
		piece.iov_base += skip;
		piece.iov_len -= skip;
		len = piece.iov_len;
		skip = 0;
		/*
		 * TCP pushes after the last octet of a message, whatever
		 * kvec holds it: the trailer is empty without CRC and pad.
		 */
		more = !tx->fpdu_last || tx->fpdu_sent + len < tx->fpdu_len;
		eor = siw_tx_ends_skb(tx) && tx->fpdu_sent + len == tx->fpdu_len;
		if (test_bit(i, tx->zcopy)) {
			rv = siw_tcp_send_page_locked(sk,
						      virt_to_page(piece.iov_base),
						      offset_in_page(piece.iov_base),
						      len, more, eor);
		} else {
			struct msghdr msg = {
				.msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL |
					     (more ? MSG_MORE : 0) |
					     (eor ? MSG_EOR : 0),
			};

			rv = kernel_sendmsg_locked(sk, &msg, &piece, 1, len);
		}
		if (rv <= 0)
			break;
		tx->fpdu_sent += rv;
		if (rv < len)
			break;
	}
	release_sock(sk);
	if (rv < 0)
		return rv;
	return tx->fpdu_sent < tx->fpdu_len ? -EAGAIN : 0;
}

static noinline int siw_tx_push(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	struct msghdr msg = { .msg_flags = MSG_DONTWAIT | MSG_NOSIGNAL };
	int rv;

	if (!bitmap_empty(tx->zcopy, SIW_TX_MAX_KVEC))
		return siw_tx_push_zcopy(tx);
	if (!tx->fpdu_last)
		msg.msg_flags |= MSG_MORE;
	if (siw_tx_ends_skb(tx))
		msg.msg_flags |= MSG_EOR;
	iov_iter_kvec(&msg.msg_iter, ITER_SOURCE, tx->kvec, tx->nr_kvec,
		      tx->fpdu_len);
	iov_iter_advance(&msg.msg_iter, tx->fpdu_sent);
	rv = sock_sendmsg(tx->sock, &msg);
	if (rv < 0)
		return rv;
	tx->fpdu_sent += rv;
	return tx->fpdu_sent < tx->fpdu_len ? -EAGAIN : 0;
}

ALLOW_ERROR_INJECTION(siw_tx_push, ERRNO);

/* The message in progress is on the wire. */
static void siw_tx_msg_sent(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;

	switch (tx->kind) {
	case SIW_TX_SQE:
		if (tx->hdr.opcode != SIW_RDMAP_READ_REQ)
			siw_tx_complete(qp, &tx->sqe, tx->len, SIW_WC_SUCCESS);
		break;
	case SIW_TX_TERM:
		siw_stat_inc(qp->sdev, siw_stat_term(tx->term.layer, true));
		trace_siw_terminate(qp, &tx->term, true);
		/* Nothing follows a Terminate: close once it is out. */
		siw_cm_close(qp, true);
		break;
	default:
		break;
	}
	tx->kind = SIW_TX_IDLE;
}

/* One step; @max_len as for siw_tx_start(). */
static enum siw_tx_step siw_tx_step(struct siw_qp *qp, u64 max_len)
{
	struct siw_tx *tx = &qp->tx;
	int rv;

	lockdep_assert_held(&tx->mutex);
	if (!tx->sock)
		return SIW_TX_STEP_IDLE;
	if (tx->fpdu_sent < tx->fpdu_len) {
		rv = siw_tx_push(qp);
		if (rv == -EAGAIN)
			return SIW_TX_STEP_FULL;
		if (rv) {
			tx->sock_err = rv;
			return SIW_TX_STEP_BROKEN;
		}
		siw_stat_inc(qp->sdev, SIW_STAT_TX_FPDUS);
		siw_stat_add(qp->sdev, SIW_STAT_TX_OCTETS, tx->fpdu_len);
		if (!bitmap_empty(tx->zcopy, SIW_TX_MAX_KVEC))
			siw_stat_inc(qp->sdev, SIW_STAT_TX_ZCOPY_FPDUS);
		siw_tx_release(tx);
		tx->fpdu_len = 0;
		tx->fpdu_sent = 0;
		if (tx->fpdu_last)
			siw_tx_msg_sent(qp);
		return SIW_TX_STEP_PROGRESS;
	}
	if (tx->kind != SIW_TX_IDLE) {
		siw_tx_next_fpdu(qp);
		return SIW_TX_STEP_PROGRESS;
	}
	return siw_tx_start(qp, max_len);
}

/*
 * libsiw skips the doorbell when the SQE before its new ones is still
 * VALID, trusting siw to find the new ones. It orders its store of the new
 * SQE and its load of the old one with no more than a read barrier, so on
 * x86 the load may pass the store: siw can find the ring empty just before
 * the new SQE shows, while the process saw the old one VALID. One look at
 * the ring a tick after siw took SQEs of a process closes that window, for
 * the TX engine and for a flush in ERROR alike: the look is a doorbell.
 */
static void siw_tx_recheck(struct work_struct *work)
{
	struct siw_qp *qp = container_of(to_delayed_work(work), struct siw_qp,
					 tx.recheck);

	siw_qp_sq_kick(qp);
}

void siw_sq_recheck_later(struct siw_qp *qp)
{
	if (qp->user)
		queue_delayed_work(siw_tx_wq, &qp->tx.recheck, 1);
}

/*
 * What a doorbell sends itself, with @budget octets left that it may send
 * (payload, and the framing of an FPDU half pushed). From the system call
 * small messages go out at the lowest latency. A large one is left to the
 * work item, so that its copy into the socket (and its CRC) runs beside
 * the process, which goes on posting and polling, and on one CPU in the
 * work item's longer runs. An SQE that large stays in the ring
 * (siw_tx_start_sqe()): libsiw rings no doorbell while the SQE before its
 * new one is still there, so the process fills its ring without system
 * calls and the work item sends it in one run. What was begun and not
 * finished before (or the next doorbell would take it back from the work
 * item before that ran), and a Read Response just begun, are charged too:
 * true if they leave.
 */
static bool siw_tx_leaves(const struct siw_tx *tx, u32 *budget)
{
	u64 left;

	if (tx->kind == SIW_TX_IDLE)
		return false;
	left = (u64)tx->len - tx->done + tx->fpdu_len - tx->fpdu_sent;
	if (left >= *budget)
		return true;
	*budget -= left;
	return false;
}

/*
 * Send until nothing is left, the socket is full or failed, or, for a
 * doorbell (@budget not NULL), until its share is spent: then true, and
 * the caller queues the work item once it has let go of the mutex (so
 * that the work item does not wake up into it).
 */
static bool siw_tx_run(struct siw_qp *qp, u32 *budget)
{
	struct siw_tx *tx = &qp->tx;
	bool leave = false;
	enum siw_tx_step st;

	lockdep_assert_held(&tx->mutex);
	if (budget && siw_tx_leaves(tx, budget))
		return true;	/* PENDING is still set: the kick's */
	tx->sqe_taken = false;
	while (test_and_clear_bit(SIW_TX_PENDING, &tx->flags)) {
		do {
			st = siw_tx_step(qp, budget ? *budget : U64_MAX);
			if (budget && (st == SIW_TX_STEP_LEAVE ||
				       (st == SIW_TX_STEP_BEGUN &&
					siw_tx_leaves(tx, budget)))) {
				siw_stat_inc(qp->sdev, SIW_STAT_TX_HANDED_OVER);
				set_bit(SIW_TX_PENDING, &tx->flags);
				leave = true;
				goto out;
			}
			cond_resched();
		} while (st == SIW_TX_STEP_PROGRESS || st == SIW_TX_STEP_BEGUN);
		if (st == SIW_TX_STEP_FULL)
			return false;	/* sk_write_space sets PENDING again */
		if (st == SIW_TX_STEP_BROKEN) {
			siw_conn_err(qp, "TCP send failed (%d); closing the connection\n",
				     tx->sock_err);
			siw_cm_close(qp, false);
			return false;
		}
	}
out:
	if (tx->sqe_taken && tx->sock)
		siw_sq_recheck_later(qp);
	return leave;
}

static void siw_tx_work(struct work_struct *work)
{
	struct siw_qp *qp = container_of(work, struct siw_qp, tx.work);

	mutex_lock(&qp->tx.mutex);
	siw_tx_run(qp, NULL);
	mutex_unlock(&qp->tx.mutex);
}

void siw_tx_schedule(struct siw_qp *qp)
{
	set_bit(SIW_TX_PENDING, &qp->tx.flags);
	if (READ_ONCE(qp->tx.sock))
		queue_work(siw_tx_wq, &qp->tx.work);
}

/*
 * A process rang the doorbell: send from its context if nobody else is
 * sending, less than tx_direct_max octets (see siw_tx_leaves()). Kernel
 * consumers may post from any context, so theirs go to the work item, and
 * so does a kick from a work item (the recheck, the CM): it is no system
 * call that a small message would save a hop for.
 */
void siw_tx_kick(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	u32 budget = READ_ONCE(tx_direct_max);

	if (!READ_ONCE(tx->sock))
		return;
	set_bit(SIW_TX_PENDING, &tx->flags);
	if (qp->user && budget && in_task() && !current_work() &&
	    mutex_trylock(&tx->mutex)) {
		bool leave = siw_tx_run(qp, &budget);

		mutex_unlock(&tx->mutex);
		if (!leave)
			return;
	}
	queue_work(siw_tx_wq, &tx->work);
}

void siw_tx_write_space(struct siw_qp *qp, struct sock *sk)
{
	if (sk_stream_is_writeable(sk) && sk->sk_socket) {
		clear_bit(SOCK_NOSPACE, &sk->sk_socket->flags);
		siw_tx_schedule(qp);
	}
}

/* ------------------------------------------------------------------------
 * Attach, detach.
 */

static u32 siw_tx_gso_mulpdu(const struct siw_tx *tx, struct sock *sk)
{
	u32 gso = READ_ONCE(sk->sk_gso_max_size);
	u32 mss = tcp_sk(sk)->mss_cache;

	/* Length, ULPDU, pad, CRC (and markers) within one GSO send. */
	return clamp_t(u32, siw_tx_ulpdu_in(tx, max(gso, mss)), 512,
		       SIW_MPA_MAX_ULPDU) & ~3U;
}

bool siw_tx_offers_large(void)
{
	return READ_ONCE(large_fpdu);
}

/* How this connection's FPDUs are sized: see enum siw_fpdu_size. */
static void siw_tx_size_fpdus(struct siw_tx *tx,
			      const struct siw_engine_params *p)
{
	u32 fixed = READ_ONCE(fpdu_max);

	if (fixed) {
		tx->fpdu_size = SIW_FPDU_FIXED;
		tx->mulpdu = max_t(u32, siw_tx_ulpdu_in(tx, fixed),
				   SIW_TX_MIN_MULPDU);
	} else if (p->large) {
		tx->fpdu_size = SIW_FPDU_LARGE;
		tx->mulpdu = siw_tx_gso_mulpdu(tx, p->sock->sk);
	} else {
		tx->fpdu_size = SIW_FPDU_SEGMENT;
		tx->mulpdu = 0;
	}
}

static const char *siw_tx_fpdu_str(const struct siw_tx *tx)
{
	switch (tx->fpdu_size) {
	case SIW_FPDU_LARGE:
		return "large (both offered them)";
	case SIW_FPDU_FIXED:
		return "of fpdu_max octets";
	default:
		return "of one TCP segment";
	}
}

int siw_engine_init(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	int err;

	mutex_init(&tx->mutex);
	INIT_WORK(&tx->work, siw_tx_work);
	INIT_DELAYED_WORK(&tx->recheck, siw_tx_recheck);
	spin_lock_init(&tx->term_lock);
	err = siw_ring_alloc(&tx->sent, qp->sq.num, sizeof(struct siw_sent), 0,
			     false);
	if (err)
		return err;
	err = siw_ring_alloc(&tx->irq, SIW_IRQ_SIZE, sizeof(struct siw_rresp),
			     0, false);
	if (err)
		siw_ring_free(&tx->sent);
	return err;
}

ALLOW_ERROR_INJECTION(siw_engine_init, ERRNO);

void siw_engine_free(struct siw_qp *qp)
{
	cancel_delayed_work_sync(&qp->tx.recheck);
	cancel_work_sync(&qp->tx.work);
	siw_ring_free(&qp->tx.sent);
	siw_ring_free(&qp->tx.irq);
	kvfree(qp->tx.copy_buf);
	qp->tx.copy_buf = NULL;
	kvfree(qp->tx.mark_buf);
	qp->tx.mark_buf = NULL;
}

/*
 * The copy buffer (siw_tx_copy_payload()): a kernel QP needs it for Read
 * Responses from pages that cannot be held; with CRC on, any QP uses it,
 * or (no memory) takes the CRC over the source.
 */
static noinline int siw_tx_alloc_copy_buf(struct siw_qp *qp, bool crc)
{
	struct siw_tx *tx = &qp->tx;

	if (tx->copy_buf || (qp->user && !crc))
		return 0;
	tx->copy_buf = kvmalloc(SIW_MPA_MAX_ULPDU, GFP_KERNEL);
	return tx->copy_buf || qp->user ? 0 : -ENOMEM;
}

ALLOW_ERROR_INJECTION(siw_tx_alloc_copy_buf, ERRNO);

/* Where FPDUs with markers are put together (siw_tx_mark()). */
static noinline int siw_tx_alloc_mark_buf(struct siw_tx *tx, bool markers)
{
	if (!markers || tx->mark_buf)
		return 0;
	tx->mark_buf = kvmalloc(SIW_TX_MARK_BUF, GFP_KERNEL);
	return tx->mark_buf ? 0 : -ENOMEM;
}

ALLOW_ERROR_INJECTION(siw_tx_alloc_mark_buf, ERRNO);

int siw_engine_attach(struct siw_qp *qp, const struct siw_engine_params *p)
{
	struct siw_tx *tx = &qp->tx;
	int err;

	mutex_lock(&tx->mutex);
	err = siw_tx_alloc_copy_buf(qp, p->crc);
	if (!err)
		err = siw_tx_alloc_mark_buf(tx, p->markers_tx);
	if (err) {
		mutex_unlock(&tx->mutex);
		return err;
	}
	tx->crc = p->crc;
	/* IRD 0: the peer may not read at all; ORD 0 is siw_tx_start_sqe's. */
	tx->ird = siw_ird_cap(p->ird);
	tx->ord = siw_ord_cap(p->ord);
	tx->rtr = p->rtr_send;
	tx->markers = p->markers_tx;
	tx->mark.pos = 0;
	siw_tx_size_fpdus(tx, p);
	tx->kind = SIW_TX_IDLE;
	memset(tx->msn, 0, sizeof(tx->msn));
	tx->fpdu_len = 0;
	tx->fpdu_sent = 0;
	WARN_ON_ONCE(tx->nr_mem || !bitmap_empty(tx->pinned, SIW_TX_MAX_KVEC));
	tx->sent.get = tx->sent.put;
	tx->reads_out = 0;
	tx->gated = false;
	tx->irq.get = tx->irq.put;
	tx->irq_busy = false;
	tx->term_pending = false;
	tx->term_sent = false;
	tx->sock_err = 0;
	if (p->rtr_wait)
		set_bit(SIW_TX_HOLD, &tx->flags);
	else
		clear_bit(SIW_TX_HOLD, &tx->flags);
	clear_bit(SIW_TX_RTR_READ, &tx->flags);
	siw_rx_reset(qp, p->crc, p->markers_rx);
	WRITE_ONCE(tx->sock, p->sock);
	mutex_unlock(&tx->mutex);
	siw_qp_dbg(qp, "engine attached: CRC %s, IRD %u, ORD %u, FPDUs %s, markers %s/%s\n",
		   p->crc ? "on" : "off", tx->ird, tx->ord, siw_tx_fpdu_str(tx),
		   p->markers_tx ? "sent" : "not sent",
		   p->markers_rx ? "expected" : "not expected");
	return 0;
}

bool siw_engine_attached(struct siw_qp *qp)
{
	return READ_ONCE(qp->tx.sock);
}

/* Flush the WRs TX holds: sent ones in order, then the one in progress. */
static void siw_tx_flush(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;
	unsigned long flags;

	siw_tx_release(tx);
	tx->fpdu_len = 0;
	tx->fpdu_sent = 0;

	spin_lock_irqsave(&tx->sent.lock, flags);
	while (siw_ring_used(&tx->sent)) {
		struct siw_sent *s = siw_sent_at(tx, tx->sent.get++);

		siw_sqe_complete(qp, &s->sqe, s->done ? s->bytes : 0,
				 s->done ? s->status : SIW_WC_WR_FLUSH_ERR);
	}
	tx->reads_out = 0;
	tx->gated = false;
	spin_unlock_irqrestore(&tx->sent.lock, flags);

	if (tx->kind == SIW_TX_SQE && tx->hdr.opcode != SIW_RDMAP_READ_REQ)
		siw_sqe_complete(qp, &tx->sqe, 0, SIW_WC_WR_FLUSH_ERR);
	tx->kind = SIW_TX_IDLE;
	spin_lock_irqsave(&tx->irq.lock, flags);
	tx->irq.get = tx->irq.put;
	tx->irq_busy = false;
	spin_unlock_irqrestore(&tx->irq.lock, flags);
}

void siw_engine_detach(struct siw_qp *qp)
{
	struct siw_tx *tx = &qp->tx;

	mutex_lock(&tx->mutex);
	WRITE_ONCE(tx->sock, NULL);
	mutex_unlock(&tx->mutex);
	cancel_delayed_work_sync(&tx->recheck);
	cancel_work_sync(&tx->work);

	mutex_lock(&tx->mutex);
	siw_tx_flush(qp);
	mutex_unlock(&tx->mutex);
	siw_rx_flush(qp);
	siw_qp_dbg(qp, "engine detached\n");
}
