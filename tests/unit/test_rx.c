// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Receive parser: valid FPDUs of every opcode fed whole, one octet at a
 * time and in random chunks, with and without CRC; CRC errors; every
 * malformed-input class and the Terminate code it maps to; the sticky
 * error state; the caller's side of the API.
 */
#include <stdlib.h>

#include "siw_test.h"
#include "rx.h"
#include "crc32c.h"
#include "marker.h"
#include "util.h"

#define MAX_SEGS	512
#define STREAM_MAX	(1 << 20)

enum chunking { WHOLE, BYTEWISE, RANDOM };
static const char * const chunk_names[] = { "whole", "bytewise", "random" };

struct drive_out {
	int segs;
	struct siw_iwarp_hdr hdr[MAX_SEGS];
	u8 term_opt[MAX_SEGS][SIW_TERM_MAX_OPT];
	u8 payload[STREAM_MAX];
	size_t paylen;
	size_t consumed;
	enum siw_rx_err err;
	struct siw_term_code term;
	bool api_ok;		/* feed never over-consumed, etc. */
};

static struct drive_out out;
static u8 stream[STREAM_MAX];

/* One FPDU: header, payload, pad, CRC (zero if !crc). */
static size_t put_fpdu(u8 *dst, const struct siw_iwarp_hdr *h, const u8 *pl,
		       u32 plen, bool crc)
{
	int hl = siw_fpdu_build_hdr(dst, SIW_FPDU_MAX_HDR, h, plen);
	u32 st;

	if (hl < 0)
		return 0;
	if (plen)
		memcpy(dst + hl, pl, plen);
	st = siw_crc32c_update(siw_crc32c_init(), dst, hl + plen);
	return hl + plen + siw_fpdu_build_trailer(dst + hl + plen,
						  hl + plen - 2, st, crc);
}

static u32 chunk(enum chunking mode, uint64_t *seed, size_t left)
{
	u32 n = left > 0x7fffffff ? 0x7fffffff : (u32)left;

	if (mode == BYTEWISE)
		return n ? 1 : 0;
	if (mode == RANDOM) {
		u32 r = 1 + rnd_below(seed, 37);

		return r < n ? r : n;
	}
	return n;
}

/* Run the parser over stream[0..len) as a kernel receive loop would. */
static void drive(struct siw_rx *rx, size_t len, enum chunking mode,
		  uint64_t seed)
{
	size_t pos = 0, steps = 0, limit = 4 * len + 64;
	bool alt = false;

	memset(&out, 0, sizeof(out));
	out.api_ok = true;

	while (steps++ < limit) {
		struct siw_rx_want w = siw_rx_want(rx);
		u32 n;
		int rv;

		switch (w.state) {
		case SIW_RX_HDR:
		case SIW_RX_TRAILER:
		case SIW_RX_MARKER:
			if (!w.len)
				out.api_ok = false;
			n = chunk(mode, &seed, len - pos);
			if (!n)
				goto done;
			rv = siw_rx_feed_hdr(rx, stream + pos, n);
			if (rv < 0)
				goto done;
			if ((u32)rv > n || (n <= w.len && (u32)rv != n) ||
			    (u32)rv > w.len + SIW_FPDU_MAX_HDR)
				out.api_ok = false;
			pos += rv;
			break;
		case SIW_RX_HDR_DONE:
			if (out.segs < MAX_SEGS) {
				const struct siw_iwarp_hdr *h = siw_rx_hdr(rx);

				out.hdr[out.segs] = *h;
				if (h->opcode == SIW_RDMAP_TERMINATE)
					memcpy(out.term_opt[out.segs],
					       siw_rx_term_opt(rx),
					       h->u.term.opt_len);
			}
			siw_rx_next(rx);
			break;
		case SIW_RX_PAYLOAD:
			n = chunk(mode, &seed, len - pos);
			if (!n)
				goto done;
			if (n > w.len)
				n = w.len;
			memcpy(out.payload + out.paylen, stream + pos, n);
			out.paylen += n;
			/* Alternate the two ways of handing in payload. */
			alt = !alt;
			if (alt) {
				rv = siw_rx_payload(rx, stream + pos, n);
			} else {
				u32 c = siw_crc32c_update(siw_rx_crc_state(rx),
							  stream + pos, n);

				rv = siw_rx_payload_done(rx, n, c);
			}
			if (rv)
				out.api_ok = false;
			pos += n;
			break;
		case SIW_RX_SEG_DONE:
			out.segs++;
			siw_rx_next(rx);
			break;
		case SIW_RX_ERROR:
			goto done;
		}
	}
	out.api_ok = false;	/* no progress: must never happen */
done:
	out.consumed = pos;
	out.err = siw_rx_error(rx);
	out.term = *siw_rx_term(rx);
}

static bool hdr_equal(const struct siw_iwarp_hdr *a,
		      const struct siw_iwarp_hdr *b, u32 plen)
{
	const struct siw_op_info *oi = siw_op_info(a->opcode);

	if (a->opcode != b->opcode || b->tagged != oi->tagged ||
	    b->last != (oi->single || a->last))
		return false;
	if (a->opcode == SIW_RDMAP_TERMINATE) {
		if (b->payload_len || b->u.term.opt_len != plen)
			return false;
	} else if (b->payload_len != plen) {
		return false;
	}
	if (oi->tagged)
		return a->stag == b->stag && a->to == b->to;
	if (b->qn != oi->qn || b->msn != a->msn ||
	    b->mo != (oi->single ? 0 : a->mo))
		return false;
	if ((a->opcode == SIW_RDMAP_SEND_INV ||
	     a->opcode == SIW_RDMAP_SEND_SE_INV) &&
	    a->inval_stag != b->inval_stag)
		return false;

	switch (a->opcode) {
	case SIW_RDMAP_READ_REQ:
		return !memcmp(&a->u.rreq, &b->u.rreq, sizeof(a->u.rreq));
	case SIW_RDMAP_TERMINATE:
		return !memcmp(&a->u.term.code, &b->u.term.code, 3) &&
		       b->u.term.hdrct == (plen ? a->u.term.hdrct : 0);
	case SIW_RDMAP_IMM:
	case SIW_RDMAP_IMM_SE:
		return a->u.imm == b->u.imm;
	case SIW_RDMAP_ATOMIC_REQ:
		return a->u.areq.op == b->u.areq.op &&
		       a->u.areq.req_id == b->u.areq.req_id &&
		       a->u.areq.stag == b->u.areq.stag &&
		       a->u.areq.to == b->u.areq.to &&
		       a->u.areq.add_swap == b->u.areq.add_swap &&
		       a->u.areq.add_swap_mask == b->u.areq.add_swap_mask &&
		       a->u.areq.cmp == b->u.areq.cmp &&
		       a->u.areq.cmp_mask == b->u.areq.cmp_mask;
	case SIW_RDMAP_ATOMIC_RESP:
		return a->u.aresp.req_id == b->u.aresp.req_id &&
		       a->u.aresp.orig == b->u.aresp.orig;
	default:
		return true;
	}
}

