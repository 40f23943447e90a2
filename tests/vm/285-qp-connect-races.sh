#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# cost: 268
# providers: stock ours (one in make check: ours)
#
# Races of QP connections made without rdma_cm (qp_connect.c) between
# hosts a and b (our siw on both; a has the lower address, so a's QP is
# the one that connects). The two ends are tests/vm/qpc-peer.py (pyverbs:
# QP number and GID over TCP, then modify_qp to RTR and RTS, then a
# checked ping-pong; knobs to modify at an agreed instant, to be late, to
# stop in a state and be killed, to name a wrong peer QP) and
# ibv_rc_pingpong.
#  - Both ends modify at the same instant (qpc-peer --sync), 4 rounds with
#    the server on either host (2 in make check, lib.sh: full_or); two ibv_rc_pingpongs started together.
#  - One end 5 s late, either end (qp_connect_timeout_ms 10000): works.
#    ibv_rc_pingpong's client started 5 s after its server: works.
#  - 300 pairs of QPs of one device, destroyed while they connect to each
#    other, at varying moments (tests/progs/qpc_destroy): every destroy
#    returns.
#  - The server destroys its QP as soon as its last send completed (what
#    ibv_rc_pingpong does; qpc-peer --no-done): the client, whose QP that
#    flushes, still receives the last message first (5 rounds, 3 in make
#    check).
# With qp_connect_timeout_ms 3000 (restored afterwards):
#  - One end 5 s late: both fail, each about 3 s after its own RTR.
#  - The peer SIGKILLed before RTR, between RTR and RTS, and right after
#    the first message (victim on either host); ibv_rc_pingpong's server
#    SIGKILLed while its client waits: the survivor fails with flushed
#    WRs within the timeout + MARGIN s of its RTR (no hang), and no QP is
#    left behind.
#  - A wrong peer QP number, on the connecting and on the accepting end:
#    both QPs fail (async event QP_FATAL, flushed WRs) within the bound;
#    the connecting end after one refusal, without trying again.
# Finally no QP is left, siw unloads without leaks, and the kernel log
# has no splat (the runner checks).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/qpc.sh"

PEER=$SIW_SRC/tests/vm/qpc-peer.py
[[ -r $PEER ]] || fail "$PEER missing"
/usr/bin/python3 -c 'import pyverbs' || fail "python3-pyverbs not installed"

# Seconds allowed beyond qp_connect_timeout_ms: TCG guests are slow and
# noisy (a loaded host has stretched a 1 s step to 5 s), and the survivor
# polls its CQ from python. A hang still shows: it never ends.
MARGIN=${SIW_TEST_QPC_MARGIN:-$((15 * SLOW))}
SHORT_MS=3000

# Both ibv_rc_pingpong QPs in RTS and connected (the engine attached:
# RTS alone comes before the connection, see Documentation/engine.md).
pp_both_rts() {
	(($(rdma -dd res show qp |
		grep -c 'state RTS .*comm ibv_rc_pingpong .*drv_tx_attached 1') == 2))
}

expect_no_qps() {
	qps_gone 10 || fail "QPs left behind after $1"
}

# peer_start HOST LOG ARGS...: qpc-peer.py on HOST's device, in the
# background (bounded by timeout(1), see srv_start); sets PEER_BG.
peer_start() {
	local h=$1 log=$2
	shift 2
	srv_start "$h" 90 "$log" /usr/bin/python3 "$PEER" --dev "$(host_dev "$h")" "$@"
	PEER_BG=$SRV_PID
}

# peer_wait PID: its exit status.
peer_wait() {
	local rc=0
	wait "$1" || rc=$?
	return "$rc"
}

# peer_pid LOG: the python process ID a qpc-peer log names (waits for it).
peer_pid() {
	wait_for 30 grep -q '] pid [0-9]*$' "$1"
	sed -n 's/.*\] pid \([0-9]*\)$/\1/p' "$1"
}

