#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 540
# cost: 200
#
# Our siw against the connection profiles of hardware iWARP RNICs, played
# by tests/vm/tools/rnic_peer.py: an iWARP peer in plain Python over TCP,
# its MPA, DDP, RDMAP, CRC32C and RTR written from the RFCs (not from our
# proto/), so it can disagree with us. It runs in host A; our siw is in
# host B. The application on both ends is rping's protocol, 2 pings of
# 33000 octets, every octet checked on both sides:
#   siw responder: rping -s -V on siw, the peer connects as rping client
#     (it Sends its buffers' addresses; siw RDMA Reads from the peer and
#     RDMA Writes to it, and Sends)
#   siw initiator: rping -c -V on siw connects to the peer, which serves
#     as rping server (it RDMA Reads from siw and RDMA Writes to siw)
# so Send, RDMA Write and RDMA Read go both ways in each profile. Each
# profile enforces what the hardware driver does (the peer's docstring):
#   cxgb4        rev 2, CRC required, Read RTR, IRD/ORD 32, FPDUs <= 16 KiB
#   cxgb4-write  the same with the Write RTR
#   irdma        rev 2, C always set, refuses rev 2 without the P2P bit,
#                offers Write and Read RTR, picks Read; FPDUs <= one segment
#   t4           rev 1, CRC required, FPDUs <= 16 KiB
#   plain        rev 2, CRC if asked, no peer-to-peer mode
# siw runs with default parameters, except mpa_p2p=Y where siw initiates
# to a profile with an RTR (irdma refuses a request without peer-to-peer
# mode; for cxgb4 it also tests siw's Read and Write RTR as initiator;
# cxgb4 without it is run too). Then fpdu_max=16384 (a T6 told to take
# 16 KiB FPDUs) must pass cxgb4's cap, and fpdu_max=16388 must be caught
# by it: the peer's cap check can fail. MPA markers (RFC 5044 section 5)
# both ways: the peer asks for them (plain with --markers) and siw with
# default parameters sends them;
# siw asks for them (mpa_markers=Y) and the plain profile sends them; and
# both at once; and siw to siw, both asking, with large FPDUs (rping -V
# checks the data; tshark the markers). The peer checks every marker's place and FPDUPTR and its
# CRC (the marker before an FPDU counts in, as in Wireshark), and says
# "markers on" for each direction that carried them. CRC is on in every
# marker run.
# dumpcap records every profile run on v-a, and tshark's iWARP
# dissectors, a third implementation, must decode it without an error
# or a bad CRC (tests/vm/wire.sh, as in 250).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/wire.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its parameters)"

PY=/usr/bin/python3
PEER=$(dirname "$(readlink -f "$0")")/tools/rnic_peer.py
# Above 2 x 16 KiB, so that fpdu_max=16384 fills FPDUs to cxgb4's cap and
# 16388 overshoots it; the peer's pure-Python CRC makes every octet cost.
SIZE=33000 COUNT=2

# siw_responder PROFILE [PEER-OPTION...]: rping -s on siw in B, the peer
# in A connects as rping client. Returns the peer's exit status (the
# server's, if the peer passed).
siw_responder() {
	local prof=$1 name=siw-resp-$1 rc=0 src=0
	shift
	next_port
	srv_start b 60 "$TLOG/$name.srv" rping -s -V -a "$IP_B" -p "$TPORT" \
		-S "$SIZE" -C "$COUNT"
	wait_listen b "$TPORT" "$SRV_PID" ||
		{ show_log "$TLOG/$name.srv"; fail "$name: rping -s does not listen"; }
	run_client a 60 "$TLOG/$name.peer" "$PY" "$PEER" --profile "$prof" \
		--wait $((30 * SLOW)) --role initiator --server "$IP_B" --port "$TPORT" \
		--app rping-client --size "$SIZE" --count "$COUNT" --them siw \
		"$@" || rc=$?
	srv_wait "$SRV_PID" || src=$?
	SRV_PIDS=()
	show_log "$TLOG/$name.peer" 12
	((rc == 0 && src != 0)) && { show_log "$TLOG/$name.srv"; rc=$src; }
	return "$rc"
}

# siw_initiator PROFILE [PEER-OPTION...]: the peer in A serves as rping
# server; rping -c on siw in B connects to it.
siw_initiator() {
	local prof=$1 name=siw-init-$1 rc=0 crc=0
	shift
	next_port
	srv_start a 60 "$TLOG/$name.peer" "$PY" "$PEER" --profile "$prof" \
		--wait $((30 * SLOW)) --role responder --listen "$IP_A" --port "$TPORT" \
		--app rping-server --size "$SIZE" --count "$COUNT" --them siw "$@"
	wait_listen a "$TPORT" "$SRV_PID" ||
		{ show_log "$TLOG/$name.peer"; fail "$name: the peer does not listen"; }
	run_client b 60 "$TLOG/$name.cli" rping -c -V -a "$IP_A" -p "$TPORT" \
		-S "$SIZE" -C "$COUNT" || crc=$?
	srv_wait "$SRV_PID" || rc=$?
	SRV_PIDS=()
	show_log "$TLOG/$name.peer" 12
	((rc == 0 && crc != 0)) && { show_log "$TLOG/$name.cli"; rc=$crc; }
	return "$rc"
}

