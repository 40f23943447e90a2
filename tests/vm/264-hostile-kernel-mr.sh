#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 69
#
# A kernel ULP's memory against a hostile peer and a hostile local user.
# tests/kmod/siw_ktarget.ko plays a kernel target (NVMe-oF, iSER): it
# listens with rdma_cm on siw_k (v-k, 10.99.4.1, the initial namespace),
# and for each connection registers a fast-reg MR over 512 pages of its
# own (alloc_page) with IB_WR_REG_MR, telling the peer STag, address and
# length in the accept's private data. The peer is
# tests/vm/tools/ktarget_peer.py in namespace a (10.99.4.2, siw_a). Why:
# once a ULP has taken its memory back (invalidated the MR), siw must not
# touch that memory any more, whatever is in flight; and a process must
# not reach a kernel QP.
#   1. Local invalidation in the middle of an RDMA Write's payload: the
#      peer sends the header and half the payload, the target invalidates
#      the MR (LOCAL_INV, completed) and reuses the pages (a pattern), the
#      peer sends the rest. It must get a Terminate DDP 1/1/0x00 (invalid
#      STag) and the pages must keep the pattern.
#   2. The same, but the target registers the MR again under a new key
#      before it reuses the pages; the rest still names the old STag.
#   3. Remote invalidation under a Read Response (MPA CRC off): the peer
#      asks to read the whole MR (2 MiB) and reads nothing, so the
#      target's socket fills; then a Send with Invalidate of the MR. The
#      target frees the pages at once, as a ULP may, and allocates 4096
#      pages full of a secret. When the peer reads, no octet may be the
#      secret or anything else not the MR's (the response may end early
#      with a Terminate). Three rounds: tx_zcopy on, then off; then on
#      with the MR over slab memory (page-sized kmalloc objects, freed to
#      kmalloc and reused for the secret), which siw cannot hold by a
#      page reference and copies while it holds the MR still.
#   4. A user process (nobody) connects an rdma_cm ID without a QP of its
#      own, naming the QP number of the target's spare kernel QP (INIT, on
#      no connection) in rdma_conn_param.qp_num, to an rping server in a
#      (tests/progs/cm_foreign_qpn). The connect must fail with EINVAL and
#      the kernel QP must stay in INIT.
#   5. "rdma res show qp -dd" in a loop while the target creates and
#      destroys 2000 kernel QPs (receives posted, 1024 SQ slots each): the
#      driver details of a QP read its SQ ring, which destroy_qp frees.
#      No oops. (Linux 6.1's core hides a QP from resource dumps and waits
#      for the dumps under way before it calls destroy_qp, which closes
#      that race there: a guard for cores and drivers that differ.)
# Every case is run and reported; the test fails if any did.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its parameters)"
ko=$SIW_SRC/tests/kmod/siw_ktarget.ko
[[ -f $ko ]] || fail "$ko not built (tests/run builds it)"
need_progs cm_foreign_qpn
PEER=$(dirname "$(readlink -f "$0")")/tools/ktarget_peer.py
PY=/usr/bin/python3
IP_K=10.99.4.1 IP_P=10.99.4.2 PORT=20264 RPORT=20265
ACT=/sys/module/siw_ktarget/parameters/act

step "siw_k on v-k (initial namespace) <-> siw_a on v-a (namespace a)"
siw_load
siw_param mpa_crc 0
host_add a
ip link add v-k type veth peer name v-a
ip link set v-a netns a
ip addr add "$IP_K/24" dev v-k
ip link set v-k up
ip -n a addr add "$IP_P/24" dev v-a
ip -n a link set v-a up
rdma link add siw_k type siw netdev v-k
on a rdma link add siw_a type siw netdev v-a
wait_for 20 port_active siw_k
wait_for 20 port_active siw_a

step "the kernel target"
insmod "$ko" dev=siw_k addr="$IP_K" port="$PORT"
klog_has "siw_ktarget: listening on $IP_K:$PORT" ||
	fail "siw_ktarget does not listen"
SPARE=$(klog | sed -n 's/.*siw_ktarget: spare kernel QP \([0-9]*\) in INIT.*/\1/p' |
	tail -n1)
[[ -n $SPARE ]] || fail "siw_ktarget did not log its spare QP"
echo "   spare kernel QP $SPARE"

