#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 160
#
# A hostile iWARP peer against the memory a verbs process exposes. The
# peer is tests/vm/tools/iwarp_mem_peer.py (python, stdlib sockets) in
# host A; the victim is tests/progs/mem_victim in host B: it accepts one
# rdma_cm connection per case with its QP in PD2 and two buffers
# registered for remote read and write, one in PD2 (pattern A) and one in
# PD1, and names both in the private data of its accept. Each case is one
# TCP connection:
#   read-ok          a Read Request of the PD2 buffer is answered with
#                    pattern A (the refusals below are not vacuous);
#   read-other-pd    a Read Request naming the PD1 buffer (not the QP's
#                    PD) gets a Terminate RDMAP 0/1/0x03 within 3 s;
#   read-no-access   the victim set its QP's access flags to 0 once
#   write-no-access  connected: a Read Request and an RDMA Write get a
#                    Terminate RDMAP 0/1/0x02, no data is read or placed;
#   read-ird0        the victim accepted with responder_resources 0, the
#                    MPA reply says IRD 0: a Read Request gets a Terminate
#                    DDP 1/2/0x02 and no data;
#   rtr-read-ird0    the same, the peer asking for peer-to-peer mode with
#                    only a zero length Read RTR (as an RNIC may): the RTR
#                    is answered (a zero length Read Response: connection
#                    setup, whatever the IRD), a Read Request after it gets
#                    Terminate DDP 1/2/0x02;
#   write-dereg      an RDMA Write of 16 KiB stops after 8 KiB; the victim
#                    deregisters the MR (ibv_dereg_mr returns) and
#                    rewrites its buffer (pattern B); the rest of the Write
#                    gets a Terminate DDP 1/1/0x00 and pattern B stays.
#   term-stuck       a peer that reads nothing fills siw's socket with
#                    Read Responses (IRD 8, the whole buffer 8 times),
#                    then sends an RDMA Write into the PD1 buffer: its
#                    Terminate waits behind the Read Response under way
#                    for as long as the peer likes. The victim, on the
#                    async event, moves its QP to ERROR (as ib_drain_qp()
#                    does) and posts a Send: that Send and the receive it
#                    posted before must flush within 10 s, and the
#                    connection must be gone (reset) at once, the peer
#                    still reading nothing.
#   rtr-read-responder  the other way round: mem_victim reader in B
#                    connects (mpa_p2p=1) to the peer in A, which takes
#                    peer-to-peer mode with the Read RTR and answers the
#                    RTR only once the consumer's RDMA Read Request came
#                    too: the RTR's zero length answer must not complete
#                    the consumer's Read, which must bring 4 KiB of
#                    pattern A, and no Terminate may come.
# For every refusal the connection closes, the victim sees an async error
# event and its QP in ERROR, its buffers are as they must be, the kernel
# log names the device, the QP, the peer's ip:port and the error class,
# and no QP or connection is left.
#   qpc-short,       at siw's port for QPs connected without rdma_cm
#   qpc-magic        (qp_port; mem_victim qpc-arm makes siw listen), an
#                    MPA request with 3 octets of private data, and one
#                    with 16 but a wrong magic, are rejected with private
#                    data "SIWQ", version 1, status 5 (malformed), the rest
#                    zero: nothing from the kernel's stack, nothing echoed.
# Every case runs; the test fails at the end naming each case that failed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its log lines and parameters)"

PEER=$(dirname "$(readlink -f "$0")")/tools/iwarp_mem_peer.py
PY=/usr/bin/python3
VICTIM=$progs/mem_victim
need_progs mem_victim
# Files by which peer and victim wait for each other (not on 9p).
SYNC=/tmp/262-sync

FAILED=()
# bad CASE WHY: record a failed check and go on with the next.
bad() {
	echo "   FAILED: $1: $2"
	[[ " ${FAILED[*]} " == *" $1 "* ]] || FAILED+=("$1")
}

