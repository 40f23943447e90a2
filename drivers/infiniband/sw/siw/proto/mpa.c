// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA request/reply frames and connection setup negotiation.
 */
#include "mpa.h"

static const char * const mpa_reason_names[SIW_MPA_NUM_REASONS] = {
	[SIW_MPA_OK] = "accepted",
	[SIW_MPA_E_SHORT] = "MPA frame truncated",
	[SIW_MPA_E_KEY] = "MPA key is not the expected request or reply key",
	[SIW_MPA_E_REV] = "MPA revision not supported (siw speaks revisions 1 and 2)",
	[SIW_MPA_E_PD_LEN] = "MPA private data longer than 512 octets",
	[SIW_MPA_E_V2_SHORT] =
		"MPA enhanced frame without the 4 octet IRD/ORD private data",
	[SIW_MPA_E_CRC_REFUSED] =
		"peer requires MPA CRC, which local policy disables",
	[SIW_MPA_E_CRC_MISSING] =
		"peer reply turns off the MPA CRC that the request asked for",
	[SIW_MPA_E_REJECTED] = "peer rejected the connection",
	[SIW_MPA_E_REV_REPLY] =
		"MPA reply revision is invalid or higher than the request's",
	[SIW_MPA_E_NOT_ENHANCED] =
		"MPA revision 2 reply lacks the IRD/ORD data the request asked for",
	[SIW_MPA_E_IRD] = "peer ORD exceeds local IRD (insufficient IRD resources)",
	[SIW_MPA_E_RTR] = "no matching peer-to-peer RTR message type",
	[SIW_MPA_E_INVAL] = "invalid MPA frame parameters",
};

const char *siw_mpa_reason_str(enum siw_mpa_reason reason)
{
	if ((unsigned int)reason >= SIW_MPA_NUM_REASONS)
		return "unknown MPA reason";
	return mpa_reason_names[reason];
}

bool siw_mpa_reason_reply(enum siw_mpa_reason reason)
{
	switch (reason) {
	case SIW_MPA_E_V2_SHORT:
	case SIW_MPA_E_CRC_REFUSED:
	case SIW_MPA_E_RTR:
		return true;
	default:
		return false;
	}
}

bool siw_mpa_reason_term(enum siw_mpa_reason reason, struct siw_term_code *tc)
{
	switch (reason) {
	case SIW_MPA_OK:
	case SIW_MPA_E_REJECTED:
		return false;
	case SIW_MPA_E_IRD:
		*tc = SIW_TERM(LLP, LLP_MPA, LLP_NO_IRD);
		return true;
	case SIW_MPA_E_RTR:
		*tc = SIW_TERM(LLP, LLP_MPA, LLP_NO_RTR);
		return true;
	default:
		*tc = SIW_TERM(LLP, LLP_MPA, LLP_INVALID_RR);
		return true;
	}
}

static u8 mpa_clamp_rev(u8 rev)
{
	if (rev < SIW_MPA_REV_1)
		return SIW_MPA_REV_1;
	return rev > SIW_MPA_REV_2 ? SIW_MPA_REV_2 : rev;
}

static u16 mpa_min16(u16 a, u16 b)
{
	return a < b ? a : b;
}

enum siw_mpa_reason siw_mpa_parse_hdr(const void *hdr, bool reply,
				      struct siw_mpa_info *mi)
{
	const char *key = reply ? SIW_MPA_KEY_REP : SIW_MPA_KEY_REQ;
	struct siw_mpa_rr rr;

	memcpy(&rr, hdr, sizeof(rr));
	memset(mi, 0, sizeof(*mi));

	mi->reply = reply;
	mi->markers = rr.flags & SIW_MPA_F_MARKERS;
	mi->crc = rr.flags & SIW_MPA_F_CRC;
	mi->reject = rr.flags & SIW_MPA_F_REJECT;
	mi->enhanced = rr.flags & SIW_MPA_F_ENHANCED;
	mi->large = rr.flags & SIW_MPA_F_LARGE;
	mi->large_taken = rr.flags & SIW_MPA_F_LARGE_TAKEN;
	mi->res = rr.flags & SIW_MPA_F_RES;
	mi->rev = rr.rev;
	mi->pd_len = be16_to_cpu(rr.pd_len);

