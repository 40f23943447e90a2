// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA request/reply frames (RFC 5044 section 7.1, RFC 6581): worked
 * frames written out octet by octet, build/parse round trips, parse
 * errors, and every negotiation branch on both sides.
 */
#include "siw_test.h"
#include "mpa.h"

#define KEY_REQ 0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, \
		0x65, 0x71, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65
#define KEY_REP 0x4d, 0x50, 0x41, 0x20, 0x49, 0x44, 0x20, 0x52, \
		0x65, 0x70, 0x20, 0x46, 0x72, 0x61, 0x6d, 0x65

static const struct siw_mpa_policy pol_v2 = {
	.rev = 2, .crc = SIW_MPA_CRC_PEER, .ird = 16, .ord = 8,
	.rtr = SIW_MPA_RTR_ALL,
};

/* Build, parse back with the right key, expect success. */
static int roundtrip(const struct siw_mpa_info *in, const void *pd, u16 len,
		     struct siw_mpa_info *out, u8 *buf)
{
	size_t flen;
	int n = siw_mpa_build(buf, SIW_MPA_MAX_FRAME, in, pd, len);

	if (n < 0)
		return n;
	if (siw_mpa_parse(buf, n, in->reply, out, &flen) != SIW_MPA_OK ||
	    flen != (size_t)n)
		return -100;
	return n;
}

static void worked_rev1_request(void)
{
	static const u8 want[] = {
		KEY_REQ,
		0x40,			/* M=0 C=1 R=0 Res=0 */
		0x01,			/* Rev 1 */
		0x00, 0x05,		/* PD_Length */
		'h', 'e', 'l', 'l', 'o',
	};
	struct siw_mpa_info mi = { .crc = true, .rev = 1 }, back;
	u8 buf[SIW_MPA_MAX_FRAME];
	size_t flen;

	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, "hello", 5),
		 sizeof(want));
	CHECK_MEM(buf, want, sizeof(want));

	CHECK_EQ(siw_mpa_parse(want, sizeof(want), false, &back, &flen),
		 SIW_MPA_OK);
	CHECK_EQ(flen, sizeof(want));
	CHECK(back.crc && !back.markers && !back.reject && !back.v2);
	CHECK_EQ(back.rev, 1);
	CHECK_EQ(back.pd_len, 5);
	CHECK_EQ(back.ulp_pd_off, 0);
	CHECK_EQ(back.ulp_pd_len, 5);
}

static void worked_rev2_request(void)
{
	static const u8 want[] = {
		KEY_REQ,
		0x50,			/* C=1, enhanced */
		0x02,			/* Rev 2 */
		0x00, 0x06,		/* PD_Length: 4 + 2 */
		0x80, 0x10,		/* P2P, IRD 16 */
		0x80, 0x08,		/* Write RTR, ORD 8 */
		0xab, 0xcd,		/* consumer private data */
	};
	struct siw_mpa_policy pol = pol_v2;
	struct siw_mpa_info req, back;
	u8 buf[SIW_MPA_MAX_FRAME];

	pol.crc = SIW_MPA_CRC_ALWAYS;
	pol.p2p = true;
	pol.rtr = SIW_MPA_RTR_WRITE;
	siw_mpa_request_info(&pol, &req);
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &req, "\xab\xcd", 2),
		 sizeof(want));
	CHECK_MEM(buf, want, sizeof(want));

	CHECK_EQ(roundtrip(&req, "\xab\xcd", 2, &back, buf), sizeof(want));
	CHECK(back.v2 && back.enhanced && back.p2p && back.crc);
	CHECK_EQ(back.ird, 16);
	CHECK_EQ(back.ord, 8);
	CHECK_EQ(back.rtr, SIW_MPA_RTR_WRITE);
	CHECK_EQ(back.ulp_pd_off, 4);
	CHECK_EQ(back.ulp_pd_len, 2);
	CHECK_MEM(buf + SIW_MPA_HDR_LEN + back.ulp_pd_off, "\xab\xcd", 2);
}

