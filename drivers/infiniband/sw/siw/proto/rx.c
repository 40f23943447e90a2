// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive side FPDU parser. See rx.h for the model.
 *
 * Header octets are collected in rx->raw. The first four (MPA length, DDP
 * control, RDMAP control) decide the header length of the segment; when
 * that many have arrived the header is decoded and checked as a whole.
 */
#include "rx.h"
#include "crc32c.h"
#include "marker.h"

/* Octets that identify a segment: MPA length, DDP and RDMAP control. */
#define RX_LEAD_LEN	4
#define RX_DDP_OFF	SIW_MPA_LEN_SIZE
#define RX_RDMAP_OFF	(SIW_MPA_LEN_SIZE + sizeof(struct siw_ddp_untagged))
#define RX_TAGGED_HDR	(SIW_MPA_LEN_SIZE + sizeof(struct siw_ddp_tagged))
#define RX_UNTAGGED_HDR	(SIW_MPA_LEN_SIZE + sizeof(struct siw_ddp_untagged))
#define RX_RREQ_HDR	(RX_UNTAGGED_HDR + sizeof(struct siw_rdmap_read_req))

static const char * const rx_err_names[SIW_RX_NUM_ERRS] = {
	[SIW_RX_OK] = "no error",
	[SIW_RX_E_ULPDU_LEN] = "MPA ULPDU length shorter than the DDP/RDMAP header",
	[SIW_RX_E_DDP_VERSION] = "DDP version is not 1",
	[SIW_RX_E_RDMAP_VERSION] = "RDMAP version is not 1",
	[SIW_RX_E_OPCODE] = "unknown or unsupported RDMAP opcode",
	[SIW_RX_E_TAGGED] = "DDP tagged flag does not match the RDMAP opcode",
	[SIW_RX_E_QN] = "DDP queue number does not match the RDMAP opcode",
	[SIW_RX_E_MO] = "non-zero DDP message offset in a single segment message",
	[SIW_RX_E_MO_WRAP] = "DDP message offset plus length exceeds 2^32",
	[SIW_RX_E_NOT_LAST] = "single segment message without the DDP last flag",
	[SIW_RX_E_MSG_LEN] = "message longer than its fixed RDMAP length",
	[SIW_RX_E_TO_WRAP] = "tagged offset plus length exceeds 2^64",
	[SIW_RX_E_READ_WRAP] = "RDMA Read Request tagged offset plus size exceeds 2^64",
	[SIW_RX_E_ATOMIC_OP] = "unknown atomic operation",
	[SIW_RX_E_CRC] = "MPA CRC mismatch",
	[SIW_RX_E_MARKER] = "MPA marker does not point to its FPDU",
	[SIW_RX_E_CALLER] = "error reported by the consumer",
	[SIW_RX_E_MISUSE] = "parser API used in the wrong state",
};

const char *siw_rx_err_str(enum siw_rx_err err)
{
	if ((unsigned int)err >= SIW_RX_NUM_ERRS)
		return "unknown error";
	return rx_err_names[err];
}

static u16 get_be16(const u8 *p)
{
	__be16 v;

	memcpy(&v, p, sizeof(v));
	return be16_to_cpu(v);
}

