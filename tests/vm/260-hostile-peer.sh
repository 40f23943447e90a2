#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 500
# cost: 230
# providers: stock ours (one in make check: ours)
#
# A hostile iWARP peer against an rping server on our siw. The peer is
# tests/vm/tools/iwarp_peer.py (python, stdlib sockets) in host A; the
# server is one persistent rping (-P) in host B. Each case is one TCP
# connection:
#   FPDU cases (MPA exchange done, then one bad FPDU): unknown RDMAP
#     opcode, DDP version 0 (untagged and tagged), RDMA Write to a bogus
#     STag, Send with MSN 5 instead of 1, ULPDU_Length shorter than the
#     header (two ways), a wrong CRC with CRC negotiated (mpa_crc=2;
#     a correct CRC is accepted first), and a marker with a wrong FPDUPTR
#     where siw asked for markers (mpa_markers=Y). The peer must receive a Terminate
#     (QN 2, MSN 1) naming the RFC 5040/5041/5044 error class of the case,
#     echoing our header where it includes one, then see the connection
#     close; the kernel log must name the device, the QP, the peer's
#     ip:port and the reason in words.
#   Setup cases: garbage instead of an MPA request (closed, no reply), a
#     request for markers (accepted; the peer leaves), a peer that
#     says nothing and one that stops in the middle of its request
#     (mpa_timeout_ms=2000: closed after 2 s, within 5 s), the peer's own
#     Terminate (also one with layer and error type in each other's
#     nibble, as Linux's siw sends them: the log must name the class the
#     peer meant), and a reset in the middle of an FPDU (header; payload).
#   A peer that never closes after the server's Terminate and FIN and
#     keeps sending: the server drops what comes and resets the
#     connection 60 s after its FIN (not at once, as a socket let go of
#     would), with a line in the log.
# After every case no QP and no connection is left on B but the
# listener, and B's device counters (stats.c) moved as the case says:
# a refused FPDU counts one Terminate sent, by the layer at fault, and
# one CRC error, bad FPDU or placement error; the peer's own Terminate
# one received, by layer; a reset or a bad MPA request no error counter. After all of them the same rping server still serves a real
# client (rping -c -V; the server needs the client's -S: it reads that much
# into a buffer of its own -S). A one-shot rping server (no -P) hit by a
# bad FPDU must see the disconnection and exit by itself. The module
# unloads without leaks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its log lines and parameters)"

PEER=$(dirname "$(readlink -f "$0")")/tools/iwarp_peer.py
PY=/usr/bin/python3

# peer CASE PORT ARGS...: run the hostile peer in A against B:PORT (one
# case, at most PEER_SECS, 40 s); its log is $TLOG/peer-CASE.log. Sets
# PEER_LOCAL (the peer's ip:port as the server sees it).
peer() {
	local c=$1 port=$2 log=$TLOG/peer-$1.log rc=0
	shift 2
	run_client a "${PEER_SECS:-40}" "$log" "$PY" "$PEER" --server "$IP_B" --port "$port" \
		--case "$c" "$@" || rc=$?
	sed 's/^/   | /' "$log"
	PEER_LOCAL=$(sed -n 's/^local //p' "$log")
	((rc == 0)) || fail "hostile peer, case $c: exit $rc"
	[[ -n $PEER_LOCAL ]] || fail "case $c: the peer did not say its address"
}

# The error counters of b (stats.c) a case must move: counts_mark
# remembers them; counts_expect CASE NAME... fails unless each NAME grew
# by exactly one and every other one stayed.
ERR_COUNTERS="tx_terminate_rdmap tx_terminate_ddp tx_terminate_llp
	rx_terminate_rdmap rx_terminate_ddp rx_terminate_llp rx_crc_errors
	rx_bad_fpdus rx_placement_errors mpa_rejects_sent mpa_rejects_received"
