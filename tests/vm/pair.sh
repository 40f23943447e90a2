# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Helpers for a test of two guests ("# guests: pair"; tests/run boots it
# with tools/testing/vm/pair). Both guests run the same script, each with
# SIW_VM_ROLE set to a or b; source this after lib.sh. The guests meet
# over eth0 (a 10.98.0.1, b 10.98.0.2, /24), a link between the two of
# them only, and through /run/pair, a directory both write:
#   pair_signal NAME [TEXT]   tell the other guest that NAME happened
#   pair_wait NAME [SECS]     wait until the other guest said NAME (its
#                             TEXT is printed); fails at once when the
#                             other guest has ended, or after SECS (times
#                             SIW_TEST_SLOW)
#   pair_net                  eth0's address; the other guest answers
#   iwpmd_start, iwpmd_stop   the iWARP port mapper, as iwpmd.service
#                             runs it (log in $VM_JOB/iwpmd.log)
#   klog_mark, klog_since N   this test's kernel log: its line count; the
#                             lines after the first N
# Each guest's exit is recorded there on the way out (EXIT trap), so
# that a failure on one side ends the other's waits.

ME=${SIW_VM_ROLE:-}
[[ $ME == a || $ME == b ]] || fail "pair.sh: not a guest of a pair (no SIW_VM_ROLE)"
PEER=b
[[ $ME == b ]] && PEER=a
PAIR_DIR=/run/pair
[[ -d $PAIR_DIR && -w $PAIR_DIR ]] || fail "pair.sh: no share at $PAIR_DIR"
declare -A PAIR_IP=([a]=10.98.0.1 [b]=10.98.0.2)
MY_IP=${PAIR_IP[$ME]}
PEER_IP=${PAIR_IP[$PEER]}

pair_exit() {
	local rc=$?
	echo "$rc" >"$PAIR_DIR/$ME.exit"
	sync
	return "$rc"
}
trap pair_exit EXIT

pair_signal() {
	printf '%s\n' "${2:-}" >"$PAIR_DIR/$ME.$1.tmp"
	mv "$PAIR_DIR/$ME.$1.tmp" "$PAIR_DIR/$ME.$1"
}

pair_wait() {
	local f=$PAIR_DIR/$PEER.$1 end=$((SECONDS + ${2:-300} * SLOW))
	until [[ -e $f ]]; do
		[[ ! -e $PAIR_DIR/$PEER.exit ]] ||
			fail "guest $PEER ended (exit $(<"$PAIR_DIR/$PEER.exit")) before it said '$1'"
		((SECONDS < end)) || fail "guest $PEER did not say '$1' within $((${2:-300} * SLOW)) s"
		nap 0.5
	done
	cat "$f"
}

# pair_net: eth0's address, and the other guest reachable.
pair_net() {
	ip addr add "$MY_IP/24" dev eth0
	ip link set eth0 up
	wait_for 60 ping -c1 -W1 "$PEER_IP"
}

# iwpmd as iwpmd.service starts it (in the foreground, --systemd), after
# rdma-load-modules@iwpmd (iw_cm). Up once its UDP port 3935 is open and
# iw_cm has registered it (iwpmd_register).
IWPMD_PID=
iwpmd_start() {
	modprobe iw_cm
	iwpmd --systemd >>"$VM_JOB/iwpmd.log" 2>&1 &
	IWPMD_PID=$!
	wait_for 30 bash -c "[[ -n \$(ss -Hlun 'sport = :3935') ]]"
	iwpmd_register
}

# The first listen or connect after an iwpmd start has iw_cm register
# it. Debian's 6.1 iw_cm (iwpm_register_pid()) multicasts that request
# before it records where the answer goes (req_buffer), and an iwpmd
# that answers in between makes iwpm_register_pid_cb() dereference NULL:
# an Oops in iwpmd, and the listen fails 10 s later. Under TCG that takes
# only a guest CPU stalled by the host at that instruction: CI hit it in
# 310 once, and a guest that started iwpmd right before each enable_iser
# hit it 3 times in 6. So the first one is made here, an rping listen,
# with iwpmd stopped until the request waits in its netlink socket.
iwpmd_register() {
	local rp
	kill -STOP "$IWPMD_PID"
	rping -s -a "$MY_IP" -p 7999 >/dev/null 2>&1 &
	rp=$!
	wait_for 30 iwpmd_asked
	kill -CONT "$IWPMD_PID"
	# Registered and mapped: siw listens for rping, on its device.
	wait_for 30 bash -c "ss -Hltn | grep -qF '$MY_IP%'"
	kill "$rp" 2>/dev/null || true
	wait "$rp" 2>/dev/null || true
}
# A message waits for iwpmd in its RDMA netlink socket (protocol 20, a
# port ID not the kernel's, Rmem above 0).
iwpmd_asked() {
	awk '$2 == 20 && $3 != 0 && $5 > 0 { f = 1 } END { exit !f }' \
		/proc/net/netlink
}
iwpmd_stop() {
	[[ -n $IWPMD_PID ]] || return 0
	kill "$IWPMD_PID" 2>/dev/null || true
	wait "$IWPMD_PID" 2>/dev/null || true
	IWPMD_PID=
}

klog_mark() { klog | wc -l; }
klog_since() { klog | tail -n +"$(($1 + 1))"; }
