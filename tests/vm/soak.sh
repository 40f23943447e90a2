#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 1800
# timeout-plus: SIW_TEST_SOAK_SECS
# (not in the suite: make soak runs it, tests/run --soak)
# guest: own (NFS and NVMe-oF servers, brd, an hour of load)
#
# Soak: mixed traffic for SIW_TEST_SOAK_SECS seconds (default 3600; make
# soak SOAK_SECS=N), on the debug kernel, with the links flapping now and
# then. Hosts a and b (siw_a, siw_b on one veth pair) and, in the initial
# namespace, siw0 on eth0 with an NVMe-oF/RDMA target and host and an NFS
# server and client over RDMA on it (kernel ULPs use rdma_cm there only).
# Workers, each in a loop until the time is up:
#   rping      a -> b, 4 KiB, 500 pings verified (-V), to a server that
#              stays (-P)
#   perftest   ib_write_bw, ib_read_bw, ib_send_bw in turn, 64 KiB, 10 s
#   nvme       fio random writes of 4-128 KiB, iodepth 8, over 32 MiB of
#              the NVMe-oF namespace, read back and checked (crc32c)
#   nfs        an 8 MiB random file copied onto the NFS mount, caches
#              dropped, its sha256 read back there and on the server
#   flapper    every SIW_TEST_SOAK_FLAP seconds (default 300; a third of
#              the run if that is shorter), v-a and eth0 in turn go down
#              for 5 s and come back; none in the last quarter of the run
#              (600 s at most)
# A round that fails while a link was down (or within 60 s after) is
# excused; any other failed round fails the soak, and so does a data
# mismatch (fio's verify, a checksum) whenever it happens. Every worker
# must have passed a round after the last flap (a worker that has not
# when the time is up goes on, up to 1200 s more, until it has). At the end the "rdma res"
# counts of the three devices are back where they were before the load,
# everything is torn down, nothing of siw is left and siw unloads without
# leaks; the runner fails it on any kernel report (and kmemleak).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/ulp.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "soaks our siw only"
command -v fio >/dev/null || fail "fio missing (make deps)"

SECS=${SIW_TEST_SOAK_SECS:-3600}
FLAP=${SIW_TEST_SOAK_FLAP:-300}
((FLAP <= SECS / 3)) || FLAP=$((SECS / 3))
((FLAP >= 20)) || FLAP=20
GRACE=60
IP0=10.99.22.1
NQN=nqn.2026-11.org.siw:soak
MNT=/mnt/siw-soak
S=$TLOG/soak
mkdir -p "$S"
now() { date +%s; }

step "setup: a and b, siw0 with NVMe-oF and NFS over RDMA"
siw_pair siw siw
ip addr add "$IP0/24" dev eth0 2>/dev/null || true
ip link set eth0 up
rdma link add siw0 type siw netdev eth0 || fail "rdma link add siw0 failed"
wait_for 20 port_active siw0
# res_counts [KIND...]: the "rdma res" summary of our devices (pd, cq, qp,
# cm_id, mr, ctx and srq counts), without the KINDs named.
res_counts() {
	local k drop=
	for k in "$@"; do
		drop+="s/ $k [0-9]*//;"
	done
	rdma res show 2>/dev/null | grep -E ': (siw0|siw_a|siw_b): ' | sort | sed "$drop"
}
show_counts() { while read -r l; do echo "   $1 | $l"; done <<<"$2"; }
show_counts "no ULP" "$(res_counts)"
BASE0=$(res_counts cq)
ulp_nvme_up "$IP0" 4422 "$NQN" 64
ulp_nfs_up "$IP0" "$MNT"
echo "   NVMe-oF namespace $NVME_BDEV, NFS at $MNT"
# NFS/RDMA keeps a pool of MRs that grows under load until the unmount:
# with the ULPs up, everything but the MRs must come back.
BASE=$(res_counts mr)
show_counts "ULPs up" "$(res_counts)"

