#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 75
# providers: stock ours
#
# perftest latency over rdma_cm (-R -F): ib_send_lat, ib_write_lat and
# ib_read_lat at 2 B, 4 KiB and 64 KiB, server in B and client in A. Every
# run must exit 0 on both sides and the client must report the size with
# all iterations done and finite, positive latencies (or, when perftest's
# clock calibration failed under TCG, "inf" with its warning: see
# perf_check_lat). Timing under TCG is noisy: figures are printed, never
# compared.
#
# CRC: with our siw every run is done with MPA CRC off and on (mpa_crc=0,
# then 2), and the MPA frames on the wire must show it; Linux's siw
# (linux_siw) cannot switch and runs without (see 210). make check deals
# the runs between the stock provider's pass and ours (lib.sh: cell).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

# 200 iterations a run, 100 in make check (lib.sh: full_or); 4 KiB only
# in make check-full (2 B and 64 KiB bound it).
iters=${SIW_TEST_LAT_ITERS:-$(full_or 200 100)}
read -ra sizes <<<"$(full_or "2 4096 65536" "2 65536")"

perf_crc_modes

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"
mpa_capture_start

for mode in "${crc_modes[@]}"; do
	perf_crc_mode "$mode"
	for tool in ib_send_lat ib_write_lat ib_read_lat; do
		for size in "${sizes[@]}"; do
			cell || continue
			step "$tool -s $size -n $iters ($label)"
			timed perf_run "$tool" b -s "$size" -n "$iters" ||
				fail "$tool $size B ($label)"
			perf_check_lat "$TLOG/$PERF_NAME.cli" "$size" "$iters" ||
				fail "$tool $size B ($label): client report"
			mpa_expect "$TPORT" "rev=2 crc=$crc" "rev=2 crc=$crc" ||
				fail "$tool ($label): MPA negotiation on the wire"
		done
	done
done

cells_done
step "teardown"
mpa_capture_stop
perf_crc_restore
siw_pair_down
echo PASS
