// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FPDU framing math and DDP/RDMAP header building.
 */
#include "fpdu.h"
#include "crc32c.h"

#define HDR_T	(SIW_MPA_LEN_SIZE + sizeof(struct siw_ddp_tagged))
#define HDR_U	(SIW_MPA_LEN_SIZE + sizeof(struct siw_ddp_untagged))

static const struct siw_op_info op_table[SIW_RDMAP_NUM_OPCODES] = {
	[SIW_RDMAP_WRITE] = { .tagged = 1, .hdr_len = HDR_T },
	[SIW_RDMAP_READ_REQ] = {
		.qn = SIW_QN_READ_REQ, .single = 1, .no_payload = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_read_req),
	},
	[SIW_RDMAP_READ_RESP] = { .tagged = 1, .hdr_len = HDR_T },
	[SIW_RDMAP_SEND] = { .qn = SIW_QN_SEND, .hdr_len = HDR_U },
	[SIW_RDMAP_SEND_INV] = { .qn = SIW_QN_SEND, .hdr_len = HDR_U },
	[SIW_RDMAP_SEND_SE] = { .qn = SIW_QN_SEND, .hdr_len = HDR_U },
	[SIW_RDMAP_SEND_SE_INV] = { .qn = SIW_QN_SEND, .hdr_len = HDR_U },
	[SIW_RDMAP_TERMINATE] = {
		.qn = SIW_QN_TERMINATE, .single = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_term),
	},
	[SIW_RDMAP_IMM] = {
		.qn = SIW_QN_SEND, .single = 1, .no_payload = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_imm),
	},
	[SIW_RDMAP_IMM_SE] = {
		.qn = SIW_QN_SEND, .single = 1, .no_payload = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_imm),
	},
	[SIW_RDMAP_ATOMIC_REQ] = {
		.qn = SIW_QN_ATOMIC, .single = 1, .no_payload = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_atomic_req),
	},
	[SIW_RDMAP_ATOMIC_RESP] = {
		.qn = SIW_QN_ATOMIC, .single = 1, .no_payload = 1,
		.hdr_len = HDR_U + sizeof(struct siw_rdmap_atomic_resp),
	},
};

const struct siw_op_info *siw_op_info(unsigned int opcode)
{
	if (opcode >= SIW_RDMAP_NUM_OPCODES)
		return NULL;
	return &op_table[opcode];
}

u32 siw_fpdu_hdr_len(unsigned int opcode)
{
	const struct siw_op_info *oi = siw_op_info(opcode);

	return oi ? oi->hdr_len : 0;
}

u32 siw_mpa_mulpdu(u32 emss)
{
	u32 room = emss & ~(u32)(SIW_MPA_ALIGN - 1);

	/*
	 * Length field, ULPDU and pad fill a multiple of four, the CRC
	 * follows: the largest ULPDU is what is left of the aligned EMSS.
	 */
	if (room < SIW_MPA_LEN_SIZE + SIW_MPA_CRC_SIZE)
		return 0;
	room -= SIW_MPA_LEN_SIZE + SIW_MPA_CRC_SIZE;
	return room > SIW_MPA_MAX_ULPDU ? SIW_MPA_MAX_ULPDU : room;
}

u32 siw_fpdu_max_payload(u32 mulpdu, unsigned int opcode)
{
	const struct siw_op_info *oi = siw_op_info(opcode);
	u32 hdr;

	if (!oi || oi->no_payload)
		return 0;
	if (opcode == SIW_RDMAP_TERMINATE)
		return SIW_TERM_MAX_OPT;

	hdr = oi->hdr_len - SIW_MPA_LEN_SIZE;
	return mulpdu > hdr ? mulpdu - hdr : 0;
}

static u8 ctrl_ddp(const struct siw_op_info *oi, bool last)
{
	return (oi->tagged ? SIW_DDP_F_TAGGED : 0) |
	       (last ? SIW_DDP_F_LAST : 0) | SIW_DDP_VERSION;
}

static u8 ctrl_rdmap(unsigned int opcode)
{
	return (SIW_RDMAP_VERSION << SIW_RDMAP_RV_SHIFT) |
	       (opcode & SIW_RDMAP_OPCODE_MASK);
}