declare -A C0 C1
counts_read() {
	local -n m=$1
	local k v
	m=()
	while read -r k v; do
		m[$k]=$v
	done < <(dev_stats b "$DEV_B")
}
counts_mark() { counts_read C0; }
counts_expect() {
	local what=$1 k d want bad='' moved=''
	shift
	counts_read C1
	for k in $ERR_COUNTERS; do
		want=0
		[[ " $* " == *" $k "* ]] && want=1
		d=$((${C1[$k]:-0} - ${C0[$k]:-0}))
		((d == 0)) || moved+=" $k +$d"
		((d == want)) || bad+=" $k +$d"
	done
	echo "   counters of $DEV_B:${moved:- none moved}"
	[[ -z $bad ]] || fail "$what: error counters:$bad (expected +1 of: ${*:-none})"
}
# fpdu_counters WORDS: what a refused FPDU counts, from its log line: the
# Terminate by the layer at fault, and why (CRC, parser, placement).
fpdu_counters() {
	case $1 in
	*"(RDMAP "*) echo -n tx_terminate_rdmap ;;
	*"(DDP "*) echo -n tx_terminate_ddp ;;
	*"(MPA "*) echo -n tx_terminate_llp ;;
	esac
	case $1 in
	*"CRC mismatch"*) echo " rx_crc_errors" ;;
	"bad FPDU:"*) echo " rx_bad_fpdus" ;;
	*) echo " rx_placement_errors" ;;
	esac
}

siw_pair siw siw
siw_param mpa_timeout_ms 10000
siw_param mpa_crc 1

next_port
SRV_PORT=$TPORT
step "persistent rping server in b, port $SRV_PORT"
srv_start b 380 "$TLOG/rping-persistent.srv" rping -s -P -V -a "$IP_B" -p "$SRV_PORT" -S 1000
RPING_PID=$SRV_PID
wait_listen b "$SRV_PORT" "$RPING_PID" || fail "rping -s -P does not listen"

# Case, revision, words of the QP's log line (after "peer IP:PORT: ").
fpdu_cases=(
	"opcode 2 bad FPDU: unknown or unsupported RDMAP opcode; terminating \(RDMAP 0/2/0x06\)"
	"ddp-version 1 bad FPDU: DDP version is not 1; terminating \(DDP 1/2/0x06\)"
	"ddp-version-tagged 2 bad FPDU: DDP version is not 1; terminating \(DDP 1/1/0x04\)"
	"bogus-stag 2 RDMA Write to STag 0x00badc0d refused: no such STag, or it was invalidated; terminating \(DDP 1/1/0x00\)"
	"msn 2 Send out of sequence; terminating \(DDP 1/2/0x03\)"
	"short 1 bad FPDU: MPA ULPDU length shorter than the DDP/RDMAP header; terminating \(MPA 2/0/0x03\)"
	"short-untagged 2 bad FPDU: MPA ULPDU length shorter than the DDP/RDMAP header; terminating \(MPA 2/0/0x03\)"
)
for c in "${fpdu_cases[@]}"; do
	read -r name rev words <<<"$c"
	step "hostile peer: $name (MPA revision $rev)"
	counts_mark
	peer "$name" "$SRV_PORT" --rev "$rev" --expect-crc 0
	klog_expect "$name" "siw_b: QP [0-9]+: peer $(re "$PEER_LOCAL"): $words"
	wait_settled "$name" siw_b
	# shellcheck disable=SC2046  # two counter names
	counts_expect "$name" $(fpdu_counters "$words")
done

step "hostile peer: crc (our mpa_crc=2)"
siw_param mpa_crc 2
counts_mark
peer crc "$SRV_PORT" --rev 2 --expect-crc 1
siw_param mpa_crc 1
klog_expect crc "siw_b: QP [0-9]+: peer $(re "$PEER_LOCAL"): bad FPDU: MPA CRC mismatch; terminating \(MPA 2/0/0x02\)"
wait_settled crc siw_b
counts_expect crc tx_terminate_llp rx_crc_errors

step "hostile peer: bad-marker (our mpa_markers=Y)"
siw_param mpa_markers Y
counts_mark
peer bad-marker "$SRV_PORT" --rev 2 --expect-crc 0
siw_param mpa_markers N
klog_expect bad-marker "siw_b: QP [0-9]+: peer $(re "$PEER_LOCAL"): bad FPDU: MPA marker does not point to its FPDU; terminating \(MPA 2/0/0x03\)"
wait_settled bad-marker siw_b
counts_expect bad-marker tx_terminate_llp rx_bad_fpdus

# The listener's end of a connection in the log: "B:PORT -> A:PORT".
conn_re() { echo "siw_b: connection $(re "$IP_B:$SRV_PORT") -> $(re "$PEER_LOCAL")"; }

step "hostile peer: garbage instead of an MPA request"
counts_mark
peer garbage "$SRV_PORT"
klog_expect garbage "$(conn_re): bad MPA request: MPA key is not the expected request or reply key"
counts_expect garbage

step "hostile peer: asks for markers (taken), then leaves"
peer markers "$SRV_PORT" --rev 1
wait_settled markers siw_b