	if (memcmp(rr.key, key, SIW_MPA_KEY_LEN))
		return SIW_MPA_E_KEY;
	/*
	 * The Res bits are not checked on receipt (RFC 5044): they are
	 * reported in mi->res and otherwise ignored.
	 */
	if (mi->rev < SIW_MPA_REV_1 || mi->rev > SIW_MPA_REV_2)
		return SIW_MPA_E_REV;
	if (mi->pd_len > SIW_MPA_MAX_PD)
		return SIW_MPA_E_PD_LEN;

	mi->v2 = mi->rev == SIW_MPA_REV_2 && mi->enhanced;
	if (mi->v2 && mi->pd_len < SIW_MPA_V2_LEN)
		return SIW_MPA_E_V2_SHORT;

	mi->ulp_pd_off = mi->v2 ? SIW_MPA_V2_LEN : 0;
	mi->ulp_pd_len = mi->pd_len - mi->ulp_pd_off;
	return SIW_MPA_OK;
}

enum siw_mpa_reason siw_mpa_parse_pd(struct siw_mpa_info *mi, const void *pd,
				     size_t len)
{
	struct siw_mpa_v2 v2;
	u16 ird, ord;

	if (len < mi->pd_len)
		return SIW_MPA_E_SHORT;
	if (!mi->v2)
		return SIW_MPA_OK;

	memcpy(&v2, pd, sizeof(v2));
	ird = be16_to_cpu(v2.ird);
	ord = be16_to_cpu(v2.ord);

	mi->ird = ird & SIW_MPA_V2_VAL_MASK;
	mi->ord = ord & SIW_MPA_V2_VAL_MASK;
	mi->p2p = ird & SIW_MPA_V2_P2P;
	mi->rtr = ((ird & SIW_MPA_V2_RTR_SEND) ? SIW_MPA_RTR_SEND : 0) |
		  ((ord & SIW_MPA_V2_RTR_WRITE) ? SIW_MPA_RTR_WRITE : 0) |
		  ((ord & SIW_MPA_V2_RTR_READ) ? SIW_MPA_RTR_READ : 0);
	return SIW_MPA_OK;
}

enum siw_mpa_reason siw_mpa_parse(const void *buf, size_t len, bool reply,
				  struct siw_mpa_info *mi, size_t *frame_len)
{
	const u8 *p = buf;
	enum siw_mpa_reason r;

	*frame_len = 0;
	if (len < SIW_MPA_HDR_LEN) {
		memset(mi, 0, sizeof(*mi));
		return SIW_MPA_E_SHORT;
	}
	r = siw_mpa_parse_hdr(p, reply, mi);
	if (r != SIW_MPA_OK)
		return r;
	if (len - SIW_MPA_HDR_LEN < mi->pd_len)
		return SIW_MPA_E_SHORT;
	r = siw_mpa_parse_pd(mi, p + SIW_MPA_HDR_LEN, len - SIW_MPA_HDR_LEN);
	if (r == SIW_MPA_OK)
		*frame_len = SIW_MPA_HDR_LEN + mi->pd_len;
	return r;
}

