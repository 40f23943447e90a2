#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
#
# A CQ overflowed by flush completions: IBV_EVENT_CQ_ERR reaches the
# process once, exactly the CQ's size in completions can be polled, in
# order (tests/progs/cq_overflow.c).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs cq_overflow
siw_up

step "cq_overflow"
run_prog "$progs/cq_overflow" siw0

step "again, as nobody"
run_prog as_nobody "$(unprivileged_copy cq_overflow)" siw0

siw_down
echo PASS