static void worked_reject_reply(void)
{
	static const u8 want[] = {
		KEY_REP,
		0x20,			/* R=1 */
		0x01,
		0x00, 0x02,
		'n', 'o',
	};
	struct siw_mpa_info rep = { .reply = true, .reject = true, .rev = 1 };
	struct siw_mpa_info back;
	u8 buf[SIW_MPA_MAX_FRAME];

	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &rep, "no", 2), sizeof(want));
	CHECK_MEM(buf, want, sizeof(want));
	CHECK_EQ(roundtrip(&rep, "no", 2, &back, buf), sizeof(want));
	CHECK(back.reply && back.reject && !back.crc);
}

static void worked_rev2_reply(void)
{
	static const u8 want[] = {
		KEY_REP,
		0x10,			/* enhanced, no CRC */
		0x02,
		0x00, 0x04,
		0xc0, 0x04,		/* P2P, Send RTR, IRD 4 */
		0x40, 0x02,		/* Read RTR, ORD 2 */
	};
	struct siw_mpa_info back;
	size_t flen;

	CHECK_EQ(siw_mpa_parse(want, sizeof(want), true, &back, &flen),
		 SIW_MPA_OK);
	CHECK(back.v2 && back.p2p);
	CHECK_EQ(back.ird, 4);
	CHECK_EQ(back.ord, 2);
	CHECK_EQ(back.rtr, SIW_MPA_RTR_SEND | SIW_MPA_RTR_READ);
	CHECK_EQ(back.ulp_pd_len, 0);
}

static void roundtrips(void)
{
	static const u8 pd[SIW_MPA_MAX_PD];
	u8 buf[SIW_MPA_MAX_FRAME];
	int bits, count = 0;

	for (bits = 0; bits < 256; bits++) {
		struct siw_mpa_info in = {
			.reply = bits & 1, .markers = bits & 2,
			.crc = bits & 4, .reject = bits & 8,
			.rev = (bits & 16) ? 2 : 1,
		}, out;
		u16 lens[] = { 0, 1, 7, 255, 508 };
		size_t i;

		in.v2 = in.rev == 2 && (bits & 32);
		if (in.v2) {
			in.enhanced = true;
			in.p2p = bits & 64;
			in.rtr = (bits >> 5) & SIW_MPA_RTR_ALL;
			in.ird = 0x3fff - bits;
			in.ord = bits * 3;
		}
		for (i = 0; i < ARRAY_SIZE(lens); i++) {
			int n = roundtrip(&in, pd, lens[i], &out, buf);

			count++;
			if (n != (int)(SIW_MPA_HDR_LEN + lens[i] +
				       (in.v2 ? 4 : 0))) {
				CHECK_EQ(n, 0);
				siw_test_diag("bits 0x%x len %u", bits, lens[i]);
				return;
			}
			CHECK_EQ(out.reply, in.reply);
			CHECK_EQ(out.markers, in.markers);
			CHECK_EQ(out.crc, in.crc);
			CHECK_EQ(out.reject, in.reject);
			CHECK_EQ(out.rev, in.rev);
			CHECK_EQ(out.v2, in.v2);
			CHECK_EQ(out.p2p, in.p2p);
			CHECK_EQ(out.rtr, in.rtr);
			CHECK_EQ(out.ird, in.ird);
			CHECK_EQ(out.ord, in.ord);
			CHECK_EQ(out.ulp_pd_len, lens[i]);
		}
	}
	CHECK_EQ(count, 256 * 5);
}