# run_case CASE "VICTIM OPTIONS" [PEER OPTIONS...]: a victim in B for one
# connection, the peer in A against it. Sets PEER_RC, VICTIM_RC,
# PEER_LOCAL, VICTIM_QPN; logs in $TLOG/{peer,victim}-CASE.log.
run_case() {
	local c=$1 vopts=$2 dir=$SYNC/$1
	local plog=$TLOG/peer-$1.log vlog=$TLOG/victim-$1.log
	shift 2
	step "$c (at ${SECONDS}s)"
	next_port
	rm -rf "$dir"
	mkdir -p "$dir"
	# shellcheck disable=SC2086 # vopts are words
	srv_start b 90 "$vlog" "$VICTIM" listen "$IP_B" "$TPORT" \
		--ready "$dir/ready" --wait $((60 * SLOW)) $vopts
	wait_listen b "$TPORT" "$SRV_PID" || {
		show_log "$vlog"
		fail "$c: mem_victim does not listen on port $TPORT"
	}
	PEER_RC=0
	run_client a 60 "$plog" "$PY" "$PEER" --server "$IP_B" --port "$TPORT" \
		--case "$c" --go "$dir/ready" --wait $((30 * SLOW)) \
		--answer-within $((3 * SLOW)) "$@" || PEER_RC=$?
	grep -q '^local ' "$plog" || {
		echo "== sockets in b when the peer failed to connect"
		on b ss -tan
	} >"$dir/ss" 2>&1
	VICTIM_RC=0
	srv_wait "$SRV_PID" || VICTIM_RC=$?
	SRV_PIDS=()
	echo "   peer (exit $PEER_RC):"
	sed 's/^/   | /' "$plog"
	echo "   victim (exit $VICTIM_RC):"
	sed 's/^/   | /' "$vlog"
	PEER_LOCAL=$(sed -n 's/^local //p' "$plog")
	VICTIM_QPN=$(sed -n 's/^qp \([0-9]*\) (pd2).*/\1/p' "$vlog")
	if [[ -z $PEER_LOCAL || -z $VICTIM_QPN ]]; then
		[[ ! -s $dir/ss ]] || sed 's/^/   | /' "$dir/ss"
		siw_klog_tail
		fail "$c: no connection came about (peer address '$PEER_LOCAL', victim QP '$VICTIM_QPN')"
	fi
	((PEER_RC == 0)) || bad "$c" "the peer: $(grep -m1 '^FAIL' "$plog" || echo "exit $PEER_RC")"
	case $VICTIM_RC in
	0) ;;
	124 | 137) bad "$c" "mem_victim hung and had to be killed (exit $VICTIM_RC)" ;;
	*) bad "$c" "mem_victim exit $VICTIM_RC: $(grep -m1 'FAIL' "$vlog" || true)" ;;
	esac
	grep -q '^qp state ERR$' "$vlog" ||
		bad "$c" "the victim's QP is not in ERROR after the connection ended: $(grep '^qp state' "$vlog" || echo 'no state')"
}

# victim_says CASE ERE WHAT: a line of the victim's log matches ERE.
victim_says() {
	grep -Eq "$2" "$TLOG/victim-$1.log" || bad "$1" "$3"
}

# refused CASE L/E/0xCC: the victim saw an async error event and the
# kernel logged the refusal with its class for this QP and peer.
refused() {
	local c=$1 class=$2 pat line
	victim_says "$c" '^async event QP_(ACCESS_ERR|FATAL|REQ_ERR) ' \
		"the victim got no async error event"
	pat="siw_b: QP $VICTIM_QPN: peer $(re "$PEER_LOCAL"): .*$class"
	line=$(klog | grep -E "$pat" | tail -n1) || true
	if [[ -n $line ]]; then
		echo "   log: ${line#*] }"
	else
		{ klog | grep -E "siw_b: QP $VICTIM_QPN:" || true; } |
			tail -n 3 | sed 's/^/   kernel: /'
		bad "$c" "no kernel log line matching '$pat'"
	fi
	wait_settled "$c" siw_b
}

intact() {
	victim_says "$1" "^buffer $2: intact" "the victim's $2 buffer changed: $(grep "^buffer $2" "$TLOG/victim-$1.log" || echo 'no report')"
}

siw_pair siw siw
siw_param mpa_timeout_ms $((10000 * SLOW))
siw_param mpa_crc 1

run_case read-ok ""
intact read-ok pd2
intact read-ok pd1
if klog | grep -E "siw_b: QP $VICTIM_QPN: .*terminating"; then
	bad read-ok "the kernel terminated the connection of a valid Read"
fi
wait_settled read-ok siw_b

run_case read-other-pd ""
intact read-other-pd pd1
refused read-other-pd "0/1/0x03"