/* A header for @op with every field filled from the PRNG. */
static void random_hdr(struct siw_iwarp_hdr *h, unsigned int op,
		       uint64_t *seed, u32 plen)
{
	memset(h, 0, sizeof(*h));
	h->opcode = op;
	h->last = rnd_next(seed) & 1;
	h->stag = rnd_next(seed);
	h->to = rnd_next(seed) >> 1;	/* no TO wrap */
	h->msn = rnd_next(seed);
	h->mo = rnd_below(seed, 1u << 30);
	h->inval_stag = rnd_next(seed);
	switch (op) {
	case SIW_RDMAP_READ_REQ:
		h->u.rreq.sink_stag = rnd_next(seed);
		h->u.rreq.sink_to = rnd_next(seed) >> 1;
		h->u.rreq.size = rnd_next(seed);
		h->u.rreq.src_stag = rnd_next(seed);
		h->u.rreq.src_to = rnd_next(seed) >> 1;
		break;
	case SIW_RDMAP_TERMINATE:
		h->u.term.code.layer = rnd_below(seed, 3);
		h->u.term.code.etype = rnd_below(seed, 4);
		h->u.term.code.ecode = rnd_next(seed);
		h->u.term.hdrct = (rnd_next(seed) & 7) << 13;
		break;
	case SIW_RDMAP_IMM:
	case SIW_RDMAP_IMM_SE:
		h->u.imm = rnd_next(seed);
		break;
	case SIW_RDMAP_ATOMIC_REQ:
		h->u.areq.op = rnd_below(seed, SIW_ATOMIC_NUM_OPS);
		h->u.areq.req_id = rnd_next(seed);
		h->u.areq.stag = rnd_next(seed);
		h->u.areq.to = rnd_next(seed) & ~7ULL;
		h->u.areq.add_swap = rnd_next(seed);
		h->u.areq.add_swap_mask = rnd_next(seed);
		h->u.areq.cmp = rnd_next(seed);
		h->u.areq.cmp_mask = rnd_next(seed);
		break;
	case SIW_RDMAP_ATOMIC_RESP:
		h->u.aresp.req_id = rnd_next(seed);
		h->u.aresp.orig = rnd_next(seed);
		break;
	}
	(void)plen;
}

/* Every opcode, several payload sizes, CRC on/off, three chunkings. */
static void valid_opcodes(void)
{
	static const u32 lens[] = { 0, 1, 2, 3, 4, 5, 17, 100, 1500, 9000 };
	static u8 pl[9000];
	uint64_t seed = 7;
	unsigned int op;

	rnd_fill(&seed, pl, sizeof(pl));
	for (op = 0; op < SIW_RDMAP_NUM_OPCODES; op++) {
		const struct siw_op_info *oi = siw_op_info(op);
		bool good = true;
		int runs = 0;
		size_t li;

		for (li = 0; li < ARRAY_SIZE(lens); li++) {
			u32 plen = lens[li];
			int crc, mode;

			if (oi->no_payload && plen)
				continue;
			if (op == SIW_RDMAP_TERMINATE && plen > SIW_TERM_MAX_OPT)
				continue;
			for (crc = 0; crc < 2; crc++)
			for (mode = WHOLE; mode <= RANDOM; mode++) {
				struct siw_iwarp_hdr h;
				struct siw_rx rx;
				size_t len;
				struct siw_rx_want w;

				random_hdr(&h, op, &seed, plen);
				len = put_fpdu(stream, &h, pl, plen, crc);
				siw_rx_init(&rx, crc);
				drive(&rx, len, mode, seed);
				w = siw_rx_want(&rx);
				runs++;
				if (out.err || out.segs != 1 || !out.api_ok ||
				    out.consumed != len ||
				    w.state != SIW_RX_HDR || w.len != 4 ||
				    !hdr_equal(&h, &out.hdr[0], plen) ||
				    (op != SIW_RDMAP_TERMINATE &&
				     (out.paylen != plen ||
				      memcmp(out.payload, pl, plen))) ||
				    (op == SIW_RDMAP_TERMINATE &&
				     memcmp(out.term_opt[0], pl, plen))) {
					if (good)
						siw_test_diag("len %u crc %d %s: err \"%s\" segs %d consumed %zu/%zu",
							      plen, crc,
							      chunk_names[mode],
							      siw_rx_err_str(out.err),
							      out.segs,
							      out.consumed, len);
					good = false;
				}
			}
		}
		siw_test_ok(good && runs >= 6,
			    "rx: opcode %u parsed whole, bytewise, in chunks (%d runs)",
			    op, runs);
	}
}

/*
 * What drive() gave against the @nseg FPDUs sent (payloads from @pl),
 * after the whole stream of @len octets: parsed to the end, headers and
 * payload as sent.
 */
static void check_parsed(const struct siw_iwarp_hdr *sent, const u32 *plens,
			 int nseg, const u8 *pl, size_t len, int round)
{
	size_t want_pay = 0, off = 0;
	int i;

	for (i = 0; i < nseg; i++)
		if (sent[i].opcode != SIW_RDMAP_TERMINATE)
			want_pay += plens[i];
	CHECK_EQ(out.err, SIW_RX_OK);
	CHECK_EQ(out.segs, nseg);
	CHECK_EQ(out.consumed, len);
	CHECK_EQ(out.paylen, want_pay);
	CHECK(out.api_ok);
	for (i = 0; i < nseg && i < out.segs; i++) {
		if (!hdr_equal(&sent[i], &out.hdr[i], plens[i])) {
			CHECK(!"header mismatch");
			siw_test_diag("round %d segment %d opcode %u", round, i,
				      sent[i].opcode);
			return;
		}
		if (sent[i].opcode == SIW_RDMAP_TERMINATE)
			continue;
		if (memcmp(out.payload + off, pl, plens[i])) {
			CHECK(!"payload mismatch");
			return;
		}
		off += plens[i];
	}
}

