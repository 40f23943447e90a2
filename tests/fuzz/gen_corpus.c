// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Write the seed corpora of the fuzz targets, made with the protocol
 * core's own builders: gen_corpus DIR creates DIR/fuzz_rx/ and
 * DIR/fuzz_mpa/ and fills them.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "fpdu.h"
#include "marker.h"
#include "mpa.h"
#include "crc32c.h"

static const char *outdir;
static int nfiles;

static void put(const char *target, const u8 *p, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/seed-%04d", outdir, target,
		 nfiles++);
	f = fopen(path, "wb");
	if (!f || fwrite(p, 1, len, f) != len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

static size_t fpdu(u8 *dst, unsigned int op, u32 plen, bool crc)
{
	struct siw_iwarp_hdr h = {
		.opcode = op, .last = true, .stag = 0x100, .to = 0x2000,
		.msn = 1, .inval_stag = 0x300,
	};
	u8 pl[256];
	int hl;
	u32 st, i;

	for (i = 0; i < plen && i < sizeof(pl); i++)
		pl[i] = (u8)i;
	if (op == SIW_RDMAP_READ_REQ)
		h.u.rreq.size = 4096;
	if (op == SIW_RDMAP_TERMINATE) {
		h.u.term.code.layer = SIW_TERM_LAYER_DDP;
		h.u.term.code.etype = SIW_TERM_DDP_TAGGED;
		h.u.term.hdrct = SIW_TERM_F_M | SIW_TERM_F_D;
	}
	hl = siw_fpdu_build_hdr(dst, SIW_FPDU_MAX_HDR, &h, plen);
	if (hl < 0)
		return 0;
	memcpy(dst + hl, pl, plen);
	st = siw_crc32c_update(siw_crc32c_init(), dst, hl + plen);
	return hl + plen + siw_fpdu_build_trailer(dst + hl + plen,
						  hl + plen - 2, st, crc);
}

static void rx_seeds(void)
{
	static const u8 chunkings[][4] = {
		{ 0 }, { 1, 1 }, { 3, 5, 1, 7 },
	};
	u8 buf[8192];
	unsigned int op, c, crc;
	size_t len;

	for (op = 0; op < SIW_RDMAP_NUM_OPCODES; op++)
		for (crc = 0; crc < 2; crc++)
			for (c = 0; c < 3; c++) {
				const struct siw_op_info *oi = siw_op_info(op);
				u32 plen = oi->no_payload ? 0 : 5 + op;
				size_t n = chunkings[c][0];

				buf[0] = crc;
				buf[1] = n;
				memcpy(buf + 2, &chunkings[c][1], n);
				len = 2 + n;
				len += fpdu(buf + len, op, plen, crc);
				/* A second FPDU behind the first. */
				len += fpdu(buf + len, SIW_RDMAP_SEND, 3, crc);
				put("fuzz_rx", buf, len);
			}

	/* Every opcode in one stream, without CRC. */
	buf[0] = 0;
	buf[1] = 0;
	len = 2;
	for (op = 0; op < SIW_RDMAP_NUM_OPCODES; op++)
		len += fpdu(buf + len, op, op == SIW_RDMAP_TERMINATE ? 20 : 9,
			    false);
	put("fuzz_rx", buf, len);
}

/* Every opcode with MPA markers (input octet 1 bit 6), CRC on and off. */
static void rx_marked_seeds(void)
{
	u8 clean[512], buf[8192];
	unsigned int op, crc, round;

	for (round = 0; round < 2; round++)
		for (crc = 0; crc < 2; crc++) {
			struct siw_mark_tx m = { 0 };
			size_t len = 2;

			buf[0] = crc;
			buf[1] = 64;
			for (op = 0; op < SIW_RDMAP_NUM_OPCODES; op++) {
				const struct siw_op_info *oi = siw_op_info(op);
				size_t n = fpdu(clean, op, oi->no_payload ? 0 :
						round ? 200 : 9, false);
				size_t at = len;
				__le32 c;

				if (n < SIW_MPA_CRC_SIZE)
					continue;
				len += siw_mark_begin(&m, buf + len);
				len += siw_mark_copy(&m, buf + len, clean,
						     n - 4);
				len += siw_mark_flush(&m, buf + len);
				c = cpu_to_le32(crc ? siw_crc32c(buf + at,
								 len - at) : 0);
				len += siw_mark_copy(&m, buf + len, &c,
						     sizeof(c));
			}
			put("fuzz_rx", buf, len);
		}
}

static void mpa_seeds(void)
{
	static const struct siw_mpa_policy pols[] = {
		{ .rev = 1, .crc = SIW_MPA_CRC_PEER },
		{ .rev = 1, .crc = SIW_MPA_CRC_ALWAYS },
		{ .rev = 2, .crc = SIW_MPA_CRC_PEER, .ird = 8, .ord = 8 },
		{ .rev = 2, .crc = SIW_MPA_CRC_NEVER, .ird = 4, .ord = 16,
		  .p2p = true, .rtr = SIW_MPA_RTR_WRITE | SIW_MPA_RTR_READ },
		{ .rev = 2, .crc = SIW_MPA_CRC_ALWAYS, .ird = 1, .ord = 1,
		  .p2p = true, .rtr = SIW_MPA_RTR_SEND },
	};
	u8 buf[3 + SIW_MPA_MAX_FRAME];
	size_t i, j;

	for (i = 0; i < sizeof(pols) / sizeof(pols[0]); i++) {
		struct siw_mpa_info req, rep;
		struct siw_mpa_result res;
		int n;

		for (j = 0; j < 4; j++) {
			/* Local policy octets, then a frame. */
			buf[0] = (u8)(j * 0x35 + i);
			buf[1] = (u8)(4 << j);
			buf[2] = (u8)(16 >> j);
			siw_mpa_request_info(&pols[i], &req);
			n = siw_mpa_build(buf + 3, SIW_MPA_MAX_FRAME, &req,
					  "private", (u16)(j * 2));
			if (n > 0)
				put("fuzz_mpa", buf, 3 + n);

			siw_mpa_negotiate_req(&pols[j], &req, &res);
			siw_mpa_reply_info(&pols[j], &res, j == 3, &rep);
			n = siw_mpa_build(buf + 3, SIW_MPA_MAX_FRAME, &rep,
					  "reply", 5);
			if (n > 0)
				put("fuzz_mpa", buf, 3 + n);
		}
	}
}

int main(int argc, char **argv)
{
	char path[4096];

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	outdir = argv[1];
	snprintf(path, sizeof(path), "%s/fuzz_rx", outdir);
	if (mkdir(outdir, 0755) && errno != EEXIST)
		return perror(outdir), 1;
	if (mkdir(path, 0755) && errno != EEXIST)
		return perror(path), 1;
	snprintf(path, sizeof(path), "%s/fuzz_mpa", outdir);
	if (mkdir(path, 0755) && errno != EEXIST)
		return perror(path), 1;
	rx_seeds();
	rx_marked_seeds();
	mpa_seeds();
	printf("gen_corpus: %d seeds in %s\n", nfiles, outdir);
	return 0;
}