static void put_rdmap_hdr(u8 *p, const struct siw_iwarp_hdr *h, u32 opt_len)
{
	switch (h->opcode) {
	case SIW_RDMAP_READ_REQ: {
		struct siw_rdmap_read_req rr = {
			.sink_stag = cpu_to_be32(h->u.rreq.sink_stag),
			.sink_to = cpu_to_be64(h->u.rreq.sink_to),
			.size = cpu_to_be32(h->u.rreq.size),
			.src_stag = cpu_to_be32(h->u.rreq.src_stag),
			.src_to = cpu_to_be64(h->u.rreq.src_to),
		};

		memcpy(p, &rr, sizeof(rr));
		break;
	}
	case SIW_RDMAP_TERMINATE: {
		u16 hdrct = h->u.term.hdrct;
		struct siw_rdmap_term t;

		/* Optional data is announced only when it is there. */
		if (!opt_len)
			hdrct = 0;
		t.ctrl = cpu_to_be32(siw_term_ctrl(&h->u.term.code, hdrct));
		memcpy(p, &t, sizeof(t));
		break;
	}
	case SIW_RDMAP_IMM:
	case SIW_RDMAP_IMM_SE: {
		struct siw_rdmap_imm im = { .data = cpu_to_be64(h->u.imm) };

		memcpy(p, &im, sizeof(im));
		break;
	}
	case SIW_RDMAP_ATOMIC_REQ: {
		struct siw_rdmap_atomic_req ar = {
			.op = cpu_to_be32(h->u.areq.op & SIW_ATOMIC_OP_MASK),
			.req_id = cpu_to_be32(h->u.areq.req_id),
			.stag = cpu_to_be32(h->u.areq.stag),
			.to = cpu_to_be64(h->u.areq.to),
			.add_swap = cpu_to_be64(h->u.areq.add_swap),
			.add_swap_mask = cpu_to_be64(h->u.areq.add_swap_mask),
			.cmp = cpu_to_be64(h->u.areq.cmp),
			.cmp_mask = cpu_to_be64(h->u.areq.cmp_mask),
		};

		memcpy(p, &ar, sizeof(ar));
		break;
	}
	case SIW_RDMAP_ATOMIC_RESP: {
		struct siw_rdmap_atomic_resp ap = {
			.req_id = cpu_to_be32(h->u.aresp.req_id),
			.orig = cpu_to_be64(h->u.aresp.orig),
		};

		memcpy(p, &ap, sizeof(ap));
		break;
	}
	default:
		break;
	}
}

int siw_fpdu_build_hdr(void *buf, size_t buflen, const struct siw_iwarp_hdr *h,
		       u32 payload_len)
{
	const struct siw_op_info *oi = siw_op_info(h->opcode);
	__be16 mpa_len;
	u32 ulpdu;
	u8 *p = buf;
	bool last;

	if (!oi || buflen < oi->hdr_len)
		return -1;
	if (oi->no_payload && payload_len)
		return -1;
	if (h->opcode == SIW_RDMAP_TERMINATE && payload_len > SIW_TERM_MAX_OPT)
		return -1;
	if (payload_len > SIW_MPA_MAX_ULPDU)
		return -1;
	ulpdu = oi->hdr_len - SIW_MPA_LEN_SIZE + payload_len;
	if (ulpdu > SIW_MPA_MAX_ULPDU)
		return -1;

	/* Single segment messages are always last. */
	last = oi->single ? true : h->last;

	mpa_len = cpu_to_be16((u16)ulpdu);
	memcpy(p, &mpa_len, sizeof(mpa_len));
	p += SIW_MPA_LEN_SIZE;

	if (oi->tagged) {
		struct siw_ddp_tagged t = {
			.ddp_ctrl = ctrl_ddp(oi, last),
			.rdmap_ctrl = ctrl_rdmap(h->opcode),
			.stag = cpu_to_be32(h->stag),
			.to = cpu_to_be64(h->to),
		};

		memcpy(p, &t, sizeof(t));
	} else {
		bool inv = h->opcode == SIW_RDMAP_SEND_INV ||
			   h->opcode == SIW_RDMAP_SEND_SE_INV;
		struct siw_ddp_untagged u = {
			.ddp_ctrl = ctrl_ddp(oi, last),
			.rdmap_ctrl = ctrl_rdmap(h->opcode),
			.inval_stag = cpu_to_be32(inv ? h->inval_stag : 0),
			.qn = cpu_to_be32(oi->qn),
			.msn = cpu_to_be32(h->msn),
			.mo = cpu_to_be32(oi->single ? 0 : h->mo),
		};

		memcpy(p, &u, sizeof(u));
		put_rdmap_hdr(p + sizeof(u), h, payload_len);
	}
	return oi->hdr_len;
}

u32 siw_fpdu_build_trailer(void *buf, u32 ulpdu_len, u32 crc_state,
			   bool crc_on)
{
	u32 pad = siw_mpa_pad(ulpdu_len);
	struct siw_mpa_trailer t = { .crc = 0 };
	u8 *p = buf;

	memset(p, 0, pad);
	if (crc_on) {
		crc_state = siw_crc32c_update(crc_state, p, pad);
		t.crc = cpu_to_le32(siw_crc32c_final(crc_state));
	}
	memcpy(p + pad, &t, sizeof(t));
	return pad + SIW_MPA_CRC_SIZE;
}