/* Long mixed streams of random FPDUs in random chunks. */
static void mixed_streams(void)
{
	static struct siw_iwarp_hdr sent[MAX_SEGS];
	static u32 plens[MAX_SEGS];
	static u8 pl[4000];
	uint64_t seed = 99;
	int round;

	rnd_fill(&seed, pl, sizeof(pl));
	for (round = 0; round < 6; round++) {
		bool crc = round & 1;
		size_t len = 0;
		struct siw_rx rx;
		int i, nseg = 300;

		for (i = 0; i < nseg; i++) {
			unsigned int op = rnd_below(&seed, SIW_RDMAP_NUM_OPCODES);
			const struct siw_op_info *oi = siw_op_info(op);
			u32 plen = oi->no_payload ? 0 :
				   rnd_below(&seed, op == SIW_RDMAP_TERMINATE ?
					     SIW_TERM_MAX_OPT + 1 : 2000);

			random_hdr(&sent[i], op, &seed, plen);
			plens[i] = plen;
			len += put_fpdu(stream + len, &sent[i], pl, plen, crc);
		}
		siw_rx_init(&rx, crc);
		drive(&rx, len, round < 2 ? BYTEWISE : RANDOM, seed + round);
		check_parsed(sent, plens, nseg, pl, len, round);
	}
}

/* Every octet of an FPDU, corrupted: which error, if any. */
static void crc_errors(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_SEND, .msn = 3,
				   .last = true };
	size_t len = put_fpdu(stream, &h, (const u8 *)"hello", 5, true);
	size_t i;
	int crc_errs = 0;

	CHECK_EQ(len, 32);
	for (i = 0; i < len; i++) {
		struct siw_rx rx;

		stream[i] ^= 0x01;
		siw_rx_init(&rx, true);
		drive(&rx, len, RANDOM, i);
		/*
		 * Octets the parser validates first give another error;
		 * a longer ULPDU length leaves it waiting for more. RsvdULP,
		 * MSN, MO, payload, pad and CRC are covered by the CRC only.
		 */
		if ((i >= 4 && i < 8) || i >= 12) {
			CHECK_EQ(out.err, SIW_RX_E_CRC);
			crc_errs++;
		} else {
			CHECK(out.err != SIW_RX_OK || !out.segs);
		}
		if (out.err == SIW_RX_E_CRC) {
			CHECK_EQ(out.term.layer, SIW_TERM_LAYER_LLP);
			CHECK_EQ(out.term.etype, SIW_TERM_LLP_MPA);
			CHECK_EQ(out.term.ecode, SIW_TERM_LLP_CRC);
			CHECK_EQ(out.segs, 0);
		}
		/* CRC not negotiated: payload, pad, CRC octets pass. */
		if (i >= 20) {
			siw_rx_init(&rx, false);
			drive(&rx, len, WHOLE, 0);
			CHECK_EQ(out.err, SIW_RX_OK);
			CHECK_EQ(out.segs, 1);
		}
		stream[i] ^= 0x01;
	}
	CHECK_EQ(crc_errs, 4 + 8 + 12);
}

/* ---- malformed input: one row per class ---------------------------- */

struct bad_row {
	const char *name;
	unsigned int opcode;
	u32 plen;
	void (*prep)(struct siw_iwarp_hdr *h);
	int off1;		/* octet to patch, -1 none */
	u8 val1;
	int off2;
	u8 val2;
	enum siw_rx_err err;
	u8 layer, etype, ecode;
};

static void prep_mo_wrap(struct siw_iwarp_hdr *h)
{
	h->mo = 0xfffffff9;	/* + 8 octets passes 2^32 */
}

static void prep_mo_edge(struct siw_iwarp_hdr *h)
{
	h->mo = 0xfffffff8;	/* + 8 octets ends at 2^32: fine */
}

static void prep_to_wrap(struct siw_iwarp_hdr *h)
{
	h->to = 0xfffffffffffffffcULL;	/* + 5 wraps */
}

static void prep_sink_wrap(struct siw_iwarp_hdr *h)
{
	h->u.rreq.sink_to = ~0ULL;
	h->u.rreq.size = 2;
}

static void prep_src_wrap(struct siw_iwarp_hdr *h)
{
	h->u.rreq.src_to = ~0ULL - 10;
	h->u.rreq.size = 12;
}

static void prep_src_edge(struct siw_iwarp_hdr *h)
{
	h->u.rreq.src_to = ~0ULL - 10;
	h->u.rreq.size = 11;
}

static void prep_atomic(struct siw_iwarp_hdr *h)
{
	h->u.areq.op = SIW_ATOMIC_SWAP;
}

#define LLP	SIW_TERM_LAYER_LLP
#define DDP	SIW_TERM_LAYER_DDP
#define RDMAP	SIW_TERM_LAYER_RDMAP
#define OK_ROW	SIW_RX_OK, 0, 0, 0

