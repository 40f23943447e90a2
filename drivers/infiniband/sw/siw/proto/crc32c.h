/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * CRC32C (Castagnoli, reflected polynomial 0x82f63b78) as used by MPA.
 *
 * Incremental use:
 *
 *	u32 st = siw_crc32c_init();
 *	st = siw_crc32c_update(st, a, alen);
 *	st = siw_crc32c_update(st, b, blen);
 *	crc = siw_crc32c_final(st);
 *
 * The final value is the standard CRC32C (0xe3069283 for "123456789");
 * MPA sends it least significant octet first (cpu_to_le32()).
 *
 * In the kernel the update step is libcrc32c's crc32c(), which uses the
 * SSE4.2 instruction where the CPU has it. In userspace it is a portable
 * slicing-by-8 table implementation.
 */
#ifndef SIW_PROTO_CRC32C_H
#define SIW_PROTO_CRC32C_H

#include "env.h"

#define SIW_CRC32C_SEED 0xffffffffU

static inline u32 siw_crc32c_init(void)
{
	return SIW_CRC32C_SEED;
}

u32 siw_crc32c_update(u32 state, const void *buf, size_t len);

static inline u32 siw_crc32c_final(u32 state)
{
	return ~state;
}

/* One-shot CRC32C of a buffer. */
static inline u32 siw_crc32c(const void *buf, size_t len)
{
	return siw_crc32c_final(siw_crc32c_update(siw_crc32c_init(), buf, len));
}

#endif /* SIW_PROTO_CRC32C_H */
