#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 10
#
# Work requests of a QP that goes to ERROR complete once each with
# WR_FLUSH_ERR, in order, with their wr_ids; a QP destroyed with work
# outstanding leaves all or none of it on the CQ and nothing foreign;
# QP churn leaks nothing (tests/progs/qp_destroy_flush.c).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs qp_destroy_flush
siw_up

step "qp_destroy_flush"
run_prog "$progs/qp_destroy_flush" siw0

step "the device goes away cleanly after it"
siw_down
echo PASS