static const struct bad_row bad_rows[] = {
	{ "ULPDU length 13 (below any DDP header)", SIW_RDMAP_WRITE, 0, NULL,
	  0, 0, 1, 13, SIW_RX_E_ULPDU_LEN, LLP, 0, SIW_TERM_LLP_MARKER_LEN },
	{ "ULPDU length 0", SIW_RDMAP_SEND, 0, NULL, 0, 0, 1, 0,
	  SIW_RX_E_ULPDU_LEN, LLP, 0, SIW_TERM_LLP_MARKER_LEN },
	{ "Send with ULPDU 17 (untagged header is 18)", SIW_RDMAP_SEND, 0,
	  NULL, 1, 17, -1, 0,
	  SIW_RX_E_ULPDU_LEN, LLP, 0, SIW_TERM_LLP_MARKER_LEN },
	{ "Read Request with ULPDU 45", SIW_RDMAP_READ_REQ, 0, NULL, 1, 45,
	  -1, 0, SIW_RX_E_ULPDU_LEN, LLP, 0, SIW_TERM_LLP_MARKER_LEN },
	{ "Read Request with ULPDU 47", SIW_RDMAP_READ_REQ, 0, NULL, 1, 47,
	  -1, 0, SIW_RX_E_MSG_LEN, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_UNSPECIFIED },
	{ "Immediate Data with ULPDU 27", SIW_RDMAP_IMM, 0, NULL, 1, 27,
	  -1, 0, SIW_RX_E_MSG_LEN, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_UNSPECIFIED },
	{ "Atomic Response with ULPDU 29", SIW_RDMAP_ATOMIC_RESP, 0, NULL,
	  1, 29, -1, 0, SIW_RX_E_ULPDU_LEN, LLP, 0, SIW_TERM_LLP_MARKER_LEN },
	{ "Terminate with 49 octets of optional data", SIW_RDMAP_TERMINATE,
	  48, NULL, 1, 18 + 4 + 49, -1, 0, SIW_RX_E_MSG_LEN, RDMAP,
	  SIW_TERM_RDMAP_REMOTE_OP, SIW_TERM_RDMAP_UNSPECIFIED },
	{ "tagged DDP version 0", SIW_RDMAP_WRITE, 4, NULL, 2, 0xc0, -1, 0,
	  SIW_RX_E_DDP_VERSION, DDP, SIW_TERM_DDP_TAGGED,
	  SIW_TERM_DDP_T_VERSION },
	{ "untagged DDP version 2", SIW_RDMAP_SEND, 4, NULL, 2, 0x42, -1, 0,
	  SIW_RX_E_DDP_VERSION, DDP, SIW_TERM_DDP_UNTAGGED,
	  SIW_TERM_DDP_U_VERSION },
	{ "RDMAP version 0", SIW_RDMAP_SEND, 4, NULL, 3, 0x03, -1, 0,
	  SIW_RX_E_RDMAP_VERSION, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_VERSION },
	{ "RDMAP version 3", SIW_RDMAP_WRITE, 4, NULL, 3, 0xc0, -1, 0,
	  SIW_RX_E_RDMAP_VERSION, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_VERSION },
	{ "opcode 12", SIW_RDMAP_SEND, 4, NULL, 3, 0x4c, -1, 0,
	  SIW_RX_E_OPCODE, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
	{ "opcode 15", SIW_RDMAP_SEND, 4, NULL, 3, 0x4f, -1, 0,
	  SIW_RX_E_OPCODE, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
	{ "RDMA Write untagged", SIW_RDMAP_WRITE, 8, NULL, 2, 0x41, -1, 0,
	  SIW_RX_E_TAGGED, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
	{ "Send tagged", SIW_RDMAP_SEND, 4, NULL, 2, 0xc1, -1, 0,
	  SIW_RX_E_TAGGED, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
	{ "Send on QN 1", SIW_RDMAP_SEND, 4, NULL, 11, 1, -1, 0,
	  SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_QN },
	{ "Send on QN 2^24", SIW_RDMAP_SEND, 4, NULL, 8, 1, -1, 0,
	  SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_QN },
	{ "Read Request on QN 0", SIW_RDMAP_READ_REQ, 0, NULL, 11, 0, -1, 0,
	  SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_QN },
	{ "Terminate on QN 3", SIW_RDMAP_TERMINATE, 0, NULL, 11, 3, -1, 0,
	  SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_QN },
	{ "Atomic Request on QN 0", SIW_RDMAP_ATOMIC_REQ, 0, prep_atomic,
	  11, 0, -1, 0, SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED,
	  SIW_TERM_DDP_U_INVALID_QN },
	{ "Immediate Data on QN 1", SIW_RDMAP_IMM_SE, 0, NULL, 11, 1, -1, 0,
	  SIW_RX_E_QN, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_QN },
	{ "Read Request with MO 4", SIW_RDMAP_READ_REQ, 0, NULL, 19, 4, -1, 0,
	  SIW_RX_E_MO, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_MO },
	{ "Terminate with MO 256", SIW_RDMAP_TERMINATE, 4, NULL, 18, 1, -1, 0,
	  SIW_RX_E_MO, DDP, SIW_TERM_DDP_UNTAGGED, SIW_TERM_DDP_U_INVALID_MO },
	{ "Read Request without L", SIW_RDMAP_READ_REQ, 0, NULL, 2, 0x01,
	  -1, 0, SIW_RX_E_NOT_LAST, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_UNSPECIFIED },
	{ "Atomic Response without L", SIW_RDMAP_ATOMIC_RESP, 0, NULL, 2,
	  0x01, -1, 0, SIW_RX_E_NOT_LAST, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_UNSPECIFIED },
	{ "Send MO + length beyond 2^32", SIW_RDMAP_SEND, 8, prep_mo_wrap,
	  -1, 0, -1, 0, SIW_RX_E_MO_WRAP, DDP, SIW_TERM_DDP_UNTAGGED,
	  SIW_TERM_DDP_U_INVALID_MO },
	{ "Send MO + length ending at 2^32 (valid)", SIW_RDMAP_SEND, 8,
	  prep_mo_edge, -1, 0, -1, 0, OK_ROW },
	{ "Write TO + length beyond 2^64", SIW_RDMAP_WRITE, 5, prep_to_wrap,
	  -1, 0, -1, 0, SIW_RX_E_TO_WRAP, DDP, SIW_TERM_DDP_TAGGED,
	  SIW_TERM_DDP_T_TO_WRAP },
	{ "Write TO + length ending at 2^64 (valid)", SIW_RDMAP_WRITE, 4,
	  prep_to_wrap, -1, 0, -1, 0, OK_ROW },
	{ "Read Request sink TO wraps", SIW_RDMAP_READ_REQ, 0, prep_sink_wrap,
	  -1, 0, -1, 0, SIW_RX_E_READ_WRAP, RDMAP, SIW_TERM_RDMAP_REMOTE_PROT,
	  SIW_TERM_RDMAP_TO_WRAP },
	{ "Read Request source TO wraps", SIW_RDMAP_READ_REQ, 0, prep_src_wrap,
	  -1, 0, -1, 0, SIW_RX_E_READ_WRAP, RDMAP, SIW_TERM_RDMAP_REMOTE_PROT,
	  SIW_TERM_RDMAP_TO_WRAP },
	{ "Read Request source TO at the edge (valid)", SIW_RDMAP_READ_REQ, 0,
	  prep_src_edge, -1, 0, -1, 0, OK_ROW },
	{ "Atomic Request opcode 3", SIW_RDMAP_ATOMIC_REQ, 0, NULL, 23, 3,
	  -1, 0, SIW_RX_E_ATOMIC_OP, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
	{ "Atomic Request opcode 15", SIW_RDMAP_ATOMIC_REQ, 0, NULL, 23, 0xff,
	  -1, 0, SIW_RX_E_ATOMIC_OP, RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
	  SIW_TERM_RDMAP_OPCODE },
};

static void malformed(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad_rows); i++) {
		const struct bad_row *r = &bad_rows[i];
		struct siw_iwarp_hdr h = { .opcode = r->opcode, .last = true,
					   .stag = 1, .to = 0x1000, .msn = 1 };
		u8 pl[64] = { 0 };
		bool good = true;
		int crc, mode;
		size_t len;

		if (r->prep)
			r->prep(&h);
		for (crc = 0; crc < 2; crc++)
		for (mode = WHOLE; mode <= RANDOM; mode++) {
			struct siw_rx rx;

			len = put_fpdu(stream, &h, pl, r->plen, crc);
			if (r->off1 >= 0)
				stream[r->off1] = r->val1;
			if (r->off2 >= 0)
				stream[r->off2] = r->val2;
			/* Room for a longer ULPDU than was built. */
			if (r->err != SIW_RX_OK) {
				memset(stream + len, 0, 256);
				len += 256;
			}
			siw_rx_init(&rx, crc);
			drive(&rx, len, mode, i);
			if (out.err != r->err || !out.api_ok) {
				good = false;
				siw_test_diag("crc %d %s: got \"%s\"", crc,
					      chunk_names[mode],
					      siw_rx_err_str(out.err));
				continue;
			}
			if (r->err == SIW_RX_OK) {
				good &= out.segs == 1;
				continue;
			}
			good &= siw_rx_want(&rx).state == SIW_RX_ERROR;
			good &= out.segs == 0;
			good &= out.term.layer == r->layer &&
				out.term.etype == r->etype &&
				out.term.ecode == r->ecode;
			if (out.term.layer != r->layer ||
			    out.term.etype != r->etype ||
			    out.term.ecode != r->ecode)
				siw_test_diag("term %u/%u/0x%02x, want %u/%u/0x%02x",
					      out.term.layer, out.term.etype,
					      out.term.ecode, r->layer,
					      r->etype, r->ecode);
		}
		siw_test_ok(good, "rx: %s -> %s", r->name,
			    siw_rx_err_str(r->err));
	}
}

static void disabled_opcodes(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_ATOMIC_RESP };
	size_t len = put_fpdu(stream, &h, NULL, 0, true);
	struct siw_rx rx;

	siw_rx_init(&rx, true);
	siw_rx_set_opcodes(&rx, SIW_RX_OPS_RFC5040);
	drive(&rx, len, WHOLE, 0);
	CHECK_EQ(out.err, SIW_RX_E_OPCODE);
	CHECK_EQ(out.term.ecode, SIW_TERM_RDMAP_OPCODE);

	h.opcode = SIW_RDMAP_SEND;
	len = put_fpdu(stream, &h, NULL, 0, true);
	siw_rx_init(&rx, true);
	siw_rx_set_opcodes(&rx, SIW_RX_OPS_RFC5040);
	drive(&rx, len, WHOLE, 0);
	CHECK_EQ(out.err, SIW_RX_OK);
	CHECK_EQ(out.segs, 1);
}

static void reserved_bits_ignored(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_SEND, .last = true };
	size_t len;
	struct siw_rx rx;
	u32 st;

	put_fpdu(stream, &h, (const u8 *)"abcd", 4, true);
	stream[2] |= SIW_DDP_RSVD_MASK;
	stream[3] |= SIW_RDMAP_RSVD_MASK;
	stream[4] = 0xee;		/* RsvdULP of a plain Send */
	/* Fix up the CRC over the changed octets. */
	st = siw_crc32c_update(siw_crc32c_init(), stream, 24);
	len = 24 + siw_fpdu_build_trailer(stream + 24, 22, st, true);
	siw_rx_init(&rx, true);
	drive(&rx, len, BYTEWISE, 0);
	CHECK_EQ(out.err, SIW_RX_OK);
	CHECK_EQ(out.hdr[0].ddp_rsvd, SIW_DDP_RSVD_MASK);
	CHECK_EQ(out.hdr[0].rdmap_rsvd, SIW_RDMAP_RSVD_MASK);
}

static void want_and_consume(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_READ_REQ };
	struct siw_rx rx;
	struct siw_rx_want w;
	size_t len;

	siw_rx_init(&rx, true);
	w = siw_rx_want(&rx);
	CHECK_EQ(w.state, SIW_RX_HDR);
	CHECK_EQ(w.len, 4);

	len = put_fpdu(stream, &h, NULL, 0, true);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, 0), 0);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, 4), 4);
	w = siw_rx_want(&rx);
	CHECK_EQ(w.state, SIW_RX_HDR);
	CHECK_EQ(w.len, 44);
	/* Given everything, it takes only the header. */
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream + 4, len - 4), 44);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_HDR_DONE);
	CHECK_EQ(siw_rx_next(&rx), 0);
	w = siw_rx_want(&rx);
	CHECK_EQ(w.state, SIW_RX_TRAILER);
	CHECK_EQ(w.len, 4);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream + 48, 100), 4);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_SEG_DONE);
	CHECK_EQ(siw_rx_next(&rx), 0);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_HDR);

	/* Zero length Write: straight from the header to the trailer. */
	h.opcode = SIW_RDMAP_WRITE;
	len = put_fpdu(stream, &h, NULL, 0, false);
	CHECK_EQ(len, 20);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, len), 16);
	CHECK_EQ(siw_rx_hdr(&rx)->payload_len, 0);
	siw_rx_next(&rx);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_TRAILER);

	/* A Terminate's optional data is part of its header. */
	h.opcode = SIW_RDMAP_TERMINATE;
	len = put_fpdu(stream, &h, (const u8 *)"0123456789", 10, false);
	siw_rx_init(&rx, false);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, 4), 4);
	CHECK_EQ(siw_rx_want(&rx).len, 30);
}

