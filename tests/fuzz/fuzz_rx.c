// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: the receive parser.
 *
 * Input layout:
 *   octet 0	flags: bit 0 CRC on, bit 1 only RFC 5040 opcodes,
 *		bit 2 hand payload in through siw_rx_payload_done(),
 *		bit 3 the consumer fails the stream at header (flags >> 4)
 *   octet 1	bits 0-5 n: number of chunk size octets that follow (0..63),
 *		bit 6 the stream carries MPA markers
 *   n octets	chunk sizes, used round robin (0 means 1, else the value)
 *   rest	the TCP byte stream
 *
 * So the fuzzer controls both the octets and how they are split up. The
 * driver acts like the kernel's receive loop and checks the parser's
 * contract on every step.
 */
#include <stddef.h>
#include <stdint.h>

#include "rx.h"
#include "crc32c.h"
#include "fuzz_check.h"

static u8 sink[SIW_MPA_MAX_ULPDU + 1];

static void check_hdr(const struct siw_rx *rx)
{
	const struct siw_iwarp_hdr *h = siw_rx_hdr(rx);
	const struct siw_op_info *oi = siw_op_info(h->opcode);
	u32 hl;

	FUZZ_ASSERT(oi);
	FUZZ_ASSERT(oi->tagged == h->tagged);
	hl = h->opcode == SIW_RDMAP_TERMINATE ?
	     oi->hdr_len + h->u.term.opt_len : oi->hdr_len;
	FUZZ_ASSERT(hl <= SIW_FPDU_MAX_HDR);
	FUZZ_ASSERT(hl + h->payload_len == h->ulpdu_len + 2u);
	if (oi->no_payload || h->opcode == SIW_RDMAP_TERMINATE)
		FUZZ_ASSERT(!h->payload_len);
	if (h->opcode == SIW_RDMAP_TERMINATE)
		FUZZ_ASSERT(h->u.term.opt_len <= SIW_TERM_MAX_OPT);
	if (oi->single)
		FUZZ_ASSERT(h->last && !h->mo);
	if (!oi->tagged)
		FUZZ_ASSERT(h->qn == oi->qn);
	if (oi->tagged && h->payload_len)
		FUZZ_ASSERT(h->to + (h->payload_len - 1) >= h->to);
	if (h->opcode == SIW_RDMAP_ATOMIC_REQ)
		FUZZ_ASSERT(h->u.areq.op < SIW_ATOMIC_NUM_OPS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const u8 *chunks, *s;
	size_t nchunks, len, pos = 0, ci = 0, steps = 0, nhdr = 0;
	bool crc_on, via_done, markers;
	struct siw_rx rx;
	u8 flags;

	if (size < 2)
		return 0;
	flags = data[0];
	nchunks = data[1] & 63;
	markers = data[1] & 64;
	if (size < 2 + nchunks)
		return 0;
	chunks = data + 2;
	s = chunks + nchunks;
	len = size - 2 - nchunks;
	crc_on = flags & 1;
	via_done = flags & 4;

	siw_rx_init(&rx, crc_on);
	siw_rx_set_markers(&rx, markers);
	if (flags & 2)
		siw_rx_set_opcodes(&rx, SIW_RX_OPS_RFC5040);

	for (;;) {
		struct siw_rx_want w = siw_rx_want(&rx);
		size_t give;
		int rv;

		/* Every step consumes octets or moves on: bounded loop. */
		FUZZ_ASSERT(steps++ <= 4 * len + 16);

		if (nchunks) {
			give = chunks[ci++ % nchunks];
			if (!give)
				give = 1;
		} else {
			give = len - pos;
		}
		if (give > len - pos)
			give = len - pos;

		switch (w.state) {
		case SIW_RX_MARKER:
			FUZZ_ASSERT(markers);
			FUZZ_ASSERT(w.len >= 1 && w.len <= SIW_MPA_MARKER_SIZE);
			/* fall through */
		case SIW_RX_HDR:
			FUZZ_ASSERT(w.state != SIW_RX_HDR ||
				    (w.len >= 1 && w.len <= SIW_FPDU_MAX_HDR));
			/* fall through */
		case SIW_RX_TRAILER:
			FUZZ_ASSERT(w.state != SIW_RX_TRAILER ||
				    (w.len >= 1 &&
				     w.len <= SIW_FPDU_MAX_TRAILER));
			if (!give)
				goto out;
			rv = siw_rx_feed_hdr(&rx, s + pos, (u32)give);
			if (rv < 0) {
				FUZZ_ASSERT(siw_rx_want(&rx).state ==
					    SIW_RX_ERROR);
				goto out;
			}
			FUZZ_ASSERT((size_t)rv <= give);
			FUZZ_ASSERT(rv > 0);
			if (give <= w.len)
				FUZZ_ASSERT((size_t)rv == give);
			pos += rv;
			break;
		case SIW_RX_HDR_DONE:
			check_hdr(&rx);
			if (siw_rx_hdr(&rx)->opcode == SIW_RDMAP_TERMINATE)
				memcpy(sink, siw_rx_term_opt(&rx),
				       siw_rx_hdr(&rx)->u.term.opt_len);
			if ((flags & 8) && nhdr++ == (size_t)(flags >> 4)) {
				static const struct siw_term_code tc = {
					SIW_TERM_LAYER_DDP, SIW_TERM_DDP_TAGGED,
					SIW_TERM_DDP_T_INVALID_STAG,
				};

				siw_rx_fail(&rx, &tc);
				FUZZ_ASSERT(siw_rx_error(&rx) ==
					    SIW_RX_E_CALLER);
				goto out;
			}
			FUZZ_ASSERT(!siw_rx_next(&rx));
			break;
		case SIW_RX_PAYLOAD:
			FUZZ_ASSERT(w.len >= 1 && w.len <= SIW_MPA_MAX_ULPDU);
			FUZZ_ASSERT(!markers || w.len <= SIW_MPA_MARKER_SPACING);
			if (!give)
				goto out;
			if (give > w.len)
				give = w.len;
			memcpy(sink, s + pos, give);
			if (via_done)
				rv = siw_rx_payload_done(&rx, (u32)give,
					siw_crc32c_update(siw_rx_crc_state(&rx),
							  sink, give));
			else
				rv = siw_rx_payload(&rx, sink, (u32)give);
			FUZZ_ASSERT(rv == 0);
			pos += give;
			break;
		case SIW_RX_SEG_DONE:
			FUZZ_ASSERT(!siw_rx_next(&rx));
			FUZZ_ASSERT(siw_rx_want(&rx).state == SIW_RX_HDR ||
				    (markers && siw_rx_want(&rx).state ==
				     SIW_RX_MARKER));
			break;
		case SIW_RX_ERROR:
			goto out;
		default:
			FUZZ_ASSERT(0);
		}
		FUZZ_ASSERT(pos <= len);
	}
out:
	if (siw_rx_want(&rx).state == SIW_RX_ERROR) {
		const struct siw_term_code *tc = siw_rx_term(&rx);
		u32 n;
		u16 hdrct;

		FUZZ_ASSERT(siw_rx_error(&rx) != SIW_RX_OK);
		FUZZ_ASSERT(siw_rx_error(&rx) != SIW_RX_E_MISUSE);
		FUZZ_ASSERT(tc->layer <= SIW_TERM_LAYER_LLP);
		FUZZ_ASSERT(siw_rx_err_str(siw_rx_error(&rx)));
		siw_rx_err_hdr(&rx, &n, &hdrct);
		FUZZ_ASSERT(n <= SIW_FPDU_MAX_HDR);
		FUZZ_ASSERT(!n || (hdrct & SIW_TERM_F_D));
		/* Sticky. */
		FUZZ_ASSERT(siw_rx_feed_hdr(&rx, s, (u32)len) == -1);
		FUZZ_ASSERT(siw_rx_want(&rx).state == SIW_RX_ERROR);
		if (!crc_on)
			FUZZ_ASSERT(siw_rx_error(&rx) != SIW_RX_E_CRC);
		if (!markers)
			FUZZ_ASSERT(siw_rx_error(&rx) != SIW_RX_E_MARKER);
	} else {
		FUZZ_ASSERT(siw_rx_error(&rx) == SIW_RX_OK);
	}
	return 0;
}
