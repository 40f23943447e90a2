// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * memcrc [SECONDS]: what a copy and a CRC32C of 64 KiB cost on this CPU,
 * for reading tests/perf's CRC figures. Prints MiB/s of memcpy() and of
 * CRC32C with the SSE4.2 instruction over a 64 KiB buffer (an FPDU of
 * large FPDUs), and their ratio. One stream of crc32q: the kernel's
 * crc32c-intel runs three interleaved streams on a large buffer (merged
 * with PCLMUL), about three times this on a real CPU; under QEMU TCG each
 * instruction is a helper call whatever the interleaving, so there this
 * rate is the kernel's too. Run it in the guest and on the host to see
 * how far the emulation moves the ratio. Not a test: it checks only its
 * CRC against the known answer (0xe3069283 for "123456789").
 */
#include <nmmintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BUF (64 * 1024)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static uint32_t crc_bytes(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--)
		crc = _mm_crc32_u8(crc, *p++);
	return crc;
}

static uint32_t crc1(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t a = crc;

	for (; len >= 8; len -= 8, p += 8) {
		uint64_t x;

		memcpy(&x, p, 8);
		a = _mm_crc32_u64(a, x);
	}
	return crc_bytes((uint32_t)a, p, len);
}

static volatile uint32_t sink;

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	uint8_t *src = malloc(BUF), *dst = malloc(BUF);
	double t0, t, copy_mibs, crc_mibs;
	uint64_t n;
	size_t i;

	if (!src || !dst || secs <= 0) {
		fprintf(stderr, "usage: memcrc [SECONDS > 0]\n");
		return 2;
	}
	if (~crc1(~0U, (const uint8_t *)"123456789", 9) != 0xe3069283U) {
		fprintf(stderr, "memcrc: CRC32C known answer wrong\n");
		return 1;
	}
	for (i = 0; i < BUF; i++)
		src[i] = (uint8_t)(i * 131 + 7);

	for (n = 0, t0 = now(); (t = now() - t0) < secs; n++) {
		memcpy(dst, src, BUF);
		sink = dst[n % BUF];
	}
	copy_mibs = n * (BUF / 1048576.0) / t;
	for (n = 0, t0 = now(); (t = now() - t0) < secs; n++)
		sink = crc1(~0U, src, BUF);
	crc_mibs = n * (BUF / 1048576.0) / t;

	printf("memcpy 64KiB: %.1f MiB/s\n", copy_mibs);
	printf("crc32c 64KiB: %.1f MiB/s\n", crc_mibs);
	printf("crc32c cost per memcpy cost: %.2f\n", copy_mibs / crc_mibs);
	free(src);
	free(dst);
	return 0;
}