static void sticky_errors(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_SEND, .last = true };
	struct siw_rx rx;
	size_t len = put_fpdu(stream, &h, (const u8 *)"abcd", 4, true);
	struct siw_term_code tc = { 1, 1, 1 };

	stream[3] = 0x0f;	/* bad version and opcode */
	siw_rx_init(&rx, true);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, len), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_RDMAP_VERSION);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, len), -1);
	CHECK_EQ(siw_rx_next(&rx), -1);
	CHECK_EQ(siw_rx_payload_done(&rx, 0, 0), -1);
	CHECK_EQ(siw_rx_payload(&rx, stream, 1), -1);
	siw_rx_fail(&rx, &tc);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_RDMAP_VERSION);
	CHECK_EQ(siw_rx_term(&rx)->ecode, SIW_TERM_RDMAP_VERSION);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_ERROR);
	CHECK_EQ(siw_rx_want(&rx).len, 0);
}

static void caller_errors(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_WRITE, .stag = 0x77 };
	struct siw_term_code bad_stag = {
		SIW_TERM_LAYER_DDP, SIW_TERM_DDP_TAGGED,
		SIW_TERM_DDP_T_INVALID_STAG,
	};
	struct siw_rx rx;
	size_t len = put_fpdu(stream, &h, (const u8 *)"abcd", 4, true);
	const u8 *p;
	u32 n;
	u16 hdrct;

	siw_rx_init(&rx, true);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, len), 16);
	CHECK_EQ(siw_rx_hdr(&rx)->stag, 0x77);
	/* Not an error yet: nothing to report. */
	siw_rx_err_hdr(&rx, &n, &hdrct);
	CHECK_EQ(n, 0);
	/* The consumer finds no such STag. */
	siw_rx_fail(&rx, &bad_stag);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_CALLER);
	CHECK_EQ(siw_rx_term(&rx)->layer, SIW_TERM_LAYER_DDP);
	CHECK_EQ(siw_rx_term(&rx)->ecode, SIW_TERM_DDP_T_INVALID_STAG);
	p = siw_rx_err_hdr(&rx, &n, &hdrct);
	CHECK_EQ(n, 16);
	CHECK_EQ(hdrct, SIW_TERM_F_M | SIW_TERM_F_D);
	CHECK_MEM(p, stream, 16);

	/* A Read Request with a bad CRC: the whole RDMAP header too. */
	h.opcode = SIW_RDMAP_READ_REQ;
	len = put_fpdu(stream, &h, NULL, 0, true);
	stream[len - 1] ^= 0x80;
	siw_rx_init(&rx, true);
	drive(&rx, len, BYTEWISE, 0);
	CHECK_EQ(out.err, SIW_RX_E_CRC);
	p = siw_rx_err_hdr(&rx, &n, &hdrct);
	CHECK_EQ(n, 48);
	CHECK_EQ(hdrct, SIW_TERM_F_M | SIW_TERM_F_D | SIW_TERM_F_R);
	CHECK_MEM(p, stream, 48);

	/* An error in the first four octets: no header to quote. */
	stream[2] = 0;
	siw_rx_init(&rx, true);
	drive(&rx, len, WHOLE, 0);
	CHECK_EQ(out.err, SIW_RX_E_DDP_VERSION);
	siw_rx_err_hdr(&rx, &n, &hdrct);
	CHECK_EQ(n, 0);
	CHECK_EQ(hdrct, 0);
}