int siw_mpa_build(void *buf, size_t buflen, const struct siw_mpa_info *mi,
		  const void *ulp_pd, u16 ulp_pd_len)
{
	u16 v2_len = mi->v2 ? SIW_MPA_V2_LEN : 0;
	struct siw_mpa_rr rr;
	u8 *p = buf;
	u32 pd_len;

	if (mi->rev < SIW_MPA_REV_1 || mi->rev > SIW_MPA_REV_2)
		return -SIW_MPA_E_INVAL;
	if (mi->v2 && (mi->rev != SIW_MPA_REV_2 ||
		       mi->ird > SIW_MPA_V2_MAX_IRD_ORD ||
		       mi->ord > SIW_MPA_V2_MAX_IRD_ORD))
		return -SIW_MPA_E_INVAL;
	if (ulp_pd_len && !ulp_pd)
		return -SIW_MPA_E_INVAL;

	pd_len = (u32)v2_len + ulp_pd_len;
	if (pd_len > SIW_MPA_MAX_PD)
		return -SIW_MPA_E_PD_LEN;
	if (buflen < SIW_MPA_HDR_LEN + pd_len)
		return -SIW_MPA_E_INVAL;

	memcpy(rr.key, mi->reply ? SIW_MPA_KEY_REP : SIW_MPA_KEY_REQ,
	       SIW_MPA_KEY_LEN);
	rr.flags = (mi->markers ? SIW_MPA_F_MARKERS : 0) |
		   (mi->crc ? SIW_MPA_F_CRC : 0) |
		   (mi->reject ? SIW_MPA_F_REJECT : 0) |
		   (mi->v2 ? SIW_MPA_F_ENHANCED : 0) |
		   (mi->large ? SIW_MPA_F_LARGE : 0) |
		   (mi->large_taken ? SIW_MPA_F_LARGE_TAKEN : 0);
	rr.rev = mi->rev;
	rr.pd_len = cpu_to_be16((u16)pd_len);
	memcpy(p, &rr, sizeof(rr));
	p += sizeof(rr);

	if (mi->v2) {
		u16 ird = mi->ird, ord = mi->ord;
		struct siw_mpa_v2 v2;

		if (mi->p2p)
			ird |= SIW_MPA_V2_P2P;
		if (mi->rtr & SIW_MPA_RTR_SEND)
			ird |= SIW_MPA_V2_RTR_SEND;
		if (mi->rtr & SIW_MPA_RTR_WRITE)
			ord |= SIW_MPA_V2_RTR_WRITE;
		if (mi->rtr & SIW_MPA_RTR_READ)
			ord |= SIW_MPA_V2_RTR_READ;
		v2.ird = cpu_to_be16(ird);
		v2.ord = cpu_to_be16(ord);
		memcpy(p, &v2, sizeof(v2));
		p += sizeof(v2);
	}
	if (ulp_pd_len)
		memcpy(p, ulp_pd, ulp_pd_len);

	return SIW_MPA_HDR_LEN + pd_len;
}

void siw_mpa_request_info(const struct siw_mpa_policy *pol,
			  struct siw_mpa_info *req)
{
	memset(req, 0, sizeof(*req));
	req->crc = pol->crc == SIW_MPA_CRC_ALWAYS;
	req->markers = pol->markers;
	req->large = pol->large;
	req->rev = mpa_clamp_rev(pol->rev);
	if (req->rev == SIW_MPA_REV_2) {
		req->v2 = true;
		req->enhanced = true;
		req->ird = mpa_min16(pol->ird, SIW_MPA_V2_MAX_IRD_ORD);
		req->ord = mpa_min16(pol->ord, SIW_MPA_V2_MAX_IRD_ORD);
		req->p2p = pol->p2p;
		req->rtr = pol->p2p ? pol->rtr & SIW_MPA_RTR_ALL : 0;
	}
}

/* Preference among offered RTR types: Write, then Read, then Send. */
static u8 mpa_pick_rtr(u8 offered)
{
	if (offered & SIW_MPA_RTR_WRITE)
		return SIW_MPA_RTR_WRITE;
	if (offered & SIW_MPA_RTR_READ)
		return SIW_MPA_RTR_READ;
	if (offered & SIW_MPA_RTR_SEND)
		return SIW_MPA_RTR_SEND;
	return 0;
}

void siw_mpa_negotiate_req(const struct siw_mpa_policy *pol,
			   const struct siw_mpa_info *req,
			   struct siw_mpa_result *res)
{
	u8 local_rev = mpa_clamp_rev(pol->rev);

	memset(res, 0, sizeof(*res));
	res->rev = req->rev < local_rev ? req->rev : local_rev;
	res->ird = pol->ird;
	res->ord = pol->ord;

	if (req->rev < SIW_MPA_REV_1 || req->rev > SIW_MPA_REV_2) {
		res->rev = local_rev;
		res->reason = SIW_MPA_E_REV;
		return;
	}
	if (req->crc && pol->crc == SIW_MPA_CRC_NEVER) {
		res->reason = SIW_MPA_E_CRC_REFUSED;
		return;
	}
	/* Either side asking for CRC turns it on for both directions. */
	res->crc = req->crc || pol->crc == SIW_MPA_CRC_ALWAYS;
	res->large = req->large && pol->large;
	/* Markers go to whoever set M: each direction on its own. */
	res->markers_tx = req->markers;
	res->markers_rx = pol->markers;

