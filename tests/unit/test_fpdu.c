// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FPDU math and header building, with FPDUs written out octet by octet
 * from the RFC 5040/5041/5044 layouts.
 */
#include "siw_test.h"
#include "fpdu.h"
#include "crc32c.h"
#include "util.h"

static void pad_math(void)
{
	/* Length field + ULPDU + pad is a multiple of four. */
	static const u32 want[8] = { 2, 1, 0, 3, 2, 1, 0, 3 };
	u32 len;

	for (len = 0; len < 8; len++)
		CHECK_EQ(siw_mpa_pad(len), want[len]);
	for (len = 0; len < 70000; len++) {
		u32 pad = siw_mpa_pad(len);

		if (pad > 3 || (len + 2 + pad) % 4) {
			CHECK_EQ(len, ~0u);
			return;
		}
	}
	CHECK_EQ(siw_fpdu_trailer_len(14), 4);
	CHECK_EQ(siw_fpdu_trailer_len(23), 7);
	/* Empty Write: 2 + 14 + 0 pad + 4 CRC. */
	CHECK_EQ(siw_fpdu_wire_len(14), 20);
	/* Send with 5 octets: 2 + 18 + 5 = 25, pad 3, CRC 4. */
	CHECK_EQ(siw_fpdu_wire_len(23), 32);
	CHECK_EQ(siw_fpdu_wire_len(0xffff), 2 + 0xffff + 3 + 4);
}

static void mulpdu_math(void)
{
	u32 emss, u;

	CHECK_EQ(siw_mpa_mulpdu(1460), 1454);
	CHECK_EQ(siw_mpa_mulpdu(1461), 1454);
	CHECK_EQ(siw_mpa_mulpdu(8948), 8942);
	CHECK_EQ(siw_mpa_mulpdu(7), 0);
	CHECK_EQ(siw_mpa_mulpdu(8), 2);
	CHECK_EQ(siw_mpa_mulpdu(0), 0);
	CHECK_EQ(siw_mpa_mulpdu(0xffffffff), 0xffff);

	/* MULPDU is the largest ULPDU whose FPDU fits the EMSS. */
	for (emss = 8; emss < 3000; emss++) {
		u = siw_mpa_mulpdu(emss);
		if (siw_fpdu_wire_len(u) > emss ||
		    siw_fpdu_wire_len(u + 1) <= emss) {
			CHECK_EQ(emss, 0);
			return;
		}
	}
}

static void max_payload(void)
{
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_WRITE), 1440);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_READ_RESP), 1440);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_SEND), 1436);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_SEND_SE_INV), 1436);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_READ_REQ), 0);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_ATOMIC_REQ), 0);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_IMM), 0);
	CHECK_EQ(siw_fpdu_max_payload(1454, SIW_RDMAP_TERMINATE), 48);
	CHECK_EQ(siw_fpdu_max_payload(10, SIW_RDMAP_SEND), 0);
	CHECK_EQ(siw_fpdu_max_payload(1454, 12), 0);
}

static void header_lengths(void)
{
	static const u32 want[SIW_RDMAP_NUM_OPCODES] = {
		16, 48, 16, 20, 20, 20, 20, 24, 28, 28, 72, 32
	};
	unsigned int op;

	for (op = 0; op < SIW_RDMAP_NUM_OPCODES; op++) {
		CHECK_EQ(siw_fpdu_hdr_len(op), want[op]);
		CHECK(siw_op_info(op) != NULL);
	}
	for (op = SIW_RDMAP_NUM_OPCODES; op < 256; op++) {
		CHECK_EQ(siw_fpdu_hdr_len(op), 0);
		CHECK(!siw_op_info(op));
	}
	CHECK_EQ(siw_op_info(SIW_RDMAP_WRITE)->tagged, 1);
	CHECK_EQ(siw_op_info(SIW_RDMAP_SEND)->tagged, 0);
	CHECK_EQ(siw_op_info(SIW_RDMAP_READ_REQ)->qn, 1);
	CHECK_EQ(siw_op_info(SIW_RDMAP_TERMINATE)->qn, 2);
	CHECK_EQ(siw_op_info(SIW_RDMAP_ATOMIC_REQ)->qn, 3);
	CHECK_EQ(siw_op_info(SIW_RDMAP_IMM_SE)->qn, 0);
}

/* Header + payload + trailer into @out; returns the FPDU length. */
static size_t fpdu(u8 *out, const struct siw_iwarp_hdr *h, const void *pl,
		   u32 plen, bool crc_on)
{
	int hl = siw_fpdu_build_hdr(out, 128, h, plen);
	u32 st;

	if (hl < 0)
		return 0;
	if (plen)
		memcpy(out + hl, pl, plen);
	st = siw_crc32c_update(siw_crc32c_init(), out, hl + plen);
	return hl + plen + siw_fpdu_build_trailer(out + hl + plen,
						  hl + plen - 2, st, crc_on);
}

