// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target: MPA frame parser and negotiation.
 *
 * Input layout:
 *   octet 0	local policy: bit 0 rev 2 (else 1), bits 1-2 CRC policy,
 *		bit 3 peer-to-peer, bits 4-6 RTR types
 *   octet 1	local IRD, octet 2 bits 0-6 local ORD, bit 7 markers wanted
 *   rest	a frame, parsed both as a request and as a reply
 *
 * A request that the responder accepts must give a reply that parses
 * back and that an initiator (which sent that request) accepts with the
 * same outcome.
 */
#include <stddef.h>
#include <stdint.h>

#include "mpa.h"
#include "fuzz_check.h"

static bool one_rtr(u8 rtr)
{
	return rtr == SIW_MPA_RTR_SEND || rtr == SIW_MPA_RTR_WRITE ||
	       rtr == SIW_MPA_RTR_READ;
}

static void check_info(const struct siw_mpa_info *mi, size_t flen,
		       size_t len)
{
	FUZZ_ASSERT(flen == SIW_MPA_HDR_LEN + mi->pd_len);
	FUZZ_ASSERT(flen <= len);
	FUZZ_ASSERT(mi->pd_len <= SIW_MPA_MAX_PD);
	FUZZ_ASSERT(mi->rev == 1 || mi->rev == 2);
	FUZZ_ASSERT(mi->ulp_pd_off + mi->ulp_pd_len == mi->pd_len);
	FUZZ_ASSERT(!mi->v2 || (mi->rev == 2 && mi->enhanced &&
				mi->pd_len >= SIW_MPA_V2_LEN));
	FUZZ_ASSERT(mi->ird <= SIW_MPA_V2_VAL_MASK);
	FUZZ_ASSERT(mi->ord <= SIW_MPA_V2_VAL_MASK);
	FUZZ_ASSERT(!(mi->rtr & ~SIW_MPA_RTR_ALL));
	FUZZ_ASSERT(!(mi->res & ~SIW_MPA_F_RES));
}

static void responder(const struct siw_mpa_policy *pol, const u8 *frame,
		      const struct siw_mpa_info *req)
{
	struct siw_mpa_policy ipol = *pol;
	struct siw_mpa_result res, ires;
	struct siw_mpa_info rep, back;
	u8 buf[SIW_MPA_MAX_FRAME];
	size_t flen;
	int n;

	siw_mpa_negotiate_req(pol, req, &res);
	FUZZ_ASSERT(siw_mpa_reason_str(res.reason));
	if (res.reason != SIW_MPA_OK) {
		FUZZ_ASSERT(res.reason != SIW_MPA_E_SHORT);
		siw_mpa_reply_info(pol, &res, false, &rep);
		FUZZ_ASSERT(rep.reject && !rep.markers);
		n = siw_mpa_build(buf, sizeof(buf), &rep, NULL, 0);
		FUZZ_ASSERT(n > 0);
		return;
	}
	/* Markers go to whoever set M, each direction on its own. */
	FUZZ_ASSERT(res.markers_tx == req->markers);
	FUZZ_ASSERT(res.markers_rx == pol->markers);
	FUZZ_ASSERT(!req->crc || res.crc);
	FUZZ_ASSERT(!(pol->crc == SIW_MPA_CRC_NEVER && req->crc));
	FUZZ_ASSERT(res.rev <= req->rev && res.rev >= 1 && res.rev <= 2);
	if (res.v2) {
		FUZZ_ASSERT(req->v2);
		FUZZ_ASSERT(res.ord <= req->ird && res.ord <= pol->ord);
		FUZZ_ASSERT(res.ird <= req->ord && res.ird <= pol->ird);
	}
	if (res.p2p)
		FUZZ_ASSERT(one_rtr(res.rtr) && (res.rtr & req->rtr & pol->rtr));
	FUZZ_ASSERT(res.large == (req->large && pol->large));

	/* Reply, echoing the consumer private data. */
	siw_mpa_reply_info(pol, &res, false, &rep);
	n = siw_mpa_build(buf, sizeof(buf), &rep,
			  frame + SIW_MPA_HDR_LEN + req->ulp_pd_off,
			  req->ulp_pd_len);
	FUZZ_ASSERT(n > 0);
	FUZZ_ASSERT(siw_mpa_parse(buf, n, true, &back, &flen) == SIW_MPA_OK);
	FUZZ_ASSERT(flen == (size_t)n);
	FUZZ_ASSERT(!back.reject && back.crc == res.crc &&
		    back.rev == res.rev && back.v2 == res.v2);
	FUZZ_ASSERT(back.large == res.large && back.large_taken == res.large);
	FUZZ_ASSERT(back.markers == pol->markers);

	/* The initiator that sent @req accepts the reply. */
	ipol.crc = SIW_MPA_CRC_PEER;
	siw_mpa_negotiate_rep(&ipol, req, &back, &ires);
	FUZZ_ASSERT(ires.reason == SIW_MPA_OK);
	FUZZ_ASSERT(ires.crc == res.crc && ires.rev == res.rev &&
		    ires.v2 == res.v2 && ires.p2p == res.p2p &&
		    ires.rtr == res.rtr && ires.large == res.large);
	FUZZ_ASSERT(ires.markers_tx == res.markers_rx &&
		    ires.markers_rx == res.markers_tx);
	if (ires.v2)
		FUZZ_ASSERT(ires.ord <= res.ird && res.ord <= ires.ird);
}