	if (res->rev == SIW_MPA_REV_2 && req->v2) {
		res->v2 = true;
		/* Never issue more Reads than the peer can take, nor promise
		 * more than we have.
		 */
		res->ord = mpa_min16(mpa_min16(pol->ord, req->ird),
				     SIW_MPA_V2_MAX_IRD_ORD);
		res->ird = mpa_min16(mpa_min16(pol->ird, req->ord),
				     SIW_MPA_V2_MAX_IRD_ORD);
		if (req->p2p && pol->p2p) {
			res->rtr = mpa_pick_rtr(req->rtr & pol->rtr);
			if (!res->rtr) {
				res->reason = SIW_MPA_E_RTR;
				return;
			}
			res->p2p = true;
		}
	}
	res->reason = SIW_MPA_OK;
}

void siw_mpa_reply_info(const struct siw_mpa_policy *pol,
			const struct siw_mpa_result *res, bool reject,
			struct siw_mpa_info *rep)
{
	memset(rep, 0, sizeof(*rep));
	rep->reply = true;
	rep->reject = reject || res->reason != SIW_MPA_OK;
	rep->crc = res->crc;
	rep->markers = res->markers_rx && !rep->reject;
	/* Only to a peer whose request carried it. */
	rep->large = res->large && !rep->reject;
	rep->large_taken = rep->large;
	rep->rev = res->rev ? mpa_clamp_rev(res->rev) : mpa_clamp_rev(pol->rev);
	if (res->v2 && rep->rev == SIW_MPA_REV_2) {
		rep->v2 = true;
		rep->enhanced = true;
		rep->ird = res->ird;
		rep->ord = res->ord;
		rep->p2p = res->p2p;
		rep->rtr = res->p2p ? res->rtr : 0;
	}
}

/* Exactly one RTR type bit set. */
static bool mpa_one_rtr(u8 rtr)
{
	return rtr == SIW_MPA_RTR_SEND || rtr == SIW_MPA_RTR_WRITE ||
	       rtr == SIW_MPA_RTR_READ;
}

void siw_mpa_negotiate_rep(const struct siw_mpa_policy *pol,
			   const struct siw_mpa_info *req,
			   const struct siw_mpa_info *rep,
			   struct siw_mpa_result *res)
{
	memset(res, 0, sizeof(*res));
	res->rev = rep->rev;
	res->ird = req->v2 ? req->ird : pol->ird;
	res->ord = req->v2 ? req->ord : pol->ord;

	if (rep->reject) {
		res->reason = SIW_MPA_E_REJECTED;
		return;
	}
	if (rep->rev < SIW_MPA_REV_1 || rep->rev > req->rev) {
		res->reason = SIW_MPA_E_REV_REPLY;
		return;
	}
	if (req->crc && !rep->crc) {
		res->reason = SIW_MPA_E_CRC_MISSING;
		return;
	}
	if (rep->crc && pol->crc == SIW_MPA_CRC_NEVER) {
		res->reason = SIW_MPA_E_CRC_REFUSED;
		return;
	}
	res->crc = rep->crc || req->crc;
	/* A reply that echoes our request's flags has no large_taken. */
	res->large = req->large && rep->large && rep->large_taken;
	res->markers_tx = rep->markers;
	res->markers_rx = req->markers;

	if (req->v2 && rep->rev == SIW_MPA_REV_2) {
		if (!rep->v2) {
			res->reason = SIW_MPA_E_NOT_ENHANCED;
			return;
		}
		/* The peer may issue rep->ord Reads: we must serve them. */
		if (rep->ord > req->ird) {
			res->reason = SIW_MPA_E_IRD;
			return;
		}
		res->v2 = true;
		res->ird = req->ird;
		res->ord = mpa_min16(req->ord, rep->ird);
		if (rep->p2p) {
			if (!req->p2p || !mpa_one_rtr(rep->rtr) ||
			    !(rep->rtr & req->rtr)) {
				res->reason = SIW_MPA_E_RTR;
				return;
			}
			res->p2p = true;
			res->rtr = rep->rtr;
		}
	}
	res->reason = SIW_MPA_OK;
}
