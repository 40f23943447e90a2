/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * MPA markers (RFC 5044 section 5): where they go and what they say.
 *
 * A side that set M in its MPA request or reply receives markers: its
 * peer puts four octets into its stream at every 512th octet, counted
 * from the first octet after its own MPA frame. A marker holds 16 zero
 * bits and FPDUPTR, the distance back from the marker to the ULPDU_Length
 * field of the FPDU it sits in. A marker that falls just where an FPDU
 * starts belongs to that FPDU, with FPDUPTR 0: it precedes the length
 * field and, as every marker inside an FPDU, counts in the FPDU's size
 * and its CRC. (RFC 5044 can be read to leave that one out of the CRC;
 * Wireshark's dissector counts it in, and so does siw: see
 * Documentation/interop.md.)
 *
 * Positions are u32 octet counts of one direction's stream; 2^32 is a
 * multiple of 512, so they may wrap.
 */
#ifndef SIW_PROTO_MARKER_H
#define SIW_PROTO_MARKER_H

#include "wire.h"

/* A marker goes before the octet at stream position @pos. */
static inline bool siw_mark_due(u32 pos)
{
	return !(pos & (SIW_MPA_MARKER_SPACING - 1));
}

/* Stream octets from @pos up to the next marker position (1..512). */
static inline u32 siw_mark_room(u32 pos)
{
	return SIW_MPA_MARKER_SPACING - (pos & (SIW_MPA_MARKER_SPACING - 1));
}

/* Write a marker with @fpdu_ptr into @dst (SIW_MPA_MARKER_SIZE octets). */
void siw_mark_put(u8 *dst, u32 fpdu_ptr);

/*
 * Check a received marker: reserved bits zero and FPDUPTR @want (its two
 * low bits are ignored, as RFC 5044 asks of a receiver).
 */
bool siw_mark_ok(const u8 *m, u32 want);

/*
 * Sender: one FPDU at a time. siw_mark_begin() at its first octet,
 * siw_mark_copy() for length field, ULPDU and pad, siw_mark_flush()
 * before the CRC is computed over all that was written, siw_mark_copy()
 * of the CRC. Each returns the octets written to @dst, which needs room
 * for siw_mark_wire_len() of the FPDU.
 */
struct siw_mark_tx {
	u32 pos;		/* stream position of the next octet */
	u32 hdr_pos;		/* of this FPDU's ULPDU_Length field */
};

u32 siw_mark_begin(struct siw_mark_tx *m, u8 *dst);
u32 siw_mark_copy(struct siw_mark_tx *m, u8 *dst, const void *src, u32 len);
u32 siw_mark_flush(struct siw_mark_tx *m, u8 *dst);

/*
 * Octets on the wire of an FPDU of @clean octets (length field to CRC)
 * starting at stream position @pos, with its markers.
 */
u32 siw_mark_wire_len(u32 pos, u32 clean);

/*
 * MULPDU with markers (RFC 5044 section 8.1): the largest ULPDU whose
 * FPDU, with as many markers as @wire octets can hold wherever it starts,
 * fits in @wire octets, and in SIW_MARK_MAX_WIRE, so that every marker's
 * FPDUPTR fits its 16 bits. Zero if not even an empty ULPDU fits.
 */
#define SIW_MARK_MAX_WIRE	65536U
u32 siw_mark_mulpdu(u32 wire);

#endif /* SIW_PROTO_MARKER_H */
