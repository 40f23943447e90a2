// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * MPA markers. See marker.h for the placement rules.
 */
#include "marker.h"
#include "fpdu.h"

void siw_mark_put(u8 *dst, u32 fpdu_ptr)
{
	struct siw_mpa_marker mk = {
		.rsvd = 0,
		.fpdu_ptr = cpu_to_be16((u16)fpdu_ptr),
	};

	memcpy(dst, &mk, sizeof(mk));
}

bool siw_mark_ok(const u8 *m, u32 want)
{
	struct siw_mpa_marker mk;

	memcpy(&mk, m, sizeof(mk));
	return !mk.rsvd && (be16_to_cpu(mk.fpdu_ptr) & ~3U) == (want & 0xfffcU);
}

u32 siw_mark_begin(struct siw_mark_tx *m, u8 *dst)
{
	if (!siw_mark_due(m->pos)) {
		m->hdr_pos = m->pos;
		return 0;
	}
	siw_mark_put(dst, 0);
	m->pos += SIW_MPA_MARKER_SIZE;
	m->hdr_pos = m->pos;
	return SIW_MPA_MARKER_SIZE;
}

u32 siw_mark_flush(struct siw_mark_tx *m, u8 *dst)
{
	if (!siw_mark_due(m->pos))
		return 0;
	siw_mark_put(dst, m->pos - m->hdr_pos);
	m->pos += SIW_MPA_MARKER_SIZE;
	return SIW_MPA_MARKER_SIZE;
}

u32 siw_mark_copy(struct siw_mark_tx *m, u8 *dst, const void *src, u32 len)
{
	const u8 *s = src;
	u32 out = 0, n;

	while (len) {
		out += siw_mark_flush(m, dst + out);
		n = siw_mark_room(m->pos);
		if (n > len)
			n = len;
		memcpy(dst + out, s, n);
		out += n;
		s += n;
		len -= n;
		m->pos += n;
	}
	return out;
}

u32 siw_mark_wire_len(u32 pos, u32 clean)
{
	u32 wire = 0, n;

	while (clean) {
		if (siw_mark_due(pos)) {
			pos += SIW_MPA_MARKER_SIZE;
			wire += SIW_MPA_MARKER_SIZE;
		}
		n = siw_mark_room(pos);
		if (n > clean)
			n = clean;
		pos += n;
		wire += n;
		clean -= n;
	}
	return wire;
}

u32 siw_mark_mulpdu(u32 wire)
{
	u32 marks;

	/* FPDUPTR has 16 bits: no marker farther from its length field. */
	if (wire > SIW_MARK_MAX_WIRE)
		wire = SIW_MARK_MAX_WIRE;
	marks = (wire + SIW_MPA_MARKER_SPACING - 1) / SIW_MPA_MARKER_SPACING;

	if (wire <= marks * SIW_MPA_MARKER_SIZE)
		return 0;
	return siw_mpa_mulpdu(wire - marks * SIW_MPA_MARKER_SIZE);
}
