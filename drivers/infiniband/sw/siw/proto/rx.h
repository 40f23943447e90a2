/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Receive side FPDU parser: a sans-IO state machine.
 *
 * The parser never sees payload. It owns the control octets of each FPDU
 * (MPA length, DDP/RDMAP header, pad, CRC) and tells the caller how many
 * payload octets follow, so that the caller can place them straight into
 * the target buffer and fold them into the CRC in the same pass (in the
 * kernel: from the skb, in the tcp_read_sock() actor).
 *
 * Driving loop:
 *
 *	for (;;) {
 *		struct siw_rx_want w = siw_rx_want(rx);
 *
 *		switch (w.state) {
 *		case SIW_RX_HDR:
 *		case SIW_RX_TRAILER:
 *		case SIW_RX_MARKER:
 *			// give up to w.len octets (fewer is fine)
 *			n = siw_rx_feed_hdr(rx, p, min(avail, w.len));
 *			break;
 *		case SIW_RX_HDR_DONE:
 *			// siw_rx_hdr(rx) is valid: look up STag, RQE, ...
 *			// then (or siw_rx_fail() with a Terminate code)
 *			siw_rx_next(rx);
 *			break;
 *		case SIW_RX_PAYLOAD:
 *			// place n <= w.len octets, fold them into the CRC
 *			crc = siw_crc32c_update(siw_rx_crc_state(rx), p, n);
 *			siw_rx_payload_done(rx, n, crc);
 *			break;
 *		case SIW_RX_SEG_DONE:
 *			// CRC verified; complete the message if hdr->last
 *			siw_rx_next(rx);
 *			break;
 *		case SIW_RX_ERROR:
 *			// send a Terminate with siw_rx_term(rx), then close
 *		}
 *	}
 *
 * With markers on (siw_rx_set_markers()), the parser strips them: state
 * MARKER asks for a marker's octets wherever one is due, and HDR, PAYLOAD
 * and TRAILER never ask past the next one. Markers are checked and go
 * into the FPDU's CRC.
 *
 * Guarantees: siw_rx_feed_hdr() never consumes more than it is given nor a
 * single payload octet; a call with len <= siw_rx_want().len consumes all
 * of it unless it fails; each call either consumes an octet or changes the
 * state, except a call with len 0; every error is sticky and carries the
 * Terminate Layer/EType/Error Code that RFC 5040, 5041 and 5044 assign
 * to it.
 */
#ifndef SIW_PROTO_RX_H
#define SIW_PROTO_RX_H

#include "fpdu.h"

enum siw_rx_state {
	SIW_RX_HDR,		/* feed header octets */
	SIW_RX_HDR_DONE,	/* header parsed: inspect, then siw_rx_next() */
	SIW_RX_PAYLOAD,		/* caller places payload octets */
	SIW_RX_TRAILER,		/* feed pad and CRC octets */
	SIW_RX_MARKER,		/* feed the octets of an MPA marker */
	SIW_RX_SEG_DONE,	/* segment complete: siw_rx_next() */
	SIW_RX_ERROR,		/* sticky */
};

enum siw_rx_err {
	SIW_RX_OK = 0,
	SIW_RX_E_ULPDU_LEN,	/* ULPDU shorter than the opcode's header */
	SIW_RX_E_DDP_VERSION,
	SIW_RX_E_RDMAP_VERSION,
	SIW_RX_E_OPCODE,	/* unknown or not enabled */
	SIW_RX_E_TAGGED,	/* T flag does not fit the opcode */
	SIW_RX_E_QN,		/* wrong queue number for the opcode */
	SIW_RX_E_MO,		/* MO not zero in a single segment message */
	SIW_RX_E_MO_WRAP,	/* MO + payload beyond 2^32 */
	SIW_RX_E_NOT_LAST,	/* single segment message without L */
	SIW_RX_E_MSG_LEN,	/* longer than the opcode's fixed length */
	SIW_RX_E_TO_WRAP,	/* TO + payload beyond 2^64 */
	SIW_RX_E_READ_WRAP,	/* Read Request TO + size beyond 2^64 */
	SIW_RX_E_ATOMIC_OP,	/* unknown atomic operation */
	SIW_RX_E_CRC,
	SIW_RX_E_MARKER,	/* marker not pointing to its FPDU */
	SIW_RX_E_CALLER,	/* siw_rx_fail() */
	SIW_RX_E_MISUSE,	/* API called in the wrong state */
	SIW_RX_NUM_ERRS
};