END=$(($(now) + SECS))
# A worker with no round passed since the last flap when the time is up
# goes on for up to OVERTIME s more: the soak checks that each one came
# back after the last flap, and on a crowded debug kernel a round can
# take minutes (seen: a perftest cycle of three 10 s runs over 700 s, so
# ib_write_bw had no turn in the quiet quarter).
OVERTIME=1200
# round WORKER START RC [NOTE]: one line per round.
round() { echo "$1 $2 $(now) $3 ${4:-}" >>"$S/rounds"; }
# recovered NAME: a round of NAME that began after the last flap passed.
recovered() {
	local lf
	lf=$(awk '{ e = $2 } END { print e + 0 }' "$S/flaps")
	awk -v n="$1" -v lf="$lf" '$1 == n && $4 == 0 && $2 > lf { f = 1 }
		END { exit !f }' "$S/rounds"
}
# go_on NAME...: another round? Until the time is up; then while one of
# the NAMEs has not recovered, up to OVERTIME s more.
go_on() {
	local n
	(($(now) < END)) && return 0
	(($(now) < END + OVERTIME)) || return 1
	for n in "$@"; do
		recovered "$n" || return 0
	done
	return 1
}

w_rping() {
	local t rc
	while go_on rping; do
		t=$(now) rc=0
		on a timeout -k 5 $((120 * SLOW)) rping -c -V -S 4096 -C 500 -a "$IP_B" -p 21001 \
			>"$S/rping.cli" 2>&1 || rc=$?
		round rping "$t" "$rc"
		((rc == 0)) || { tail -n 3 "$S/rping.cli" >>"$S/rping.fails"; sleep 2; }
	done
}

w_perf() {
	local t rc op port=21100 pid
	while go_on perf-write perf-read perf-send; do
		for op in write read send; do
			port=$((port + 1)) t=$(now) rc=0
			on b timeout -k 5 $((120 * SLOW)) "ib_${op}_bw" -R -F -D 10 -s 65536 -p "$port" \
				>"$S/perf.srv" 2>&1 &
			pid=$!
			wait_listen b "$port" "$pid" 2>/dev/null || sleep 2
			on a timeout -k 5 $((120 * SLOW)) "ib_${op}_bw" -R -F -D 10 -s 65536 -p "$port" "$IP_B" \
				>"$S/perf.cli" 2>&1 || rc=$?
			# A server whose client failed waits for it until its
			# timeout (seen: a client that found the port down
			# during a flap, its round ended 720 s later).
			if ((rc != 0)); then
				pkill -TERM -P "$pid" 2>/dev/null || true
				kill "$pid" 2>/dev/null || true
			fi
			wait "$pid" 2>/dev/null || true
			round "perf-$op" "$t" "$rc"
			((rc == 0)) || { tail -n 3 "$S/perf.cli" >>"$S/perf.fails"; sleep 2; }
		done
	done
}

w_nvme() {
	local t rc note
	while go_on nvme; do
		t=$(now) rc=0 note=
		timeout -k 5 $((300 * SLOW)) fio --name=soak --filename="$NVME_BDEV" --direct=1 \
			--ioengine=libaio --iodepth=8 --rw=randwrite --bsrange=4k-128k --size=32M \
			--verify=crc32c --verify_fatal=1 --randrepeat=0 --allow_file_create=0 \
			--output="$S/fio.out" \
			>"$S/fio.log" 2>&1 || rc=$?
		# A checksum that does not match is never the link's fault.
		grep -qiE 'verify:? .*(bad|fail)|crc32c.*(mismatch|bad)' "$S/fio.out" "$S/fio.log" &&
			note=data-mismatch
		round nvme "$t" "$rc" "$note"
		((rc == 0)) || { tail -n 5 "$S/fio.log" >>"$S/nvme.fails"; sleep 2; }
	done
}

w_nfs() {
	local t rc note i=0 sum
	dd if=/dev/urandom of="$S/nfs.data" bs=1M count=8 status=none
	sum=$(sha256sum <"$S/nfs.data")
	while go_on nfs; do
		i=$((i + 1)) t=$(now) rc=0 note=
		if timeout -k 5 $((300 * SLOW)) cp "$S/nfs.data" "$MNT/f.$i" &&
		   timeout -k 5 $((120 * SLOW)) sync -f "$MNT/f.$i"; then
			echo 1 >/proc/sys/vm/drop_caches
			if [[ $(timeout -k 5 $((300 * SLOW)) sha256sum <"$MNT/f.$i") != "$sum" ||
			      $(sha256sum <"$NFS_EXPORT/f.$i") != "$sum" ]]; then
				rc=1 note=data-mismatch
			fi
		else
			rc=2
		fi
		timeout -k 5 $((120 * SLOW)) rm -f "$MNT/f.$i" || true
		round nfs "$t" "$rc" "$note"
		((rc == 0)) || sleep 2
	done
}