/* Enter the sticky error state with the Terminate code of @err. */
static int rx_error(struct siw_rx *rx, enum siw_rx_err err)
{
	bool tagged = rx->raw[RX_DDP_OFF] & SIW_DDP_F_TAGGED;

	if (rx->state == SIW_RX_ERROR)
		return -1;

	rx->state = SIW_RX_ERROR;
	rx->err = err;

	switch (err) {
	case SIW_RX_E_ULPDU_LEN:
	case SIW_RX_E_MARKER:
		rx->term = SIW_TERM(LLP, LLP_MPA, LLP_MARKER_LEN);
		break;
	case SIW_RX_E_DDP_VERSION:
		if (tagged)
			rx->term = SIW_TERM(DDP, DDP_TAGGED, DDP_T_VERSION);
		else
			rx->term = SIW_TERM(DDP, DDP_UNTAGGED, DDP_U_VERSION);
		break;
	case SIW_RX_E_RDMAP_VERSION:
		rx->term = SIW_TERM(RDMAP, RDMAP_REMOTE_OP, RDMAP_VERSION);
		break;
	case SIW_RX_E_OPCODE:
	case SIW_RX_E_TAGGED:
	case SIW_RX_E_ATOMIC_OP:
		rx->term = SIW_TERM(RDMAP, RDMAP_REMOTE_OP, RDMAP_OPCODE);
		break;
	case SIW_RX_E_QN:
		rx->term = SIW_TERM(DDP, DDP_UNTAGGED, DDP_U_INVALID_QN);
		break;
	case SIW_RX_E_MO:
	case SIW_RX_E_MO_WRAP:
		rx->term = SIW_TERM(DDP, DDP_UNTAGGED, DDP_U_INVALID_MO);
		break;
	case SIW_RX_E_NOT_LAST:
	case SIW_RX_E_MSG_LEN:
		rx->term = SIW_TERM(RDMAP, RDMAP_REMOTE_OP, RDMAP_UNSPECIFIED);
		break;
	case SIW_RX_E_TO_WRAP:
		rx->term = SIW_TERM(DDP, DDP_TAGGED, DDP_T_TO_WRAP);
		break;
	case SIW_RX_E_READ_WRAP:
		rx->term = SIW_TERM(RDMAP, RDMAP_REMOTE_PROT, RDMAP_TO_WRAP);
		break;
	case SIW_RX_E_CRC:
		rx->term = SIW_TERM(LLP, LLP_MPA, LLP_CRC);
		break;
	case SIW_RX_E_CALLER:
		/* siw_rx_fail() set the code. */
		break;
	default:
		/* A bug on our side, not the peer's. */
		rx->err = SIW_RX_E_MISUSE;
		rx->term = SIW_TERM(RDMAP, RDMAP_REMOTE_OP, RDMAP_CATA_STREAM);
		break;
	}
	return -1;
}

static void rx_start_segment(struct siw_rx *rx)
{
	rx->state = SIW_RX_HDR;
	rx->crc = siw_crc32c_init();
	rx->hdr_len = RX_LEAD_LEN;
	rx->have = 0;
	rx->trl_have = 0;
	rx->payload_left = 0;
	rx->trailer_len = 0;
	rx->hdr_pos = rx->pos;
	memset(&rx->hdr, 0, sizeof(rx->hdr));
}

void siw_rx_init(struct siw_rx *rx, bool crc_enabled)
{
	memset(rx, 0, sizeof(*rx));
	rx->crc_on = crc_enabled;
	rx->opmask = SIW_RX_OPS_ALL;
	rx_start_segment(rx);
}

void siw_rx_set_markers(struct siw_rx *rx, bool on)
{
	rx->markers = on;
}

/* A marker is due, or one is half read, before the next stream octet. */
static bool rx_at_marker(const struct siw_rx *rx)
{
	if (!rx->markers)
		return false;
	if (rx->state != SIW_RX_HDR && rx->state != SIW_RX_PAYLOAD &&
	    rx->state != SIW_RX_TRAILER)
		return false;
	return rx->mk_have || siw_mark_due(rx->pos);
}

/* At most @len octets up to the next marker. */
static u32 rx_clip(const struct siw_rx *rx, u32 len)
{
	u32 room;

	if (!rx->markers)
		return len;
	room = siw_mark_room(rx->pos);
	return len < room ? len : room;
}

void siw_rx_set_opcodes(struct siw_rx *rx, u16 mask)
{
	rx->opmask = mask & SIW_RX_OPS_ALL;
}

struct siw_rx_want siw_rx_want(const struct siw_rx *rx)
{
	struct siw_rx_want w = { .state = rx->state, .len = 0 };