static void api_misuse(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_SEND };
	struct siw_rx rx;
	size_t len = put_fpdu(stream, &h, (const u8 *)"abcd", 4, true);

	siw_rx_init(&rx, true);
	CHECK_EQ(siw_rx_payload_done(&rx, 1, 0), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_MISUSE);

	siw_rx_init(&rx, true);
	CHECK_EQ(siw_rx_next(&rx), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_MISUSE);

	siw_rx_init(&rx, true);
	siw_rx_feed_hdr(&rx, stream, len);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_HDR_DONE);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, 1), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_MISUSE);

	siw_rx_init(&rx, true);
	siw_rx_feed_hdr(&rx, stream, len);
	siw_rx_next(&rx);
	CHECK_EQ(siw_rx_payload(&rx, stream + 20, 5), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_MISUSE);
	CHECK_EQ(siw_rx_term(&rx)->ecode, SIW_TERM_RDMAP_CATA_STREAM);
}

/* ---- MPA markers ---------------------------------------------------- */

static u8 clean[STREAM_MAX];
static u32 clean_end[MAX_SEGS];	/* each FPDU's end in clean[] */

/*
 * The oracle: RFC 5044 section 5 read octet by octet, apart from
 * marker.c. A marker goes before every octet of an FPDU (length field to
 * CRC) at a stream position that is a multiple of 512; the one before
 * the length field points to it (0), the others back to it; the CRC
 * covers all of the FPDU's octets before it, markers too.
 */
static size_t ref_mark(u8 *dst, u32 *pos, const u8 *fpdu, u32 len, bool crc)
{
	u32 body = len - 4, hdr = *pos, i, c;
	size_t o = 0;

	for (i = 0; i <= body; i++) {
		if (*pos % 512 == 0) {
			u32 ptr = i ? *pos - hdr : 0;

			dst[o++] = 0;
			dst[o++] = 0;
			dst[o++] = (u8)(ptr >> 8);
			dst[o++] = (u8)ptr;
			*pos += 4;
			if (!i)
				hdr = *pos;
		}
		if (i == body)
			break;
		dst[o++] = fpdu[i];
		(*pos)++;
	}
	c = crc ? ref_crc32c(dst, o) : 0;
	dst[o++] = (u8)c;
	dst[o++] = (u8)(c >> 8);
	dst[o++] = (u8)(c >> 16);
	dst[o++] = (u8)(c >> 24);
	*pos += 4;
	return o;
}

/* The same FPDU through marker.h, as the kernel's TX does it. */
static size_t api_mark(u8 *dst, struct siw_mark_tx *m, const u8 *fpdu,
		       u32 len, bool crc)
{
	size_t o = siw_mark_begin(m, dst);
	__le32 c;

	o += siw_mark_copy(m, dst + o, fpdu, len - 4);
	o += siw_mark_flush(m, dst + o);
	c = cpu_to_le32(crc ? siw_crc32c(dst, o) : 0);
	o += siw_mark_copy(m, dst + o, &c, sizeof(c));
	return o;
}

