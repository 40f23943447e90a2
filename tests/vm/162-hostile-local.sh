#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 360
# cost: 76
#
# What an unprivileged local user can do to siw. siw0 on eth0 (address
# $ADDR); the verbs programs run as user nobody with RLIMIT_MEMLOCK 64 MiB
# unless said otherwise; QPs of one device are connected to each other
# without rdma_cm (GID 1) or, where a case needs rdma_cm, over the
# guest's own address. Every case runs, bounded by timeout(1); the test
# fails at the end if any failed, naming each.
#   stag   STags are not predictable: the STag index of the first MR
#          registered after each of two loads of the module differs, and
#          is not 1 both times; of 8 MRs registered one after the other
#          none gets the index after its predecessor's
#          (tests/progs/stag_index). The low 8 bits (the key) are the
#          user's, part of the ABI.
#   steal  rdma_cm names a QP by number when its ID has none: no other
#          process, of another user (nobody) or of the same one (root),
#          may connect the QP of a root process (kept in INIT) to a peer,
#          neither with rdma_connect() nor with rdma_accept(); the
#          victim's QPs stay in INIT and the kernel log names each
#          refusal (tests/progs/qp_steal).
#   flip   a process flips the opcode of VALID slots of its own SQ between
#          RDMA Write and RDMA Read while it rings the doorbell, with ORD
#          = IRD = 1 (and small TCP send buffers, see case_flip): siw must
#          not send more Reads than the ORD, so the responder never
#          terminates for exceeding its IRD and every WR completes
#          (tests/progs/sqe_flip).
#   fault  CREATE_QP whose driver response is in a read-only page: each
#          fails with EFAULT, while another thread's rdma_connect() naming
#          the QP numbers those creates are about to get never finds one;
#          no QP is left, nothing warns (tests/progs/create_qp_fault).
#   read   an RDMA Read whose remote STag is of another PD than the
#          responder's QP: the Read completes with an error within a
#          bound, the responder is in ERROR, the kernel log names the
#          responder's QP and the refused Read; a second QP pair works
#          (tests/progs/pd_cross read).
#   send   a Send whose SGE is an MR of another PD than the QP's: it
#          completes with LOC_PROT_ERR, the QP goes to ERROR
#          (QP_ACCESS_ERR) and later WRs flush, also under repeated
#          doorbells; a second QP pair works (tests/progs/pd_cross send).
# Finally no QP is left and siw unloads without leaks. Arguments, if any,
# name the cases to run (default: all, in the order above).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

ADDR=10.99.18.1
CASES=()
for c in "$@"; do
	[[ -z $c ]] || CASES+=("$c")
