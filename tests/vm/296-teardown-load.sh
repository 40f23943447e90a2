#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# cost: 420
#
# Teardown under load. Load: between hosts a and b (siw_a, siw_b on one
# veth pair) ib_write_bw -R for a long time and an rping client pinging
# without pause (4 KiB, verified); in the initial namespace, on siw0
# (eth0), an NVMe-oF/RDMA target (brd) and its host, connected to each
# other, with a dd loop of O_DIRECT writes and reads on the namespace.
# While all of it runs, each disruption in turn:
#   link-delete  rdma link delete siw_a, and siw0
#   link-down    ip link set v-a down, 5 s, up again
#   netdev       ip link del v-a (the veth pair goes, both devices too)
#   netns        ip netns del a; the namespace ends once the load's
#                processes in it do (they are stopped), and with it its
#                veth end, the peer and both devices
#   rmmod        rmmod siw with every device, connection and the NVMe
#                controller still there
# Each must return within BOUND s; a device whose netdev or link went must
# be gone within BOUND s; the processes on it are told (their tools exit
# or are stopped; a stopped one is fine: rping and perftest do not all
# end by themselves), and within BOUND s of that nothing of siw is left
# in "rdma res" (no QP, no rdma_cm ID but listeners); the NVMe controller
# is deleted by nvme-rdma. Then the next disruption starts from a fresh
# setup. The kernel log stays clean (the runner fails the test
# otherwise), and siw unloads without leaks at the end of every case.
# Arguments name the cases (default: all, in the order above).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/ulp.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only"
command -v nvme >/dev/null || fail "nvme-cli missing (make deps)"

BOUND=$((30 * SLOW))
IP0=10.99.21.1
NQN=nqn.2026-11.org.siw:teardown
CASES=()
for c in "$@"; do
	[[ -z $c ]] || CASES+=("$c")
