#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 15
#
# Work requests held in the send queue by an RDMA Read go on once it
# completes, in order: Reads beyond the ORD, fenced Writes behind Reads,
# and Writes that fill the completion-ordering ring behind a long Read
# (tests/progs/gate_wait.c). The Read's completion wakes the transmitter
# only when an SQE waits, so a missed wake would leave them there.
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs gate_wait
siw_up

step "gate_wait"
run_prog "$progs/gate_wait" siw0

step "the device goes away cleanly after it"
siw_down
echo PASS
