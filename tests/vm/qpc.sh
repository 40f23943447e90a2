# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Sourced, after lib.sh and traffic.sh, by the tests of QP connections made
# without rdma_cm (tests/vm/28x-qp-connect*.sh) and by the demo
# (tools/demo.sh). Skips the test unless both hosts run our siw; lifts
# RLIMIT_MEMLOCK for the tools' buffers.

[[ $SIW_TEST_TYPE == siw ]] ||
	skip "QP connections without rdma_cm are a siw-to-siw feature of our siw"
ulimit -l unlimited

# The pingpong tools' teardown race on iWARP. A pingpong server ends once
# it has counted its iterations and destroys its QPs; on iWARP that closes
# their connections, so the client's QPs go to ERROR and flush what they
# still have posted. On InfiniBand the peer's teardown does not touch the
# client's QPs, so the tools never meet this.
#  - ibv_rc_pingpong keeps up to 500 receives posted. Its client polls two
#    completions at a time and fails on any error status, also on a flushed
#    receive that comes in the same batch as its last good one, after all
#    iterations were done: "Failed status Work Request Flushed Error (5)
#    for wr_id 1" (PINGPONG_RECV_WRID) and "parse WC failed 2".
#  - ibv_srq_pingpong (16 QPs, receives on one SRQ) counts its Sends when
#    they complete, so each end may post up to one Send a QP beyond its
#    iterations. When the server is done, the client can still hold such
#    a Send on a QP whose connection just closed, flushed: "Failed status
#    Work Request Flushed Error (5) for wr_id 2" (PINGPONG_SEND_WRID). A
#    QP's error does not flush the SRQ, so no receive fails. Seen in 3 of
#    48 runs with the guest's CPUs kept busy.
# tests/vm/285 (qpc-peer.py --no-done) checks that the last message does
# arrive when the peer tears down right away; here such a run counts as
# passed, with a note, when nothing else went wrong and the server (which
# checked every message with -c) reported all its iterations.

# pp_race_lines TOOL: the client's lines (ERE) that the race leaves.
pp_race_lines() {
	case $1 in
	ibv_rc_pingpong)
		echo '^(Failed status Work Request Flushed Error \(5\) for wr_id 1|parse WC failed 2)$' ;;
	ibv_srq_pingpong)
		echo '^Failed status Work Request Flushed Error \(5\) for wr_id 2$' ;;
	*) return 1 ;;
	esac
}

# pp_teardown_race TOOL CLI_LOG SRV_LOG: the failure is that race and
# nothing else.
pp_teardown_race() {
	local lines other
	lines=$(pp_race_lines "$1") || return 1
	grep -q ' iters in ' "$3" || return 1
	! grep -q 'invalid data' "$2" "$3" || return 1
	grep -q '^Failed status Work Request Flushed Error (5) for wr_id' "$2" || return 1
	other=$(grep -v -e 'local address:' -e 'remote address:' "$2" |
		grep -Ev "$lines") || true
	[[ -z $other ]]
}

pp_teardown_note() {
	echo "   NOTE: the client failed on flushed work requests after the server's"
	echo "   teardown ($1's iWARP teardown race, see tests/vm/qpc.sh); server done"
}

# pp_run TOOL ARGS...: a pingpong tool, server in b, client in a, on
# $TPORT; both must exit 0 and report their iterations, with no bad data
# (the client may instead lose its teardown race, see qpc.sh). PP_NAME:
# log name.
pp_run() {
	local tool=$1 f cli srv
	shift
	next_port
	PP_NAME=$tool-$TPORT
	cli=$TLOG/$PP_NAME.cli srv=$TLOG/$PP_NAME.srv
	if ! QUIET=1 client_server "$PP_NAME" b "${PP_SECS:-180}" \
		"$tool" -d "$DEV_B" -p "$TPORT" "$@" -- \
		"$tool" -d "$DEV_A" -p "$TPORT" "$@" "$IP_B"; then
		if ((CS_CLI_RC == 1 && CS_SRV_RC == 0)) &&
			pp_teardown_race "$tool" "$cli" "$srv"; then
			pp_teardown_note "$tool"
			echo "   server: $(grep ' iters in ' "$srv")"
			return 0
		fi
		echo "   $PP_NAME: client (in a) exit $CS_CLI_RC, server (in b) exit $CS_SRV_RC"
		show_log "$cli"
		show_log "$srv"
		return 1
	fi
	for f in "$cli" "$srv"; do
		file_has "$f" ' iters in ' || { echo "   no report in $f"; show_log "$f"; return 1; }
		! file_has "$f" 'invalid data' || { echo "   $f: bad data"; show_log "$f"; return 1; }
	done
	echo "   client: $(grep ' iters in ' "$cli")"
}
