#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 83
#
# What goes on the wire, decoded by an independent implementation:
# dumpcap records rping runs on host a's veth and tshark's iWARP
# dissectors (iwarp_mpa, found heuristically from the MPA request, then
# iwarp_ddp_rdmap) decode the capture. Fails on any expert info of
# severity Error (malformed packets included), on any iWARP warning other
# than the two tshark 4.0 gives every MPA rev 2 request/reply (it does
# not know RFC 6581), if no MPA request/reply or no DDP/RDMAP frames were
# decoded, if rping's Send, RDMA Write, Read Request and Read Response
# are not all seen, on a Terminate, on a DDP or RDMAP version other than
# 1, and, when CRC was negotiated, on any FPDU whose CRC tshark does not
# find good. Run 1: 64 B pings (one FPDU per message); run 2: 30000 B
# (messages larger than a TCP segment), with mpa_crc=2 on our siw, so
# CRCs are checked too (Linux's siw 6.1 cannot be told to ask for CRC).
# Run 2 also checks FPDU sizes: between two of our siw (both offer large
# FPDUs) some are above one segment. Run 3
# (our siw only) repeats run 2 with large_fpdu=0: every FPDU fits one TCP
# segment (RFC 5044's MULPDU) and none is split over two frames.
#
# SIW_TEST_TYPE=linux_siw runs it on Linux's siw. The pcaps stay in the
# job directory (build/vm/out/<test>/ under tests/run).
#
# 250-wire-capture.sh --decode PCAP [crc] [segment|large MULPDU]: only
# decode and check PCAP (works on the host too).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/wire.sh"

if [[ ${1:-} == --decode ]]; then
	[[ -f ${2:-} ]] || fail "usage: $0 --decode PCAP [crc] [segment|large MULPDU]"
	wire_decode_check "$2" "${3:-}" "${4:-}" "${5:-}" || fail "$2: the decode shows problems"
	echo PASS
	exit 0
fi

command -v dumpcap >/dev/null || skip "dumpcap (Wireshark) not installed"
command -v tshark >/dev/null || skip "tshark not installed"

wire_dir=${VM_JOB:-/var/tmp}/wire
mkdir -p "$wire_dir"
port=20500

# capture_rping NAME SIZE COUNT: dumpcap on v-a (host a, the client) for
# one rping (server in b) of COUNT pings of SIZE bytes; leaves
# $wire_dir/NAME.pcapng. Never rping -v: its output is the ping data.
capture_rping() {
	local name=$1 size=$2 count=$3 pcap cap rc=0 src=0
	port=$((port + 1))
	pcap=$wire_dir/$name.pcapng
	on a dumpcap -i v-a -f "tcp port $port" -a duration:120 -w "$pcap" \
		>"$wire_dir/$name.dumpcap" 2>&1 &
	cap=$!
	wait_for 20 grep -q 'Capturing on' "$wire_dir/$name.dumpcap"
	srv_start b 60 "$wire_dir/$name.srv" \
		rping -s -V -a "$IP_B" -p "$port" -S "$size" -C "$count"
	if ! wait_listen b "$port" "$SRV_PID"; then
		show_log "$wire_dir/$name.srv"
		fail "rping server did not listen on port $port"
	fi
	run_client a 60 "$wire_dir/$name.cli" \
		rping -c -V -a "$IP_B" -p "$port" -S "$size" -C "$count" || rc=$?
	((rc == 0)) || { sleep 1; srv_stop_all; }
	srv_wait "$SRV_PID" || src=$?
	SRV_PIDS=()
	# Let the FIN exchange reach the capture; a background job ignores
	# SIGINT, so dumpcap is stopped with SIGTERM (it still closes the file).
	sleep 1
	kill -TERM "$cap" 2>/dev/null || true
	wait "$cap" 2>/dev/null || true
	if ((rc != 0 || src != 0)); then
		echo "   rping client exit $rc, server exit $src"
		show_log "$wire_dir/$name.cli"
		show_log "$wire_dir/$name.srv"
		fail "rping $size B x $count failed"
	fi
	echo "   $name: rping $size B x $count ok"
}

siw_pair "$SIW_TEST_TYPE" "$SIW_TEST_TYPE"

step "64 B pings: capture and decode"
capture_rping small 64 3
wire_decode_check "$wire_dir/small.pcapng" || fail "64 B run: the decode shows problems"

# The largest ULPDU of an FPDU within one TCP segment of v-a (RFC 5044
# MULPDU): the MTU less IPv4, TCP and timestamp option headers is the
# EMSS; length field, ULPDU and pad fill its multiple of 4 but the CRC.
mtu=$(on a cat /sys/class/net/v-a/mtu)
emss=$((mtu - 20 - 20 - 12))
seg_mulpdu=$(((emss & ~3) - 6))
echo "   v-a: MTU $mtu, EMSS $emss, one segment's MULPDU $seg_mulpdu"

step "30000 B pings: multi-segment messages"
want_crc='' size=''
if [[ $SIW_TEST_TYPE == siw ]]; then
	siw_param mpa_crc 2
	want_crc=crc size=large
else
	echo "   $SIW_TEST_TYPE: no way to ask for CRC, not checked"
fi
capture_rping large 30000 2
wire_decode_check "$wire_dir/large.pcapng" "$want_crc" "$size" "$seg_mulpdu" ||
	fail "30000 B run: the decode shows problems"

if [[ $SIW_TEST_TYPE == siw ]]; then
	step "30000 B pings, large_fpdu=0: FPDUs of one TCP segment"
	siw_param large_fpdu N
	capture_rping segment 30000 2
	wire_decode_check "$wire_dir/segment.pcapng" crc segment "$seg_mulpdu" ||
		fail "30000 B run, large_fpdu=0: the decode shows problems"
	siw_param large_fpdu Y
fi
if [[ $want_crc == crc ]]; then
	siw_param mpa_crc 1
fi

siw_pair_down
echo PASS
