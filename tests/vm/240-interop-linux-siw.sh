#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# cost: 80
# providers: stock ours
#
# Interoperability with Linux's own siw: OUR siw on host A, Linux's
# (linux_siw, build/linux-siw/RELEASE/siw_linux.ko) on host B, each on its end of
# one veth pair. For our mpa_rev 2 and 1 and mpa_crc 0 (off) and 2 (always
# ask), in both directions (client in A, then client in B): rping with
# data verification, then ib_send_bw, ib_write_bw and ib_read_bw (-R) at
# 1 MiB. The MPA Request and Reply of each rping must show the expected
# revision and CRC flag on the wire.
#
# What Linux's siw 6.1 does (its settings are consts in siw_main.c): it
# requests MPA rev 2 (enhanced) without CRC and, as responder, echoes the
# request's revision and CRC flag; it accepts a CRC that the peer asks for
# in either role (mpa_crc_strict is false). So:
#   client in A (we initiate): request rev=$mpa_rev crc=(mpa_crc == 2),
#     the reply echoes it; works for every setting.
#   client in B (Linux initiates): request rev=2 crc=0; our reply carries
#     CRC iff mpa_crc=2. With our mpa_rev=1 our reply is rev 1, which
#     Linux's initiator refuses ("the responder MUST reply with MPA
#     version 2" says its siw_cm.c; it does not fall back to rev 1):
#     that connection must FAIL, cleanly and quickly (no hang, no kernel
#     report), and the next ones must work again.
#
# A perftest server listens on the wildcard address (perftest 6.06 has no
# option to bind it), so rdma_cm listens on both devices. Linux's siw then
# opens, in the server's namespace, a 0.0.0.0:port listener bound to its
# own netdev's ifindex; it collides with our listener on the same port,
# which is bound to our device's addresses, not to a netdev (rdma_listen:
# EADDRINUSE, "RDMA CMA: cma_listen_on_dev, error -98"). rdma_cm makes
# every device listen, whatever namespace it is in, and Linux's siw
# listens in the caller's namespace: only a test with both drivers in one
# kernel meets this. So a perftest server on our side (A) is bound to
# our address by a preload shim (PERF_SRV_BIND, tests/progs/bind_addr.c),
# as a bind option of perftest would; Linux's siw then initiates (rev 2,
# no CRC) and we reply.
#
# With our mpa_rev=1 and us initiating, MPA rev 1 is exchanged correctly
# and perftest works, but Linux's rping server fails its first post
# ("post send error") without a word on the wire; it is left out there.
#
# Linux's siw 6.1 can miss the first FPDU after its MPA Reply: its accept
# sends the Reply and only then hands the socket's data_ready to the QP
# (or, when it waits for an RTR, to its RTR handler); in between, its CM's
# data_ready ignores data. An FPDU that lands in that window stays unread
# in its socket until more data comes. With MPA rev 2 our RTR is the one
# missed, and the client's first message (it sends without waiting) wakes
# it up. With rev 1 there is no RTR: perftest's client sends its parameters
# and waits for the server's, which waits for the client's: both stall
# (about once in 100 runs here). Such a run is repeated, with a note, if
# its snapshot (run_client) shows exactly that: Linux's socket on the
# server's port, ESTABLISHED with bytes in its receive queue, long after
# they came. Our accept reads what came in that window (siw_cep_pull_rx).
#
# Linux's siw 6.1 misreads an MPA CRC trailer that reaches it in two
# pieces: siw_get_trailer() copies each piece to the start of its trailer
# buffer, so the second overwrites the first, and it reports "siw: crc
# error" and sends a Terminate (MPA CRC error). Its own FPDUs are one
# TCP segment each, so it never splits a trailer. Ours were as long as one
# GSO send, and their trailers could split (seen twice in ~30 CRC-on runs
# of ib_read_bw, which this test then repeated). Now Linux's siw does not
# offer large FPDUs, so ours to it are one segment each, each ending its
# skb (tx.c): no trailer splits, and a CRC error fails the test. Our
# receiver takes a trailer in any pieces (tests/unit/test_rx feeds every
# FPDU whole, octet by octet and in random chunks).
#
# The matrix is 32 runs: rping and three perftest tools (a row) for each
# revision, CRC setting and direction. make check runs one tool of each
# row, every tool twice, and deals the rows between the stock provider's
# pass and ours (lib.sh: cell, CELL_ROW); make check-full runs all of them
# in both.
#
# Dry run without our engine: SIW_TEST_INTEROP_A=linux_siw puts Linux's
# siw on A as well; the MPA knobs are then left alone and every run is
# expected to work with rev 2 and no CRC.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

type_a=${SIW_TEST_INTEROP_A:-siw}
# make check moves less data per cell (lib.sh: full_or): what a cell
# checks is the connection and the first FPDUs, not their number.
size=1048576
iters=$(full_or 10 5)
pings=$(full_or 100 40)

siw_pair "$type_a" linux_siw
mpa_capture_start
CELL_ROW=4

