#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 45
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
# last two leave it to timing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs close_drain
N=32 SIZE=65536 ROUNDS=5

# resets HOST: the host's TCP connections ended by a reset it sent, so
# far, by cause: AbortOnData (closed with SO_LINGER 0: siw's abort),
# AbortOnClose (closed with data unread), AbortOnMemory,
# AbortOnTimeout.
resets() {
	on "$1" nstat -saz TcpExtTCPAbortOnData TcpExtTCPAbortOnClose \
		TcpExtTCPAbortOnMemory TcpExtTCPAbortOnTimeout |
		awk '!/^#/ { printf "%s%s %s", n++ ? ", " : "", substr($1, 10), $2 }'
}

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"
host_netem a v-a rate 40mbit

for r in $(seq 1 "$ROUNDS"); do
	step "round $r: $N Sends of $SIZE octets, then disconnect and destroy the QP at once$( ((r <= 3)) && echo ', the CM held off')"
	next_port
	srv_start b 120 "$TLOG/drain$r.srv" "$progs/close_drain" serve "$IP_B" "$TPORT" "$N" "$SIZE"
	wait_listen b "$TPORT" "$SRV_PID" ||
		{ show_log "$TLOG/drain$r.srv"; fail "close_drain does not listen"; }
	rc=0
	how=()
	((r <= 3)) && how=(--no-cm-between)
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
done
on a tc qdisc del dev v-a root
wait_settled "graceful close"
siw_pair_down
echo PASS
