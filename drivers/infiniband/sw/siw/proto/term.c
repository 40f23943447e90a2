// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Terminate error classes: RFC 5040 section 7.4 (RDMAP, DDP), RFC 5044
 * section 8 and RFC 6581 section 9 (MPA).
 */
#include "term.h"

struct term_class {
	u8 layer;
	u8 etype;
	u8 ecode;
	const char *words;
};

#define RDMAP(t, c, w) { SIW_TERM_LAYER_RDMAP, SIW_TERM_RDMAP_##t, c, w }
#define DDP(t, c, w) { SIW_TERM_LAYER_DDP, SIW_TERM_DDP_##t, c, w }
#define MPA(c, w) { SIW_TERM_LAYER_LLP, SIW_TERM_LLP_MPA, SIW_TERM_LLP_##c, w }

static const struct term_class term_classes[] = {
	RDMAP(CATASTROPHIC, 0x00, "catastrophic error"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_INVALID_STAG, "invalid STag"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_BASE_BOUNDS,
	      "access outside the registered memory"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_ACCESS, "access rights violation"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_STAG_NOT_ASSOC,
	      "STag of another protection domain"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_TO_WRAP, "tagged offset wraps"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_CANNOT_INV,
	      "STag cannot be invalidated"),
	RDMAP(REMOTE_PROT, SIW_TERM_RDMAP_UNSPECIFIED,
	      "unspecified protection error"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_VERSION, "invalid RDMAP version"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_OPCODE, "unexpected opcode"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_CATA_STREAM,
	      "catastrophic error in this stream"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_CATA_GLOBAL,
	      "catastrophic error of the peer"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_CANNOT_INV,
	      "STag cannot be invalidated"),
	RDMAP(REMOTE_OP, SIW_TERM_RDMAP_UNSPECIFIED,
	      "unspecified operation error"),
	DDP(CATASTROPHIC, 0x00, "catastrophic DDP error"),
	DDP(TAGGED, SIW_TERM_DDP_T_INVALID_STAG,
	    "invalid tagged buffer (STag)"),
	DDP(TAGGED, SIW_TERM_DDP_T_BASE_BOUNDS,
	    "tagged access outside the registered memory"),
	DDP(TAGGED, SIW_TERM_DDP_T_STAG_NOT_ASSOC,
	    "tagged buffer of another stream"),
	DDP(TAGGED, SIW_TERM_DDP_T_TO_WRAP, "tagged offset wraps"),
	DDP(TAGGED, SIW_TERM_DDP_T_VERSION, "invalid DDP version"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_INVALID_QN, "invalid queue number"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_MSN_NOBUF,
	    "no buffer: no receive WR posted, or Read Requests beyond the IRD"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_MSN_RANGE,
	    "message sequence number out of range"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_INVALID_MO, "invalid message offset"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_TOO_LONG,
	    "message longer than the receive buffer"),
	DDP(UNTAGGED, SIW_TERM_DDP_U_VERSION, "invalid DDP version"),
	MPA(CONN_LOST, "TCP connection lost"),
	MPA(CRC, "CRC error"),
	MPA(MARKER_LEN, "MPA marker and ULPDU length disagree"),
	MPA(INVALID_RR, "invalid MPA request or reply"),
	MPA(CATASTROPHIC, "catastrophic MPA error"),
	MPA(NO_IRD, "insufficient IRD resources"),
	MPA(NO_RTR, "no matching RTR option"),
};

const char *siw_term_code_str(const struct siw_term_code *tc)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(term_classes); i++) {
		const struct term_class *c = &term_classes[i];

		if (c->layer == tc->layer && c->etype == tc->etype &&
		    c->ecode == tc->ecode)
			return c->words;
	}
	return NULL;
}

bool siw_term_code_unswap(struct siw_term_code *tc)
{
	struct siw_term_code swapped = {
		.layer = tc->etype,
		.etype = tc->layer,
		.ecode = tc->ecode,
	};

	if (siw_term_code_known(tc) || !siw_term_code_known(&swapped))
		return false;
	*tc = swapped;
	return true;
}
