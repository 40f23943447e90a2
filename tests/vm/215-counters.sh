#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 90
#
# The device counters ("rdma statistic show link siwX/1", stats.c) move
# by what a known transfer did, between hosts a and b (our siw on both,
# nothing else on their devices):
#  - ib_write_bw -n 200 -s 65536, a to b: what one side sent (tx_fpdus,
#    tx_octets) the other received (rx_fpdus, rx_octets), both ways,
#    exactly; a sent at least 200 x 64 KiB; every connect attempt of a
#    was accepted by b and established on both;
#  - ib_read_bw -n 200 -s 65536, a reads from b: b served 200 Read
#    Requests, a received at least 200 x 64 KiB;
#  - a zero-copy FPDU only for Read Responses (tx_zcopy on: b's, not a's);
#  - who transmits (tx_handed_over, tx_direct_max at its default): a
#    left at least one of its 64 KiB Writes to the TX work item (and no
#    more than 200), b none; neither side handed over a Read Request; and
#    ib_write_lat -s 8 -n 200 both ways, each side sends its 8 B Writes
#    itself (+0 on both);
#  - no Terminate, CRC error, bad FPDU, placement error, MPA reject or
#    failed connect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw's counters"
siw_pair siw siw

# shellcheck disable=SC2034  # read through namerefs (snap, d, nonzero)
declare -A A0 B0 A1 B1
snap() {
	local -n m=$1
	local k v
	while read -r k v; do
		m[$k]=$v
	done < <(dev_stats "$2" "$3")
	((${#m[@]} > 10)) || fail "rdma statistic show link $3/1 gave ${#m[@]} counters"
}
# d MAP0 MAP1 NAME: how much NAME grew.
d() {
	local -n x=$1 y=$2
	echo $((${y[$3]:-0} - ${x[$3]:-0}))
}

step "counters of $DEV_A and $DEV_B"
dev_stats a "$DEV_A" | tr '\n' ' ' | sed 's/^/   /'
echo
snap A0 a "$DEV_A"
snap B0 b "$DEV_B"

step "ib_write_bw -n 200 -s 65536, a to b"
QUIET=1 perf_run ib_write_bw b -n 200 -s 65536 || fail "ib_write_bw"
snap A1 a "$DEV_A"
snap B1 b "$DEV_B"
for k in fpdus octets; do
	echo "   a tx_$k +$(d A0 A1 "tx_$k"), b rx_$k +$(d B0 B1 "rx_$k"); b tx_$k +$(d B0 B1 "tx_$k"), a rx_$k +$(d A0 A1 "rx_$k")"
	[[ $(d A0 A1 "tx_$k") == "$(d B0 B1 "rx_$k")" ]] ||
		fail "a sent $(d A0 A1 "tx_$k") $k, b received $(d B0 B1 "rx_$k")"
	[[ $(d B0 B1 "tx_$k") == "$(d A0 A1 "rx_$k")" ]] ||
		fail "b sent $(d B0 B1 "tx_$k") $k, a received $(d A0 A1 "rx_$k")"
done
(($(d A0 A1 tx_octets) >= 200 * 65536)) ||
	fail "a sent $(d A0 A1 tx_octets) octets for 200 writes of 64 KiB"
# A 64 KiB message is past tx_direct_max: the poster hands it over. The
# work item then takes what else it finds in the ring, so not every Write
# is counted; a, the only side that posted one, hands over at least one.
direct_max=$(</sys/module/siw/parameters/tx_direct_max)
echo "   tx_direct_max $direct_max: a tx_handed_over +$(d A0 A1 tx_handed_over), b +$(d B0 B1 tx_handed_over)"
((direct_max > 0 && direct_max <= 65536)) ||
	fail "tx_direct_max is $direct_max; this check wants its default"
n=$(d A0 A1 tx_handed_over)
((n >= 1 && n <= 200)) || fail "a handed $n of its 200 Writes over to the TX work item"
(($(d B0 B1 tx_handed_over) == 0)) || fail "b handed messages over, but it posted none past tx_direct_max"
# perftest -R makes two connections: one for its own handshake, one for
# the data.
n=$(d A0 A1 connect_attempts)
echo "   a connect_attempts +$n, connections_established +$(d A0 A1 connections_established); b connects_accepted +$(d B0 B1 connects_accepted), connections_established +$(d B0 B1 connections_established)"
((n >= 1)) || fail "a made no connect attempt"
[[ $(d A0 A1 connections_established) == "$n" && $(d B0 B1 connects_accepted) == "$n" &&
	$(d B0 B1 connections_established) == "$n" ]] ||
	fail "a's $n connect attempts do not match what was accepted and established"

step "ib_read_bw -n 200 -s 65536, a reads from b"
snap A0 a "$DEV_A"
snap B0 b "$DEV_B"
QUIET=1 perf_run ib_read_bw b -n 200 -s 65536 || fail "ib_read_bw"
snap A1 a "$DEV_A"
snap B1 b "$DEV_B"
echo "   b read_reqs_served +$(d B0 B1 read_reqs_served), tx_zcopy_fpdus +$(d B0 B1 tx_zcopy_fpdus); a rx_octets +$(d A0 A1 rx_octets), tx_zcopy_fpdus +$(d A0 A1 tx_zcopy_fpdus)"
(($(d B0 B1 read_reqs_served) >= 200)) ||
	fail "b served $(d B0 B1 read_reqs_served) Read Requests for 200 reads"
(($(d A0 A1 rx_octets) >= 200 * 65536)) ||
	fail "a received $(d A0 A1 rx_octets) octets for 200 reads of 64 KiB"
if [[ $(cat /sys/module/siw/parameters/tx_zcopy) == Y ]]; then
	(($(d B0 B1 tx_zcopy_fpdus) > 0)) || fail "b sent its Read Responses without zero copy"
fi
(($(d A0 A1 tx_zcopy_fpdus) == 0)) || fail "a sent FPDUs by zero copy, but it sent no Read Response"
# Read Requests carry no payload, and b, which sends the Read Responses,
# rings no doorbell on the data QP: its responses start from RX.
[[ $(d A0 A1 tx_handed_over) == 0 && $(d B0 B1 tx_handed_over) == 0 ]] ||
	fail "messages handed over in a read test: a +$(d A0 A1 tx_handed_over), b +$(d B0 B1 tx_handed_over)"

step "ib_write_lat -s 8 -n 200, a and b: each poster sends its Writes itself"
snap A0 a "$DEV_A"
snap B0 b "$DEV_B"
QUIET=1 perf_run ib_write_lat b -s 8 -n 200 || fail "ib_write_lat"
snap A1 a "$DEV_A"
snap B1 b "$DEV_B"
echo "   a tx_fpdus +$(d A0 A1 tx_fpdus), tx_handed_over +$(d A0 A1 tx_handed_over); b tx_fpdus +$(d B0 B1 tx_fpdus), tx_handed_over +$(d B0 B1 tx_handed_over)"
(($(d A0 A1 tx_fpdus) >= 200 && $(d B0 B1 tx_fpdus) >= 200)) ||
	fail "a sent $(d A0 A1 tx_fpdus) and b $(d B0 B1 tx_fpdus) FPDUs for 200 Writes each way"
[[ $(d A0 A1 tx_handed_over) == 0 && $(d B0 B1 tx_handed_over) == 0 ]] ||
	fail "8 B Writes were handed over to the work item: a +$(d A0 A1 tx_handed_over), b +$(d B0 B1 tx_handed_over)"

step "nothing went wrong"
# nonzero MAP HOST: the error counters of MAP that are not 0.
nonzero() {
	local -n nz=$1
	local k
	for k in tx_terminate_rdmap tx_terminate_ddp tx_terminate_llp \
		rx_terminate_rdmap rx_terminate_ddp rx_terminate_llp rx_crc_errors \
		rx_bad_fpdus rx_placement_errors mpa_rejects_sent \
		mpa_rejects_received connect_failures; do
		[[ ${nz[$k]:-missing} == 0 ]] || echo -n " $2:$k=${nz[$k]:-missing}"
	done
}
bad="$(nonzero A1 a)$(nonzero B1 b)"
[[ -z $bad ]] || fail "error counters moved:$bad"
echo "   every error counter 0 on both"

siw_pair_down
siw_unload
echo PASS