/*
 * @nseg random FPDUs with payloads below @maxpl into clean[] (and sent[]):
 * returns the clean stream's length.
 */
static size_t clean_stream(struct siw_iwarp_hdr *sent, u32 *plens, int nseg,
			   u32 maxpl, const u8 *pl, uint64_t *seed)
{
	static const unsigned int ops[] = { SIW_RDMAP_SEND, SIW_RDMAP_WRITE,
					    SIW_RDMAP_READ_RESP,
					    SIW_RDMAP_READ_REQ,
					    SIW_RDMAP_TERMINATE };
	size_t len = 0;
	int i;

	for (i = 0; i < nseg; i++) {
		unsigned int op = ops[rnd_below(seed, ARRAY_SIZE(ops))];
		u32 plen = op == SIW_RDMAP_READ_REQ ? 0 :
			   rnd_below(seed, op == SIW_RDMAP_TERMINATE ?
				     SIW_TERM_MAX_OPT + 1 : maxpl);

		random_hdr(&sent[i], op, seed, plen);
		plens[i] = plen;
		len += put_fpdu(clean + len, &sent[i], pl, plen, false);
		clean_end[i] = len;
	}
	return len;
}

/* Mark clean[] FPDU by FPDU both ways; they must agree. Returns length. */
static size_t mark_stream(int nseg, bool crc, bool *same)
{
	struct siw_mark_tx m = { 0 };
	static u8 alt[STREAM_MAX];
	size_t len = 0, alen = 0, start = 0;
	u32 pos = 0;
	int i;

	*same = true;
	for (i = 0; i < nseg; i++) {
		u32 flen = clean_end[i] - start;
		u32 p0 = pos;
		size_t n = ref_mark(stream + len, &pos, clean + start, flen, crc);

		if (siw_mark_wire_len(p0, flen) != n)
			*same = false;
		alen += api_mark(alt + alen, &m, clean + start, flen, crc);
		len += n;
		start = clean_end[i];
	}
	if (alen != len || memcmp(alt, stream, len) || m.pos != pos)
		*same = false;
	return len;
}

/*
 * Random FPDU streams with markers: marker.h writes what the oracle
 * writes, and the parser with markers on gives what it gives for the
 * same stream without them, in every chunking.
 */
static void markers_roundtrip(void)
{
	static struct siw_iwarp_hdr sent[MAX_SEGS];
	static u32 plens[MAX_SEGS];
	static u8 pl[3000];
	uint64_t seed = 512;
	int round;

	rnd_fill(&seed, pl, sizeof(pl));
	for (round = 0; round < 6; round++) {
		bool crc = !(round & 1), same;
		int nseg = 200;
		size_t len;
		struct siw_rx rx;

		clean_stream(sent, plens, nseg, round < 2 ? 600 : 3000, pl,
			     &seed);
		len = mark_stream(nseg, crc, &same);
		CHECK(same);
		siw_rx_init(&rx, crc);
		siw_rx_set_markers(&rx, true);
		drive(&rx, len, (enum chunking)(round % 3), seed + round);
		check_parsed(sent, plens, nseg, pl, len, round);
	}
}

/* Known answers: positions, FPDUPTRs and RFC 5044's MULPDU. */
static void markers_known(void)
{
	static const u32 emss[][2] = {
		/* EMSS, EMSS - (6 + 4 * ceil(EMSS / 512) + EMSS % 4) */
		{ 1001, 986 }, { 1448, 1430 }, { 1460, 1442 },
		{ 8948, 8870 }, { 512, 502 }, { 16384, 16250 },
	};
	struct siw_mark_tx m = { 0 };
	u8 body[1096], out_buf[1200];
	size_t i, o;

	for (i = 0; i < ARRAY_SIZE(emss); i++) {
		CHECK_EQ(siw_mark_mulpdu(emss[i][0]), emss[i][1]);
		if (siw_mark_mulpdu(emss[i][0]) != emss[i][1])
			siw_test_diag("EMSS %u", emss[i][0]);
	}
	CHECK_EQ(siw_mark_mulpdu(8), 0);
	/* No FPDU so large that a marker is 64 KiB from its length field. */
	{
		u32 ul = siw_mark_mulpdu(200000), clean = siw_fpdu_wire_len(ul);
		u32 p, worst = 0;

		CHECK_EQ(ul, siw_mark_mulpdu(SIW_MARK_MAX_WIRE));
		CHECK(ul > 64000);
		for (p = 0; p < 512; p += 4)
			if (siw_mark_wire_len(p, clean) > worst)
				worst = siw_mark_wire_len(p, clean);
		CHECK(worst <= SIW_MARK_MAX_WIRE);
	}

	/* 1100 octets at position 0: markers at 0, 512 and 1024. */
	memset(body, 0xab, sizeof(body));
	CHECK_EQ(siw_mark_wire_len(0, 1100), 1112);
	o = siw_mark_begin(&m, out_buf);
	o += siw_mark_copy(&m, out_buf + o, body, sizeof(body));
	o += siw_mark_flush(&m, out_buf + o);
	CHECK_EQ(o, 1108);
	CHECK_MEM(out_buf, "\0\0\0\0", 4);
	CHECK_MEM(out_buf + 512, "\0\0\x01\xfc", 4);	/* 508 */
	CHECK_MEM(out_buf + 1024, "\0\0\x03\xfc", 4);	/* 1020 */
	CHECK_EQ(m.pos, 1108);

	/* Ending right at 1536 - 4: the marker before the CRC is its. */
	m.pos = 1024 + 100;
	CHECK_EQ(siw_mark_begin(&m, out_buf), 0);
	o = siw_mark_copy(&m, out_buf, body, 412);
	CHECK_EQ(siw_mark_flush(&m, out_buf + o), 4);
	CHECK_MEM(out_buf + o, "\0\0\x01\x9c", 4);	/* 412 */
	/* Wrapping positions are still multiples of 512 apart. */
	CHECK_EQ(siw_mark_wire_len(0xfffffffcU, 8), 12);
	CHECK(siw_mark_due(0));
	CHECK(!siw_mark_due(4));
	CHECK_EQ(siw_mark_room(0xfffffffcU), 4);

	CHECK(siw_mark_ok((const u8 *)"\0\0\x01\xfc", 508));
	CHECK(siw_mark_ok((const u8 *)"\0\0\x01\xff", 508));
	CHECK(!siw_mark_ok((const u8 *)"\0\x01\x01\xfc", 508));
	CHECK(!siw_mark_ok((const u8 *)"\0\0\x02\x00", 508));
}

