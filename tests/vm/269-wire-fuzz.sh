#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# timeout-plus: SIW_TEST_FUZZ_SECS
# cost: 81
#
# Live-wire fuzzing: random and mutated input on real connections, while
# the server keeps working. In host B, tests/progs/fuzz_target (an rdma_cm
# server whose connections keep posting receives, Sends and RDMA Reads;
# its MR is named in its accept's private data) and a QP in RTR that makes
# siw listen on its QP-connect port (mem_victim qpc-arm). In host A,
# tests/vm/tools/wire_fuzz.py: first it replays every saved case of
# tests/vm/fuzz-corpus (inputs that once made a kernel complain), then it
# generates cases for SIW_TEST_FUZZ_SECS seconds (default 45; make
# check-debug: 300): garbled MPA requests, and valid MPA exchanges (CRC,
# peer-to-peer and RTR type drawn) followed by streams of mutated FPDUs
# (Sends, Writes into and around the server's MR, Read Requests, answers
# to the server's Reads, Terminates, junk) split at random TCP boundaries
# and ended by FIN, reset or silence. SIW_TEST_FUZZ_SEED repeats a run.
# The fuzzer watches the kernel log and stops at the first report,
# saving the last 20 cases into the job directory (wire-fuzz/found/);
# copy them to tests/vm/fuzz-corpus/ once the fault is fixed.
# Then: fuzz_target exits 0 by itself, a real rping still passes between
# the two hosts, no QP or connection is left, siw unloads without leaks,
# and the kernel log is clean (the runner checks it too).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only"
need_progs fuzz_target mem_victim

FUZZ=$(dirname "$(readlink -f "$0")")/tools/wire_fuzz.py
CORPUS=$(dirname "$(readlink -f "$0")")/fuzz-corpus
PY=/usr/bin/python3
SECS=${SIW_TEST_FUZZ_SECS:-45}
[[ $SECS =~ ^[0-9]+$ ]] || fail "SIW_TEST_FUZZ_SECS must be seconds, not '$SECS'"
OUT=${VM_JOB:-/var/tmp}/wire-fuzz
PORT=20269
SYNC=/tmp/269-sync
mkdir -p "$OUT" "$SYNC"
rm -f "$SYNC"/*

siw_pair siw siw
siw_param mpa_timeout_ms 2000
siw_param mpa_accept_timeout_ms 3000
siw_param qp_connect_timeout_ms 60000
QP_PORT=$(</sys/module/siw/parameters/qp_port)

step "the server in b: fuzz_target on $IP_B:$PORT, a QP waiting on the QP-connect port $QP_PORT"
srv_start b $((SECS + 400)) "$TLOG/target.log" "$progs/fuzz_target" "$IP_B" "$PORT" \
	$((SECS + 300)) "$SYNC/quit"
TARGET_PID=$SRV_PID
wait_listen b "$PORT" "$TARGET_PID" || { show_log "$TLOG/target.log"; fail "fuzz_target does not listen"; }
srv_start b $((SECS + 400)) "$TLOG/qpc.log" "$progs/mem_victim" qpc-arm "$DEV_B" "$IP_A" \
	--ready "$SYNC/ready" --quit "$SYNC/quit" --wait $((SECS + 300))
QPC_PID=$SRV_PID
wait_for 30 test -e "$SYNC/ready"

shopt -s nullglob
cases=("$CORPUS"/*.json)
if ((${#cases[@]})); then
	step "replaying the ${#cases[@]} saved cases of tests/vm/fuzz-corpus"
	rc=0
	on a timeout -k 5 300 "$PY" "$FUZZ" --server "$IP_B" --port "$PORT" \
		--qpc-port "$QP_PORT" --replay "${cases[@]}" >"$TLOG/replay.log" 2>&1 || rc=$?
	grep -v '^replayed .*: quiet$' "$TLOG/replay.log" | sed 's/^/   | /'
	echo "   ${#cases[@]} cases replayed"
	((rc == 0)) || fail "a saved case made the kernel complain again (exit $rc)"
fi

step "fuzzing for $SECS s"
rc=0
on a timeout -k 5 $((SECS + 120)) "$PY" "$FUZZ" --server "$IP_B" --port "$PORT" \
	--qpc-port "$QP_PORT" --secs "$SECS" --out "$OUT" \
	${SIW_TEST_FUZZ_SEED:+--seed "$SIW_TEST_FUZZ_SEED"} >"$TLOG/fuzz.log" 2>&1 || rc=$?
sed 's/^/   | /' "$TLOG/fuzz.log"
if ((rc != 0)); then
	[[ ! -d $OUT/found ]] || echo "   the last cases are in the job directory: wire-fuzz/found/"
	fail "the fuzzer stopped: $(grep -m1 '^FAIL' "$TLOG/fuzz.log" || echo "exit $rc")"
fi
grep -Eq '^ +stream/sent +[0-9]+' "$TLOG/fuzz.log" ||
	fail "no fuzzing stream got past the MPA exchange: the fuzzer tested nothing behind it"

step "the server ends by itself, and still served"
touch "$SYNC/quit"
rc=0
srv_wait "$TARGET_PID" || rc=$?
show_log "$TLOG/target.log"
((rc == 0)) || fail "fuzz_target exit $rc"
rc=0
srv_wait "$QPC_PID" || rc=$?
((rc == 0)) || { show_log "$TLOG/qpc.log"; fail "mem_victim qpc-arm exit $rc"; }
SRV_PIDS=()
wait_settled fuzz

step "a real rping between a and b afterwards"
rping_run b 4096 20 || fail "rping after the fuzzing failed"
wait_settled rping

step "teardown"
siw_pair_down
echo PASS
