/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Invariant checks for the fuzz targets: a violation aborts the run. */
#ifndef SIW_FUZZ_CHECK_H
#define SIW_FUZZ_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define FUZZ_ASSERT(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: invariant violated: %s\n", \
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

#endif /* SIW_FUZZ_CHECK_H */