/* Re-mark clean[] (one FPDU per entry) and drive it with markers on. */
static void drive_marked(size_t len, bool crc, enum chunking mode)
{
	struct siw_rx rx;

	siw_rx_init(&rx, crc);
	siw_rx_set_markers(&rx, true);
	drive(&rx, len, mode, 5);
}

/* A peer's marker that does not say what the stream says. */
static void markers_hostile(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_WRITE, .stag = 7 };
	static u8 pl[1500];
	uint64_t seed = 3;
	size_t len, at, i;
	bool same;

	rnd_fill(&seed, pl, sizeof(pl));
	len = put_fpdu(clean, &h, pl, 1200, false);
	clean_end[0] = len;
	len += put_fpdu(clean + len, &h, pl, 300, false);
	clean_end[1] = len;

	for (i = 0; i < 2; i++) {
		bool crc = i;

		len = mark_stream(2, crc, &same);
		CHECK(same);
		drive_marked(len, crc, RANDOM);
		CHECK_EQ(out.err, SIW_RX_OK);
		CHECK_EQ(out.segs, 2);

		/* An inner FPDUPTR one word off. */
		stream[512 + 3] += 4;
		drive_marked(len, crc, BYTEWISE);
		CHECK_EQ(out.err, SIW_RX_E_MARKER);
		CHECK_EQ(out.term.layer, SIW_TERM_LAYER_LLP);
		CHECK_EQ(out.term.etype, SIW_TERM_LLP_MPA);
		CHECK_EQ(out.term.ecode, SIW_TERM_LLP_MARKER_LEN);
		CHECK_EQ(out.consumed, 515);	/* the marker's last octet */
		stream[512 + 3] -= 4;

		/* The two low bits of FPDUPTR are ignored, but CRC'd. */
		stream[512 + 3] |= 1;
		drive_marked(len, crc, WHOLE);
		CHECK_EQ(out.err, crc ? SIW_RX_E_CRC : SIW_RX_OK);
		stream[512 + 3] &= ~1;

		/* Reserved bits of the lead marker. */
		stream[0] = 0x80;
		drive_marked(len, crc, RANDOM);
		CHECK_EQ(out.err, SIW_RX_E_MARKER);
		CHECK_EQ(out.segs, 0);
		stream[0] = 0;

		/* A lead marker pointing anywhere but at its FPDU. */
		stream[3] = 4;
		drive_marked(len, crc, WHOLE);
		CHECK_EQ(out.err, SIW_RX_E_MARKER);
		stream[3] = 0;
	}

	/* Markers the other way: a lead marker left out of the CRC. */
	len = mark_stream(2, true, &same);
	at = clean_end[0] + 4 * 3;	/* first FPDU: markers at 0, 512, 1024 */
	{
		u32 c = ref_crc32c(stream + 4, at - 4 - 4);

		stream[at - 4] = (u8)c;
		stream[at - 3] = (u8)(c >> 8);
		stream[at - 2] = (u8)(c >> 16);
		stream[at - 1] = (u8)(c >> 24);
	}
	drive_marked(len, true, RANDOM);
	CHECK_EQ(out.err, SIW_RX_E_CRC);
	CHECK_EQ(out.segs, 0);

	/* A stream without markers to a parser that expects them. */
	memcpy(stream, clean, clean_end[1]);
	drive_marked(clean_end[1], false, WHOLE);
	CHECK_EQ(out.err, SIW_RX_E_MARKER);
}

/* Payload may not be handed in across a marker. */
static void markers_api(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_WRITE };
	static u8 pl[600];
	struct siw_rx rx;
	struct siw_rx_want w;
	size_t len;
	bool same;

	len = put_fpdu(clean, &h, pl, 600, false);
	clean_end[0] = len;
	len = mark_stream(1, false, &same);
	siw_rx_init(&rx, false);
	siw_rx_set_markers(&rx, true);
	w = siw_rx_want(&rx);
	CHECK_EQ(w.state, SIW_RX_MARKER);
	CHECK_EQ(w.len, 4);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream, 3), 3);
	CHECK_EQ(siw_rx_want(&rx).len, 1);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream + 3, 100), 1);
	CHECK_EQ(siw_rx_want(&rx).state, SIW_RX_HDR);
	CHECK_EQ(siw_rx_feed_hdr(&rx, stream + 4, 100), 16);
	CHECK_EQ(siw_rx_next(&rx), 0);
	w = siw_rx_want(&rx);
	CHECK_EQ(w.state, SIW_RX_PAYLOAD);
	CHECK_EQ(w.len, 512 - 20);	/* up to the marker at 512 */
	CHECK_EQ(siw_rx_payload(&rx, stream + 20, w.len + 1), -1);
	CHECK_EQ(siw_rx_error(&rx), SIW_RX_E_MISUSE);
	(void)len;
}

static void err_strings(void)
{
	int e;

	for (e = 0; e < SIW_RX_NUM_ERRS; e++)
		CHECK(strcmp(siw_rx_err_str(e), "unknown error"));
	CHECK_STR(siw_rx_err_str(SIW_RX_NUM_ERRS), "unknown error");
	CHECK_STR(siw_rx_err_str(SIW_RX_E_CRC), "MPA CRC mismatch");
}

int main(void)
{
	valid_opcodes();
	RUN(mixed_streams);
	RUN(crc_errors);
	malformed();
	RUN(disabled_opcodes);
	RUN(reserved_bits_ignored);
	RUN(want_and_consume);
	RUN(sticky_errors);
	RUN(caller_errors);
	RUN(api_misuse);
	RUN(markers_known);
	RUN(markers_roundtrip);
	RUN(markers_hostile);
	RUN(markers_api);
	RUN(err_strings);
	return siw_test_done();
}
