#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 720
# providers: stock ours
#
# perftest bandwidth over rdma_cm (-R, needed for iWARP; -F, TCG's clock
# is not steady): ib_send_bw, ib_write_bw and ib_read_bw with -a (every
# size from 2 B to 8 MiB, perftest's range; -n 5 iterations per size keeps
# it short under TCG), then each with -q 4 (four QPs) and -b
# (bidirectional). Server in B, client in A. Every run must exit 0 on both
# sides and report one row per size with a positive message rate (and a
# positive bandwidth from 1 KiB up); a write/read server reports only the
# last size.
#
# CRC: with our siw every run is done with MPA CRC off and on
# (mpa_crc=0, then 2 = always ask for it; one module for both hosts), and
# the MPA frames on the wire must show it. Linux's siw (linux_siw) cannot
# switch: mpa_crc_required and mpa_crc_strict are consts (false) in its
# siw_main.c, so it never asks for CRC and, against itself, always runs
# without; that is the only mode run there (and checked on the wire).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

iters=${SIW_TEST_BW_ITERS:-5}
mapfile -t all < <(perf_all_sizes)

case $SIW_TEST_TYPE in
siw) crc_modes=(0 2) ;;
linux_siw)
	crc_modes=(linux)
	echo "NOTE: linux_siw cannot switch MPA CRC (consts in its siw_main.c): CRC off only"
	;;
*) fail "SIW_TEST_TYPE=$SIW_TEST_TYPE" ;;
esac

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"
mpa_capture_start

for mode in "${crc_modes[@]}"; do
	crc=0
	if [[ $mode != linux ]]; then
		siw_param mpa_crc "$mode"
		[[ $mode == 2 ]] && crc=1
	fi
	label="CRC $([[ $crc == 1 ]] && echo on || echo off)"

	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		step "$tool -a -n $iters ($label)"
		timed perf_run "$tool" b -a -n "$iters" || fail "$tool -a ($label)"
		perf_check_bw "$TLOG/$PERF_NAME.cli" "${all[@]}" ||
			fail "$tool -a ($label): client report"
		# Only a send server sees every size; a write or read server
		# (passive side) reports the last one.
		if [[ $tool == ib_send_bw ]]; then
			perf_check_bw "$TLOG/$PERF_NAME.srv" "${all[@]}"
		else
			perf_check_bw "$TLOG/$PERF_NAME.srv" "${all[-1]}"
		fi || fail "$tool -a ($label): server report"
		mpa_expect "$TPORT" "rev=2 crc=$crc" "rev=2 crc=$crc" ||
			fail "$tool ($label): MPA negotiation on the wire"
	done

	for tool in ib_send_bw ib_write_bw ib_read_bw; do
		step "$tool -q 4 ($label)"
		timed perf_run "$tool" b -q 4 -s 65536 -n 100 || fail "$tool -q 4 ($label)"
		perf_check_bw "$TLOG/$PERF_NAME.cli" 65536 ||
			fail "$tool -q 4 ($label): client report"
		step "$tool -b ($label)"
		timed perf_run "$tool" b -b -s 65536 -n 100 || fail "$tool -b ($label)"
		perf_check_bw "$TLOG/$PERF_NAME.cli" 65536 ||
			fail "$tool -b ($label): client report"
		perf_check_bw "$TLOG/$PERF_NAME.srv" 65536 ||
			fail "$tool -b ($label): server report"
	done
done

step "teardown"
mpa_capture_stop
[[ ${crc_modes[0]} == linux ]] || siw_param mpa_crc 1
siw_pair_down
echo PASS
