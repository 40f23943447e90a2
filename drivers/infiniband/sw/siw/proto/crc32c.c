// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CRC32C for MPA: libcrc32c in the kernel, a slicing-by-8 table
 * implementation in userspace.
 */
#include "crc32c.h"

#ifdef __KERNEL__

u32 siw_crc32c_update(u32 state, const void *buf, size_t len)
{
	const u8 *p = buf;

	/* crc32c() takes an unsigned int length; feed huge buffers in parts. */
	while (len > 0x40000000) {
		state = crc32c(state, p, 0x40000000);
		p += 0x40000000;
		len -= 0x40000000;
	}
	return crc32c(state, p, (unsigned int)len);
}

#else /* userspace */

#define CRC32C_POLY_REFLECTED 0x82f63b78U

/* tab[k][b]: CRC register contribution of octet b followed by k zeros. */
static u32 tab[8][256];
static bool tab_ready;

/* Built before main(); the check in siw_crc32c_update() is a fallback. */
static void __attribute__((constructor)) crc32c_make_tables(void)
{
	unsigned int b, k, bit;
	u32 r;

	for (b = 0; b < 256; b++) {
		r = b;
		for (bit = 0; bit < 8; bit++)
			r = (r >> 1) ^ ((r & 1) ? CRC32C_POLY_REFLECTED : 0);
		tab[0][b] = r;
	}
	for (k = 1; k < 8; k++)
		for (b = 0; b < 256; b++) {
			r = tab[k - 1][b];
			tab[k][b] = (r >> 8) ^ tab[0][r & 0xff];
		}
	tab_ready = true;
}

u32 siw_crc32c_update(u32 state, const void *buf, size_t len)
{
	const u8 *p = buf;
	u32 r = state;

	if (unlikely(!tab_ready))
		crc32c_make_tables();

	/* Octet at a time up to an 8-octet boundary of the address. */
	while (len && ((unsigned long)p & 7)) {
		r = (r >> 8) ^ tab[0][(r ^ *p++) & 0xff];
		len--;
	}
	/* Eight octets per step, read one by one: byte order neutral. */
	while (len >= 8) {
		r ^= (u32)p[0] | (u32)p[1] << 8 | (u32)p[2] << 16 |
		     (u32)p[3] << 24;
		r = tab[7][r & 0xff] ^ tab[6][(r >> 8) & 0xff] ^
		    tab[5][(r >> 16) & 0xff] ^ tab[4][r >> 24] ^
		    tab[3][p[4]] ^ tab[2][p[5]] ^ tab[1][p[6]] ^ tab[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		r = (r >> 8) ^ tab[0][(r ^ *p++) & 0xff];

	return r;
}

#endif /* __KERNEL__ */