static void initiator(const struct siw_mpa_policy *pol,
		      const struct siw_mpa_info *rep)
{
	struct siw_mpa_info req;
	struct siw_mpa_result res;
	struct siw_term_code tc;

	siw_mpa_request_info(pol, &req);
	siw_mpa_negotiate_rep(pol, &req, rep, &res);
	FUZZ_ASSERT(siw_mpa_reason_str(res.reason));
	if (res.reason != SIW_MPA_OK) {
		FUZZ_ASSERT(siw_mpa_reason_term(res.reason, &tc) ==
			    (res.reason != SIW_MPA_E_REJECTED));
		return;
	}
	FUZZ_ASSERT(!rep->reject);
	FUZZ_ASSERT(req.markers == pol->markers);
	FUZZ_ASSERT(res.markers_tx == rep->markers &&
		    res.markers_rx == pol->markers);
	FUZZ_ASSERT(res.rev >= 1 && res.rev <= req.rev);
	FUZZ_ASSERT(!req.crc || res.crc);
	FUZZ_ASSERT(!(res.crc && pol->crc == SIW_MPA_CRC_NEVER));
	if (res.v2) {
		FUZZ_ASSERT(rep->ord <= req.ird);
		FUZZ_ASSERT(res.ord <= req.ord && res.ord <= rep->ird);
	}
	if (res.p2p)
		FUZZ_ASSERT(req.p2p && one_rtr(res.rtr) && (res.rtr & req.rtr));
	/* Large FPDUs only on our offer and the reply's taking it. */
	FUZZ_ASSERT(res.large == (pol->large && rep->large &&
				  rep->large_taken));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum siw_mpa_crc_policy crcs[4] = {
		SIW_MPA_CRC_NEVER, SIW_MPA_CRC_PEER, SIW_MPA_CRC_ALWAYS,
		SIW_MPA_CRC_PEER,
	};
	struct siw_mpa_policy pol;
	struct siw_mpa_info mi;
	enum siw_mpa_reason r;
	const u8 *frame;
	size_t len, flen;

	if (size < 3)
		return 0;
	pol.rev = (data[0] & 1) ? 2 : 1;
	pol.crc = crcs[(data[0] >> 1) & 3];
	pol.p2p = data[0] & 8;
	pol.rtr = (data[0] >> 4) & SIW_MPA_RTR_ALL;
	pol.large = data[0] & 0x80;
	pol.ird = data[1];
	pol.ord = data[2] & 0x7f;
	pol.markers = data[2] & 0x80;
	frame = data + 3;
	len = size - 3;

	r = siw_mpa_parse(frame, len, false, &mi, &flen);
	FUZZ_ASSERT(siw_mpa_reason_str(r));
	if (r == SIW_MPA_OK) {
		check_info(&mi, flen, len);
		responder(&pol, frame, &mi);
	} else {
		FUZZ_ASSERT(flen == 0);
		FUZZ_ASSERT(len >= SIW_MPA_HDR_LEN || r == SIW_MPA_E_SHORT);
	}

	r = siw_mpa_parse(frame, len, true, &mi, &flen);
	if (r == SIW_MPA_OK) {
		check_info(&mi, flen, len);
		initiator(&pol, &mi);
	}

	/* Split parsing agrees with one-shot parsing. */
	if (len >= SIW_MPA_HDR_LEN) {
		struct siw_mpa_info a;
		enum siw_mpa_reason ra = siw_mpa_parse_hdr(frame, false, &a);

		if (ra == SIW_MPA_OK && len - SIW_MPA_HDR_LEN >= a.pd_len)
			ra = siw_mpa_parse_pd(&a, frame + SIW_MPA_HDR_LEN,
					      len - SIW_MPA_HDR_LEN);
		else if (ra == SIW_MPA_OK)
			ra = SIW_MPA_E_SHORT;
		r = siw_mpa_parse(frame, len, false, &mi, &flen);
		FUZZ_ASSERT(ra == r);
	}
	return 0;
}
