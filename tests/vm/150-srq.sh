#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
#
# SRQ creation, query, limit arming and modify errors; a QP on the SRQ
# pins it and does not flush its receives (tests/progs/srq_limit.c). The
# SRQ limit event itself needs traffic and is left to a kernel-side test.
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs srq_limit
siw_up

step "srq_limit"
run_prog "$progs/srq_limit" siw0

siw_down
echo PASS
