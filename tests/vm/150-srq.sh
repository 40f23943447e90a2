#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 14
#
# SRQs on siw0 (eth0):
#  - creation, query, limit arming and modify errors; a QP on the SRQ pins
#    it and does not flush its receives (tests/progs/srq_limit.c);
#  - the SRQ limit event with traffic (tests/progs/srq_limit_traffic.c):
#    two QPs of siw0 connected without rdma_cm through GID 1 (eth0 gets
#    an IPv4 address for it), Sends consume the SRQ's receives and
#    IBV_EVENT_SRQ_LIMIT_REACHED must come exactly when the count drops
#    below the armed limit, once, and again after re-arming.
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

# GID 1 of siw0 is eth0's first IPv4 address (IPv4-mapped).
SRQ_ADDR=10.99.15.1

need_progs srq_limit srq_limit_traffic
ip addr add "$SRQ_ADDR/24" dev eth0
siw_up

step "srq_limit"
run_prog "$progs/srq_limit" siw0

step "srq_limit_traffic"
wait_for 10 gid1_is_ipv4
run_prog "$progs/srq_limit_traffic" siw0

siw_down
echo PASS
