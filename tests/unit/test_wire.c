// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Wire layouts: sizes, field offsets and constants against the RFCs. The
 * sizes are also static_assert()ed in wire.h; these tests name them.
 */
#include "siw_test.h"
#include "wire.h"
#include "fpdu.h"

static void mpa_layout(void)
{
	CHECK_EQ(sizeof(struct siw_mpa_rr), 20);
	CHECK_EQ(offsetof(struct siw_mpa_rr, key), 0);
	CHECK_EQ(offsetof(struct siw_mpa_rr, flags), 16);
	CHECK_EQ(offsetof(struct siw_mpa_rr, rev), 17);
	CHECK_EQ(offsetof(struct siw_mpa_rr, pd_len), 18);
	CHECK_EQ(sizeof(struct siw_mpa_v2), 4);
	CHECK_EQ(sizeof(struct siw_mpa_trailer), 4);
	CHECK_EQ(sizeof(struct siw_mpa_marker), 4);
	CHECK_EQ(strlen(SIW_MPA_KEY_REQ), SIW_MPA_KEY_LEN);
	CHECK_EQ(strlen(SIW_MPA_KEY_REP), SIW_MPA_KEY_LEN);
	CHECK_MEM(SIW_MPA_KEY_REQ,
		  "\x4d\x50\x41\x20\x49\x44\x20\x52\x65\x71\x20\x46\x72\x61\x6d\x65",
		  16);
	CHECK_MEM(SIW_MPA_KEY_REP,
		  "\x4d\x50\x41\x20\x49\x44\x20\x52\x65\x70\x20\x46\x72\x61\x6d\x65",
		  16);
	CHECK_EQ(SIW_MPA_MAX_PD, 512);
	CHECK_EQ(SIW_MPA_MARKER_SPACING, 512);
}

static void mpa_flags(void)
{
	/* M, C, R are the three top bits of the octet after the key. */
	CHECK_EQ(SIW_MPA_F_MARKERS, 0x80);
	CHECK_EQ(SIW_MPA_F_CRC, 0x40);
	CHECK_EQ(SIW_MPA_F_REJECT, 0x20);
	CHECK_EQ(SIW_MPA_F_ENHANCED | SIW_MPA_F_LARGE | SIW_MPA_F_LARGE_TAKEN |
		 SIW_MPA_F_RES, 0x1f);
	/* Linux siw's MPA_RR_FLAG_GSO_EXP, 0x0800 of the flags/rev word. */
	CHECK_EQ(SIW_MPA_F_LARGE << 8, 0x0800);
	/* RFC 6581 IRD/ORD word: two flag bits over 14 value bits. */
	CHECK_EQ(SIW_MPA_V2_P2P, 0x8000);
	CHECK_EQ(SIW_MPA_V2_RTR_SEND, 0x4000);
	CHECK_EQ(SIW_MPA_V2_RTR_WRITE, 0x8000);
	CHECK_EQ(SIW_MPA_V2_RTR_READ, 0x4000);
	CHECK_EQ(SIW_MPA_V2_VAL_MASK, 0x3fff);
}

static void ddp_layout(void)
{
	CHECK_EQ(sizeof(struct siw_ddp_tagged), 14);
	CHECK_EQ(offsetof(struct siw_ddp_tagged, rdmap_ctrl), 1);
	CHECK_EQ(offsetof(struct siw_ddp_tagged, stag), 2);
	CHECK_EQ(offsetof(struct siw_ddp_tagged, to), 6);
	CHECK_EQ(sizeof(struct siw_ddp_untagged), 18);
	CHECK_EQ(offsetof(struct siw_ddp_untagged, inval_stag), 2);
	CHECK_EQ(offsetof(struct siw_ddp_untagged, qn), 6);
	CHECK_EQ(offsetof(struct siw_ddp_untagged, msn), 10);
	CHECK_EQ(offsetof(struct siw_ddp_untagged, mo), 14);
	CHECK_EQ(SIW_DDP_F_TAGGED | SIW_DDP_F_LAST | SIW_DDP_RSVD_MASK |
		 SIW_DDP_DV_MASK, 0xff);
	CHECK_EQ(SIW_RDMAP_RV_MASK | SIW_RDMAP_RSVD_MASK |
		 SIW_RDMAP_OPCODE_MASK, 0xff);
	CHECK_EQ(SIW_RDMAP_VERSION << SIW_RDMAP_RV_SHIFT, 0x40);
}

static void rdmap_layout(void)
{
	CHECK_EQ(sizeof(struct siw_rdmap_read_req), 28);
	CHECK_EQ(offsetof(struct siw_rdmap_read_req, sink_to), 4);
	CHECK_EQ(offsetof(struct siw_rdmap_read_req, size), 12);
	CHECK_EQ(offsetof(struct siw_rdmap_read_req, src_stag), 16);
	CHECK_EQ(offsetof(struct siw_rdmap_read_req, src_to), 20);
	CHECK_EQ(sizeof(struct siw_rdmap_term), 4);
	CHECK_EQ(sizeof(struct siw_rdmap_imm), 8);
	CHECK_EQ(sizeof(struct siw_rdmap_atomic_req), 52);
	CHECK_EQ(offsetof(struct siw_rdmap_atomic_req, stag), 8);
	CHECK_EQ(offsetof(struct siw_rdmap_atomic_req, to), 12);
	CHECK_EQ(offsetof(struct siw_rdmap_atomic_req, cmp_mask), 44);
	CHECK_EQ(sizeof(struct siw_rdmap_atomic_resp), 12);
	CHECK_EQ(SIW_TERM_MAX_OPT, 48);
	CHECK_EQ(SIW_FPDU_MAX_HDR, 72);
}