static void parse_errors(void)
{
	struct siw_mpa_info mi = { .rev = 1 }, out;
	u8 buf[SIW_MPA_MAX_FRAME + 8];
	size_t flen;
	int n = siw_mpa_build(buf, sizeof(buf), &mi, "abc", 3);

	CHECK_EQ(n, 23);
	/* The other key. */
	CHECK_EQ(siw_mpa_parse(buf, n, true, &out, &flen), SIW_MPA_E_KEY);
	/* A corrupted key. */
	buf[5] ^= 0x20;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_E_KEY);
	buf[5] ^= 0x20;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_OK);
	/* Truncated header, truncated private data. */
	CHECK_EQ(siw_mpa_parse(buf, 19, false, &out, &flen), SIW_MPA_E_SHORT);
	CHECK_EQ(siw_mpa_parse(buf, 22, false, &out, &flen), SIW_MPA_E_SHORT);
	CHECK_EQ(flen, 0);
	/* Revision 0 and 3. */
	buf[17] = 0;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_E_REV);
	buf[17] = 3;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_E_REV);
	buf[17] = 1;
	/* Reserved bits: ignored on receipt, but reported. */
	buf[16] |= SIW_MPA_F_RES;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_OK);
	CHECK_EQ(out.res, SIW_MPA_F_RES);
	/* Enhanced flag on rev 1 means nothing. */
	buf[16] |= SIW_MPA_F_ENHANCED;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen), SIW_MPA_OK);
	CHECK(!out.v2 && out.enhanced);
	/* Enhanced rev 2 needs the 4 octet IRD/ORD word. */
	buf[17] = 2;
	buf[18] = 0;
	buf[19] = 3;
	CHECK_EQ(siw_mpa_parse(buf, n, false, &out, &flen),
		 SIW_MPA_E_V2_SHORT);
	/* Private data length bound: 512 fine, 513 not. */
	memset(buf + 20, 0, SIW_MPA_MAX_PD + 1);
	buf[16] = 0;
	buf[17] = 1;
	buf[18] = 0x02;
	buf[19] = 0x00;
	CHECK_EQ(siw_mpa_parse(buf, 20 + 512, false, &out, &flen), SIW_MPA_OK);
	CHECK_EQ(flen, 532);
	buf[19] = 0x01;
	CHECK_EQ(siw_mpa_parse(buf, 20 + 513, false, &out, &flen),
		 SIW_MPA_E_PD_LEN);
	buf[18] = 0xff;
	buf[19] = 0xff;
	CHECK_EQ(siw_mpa_parse_hdr(buf, false, &out), SIW_MPA_E_PD_LEN);
}

static void build_errors(void)
{
	static const u8 pd[SIW_MPA_MAX_PD + 1];
	struct siw_mpa_info mi = { .rev = 1 };
	u8 buf[SIW_MPA_MAX_FRAME];

	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, pd, 512), 532);
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, pd, 513),
		 -SIW_MPA_E_PD_LEN);
	CHECK_EQ(siw_mpa_build(buf, 531, &mi, pd, 512), -SIW_MPA_E_INVAL);
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, NULL, 1),
		 -SIW_MPA_E_INVAL);
	mi.rev = 2;
	mi.v2 = true;
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, pd, 508), 532);
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, pd, 509),
		 -SIW_MPA_E_PD_LEN);
	mi.ird = 0x4000;
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, NULL, 0),
		 -SIW_MPA_E_INVAL);
	mi.ird = 0;
	mi.rev = 1;
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, NULL, 0),
		 -SIW_MPA_E_INVAL);
	mi.v2 = false;
	mi.rev = 0;
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, NULL, 0),
		 -SIW_MPA_E_INVAL);
	mi.rev = 3;
	CHECK_EQ(siw_mpa_build(buf, sizeof(buf), &mi, NULL, 0),
		 -SIW_MPA_E_INVAL);
}

/* ---- responder side ---------------------------------------------- */

static struct siw_mpa_info req_of(u8 rev, bool crc, bool markers)
{
	struct siw_mpa_info req = { .rev = rev, .crc = crc,
				    .markers = markers };
	return req;
}

/*
 * M is per direction: a request with M gets markers from us, a policy
 * with markers sets M in our reply, and neither refuses the other.
 */
static void resp_markers(void)
{
	static const struct {
		bool req_m, pol_m;
	} rows[] = { { false, false }, { true, false }, { false, true },
		     { true, true } };
	struct siw_mpa_info req, rep, back;
	struct siw_mpa_result res;
	u8 buf[SIW_MPA_MAX_FRAME];
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct siw_mpa_policy pol = pol_v2;

		pol.markers = rows[i].pol_m;
		req = req_of(1, false, rows[i].req_m);
		siw_mpa_negotiate_req(&pol, &req, &res);
		CHECK_EQ(res.reason, SIW_MPA_OK);
		CHECK_EQ(res.markers_tx, rows[i].req_m);
		CHECK_EQ(res.markers_rx, rows[i].pol_m);
		siw_mpa_reply_info(&pol, &res, false, &rep);
		CHECK(roundtrip(&rep, NULL, 0, &back, buf) > 0);
		CHECK(!back.reject && back.reply);
		CHECK_EQ(back.markers, rows[i].pol_m);
		CHECK_EQ(buf[16] & SIW_MPA_F_MARKERS,
			 rows[i].pol_m ? SIW_MPA_F_MARKERS : 0);
		CHECK_EQ(back.rev, 1);
	}
}