	if (rx_at_marker(rx)) {
		w.state = SIW_RX_MARKER;
		w.len = SIW_MPA_MARKER_SIZE - rx->mk_have;
		return w;
	}
	switch (rx->state) {
	case SIW_RX_HDR:
		w.len = rx->hdr_len - rx->have;
		break;
	case SIW_RX_PAYLOAD:
		w.len = rx->payload_left;
		break;
	case SIW_RX_TRAILER:
		w.len = rx->trailer_len - rx->trl_have;
		break;
	default:
		break;
	}
	w.len = rx_clip(rx, w.len);
	return w;
}

/*
 * The first four octets are in: check what they say and work out the
 * header length of this segment.
 */
static int rx_parse_lead(struct siw_rx *rx)
{
	struct siw_iwarp_hdr *h = &rx->hdr;
	u8 ddp = rx->raw[RX_DDP_OFF];
	u8 rdmap = rx->raw[RX_DDP_OFF + 1];
	const struct siw_op_info *oi;
	u32 seg_len, hdr_len;

	h->ulpdu_len = get_be16(rx->raw);
	h->tagged = ddp & SIW_DDP_F_TAGGED;
	h->last = ddp & SIW_DDP_F_LAST;
	h->ddp_rsvd = ddp & SIW_DDP_RSVD_MASK;
	h->rdmap_rsvd = rdmap & SIW_RDMAP_RSVD_MASK;
	h->opcode = rdmap & SIW_RDMAP_OPCODE_MASK;

	/*
	 * Nothing shorter than a tagged DDP header is a DDP segment; the
	 * control octets just read would not even belong to the ULPDU.
	 */
	if (h->ulpdu_len < sizeof(struct siw_ddp_tagged))
		return rx_error(rx, SIW_RX_E_ULPDU_LEN);
	if ((ddp & SIW_DDP_DV_MASK) != SIW_DDP_VERSION)
		return rx_error(rx, SIW_RX_E_DDP_VERSION);
	if ((rdmap & SIW_RDMAP_RV_MASK) >> SIW_RDMAP_RV_SHIFT !=
	    SIW_RDMAP_VERSION)
		return rx_error(rx, SIW_RX_E_RDMAP_VERSION);

	oi = siw_op_info(h->opcode);
	if (!oi || !(rx->opmask & (1U << h->opcode)))
		return rx_error(rx, SIW_RX_E_OPCODE);
	if (oi->tagged != h->tagged)
		return rx_error(rx, SIW_RX_E_TAGGED);

	seg_len = SIW_MPA_LEN_SIZE + h->ulpdu_len;
	hdr_len = oi->hdr_len;
	if (seg_len < hdr_len)
		return rx_error(rx, SIW_RX_E_ULPDU_LEN);

	if (h->opcode == SIW_RDMAP_TERMINATE) {
		/* The optional data is small: take it as header. */
		if (seg_len > hdr_len + SIW_TERM_MAX_OPT)
			return rx_error(rx, SIW_RX_E_MSG_LEN);
		hdr_len = seg_len;
	} else if (oi->no_payload && seg_len > hdr_len) {
		return rx_error(rx, SIW_RX_E_MSG_LEN);
	}
	rx->hdr_len = hdr_len;
	h->payload_len = seg_len - hdr_len;
	return 0;
}

