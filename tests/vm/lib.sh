# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shared helpers for guest test scripts (sourced inside the QEMU guest that
# tools/testing/vm/run boots). A script fails on the first failed check
# (set -e); the runner additionally fails it on kernel BUG/WARNING reports.

set -euo pipefail

# Print a step, so the console log tells where a failure happened.
step() { echo "== $*"; }

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Exit code 77 means "skipped" to tests/run.
skip() {
	echo "SKIP: $*"
	exit 77
}

# expect_fail CMD...: CMD must exit non-zero.
expect_fail() {
	if "$@"; then
		fail "expected failure: $*"
	fi
}

# wait_for SECONDS CMD...: poll until CMD succeeds or SECONDS pass.
wait_for() {
	local t=$1 end
	shift
	end=$((SECONDS + t))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || fail "timed out after ${t}s waiting for: $*"
		sleep 0.2
	done
}

# Load the RDMA core modules our siw.ko needs (siw itself is loaded on
# demand by "rdma link add", or explicitly by siw_load).
rdma_core_load() {
	modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm libcrc32c
}

siw_load() {
	rdma_core_load
	modprobe siw
	grep -q '^siw ' /proc/modules || fail "siw did not load"
}

# Unload siw and check it left nothing behind.
siw_unload() {
	if grep -q '^siw ' /proc/modules; then
		rmmod siw || fail "rmmod siw failed"
	fi
	if dmesg | grep -E 'siw.*leak'; then
		fail "siw reported leaked objects"
	fi
}

# Name of the netdev an RDMA link is bound to, as "rdma link" reports it.
link_netdev() {
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

link_state() {
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* state \([A-Z_]*\).*/\1/p'
}

ib_exists() { [[ -e /sys/class/infiniband/$1 ]]; }

# Test "hosts" are network namespaces joined by veth pairs.
# host_add NAME
host_add() {
	ip netns add "$1"
	ip -n "$1" link set lo up
}

# host_link A B SUBNET: veth between A and B, addresses SUBNET.1 in A and
# SUBNET.2 in B (SUBNET like 10.99.1), device names v-A / v-B.
host_link() {
	local a=$1 b=$2 net=$3
	ip link add "v-$a" type veth peer name "v-$b"
	ip link set "v-$a" netns "$a"
	ip link set "v-$b" netns "$b"
	ip -n "$a" addr add "$net.1/24" dev "v-$a"
	ip -n "$b" addr add "$net.2/24" dev "v-$b"
	ip -n "$a" link set "v-$a" up
	ip -n "$b" link set "v-$b" up
}

# host_netem HOST DEV ARGS...: e.g. host_netem a v-a delay 5ms loss 1%
host_netem() {
	local h=$1 dev=$2
	shift 2
	ip netns exec "$h" tc qdisc replace dev "$dev" root netem "$@"
}

# on HOST CMD...: run CMD inside HOST's network namespace.
on() {
	local h=$1
	shift
	ip netns exec "$h" "$@"
}
