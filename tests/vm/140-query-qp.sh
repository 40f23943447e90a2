#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 6
#
# QP states and attributes read back exactly after each modify, invalid
# transitions are refused without a state change, creation limits hold
# (tests/progs/query_qp.c).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs query_qp
siw_up

step "query_qp"
run_prog "$progs/query_qp" siw0

siw_down
echo PASS
