#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 720
# cost: 90
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
#
# Zero-copy: with our siw, Read Responses must go to TCP by page reference
# with tx_zcopy on and be copied with it off (a kprobe counts the page
# sends).
#
# A tool in a CRC mode is a row of three runs (-q 4, -a, -b). make check
# runs one run of each row, each kind twice: -a for Write without CRC
# (ours) and Read with it (stock), and deals the rows between the stock
# provider's pass and ours, the zero-copy pair as one more cell (lib.sh:
# cell, CELL_ROW); make check-full runs them all in both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

iters=${SIW_TEST_BW_ITERS:-5}
mapfile -t all < <(perf_all_sizes)

perf_crc_modes

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"
mpa_capture_start
CELL_ROW=3

for mode in "${crc_modes[@]}"; do
	perf_crc_mode "$mode"

	for tool in ib_read_bw ib_write_bw ib_send_bw; do
		if cell; then
			step "$tool -q 4 ($label)"
			timed perf_run "$tool" b -q 4 -s 65536 -n 100 ||
				fail "$tool -q 4 ($label)"
			perf_check_bw "$TLOG/$PERF_NAME.cli" 65536 ||
				fail "$tool -q 4 ($label): client report"
		fi
		if cell; then
			step "$tool -a -n $iters ($label)"
			timed perf_run "$tool" b -a -n "$iters" || fail "$tool -a ($label)"
			perf_check_bw "$TLOG/$PERF_NAME.cli" "${all[@]}" ||
				fail "$tool -a ($label): client report"
			# Only a send server sees every size; a write or read
			# server (passive side) reports the last one.
			if [[ $tool == ib_send_bw ]]; then
				perf_check_bw "$TLOG/$PERF_NAME.srv" "${all[@]}"
			else
				perf_check_bw "$TLOG/$PERF_NAME.srv" "${all[-1]}"
			fi || fail "$tool -a ($label): server report"
			mpa_expect "$TPORT" "rev=2 crc=$crc" "rev=2 crc=$crc" ||
				fail "$tool ($label): MPA negotiation on the wire"
		fi
		cell || continue
		step "$tool -b ($label)"
		timed perf_run "$tool" b -b -s 65536 -n 100 || fail "$tool -b ($label)"
		perf_check_bw "$TLOG/$PERF_NAME.cli" 65536 ||
			fail "$tool -b ($label): client report"
		perf_check_bw "$TLOG/$PERF_NAME.srv" 65536 ||
			fail "$tool -b ($label): server report"
	done
done

# Our siw sends Read Responses of a page or more by page reference
# (tx_zcopy, on by default): TCP gets them through tcp_sendpage_locked(),
# which nothing else calls in this guest. With tx_zcopy off it must not.
CELL_ROW=0
if [[ $SIW_TEST_TYPE == siw ]] && cell; then
	for zc in Y N; do
		step "ib_read_bw -s 65536 -n 100 with tx_zcopy=$zc"
		siw_param tx_zcopy "$zc"
		if ! kprobe_count_start siw_zc tcp_sendpage_locked; then
			echo "NOTE: no tcp_sendpage_locked() to probe (kernel 6.5+): not checked"
			break
		fi
		timed perf_run ib_read_bw b -s 65536 -n 100 ||
			fail "ib_read_bw (tx_zcopy=$zc)"
		perf_check_bw "$TLOG/$PERF_NAME.cli" 65536 ||
			fail "ib_read_bw (tx_zcopy=$zc): client report"
		n=$(kprobe_count siw_zc)
		kprobe_count_stop siw_zc
		echo "   tcp_sendpage_locked() calls: $n"
		if [[ $zc == Y ]]; then
			((n > 0)) || fail "tx_zcopy=Y: no Read Response went by page reference"
		else
			((n == 0)) || fail "tx_zcopy=N: $n pages went by reference"
		fi
	done
	siw_param tx_zcopy Y
fi

cells_done
step "teardown"
mpa_capture_stop
perf_crc_restore
siw_pair_down
echo PASS