# peer_after_rtr LOG: "N" of the result line's "N ms after RTR".
peer_after_rtr() {
	sed -n 's/.*result: .* \([0-9][0-9]*\) ms after RTR$/\1/p' "$1"
}

show_peer() {
	echo "   $1:"
	grep -v '] pid ' "$2" | sed 's/^/   | /'
}

# pair NAME SRV_HOST "SRV_ARGS" "CLI_ARGS": one qpc-peer server and client
# (in the other host); sets PAIR_SRV_RC, PAIR_CLI_RC; logs $TLOG/NAME.*.
pair() {
	local name=$1 sh=$2 ch s c
	# shellcheck disable=SC2206 # the argument strings are word lists
	local sargs=($3) cargs=($4)
	ch=$(other_host "$sh")
	next_port
	peer_start "$sh" "$TLOG/$name.srv" --port "$TPORT" "${sargs[@]}"
	s=$PEER_BG
	peer_start "$ch" "$TLOG/$name.cli" --port "$TPORT" \
		--connect "$(host_ip "$sh")" "${cargs[@]}"
	c=$PEER_BG
	PAIR_CLI_RC=0 PAIR_SRV_RC=0
	peer_wait "$c" || PAIR_CLI_RC=$?
	peer_wait "$s" || PAIR_SRV_RC=$?
	SRV_PIDS=()
}

# pair_ok NAME SRV_HOST "SRV_ARGS" "CLI_ARGS": both ends must succeed.
pair_ok() {
	pair "$@"
	if ((PAIR_CLI_RC || PAIR_SRV_RC)); then
		show_peer "server in $2 (exit $PAIR_SRV_RC)" "$TLOG/$1.srv"
		show_peer "client (exit $PAIR_CLI_RC)" "$TLOG/$1.cli"
		return 1
	fi
	echo "   server: $(sed -n 's/.*result: //p' "$TLOG/$1.srv")"
	echo "   client: $(sed -n 's/.*result: //p' "$TLOG/$1.cli")"
}

# failed_in_time LOG LIMIT_MS [WHAT]: the qpc-peer of LOG exited with a
# failed completion (flushed WRs), at most LIMIT_MS after its RTR.
failed_in_time() {
	local log=$1 limit=$2 ms
	if ! grep -q 'result: error: completion of wr_id .*WR flush error' "$log"; then
		show_peer "${3:-$log}" "$log"
		echo "   expected flushed WRs"
		return 1
	fi
	ms=$(peer_after_rtr "$log")
	if [[ -z $ms ]] || ((ms > limit)); then
		show_peer "${3:-$log}" "$log"
		echo "   failed ${ms:-?} ms after RTR; allowed: $limit ms"
		return 1
	fi
	echo "   ${3:-$log}: flushed ${ms} ms after RTR$(grep -q 'async event 1,' "$log" &&
		echo ', async event QP_FATAL')"
}

siw_pair siw siw
siw_param qp_connect_timeout_ms 10000

step "QP pairs destroyed while they connect, 300 rounds (tests/progs/qpc_destroy)"
# What rdma-core's pyverbs tests do when they skip a test after making
# their QPs: a destroy_qp that never returns leaves the program in D state
# (a hung-task report fails the run).
on a timeout $((200 * SLOW)) "${SIW_BUILD:-$SIW_SRC/build}/progs/qpc_destroy" "$(host_dev a)" 1 300 ||
	fail "qpc_destroy"
expect_no_qps "the destroy rounds"

rounds=$(full_or 4 2)
step "both ends modify at the same instant (qpc-peer --sync), $rounds rounds"
for ((round = 1; round <= rounds; round++)); do
	sh=b
	((round % 2)) || sh=a
	echo "   round $round: server in $sh"
	pair_ok "sync-$round" "$sh" "--sync 1 --iters 50" "--iters 50" ||
		fail "same-instant round $round"
	# Both reported the agreed instant, within 0.3 s of each other.
	grep -q 'the agreed instant' "$TLOG/sync-$round.srv" "$TLOG/sync-$round.cli" ||
		fail "round $round did not sync"
