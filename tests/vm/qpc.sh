# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Sourced, after lib.sh and traffic.sh, by the tests of QP connections made
# without rdma_cm (tests/vm/28x-qp-connect*.sh). Skips the test unless
# both hosts run our siw; lifts RLIMIT_MEMLOCK for the tools' buffers.

[[ $SIW_TEST_TYPE == siw ]] ||
	skip "QP connections without rdma_cm are a siw-to-siw feature of our siw"
ulimit -l unlimited

# ibv_rc_pingpong's teardown race on iWARP. Its server ends once its last
# Send completed and destroys its QP; on iWARP that closes the connection,
# so the client's QP goes to ERROR and flushes the receives it still has
# posted (rc_pingpong keeps up to 500 posted). The client polls two
# completions at a time and fails on any error status, also on a flushed
# receive that comes in the same batch as its last good one, after all
# iterations were done: "Failed status Work Request Flushed Error (5) for
# wr_id 1" (PINGPONG_RECV_WRID) and "parse WC failed 2". On InfiniBand the
# peer's teardown does not touch the client's QP, so the tool never meets
# this. tests/vm/285 (qpc-peer.py --no-done) checks that the last message
# does arrive when the peer tears down right away; here such a run counts
# as passed, with a note, when nothing else went wrong and the server
# (which checked every message with -c) reported all its iterations.

# pp_teardown_race CLI_LOG SRV_LOG: the failure is that race and nothing else.
pp_teardown_race() {
	local other
	grep -q ' iters in ' "$2" || return 1
	grep -qx 'parse WC failed 2' "$1" || return 1
	other=$(grep -v -e 'local address:' -e 'remote address:' \
		-e '^Failed status Work Request Flushed Error (5) for wr_id 1$' \
		-e '^parse WC failed 2$' "$1") || true
	[[ -z $other ]]
}

pp_teardown_note() {
	echo "   NOTE: the client failed on flushed receives after the server's teardown"
	echo "   (ibv_rc_pingpong's iWARP teardown race, see tests/vm/qpc.sh); server done"
}