static void opcodes(void)
{
	/* RFC 5040 section 4.3 and RFC 7306. */
	CHECK_EQ(SIW_RDMAP_WRITE, 0);
	CHECK_EQ(SIW_RDMAP_READ_REQ, 1);
	CHECK_EQ(SIW_RDMAP_READ_RESP, 2);
	CHECK_EQ(SIW_RDMAP_SEND, 3);
	CHECK_EQ(SIW_RDMAP_SEND_INV, 4);
	CHECK_EQ(SIW_RDMAP_SEND_SE, 5);
	CHECK_EQ(SIW_RDMAP_SEND_SE_INV, 6);
	CHECK_EQ(SIW_RDMAP_TERMINATE, 7);
	CHECK_EQ(SIW_RDMAP_IMM, 8);
	CHECK_EQ(SIW_RDMAP_IMM_SE, 9);
	CHECK_EQ(SIW_RDMAP_ATOMIC_REQ, 10);
	CHECK_EQ(SIW_RDMAP_ATOMIC_RESP, 11);
	CHECK_EQ(SIW_ATOMIC_FETCH_ADD, 0);
	CHECK_EQ(SIW_ATOMIC_SWAP, 1);
	CHECK_EQ(SIW_ATOMIC_CMP_SWAP, 2);
	CHECK_EQ(SIW_QN_SEND, 0);
	CHECK_EQ(SIW_QN_READ_REQ, 1);
	CHECK_EQ(SIW_QN_TERMINATE, 2);
	CHECK_EQ(SIW_QN_ATOMIC, 3);
}

static void terminate_codes(void)
{
	CHECK_EQ(SIW_TERM_LAYER_RDMAP, 0);
	CHECK_EQ(SIW_TERM_LAYER_DDP, 1);
	CHECK_EQ(SIW_TERM_LAYER_LLP, 2);
	CHECK_EQ(SIW_TERM_RDMAP_REMOTE_PROT, 1);
	CHECK_EQ(SIW_TERM_RDMAP_REMOTE_OP, 2);
	CHECK_EQ(SIW_TERM_RDMAP_VERSION, 5);
	CHECK_EQ(SIW_TERM_RDMAP_OPCODE, 6);
	CHECK_EQ(SIW_TERM_RDMAP_CANNOT_INV, 9);
	CHECK_EQ(SIW_TERM_RDMAP_UNSPECIFIED, 0xff);
	CHECK_EQ(SIW_TERM_DDP_TAGGED, 1);
	CHECK_EQ(SIW_TERM_DDP_UNTAGGED, 2);
	CHECK_EQ(SIW_TERM_DDP_T_VERSION, 4);
	CHECK_EQ(SIW_TERM_DDP_U_INVALID_QN, 1);
	CHECK_EQ(SIW_TERM_DDP_U_VERSION, 6);
	CHECK_EQ(SIW_TERM_LLP_CRC, 2);
	CHECK_EQ(SIW_TERM_LLP_INVALID_RR, 4);
	CHECK_EQ(SIW_TERM_LLP_NO_IRD, 6);
	CHECK_EQ(SIW_TERM_LLP_NO_RTR, 7);
}

static void terminate_ctrl(void)
{
	struct siw_term_code tc = {
		.layer = SIW_TERM_LAYER_LLP,
		.etype = SIW_TERM_LLP_MPA,
		.ecode = SIW_TERM_LLP_CRC,
	}, back;
	u32 ctrl = siw_term_ctrl(&tc, SIW_TERM_F_M | SIW_TERM_F_D);
	__be32 wire = cpu_to_be32(ctrl);

	/* Layer nibble, EType nibble, Error Code octet, M D R, reserved. */
	CHECK_EQ(ctrl, 0x20028000 | 0x4000);
	CHECK_MEM(&wire, "\x20\x02\xc0\x00", 4);
	siw_term_decode(ctrl, &back);
	CHECK_EQ(back.layer, tc.layer);
	CHECK_EQ(back.etype, tc.etype);
	CHECK_EQ(back.ecode, tc.ecode);

	tc.layer = SIW_TERM_LAYER_DDP;
	tc.etype = SIW_TERM_DDP_UNTAGGED;
	tc.ecode = SIW_TERM_DDP_U_VERSION;
	CHECK_EQ(siw_term_ctrl(&tc, SIW_TERM_F_R | SIW_TERM_RSVD_MASK),
		 0x12062000);
}

int main(void)
{
	RUN(mpa_layout);
	RUN(mpa_flags);
	RUN(ddp_layout);
	RUN(rdmap_layout);
	RUN(opcodes);
	RUN(terminate_codes);
	RUN(terminate_ctrl);
	return siw_test_done();
}