static void rx_decode_rdmap(struct siw_rx *rx, const u8 *p)
{
	struct siw_iwarp_hdr *h = &rx->hdr;

	switch (h->opcode) {
	case SIW_RDMAP_READ_REQ: {
		struct siw_rdmap_read_req rr;

		memcpy(&rr, p, sizeof(rr));
		h->u.rreq.sink_stag = be32_to_cpu(rr.sink_stag);
		h->u.rreq.sink_to = be64_to_cpu(rr.sink_to);
		h->u.rreq.size = be32_to_cpu(rr.size);
		h->u.rreq.src_stag = be32_to_cpu(rr.src_stag);
		h->u.rreq.src_to = be64_to_cpu(rr.src_to);
		break;
	}
	case SIW_RDMAP_TERMINATE: {
		struct siw_rdmap_term t;
		u32 ctrl;

		memcpy(&t, p, sizeof(t));
		ctrl = be32_to_cpu(t.ctrl);
		siw_term_decode(ctrl, &h->u.term.code);
		h->u.term.hdrct = ctrl & (SIW_TERM_F_M | SIW_TERM_F_D |
					  SIW_TERM_F_R);
		h->u.term.rsvd = ctrl & SIW_TERM_RSVD_MASK;
		h->u.term.opt_len = rx->hdr_len - RX_UNTAGGED_HDR - sizeof(t);
		break;
	}
	case SIW_RDMAP_IMM:
	case SIW_RDMAP_IMM_SE: {
		struct siw_rdmap_imm im;

		memcpy(&im, p, sizeof(im));
		h->u.imm = be64_to_cpu(im.data);
		break;
	}
	case SIW_RDMAP_ATOMIC_REQ: {
		struct siw_rdmap_atomic_req ar;
		u32 op;

		memcpy(&ar, p, sizeof(ar));
		op = be32_to_cpu(ar.op);
		h->u.areq.op = op & SIW_ATOMIC_OP_MASK;
		h->u.areq.rsvd = op & ~(u32)SIW_ATOMIC_OP_MASK;
		h->u.areq.req_id = be32_to_cpu(ar.req_id);
		h->u.areq.stag = be32_to_cpu(ar.stag);
		h->u.areq.to = be64_to_cpu(ar.to);
		h->u.areq.add_swap = be64_to_cpu(ar.add_swap);
		h->u.areq.add_swap_mask = be64_to_cpu(ar.add_swap_mask);
		h->u.areq.cmp = be64_to_cpu(ar.cmp);
		h->u.areq.cmp_mask = be64_to_cpu(ar.cmp_mask);
		break;
	}
	case SIW_RDMAP_ATOMIC_RESP: {
		struct siw_rdmap_atomic_resp ap;

		memcpy(&ap, p, sizeof(ap));
		h->u.aresp.req_id = be32_to_cpu(ap.req_id);
		h->u.aresp.orig = be64_to_cpu(ap.orig);
		break;
	}
	default:
		break;
	}
}

/* True if [to, to + len) does not fit below 2^64. */
static bool rx_to_wraps(u64 to, u32 len)
{
	return len && to > ~0ULL - (len - 1);
}

/* The whole header is in: decode and check it. */
static int rx_parse_hdr(struct siw_rx *rx)
{
	struct siw_iwarp_hdr *h = &rx->hdr;
	const struct siw_op_info *oi = siw_op_info(h->opcode);
	const u8 *p = rx->raw + RX_DDP_OFF;

	if (h->tagged) {
		struct siw_ddp_tagged t;

		memcpy(&t, p, sizeof(t));
		h->stag = be32_to_cpu(t.stag);
		h->to = be64_to_cpu(t.to);
		if (rx_to_wraps(h->to, h->payload_len))
			return rx_error(rx, SIW_RX_E_TO_WRAP);
	} else {
		struct siw_ddp_untagged u;

		memcpy(&u, p, sizeof(u));
		h->inval_stag = be32_to_cpu(u.inval_stag);
		h->qn = be32_to_cpu(u.qn);
		h->msn = be32_to_cpu(u.msn);
		h->mo = be32_to_cpu(u.mo);

		if (h->qn != oi->qn)
			return rx_error(rx, SIW_RX_E_QN);
		if (oi->single) {
			if (h->mo)
				return rx_error(rx, SIW_RX_E_MO);
			if (!h->last)
				return rx_error(rx, SIW_RX_E_NOT_LAST);
		} else if ((u64)h->mo + h->payload_len > 0x100000000ULL) {
			return rx_error(rx, SIW_RX_E_MO_WRAP);
		}
		rx_decode_rdmap(rx, rx->raw + RX_RDMAP_OFF);

		if (h->opcode == SIW_RDMAP_READ_REQ &&
		    (rx_to_wraps(h->u.rreq.sink_to, h->u.rreq.size) ||
		     rx_to_wraps(h->u.rreq.src_to, h->u.rreq.size)))
			return rx_error(rx, SIW_RX_E_READ_WRAP);
		if (h->opcode == SIW_RDMAP_ATOMIC_REQ &&
		    h->u.areq.op >= SIW_ATOMIC_NUM_OPS)
			return rx_error(rx, SIW_RX_E_ATOMIC_OP);
	}

	rx->payload_left = h->payload_len;
	rx->trailer_len = siw_fpdu_trailer_len(h->ulpdu_len);
	rx->state = SIW_RX_HDR_DONE;
	return 0;
}

