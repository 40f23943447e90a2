#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The demo (make demo) runs this inside a QEMU guest: two "hosts" a and b
# (network namespaces joined by veth), a siw link on each, what the RDMA
# tools and the stock rdma-core provider see of them, and then data moved
# between them: rping with every ping verified, ibv_rc_pingpong with its
# data checked, ib_write_bw and ib_read_bw, and iperf3 (TCP) on the same
# link for comparison. It ends with a table and fails if anything did.
. "$SIW_SRC/tests/vm/lib.sh"
. "$SIW_SRC/tests/vm/traffic.sh"
# pp_run; also lifts RLIMIT_MEMLOCK for the tools' buffers.
. "$SIW_SRC/tests/vm/qpc.sh"

rdma_core_load
host_add a
host_add b
host_link a b 10.99.1
DEV_A=siw_a DEV_B=siw_b IP_A=10.99.1.1 IP_B=10.99.1.2

step "rdma link add siw_a type siw netdev v-a   (inside host a, $IP_A)"
on a rdma link add siw_a type siw netdev v-a
step "rdma link add siw_b type siw netdev v-b   (inside host b, $IP_B)"
on b rdma link add siw_b type siw netdev v-b
wait_for 20 port_active siw_a
wait_for 20 port_active siw_b
trap srv_stop_all EXIT

step "rdma link   (each host sees its own netdev)"
on a rdma link show
on b rdma link show
step "ibv_devices"
ibv_devices
step "ibv_devinfo -d siw_a"
on a ibv_devinfo -d siw_a
step "module"
modinfo -F description siw
modinfo -F filename siw

# Each run: server in b, client in a. ROWS: the table at the end.
ROWS=() bad=0
row() {
	ROWS+=("$(printf '%-44s %-9s %s' "$1" "$2" "${3:--}")")
	[[ $2 != FAILED ]] || bad=1
}

# perftest ROW TOOL ARGS...: one perftest run (rdma_cm) and its average.
# Under emulation perftest's clock calibration fails now and then (r^2 <
# 0.9): the run completes but reports 0.00. Such a run is repeated, up to
# three times in all, for a figure.
perftest() {
	local what=$1 tool=$2 val='' try
	shift 2
	step "$tool $*   (server in b, client in a)"
	for try in 1 2 3; do
		if ! perf_run "$tool" b "$@"; then
			row "$what" FAILED
			return 0
		fi
		val=$(perf_value "$tool" "$TLOG/$PERF_NAME.cli")
		[[ -z $val ]] || break
		echo "   no figure: perftest's clock calibration failed (try $try of 3)"
	done
	sed -n '/#bytes/,/^-/p' "$TLOG/$PERF_NAME.cli"
	row "$what" ok "${val:-no figure (clock calibration)}"
}

step "rping -V: 200 pings of 1 KiB, each one checked   (server in b, client in a)"
if rping_run b 1024 200; then
	row "rping -V, 200 x 1 KiB, verified" ok
else
	row "rping -V, 200 x 1 KiB" FAILED
fi

# Without rdma_cm: the tools swap QP numbers and GIDs over a TCP socket
# of their own; GID 1 carries the host's IPv4 address.
step "ibv_rc_pingpong -g 1 -c: 1000 round trips of 4 KiB, data checked"
if pp_run ibv_rc_pingpong -g 1 -c -n 1000; then
	# The server's "N bytes in S seconds = ...": N counts both directions.
	row "ibv_rc_pingpong, 1000 x 4 KiB, checked" ok \
		"$(awk '/ bytes in / { printf "%.2f", $1 / $4 / 1048576; exit }' "$TLOG/$PP_NAME.srv")"
else
	row "ibv_rc_pingpong, 1000 x 4 KiB" FAILED
fi

perftest "ib_write_bw, 1000 x 64 KiB (RDMA Write)" ib_write_bw -s 65536 -n 1000
perftest "ib_read_bw, 1000 x 64 KiB (RDMA Read)" ib_read_bw -s 65536 -n 1000

step "iperf3 -t 3: TCP on the same link, for comparison"
next_port
if client_server iperf3 b 60 iperf3 -s -1 -p "$TPORT" -- \
	iperf3 -c "$IP_B" -p "$TPORT" -t 3 -J && val=$(iperf_mibs "$TLOG/iperf3.cli"); then
	row "iperf3, TCP, 3 s" ok "$val"
else
	row "iperf3, TCP, 3 s" FAILED
fi

step "what moved between a and b (MiB/s under TCG emulation: a real host is many times faster)"
printf '%-44s %-9s %s\n' "run" result MiB/s
printf '%s\n' "${ROWS[@]}"
((bad == 0)) || fail "a run failed (see above)"
