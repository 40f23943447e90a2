#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 22
# providers: stock
#
# MPA CRC covers the octets on the wire (tests/progs/crc_rewrite.c): two
# QPs of siw0 connected without rdma_cm through GID 1 (eth0 gets an IPv4
# address for it), with CRC (mpa_crc=2). A thread rewrites the source
# buffer, the Write target and the receive buffer while large Writes and
# Sends wait for room in the socket; every WR must complete with success
# on both ends, a known pattern must arrive intact afterwards, and the
# kernel log must show no CRC error or Terminate. (perftest rewrites its
# credit word while the Write that carries it is in flight, and resets
# the word it receives credits in at each size: with a CRC taken over
# the source at framing, or over the target after placement, that ended
# a CI run of ib_send_bw with a CRC error.)
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

ADDR=10.99.17.1

need_progs crc_rewrite
ip addr add "$ADDR/24" dev eth0
siw_up
siw_param mpa_crc 2

step "crc_rewrite"
wait_for 10 gid1_is_ipv4
run_prog "$progs/crc_rewrite" siw0

step "no CRC error, no Terminate in the kernel log"
if klog | grep -E 'siw0: .*(CRC|Terminate)'; then
	fail "the connection saw a CRC error or a Terminate"
fi

siw_param mpa_crc 1
siw_down
echo PASS
