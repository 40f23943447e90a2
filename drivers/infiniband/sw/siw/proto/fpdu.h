/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * FPDU framing math and DDP/RDMAP header building, sans IO.
 *
 * One FPDU on the wire:
 *
 *   +--------+---------------------+----------+-------+-----+
 *   | MPA len| DDP + RDMAP header  | payload  |  pad  | CRC |
 *   +--------+---------------------+----------+-------+-----+
 *     2        siw_fpdu_hdr_len()-2            0..3    4
 *
 * "Header length" in this API always includes the two octets of the MPA
 * ULPDU length field, so that a header buffer is exactly what goes on the
 * wire before the payload. The ULPDU is everything between the length
 * field and the pad.
 */
#ifndef SIW_PROTO_FPDU_H
#define SIW_PROTO_FPDU_H

#include "wire.h"

/* Longest header: MPA length + untagged DDP header + Atomic Request. */
#define SIW_FPDU_MAX_HDR	(SIW_MPA_LEN_SIZE + 18 + 52)
static_assert(sizeof(struct siw_ddp_untagged) +
	      sizeof(struct siw_rdmap_atomic_req) + SIW_MPA_LEN_SIZE ==
	      SIW_FPDU_MAX_HDR, "largest header");

/* Largest pad + CRC. */
#define SIW_FPDU_MAX_TRAILER	(3 + SIW_MPA_CRC_SIZE)

/* Static properties of one RDMAP opcode. */
struct siw_op_info {
	u8 tagged;	/* tagged buffer model (T=1) */
	u8 qn;		/* untagged: queue number */
	u8 hdr_len;	/* MPA length + DDP + RDMAP header octets */
	u8 single;	/* exactly one DDP segment: L=1, MO=0 */
	u8 no_payload;	/* ULPDU is exactly the header */
};

/* NULL if the opcode is not defined by RFC 5040 or RFC 7306. */
const struct siw_op_info *siw_op_info(unsigned int opcode);

/* siw_op_info(opcode)->hdr_len, or 0 for an unknown opcode. */
u32 siw_fpdu_hdr_len(unsigned int opcode);

/* Octets of PAD after a ULPDU of @ulpdu_len octets. */
static inline u32 siw_mpa_pad(u32 ulpdu_len)
{
	return (SIW_MPA_ALIGN - ((ulpdu_len + SIW_MPA_LEN_SIZE) &
				 (SIW_MPA_ALIGN - 1))) & (SIW_MPA_ALIGN - 1);
}

/* Octets of pad and CRC after a ULPDU of @ulpdu_len octets. */
static inline u32 siw_fpdu_trailer_len(u32 ulpdu_len)
{
	return siw_mpa_pad(ulpdu_len) + SIW_MPA_CRC_SIZE;
}

/* Octets one FPDU carrying @ulpdu_len octets of ULPDU takes on the wire. */
static inline u32 siw_fpdu_wire_len(u32 ulpdu_len)
{
	return SIW_MPA_LEN_SIZE + ulpdu_len + siw_fpdu_trailer_len(ulpdu_len);
}

/*
 * MULPDU: the largest ULPDU whose FPDU fits in @emss octets of TCP payload
 * (markers are never used). Zero if not even an empty ULPDU fits.
 */
u32 siw_mpa_mulpdu(u32 emss);

/*
 * Largest DDP payload of one segment of @opcode within @mulpdu octets of
 * ULPDU. Zero for opcodes that carry no payload, or if the header alone
 * does not fit.
 */
u32 siw_fpdu_max_payload(u32 mulpdu, unsigned int opcode);

/*
 * A decoded DDP/RDMAP header, host byte order. Built by
 * siw_fpdu_build_hdr(), filled in by the receive parser.
 */
struct siw_rreq_info {
	u32 sink_stag;
	u64 sink_to;
	u32 size;
	u32 src_stag;
	u64 src_to;
};

struct siw_term_info {
	struct siw_term_code code;
	u16 hdrct;		/* SIW_TERM_F_M/D/R as received or to send */
	u16 rsvd;		/* reserved bits as received */
	u16 opt_len;		/* octets of optional data after the control */
};

struct siw_atomic_req_info {
	u8 op;			/* enum siw_atomic_op */
	u32 rsvd;		/* reserved bits of the opcode word, as received */
	u32 req_id;
	u32 stag;
	u64 to;
	u64 add_swap;
	u64 add_swap_mask;
	u64 cmp;
	u64 cmp_mask;
};

struct siw_atomic_resp_info {
	u32 req_id;
	u64 orig;
};

struct siw_iwarp_hdr {
	u8 opcode;		/* enum siw_rdmap_opcode */
	bool tagged;
	bool last;
	u8 ddp_rsvd;		/* reserved bits as received, else ignored */
	u8 rdmap_rsvd;
	u16 ulpdu_len;		/* MPA ULPDU length */
	u32 payload_len;	/* DDP payload octets of this segment */

	/* tagged */
	u32 stag;
	u64 to;

	/* untagged */
	u32 qn;
	u32 msn;
	u32 mo;
	u32 inval_stag;		/* Send with Invalidate variants */

	union {
		struct siw_rreq_info rreq;
		struct siw_term_info term;
		u64 imm;
		struct siw_atomic_req_info areq;
		struct siw_atomic_resp_info aresp;
	} u;
};

/*
 * Write the MPA length field and the DDP/RDMAP header for @h into @buf.
 * The queue number comes from the opcode, the tagged flag too; @h->ulpdu_len
 * and the reserved fields are ignored. @payload_len is the number of DDP
 * payload octets that will follow (for Terminate: the optional data, whose
 * length must be at most SIW_TERM_MAX_OPT).
 *
 * Returns the header length (siw_fpdu_hdr_len()) or -1 if the opcode is
 * unknown, @buflen is too short, or the ULPDU would exceed 65535 octets
 * or the opcode's fixed length.
 */
int siw_fpdu_build_hdr(void *buf, size_t buflen, const struct siw_iwarp_hdr *h,
		       u32 payload_len);

/*
 * Write pad and CRC of an FPDU whose ULPDU is @ulpdu_len octets. @crc_state
 * is the running CRC32C register over length field, header and payload
 * (ignored when @crc_on is false, the CRC field is then zero). @buf needs
 * SIW_FPDU_MAX_TRAILER octets. Returns the octets written.
 */
u32 siw_fpdu_build_trailer(void *buf, u32 ulpdu_len, u32 crc_state,
			   bool crc_on);

#endif /* SIW_PROTO_FPDU_H */