done
expect_no_qps "the same-instant rounds"

step "two ibv_rc_pingpongs started together (the client retries until the server listens)"
for sh in b a; do
	ch=$(other_host "$sh")
	next_port
	srv_start "$sh" 60 "$TLOG/together-$sh.srv" \
		ibv_rc_pingpong -d "$(host_dev "$sh")" -g 1 -c -p "$TPORT" -n 200
	s=$SRV_PID
	rc=0
	# The client's own output goes to .cli; run_client's log is the loop's.
	run_client "$ch" 60 "$TLOG/together-$sh.loop" bash -c '
		log=$1 end=$((SECONDS + 30)) tries=1
		shift
		trap "echo \$tries tries" EXIT
		until ibv_rc_pingpong "$@" >"$log" 2>&1; do
			grep -q "Couldn.t connect to" "$log" || exit 1
			((SECONDS < end)) || exit 1
			tries=$((tries + 1))
			sleep 0.02
		done' _ "$TLOG/together-$sh.cli" \
		-d "$(host_dev "$ch")" -g 1 -c -p "$TPORT" -n 200 "$(host_ip "$sh")" ||
		rc=$?
	src=0
	peer_wait "$s" || src=$?
	SRV_PIDS=()
	echo "   server in $sh: $(grep ' iters in ' "$TLOG/together-$sh.srv")" \
		"(client: $(cat "$TLOG/together-$sh.loop"))"
	if ((rc == 1 && src == 0)) &&
		pp_teardown_race ibv_rc_pingpong "$TLOG/together-$sh.cli" "$TLOG/together-$sh.srv"; then
		pp_teardown_note ibv_rc_pingpong
	elif ((rc || src)); then
		show_log "$TLOG/together-$sh.srv"
		show_log "$TLOG/together-$sh.cli"
		fail "rc_pingpongs started together (server in $sh): client $rc, server $src"
	fi
done
expect_no_qps "the rc_pingpongs started together"

step "one end 5 s late (timeout 10 s): works either way"
pair_ok late-cli b "" "--delay 5" || fail "client 5 s late"
pair_ok late-srv b "--delay 5" "" || fail "server 5 s late"
# The early end waited about 5 s after its RTR for its first message.
for f in late-cli.srv late-srv.cli; do
	ms=$(peer_after_rtr "$TLOG/$f")
	((ms >= 4500)) || fail "$f: early end done ${ms} ms after RTR: was it early?"
done

step "ibv_rc_pingpong's client started 5 s after its server"
next_port
srv_start b 60 "$TLOG/pp-late.srv" ibv_rc_pingpong -d "$DEV_B" -g 1 -c -p "$TPORT" -n 200
s=$SRV_PID
wait_listen b "$TPORT" "$s" || fail "ibv_rc_pingpong server not listening"
sleep 5
rc=0
run_client a 60 "$TLOG/pp-late.cli" \
	ibv_rc_pingpong -d "$DEV_A" -g 1 -c -p "$TPORT" -n 200 "$IP_B" || rc=$?
peer_wait "$s" || { show_log "$TLOG/pp-late.srv"; fail "ibv_rc_pingpong server"; }
SRV_PIDS=()
if ((rc == 1)) && pp_teardown_race ibv_rc_pingpong "$TLOG/pp-late.cli" "$TLOG/pp-late.srv"; then
	pp_teardown_note ibv_rc_pingpong
elif ((rc)); then
	show_log "$TLOG/pp-late.cli"
	fail "late ibv_rc_pingpong client (exit $rc)"
fi
expect_no_qps "the late starts"

step "the peer destroys its QP as soon as its last send completed: the last message arrives"
for ((round = 1; round <= $(full_or 5 3); round++)); do
	pair_ok "no-done-$round" b "--no-done --iters 20" "--no-done --iters 20" ||
		fail "the last message did not arrive before the peer's teardown (round $round)"
