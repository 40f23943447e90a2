// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Terminate error classes: which layer/type/code triples the RFCs define,
 * their words, and reading a Terminate whose layer and type nibbles a
 * peer swapped (Linux's siw on little-endian hosts).
 */
#include "siw_test.h"
#include "term.h"

static struct siw_term_code tc_of(u8 layer, u8 etype, u8 ecode)
{
	struct siw_term_code tc = { layer, etype, ecode };

	return tc;
}

static int known(u8 layer, u8 etype, u8 ecode)
{
	struct siw_term_code tc = tc_of(layer, etype, ecode);

	return siw_term_code_known(&tc);
}

static void rfc_classes(void)
{
	/* RFC 5040 7.4: one from each RDMAP and DDP error type. */
	CHECK(known(0, 0, 0x00));
	CHECK(known(0, 1, 0x00));
	CHECK(known(0, 1, 0x02));
	CHECK(known(0, 1, 0xff));
	CHECK(known(0, 2, 0x05));
	CHECK(known(0, 2, 0x06));
	CHECK(known(0, 2, 0xff));
	CHECK(known(1, 0, 0x00));
	CHECK(known(1, 1, 0x04));
	CHECK(known(1, 2, 0x01));
	CHECK(known(1, 2, 0x06));
	/* RFC 5044 8 and RFC 6581 9. */
	CHECK(known(2, 0, 0x01));
	CHECK(known(2, 0, 0x02));
	CHECK(known(2, 0, 0x07));

	/* Codes of one type are not codes of another. */
	CHECK(!known(0, 2, 0x02));
	CHECK(!known(0, 1, 0x05));
	CHECK(!known(0, 0, 0x01));
	CHECK(!known(1, 0, 0x02));
	CHECK(!known(1, 2, 0x00));
	CHECK(!known(1, 3, 0x00));
	CHECK(!known(2, 0, 0x00));
	CHECK(!known(2, 0, 0x08));
	CHECK(!known(2, 1, 0x02));
	CHECK(!known(3, 0, 0x00));
}

static void words(void)
{
	struct siw_term_code tc = tc_of(SIW_TERM_LAYER_LLP, SIW_TERM_LLP_MPA,
					SIW_TERM_LLP_CRC);

	CHECK_STR(siw_term_code_str(&tc), "CRC error");
	tc = tc_of(SIW_TERM_LAYER_RDMAP, SIW_TERM_RDMAP_REMOTE_PROT,
		   SIW_TERM_RDMAP_ACCESS);
	CHECK_STR(siw_term_code_str(&tc), "access rights violation");
	tc = tc_of(SIW_TERM_LAYER_DDP, SIW_TERM_DDP_UNTAGGED,
		   SIW_TERM_DDP_U_MSN_NOBUF);
	CHECK_STR(siw_term_code_str(&tc), "no buffer: no receive WR posted, or Read Requests beyond the IRD");
	tc = tc_of(SIW_TERM_LAYER_RDMAP, SIW_TERM_RDMAP_REMOTE_OP,
		   SIW_TERM_RDMAP_ACCESS);
	CHECK(!siw_term_code_str(&tc));
}

/* What a peer that swaps the nibbles puts on the wire for @tc. */
static struct siw_term_code as_swapped(struct siw_term_code tc)
{
	u32 ctrl = siw_term_ctrl(&tc, 0);
	struct siw_term_code wire;

	ctrl = (ctrl & 0x00ffffff) |
	       (u32)((ctrl >> 28) | ((ctrl >> 20) & 0xf0)) << 24;
	siw_term_decode(ctrl, &wire);
	return wire;
}

static void unswap_linux(void)
{
	/* Linux's siw reporting a CRC error: reads as RDMAP 0/2/0x02. */
	struct siw_term_code tc = as_swapped(tc_of(2, 0, 0x02));

	CHECK_EQ(tc.layer, 0);
	CHECK_EQ(tc.etype, 2);
	CHECK_EQ(tc.ecode, 0x02);
	CHECK(siw_term_code_unswap(&tc));
	CHECK_EQ(tc.layer, SIW_TERM_LAYER_LLP);
	CHECK_EQ(tc.etype, SIW_TERM_LLP_MPA);
	CHECK_STR(siw_term_code_str(&tc), "CRC error");

	/* An access violation and a missing receive buffer, likewise. */
	tc = as_swapped(tc_of(0, 1, 0x02));
	CHECK(siw_term_code_unswap(&tc));
	CHECK_STR(siw_term_code_str(&tc), "access rights violation");
	tc = as_swapped(tc_of(1, 2, 0x02));
	CHECK(siw_term_code_unswap(&tc));
	CHECK_STR(siw_term_code_str(&tc), "no buffer: no receive WR posted, or Read Requests beyond the IRD");

	/* Equal nibbles read the same either way: nothing to swap. */
	tc = as_swapped(tc_of(1, 1, 0x00));
	CHECK(!siw_term_code_unswap(&tc));
	CHECK_STR(siw_term_code_str(&tc), "invalid tagged buffer (STag)");
}

/* Over every triple: a known class stays, a swap always ends known. */
static void unswap_all(void)
{
	unsigned int l, t, c, n = 0;

	for (l = 0; l < 16; l++)
		for (t = 0; t < 16; t++)
			for (c = 0; c < 256; c++) {
				struct siw_term_code tc = tc_of(l, t, c);
				int was = siw_term_code_known(&tc);

				if (siw_term_code_unswap(&tc)) {
					CHECK(!was);
					CHECK(siw_term_code_known(&tc));
					CHECK_EQ(tc.layer, t);
					CHECK_EQ(tc.etype, l);
					n++;
				} else {
					CHECK_EQ(tc.layer, l);
					CHECK_EQ(tc.etype, t);
				}
				CHECK_EQ(tc.ecode, c);
			}
	/*
	 * Classes with different nibbles whose swap is no class: RDMAP
	 * protection codes but 0x00 (6: DDP 0/0x00 is a class), RDMAP
	 * operation codes 0x08, 0x09, 0xff (3: 0x05-0x07 are MPA codes too),
	 * DDP untagged (6) and MPA 0x01-0x04 (4). Those 19 read back; the
	 * others cannot be told from the class their swap names.
	 */
	CHECK_EQ(n, 19);
}

int main(void)
{
	RUN(rfc_classes);
	RUN(words);
	RUN(unswap_linux);
	RUN(unswap_all);
	return siw_test_done();
}
