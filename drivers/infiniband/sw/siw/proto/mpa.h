/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA connection setup (RFC 5044 section 7, RFC 6581): build and parse
 * request and reply frames, and negotiate CRC, revision, IRD/ORD and the
 * peer-to-peer ready-to-receive (RTR) message.
 *
 * Initiator:
 *	siw_mpa_request_info(&pol, &req);  siw_mpa_build(buf, .., &req, pd..)
 *	... receive reply: siw_mpa_parse_hdr(), siw_mpa_parse_pd() ...
 *	siw_mpa_negotiate_rep(&pol, &req, &rep, &res)
 *
 * Responder:
 *	... receive request: siw_mpa_parse_hdr(), siw_mpa_parse_pd() ...
 *	siw_mpa_negotiate_req(&pol, &req, &res)
 *	siw_mpa_reply_info(&pol, &res, reject, &rep);  siw_mpa_build(...)
 */
#ifndef SIW_PROTO_MPA_H
#define SIW_PROTO_MPA_H

#include "wire.h"

#define SIW_MPA_HDR_LEN		sizeof(struct siw_mpa_rr)
#define SIW_MPA_V2_LEN		sizeof(struct siw_mpa_v2)
#define SIW_MPA_MAX_FRAME	(SIW_MPA_HDR_LEN + SIW_MPA_MAX_PD)

/* RTR message types, as a mask. */
#define SIW_MPA_RTR_SEND	0x1
#define SIW_MPA_RTR_WRITE	0x2
#define SIW_MPA_RTR_READ	0x4
#define SIW_MPA_RTR_ALL		0x7

enum siw_mpa_reason {
	SIW_MPA_OK = 0,
	SIW_MPA_E_SHORT,	/* fewer octets than the frame needs */
	SIW_MPA_E_KEY,		/* not the expected key */
	SIW_MPA_E_REV,		/* revision 0 or above 2 */
	SIW_MPA_E_PD_LEN,	/* private data longer than 512 octets */
	SIW_MPA_E_V2_SHORT,	/* enhanced frame without the IRD/ORD word */
	SIW_MPA_E_CRC_REFUSED,	/* peer asks for CRC, local policy forbids */
	SIW_MPA_E_CRC_MISSING,	/* reply turns off the CRC we asked for */
	SIW_MPA_E_REJECTED,	/* reply has the R bit */
	SIW_MPA_E_REV_REPLY,	/* reply revision 0 or above the request */
	SIW_MPA_E_NOT_ENHANCED,	/* rev 2 reply to enhanced request lacks it */
	SIW_MPA_E_IRD,		/* peer ORD exceeds local IRD */
	SIW_MPA_E_RTR,		/* no matching RTR type */
	SIW_MPA_E_INVAL,	/* bad arguments to a builder */
	SIW_MPA_NUM_REASONS
};

/* A decoded MPA request or reply (host order). Also the builder input. */
struct siw_mpa_info {
	bool reply;		/* key: reply or request */
	bool markers;		/* M */
	bool crc;		/* C */
	bool reject;		/* R */
	bool enhanced;		/* Res bit 0: RFC 6581 data present */
	bool large;		/* Res bit 1: takes FPDUs above a segment */
	bool large_taken;	/* Res bit 2, reply: took the request's large */
	u8 res;			/* other Res bits, as received */
	u8 rev;
	u16 pd_len;		/* total private data octets on the wire */

	/* RFC 6581 data: valid if v2 (rev 2 and enhanced). */
	bool v2;
	bool p2p;
	u8 rtr;			/* SIW_MPA_RTR_* mask */
	u16 ird;
	u16 ord;

	/* Consumer private data within the private data octets. */
	u16 ulp_pd_off;
	u16 ulp_pd_len;
};

/*
 * Check the 20 octet frame header in @hdr (key must be a reply key iff
 * @reply). On success the caller reads mi->pd_len more octets and hands
 * them to siw_mpa_parse_pd().
 */
enum siw_mpa_reason siw_mpa_parse_hdr(const void *hdr, bool reply,
				      struct siw_mpa_info *mi);

/* Decode the private data (exactly mi->pd_len octets). */
enum siw_mpa_reason siw_mpa_parse_pd(struct siw_mpa_info *mi, const void *pd,
				     size_t len);

