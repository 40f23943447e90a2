/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Helpers shared by the unit tests: a PRNG and a bitwise CRC32C. */
#ifndef SIW_UNIT_UTIL_H
#define SIW_UNIT_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* xorshift64*: deterministic, seeded per test. */
static inline uint64_t rnd_next(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t rnd_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(rnd_next(s) % n) : 0;
}

static inline void rnd_fill(uint64_t *s, void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len--)
		*p++ = (unsigned char)rnd_next(s);
}

/* One bit at a time, straight from the definition: the test oracle. */
static inline uint32_t ref_crc32c(const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint32_t crc = 0xffffffffU;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0x82f63b78U : 0);
	}
	return ~crc;
}

#endif /* SIW_UNIT_UTIL_H */
