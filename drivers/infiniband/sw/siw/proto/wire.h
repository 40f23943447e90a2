/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * iWARP on-the-wire formats: MPA (RFC 5044, RFC 6581), DDP (RFC 5041),
 * RDMAP (RFC 5040) and the RDMAP extensions of RFC 7306.
 *
 * Every multi-byte field is big endian on the wire, except the MPA CRC (see
 * siw_mpa_trailer). The structures are packed and byte exact; code reads
 * and writes them through memcpy() into a local copy, never by casting a
 * receive buffer, so alignment never matters.
 */
#ifndef SIW_PROTO_WIRE_H
#define SIW_PROTO_WIRE_H

#include "env.h"

/* ------------------------------------------------------------------------
 * MPA connection setup: request and reply frames (RFC 5044 section 7.1)
 */
#define SIW_MPA_KEY_LEN		16
#define SIW_MPA_KEY_REQ		"MPA ID Req Frame"
#define SIW_MPA_KEY_REP		"MPA ID Rep Frame"
#define SIW_MPA_MAX_PD		512	/* private data bound, both frames */

#define SIW_MPA_REV_1		1	/* RFC 5044 */
#define SIW_MPA_REV_2		2	/* RFC 6581 enhanced setup */

/* Flags octet, the one following the key. */
#define SIW_MPA_F_MARKERS	0x80	/* M: sender wants markers */
#define SIW_MPA_F_CRC		0x40	/* C: sender wants CRC */
#define SIW_MPA_F_REJECT	0x20	/* R: reply rejects the connection */
/*
 * First bit of the Res field. Linux siw and Chelsio T4/T5 set it together
 * with revision 2 to say that the private data starts with the RFC 6581
 * IRD/ORD word; a peer that does not set it sends none.
 */
#define SIW_MPA_F_ENHANCED	0x10
/*
 * Second bit of the Res field: the sender takes FPDUs larger than one TCP
 * segment (and would send such). Linux siw sets it in a request with its
 * try_gso parameter; hardware RNICs leave it zero. A Linux siw responder
 * builds its reply from the request's header, so a reply echoes it
 * whether or not that responder takes large FPDUs.
 */
#define SIW_MPA_F_LARGE		0x08
/*
 * Third bit of the Res field, ours, in a reply only: the responder took
 * the request's offer of large FPDUs. Never in a request, so a responder
 * that echoes the request's flags cannot set it.
 */
#define SIW_MPA_F_LARGE_TAKEN	0x04
#define SIW_MPA_F_RES		0x03	/* zero on send, ignored on receive */

struct siw_mpa_rr {
	u8 key[SIW_MPA_KEY_LEN];
	u8 flags;
	u8 rev;
	__be16 pd_len;
	/* pd_len octets of private data follow */
} __packed;

/*
 * RFC 6581 enhanced connection setup data: the first four private data
 * octets of a revision 2 frame. Two 16-bit words; the two top bits of each
 * are flags, the low 14 bits the IRD or ORD value.
 */
#define SIW_MPA_V2_P2P		0x8000	/* IRD word: peer-to-peer mode */
#define SIW_MPA_V2_RTR_SEND	0x4000	/* IRD word: zero length Send RTR */
#define SIW_MPA_V2_RTR_WRITE	0x8000	/* ORD word: zero length Write RTR */
#define SIW_MPA_V2_RTR_READ	0x4000	/* ORD word: zero length Read RTR */
#define SIW_MPA_V2_VAL_MASK	0x3fff
#define SIW_MPA_V2_MAX_IRD_ORD	0x3fff

struct siw_mpa_v2 {
	__be16 ird;
	__be16 ord;
} __packed;

/* ------------------------------------------------------------------------
 * MPA full operation: FPDU (RFC 5044 section 4)
 *
 *   ULPDU_Length (16) | ULPDU | PAD (0..3, zero) | CRC (32)
 *
 * The PAD makes ULPDU_Length + ULPDU + PAD a multiple of four. The CRC
 * field is always present; it carries CRC32C over length, ULPDU and pad
 * when CRC was negotiated, and zero (not checked) otherwise.
 */
#define SIW_MPA_LEN_SIZE	2
#define SIW_MPA_CRC_SIZE	4
#define SIW_MPA_ALIGN		4
#define SIW_MPA_MAX_ULPDU	0xffff