/*
 * Both steps on a buffer that may hold more (or less) than one frame.
 * On success *frame_len is the frame's length; SIW_MPA_E_SHORT means more
 * octets are needed.
 */
enum siw_mpa_reason siw_mpa_parse(const void *buf, size_t len, bool reply,
				  struct siw_mpa_info *mi, size_t *frame_len);

/*
 * Build a frame from @mi (reply, markers, crc, reject, large, large_taken,
 * rev; for rev 2 with enhanced: p2p, rtr, ird, ord) followed by @ulp_pd_len octets of
 * consumer private data. Returns the frame length, or -SIW_MPA_E_PD_LEN /
 * -SIW_MPA_E_INVAL.
 */
int siw_mpa_build(void *buf, size_t buflen, const struct siw_mpa_info *mi,
		  const void *ulp_pd, u16 ulp_pd_len);

/* Local CRC policy. */
enum siw_mpa_crc_policy {
	SIW_MPA_CRC_NEVER,	/* never ask; refuse a peer that asks */
	SIW_MPA_CRC_PEER,	/* do not ask; use it if the peer asks */
	SIW_MPA_CRC_ALWAYS,	/* always ask, so always used */
};

struct siw_mpa_policy {
	u8 rev;			/* highest revision spoken: 1 or 2 */
	enum siw_mpa_crc_policy crc;
	/* Revision 2 only: */
	u16 ird;		/* inbound RDMA Reads we can serve */
	u16 ord;		/* outbound RDMA Reads we want to have */
	bool p2p;		/* initiator: ask for peer-to-peer mode;
				 * responder: accept it
				 */
	u8 rtr;			/* RTR types we can send or take */
	bool large;		/* say we take FPDUs above a segment, and
				 * send such to a peer that says so too
				 */
	bool markers;		/* ask for markers in what we receive */
};

struct siw_mpa_result {
	enum siw_mpa_reason reason;	/* SIW_MPA_OK: connection accepted */
	u8 rev;
	bool crc;
	bool v2;			/* RFC 6581 data was exchanged */
	u16 ird;			/* negotiated local IRD */
	u16 ord;			/* negotiated local ORD */
	bool p2p;			/* an RTR message is part of setup */
	u8 rtr;				/* its type: one SIW_MPA_RTR_* bit */
	bool large;			/* both take FPDUs above a segment: a
					 * request offered, its reply took it
					 */
	bool markers_tx;		/* the peer set M: we send markers */
	bool markers_rx;		/* we set M: the peer sends them */
};

/* Initiator: the request to send under @pol. */
void siw_mpa_request_info(const struct siw_mpa_policy *pol,
			  struct siw_mpa_info *req);

/* Responder: decide on a parsed request. */
void siw_mpa_negotiate_req(const struct siw_mpa_policy *pol,
			   const struct siw_mpa_info *req,
			   struct siw_mpa_result *res);

/*
 * Responder: the reply for @res. @reject (or a failed @res) makes it a
 * rejecting reply (R bit).
 */
void siw_mpa_reply_info(const struct siw_mpa_policy *pol,
			const struct siw_mpa_result *res, bool reject,
			struct siw_mpa_info *rep);

/* Initiator: check the parsed reply @rep against our request @req. */
void siw_mpa_negotiate_rep(const struct siw_mpa_policy *pol,
			   const struct siw_mpa_info *req,
			   const struct siw_mpa_info *rep,
			   struct siw_mpa_result *res);

/* Human readable reason, e.g. for the kernel log. */
const char *siw_mpa_reason_str(enum siw_mpa_reason reason);

/*
 * Responder: true if a failed request deserves a rejecting reply, false
 * if the connection is simply closed (it was not a valid MPA request).
 */
bool siw_mpa_reason_reply(enum siw_mpa_reason reason);

/*
 * Initiator: the Terminate to send (in RDMA mode, RFC 6581) when the reply
 * is not acceptable. False if none is due (the peer rejected us).
 */
bool siw_mpa_reason_term(enum siw_mpa_reason reason, struct siw_term_code *tc);

#endif /* SIW_PROTO_MPA_H */