done
((${#CASES[@]})) || CASES=(link-delete link-down netdev netns rmmod)
FAILED=()
bad() {
	echo "   FAILED: $1"
	FAILED+=("$1")
}

# ---------------------------------------------------------------------------
# The load.

LOAD_PIDS=()
load_start() {
	next_port
	on b timeout -k 5 $((600 * SLOW)) ib_write_bw -R -F -D 300 -s 65536 -p "$TPORT" \
		>"$TLOG/bw.srv" 2>&1 &
	LOAD_PIDS+=($!)
	wait_listen b "$TPORT" "$!" 2>/dev/null || sleep 2
	on a timeout -k 5 $((600 * SLOW)) ib_write_bw -R -F -D 300 -s 65536 -p "$TPORT" "$IP_B" \
		>"$TLOG/bw.cli" 2>&1 &
	LOAD_PIDS+=($!)
	next_port
	on b timeout -k 5 $((600 * SLOW)) rping -s -P -V -S 4096 -a "$IP_B" -p "$TPORT" \
		>"$TLOG/rping.srv" 2>&1 &
	LOAD_PIDS+=($!)
	sleep 1
	on a timeout -k 5 $((600 * SLOW)) rping -c -V -a "$IP_B" -p "$TPORT" -S 4096 -C 1000000 \
		>"$TLOG/rping.cli" 2>&1 &
	LOAD_PIDS+=($!)
	(while :; do
		dd if=/dev/urandom of="$NVME_BDEV" bs=64k count=64 oflag=direct conv=nocreat status=none || exit 0
		dd if="$NVME_BDEV" of=/dev/null bs=64k count=64 iflag=direct status=none || exit 0
	done) >/dev/null 2>&1 &
	LOAD_PIDS+=($!)
	# Let traffic flow before the disruption: a disruption without its
	# load would prove nothing.
	wait_for $((60 * SLOW)) bash -c "[[ \$(rdma res show qp 2>/dev/null | grep -c ' state RTS ') -ge 6 ]]" ||
		fail "the load did not start: $(rdma res show qp 2>/dev/null | grep -c ' state RTS ') QPs in RTS after $((60 * SLOW)) s, at least 6 expected (two each for ib_write_bw, rping and NVMe-oF's admin and I/O queues)"
	echo "   load running: $(rdma res show qp 2>/dev/null | grep -c ' state RTS ') QPs in RTS"
}

# Stop what is still running of the load; how many had to be stopped.
load_stop() {
	local p n=0
	for p in "${LOAD_PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			n=$((n + 1))
			pkill -TERM -P "$p" 2>/dev/null || true
			kill "$p" 2>/dev/null || true
		fi
		wait "$p" 2>/dev/null || true
	done
	LOAD_PIDS=()
	echo "   load stopped ($n of its processes were still running)"
}

setup() {
	siw_pair siw siw
	ip addr add "$IP0/24" dev eth0 2>/dev/null || true
	ip link set eth0 up
	rdma link add siw0 type siw netdev eth0
	wait_for 20 port_active siw0
	ulp_nvme_up "$IP0" 4421 "$NQN" 32
	load_start
}

# within WHAT CMD...: CMD returns within BOUND s.
within() {
	local what=$1 rc=0 t0=$SECONDS
	shift
	timeout -k 5 "$BOUND" "$@" || rc=$?
	echo "   $what: exit $rc after $((SECONDS - t0)) s"
	((rc != 124 && rc != 137)) || bad "$what did not return within $BOUND s"
	return 0
}

gone() { ! [[ -e /sys/class/infiniband/$1 ]]; }
gone_within() {
	until_ok 30 gone "$1" || bad "$1 still there $BOUND s after its end"
}

teardown() {
	load_stop
	# The pair's connections end with their processes; siw0's NVMe
	# controller stays until it is disconnected.
	until_ok 30 res_settled siw_a siw_b || {
		rdma res show qp | sed 's/^/   | /'
		bad "$1: QPs or rdma_cm IDs of siw_a/siw_b left $BOUND s after the load stopped"
	}
	ulp_nvme_down "$NQN"
	until_ok 30 res_settled siw0 || {
		rdma res show qp | sed 's/^/   | /'
		bad "$1: QPs or rdma_cm IDs of siw0 left $BOUND s after the NVMe controller went"
	}
	siw_pair_down
	rdma link delete siw0 2>/dev/null || true
	until_ok 30 gone siw0 || bad "$1: siw0 not gone"
	siw_unload
}

# ---------------------------------------------------------------------------

case_link-delete() {
	within "rdma link delete siw_a" rdma link delete siw_a
	gone_within siw_a
	within "rdma link delete siw0 (under NVMe-oF)" rdma link delete siw0
	gone_within siw0
	until_ok 60 ulp_nvme_none ||
		bad "link-delete: the NVMe controller on siw0 is still there"
}

case_link-down() {
	within "ip link set v-a down" ip netns exec a ip link set v-a down
	until_ok 20 bash -c "[[ \$(cat /sys/class/infiniband/siw_a/ports/1/state) == *DOWN* ]]" ||
		bad "link-down: siw_a's port did not go DOWN"
	sleep 5
	within "ip link set v-a up" ip netns exec a ip link set v-a up
	until_ok 20 port_active siw_a || bad "link-down: siw_a's port did not come back ACTIVE"
}

case_netdev() {
	within "ip link del v-a" ip netns exec a ip link del v-a
	gone_within siw_a
	gone_within siw_b
}

case_netns() {
	within "ip netns del a" ip netns del a
	# The namespace ends when its last process does: the load's.
	load_stop
	gone_within siw_a
	gone_within siw_b
}

case_rmmod() {
	within "rmmod siw (devices, connections, an NVMe controller in use)" rmmod siw
	grep -q '^siw ' /proc/modules && bad "rmmod: siw is still loaded"
	gone_within siw_a
	gone_within siw0
	until_ok 60 ulp_nvme_none ||
		bad "rmmod: the NVMe controller on siw0 is still there"
}

for c in "${CASES[@]}"; do
	declare -F "case_$c" >/dev/null || fail "no case '$c'"
	step "$c"
	setup
	"case_$c"
	teardown "$c"
done
((${#FAILED[@]} == 0)) || fail "${#FAILED[@]} finding(s): ${FAILED[*]}"
echo PASS
