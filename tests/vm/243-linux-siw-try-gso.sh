#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 60
#
# Large FPDUs with Linux's siw built with try_gso (a const in its
# siw_main.c: tools/linux-siw/build --try-gso sets it true). Such a Linux
# siw sets MPA flag 0x08 (its MPA_RR_FLAG_GSO_EXP) in its request and
# then sends FPDUs as large as a GSO send to a peer whose reply has the
# flag; as responder it does so when the request had it, and its reply
# echoes the request's flags. Our siw in host A, Linux's in host B, CRC
# off (Linux's default), rping with data verification, each run captured
# on v-a and decoded by tshark:
#   Linux initiates: request "large=offer", our reply "large=taken"
#     (0x08 and our 0x04): large FPDUs both ways.
#   we initiate: our request offers, Linux's reply echoes 0x08 without our
#     0x04, so we cannot tell a taker from an echo and send one segment
#     per FPDU; Linux sends large ones (our request offered them).
# "Large" means some ULPDU above one segment's MULPDU (1442 on this veth).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/wire.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw against Linux's (our offer of large FPDUs)"

LINUX_SIW_KO=${LINUX_SIW_KO%/*}-try_gso/siw_linux.ko
[[ -f $LINUX_SIW_KO ]] ||
	fail "$LINUX_SIW_KO missing: build it with tools/linux-siw/build --try-gso"
SEG_MULPDU=1442

siw_pair siw linux_siw

# largest_from DECODED IP: the largest ULPDU of the FPDUs IP sent, from
# wire_decode's lines.
largest_from() {
	awk -v ip="$2" '
		$1 == "frame" && $3 == ip ":" {
			n = split($0, f, /len=/)
			for (i = 2; i <= n; i++) if (f[i] + 0 > m) m = f[i] + 0
		}
		END { print m + 0 }' <<<"$1"
}

# run_case NAME SERVER-HOST REQ REP OURS LINUX: rping with the server in
# SERVER-HOST, captured; the MPA frames must be REQ and REP; OURS and
# LINUX say whether each side's FPDUs must be large or segment-sized.
run_case() {
	local name=$1 sh=$2 req=$3 rep=$4 ours=$5 linux=$6 got ok=1 who ip want d
	step "$name"
	rm -f "$MPA_PCAP"
	on a dumpcap -q -P -i v-a -f tcp -w "$MPA_PCAP" >"$TLOG/dumpcap-$name.log" 2>&1 &
	MPA_CAP_PID=$!
	wait_for 30 test -s "$MPA_PCAP"
	rping_run "$sh" 65000 3 || fail "$name: rping failed"
	nap 1
	mpa_expect "$TPORT" "$req" "$rep" || ok=0
	mpa_capture_stop
	d=$(wire_decode "$MPA_PCAP")
	for who in ours linux; do
		if [[ $who == ours ]]; then ip=$IP_A want=$ours; else ip=$IP_B want=$linux; fi
		got=$(largest_from "$d" "$ip")
		echo "   largest ULPDU from $who ($ip): $got (one segment: $SEG_MULPDU)"
		if [[ $want == large ]] && ((got <= SEG_MULPDU)); then
			echo "   $who must send large FPDUs here"
			ok=0
		elif [[ $want == segment ]] && ((got == 0 || got > SEG_MULPDU)); then
			echo "   $who must send one segment per FPDU here"
			ok=0
		fi
	done
	((ok)) || fail "$name: see above"
	cp "$MPA_PCAP" "$TLOG/$name.pcap"
}

run_case linux-initiates a "rev=2 crc=0 large=offer" "rev=2 crc=0 large=taken" large large
run_case we-initiate b "rev=2 crc=0 large=offer" "rev=2 crc=0 large=offer" segment large
wait_settled "try_gso"

step "teardown"
siw_pair_down
echo PASS
