// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one place the tracepoints of trace.h are defined. */

#define CREATE_TRACE_POINTS
#include "trace.h"