# Flaps: "start end what" per line. The last quarter of the run (600 s at
# most) stays quiet, for the rounds after the last flap.
w_flap() {
	local k=0 t quiet=$((SECS / 4))
	((quiet <= 600)) || quiet=600
	while (($(now) + FLAP + quiet < END)); do
		sleep "$FLAP"
		k=$((k + 1)) t=$(now)
		if ((k % 2)); then
			on a ip link set v-a down
			sleep 5
			on a ip link set v-a up
			echo "$t $(now) v-a" >>"$S/flaps"
		else
			ip link set eth0 down
			sleep 5
			ip link set eth0 up
			echo "$t $(now) eth0" >>"$S/flaps"
		fi
	done
}

step "load for $SECS s, a link flap every $FLAP s"
: >"$S/rounds"
: >"$S/flaps"
# rping's server stays for the whole run (-P); srv_stop_all ends it.
srv_start b $((SECS + 600)) "$S/rping.srv" rping -s -P -V -S 4096 -a "$IP_B" -p 21001
wait_listen b 21001 "$SRV_PID" || fail "rping's server does not listen"
PIDS=()
for w in w_rping w_perf w_nvme w_nfs w_flap; do
	"$w" >"$S/$w.log" 2>&1 &
	PIDS+=($!)
done
# Each worker ends after its round in progress; a round is bounded.
for p in "${PIDS[@]}"; do
	wait "$p" || true
done
srv_stop_all

step "rounds"
# excused START END: did the round overlap a flap (and its grace)?
excused() {
	local fs fe _
	while read -r fs fe _; do
		(($1 <= fe + GRACE && $2 >= fs)) && return 0
	done <"$S/flaps"
	return 1
}
LAST_FLAP=$(awk '{ e = $2 } END { print e + 0 }' "$S/flaps")
FAILED=()
for w in rping perf-write perf-read perf-send nvme nfs; do
	ok=0 exc=0 bad=0 after=0
	while read -r name t0 t1 rc note; do
		[[ $name == "$w" ]] || continue
		if [[ $note == data-mismatch ]]; then
			bad=$((bad + 1))
			FAILED+=("$w: data mismatch in the round of $((t0 - END + SECS)) s")
		elif ((rc == 0)); then
			ok=$((ok + 1))
			((t0 > LAST_FLAP)) && after=$((after + 1))
		elif excused "$t0" "$t1"; then
			exc=$((exc + 1))
		else
			bad=$((bad + 1))
			FAILED+=("$w: a round failed (exit $rc) at $((t0 - END + SECS)) s, no link down near it")
		fi
	done <"$S/rounds"
	printf '   %-11s %4d passed %3d excused (link down) %3d failed\n' "$w" "$ok" "$exc" "$bad"
	((after > 0)) || FAILED+=("$w: no round passed after the last flap")
done
echo "   flaps: $(wc -l <"$S/flaps") ($(awk '{ print $3 }' "$S/flaps" | sort | uniq -c | tr '\n' ' '))"
over=$(($(awk '$3 > e { e = $3 } END { print e + 0 }' "$S/rounds") - END))
((over <= 0)) || echo "   overtime: the last round ended $over s after the time was up (up to $OVERTIME s for a worker still to recover)"
for f in "$S"/*.fails; do
	[[ -e $f ]] || continue
	echo "   ${f##*/}:"
	tail -n 6 "$f" | sed 's/^/   | /'
done

step "the devices' objects are back where they were"
# same_counts WANT [KIND...]
same_counts() {
	local want=$1
	shift
	[[ $(res_counts "$@") == "$want" ]]
}
until_ok 60 same_counts "$BASE" mr || {
	show_counts now "$(res_counts)"
	FAILED+=("with the load stopped, the rdma res counts differ from before it")
}
show_counts "after load" "$(res_counts)"

step "teardown"
ulp_nfs_down "$MNT"
ulp_nvme_down "$NQN"
qps_gone 60 siw0 || FAILED+=("QPs left on siw0 after the ULPs went")
# The RDMA core's CQ pool (nvmet-rdma and svcrdma take their CQs from
# it) stays with the device until it is unregistered: siw's leak check
# at unload counts those CQs.
until_ok 60 same_counts "$BASE0" cq || {
	show_counts now "$(res_counts)"
	FAILED+=("with the ULPs gone, the rdma res counts differ from before they came")
}
rdma link delete siw0
siw_pair_down
((${#FAILED[@]} == 0)) || fail "${#FAILED[@]} finding(s): $(printf '%s; ' "${FAILED[@]}")"
echo PASS