static void resp_crc_matrix(void)
{
	static const struct {
		bool req_crc;
		enum siw_mpa_crc_policy pol;
		enum siw_mpa_reason reason;
		bool crc;
	} rows[] = {
		{ false, SIW_MPA_CRC_NEVER, SIW_MPA_OK, false },
		{ false, SIW_MPA_CRC_PEER, SIW_MPA_OK, false },
		{ false, SIW_MPA_CRC_ALWAYS, SIW_MPA_OK, true },
		{ true, SIW_MPA_CRC_NEVER, SIW_MPA_E_CRC_REFUSED, false },
		{ true, SIW_MPA_CRC_PEER, SIW_MPA_OK, true },
		{ true, SIW_MPA_CRC_ALWAYS, SIW_MPA_OK, true },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		struct siw_mpa_policy pol = pol_v2;
		struct siw_mpa_info req = req_of(1, rows[i].req_crc, false);
		struct siw_mpa_info rep;
		struct siw_mpa_result res;

		pol.crc = rows[i].pol;
		siw_mpa_negotiate_req(&pol, &req, &res);
		CHECK_EQ(res.reason, rows[i].reason);
		CHECK_EQ(res.crc, rows[i].crc);
		siw_mpa_reply_info(&pol, &res, false, &rep);
		CHECK_EQ(rep.crc, rows[i].crc);
		CHECK_EQ(rep.reject, rows[i].reason != SIW_MPA_OK);
		if (rows[i].reason != SIW_MPA_OK)
			CHECK(siw_mpa_reason_reply(rows[i].reason));
	}
}

static void resp_revisions(void)
{
	struct siw_mpa_policy pol1 = pol_v2;
	struct siw_mpa_info req, rep;
	struct siw_mpa_result res;

	pol1.rev = 1;

	/* rev 1 request to a rev 2 responder: rev 1, no IRD/ORD. */
	req = req_of(1, false, false);
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK_EQ(res.rev, 1);
	CHECK(!res.v2);
	siw_mpa_reply_info(&pol_v2, &res, false, &rep);
	CHECK_EQ(rep.rev, 1);
	CHECK(!rep.v2);

	/* Enhanced rev 2 request to a rev 1 responder: rev 1 reply. */
	siw_mpa_request_info(&pol_v2, &req);
	siw_mpa_negotiate_req(&pol1, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK_EQ(res.rev, 1);
	CHECK(!res.v2);

	/* Rev 2 without the enhanced data: rev 2, no IRD/ORD. */
	req = req_of(2, false, false);
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK_EQ(res.rev, 2);
	CHECK(!res.v2);

	/* Revisions 0 and 3: close, no reply. */
	req = req_of(0, false, false);
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_E_REV);
	CHECK(!siw_mpa_reason_reply(res.reason));
	req = req_of(3, false, false);
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_E_REV);
	CHECK(!siw_mpa_reason_reply(SIW_MPA_E_KEY));
	CHECK(!siw_mpa_reason_reply(SIW_MPA_E_PD_LEN));
}

static void resp_ird_ord(void)
{
	struct siw_mpa_info req = req_of(2, false, false);
	struct siw_mpa_result res;

	req.v2 = req.enhanced = true;
	/* Peer: IRD 4, ORD 32. We: IRD 16, ORD 8. */
	req.ird = 4;
	req.ord = 32;
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK(res.v2);
	CHECK_EQ(res.ord, 4);	/* no more than the peer can serve */
	CHECK_EQ(res.ird, 16);	/* all we have; the peer must cut its ORD */

	req.ird = 100;
	req.ord = 2;
	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.ord, 8);
	CHECK_EQ(res.ird, 2);
}