static int rx_check_trailer(struct siw_rx *rx)
{
	u32 pad = rx->trailer_len - SIW_MPA_CRC_SIZE;
	struct siw_mpa_trailer t;
	u32 crc;

	if (rx->crc_on) {
		/* Pad octets (and a marker after them) are in rx->crc. */
		crc = siw_crc32c_final(rx->crc);
		memcpy(&t, rx->trailer + pad, sizeof(t));
		if (le32_to_cpu(t.crc) != crc)
			return rx_error(rx, SIW_RX_E_CRC);
	}
	rx->state = SIW_RX_SEG_DONE;
	return 0;
}

/*
 * Marker octets. The one before an FPDU's length field points to that
 * field (0), any other back to the length field of the FPDU around it.
 */
static int rx_feed_marker(struct siw_rx *rx, const u8 *src, u32 len)
{
	u32 n = SIW_MPA_MARKER_SIZE - rx->mk_have, at;

	if (n > len)
		n = len;
	memcpy(rx->mk + rx->mk_have, src, n);
	if (rx->crc_on)
		rx->crc = siw_crc32c_update(rx->crc, src, n);
	rx->mk_have += n;
	rx->pos += n;
	if (rx->mk_have < SIW_MPA_MARKER_SIZE)
		return n;
	rx->mk_have = 0;
	at = rx->pos - SIW_MPA_MARKER_SIZE;
	if (rx->state == SIW_RX_HDR && !rx->have) {
		rx->hdr_pos = rx->pos;
		if (!siw_mark_ok(rx->mk, 0))
			return rx_error(rx, SIW_RX_E_MARKER);
	} else if (!siw_mark_ok(rx->mk, at - rx->hdr_pos)) {
		return rx_error(rx, SIW_RX_E_MARKER);
	}
	return n;
}

static int rx_feed_trailer(struct siw_rx *rx, const u8 *src, u32 len)
{
	u32 pad = rx->trailer_len - SIW_MPA_CRC_SIZE;
	u32 n = rx_clip(rx, rx->trailer_len - rx->trl_have);

	if (n > len)
		n = len;
	/* Pad octets go into the CRC as they come, before any marker. */
	if (rx->crc_on && rx->trl_have < pad)
		rx->crc = siw_crc32c_update(rx->crc, src,
					    n < pad - rx->trl_have ?
					    n : pad - rx->trl_have);
	memcpy(rx->trailer + rx->trl_have, src, n);
	rx->trl_have += n;
	rx->pos += n;
	if (rx->trl_have == rx->trailer_len && rx_check_trailer(rx))
		return -1;
	return n;
}