static void worked_write(void)
{
	static const u8 want[] = {
		0x00, 0x12,			/* ULPDU length 18 */
		0xc1,				/* T=1 L=1 rsvd DV=1 */
		0x40,				/* RV=1 rsvd opcode 0 */
		0x11, 0x22, 0x33, 0x44,		/* STag */
		0x01, 0x02, 0x03, 0x04,		/* TO */
		0x05, 0x06, 0x07, 0x08,
		'a', 'b', 'c', 'd',		/* payload, no pad */
	};
	struct siw_iwarp_hdr h = {
		.opcode = SIW_RDMAP_WRITE, .last = true,
		.stag = 0x11223344, .to = 0x0102030405060708ULL,
	};
	u8 out[128], crc[4];
	size_t n = fpdu(out, &h, "abcd", 4, true);
	u32 c = ref_crc32c(want, sizeof(want));

	crc[0] = c;
	crc[1] = c >> 8;
	crc[2] = c >> 16;
	crc[3] = c >> 24;
	CHECK_EQ(n, sizeof(want) + 4);
	CHECK_MEM(out, want, sizeof(want));
	CHECK_MEM(out + sizeof(want), crc, 4);

	/* Without CRC the field is there, and zero. */
	n = fpdu(out, &h, "abcd", 4, false);
	CHECK_EQ(n, sizeof(want) + 4);
	CHECK_MEM(out + sizeof(want), "\0\0\0\0", 4);

	/* Not last: L clear. */
	h.last = false;
	fpdu(out, &h, "abcd", 4, false);
	CHECK_EQ(out[2], 0x81);
}

static void worked_send_se_inv(void)
{
	static const u8 want[] = {
		0x00, 0x17,			/* ULPDU 18 + 5 = 23 */
		0x41,				/* T=0 L=1 DV=1 */
		0x46,				/* RV=1 opcode 6 */
		0xca, 0xfe, 0xba, 0xbe,		/* Invalidate STag */
		0x00, 0x00, 0x00, 0x00,		/* QN 0 */
		0x00, 0x00, 0x00, 0x07,		/* MSN 7 */
		0x00, 0x00, 0x10, 0x00,		/* MO 4096 */
		'h', 'e', 'l', 'l', 'o',
		0x00, 0x00, 0x00,		/* pad to 28 */
	};
	struct siw_iwarp_hdr h = {
		.opcode = SIW_RDMAP_SEND_SE_INV, .last = true,
		.inval_stag = 0xcafebabe, .msn = 7, .mo = 4096,
		.qn = 9,	/* ignored: the opcode decides */
	};
	u8 out[128];
	size_t n = fpdu(out, &h, "hello", 5, true);
	u32 c = ref_crc32c(want, sizeof(want));
	u8 crc[4] = { c, c >> 8, c >> 16, c >> 24 };

	CHECK_EQ(n, 32);
	CHECK_MEM(out, want, sizeof(want));
	CHECK_MEM(out + sizeof(want), crc, 4);

	/* Plain Send: the invalidate field is zero whatever the caller. */
	h.opcode = SIW_RDMAP_SEND;
	fpdu(out, &h, "hello", 5, false);
	CHECK_EQ(out[3], 0x43);
	CHECK_MEM(out + 4, "\0\0\0\0", 4);
}

static void worked_read_request(void)
{
	static const u8 want[] = {
		0x00, 0x2e,			/* ULPDU 18 + 28 = 46 */
		0x41, 0x41,			/* untagged, last; opcode 1 */
		0x00, 0x00, 0x00, 0x00,		/* reserved */
		0x00, 0x00, 0x00, 0x01,		/* QN 1 */
		0x00, 0x00, 0x00, 0x02,		/* MSN 2 */
		0x00, 0x00, 0x00, 0x00,		/* MO 0 */
		0x0a, 0x0b, 0x0c, 0x0d,		/* sink STag */
		0x10, 0x20, 0x30, 0x40,		/* sink TO */
		0x50, 0x60, 0x70, 0x80,
		0x00, 0x01, 0x00, 0x00,		/* size 65536 */
		0x1a, 0x1b, 0x1c, 0x1d,		/* source STag */
		0x00, 0x00, 0x00, 0x00,		/* source TO */
		0xde, 0xad, 0xbe, 0xef,
	};
	struct siw_iwarp_hdr h = {
		.opcode = SIW_RDMAP_READ_REQ, .msn = 2, .mo = 99,
		.u.rreq = {
			.sink_stag = 0x0a0b0c0d,
			.sink_to = 0x1020304050607080ULL,
			.size = 65536,
			.src_stag = 0x1a1b1c1d, .src_to = 0xdeadbeef,
		},
	};
	u8 out[128];

	/* A Read Request is one segment: L set and MO 0 regardless. */
	CHECK_EQ(fpdu(out, &h, NULL, 0, false), 48 + 4);
	CHECK_MEM(out, want, sizeof(want));
}