static void resp_rtr(void)
{
	struct siw_mpa_policy pol = pol_v2;
	struct siw_mpa_info req = req_of(2, false, false), rep;
	struct siw_mpa_result res;
	struct siw_term_code tc;

	req.v2 = req.enhanced = true;
	req.p2p = true;
	req.ird = req.ord = 1;

	/* Offered Write and Read; we prefer Write. */
	pol.p2p = true;
	req.rtr = SIW_MPA_RTR_WRITE | SIW_MPA_RTR_READ;
	siw_mpa_negotiate_req(&pol, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK(res.p2p);
	CHECK_EQ(res.rtr, SIW_MPA_RTR_WRITE);
	siw_mpa_reply_info(&pol, &res, false, &rep);
	CHECK(rep.p2p && rep.v2);
	CHECK_EQ(rep.rtr, SIW_MPA_RTR_WRITE);

	/* We only do Read. */
	pol.rtr = SIW_MPA_RTR_READ;
	siw_mpa_negotiate_req(&pol, &req, &res);
	CHECK_EQ(res.rtr, SIW_MPA_RTR_READ);

	/* Offered only Send, which we do not take. */
	req.rtr = SIW_MPA_RTR_SEND;
	siw_mpa_negotiate_req(&pol, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_E_RTR);
	CHECK(siw_mpa_reason_reply(res.reason));
	CHECK(siw_mpa_reason_term(res.reason, &tc));
	CHECK_EQ(tc.ecode, SIW_TERM_LLP_NO_RTR);
	siw_mpa_reply_info(&pol, &res, false, &rep);
	CHECK(rep.reject);

	/* Not in peer-to-peer mode ourselves: plain client/server. */
	pol.p2p = false;
	siw_mpa_negotiate_req(&pol, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK(!res.p2p);
	CHECK_EQ(res.rtr, 0);
}

static void resp_consumer_reject(void)
{
	struct siw_mpa_info req = req_of(1, true, false), rep, back;
	struct siw_mpa_result res;
	u8 buf[SIW_MPA_MAX_FRAME];

	siw_mpa_negotiate_req(&pol_v2, &req, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	/* The consumer says no, with private data. */
	siw_mpa_reply_info(&pol_v2, &res, true, &rep);
	CHECK(roundtrip(&rep, "busy", 4, &back, buf) > 0);
	CHECK(back.reject && back.crc);
	CHECK_EQ(back.ulp_pd_len, 4);
}

/* ---- initiator side ---------------------------------------------- */

static void init_check(const struct siw_mpa_policy *pol,
		       const struct siw_mpa_info *rep,
		       enum siw_mpa_reason want, struct siw_mpa_result *res)
{
	struct siw_mpa_info req;

	siw_mpa_request_info(pol, &req);
	siw_mpa_negotiate_rep(pol, &req, rep, res);
	CHECK_EQ(res->reason, want);
	if (res->reason != want)
		siw_test_diag("got \"%s\"", siw_mpa_reason_str(res->reason));
}

static void init_reject_markers_rev(void)
{
	struct siw_mpa_info rep = { .reply = true, .rev = 2, .reject = true };
	struct siw_mpa_result res;
	struct siw_term_code tc;

	init_check(&pol_v2, &rep, SIW_MPA_E_REJECTED, &res);
	CHECK(!siw_mpa_reason_term(res.reason, &tc));
	CHECK_STR(siw_mpa_reason_str(res.reason),
		  "peer rejected the connection");

	/* A reply with M: we send markers; our request's M: we get them. */
	rep.reject = false;
	rep.rev = 1;
	rep.markers = true;
	init_check(&pol_v2, &rep, SIW_MPA_OK, &res);
	CHECK(res.markers_tx && !res.markers_rx);
	{
		struct siw_mpa_policy polm = pol_v2;
		struct siw_mpa_info req;

		polm.markers = true;
		siw_mpa_request_info(&polm, &req);
		CHECK(req.markers);
		rep.markers = false;
		init_check(&polm, &rep, SIW_MPA_OK, &res);
		CHECK(!res.markers_tx && res.markers_rx);
	}
	rep.rev = 2;

	/* Reply revision above the request's. */
	{
		struct siw_mpa_policy pol1 = pol_v2;

		pol1.rev = 1;
		rep.markers = false;
		rep.rev = 2;
		init_check(&pol1, &rep, SIW_MPA_E_REV_REPLY, &res);
		rep.rev = 0;
		init_check(&pol_v2, &rep, SIW_MPA_E_REV_REPLY, &res);
		/* Rev 1 reply to a rev 2 request is fine. */
		rep.rev = 1;
		init_check(&pol_v2, &rep, SIW_MPA_OK, &res);
		CHECK(!res.v2);
		CHECK_EQ(res.rev, 1);
		CHECK_EQ(res.ird, 16);
		CHECK_EQ(res.ord, 8);
	}
}

static void init_crc(void)
{
	struct siw_mpa_policy pol = pol_v2;
	struct siw_mpa_info rep = { .reply = true, .rev = 2, .v2 = true,
				    .enhanced = true, .ird = 8, .ord = 8 };
	struct siw_mpa_result res;

	/* We asked for CRC, the reply turns it off: protocol error. */
	pol.crc = SIW_MPA_CRC_ALWAYS;
	init_check(&pol, &rep, SIW_MPA_E_CRC_MISSING, &res);
	rep.crc = true;
	init_check(&pol, &rep, SIW_MPA_OK, &res);
	CHECK(res.crc);

	/* We did not ask; the responder wants it. */
	pol.crc = SIW_MPA_CRC_PEER;
	init_check(&pol, &rep, SIW_MPA_OK, &res);
	CHECK(res.crc);
	pol.crc = SIW_MPA_CRC_NEVER;
	init_check(&pol, &rep, SIW_MPA_E_CRC_REFUSED, &res);
	rep.crc = false;
	init_check(&pol, &rep, SIW_MPA_OK, &res);
	CHECK(!res.crc);
}

static void init_ird_ord(void)
{
	struct siw_mpa_info rep = { .reply = true, .rev = 2, .v2 = true,
				    .enhanced = true };
	struct siw_mpa_result res;
	struct siw_term_code tc;

	/* Responder ORD above our IRD (16): insufficient IRD. */
	rep.ord = 17;
	rep.ird = 8;
	init_check(&pol_v2, &rep, SIW_MPA_E_IRD, &res);
	CHECK(siw_mpa_reason_term(res.reason, &tc));
	CHECK_EQ(tc.layer, SIW_TERM_LAYER_LLP);
	CHECK_EQ(tc.ecode, SIW_TERM_LLP_NO_IRD);

	/* Responder IRD below our ORD (8): we cut our ORD. */
	rep.ord = 16;
	rep.ird = 3;
	init_check(&pol_v2, &rep, SIW_MPA_OK, &res);
	CHECK(res.v2);
	CHECK_EQ(res.ord, 3);
	CHECK_EQ(res.ird, 16);

	/* Rev 2 reply without the IRD/ORD word. */
	rep.v2 = rep.enhanced = false;
	init_check(&pol_v2, &rep, SIW_MPA_E_NOT_ENHANCED, &res);
}

static void init_rtr(void)
{
	struct siw_mpa_policy pol = pol_v2;
	struct siw_mpa_info rep = { .reply = true, .rev = 2, .v2 = true,
				    .enhanced = true, .ird = 8, .ord = 8,
				    .p2p = true };
	struct siw_mpa_result res;
	struct siw_term_code tc;

	pol.p2p = true;
	pol.rtr = SIW_MPA_RTR_WRITE | SIW_MPA_RTR_READ;

	rep.rtr = SIW_MPA_RTR_READ;
	init_check(&pol, &rep, SIW_MPA_OK, &res);
	CHECK(res.p2p);
	CHECK_EQ(res.rtr, SIW_MPA_RTR_READ);

	/* Two types chosen. */
	rep.rtr = SIW_MPA_RTR_READ | SIW_MPA_RTR_WRITE;
	init_check(&pol, &rep, SIW_MPA_E_RTR, &res);
	CHECK(siw_mpa_reason_term(res.reason, &tc));
	CHECK_EQ(tc.ecode, SIW_TERM_LLP_NO_RTR);
	/* None chosen. */
	rep.rtr = 0;
	init_check(&pol, &rep, SIW_MPA_E_RTR, &res);
	/* One we did not offer. */
	rep.rtr = SIW_MPA_RTR_SEND;
	init_check(&pol, &rep, SIW_MPA_E_RTR, &res);
	/* Peer-to-peer when we did not ask for it. */
	pol.p2p = false;
	rep.rtr = SIW_MPA_RTR_WRITE;
	init_check(&pol, &rep, SIW_MPA_E_RTR, &res);
	/* The responder declines peer-to-peer: no RTR. */
	pol.p2p = true;
	rep.p2p = false;
	rep.rtr = 0;
	init_check(&pol, &rep, SIW_MPA_OK, &res);
	CHECK(!res.p2p);
}

/* Both sides through real frames, over a matrix of policies. */
static void end_to_end(void)
{
	static const enum siw_mpa_crc_policy crcs[] = {
		SIW_MPA_CRC_NEVER, SIW_MPA_CRC_PEER, SIW_MPA_CRC_ALWAYS
	};
	int ir, rr, ic, rc, p2p, runs = 0, oks = 0;

	for (ir = 1; ir <= 2; ir++)
	for (rr = 1; rr <= 2; rr++)
	for (ic = 0; ic < 3; ic++)
	for (rc = 0; rc < 3; rc++)
	for (p2p = 0; p2p < 4; p2p++) {
		struct siw_mpa_policy ip = {
			.rev = ir, .crc = crcs[ic], .ird = 4, .ord = 12,
			.p2p = p2p & 1, .rtr = SIW_MPA_RTR_WRITE,
		}, rp = {
			.rev = rr, .crc = crcs[rc], .ird = 10, .ord = 2,
			.p2p = p2p & 2, .rtr = SIW_MPA_RTR_ALL,
		};
		struct siw_mpa_info req, req_rx, rep, rep_rx;
		struct siw_mpa_result rres, ires;
		u8 buf[SIW_MPA_MAX_FRAME];
		size_t flen;
		int n;

		runs++;
		siw_mpa_request_info(&ip, &req);
		n = siw_mpa_build(buf, sizeof(buf), &req, "i", 1);
		CHECK_EQ(siw_mpa_parse(buf, n, false, &req_rx, &flen),
			 SIW_MPA_OK);
		siw_mpa_negotiate_req(&rp, &req_rx, &rres);
		siw_mpa_reply_info(&rp, &rres, false, &rep);
		n = siw_mpa_build(buf, sizeof(buf), &rep, "r", 1);
		CHECK_EQ(siw_mpa_parse(buf, n, true, &rep_rx, &flen),
			 SIW_MPA_OK);
		siw_mpa_negotiate_rep(&ip, &req, &rep_rx, &ires);

		if (rres.reason != SIW_MPA_OK) {
			/* Only a CRC refusal can fail here. */
			CHECK_EQ(rres.reason, SIW_MPA_E_CRC_REFUSED);
			CHECK_EQ(ires.reason, SIW_MPA_E_REJECTED);
			continue;
		}
		if (ires.reason == SIW_MPA_E_CRC_REFUSED) {
			CHECK_EQ(ic, 0);
			continue;
		}
		CHECK_EQ(ires.reason, SIW_MPA_OK);
		oks++;
		CHECK_EQ(ires.crc, rres.crc);
		CHECK_EQ(ires.rev, rres.rev);
		CHECK_EQ(ires.rev, ir < rr ? ir : rr);
		CHECK_EQ(ires.v2, rres.v2);
		CHECK_EQ(ires.p2p, rres.p2p);
		CHECK_EQ(ires.rtr, rres.rtr);
		if (ires.v2) {
			/* Nobody may issue more Reads than the other serves. */
			CHECK(ires.ord <= rres.ird);
			CHECK(rres.ord <= ires.ird);
			CHECK_EQ(ires.p2p, (p2p & 3) == 3);
		}
		CHECK_EQ(ires.crc, ic == 2 || rc == 2);
	}
	CHECK_EQ(runs, 144);
	CHECK(oks > 0);
}

static void reason_strings(void)
{
	int r;

	for (r = 0; r < SIW_MPA_NUM_REASONS; r++) {
		const char *s = siw_mpa_reason_str(r);

		CHECK(s && *s && strcmp(s, "unknown MPA reason"));
	}
	CHECK_STR(siw_mpa_reason_str(SIW_MPA_NUM_REASONS),
		  "unknown MPA reason");
	CHECK_STR(siw_mpa_reason_str(SIW_MPA_E_CRC_REFUSED),
		  "peer requires MPA CRC, which local policy disables");
}

/*
 * The large-FPDU bit (0x08 of the flags octet, Linux siw's GSO_EXP): sent
 * under policy, in a reply (with 0x04, taken) only to a request that
 * carried it, and in force for the initiator only when the reply has
 * both: Linux's siw responder echoes the request's flags.
 */
static void large_fpdus(void)
{
	struct siw_mpa_policy big = pol_v2, small = pol_v2;
	struct siw_mpa_info req, rep, out;
	struct siw_mpa_result res, ires;
	u8 buf[SIW_MPA_MAX_FRAME];
	int n;

	big.large = true;
	siw_mpa_request_info(&big, &req);
	n = roundtrip(&req, NULL, 0, &out, buf);
	CHECK_EQ(n, 24);
	CHECK_EQ(buf[16], SIW_MPA_F_ENHANCED | SIW_MPA_F_LARGE);
	CHECK_EQ(buf[16], 0x18);
	CHECK(out.large);
	CHECK_EQ(out.res, 0);

	/* Both say it: in force on both sides. */
	siw_mpa_negotiate_req(&big, &out, &res);
	CHECK_EQ(res.reason, SIW_MPA_OK);
	CHECK(res.large);
	siw_mpa_reply_info(&big, &res, false, &rep);
	CHECK(rep.large && rep.large_taken);
	n = roundtrip(&rep, NULL, 0, &out, buf);
	CHECK_EQ(buf[16], SIW_MPA_F_ENHANCED | SIW_MPA_F_LARGE |
		 SIW_MPA_F_LARGE_TAKEN);
	CHECK(out.large && out.large_taken);
	CHECK_EQ(out.res, 0);
	siw_mpa_negotiate_rep(&big, &req, &out, &ires);
	CHECK_EQ(ires.reason, SIW_MPA_OK);
	CHECK(ires.large);

	/* Linux's siw echoes 0x08 without taking it: not in force. */
	out.large_taken = false;
	siw_mpa_negotiate_rep(&big, &req, &out, &ires);
	CHECK_EQ(ires.reason, SIW_MPA_OK);
	CHECK(!ires.large);

	/* A responder that does not: no bit in its reply, one segment. */
	siw_mpa_negotiate_req(&small, &out, &res);
	CHECK(!res.large);
	siw_mpa_reply_info(&small, &res, false, &rep);
	CHECK(!rep.large && !rep.large_taken);
	n = roundtrip(&rep, NULL, 0, &out, buf);
	CHECK_EQ(buf[16] & SIW_MPA_F_LARGE, 0);
	siw_mpa_negotiate_rep(&big, &req, &rep, &ires);
	CHECK_EQ(ires.reason, SIW_MPA_OK);
	CHECK(!ires.large);

	/* A request without it (hardware): the reply does not carry it. */
	siw_mpa_request_info(&small, &req);
	CHECK(!req.large);
	siw_mpa_negotiate_req(&big, &req, &res);
	CHECK(!res.large);
	siw_mpa_reply_info(&big, &res, false, &rep);
	CHECK(!rep.large);

	/* A rejecting reply carries no promise. */
	siw_mpa_request_info(&big, &req);
	siw_mpa_negotiate_req(&big, &req, &res);
	siw_mpa_reply_info(&big, &res, true, &rep);
	CHECK(rep.reject && !rep.large && !rep.large_taken);

	/* A reply that says it to a request that did not: not in force. */
	siw_mpa_request_info(&small, &req);
	rep.reject = false;
	rep.large = true;
	rep.large_taken = true;
	siw_mpa_negotiate_rep(&small, &req, &rep, &ires);
	CHECK_EQ(ires.reason, SIW_MPA_OK);
	CHECK(!ires.large);
}

int main(void)
{
	RUN(worked_rev1_request);
	RUN(worked_rev2_request);
	RUN(worked_reject_reply);
	RUN(worked_rev2_reply);
	RUN(roundtrips);
	RUN(parse_errors);
	RUN(build_errors);
	RUN(resp_markers);
	RUN(resp_crc_matrix);
	RUN(resp_revisions);
	RUN(resp_ird_ord);
	RUN(resp_rtr);
	RUN(resp_consumer_reject);
	RUN(init_reject_markers_rev);
	RUN(init_crc);
	RUN(init_ird_ord);
	RUN(init_rtr);
	RUN(end_to_end);
	RUN(large_fpdus);
	RUN(reason_strings);
	return siw_test_done();
}