done
((${#CASES[@]})) || CASES=(stag steal flip fault read send)
OUT=$(mktemp -d /var/tmp/162.XXXXXX)
chmod 755 "$OUT"
FAILED=()

need_progs pd_cross stag_index create_qp_fault sqe_flip qp_steal

# "${NOBODY[@]}" CMD...: CMD as user nobody, with a memlock limit.
NOBODY=(bash -c 'ulimit -l 65536 && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"' nobody)

# bounded SECS LOG CMD...: CMD under timeout(1), output to LOG and shown.
# SECS stretch with the guest's slowness (the debug kernel).
bounded() {
	local secs=$(($1 * SLOW)) log=$2 rc=0
	shift 2
	timeout -k 5 "$secs" "$@" >"$log" 2>&1 || rc=$?
	sed 's/^/   | /' "$log"
	((rc != 124)) || echo "   (timed out after ${secs}s)"
	return "$rc"
}

case_fail() {
	echo "FAIL: $1: $2" >&2
	FAILED+=("$1: $2")
}

# Kernel log lines since the mark of case $1.
mark() { echo "162: case $1 begins" >/dev/kmsg; }
klog_since() { dmesg | sed -n "/162: case $1 begins/,\$p"; }

# Kernel splats since the mark: a case that caused one failed. After an
# oops the kernel is not to be trusted (and siw may never unload): the
# test ends there.
splat_check() {
	local s
	s=$(klog_since "$1" | grep -E 'BUG:|WARNING:|Oops|general protection|refcount_t|list_(add|del) corruption|leaked' | head -n 5) || true
	[[ -z $s ]] && return 0
	case_fail "$1" "kernel splat: $(head -n1 <<<"$s")"
	if grep -qE 'BUG:|Oops|general protection' <<<"$s"; then
		printf '   failed: %s\n' "${FAILED[@]}"
		fail "kernel oops in case $1; the cases after it were not run"
	fi
}

copy() { unprivileged_copy "$1"; }

listening() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

# listener PORT SECS LOG: qp_steal's accepting listener (root) on $ADDR.
listener() {
	timeout -k 5 $(($2 * SLOW + 10)) "$progs/qp_steal" listen "$ADDR" "$1" $(($2 * SLOW)) \
		>"$3" 2>&1 &
	LISTENER=$!
	wait_for 20 listening "$1"
}


ip addr add "$ADDR/24" dev eth0
siw_up
wait_for 10 gid1_is_ipv4

case_stag() {
	local first=() i idx
	for i in 1 2; do
		if ((i == 2)); then
			siw_down
			siw_up
			wait_for 10 gid1_is_ipv4
		fi
		if ! bounded 30 "$OUT/stag$i.log" "${NOBODY[@]}" "$(copy stag_index)" siw0; then
			case_fail stag "stag_index failed (load $i)"
			return
		fi
		idx=$(sed -n 's/^first_index //p' "$OUT/stag$i.log")
		[[ -n $idx ]] || { case_fail stag "no first_index from load $i"; return; }
		first+=("$idx")
	done
	echo "   first STag index: $((first[0])) after one load, $((first[1])) after the next"
	if ((first[0] == 1 && first[1] == 1)); then
		case_fail stag "the first MR of a fresh device gets STag index 1 every time (predictable STags)"
	elif ((first[0] == first[1])); then
		case_fail stag "the first MR of a fresh device gets STag index ${first[0]} on both loads (predictable STags)"
	fi
}

case_steal() {
	local done=$OUT/victim.done log=$OUT/victim.log victim qs rc=0 port=7462 q
	"$progs/qp_steal" victim siw0 4 "$done" >"$log" 2>&1 &
	victim=$!
	wait_for 20 bash -c "(( \$(grep -c '^victim QP' $log) == 4 ))"
	mapfile -t qs < <(sed -n 's/^victim QP //p' "$log")
	echo "   victim (root): QPs ${qs[*]} in INIT"
	listener $port 60 "$OUT/listen-steal.log"

	# Another user, then another process of the same user (root too).
	echo "   nobody: rdma_connect naming QP ${qs[0]}"
	bounded 30 "$OUT/steal-connect.log" "${NOBODY[@]}" "$(copy qp_steal)" connect \
		"$ADDR" $port "${qs[0]}" || case_fail steal "rdma_connect by nobody naming root's QP ${qs[0]} was not refused"
	echo "   nobody: rdma_accept naming QP ${qs[1]}"
	bounded 30 "$OUT/steal-accept.log" "${NOBODY[@]}" "$(copy qp_steal)" accept \
		"$ADDR" $((port + 1)) "${qs[1]}" || case_fail steal "rdma_accept by nobody naming root's QP ${qs[1]} was not refused"
	echo "   another root process: rdma_connect naming QP ${qs[2]}"
	bounded 30 "$OUT/steal-connect-root.log" "$progs/qp_steal" connect \
		"$ADDR" $port "${qs[2]}" || case_fail steal "rdma_connect by another root process naming QP ${qs[2]} was not refused"
	echo "   another root process: rdma_accept naming QP ${qs[3]}"
	bounded 30 "$OUT/steal-accept-root.log" "$progs/qp_steal" accept \
		"$ADDR" $((port + 2)) "${qs[3]}" || case_fail steal "rdma_accept by another root process naming QP ${qs[3]} was not refused"

	touch "$done"
	wait "$victim" || rc=$?
	sed 's/^/   | /' "$log"
	((rc == 0)) || case_fail steal "the victim's QPs did not stay in INIT (exit $rc)"
	kill "$LISTENER" 2>/dev/null || true
	wait "$LISTENER" 2>/dev/null || true
	for q in "${qs[@]}"; do
		klog_since steal | grep -E "siw.*QP $q\b.*may not connect another process's QP" >/dev/null ||
			case_fail steal "no kernel log line names QP $q (the refusal)"
	done
}

case_flip() {
	local irds wmem
	# Small send buffers: the responder's socket stays full and its
	# transmitter inside one of its large Writes; a Read Request waits
	# in its IRD queue until that Write is out, and one too many is
	# refused at once.
	wmem=$(sysctl -n net.ipv4.tcp_wmem)
	sysctl -qw net.ipv4.tcp_wmem="4096 16384 65536"
	bounded 60 "$OUT/flip.log" "${NOBODY[@]}" "$(copy sqe_flip)" siw0 15 ||
		case_fail flip "sqe_flip failed: $(grep -m1 FAIL "$OUT/flip.log" || echo "exit status")"
	sysctl -qw net.ipv4.tcp_wmem="$wmem"
	irds=$(klog_since flip | grep -E 'siw.*(negotiated IRD|Terminate)' | head -n 3) || true
	if [[ -n $irds ]]; then
		sed 's/^/   kernel: /' <<<"$irds"
		case_fail flip "the responder terminated: $(head -n1 <<<"$irds" | sed 's/^\[[^]]*\] //')"
	fi
}

case_fault() {
	local port=7464 rc=0
	listener $port 60 "$OUT/listen-fault.log"
	bounded 45 "$OUT/fault.log" "${NOBODY[@]}" "$(copy create_qp_fault)" siw0 \
		"$ADDR" $port 5000 20 || rc=$?
	((rc == 0)) || case_fail fault "create_qp_fault: $(grep -m1 FAIL "$OUT/fault.log" || echo "exit $rc")"
	kill "$LISTENER" 2>/dev/null || true
	wait "$LISTENER" 2>/dev/null || true
	qps_gone 10 || case_fail fault "QPs left after the faulting creates"
}

case_read() {
	local qpn
	bounded 45 "$OUT/read.log" "${NOBODY[@]}" "$(copy pd_cross)" siw0 read ||
		case_fail read "pd_cross read: $(grep -m1 FAIL "$OUT/read.log" || echo "exit status")"
	qpn=$(sed -n 's/^responder QP //p' "$OUT/read.log")
	[[ -n $qpn ]] || return 0
	klog_since read | grep -iE "siw.*QP $qpn\b.*read" ||
		case_fail read "no kernel log line names the responder QP $qpn and the refused Read"
}

case_send() {
	bounded 45 "$OUT/send.log" "${NOBODY[@]}" "$(copy pd_cross)" siw0 send ||
		case_fail send "pd_cross send: $(grep -m1 FAIL "$OUT/send.log" || echo "exit status")"
}

for c in "${CASES[@]}"; do
	declare -F "case_$c" >/dev/null || fail "no case '$c'"
	step "$c"
	mark "$c"
	t0=$SECONDS
	"case_$c"
	echo "   ($c took $((SECONDS - t0))s)"
	splat_check "$c"
done

step "no QP left, siw unloads without leaks"
qps_gone 10 || FAILED+=("end: QPs left")
siw_down

if ((${#FAILED[@]})); then
	printf '   failed: %s\n' "${FAILED[@]}"
	fail "${#FAILED[@]} finding(s): ${FAILED[*]}"
fi
echo PASS