/*
 * The CRC is the CRC32C register value, sent least significant octet first
 * (as in iSCSI, RFC 3720): store it with cpu_to_le32().
 */
struct siw_mpa_trailer {
	__le32 crc;
} __packed;

/*
 * Markers (RFC 5044 section 5): four octets every 512 octets of the TCP
 * stream, pointing back to the FPDU start (marker.h has the rules).
 */
#define SIW_MPA_MARKER_SPACING	512
#define SIW_MPA_MARKER_SIZE	4

struct siw_mpa_marker {
	__be16 rsvd;
	__be16 fpdu_ptr;
} __packed;

/* ------------------------------------------------------------------------
 * DDP segment header (RFC 5041 section 4) with the RDMAP control octet
 * (RFC 5040 section 4.2) that lives in DDP's RsvdULP field.
 */
#define SIW_DDP_F_TAGGED	0x80	/* T */
#define SIW_DDP_F_LAST		0x40	/* L */
#define SIW_DDP_RSVD_MASK	0x3c
#define SIW_DDP_DV_MASK		0x03
#define SIW_DDP_VERSION		1

#define SIW_RDMAP_RV_MASK	0xc0
#define SIW_RDMAP_RV_SHIFT	6
#define SIW_RDMAP_RSVD_MASK	0x30
#define SIW_RDMAP_OPCODE_MASK	0x0f
#define SIW_RDMAP_VERSION	1

/* RDMAP opcodes: RFC 5040 section 4.3, RFC 7306 section 9. */
enum siw_rdmap_opcode {
	SIW_RDMAP_WRITE = 0x0,
	SIW_RDMAP_READ_REQ = 0x1,
	SIW_RDMAP_READ_RESP = 0x2,
	SIW_RDMAP_SEND = 0x3,
	SIW_RDMAP_SEND_INV = 0x4,
	SIW_RDMAP_SEND_SE = 0x5,
	SIW_RDMAP_SEND_SE_INV = 0x6,
	SIW_RDMAP_TERMINATE = 0x7,
	SIW_RDMAP_IMM = 0x8,
	SIW_RDMAP_IMM_SE = 0x9,
	SIW_RDMAP_ATOMIC_REQ = 0xa,
	SIW_RDMAP_ATOMIC_RESP = 0xb,
	SIW_RDMAP_NUM_OPCODES
};

/* Untagged queue numbers: RFC 5040 section 5.1, RFC 7306. */
enum siw_ddp_qn {
	SIW_QN_SEND = 0,	/* Send variants, Immediate Data */
	SIW_QN_READ_REQ = 1,	/* RDMA Read Request */
	SIW_QN_TERMINATE = 2,	/* Terminate */
	SIW_QN_ATOMIC = 3,	/* Atomic Request and Response */
	SIW_QN_COUNT
};

/* Tagged: T=1. 14 octets. */
struct siw_ddp_tagged {
	u8 ddp_ctrl;
	u8 rdmap_ctrl;
	__be32 stag;
	__be64 to;
} __packed;

/* Untagged: T=0. 18 octets; inval_stag is RsvdULP[8:39]. */
struct siw_ddp_untagged {
	u8 ddp_ctrl;
	u8 rdmap_ctrl;
	__be32 inval_stag;	/* Send with Invalidate, else zero */
	__be32 qn;
	__be32 msn;
	__be32 mo;
} __packed;

/* ------------------------------------------------------------------------
 * RDMAP headers that follow the DDP header (RFC 5040 section 4.4, 4.8;
 * RFC 7306 sections 5 and 6).
 */
struct siw_rdmap_read_req {
	__be32 sink_stag;
	__be64 sink_to;
	__be32 size;		/* RDMA Read Message Size */
	__be32 src_stag;
	__be64 src_to;
} __packed;

/*
 * Terminate Control: Layer (4) | EType (4) | Error Code (8) | M D R (3) |
 * reserved (13). Optional data follows: the DDP segment length (2 octets)
 * and the terminated DDP header (D), then the terminated RDMAP header (R).
 */
