# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# What goes on the wire, decoded by an independent implementation:
# tshark's iWARP dissectors (iwarp_mpa, found heuristically from the MPA
# request, then iwarp_ddp_rdmap) over a capture of iWARP connections.
# Sourced by tests that capture (250-wire-capture, 242-rnic-profiles);
# needs lib.sh's fail. wire_decode_check is the verdict: see there.

TSHARK_IWARP=(--disable-heuristic rpcrdma_iwarp --disable-heuristic smb_direct_iwarp)

indent() { sed 's/^ */   | /'; }

# wire_decode PCAP: decode PCAP once (tshark loads slowly under TCG) as
# PDML plus tshark's expert summary (-z expert sees every expert info;
# the display filter _ws.expert misses those MPA adds in its heuristic
# pass) and boil it down to lines of the form
#   frame N SRC: FPDU len=L untagged|tagged last|more OPCODE [crc-good]
#                (one line per frame with iWARP content; "; FPDU ..." per
#                further FPDU, "MPA-request rev=R crc=C pd=P" for MPA)
#   count frames|req|rep|fpdu|ddp|rdma|crc_good|crc_bad|max_ulpdu|split|multi N
#                (split: frames holding part of an FPDU that another
#                frame completes; multi: frames holding more than one)
#   op OPCODE N  (RDMAP opcode name, e.g. Read-Request, and its count)
#   version V    (each DDP and RDMAP version seen)
#   mpa rev=R crc=C markers=M pd=P  (per MPA request/reply, in order)
#   expert error|warn|note|chat|comment COUNT GROUP PROTOCOL SUMMARY
wire_decode() {
	tshark -n -r "$1" "${TSHARK_IWARP[@]}" -T pdml -z expert 2>/dev/null | awk '
	function attr(a,    s) {
		s = $0
		if (!match(s, " " a "=\"[^\"]*\""))
			return ""
		s = substr(s, RSTART + length(a) + 3, RLENGTH - length(a) - 4)
		return s
	}
	function flush() {
		if (fr != "" && desc != "")
			print "frame", fr, src ":" desc
		if (nf > 1)
			c["multi"]++
		fr = desc = ""
		nf = 0
	}
	/^<packet>/ { flush(); c["frames"]++; next }
	/^<\/pdml>/ { flush(); pdml_done = 1; next }
	pdml_done {
		if (/^Errors \(/) sev = "error"
		else if (/^Warns \(/) sev = "warn"
		else if (/^Notes \(/) sev = "note"
		else if (/^Chats \(/) sev = "chat"
		else if (/^Comments \(/) sev = "comment"
		else if (sev != "" && /^ +[0-9]+ /) { sub(/^ +/, ""); print "expert", sev, $0 }
		next
	}
	/<field name="/ {
		n = attr("name")
		if (n == "frame.number") fr = attr("show")
		else if (n == "tcp.reassembled_in") c["split"]++
		else if (n == "ip.src") src = attr("show")
		else if (n == "iwarp_mpa.req") { c["req"]++; desc = desc " MPA-request"; mpa = 1 }
		else if (n == "iwarp_mpa.rep") { c["rep"]++; desc = desc " MPA-reply"; mpa = 1 }
		else if (n == "iwarp_mpa.rev" && mpa) rev = attr("show")
		else if (n == "iwarp_mpa.crc_flag" && mpa) crc = attr("show")
		else if (n == "iwarp_mpa.marker_flag" && mpa) mk = attr("show")
		else if (n == "iwarp_mpa.pdlength" && mpa) {
			print "mpa rev=" rev " crc=" crc " markers=" mk " pd=" attr("show")
			desc = desc " rev=" rev " crc=" crc " pd=" attr("show")
			mpa = 0
		}
		else if (n == "iwarp_mpa.fpdu") { c["fpdu"]++; nf++; desc = desc (desc == "" ? "" : ";") " FPDU" }
		else if (n == "iwarp_mpa.ulpdulength") {
			l = attr("show")
			if (l + 0 > c["max_ulpdu"])
				c["max_ulpdu"] = l + 0
			desc = desc " len=" l
		}
		else if (n == "iwarp_ddp") c["ddp"]++
		else if (n == "iwarp_rdma") c["rdma"]++
		else if (n == "iwarp_ddp.tagged_flag") desc = desc (attr("show") == "1" ? " tagged" : " untagged")
		else if (n == "iwarp_ddp.last_flag") desc = desc (attr("show") == "1" ? " last" : " more")
		else if (n == "iwarp_ddp.dv" || n == "iwarp_rdma.version") ver[attr("show")]++
		else if (n == "iwarp_rdma.opcode") {
			o = attr("showname")
			sub(/.*OpCode: /, "", o)
			sub(/ \(0x[0-9a-fA-F]+\)$/, "", o)
			gsub(/ /, "-", o)
			ops[o]++
			desc = desc " " o
		}
		else if (n == "iwarp_mpa.crc_check") {
			s = attr("showname")
			if (s ~ /Good CRC32/) { c["crc_good"]++; desc = desc " crc-good" }
			else if (s ~ /Bad CRC32/) { c["crc_bad"]++; desc = desc " CRC-BAD" }
		}
	}
	END {
		split("frames req rep fpdu ddp rdma crc_good crc_bad max_ulpdu split multi", k, " ")
		for (i = 1; i in k; i++)
			print "count", k[i], c[k[i]] + 0
		for (o in ops)
			print "op", o, ops[o]
		for (v in ver)
			print "version", v
	}'
}

# wire_decode_check PCAP [crc] [segment|large MULPDU]: decode PCAP and
# apply the checks above; "crc" demands a good CRC on every FPDU (pass ""
# to skip it). "segment MULPDU": every FPDU's ULPDU is at most MULPDU (the
# bound of one TCP segment), and each frame holds at most one FPDU and
# no part of another; "large MULPDU": some ULPDU is larger (both sides
# offered large FPDUs). A frame here is one skb of the sender (v-a is a
# veth: no segmentation on the way), and TCP cuts a segment only from
# one skb. Prints what was decoded.
wire_decode_check() {
	local pcap=$1 want_crc=${2:-} size=${3:-} mulpdu=${4:-} bad=0 d n_req n_rep n_fpdu n_ddp n_rdma good badcrc
	local errors iwarp_warns ops op t0 max split multi

	t0=$SECONDS
	d=$(wire_decode "$pcap")
	[[ -n $d ]] || { echo "   tshark decoded nothing in $pcap"; return 1; }
	cnt() { awk -v k="$1" '$1 == "count" && $2 == k { print $3 }' <<<"$d"; }
	n_req=$(cnt req) n_rep=$(cnt rep) n_fpdu=$(cnt fpdu)
	n_ddp=$(cnt ddp) n_rdma=$(cnt rdma) good=$(cnt crc_good) badcrc=$(cnt crc_bad)

	echo "   $(basename "$pcap"): $(cnt frames) frames, decoded in $((SECONDS - t0))s; first iWARP frames:"
	awk '$1 == "frame"' <<<"$d" | head -n 14 | cut -c1-150 | indent
	awk '$1 == "expert" && $2 != "chat" { $1 = "   expert"; print }' <<<"$d"
	awk '$1 == "mpa" { $1 = "   MPA request/reply:"; print }' <<<"$d"
	ops=$(awk '$1 == "op" { print $2, "x" $3 }' <<<"$d" | sort | paste -sd, | sed 's/,/, /g')
	echo "   decoded: $n_req MPA requests, $n_rep MPA replies, $n_fpdu FPDUs, $n_ddp DDP, $n_rdma RDMAP"
	max=$(cnt max_ulpdu) split=$(cnt split) multi=$(cnt multi)
	echo "   largest ULPDU: $max bytes; frames holding part of a split FPDU: $split, more than one FPDU: $multi"
	echo "   RDMAP opcodes: ${ops:-none}"
	echo "   FPDU CRCs checked by tshark: $good good, $badcrc bad"

	# Expert infos of severity Error (malformed packets are among them).
	errors=$(awk '$1 == "expert" && $2 == "error"' <<<"$d")
	if [[ -n $errors ]]; then
		echo "   tshark reports errors:"
		indent <<<"$errors"
		bad=1
	fi
	# tshark 4.0 warns about every MPA rev 2 request/reply (RFC 6581 is
	# unknown to it); any other iWARP warning fails.
	iwarp_warns=$(awk '$1 == "expert" && $2 == "warn" && $5 ~ /^IWARP/' <<<"$d" |
		grep -Ev 'Res field is NOT set to zero|Rev field is NOT set to one' || true)
	if [[ -n $iwarp_warns ]]; then
		echo "   unexpected iWARP warnings:"
		indent <<<"$iwarp_warns"
		bad=1
	fi
	if ((n_req < 1 || n_rep < 1)); then
		echo "   no MPA request/reply decoded (the capture must hold the connection setup)"
		bad=1
	fi
	if ((n_fpdu < 1 || n_ddp < 1 || n_rdma < 1)); then
		echo "   no FPDU/DDP/RDMAP decoded"
		bad=1
	elif ((n_ddp != n_fpdu || n_rdma != n_fpdu)); then
		echo "   FPDUs without a DDP/RDMAP header: $n_fpdu FPDUs, $n_ddp DDP, $n_rdma RDMAP"
		bad=1
	fi
	for op in Write Read-Request Read-Response Send; do
		if ! awk -v o="$op" '$1 == "op" && $2 == o { f = 1 } END { exit !f }' <<<"$d"; then
			echo "   no RDMAP $op seen (rping uses Send, Write, Read Request/Response)"
			bad=1
		fi
	done
	if awk '$1 == "op" && $2 == "Terminate" { f = 1 } END { exit !f }' <<<"$d"; then
		echo "   a Terminate went over the wire"
		bad=1
	fi
	if [[ $(awk '$1 == "version" { print $2 }' <<<"$d" | sort -u | tr '\n' ' ') != "1 " ]]; then
		echo "   DDP/RDMAP versions other than 1: $(awk '$1 == "version" { print $2 }' <<<"$d" | tr '\n' ' ')"
		bad=1
	fi
	if ((badcrc > 0)); then
		echo "   FPDUs with a bad CRC:"
		grep 'CRC-BAD' <<<"$d" | head -n 5 | indent
		bad=1
	fi
	if [[ $want_crc == crc ]] && ((good != n_fpdu)); then
		echo "   CRC expected on every FPDU: $good good CRCs for $n_fpdu FPDUs"
		bad=1
	fi
	if [[ $size == segment ]] && ((max > mulpdu || split > 0 || multi > 0)); then
		echo "   FPDUs of one TCP segment expected (ULPDU <= $mulpdu, one per frame): largest ULPDU $max; frames with part of a split FPDU: $split, with more than one: $multi"
		bad=1
	fi
	if [[ $size == large ]] && ((max <= mulpdu)); then
		echo "   large FPDUs expected (both sides offered them): largest ULPDU $max, not above one segment's $mulpdu"
		bad=1
	fi
	return "$bad"
}
