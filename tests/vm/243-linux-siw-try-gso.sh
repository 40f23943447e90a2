#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 40
#
# Large FPDUs with Linux's siw built with try_gso (a const in its
# siw_main.c: tools/linux-siw/build --try-gso sets it true). Such a Linux
# siw sets MPA flag 0x08 (its MPA_RR_FLAG_GSO_EXP) in its request and
# then sends FPDUs as large as a GSO send to a peer whose reply has the
# flag; as responder it does so when the request had it, and its reply
# echoes the request's flags. Our siw in host A, Linux's in host B, CRC
# off (Linux's default), rping with data verification, each run captured
# on v-a; fpdu_sizes walks each direction's TCP stream from its MPA frame
# FPDU by FPDU (length field, ULPDU, pad, CRC field), wherever TCP cut it:
#   Linux initiates: request "large=offer", our reply "large=taken"
#     (0x08 and our 0x04): large FPDUs both ways.
#   we initiate: our request offers, Linux's reply echoes 0x08 without our
#     0x04, so we cannot tell a taker from an echo and send one segment
#     per FPDU; Linux sends large ones (our request offered them).
# "Large" means some ULPDU above one segment's MULPDU (1442 on this veth).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw against Linux's (our offer of large FPDUs)"

LINUX_SIW_KO=${LINUX_SIW_KO%/*}-try_gso/siw_linux.ko
[[ -f $LINUX_SIW_KO ]] ||
	fail "$LINUX_SIW_KO missing: build it with tools/linux-siw/build --try-gso"
SEG_MULPDU=1442

siw_pair siw linux_siw

# fpdu_sizes PCAP PORT: for the connection to server port PORT, one line
# per direction: "SRC-IP FPDUS LARGEST-ULPDU". Reads the classic pcap that
# dumpcap -P writes (Ethernet, IPv4, TCP); a segment seen twice (a
# retransmission) counts once; CRC off and no markers (Linux's siw uses
# neither), so an FPDU is 2 + ULPDU + pad + 4 octets.
fpdu_sizes() {
	/usr/bin/python3 - "$1" "$2" <<'PY'
import struct, sys
path, port = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
end = "<" if struct.unpack_from("<I", data, 0)[0] in (0xa1b2c3d4, 0xa1b23c4d) else ">"
flows, off = {}, 24
while off + 16 <= len(data):
    incl = struct.unpack_from(end + "I", data, off + 8)[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(pkt) < 34 or pkt[12:14] != b"\x08\x00":
        continue
    ip = pkt[14:]
    tcp = ip[(ip[0] & 0x0f) * 4:]
    if ip[9] != 6 or len(tcp) < 20:
        continue
    sport, dport, seq = struct.unpack_from(">HHI", tcp, 0)
    if port not in (sport, dport):
        continue
    pl = tcp[(tcp[12] >> 4) * 4:]
    if pl:
        flows.setdefault(".".join(map(str, ip[12:16])), {})[seq] = pl
for src, segs in sorted(flows.items()):
    seqs = sorted(segs)
    stream, nxt = bytearray(), seqs[0]
    for s in seqs:
        if s == nxt:
            stream += segs[s]
            nxt = s + len(segs[s])
    if not stream.startswith(b"MPA ID Re"):
        continue
    pos = 20 + struct.unpack_from(">H", stream, 18)[0]
    n = big = 0
    while pos + 2 <= len(stream):
        ulpdu = struct.unpack_from(">H", stream, pos)[0]
        pos += 2 + ulpdu + (-(2 + ulpdu) % 4) + 4
        if pos > len(stream):
            break
        n += 1
        big = max(big, ulpdu)
    print(src, n, big)
PY
}

# captured_rping NAME SERVER-HOST: rping (3 x 65000 octets) with the
# server in SERVER-HOST, captured on v-a into MPA_PCAP.
captured_rping() {
	rm -f "$MPA_PCAP"
	on a dumpcap -q -P -i v-a -f tcp -w "$MPA_PCAP" >"$TLOG/dumpcap-$1.log" 2>&1 &
	MPA_CAP_PID=$!
	wait_for 30 test -s "$MPA_PCAP"
	RPING_SECS=60 rping_run "$2" 65000 3
}

# run_case NAME SERVER-HOST REQ REP OURS LINUX: rping with the server in
# SERVER-HOST, captured; the MPA frames must be REQ and REP; OURS and
# LINUX say whether each side's FPDUs must be large or segment-sized.
run_case() {
	local name=$1 sh=$2 req=$3 rep=$4 ours=$5 linux=$6 got ok=1 who ip want d n
	step "$name"
	if ! captured_rping "$name" "$sh"; then
		# Linux's siw, accepting, hooks its socket's data upcall only
		# after it sent the MPA reply: an FPDU of ours that arrives in
		# between stays unread for good (Documentation/interop.md).
		# Seen as our first FPDU and nothing from Linux's siw after it.
		mpa_capture_stop
		d=$(fpdu_sizes "$MPA_PCAP" "$TPORT")
		if [[ $sh != b ]] || ! grep -q "^$IP_A 1 " <<<"$d" ||
			grep -q "^$IP_B [1-9]" <<<"$d"; then
			fail "$name: rping failed"
		fi
		echo "   NOTE: Linux's siw left our first FPDU unread (its accept race, Documentation/interop.md); once more"
		captured_rping "$name" "$sh" || fail "$name: rping failed"
	fi
	nap 1
	mpa_expect "$TPORT" "$req" "$rep" || ok=0
	mpa_capture_stop
	d=$(fpdu_sizes "$MPA_PCAP" "$TPORT")
	for who in ours linux; do
		if [[ $who == ours ]]; then ip=$IP_A want=$ours; else ip=$IP_B want=$linux; fi
		read -r _ n got < <(grep "^$ip " <<<"$d") || n=0 got=0
		echo "   from $who ($ip): $n FPDUs, largest ULPDU $got (one segment: $SEG_MULPDU)"
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
