#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 12
#
# A CQ overflowed by flush completions: IBV_EVENT_CQ_ERR reaches the
# process once, exactly the CQ's size in completions can be polled, in
# order (tests/progs/cq_overflow.c); the kernel log says which QP lost a
# completion to which CQ.
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs cq_overflow
siw_up

step "cq_overflow"
run_prog "$progs/cq_overflow" siw0

step "the kernel log names the QP and the full CQ"
lines=$(klog | grep -E 'siw0: QP [0-9]+: CQ [0-9]+ full, completion of WR 0x[0-9a-f]+ lost; QP to ERROR') ||
	fail "no 'CQ full' line in the kernel log"
head -n 3 <<<"$lines"

step "again, as nobody"
run_prog as_nobody "$(unprivileged_copy cq_overflow)" siw0

siw_down
echo PASS
