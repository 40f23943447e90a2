#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 55
#
# A graceful disconnect delivers what was sent before it, also when the
# QP is destroyed right after it (rsockets' rclose() does both at once;
# rstream in 230 lost the end of its last transfer on the debug kernel).
# tests/progs/close_drain: host a Sends 32 messages of 64 KiB to host b,
# waits until all have completed (TCP took them), then rdma_disconnect()
# and rdma_destroy_qp() at once. The link from a to b is slowed down
# (netem, 40 Mbit/s), so what a's socket holds when the QP goes takes a
# while to leave. Host b must receive every message intact, then the
# disconnect, and host a must have sent no reset (the TCP counters
# AbortOnData: a close with SO_LINGER 0, or data after the close;
# AbortOnClose: a close with data unread). Five rounds, each a new
# connection, siw on both ends (or Linux's siw, as the test type says).
# In the first three the client makes sure that the CM's work for the
# disconnect runs only after the destroy (--no-cm-between: SCHED_FIFO
# with one CPU online), as it did by chance on the slow debug kernel; the
# next two leave it to timing. In rounds 6 and 7 host b answers every
# message with a small Send (--answer, as rsockets' credit updates), so
# that answers reach host a after its close: a socket let go of would
# answer them with a reset (rstream in 230 on the debug kernel, after
# the fix for the destroy's abort); siw keeps reading until b closes too.
# Round 6 holds the CM off as well.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs close_drain
N=32 SIZE=65536 ROUNDS=7

# resets HOST: the host's TCP connections ended by a reset it sent, so
# far, by cause: AbortOnData (closed with SO_LINGER 0: siw's abort),
# AbortOnClose (closed with data unread), AbortOnMemory,
# AbortOnTimeout.
resets() {
	on "$1" nstat -saz TcpExtTCPAbortOnData TcpExtTCPAbortOnClose \
		TcpExtTCPAbortOnMemory TcpExtTCPAbortOnTimeout |
		awk '!/^#/ { printf "%s%s %s", n++ ? ", " : "", substr($1, 10), $2 }'
}

# ended HOST PORT: the host holds no TCP connection of PORT any more but
# in TIME-WAIT (a graceful close keeps the socket until the peer's FIN
# and the ACK of its own have come, or a bound of 60 s; seconds here).
ended() {
	local left
	left=$(on "$1" ss -Htan "( sport = :$2 or dport = :$2 )" |
		awk '$1 != "TIME-WAIT"')
	[[ -z $left ]] || { echo "$left"; return 1; }
}

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"
host_netem a v-a rate 40mbit

for r in $(seq 1 "$ROUNDS"); do
	held=0 answer=()
	((r <= 3 || r == 6)) && held=1
	((r >= 6)) && answer=(--answer)
	step "round $r: $N Sends of $SIZE octets, then disconnect and destroy the QP at once$( ((held)) && echo ', the CM held off')$( ((${#answer[@]})) && echo ', b answering each')"
	next_port
	srv_start b 120 "$TLOG/drain$r.srv" "$progs/close_drain" serve "$IP_B" "$TPORT" "$N" "$SIZE" "${answer[@]}"
	wait_listen b "$TPORT" "$SRV_PID" ||
		{ show_log "$TLOG/drain$r.srv"; fail "close_drain does not listen"; }
	rc=0
	how=()
	((held)) && how=(--no-cm-between)
	run_client a 100 "$TLOG/drain$r.cli" "$progs/close_drain" close "$IP_B" "$TPORT" "$N" "$SIZE" "${how[@]}" || rc=$?
	src=0
	srv_wait "$SRV_PID" || src=$?
	SRV_PIDS=()
	show_log "$TLOG/drain$r.cli" 1
	show_log "$TLOG/drain$r.srv" 2
	echo "   resets sent so far: a: $(resets a); b: $(resets b)"
	[[ $(resets a) == *"AbortOnData 0, AbortOnClose 0,"* ]] ||
		fail "round $r: host a ended the connection with a reset, not gracefully: $(resets a)"
	((src == 0)) || fail "round $r: host b did not get everything: $(grep -m1 '^FAIL' "$TLOG/drain$r.srv" || echo "exit $src"); resets sent by a: $(resets a)"
	((rc == 0)) || fail "round $r: the client failed: $(grep -m1 '^FAIL' "$TLOG/drain$r.cli" || echo "exit $rc")"
	for h in a b; do
		until_ok 10 ended "$h" "$TPORT" ||
			fail "round $r: host $h still holds the connection 10 s after both ends closed: $UNTIL_OK_OUT"
	done
done
on a tc qdisc del dev v-a root
wait_settled "graceful close"
siw_pair_down
echo PASS