#define SIW_TERM_LAYER_SHIFT	28
#define SIW_TERM_ETYPE_SHIFT	24
#define SIW_TERM_ECODE_SHIFT	16
#define SIW_TERM_NIBBLE_MASK	0xf
#define SIW_TERM_ECODE_MASK	0xff
#define SIW_TERM_F_M		0x8000	/* DDP segment length valid */
#define SIW_TERM_F_D		0x4000	/* DDP header included */
#define SIW_TERM_F_R		0x2000	/* RDMAP header included */
#define SIW_TERM_RSVD_MASK	0x1fff
/* Longest optional part: length, untagged DDP header, Read Request. */
#define SIW_TERM_MAX_OPT	(SIW_MPA_LEN_SIZE + 18 + 28)

struct siw_rdmap_term {
	__be32 ctrl;
} __packed;

struct siw_rdmap_imm {
	__be64 data;
} __packed;

#define SIW_ATOMIC_OP_MASK	0x0000000f

enum siw_atomic_op {
	SIW_ATOMIC_FETCH_ADD = 0,
	SIW_ATOMIC_SWAP = 1,
	SIW_ATOMIC_CMP_SWAP = 2,
	SIW_ATOMIC_NUM_OPS
};

struct siw_rdmap_atomic_req {
	__be32 op;		/* 28 reserved bits, then the atomic opcode */
	__be32 req_id;
	__be32 stag;
	__be64 to;
	__be64 add_swap;
	__be64 add_swap_mask;
	__be64 cmp;
	__be64 cmp_mask;
} __packed;

struct siw_rdmap_atomic_resp {
	__be32 req_id;
	__be64 orig;
} __packed;

/* ------------------------------------------------------------------------
 * Terminate error classes (RFC 5040 section 7, RFC 5044 section 8,
 * RFC 6581 section 9).
 */
enum siw_term_layer {
	SIW_TERM_LAYER_RDMAP = 0,
	SIW_TERM_LAYER_DDP = 1,
	SIW_TERM_LAYER_LLP = 2,
};

enum siw_term_rdmap_etype {
	SIW_TERM_RDMAP_CATASTROPHIC = 0,
	SIW_TERM_RDMAP_REMOTE_PROT = 1,
	SIW_TERM_RDMAP_REMOTE_OP = 2,
};

enum siw_term_rdmap_ecode {
	SIW_TERM_RDMAP_INVALID_STAG = 0x00,
	SIW_TERM_RDMAP_BASE_BOUNDS = 0x01,
	SIW_TERM_RDMAP_ACCESS = 0x02,
	SIW_TERM_RDMAP_STAG_NOT_ASSOC = 0x03,
	SIW_TERM_RDMAP_TO_WRAP = 0x04,
	SIW_TERM_RDMAP_VERSION = 0x05,
	SIW_TERM_RDMAP_OPCODE = 0x06,
	SIW_TERM_RDMAP_CATA_STREAM = 0x07,
	SIW_TERM_RDMAP_CATA_GLOBAL = 0x08,
	SIW_TERM_RDMAP_CANNOT_INV = 0x09,
	SIW_TERM_RDMAP_UNSPECIFIED = 0xff,
};

enum siw_term_ddp_etype {
	SIW_TERM_DDP_CATASTROPHIC = 0,
	SIW_TERM_DDP_TAGGED = 1,
	SIW_TERM_DDP_UNTAGGED = 2,
	SIW_TERM_DDP_RSVD = 3,
};

enum siw_term_ddp_tagged_ecode {
	SIW_TERM_DDP_T_INVALID_STAG = 0x00,
	SIW_TERM_DDP_T_BASE_BOUNDS = 0x01,
	SIW_TERM_DDP_T_STAG_NOT_ASSOC = 0x02,
	SIW_TERM_DDP_T_TO_WRAP = 0x03,
	SIW_TERM_DDP_T_VERSION = 0x04,
};

enum siw_term_ddp_untagged_ecode {
	SIW_TERM_DDP_U_INVALID_QN = 0x01,
	SIW_TERM_DDP_U_MSN_NOBUF = 0x02,
	SIW_TERM_DDP_U_MSN_RANGE = 0x03,
	SIW_TERM_DDP_U_INVALID_MO = 0x04,
	SIW_TERM_DDP_U_TOO_LONG = 0x05,
	SIW_TERM_DDP_U_VERSION = 0x06,
};

enum siw_term_llp_etype {
	SIW_TERM_LLP_MPA = 0,
};