run_case read-no-access "--qp-access 0"
victim_says read-no-access '^qp access flags now 0x0$' "the QP's access flags did not become 0"
refused read-no-access "0/1/0x02"

run_case write-no-access "--qp-access 0"
intact write-no-access pd2
refused write-no-access "0/1/0x02"

run_case read-ird0 "--ird 0"
refused read-ird0 "1/2/0x02"

run_case rtr-read-ird0 "--ird 0"
refused rtr-read-ird0 "1/2/0x02"

run_case write-dereg "--dereg-after 8192 --dereg-done $SYNC/write-dereg/dereg-done" \
	--dereg-done "$SYNC/write-dereg/dereg-done"
victim_says write-dereg '^pd2 MR deregistered' "the victim did not deregister its MR"
intact write-dereg pd2
refused write-dereg "1/1/0x00"

run_case term-stuck "--ird 8 --flush-within $((10000 * SLOW)) --flush-done $SYNC/term-stuck/flushed" \
	--flush-done "$SYNC/term-stuck/flushed" --answer-within $((5 * SLOW))
victim_says term-stuck '^flush: ' "the WRs of the QP moved to ERROR did not flush"
refused term-stuck "RDMA Write to STag 0x[0-9a-f]+ refused"

step "rtr-read-responder (at ${SECONDS}s)"
p2p=$(</sys/module/siw/parameters/mpa_p2p)
siw_param mpa_p2p Y
next_port
srv_start a 60 "$TLOG/peer-rtr-read-responder.log" "$PY" "$PEER" --server "$IP_A" \
	--port "$TPORT" --case rtr-read-responder --wait $((30 * SLOW))
wait_listen a "$TPORT" "$SRV_PID" || fail "rtr-read-responder: the peer does not listen"
rc=0
run_client b 40 "$TLOG/reader.log" "$VICTIM" reader "$IP_A" "$TPORT" --wait $((20 * SLOW)) || rc=$?
prc=0
srv_wait "$SRV_PID" || prc=$?
SRV_PIDS=()
echo "   peer (exit $prc):"
sed 's/^/   | /' "$TLOG/peer-rtr-read-responder.log"
echo "   reader (exit $rc):"
sed 's/^/   | /' "$TLOG/reader.log"
((rc == 0)) || bad rtr-read-responder "mem_victim reader: $(grep -m1 'FAIL' "$TLOG/reader.log" || echo "exit $rc")"
((prc == 0)) || bad rtr-read-responder "the peer: $(grep -m1 '^FAIL' "$TLOG/peer-rtr-read-responder.log" || echo "exit $prc")"
siw_param mpa_p2p "$p2p"
wait_settled rtr-read-responder siw_b

step "QP-connect port: malformed requests (at ${SECONDS}s)"
siw_param qp_connect_timeout_ms $((60000 * SLOW))
QP_PORT=$(</sys/module/siw/parameters/qp_port)
dir=$SYNC/qpc
mkdir -p "$dir"
rm -f "$dir"/*
srv_start b 60 "$TLOG/victim-qpc.log" "$VICTIM" qpc-arm "$DEV_B" "$IP_A" \
	--ready "$dir/ready" --quit "$dir/quit" --wait $((50 * SLOW))
QPC_PID=$SRV_PID
wait_for 20 test -e "$dir/ready"
for c in qpc-short qpc-magic; do
	step "$c (port $QP_PORT)"
	rc=0
	run_client a 30 "$TLOG/peer-$c.log" "$PY" "$PEER" --server "$IP_B" \
		--port "$QP_PORT" --case "$c" || rc=$?
	sed 's/^/   | /' "$TLOG/peer-$c.log"
	((rc == 0)) || bad "$c" "the peer: $(grep -m1 '^FAIL' "$TLOG/peer-$c.log" || echo "exit $rc")"
done
touch "$dir/quit"
rc=0
srv_wait "$QPC_PID" || rc=$?
SRV_PIDS=()
sed 's/^/   | /' "$TLOG/victim-qpc.log"
((rc == 0)) || fail "mem_victim qpc-arm: exit $rc"
wait_settled "qpc" siw_b

step "teardown (at ${SECONDS}s)"
siw_pair_down
if ((${#FAILED[@]})); then
	fail "${#FAILED[@]} case(s) failed: ${FAILED[*]}"
fi
echo PASS