/* Opcode masks for siw_rx_set_opcodes(). */
#define SIW_RX_OPS_RFC5040	0x00ffU	/* Write ... Terminate */
#define SIW_RX_OPS_ALL		((1U << SIW_RDMAP_NUM_OPCODES) - 1)

struct siw_rx_want {
	enum siw_rx_state state;
	u32 len;	/* octets wanted in HDR, PAYLOAD, TRAILER, MARKER */
};

/* Opaque to callers: use the accessors. */
struct siw_rx {
	enum siw_rx_state state;
	enum siw_rx_err err;
	struct siw_term_code term;
	u16 term_hdrct;
	bool crc_on;
	u16 opmask;
	u32 crc;		/* running CRC32C register of this FPDU */
	u32 hdr_len;		/* header octets of this FPDU, 4 until known */
	u32 have;		/* header octets so far */
	u32 trl_have;		/* pad and CRC octets so far */
	u32 payload_left;
	u32 trailer_len;
	bool markers;		/* the stream carries MPA markers */
	u32 pos;		/* stream octets consumed, markers too */
	u32 hdr_pos;		/* stream position of this FPDU's length */
	u32 mk_have;		/* octets of the current marker so far */
	u8 mk[SIW_MPA_MARKER_SIZE];
	u8 raw[SIW_FPDU_MAX_HDR];
	u8 trailer[SIW_FPDU_MAX_TRAILER];
	struct siw_iwarp_hdr hdr;
};

void siw_rx_init(struct siw_rx *rx, bool crc_enabled);

/* Accept only the opcodes whose bit is set (default SIW_RX_OPS_ALL). */
void siw_rx_set_opcodes(struct siw_rx *rx, u16 mask);

/*
 * The peer puts MPA markers into the stream (we set M). Call before the
 * first octet: positions count from there.
 */
void siw_rx_set_markers(struct siw_rx *rx, bool on);

struct siw_rx_want siw_rx_want(const struct siw_rx *rx);

/*
 * Feed header octets (state HDR), pad/CRC octets (state TRAILER) or
 * marker octets (state MARKER). Returns the octets consumed, or -1 once
 * the parser is in state ERROR.
 */
int siw_rx_feed_hdr(struct siw_rx *rx, const void *buf, u32 len);

/* Leave HDR_DONE or SEG_DONE. Returns 0, or -1 in any other state. */
int siw_rx_next(struct siw_rx *rx);

/* The CRC register to continue from when folding in payload. */
static inline u32 siw_rx_crc_state(const struct siw_rx *rx)
{
	return rx->crc;
}

/*
 * The caller placed @n (<= want.len) payload octets and folded them into
 * the CRC register, giving @crc_state (ignored without CRC). Returns 0 or
 * -1 on misuse (the parser then is in state ERROR).
 */
int siw_rx_payload_done(struct siw_rx *rx, u32 n, u32 crc_state);

/* Same for payload in one linear buffer: folds the CRC itself. */
int siw_rx_payload(struct siw_rx *rx, const void *buf, u32 n);

/*
 * The current segment's header, valid from HDR_DONE up to siw_rx_next()
 * in SEG_DONE, and in ERROR as far as it was parsed.
 */
static inline const struct siw_iwarp_hdr *siw_rx_hdr(const struct siw_rx *rx)
{
	return &rx->hdr;
}

/*
 * Terminate optional data of a received Terminate (state HDR_DONE or
 * later): rx->hdr.u.term.opt_len octets.
 */
const u8 *siw_rx_term_opt(const struct siw_rx *rx);

/* Fail the stream with a caller-detected error (bad STag, no RQE, ...). */
void siw_rx_fail(struct siw_rx *rx, const struct siw_term_code *tc);

static inline enum siw_rx_err siw_rx_error(const struct siw_rx *rx)
{
	return rx->err;
}

/* The Terminate code to send, valid in state ERROR. */
static inline const struct siw_term_code *siw_rx_term(const struct siw_rx *rx)
{
	return &rx->term;
}

/*
 * In state ERROR: the header octets received of the offending FPDU
 * (starting with the MPA length field) and the Terminate hdrct bits that
 * fit them (M: length valid, D: DDP header complete, R: Read Request
 * header complete). Copy them into the Terminate's optional data.
 */
const u8 *siw_rx_err_hdr(const struct siw_rx *rx, u32 *len, u16 *hdrct);

const char *siw_rx_err_str(enum siw_rx_err err);

#endif /* SIW_PROTO_RX_H */