static void worked_terminate(void)
{
	static const u8 want[] = {
		0x00, 0x26,			/* ULPDU 18 + 4 + 16 = 38 */
		0x41, 0x47,			/* untagged, last; opcode 7 */
		0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x02,		/* QN 2 */
		0x00, 0x00, 0x00, 0x01,		/* MSN 1 */
		0x00, 0x00, 0x00, 0x00,		/* MO 0 */
		0x11, 0x00, 0xc0, 0x00,		/* DDP, tagged, Invalid STag, M D */
	};
	struct siw_iwarp_hdr h = {
		.opcode = SIW_RDMAP_TERMINATE, .msn = 1,
		.u.term = {
			.code = { SIW_TERM_LAYER_DDP, SIW_TERM_DDP_TAGGED,
				  SIW_TERM_DDP_T_INVALID_STAG },
			.hdrct = SIW_TERM_F_M | SIW_TERM_F_D,
		},
	};
	u8 opt[16] = { 0x00, 0x0e, 0xc1, 0x40 };
	u8 out[128];

	CHECK_EQ(fpdu(out, &h, opt, sizeof(opt), false), 2 + 38 + 4);
	CHECK_MEM(out, want, sizeof(want));
	CHECK_MEM(out + sizeof(want), opt, sizeof(opt));

	/* No optional data: no header control bits either. */
	CHECK_EQ(fpdu(out, &h, NULL, 0, false), 24 + 4);
	CHECK_MEM(out + 20, "\x11\x00\x00\x00", 4);
}

static void worked_atomic_and_imm(void)
{
	struct siw_iwarp_hdr h = {
		.opcode = SIW_RDMAP_ATOMIC_REQ, .msn = 5,
		.u.areq = {
			.op = SIW_ATOMIC_CMP_SWAP, .req_id = 0x01020304,
			.stag = 0xa0a1a2a3, .to = 0x1000,
			.add_swap = 0x1111111111111111ULL,
			.add_swap_mask = ~0ULL, .cmp = 7, .cmp_mask = ~0ULL,
		},
	};
	static const u8 areq[] = {
		0x00, 0x00, 0x00, 0x02,		/* reserved, atomic opcode */
		0x01, 0x02, 0x03, 0x04,		/* request id */
		0xa0, 0xa1, 0xa2, 0xa3,		/* remote STag */
		0, 0, 0, 0, 0, 0, 0x10, 0x00,	/* remote TO */
		0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
		0, 0, 0, 0, 0, 0, 0, 7,
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	};
	u8 out[128];

	CHECK_EQ(fpdu(out, &h, NULL, 0, false), 72 + 4);
	CHECK_MEM(out, "\x00\x46\x41\x4a", 4);
	CHECK_MEM(out + 8, "\x00\x00\x00\x03", 4);	/* QN 3 */
	CHECK_MEM(out + 20, areq, sizeof(areq));

	h.opcode = SIW_RDMAP_ATOMIC_RESP;
	h.u.aresp.req_id = 0x01020304;
	h.u.aresp.orig = 0x8877665544332211ULL;
	CHECK_EQ(fpdu(out, &h, NULL, 0, false), 32 + 4);
	CHECK_MEM(out, "\x00\x1e\x41\x4b", 4);
	CHECK_MEM(out + 20,
		  "\x01\x02\x03\x04\x88\x77\x66\x55\x44\x33\x22\x11", 12);

	h.opcode = SIW_RDMAP_IMM_SE;
	h.u.imm = 0x0123456789abcdefULL;
	CHECK_EQ(fpdu(out, &h, NULL, 0, false), 28 + 4);
	CHECK_MEM(out, "\x00\x1a\x41\x49", 4);
	CHECK_MEM(out + 8, "\x00\x00\x00\x00", 4);	/* QN 0 */
	CHECK_MEM(out + 20, "\x01\x23\x45\x67\x89\xab\xcd\xef", 8);
}

static void build_errors(void)
{
	struct siw_iwarp_hdr h = { .opcode = SIW_RDMAP_SEND };
	u8 out[128];

	CHECK_EQ(siw_fpdu_build_hdr(out, 19, &h, 0), -1);
	CHECK_EQ(siw_fpdu_build_hdr(out, 20, &h, 0), 20);
	CHECK_EQ(siw_fpdu_build_hdr(out, 20, &h, 0xffff - 18), 20);
	CHECK_EQ(siw_fpdu_build_hdr(out, 20, &h, 0xffff - 17), -1);
	CHECK_EQ(siw_fpdu_build_hdr(out, 20, &h, 0xffffffff), -1);
	h.opcode = 12;
	CHECK_EQ(siw_fpdu_build_hdr(out, 128, &h, 0), -1);
	h.opcode = SIW_RDMAP_READ_REQ;
	CHECK_EQ(siw_fpdu_build_hdr(out, 128, &h, 1), -1);
	h.opcode = SIW_RDMAP_TERMINATE;
	CHECK_EQ(siw_fpdu_build_hdr(out, 128, &h, 48), 24);
	CHECK_EQ(siw_fpdu_build_hdr(out, 128, &h, 49), -1);
}

int main(void)
{
	RUN(pad_math);
	RUN(mulpdu_math);
	RUN(max_payload);
	RUN(header_lengths);
	RUN(worked_write);
	RUN(worked_send_se_inv);
	RUN(worked_read_request);
	RUN(worked_terminate);
	RUN(worked_atomic_and_imm);
	RUN(build_errors);
	return siw_test_done();
}