done
expect_no_qps "the teardown rounds"

siw_param qp_connect_timeout_ms "$SHORT_MS"
limit=$((SHORT_MS + MARGIN * 1000))
echo "   qp_connect_timeout_ms=$SHORT_MS: a failing end must fail within $limit ms of its RTR"

step "one end 5 s late with a 3 s timeout: both fail, none hangs"
pair late-fail b "--delay 5" ""
((PAIR_SRV_RC == 1 && PAIR_CLI_RC == 1)) ||
	fail "late end beyond the timeout: server exit $PAIR_SRV_RC, client $PAIR_CLI_RC"
failed_in_time "$TLOG/late-fail.cli" "$limit" "early client" || fail "early client"
failed_in_time "$TLOG/late-fail.srv" "$limit" "late server" || fail "late server"
expect_no_qps "the failed late start"

# kill_case NAME VICTIM_HOST STATE: a qpc-peer server in VICTIM_HOST
# stops in STATE (--hold) and is SIGKILLed once it says so; its client
# in the other host must fail in time.
kill_case() {
	local name=$1 vh=$2 state=$3 ch v c vpid t0 rc=0 ms
	ch=$(other_host "$vh")
	next_port
	peer_start "$vh" "$TLOG/$name.srv" --port "$TPORT" --hold "$state"
	v=$PEER_BG
	peer_start "$ch" "$TLOG/$name.cli" --port "$TPORT" --connect "$(host_ip "$vh")"
	c=$PEER_BG
	vpid=$(peer_pid "$TLOG/$name.srv")
	wait_for 30 grep -q 'holding' "$TLOG/$name.srv"
	# Let the survivor get to RTS (and, holding in RTR, send the first
	# message) before the victim dies.
	wait_for 30 grep -q '] RTS$' "$TLOG/$name.cli"
	sleep 0.5
	t0=$(now_ms)
	kill -KILL "$vpid"
	peer_wait "$c" || rc=$?
	ms=$(($(now_ms) - t0))
	peer_wait "$v" || true
	SRV_PIDS=()
	echo "   victim (server in $vh) held $state, killed; survivor exit $rc, ${ms} ms after the kill"
	((rc == 1)) || { show_peer survivor "$TLOG/$name.cli"; return 1; }
	failed_in_time "$TLOG/$name.cli" "$limit" survivor || return 1
	expect_no_qps "$name"
}

step "the peer SIGKILLed before RTR, between RTR and RTS, after the first message"
for vh in b a; do
	for state in init rtr rts; do
		kill_case "kill-$state-$vh" "$vh" "$state" ||
			fail "peer killed in $state (victim in $vh)"
	done
done

step "ibv_rc_pingpong's server SIGKILLed while its client waits"
# The connection must come up first: the 3 s timeout was for the cases
# above, and a loaded debug kernel took longer (the server then failed
# with flushed WRs before it could be killed).
siw_param qp_connect_timeout_ms $((10000 * SLOW))
for sh in b a; do
	ch=$(other_host "$sh")
	next_port
	srv_start "$sh" 120 "$TLOG/pp-kill-$sh.srv" \
		ibv_rc_pingpong -d "$(host_dev "$sh")" -g 1 -p "$TPORT" -n 1000000
	s=$SRV_PID
	wait_listen "$sh" "$TPORT" "$s" || fail "ibv_rc_pingpong server not listening"
	on "$ch" timeout -k 5 $((60 * SLOW)) ibv_rc_pingpong -d "$(host_dev "$ch")" -g 1 -p "$TPORT" \
		-n 1000000 "$(host_ip "$sh")" >"$TLOG/pp-kill-$sh.cli" 2>&1 &
	c=$!
	# Its output is buffered: watch its QPs instead (both in RTS).
	wait_for 30 pp_both_rts
	sleep 2
	t0=$(now_ms)
	# timeout(1) is the child of srv_start's process; ibv_rc_pingpong its.
	pkill -KILL -P "$(pgrep -P "$s" -x timeout || echo 0)" -x ibv_rc_pingpong ||
		pkill -KILL -P "$s" -x ibv_rc_pingpong ||
		fail "no ibv_rc_pingpong server process to kill"
	rc=0
	wait "$c" || rc=$?
	ms=$(($(now_ms) - t0))
	wait "$s" 2>/dev/null || true
	SRV_PIDS=()
	echo "   server in $sh killed: client exit $rc after ${ms} ms: $(grep -v address "$TLOG/pp-kill-$sh.cli" | tr '\n' ' ')"
	((rc != 0 && rc != 124 && rc < 128)) || fail "ibv_rc_pingpong client did not fail cleanly (exit $rc)"
	((ms <= MARGIN * 1000)) || fail "ibv_rc_pingpong client took ${ms} ms to fail"
	expect_no_qps "the killed ibv_rc_pingpong"
