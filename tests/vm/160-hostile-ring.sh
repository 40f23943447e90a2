#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 15
#
# A process that fills its own SQ, RQ and SRQ rings with garbage and abuses
# mmap on the uverbs file: the kernel flushes exactly the garbage it was
# given, with sane CQEs, and stays healthy (tests/progs/hostile_ring.c).
# Run as root and as an unprivileged user.
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs hostile_ring
siw_up

step "hostile_ring as nobody"
run_prog as_nobody "$(unprivileged_copy hostile_ring)" siw0

step "hostile_ring as root"
run_prog "$progs/hostile_ring" siw0

step "the device still works: ibv_devinfo"
ibv_devinfo -d siw0 >/dev/null || fail "ibv_devinfo after hostile_ring"

siw_down
echo PASS
