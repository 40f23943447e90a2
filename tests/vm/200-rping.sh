#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 71
# providers: stock ours
#
# rping between two hosts over one veth pair, data verified (-V) at both
# ends: 1000 pings (300 in make check) at the smallest size rping accepts, at 65535 (its
# largest that works) and at two sizes in between, first with the server
# in B and the client in A, then with the roles swapped. Each run must end
# with exit 0 on both sides and no error report. Link type: SIW_TEST_TYPE
# (siw, default; linux_siw for Linux's siw). rping -v is never used: it
# prints the ping data.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

min=$(rping_min_size)
[[ $min =~ ^[0-9]+$ ]] || fail "cannot learn rping's smallest size"
sizes=("$min" 1000 4096 65535)
count=$(full_or 1000 300)

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"

for srv in b a; do
	for size in "${sizes[@]}"; do
		cell || continue
		step "rping: server in $srv, client in $(other_host "$srv"), $count x $size B"
		timed rping_run "$srv" "$size" "$count" ||
			fail "rping $size B (server in $srv) failed"
	done
done

cells_done
step "teardown"
siw_pair_down
echo PASS