int siw_rx_feed_hdr(struct siw_rx *rx, const void *buf, u32 len)
{
	const u8 *src = buf;
	u32 done = 0, n;

	if (rx_at_marker(rx))
		return rx_feed_marker(rx, src, len);
	if (rx->state == SIW_RX_TRAILER)
		return rx_feed_trailer(rx, src, len);
	if (rx->state != SIW_RX_HDR)
		return rx_error(rx, SIW_RX_E_MISUSE);

	while (done < len && !rx_at_marker(rx)) {
		n = rx_clip(rx, rx->hdr_len - rx->have);
		if (n > len - done)
			n = len - done;
		memcpy(rx->raw + rx->have, src + done, n);
		if (rx->crc_on)
			rx->crc = siw_crc32c_update(rx->crc, src + done, n);
		rx->have += n;
		rx->pos += n;
		done += n;

		if (rx->have < rx->hdr_len)
			break;
		if (rx->hdr_len == RX_LEAD_LEN) {
			/* Every real header is longer than the lead. */
			if (rx_parse_lead(rx))
				return -1;
			continue;
		}
		if (rx_parse_hdr(rx))
			return -1;
		break;
	}
	return done;
}

int siw_rx_next(struct siw_rx *rx)
{
	switch (rx->state) {
	case SIW_RX_HDR_DONE:
		rx->state = rx->payload_left ? SIW_RX_PAYLOAD : SIW_RX_TRAILER;
		return 0;
	case SIW_RX_SEG_DONE:
		rx_start_segment(rx);
		return 0;
	default:
		return rx_error(rx, SIW_RX_E_MISUSE);
	}
}

int siw_rx_payload_done(struct siw_rx *rx, u32 n, u32 crc_state)
{
	if (rx->state != SIW_RX_PAYLOAD || n > rx->payload_left ||
	    n > rx_clip(rx, n) || (n && rx_at_marker(rx)))
		return rx_error(rx, SIW_RX_E_MISUSE);

	if (rx->crc_on)
		rx->crc = crc_state;
	rx->payload_left -= n;
	rx->pos += n;
	if (!rx->payload_left)
		rx->state = SIW_RX_TRAILER;
	return 0;
}

int siw_rx_payload(struct siw_rx *rx, const void *buf, u32 n)
{
	u32 crc = rx->crc;

	if (rx->state != SIW_RX_PAYLOAD || n > rx->payload_left ||
	    n > rx_clip(rx, n) || (n && rx_at_marker(rx)))
		return rx_error(rx, SIW_RX_E_MISUSE);
	if (rx->crc_on)
		crc = siw_crc32c_update(crc, buf, n);
	return siw_rx_payload_done(rx, n, crc);
}

const u8 *siw_rx_term_opt(const struct siw_rx *rx)
{
	return rx->raw + RX_UNTAGGED_HDR + sizeof(struct siw_rdmap_term);
}

void siw_rx_fail(struct siw_rx *rx, const struct siw_term_code *tc)
{
	if (rx->state == SIW_RX_ERROR)
		return;
	rx->term = *tc;
	rx_error(rx, SIW_RX_E_CALLER);
}

const u8 *siw_rx_err_hdr(const struct siw_rx *rx, u32 *len, u16 *hdrct)
{
	u32 ddp_len;

	*len = 0;
	*hdrct = 0;
	if (rx->state != SIW_RX_ERROR)
		return rx->raw;

	/* A marker that disagrees makes the length field suspect too. */
	if (rx->err == SIW_RX_E_ULPDU_LEN || rx->err == SIW_RX_E_MARKER ||
	    rx->have < RX_TAGGED_HDR)
		return rx->raw;

	ddp_len = (rx->raw[RX_DDP_OFF] & SIW_DDP_F_TAGGED) ?
		  RX_TAGGED_HDR : RX_UNTAGGED_HDR;
	if (rx->have < ddp_len)
		return rx->raw;

	*len = ddp_len;
	*hdrct = SIW_TERM_F_M | SIW_TERM_F_D;
	if (rx->hdr.opcode == SIW_RDMAP_READ_REQ && !rx->hdr.tagged &&
	    rx->have >= RX_RREQ_HDR) {
		*len = RX_RREQ_HDR;
		*hdrct |= SIW_TERM_F_R;
	}
	return rx->raw;
}