enum siw_term_llp_ecode {
	SIW_TERM_LLP_CONN_LOST = 0x01,
	SIW_TERM_LLP_CRC = 0x02,
	SIW_TERM_LLP_MARKER_LEN = 0x03,	/* marker vs ULPDU length mismatch */
	SIW_TERM_LLP_INVALID_RR = 0x04,	/* bad MPA request or reply */
	SIW_TERM_LLP_CATASTROPHIC = 0x05,
	SIW_TERM_LLP_NO_IRD = 0x06,	/* insufficient IRD resources */
	SIW_TERM_LLP_NO_RTR = 0x07,	/* no matching RTR option */
};

/* A decoded Terminate error class, in host order. */
struct siw_term_code {
	u8 layer;
	u8 etype;
	u8 ecode;
};

/*
 * The one way a Terminate code is written: SIW_TERM(DDP, DDP_TAGGED,
 * DDP_T_TO_WRAP) is layer SIW_TERM_LAYER_DDP, error type
 * SIW_TERM_DDP_TAGGED, code SIW_TERM_DDP_T_TO_WRAP. A compound literal:
 * it assigns, and initializes a table.
 */
#define SIW_TERM(layer, etype, ecode)					\
	((struct siw_term_code){ SIW_TERM_LAYER_##layer, SIW_TERM_##etype, \
				 SIW_TERM_##ecode })

static inline u32 siw_term_ctrl(const struct siw_term_code *tc, u16 hdrct)
{
	return ((u32)(tc->layer & SIW_TERM_NIBBLE_MASK) << SIW_TERM_LAYER_SHIFT) |
	       ((u32)(tc->etype & SIW_TERM_NIBBLE_MASK) << SIW_TERM_ETYPE_SHIFT) |
	       ((u32)tc->ecode << SIW_TERM_ECODE_SHIFT) |
	       (hdrct & (SIW_TERM_F_M | SIW_TERM_F_D | SIW_TERM_F_R));
}

static inline void siw_term_decode(u32 ctrl, struct siw_term_code *tc)
{
	tc->layer = (ctrl >> SIW_TERM_LAYER_SHIFT) & SIW_TERM_NIBBLE_MASK;
	tc->etype = (ctrl >> SIW_TERM_ETYPE_SHIFT) & SIW_TERM_NIBBLE_MASK;
	tc->ecode = (ctrl >> SIW_TERM_ECODE_SHIFT) & SIW_TERM_ECODE_MASK;
}

/* ------------------------------------------------------------------------
 * Sizes, fixed by the RFCs.
 */
static_assert(sizeof(struct siw_mpa_rr) == 20, "MPA req/rep header");
static_assert(offsetof(struct siw_mpa_rr, flags) == 16, "MPA flags");
static_assert(offsetof(struct siw_mpa_rr, pd_len) == 18, "MPA PD_Length");
static_assert(sizeof(struct siw_mpa_v2) == 4, "MPA v2 IRD/ORD");
static_assert(sizeof(struct siw_mpa_trailer) == SIW_MPA_CRC_SIZE, "CRC");
static_assert(sizeof(struct siw_mpa_marker) == SIW_MPA_MARKER_SIZE, "marker");
static_assert(sizeof(struct siw_ddp_tagged) == 14, "DDP tagged header");
static_assert(offsetof(struct siw_ddp_tagged, to) == 6, "DDP TO");
static_assert(sizeof(struct siw_ddp_untagged) == 18, "DDP untagged header");
static_assert(offsetof(struct siw_ddp_untagged, qn) == 6, "DDP QN");
static_assert(offsetof(struct siw_ddp_untagged, mo) == 14, "DDP MO");
static_assert(sizeof(struct siw_rdmap_read_req) == 28, "Read Request");
static_assert(offsetof(struct siw_rdmap_read_req, size) == 12, "RR size");
static_assert(sizeof(struct siw_rdmap_term) == 4, "Terminate control");
static_assert(sizeof(struct siw_rdmap_imm) == 8, "Immediate Data");
static_assert(sizeof(struct siw_rdmap_atomic_req) == 52, "Atomic Request");
static_assert(offsetof(struct siw_rdmap_atomic_req, add_swap) == 20,
	      "Atomic Request data");
static_assert(sizeof(struct siw_rdmap_atomic_resp) == 12, "Atomic Response");
static_assert(sizeof(struct siw_ddp_untagged) +
	      sizeof(struct siw_rdmap_read_req) + SIW_MPA_LEN_SIZE ==
	      SIW_TERM_MAX_OPT, "Terminate optional data");

#endif /* SIW_PROTO_WIRE_H */