# The target's log lines since klog_mark, in KLOG (klog_snap). Few
# processes: each costs a lot under TCG.
KMARK=0 KLOG=
klog_lines() { klog | grep 'siw_ktarget:' || true; }
klog_mark() {
	local l
	mapfile -t l < <(klog_lines)
	KMARK=${#l[@]} KLOG=
}
klog_snap() {
	local l
	mapfile -t l < <(klog_lines)
	KLOG=$(printf '%s\n' "${l[@]:KMARK}")
}
# klog_has ERE: KLOG matches (no new snapshot; ERE within a line).
klog_has() { [[ $KLOG =~ $1 ]]; }
# klog_wait SECS ERE: until a new target line matches (1 when none does).
klog_wait() {
	local end=$((SECONDS + $1))
	until klog_snap && klog_has "$2"; do
		((SECONDS < end)) || return 1
		sleep 0.2
	done
}
show_klog() { sed 's/^\[ *[0-9.]*\] /   kernel: /' <<<"$KLOG"; }

act() { echo "$1" >"$ACT"; }

declare -a VERDICTS=()
bad=0
verdict() {
	VERDICTS+=("$1: $2")
	[[ $2 == ok* ]] || bad=$((bad + 1))
	echo "   => $1: $2"
}

# The peer: one process in a for cases 1 to 3, one connection each (its
# startup under TCG costs seconds). Connection N starts when $SYNC/start.N
# exists, its pause ends when $SYNC/go.N does; its lines start "[N] ".
SYNC=/tmp/ktarget-sync
PEER_LOG=$TLOG/peer.log
PEER_CASES=(write-split write-split rresp-inval rresp-inval rresp-inval)
rm -rf "$SYNC"
mkdir -p "$SYNC"
on a timeout -k 5 600 stdbuf -oL -eL "$PY" "$PEER" --server "$IP_K" \
	--port "$PORT" --sync "$SYNC" "${PEER_CASES[@]/#/--case=}" \
	>"$PEER_LOG" 2>&1 &
PEER_PID=$!
peer_has() { grep -q "^\[$1\] $2" "$PEER_LOG"; }
# peer_wait N SECS WHAT: until connection N printed WHAT or its RESULT.
peer_wait() {
	until_ok "$2" grep -Eq "^\[$1\] ($3|RESULT)" "$PEER_LOG"
}
# peer_result N: wait for connection N's RESULT, show its lines; sets
# PEER_OK (1 passed), PEER_WHY (its FAIL line) and PEER_LINES.
peer_result() {
	local l
	peer_wait "$1" 200 RESULT ||
		echo "   no result from the peer for connection $1 within 200 s"
	PEER_LINES=$(grep "^\[$1\] " "$PEER_LOG") || true
	PEER_OK=0 PEER_WHY=
	while read -r l; do
		l=${l#"[$1] "}
		echo "   peer | $l"
		[[ $l == "RESULT PASS" ]] && PEER_OK=1
		[[ $l == "FAIL: "* && -z $PEER_WHY ]] && PEER_WHY=${l#FAIL: }
	done <<<"$PEER_LINES"
	[[ -n $PEER_WHY || $PEER_OK == 1 ]] ||
		PEER_WHY="no result (the peer process $(kill -0 "$PEER_PID" 2>/dev/null && echo "still runs" || echo "exited"))"
}
# conn_closed: the target tore the connection down (20 s at most).
conn_closed() {
	klog_wait 20 'conn [0-9]+: closed, everything freed' ||
		echo "   the target did not close the connection within 20 s"
}

# ---------------------------------------------------------------------------
# 1 and 2: the rest of a Write after the MR was taken back (connections 1
# and 2 of the peer).
write_case() {
	local n=$1 action=$2 what=$3 why=""
	step "case $n: $what in the middle of an RDMA Write's payload"
	klog_mark
	touch "$SYNC/start.$n"
	peer_wait "$n" 120 'sent: RDMA Write header' || true
	if peer_has "$n" 'sent: RDMA Write header'; then
		act "$action"
	else
		why+="; the peer did not get to send its Write"
	fi
	touch "$SYNC/go.$n"
	peer_result "$n"
	conn_closed
	show_klog
	klog_has "done $action" || why+="; the $action action did not finish"
	klog_has 'conn [0-9]+: the MR.s [0-9]+ pages now hold the reused pattern' ||
		why+="; the target did not reuse the pages"
	((PEER_OK)) || why+="; peer: $PEER_WHY"
	klog_has 'PASS conn [0-9]+: check at disconnect' ||
		why+="; target: $(grep -Eo 'FAIL conn.*|check at disconnect.*' <<<"$KLOG" | head -n1)"
	if [[ -z $why ]]; then
		verdict "case $n" "ok (Terminate DDP 1/1/0x00, the reused pages intact)"
	else
		verdict "case $n" "FAIL${why/#;/:}"
	fi
}
write_case 1 inval "local invalidation"
write_case 2 rereg "local invalidation and registration under a new key"

# ---------------------------------------------------------------------------
# 3: the Read Response after a remote invalidation (connections 3 and 4).
rresp_round() {
	local r=$1 n=$2 zc=$3 slab=$4 why=""
	step "case 3, round $r: remote invalidation under a 2 MiB Read Response (tx_zcopy=$zc, slab MR=$slab)"
	siw_param tx_zcopy "$zc"	# Y or N
	echo "$slab" >/sys/module/siw_ktarget/parameters/mr_slab
	klog_mark
	touch "$SYNC/start.$n"
	# The target frees its pages when the Send with Invalidate completes;
	# a siw that refuses it ends the connection instead.
	klog_wait 120 'done spray|conn [0-9]+: disconnected' ||
		echo "   neither a remote invalidation nor a disconnection within 120 s"
	klog_has 'done spray' ||
		echo "   note: the target's pages were not freed (no Send with Invalidate completed)"
	touch "$SYNC/go.$n"
	peer_result "$n"
	conn_closed
	show_klog
	((PEER_OK)) || why+="; peer: $PEER_WHY"
	[[ $slab == N ]] || klog_has 'pages of slab memory' ||
		why+="; the target's MR was not over slab memory"
	if [[ -z $why ]]; then
		verdict "case 3.$r" "ok ($(sed -n 's/^\[[0-9]*\] read response: //p; s/^\[[0-9]*\] then: /then /p' <<<"$PEER_LINES" | paste -sd ';'))"
	else
		verdict "case 3.$r" "FAIL${why/#;/:}"
	fi
}
rresp_round 1 3 Y N
rresp_round 2 4 N N
rresp_round 3 5 Y Y
siw_param tx_zcopy Y
echo N >/sys/module/siw_ktarget/parameters/mr_slab
rc=0
wait "$PEER_PID" || rc=$?
echo "   the peer exited $rc"

# ---------------------------------------------------------------------------
# 4: a process names the kernel QP.
step "case 4: user nobody connects with the QP number of kernel QP $SPARE"
spare_state() {
	klog_mark
	act state
	klog_snap
	sed -n "s/.*siw_ktarget: spare QP $SPARE: state \([A-Z]*\).*/\1/p" <<<"$KLOG" | tail -n1
}
why=""
before=$(spare_state)
echo "   spare QP $SPARE before: ${before:-?}"
[[ $before == INIT ]] || why+="; the spare QP is in ${before:-?} before the connect"
srv_start a 120 "$TLOG/rping-4.srv" rping -s -a "$IP_P" -p "$RPORT" -C 1
wait_listen a "$RPORT" "$SRV_PID" || fail "rping -s does not listen in a"
log4=$TLOG/cm_foreign_qpn.log
setpriv --reuid=nobody --regid=nogroup --clear-groups \
	timeout -k 5 60 "$progs/cm_foreign_qpn" "$IP_P" "$RPORT" "$SPARE" 8 \
	>"$log4" 2>&1 &
pid4=$!
until grep -q 'connected through QP' "$log4" || ! kill -0 "$pid4" 2>/dev/null; do
	sleep 0.1
done
during=""
if grep -q 'connected through QP' "$log4"; then
	during=$(spare_state)
	echo "   spare QP $SPARE while that process holds its connection: ${during:-?}"
fi
rc4=0
wait "$pid4" || rc4=$?
sed 's/^/   cm_foreign_qpn | /' "$log4"
srv_stop_all
sleep 1
after=$(spare_state)
echo "   spare QP $SPARE after: ${after:-?}"
((rc4 == 0)) ||
	why+="; $(sed -n 's/^FAIL: //p' "$log4" | grep . || echo "cm_foreign_qpn exit $rc4")"
[[ -z $during || $during == INIT ]] ||
	why+="; the kernel QP went to $during, connected to the process's peer"
[[ $after == INIT ]] || why+="; the kernel QP is in ${after:-?} afterwards"
if [[ -z $why ]]; then
	verdict "case 4" "ok (EINVAL, the kernel QP stayed in INIT)"
else
	verdict "case 4" "FAIL${why/#;/:}"
fi

# ---------------------------------------------------------------------------
# 5: restrack's driver details against QP destruction.
step "case 5: rdma res show qp -dd while 2000 kernel QPs come and go"
stop5=/tmp/ktarget-stop5
count5=/tmp/ktarget-count5
rm -f "$stop5" "$count5"
(
	n=0
	while [[ ! -e $stop5 ]]; do
		rdma res show qp -dd >/dev/null 2>&1 || true
		n=$((n + 1))
	done
	echo "$n" >"$count5"
) &
pid5=$!
klog_mark
timed act qploop || true
touch "$stop5"
wait "$pid5" || true
klog_snap
show_klog
echo "   rdma res show qp -dd ran $(cat "$count5" 2>/dev/null || echo '?') times meanwhile"
oops=$(klog | grep -E 'BUG:|Oops|general protection|Unable to handle' | head -n 5) || true
if [[ -n $oops ]]; then
	sed 's/^/   kernel: /' <<<"$oops"
	verdict "case 5" "FAIL: kernel oops while dumping QPs under destruction"
elif ! klog_has 'qploop: [0-9]+ kernel QPs created and destroyed'; then
	verdict "case 5" "FAIL: the QP loop did not finish"
else
	verdict "case 5" "ok (no oops)"
fi

step "summary"
printf '   %s\n' "${VERDICTS[@]}"
if [[ -n $oops ]]; then
	fail "case 5 oopsed: no teardown"
fi

step "teardown"
klog_mark
rmmod siw_ktarget
klog_snap
klog_has 'unloaded' || fail "siw_ktarget did not unload cleanly"
rdma link delete siw_k
rdma link delete siw_a
ip netns del a
siw_unload
((bad == 0)) || fail "$bad of ${#VERDICTS[@]} cases failed (see the summary)"
echo PASS
