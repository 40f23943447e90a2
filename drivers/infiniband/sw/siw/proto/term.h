/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Terminate error classes (layer, error type, error code): the ones the
 * RFCs define, and words for the kernel log.
 */
#ifndef SIW_PROTO_TERM_H
#define SIW_PROTO_TERM_H

#include "env.h"
#include "wire.h"

/* Words for @tc; NULL when no RFC defines that layer/type/code. */
const char *siw_term_code_str(const struct siw_term_code *tc);

static inline bool siw_term_code_known(const struct siw_term_code *tc)
{
	return siw_term_code_str(tc);
}

/*
 * A peer may put the layer into the low nibble of the first control octet
 * and the error type into the high one, the reverse of RFC 5040 (Linux's
 * siw does so on little-endian hosts). When @tc is no class the RFCs
 * define but its nibbles swapped are one, swap them and return true.
 */
bool siw_term_code_unswap(struct siw_term_code *tc);

#endif /* SIW_PROTO_TERM_H */