step "hostile peer: says nothing (mpa_timeout_ms=2000)"
siw_param mpa_timeout_ms 2000
peer silent "$SRV_PORT" --close-min 1.5 --close-max 5
klog_expect silent "$(conn_re): no MPA request within 2000 ms, closed"
step "hostile peer: stops in the middle of its request (mpa_timeout_ms=2000)"
peer stall-request "$SRV_PORT" --close-min 1.5 --close-max 5
klog_expect stall-request "$(conn_re): no MPA request within 2000 ms, closed"
siw_param mpa_timeout_ms 10000

step "hostile peer: sends a Terminate of its own"
counts_mark
peer peer-terminate "$SRV_PORT"
klog_expect peer-terminate "siw_b: QP [0-9]+: peer $(re "$PEER_LOCAL"): peer sent Terminate: unspecified operation error \(RDMAP 0/2/0xff\)"
wait_settled peer-terminate siw_b
counts_expect peer-terminate rx_terminate_rdmap

step "hostile peer: sends a Terminate with layer and type swapped (as Linux's siw does)"
counts_mark
peer peer-terminate-swapped "$SRV_PORT"
klog_expect peer-terminate-swapped "siw_b: QP [0-9]+: peer $(re "$PEER_LOCAL"): peer sent Terminate: CRC error \(MPA 2/0/0x02; sent with layer and type swapped\)"
wait_settled peer-terminate-swapped siw_b
counts_expect peer-terminate-swapped rx_terminate_llp

step "hostile peer: never closes after the server's Terminate and FIN, and keeps sending"
counts_mark
PEER_SECS=120 peer no-fin "$SRV_PORT" --wait 100 --close-min 55 --close-max 80
klog_expect no-fin "$(conn_re): no FIN from the peer within 60000 ms of ours after a graceful close; reset"
wait_settled no-fin siw_b
counts_expect no-fin tx_terminate_rdmap rx_bad_fpdus

step "hostile peer: resets the connection in the middle of an FPDU header"
counts_mark
peer abort-header "$SRV_PORT"
wait_settled abort-header siw_b
counts_expect abort-header
step "hostile peer: resets the connection in the middle of a Send's payload"
counts_mark
peer abort-payload "$SRV_PORT"
wait_settled abort-payload siw_b
counts_expect abort-payload

step "the persistent rping server survived and serves a real client"
kill -0 "$RPING_PID" 2>/dev/null || { show_log "$TLOG/rping-persistent.srv"; fail "rping -s -P exited"; }
run_client a 120 "$TLOG/rping-after.cli" rping -c -V -a "$IP_B" -p "$SRV_PORT" -C 20 -S 1000 ||
	{ show_log "$TLOG/rping-after.cli"; fail "rping client after the hostile cases"; }
if grep -Eiq 'error|fail|wait for' "$TLOG/rping-after.cli"; then
	show_log "$TLOG/rping-after.cli"
	fail "rping client after the hostile cases reported an error"
fi
echo "   20 pings of 1000 B verified"
srv_stop_all
wait_settled "persistent rping server stopped" siw_b
wait_settled "persistent rping server stopped" siw_a

step "a one-shot rping server (no -P) gives up by itself after a bad FPDU"
next_port
srv_start b 60 "$TLOG/rping-oneshot.srv" rping -s -a "$IP_B" -p "$TPORT" -C 1
wait_listen b "$TPORT" "$SRV_PID" || fail "rping -s does not listen"
peer msn "$TPORT" --rev 2
t0=$SECONDS
while kill -0 "$SRV_PID" 2>/dev/null && ((SECONDS - t0 < 30)); do sleep 0.2; done
kill -0 "$SRV_PID" 2>/dev/null && { show_log "$TLOG/rping-oneshot.srv"; fail "rping -s still running 30 s after its connection was terminated"; }
rc=0
srv_wait "$SRV_PID" || rc=$?
SRV_PIDS=()
show_log "$TLOG/rping-oneshot.srv" 5
# rping's exit status says nothing (0 after a failed connection, seen with
# rdma-core 44): what counts is that it noticed by itself.
((rc != 124 && rc != 137)) || fail "rping -s had to be stopped (exit $rc)"
grep -q 'wait for RDMA_READ_ADV state 10' "$TLOG/rping-oneshot.srv" ||
	fail "rping -s did not report the disconnection (state 10)"
echo "   rping -s saw the disconnection and exited ($rc) within $((SECONDS - t0)) s"
wait_settled "one-shot rping server" siw_b

step "teardown"
siw_pair_down
echo PASS