# The peer's verdict line.
verdict() { grep -E '^(PASS|FAIL)' "$1" | tail -n1; }
# why NAME: for the summary (CI shows only an excerpt of the log), what
# the run NAME (siw-resp-PROFILE, siw-init-PROFILE) failed on: the peer's
# FAIL line, else rping's last line.
why() {
	local v f
	v=$(verdict "$TLOG/$1.peer")
	[[ $v == FAIL* ]] && { echo "$v"; return; }
	for f in "$TLOG/$1.srv" "$TLOG/$1.cli"; do
		[[ -s $f ]] && v="peer: ${v:-no verdict}; rping: $(tail -n 1 "$f")"
	done
	echo "$v"
}

siw_pair siw siw
failed=()

PCAP=$TLOG/profiles.pcapng
on a dumpcap -i v-a -f tcp -w "$PCAP" >"$TLOG/dumpcap.log" 2>&1 &
CAP_PID=$!
wait_for 20 grep -q 'Capturing on' "$TLOG/dumpcap.log"

for prof in cxgb4 cxgb4-write irdma t4 plain; do
	step "$prof: siw responds (rping -s on siw, the peer initiates)"
	siw_responder "$prof" || failed+=("$prof, siw responder ($(why "siw-resp-$prof"))")
done

for v in "cxgb4 N" "cxgb4 Y" "cxgb4-write Y" "irdma Y" "t4 N" "plain N"; do
	read -r prof p2p <<<"$v"
	step "$prof: siw initiates (rping -c on siw, mpa_p2p=$p2p)"
	siw_param mpa_p2p "$p2p"
	siw_initiator "$prof" || failed+=("$prof, siw initiator, mpa_p2p=$p2p ($(why "siw-init-$prof"))")
done
siw_param mpa_p2p N

# marker_run DIR SIW-SENDS PEER-SENDS PROFILE [PEER-OPTION...]: one run
# (DIR resp or init: siw's role), and the peer's word on which directions
# carried markers (on or off): "to us" is what siw sent.
marker_run() {
	local dir=$1 to=$2 from=$3 prof=$4 log
	shift 4
	log=$TLOG/siw-$dir-$prof.peer
	if [[ $dir == resp ]]; then
		siw_responder "$prof" "$@" || return 1
	else
		siw_initiator "$prof" "$@" || return 1
	fi
	grep -q "markers $to to us / $from from us" "$log" ||
		{ echo "   peer did not negotiate markers $to to us / $from from us"; return 1; }
}

for dir in resp init; do
	step "markers: the peer asks (plain --markers), siw sends them ($dir)"
	marker_run "$dir" on off plain --markers --crc ||
		failed+=("plain --markers, siw $dir: siw's markers")
done
siw_param mpa_markers Y
for dir in resp init; do
	step "markers: siw asks (mpa_markers=Y), plain sends them ($dir)"
	marker_run "$dir" off on plain --crc ||
		failed+=("plain, siw $dir, mpa_markers=Y: the peer's markers")
done
step "markers: both ask (mpa_markers=Y, plain --markers), siw initiates"
marker_run init on on plain --markers --crc ||
	failed+=("plain --markers, siw initiator, mpa_markers=Y: markers both ways")
step "markers: siw to siw, both ask (mpa_markers=Y, mpa_crc=2), large FPDUs"
siw_param mpa_crc 2
rping_run b 65000 2 || failed+=("siw to siw with markers")
siw_param mpa_crc 1
siw_param mpa_markers N

# The FIN exchange reaches the capture; a background job ignores SIGINT,
# so dumpcap is stopped with SIGTERM (it still closes the file).
sleep 1
kill -TERM "$CAP_PID" 2>/dev/null || true
wait "$CAP_PID" 2>/dev/null || true
step "tshark decodes the capture of every profile run"
wire_decode_check "$PCAP" || failed+=("tshark's decode of the profile runs")

step "cxgb4 (T6 set to take 16 KiB FPDUs): siw with fpdu_max=16384"
siw_param fpdu_max 16384
siw_responder cxgb4 || failed+=("cxgb4, siw responder, fpdu_max=16384 ($(why siw-resp-cxgb4))")
grep -q 'largest' "$TLOG/siw-resp-cxgb4.peer" &&
	echo "   peer: $(grep 'largest' "$TLOG/siw-resp-cxgb4.peer" | tail -n1)"

step "cxgb4: siw with fpdu_max=16388 must exceed its 16 KiB cap"
siw_param fpdu_max 16388
rc=0
siw_responder cxgb4 >/dev/null || rc=$?
echo "   peer: $(verdict "$TLOG/siw-resp-cxgb4.peer")"
((rc != 0)) && grep -q '^FAIL: .*16384' "$TLOG/siw-resp-cxgb4.peer" ||
	failed+=("cxgb4's 16384-octet cap did not catch fpdu_max=16388")
siw_param fpdu_max 0
wait_settled "rnic profiles"

((${#failed[@]} == 0)) || fail "profiles that failed: $(printf '%s; ' "${failed[@]}")"

step "teardown"
siw_pair_down
echo PASS
