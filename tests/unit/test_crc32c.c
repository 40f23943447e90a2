// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC32C: the RFC 3720 appendix B.4 vectors, the usual check value, and
 * incremental use against one-shot use and a bitwise reference.
 *
 * RFC 3720 prints each CRC as the octets in transmission order; MPA sends
 * the CRC in that same order, least significant octet of the CRC register
 * first. So "aa 36 91 8a" is the integer 0x8a9136aa.
 */
#include <stdlib.h>

#include "siw_test.h"
#include "crc32c.h"
#include "util.h"

struct vector {
	const char *name;
	unsigned char data[48];
	size_t len;
	unsigned int crc;
	unsigned char wire[4];		/* as RFC 3720 prints it */
};

static struct vector vectors[] = {
	{ "RFC 3720 B.4: 32 octets of zero", { 0 }, 32, 0x8a9136aa,
	  { 0xaa, 0x36, 0x91, 0x8a } },
	{ "RFC 3720 B.4: 32 octets of 0xff", { 0 }, 32, 0x62a8ab43,
	  { 0x43, 0xab, 0xa8, 0x62 } },
	{ "RFC 3720 B.4: 32 incrementing octets", { 0 }, 32, 0x46dd794e,
	  { 0x4e, 0x79, 0xdd, 0x46 } },
	{ "RFC 3720 B.4: 32 decrementing octets", { 0 }, 32, 0x113fdb5c,
	  { 0x5c, 0xdb, 0x3f, 0x11 } },
	{ "RFC 3720 B.4: iSCSI read PDU",
	  { 0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
	    0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18,
	    0x28, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	    0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00 },
	  48, 0xd9963a56, { 0x56, 0x3a, 0x96, 0xd9 } },
	{ "check value of \"123456789\"", "123456789", 9, 0xe3069283,
	  { 0x83, 0x92, 0x06, 0xe3 } },
};

static void fill_vectors(void)
{
	int i;

	memset(vectors[1].data, 0xff, 32);
	for (i = 0; i < 32; i++) {
		vectors[2].data[i] = i;
		vectors[3].data[i] = 31 - i;
	}
}

static void vector_tests(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(vectors); i++) {
		const struct vector *v = &vectors[i];
		u32 crc = siw_crc32c(v->data, v->len);
		__le32 wire = cpu_to_le32(crc);

		CHECK_EQ(crc, v->crc);
		CHECK_MEM(&wire, v->wire, 4);
		CHECK_EQ(ref_crc32c(v->data, v->len), v->crc);
		siw_test_ok(true, "%s", v->name);
	}
}

static void empty_buffer(void)
{
	CHECK_EQ(siw_crc32c("", 0), 0);
	CHECK_EQ(siw_crc32c_update(0x12345678, NULL, 0), 0x12345678);
}

/* Every split point of a buffer, at every start alignment. */
static void incremental_split(void)
{
	unsigned char buf[200];
	uint64_t seed = 1;
	size_t off, cut, len = 150;

	rnd_fill(&seed, buf, sizeof(buf));
	for (off = 0; off < 8; off++) {
		u32 whole = siw_crc32c(buf + off, len);

		CHECK_EQ(whole, ref_crc32c(buf + off, len));
		for (cut = 0; cut <= len; cut++) {
			u32 st = siw_crc32c_init();

			st = siw_crc32c_update(st, buf + off, cut);
			st = siw_crc32c_update(st, buf + off + cut, len - cut);
			if (siw_crc32c_final(st) != whole) {
				CHECK_EQ(siw_crc32c_final(st), whole);
				return;
			}
		}
	}
}

/* Random lengths and random chunkings against the bitwise reference. */
static void incremental_random(void)
{
	static unsigned char buf[70000];
	uint64_t seed = 42;
	int round;

	rnd_fill(&seed, buf, sizeof(buf));
	for (round = 0; round < 300; round++) {
		size_t len = rnd_below(&seed, round < 200 ? 300 : sizeof(buf));
		size_t off = rnd_below(&seed, 16), pos = 0;
		u32 want, st = siw_crc32c_init();

		if (off + len > sizeof(buf))
			len = sizeof(buf) - off;
		want = ref_crc32c(buf + off, len);
		while (pos < len) {
			size_t n = 1 + rnd_below(&seed, 64);

			if (n > len - pos)
				n = len - pos;
			st = siw_crc32c_update(st, buf + off + pos, n);
			pos += n;
		}
		if (siw_crc32c_final(st) != want ||
		    siw_crc32c(buf + off, len) != want) {
			CHECK_EQ(siw_crc32c_final(st), want);
			CHECK_EQ(siw_crc32c(buf + off, len), want);
			siw_test_diag("round %d len %zu off %zu", round, len,
				      off);
			return;
		}
	}
}

int main(void)
{
	fill_vectors();
	vector_tests();
	RUN(empty_buffer);
	RUN(incremental_split);
	RUN(incremental_random);
	return siw_test_done();
}