# expect CLIENT_HOST REV CRC: sets OUTCOME (ok/fail), REQ and REP (the MPA
# frames expected on the wire as "rev=R crc=C large=L"). Our request
# offers large FPDUs; Linux's siw 6.1 never does (its try_gso is a const
# false), but its reply echoes the offer (it is built from the request's
# header) without our "taken" flag: we still send one segment per FPDU.
# Our reply offers them only to a request that did.
expect() {
	local ch=$1 rev=$2 crc=$3 c=0
	[[ $crc == 2 ]] && c=1
	OUTCOME=ok
	if [[ $type_a != siw ]]; then
		REQ="rev=2 crc=0 large=no" REP="rev=2 crc=0 large=no"
	elif [[ $ch == a ]]; then
		REQ="rev=$rev crc=$c large=offer" REP="rev=$rev crc=$c large=offer"
	else
		REQ="rev=2 crc=0 large=no" REP="rev=$rev crc=$c large=no"
		[[ $rev == 2 ]] || OUTCOME=fail
	fi
}

# must_fail_cleanly WHAT: the run just done failed, as it should, by the
# client's own error exit (not its timeout; a client that reported the
# error and then hung, as rping does, was stopped by watch_client).
must_fail_cleanly() {
	if ((CS_CLI_RC == 0)); then
		fail "$1: connected although Linux's siw must refuse a rev 1 reply"
	fi
	((CS_CLI_RC != 124 && CS_CLI_RC != 137)) ||
		fail "$1: client hung until its timeout instead of failing"
	echo "   failed as expected (client exit $CS_CLI_RC)"
}

# linux_missed_fpdu NAME: the perf_run NAME stalled because Linux's siw
# (the server, in b) never read what our client sent (see above).
linux_missed_fpdu() {
	local stall=$TLOG/$1.cli.stall q
	((CS_CLI_RC == 124 || CS_CLI_RC == 137)) && [[ -f $stall ]] || return 1
	q=$(awk -v port=":$TPORT" '/^== / { on = ($0 == "== ss -tan in b"); next }
		on && $1 == "ESTAB" && $2 > 0 && substr($4, length($4) - length(port) + 1) == port { print $2; exit }' "$stall")
	[[ -n $q ]] || return 1
	echo "   $1: Linux's siw left the client's first $q bytes unread in its socket (its accept race, see the top of this test): once more"
}

# rping_cell: the rping run of one setting and direction (expect, what
# and sh set by the loop below).
rping_cell() {
	if [[ $type_a == siw && $rev == 1 && $ch == a ]]; then
		echo "   skipped: Linux's rping server fails its first post over MPA rev 1"
	elif [[ $OUTCOME == ok ]]; then
		timed rping_run "$sh" 65535 "$pings" || fail "rping, $what"
		mpa_expect "$TPORT" "$REQ" "$REP" || fail "MPA, $what"
	else
		QUIET=1 RPING_SECS=60 timed rping_run "$sh" 65535 "$pings" || true
		must_fail_cleanly "rping, $what"
		mpa_expect "$TPORT" "$REQ" "$REP" || fail "MPA, $what"
	fi
}

for rev in 2 1; do
	for crc in 0 2; do
		if [[ $type_a == siw ]]; then
			siw_param mpa_rev "$rev"
			siw_param mpa_crc "$crc"
			setting="our mpa_rev=$rev mpa_crc=$crc"
		else
			setting="dry run ($type_a on A), pass $rev/$crc"
		fi
		for ch in a b; do
			sh=$(other_host "$ch")
			expect "$ch" "$rev" "$crc"
			what="client in $ch, $setting"

			if cell; then
				step "rping, $what (expect $OUTCOME)"
				rping_cell
			fi

			# A server in a is bound to its address; a run that met
			# Linux's accept race (above) is repeated.
			bind='' retry_if=linux_missed_fpdu
			[[ $sh == a ]] && bind=$IP_A retry_if=''
			for tool in ib_send_bw ib_write_bw ib_read_bw; do
				cell || continue
				step "$tool -s $size, $what (expect $OUTCOME)"
				if [[ $OUTCOME == ok ]]; then
					PERF_RETRY_IF=$retry_if PERF_SRV_BIND=$bind \
						timed perf_run "$tool" "$sh" \
						-s "$size" -n "$iters" || fail "$tool, $what"
					perf_check_bw "$TLOG/$PERF_NAME.cli" "$size" ||
						fail "$tool, $what: client report"
					mpa_expect "$TPORT" "$REQ" "$REP" ||
						fail "MPA, $tool, $what"
				else
					QUIET=1 PERF_SECS=60 PERF_SRV_BIND=$bind timed \
						perf_run "$tool" "$sh" -s "$size" -n "$iters" || true
					must_fail_cleanly "$tool, $what"
				fi
			done
		done
	done
done

cells_done
step "teardown"
mpa_capture_stop
if [[ $type_a == siw ]]; then
	siw_param mpa_rev 2
	siw_param mpa_crc 1
fi
siw_pair_down
echo PASS