done
siw_param qp_connect_timeout_ms "$SHORT_MS"

# refused_before_rts LOG: the connecting end's QP failed before its own
# move to RTS (a final refusal comes at once), so modify_qp refused RTS.
refused_before_rts() {
	grep -q 'result: error: modify_qp: .*Invalid argument' "$1" &&
		grep -q '] RTR$' "$1" && ! grep -q '] RTS$' "$1"
}

# wrong_qpn NAME SRV_ARGS CLI_ARGS: both ends fail in time, with QP_FATAL;
# the connecting end may also fail its own RTS, refused for good first.
wrong_qpn() {
	local name=$1 f
	pair "$name" b "$2" "$3"
	if ((PAIR_CLI_RC == 3)) && refused_before_rts "$TLOG/$name.cli"; then
		echo "   client: its QP failed before its RTS (modify_qp to RTS refused)"
		PAIR_CLI_RC=1 CLI_EARLY=1
	else
		CLI_EARLY=0
	fi
	((PAIR_SRV_RC == 1 && PAIR_CLI_RC == 1)) ||
		{ show_peer server "$TLOG/$name.srv"; show_peer client "$TLOG/$name.cli";
		  echo "   server exit $PAIR_SRV_RC, client $PAIR_CLI_RC"; return 1; }
	for f in cli srv; do
		[[ $f == cli && $CLI_EARLY == 1 ]] && continue
		failed_in_time "$TLOG/$name.$f" "$limit" "$f" || return 1
		grep -q 'async event 1,' "$TLOG/$name.$f" ||
			{ show_peer "$f" "$TLOG/$name.$f"; echo "   no QP_FATAL event"; return 1; }
	done
	expect_no_qps "$name"
}

step "a wrong peer QP number on the connecting end (a)"
wrong_qpn wrong-active "" "--qpn-offset 1000" || fail "wrong QP number on the connecting end"

step "a wrong peer QP number on the accepting end (b)"
n0=$(dmesg | grep -c 'refused the connection') || true
wrong_qpn wrong-passive "--qpn-offset 1000" "" || fail "wrong QP number on the accepting end"
# Documented (Documentation/engine.md): a peer that refuses for good
# fails the connecting QP at once: one attempt, one refusal in the log,
# not a new attempt every 100 ms up to the timeout.
ms=$(peer_after_rtr "$TLOG/wrong-passive.cli")
n=$(($(dmesg | grep -c 'refused the connection') - n0))
when="$ms ms after its RTR"
[[ -n $ms ]] || when="before its own RTS"
echo "   the connecting QP failed $when; refusals logged: $n"
((n == 1)) ||
	fail "refused for good (the QP expects another peer), yet the connecting QP logged $n refusals: it tried again"

step "teardown"
siw_param qp_connect_timeout_ms 10000
expect_no_qps "the test"
siw_pair_down
echo PASS
