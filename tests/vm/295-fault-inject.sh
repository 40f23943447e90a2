#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# cost: 300
# needs: debug-kernel
#
# Fault injection: siw's steps and the kernel's allocations fail on
# purpose while a workload makes, uses and destroys every object. Needs a
# kernel with fault injection (make check-debug's); elsewhere skipped,
# saying so. Hosts a and b (siw_pair); the workload, every part bounded:
#   obj_churn on siw_a, 2 rounds (PD, CQ, SRQ, QPs, MR; QPs connected
#     without rdma_cm; Send, Write, Read; everything destroyed), which
#     takes any error code but fails on a work request that neither
#     completes nor sits on a QP in ERROR, and on a destroy that fails;
#     it must not hang (60 s) either;
#   rping -C 2 from a to a server in b (listen, connect, accept, MPA,
#     data, disconnect): its client must end within 40 s, whatever it
#     got (a refused call, a rejected or failed connection); but after a
#     failed rdma_connect call rping waits for its CQ thread forever (its
#     own fault: nothing flushes the receive it posted), so it is stopped
#     then, and what it held must still go.
# Sweeps, each step ending with no QP or rdma_cm ID left within 20 s and
# no kernel report:
#   fail_function on each of siw's ALLOW_ERROR_INJECTION points (every one
#     the kernel lists for siw must be in POINTS), failing every call
#     (interval 1) and every third (interval 3); a kprobe counts the
#     calls, and a point the workload never reached fails the test; the
#     marker buffer's point with MPA markers on (mpa_markers=Y);
#   failslab and fail_page_alloc with the task filter: every N-th
#     allocation of obj_churn's rounds fails (sleeping ones too), N in
#     3 7 17 41 (slab) and 5 23 (pages); rping runs beside, not failed
#     (see ARM below).
# At the end siw unloads without leaks; on the debug kernel a kmemleak
# scan looks for leaks through siw (the runner).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only"
DBG=/sys/kernel/debug
FF=$DBG/fail_function
[[ -d $FF && -d $DBG/failslab && -d $DBG/fail_page_alloc ]] ||
	skip "needs a kernel with fault injection (fail_function, failslab, fail_page_alloc): make check-debug runs it; Debian's kernel has none"
need_progs obj_churn

POINTS=(siw_cep_alloc siw_cep_send siw_listener_add siw_listener_alloc
	siw_mem_create siw_mmap_add siw_mem_pin
	siw_qp_alloc_rings __siw_ring_alloc siw_tx_push siw_engine_init
	siw_tx_alloc_copy_buf siw_tx_alloc_mark_buf)
# Points that only a connection with MPA markers reaches: their sweeps run
# with mpa_markers=Y, so that both ends ask for them.
MARKER_POINTS=" siw_tx_alloc_mark_buf "

siw_pair siw siw
siw_param mpa_timeout_ms 2000
siw_param mpa_accept_timeout_ms 5000

step "siw's error injection points"
mapfile -t offered < <(awk '$2 == "[siw]" { print $1 }' "$FF/injectable")
echo "   ${#offered[@]} offered: ${offered[*]}"
for p in "${offered[@]}"; do
	[[ " ${POINTS[*]} " == *" $p "* ]] || fail "siw offers $p for error injection, but this test does not sweep it"
done
for p in "${POINTS[@]}"; do
	[[ " ${offered[*]} " == *" $p "* ]] || fail "$p is not among siw's error injection points"
done

FAILED=()
bad() {
	echo "   FAILED: $1"
	FAILED+=("$1")
}

# The task-filtered sweeps (failslab, fail_page_alloc) fail allocations of
# obj_churn only, and only from its first round on (OBJ_CHURN_ARM: it
# sets its own make-it-fail once its libraries are loaded and resident).
# Whatever a failing process reads or writes over 9p (its binary and
# libraries from the host root, a log in the job directory) can leave
# the guest's 9p client broken for every process: seen on the debug
# kernel, every later exec failed with EINVAL. So nothing armed touches
# 9p: obj_churn writes to a pipe, and rping (exec'd from the host root)
# is not armed.
ARM=

# stacks_of PID: state, wait channel and kernel stack of each thread.
stacks_of() {
	local t
	[[ -n $1 && -d /proc/$1 ]] || return 0
	echo "   rping client $1 still running: $(tr '\0' ' ' <"/proc/$1/cmdline")"
	for t in /proc/"$1"/task/*; do
		echo "   | thread ${t##*/}: $(awk '{ print $3 }' "$t/stat") in $(cat "$t/wchan")"
		sed 's/^/   |   /' "$t/stack" 2>/dev/null
	done
}

# workload WHAT: obj_churn, then rping a -> b; judged as said above.
workload() {
	local what=$1 rc=0 pid end own
	next_port
	on a timeout -k 5 $((60 * SLOW)) env OBJ_CHURN_WAIT_S=$((15 * SLOW)) \
		OBJ_CHURN_ARM="$ARM" stdbuf -oL "$progs/obj_churn" "$DEV_A" 2 2>&1 |
		cat >"$TLOG/churn.log" || true
	rc=${PIPESTATUS[0]}
	# Its own verdict (a hang, a leak) or a hang counts; an exit for
	# want of memory (the exec, libibverbs) is the injection's doing.
	if grep -q '^FAIL' "$TLOG/churn.log" || ((rc == 124 || rc == 137)); then
		sed 's/^/   | /' "$TLOG/churn.log" | tail -n 8
		bad "$what: obj_churn: $(grep -m1 FAIL "$TLOG/churn.log" || echo "hung (exit $rc)")"
	fi
	srv_start b 60 "$TLOG/rping.srv" rping -s -a "$IP_B" -p "$TPORT" -C 2
	sleep 0.5
	rc=0
	on a timeout -k 5 $((40 * SLOW)) stdbuf -oL rping -c -a "$IP_B" -p "$TPORT" -C 2 \
		>"$TLOG/rping.cli" 2>&1 &
	pid=$!
	end=$((SECONDS + 40 * SLOW - 10)) own=
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do
		# rping's own hang: when rdma_connect fails at once, the client
		# joins its CQ thread, which waits for a completion of the
		# receive it posted; nothing flushes it (rdma_cm leaves the QP
		# as it was, to be connected again or destroyed). Stopped after
		# 5 s (times SLOW); what it held is then checked like the rest.
		if [[ -z $own ]] && grep -q '^rdma_connect:' "$TLOG/rping.cli"; then
			own=$SECONDS
		elif [[ -n $own ]] && ((SECONDS > own + 5 * SLOW)); then
			echo "   rping client: rdma_connect failed ($(grep -m1 '^rdma_connect:' "$TLOG/rping.cli")), stopped: rping waits for its CQ thread forever then"
			pkill -x -n rping || true
			break
		fi
		nap 0.5
	done
	# Where a client that is about to be stopped waits: each thread's
	# state, wait channel and kernel stack. The newest rping is the
	# client (the server started first).
	kill -0 "$pid" 2>/dev/null && [[ -z $own ]] && stacks_of "$(pgrep -n -x rping)"
	wait "$pid" || rc=$?
	[[ -n $own ]] || ((rc != 124 && rc != 137)) ||
		bad "$what: the rping client hung (no end within $((40 * SLOW)) s): $(tail -n1 "$TLOG/rping.cli")"
	srv_stop_all
	echo "   obj_churn: $(tail -n1 "$TLOG/churn.log" | sed 's/^PASS: obj_churn//'); rping client exit $rc"
}

KBAD='BUG:|WARNING:|Oops|general protection|list_(add|del) corruption|refcount_t:|blocked for more than|soft lockup|rcu.*stall|KASAN:|UBSAN:|KFENCE:'
# settled WHAT K0: nothing left, no kernel report since line K0.
settled() {
	local k
	if ! until_ok 20 res_settled; then
		rdma res show qp | sed 's/^/   | /'
		rdma res show cm_id | sed 's/^/   | /'
		bad "$1: QPs or rdma_cm IDs left after 20 s"
	fi
	k=$(dmesg | tail -n +"$(($2 + 1))" | grep -E "$KBAD" | head -n 3) || true
	[[ -z $k ]] || bad "$1: kernel report: $(head -n1 <<<"$k")"
}

step "fail_function: every call, then every third, of each point"
echo 0 >"$FF/verbose"
echo 100 >"$FF/probability"
echo -1 >"$FF/times"
for p in "${POINTS[@]}"; do
	for n in 1 3; do
		k0=$(dmesg | wc -l)
		echo "== $p, interval $n"
		[[ $MARKER_POINTS == *" $p "* ]] && siw_param mpa_markers Y
		echo "$p" >"$FF/inject"
		echo "$n" >"$FF/interval"
		# After fail_function's own kprobe: of the probes on one
		# address, the last one registered runs first, and the
		# handler of a call that fails ends the run of handlers.
		kprobe_count_start fi_calls "$p" || fail "no kprobe on $p"
		workload "$p/$n"
		echo >"$FF/inject"
		siw_param mpa_markers N
		calls=$(kprobe_count fi_calls)
		echo "   $p called $calls times"
		[[ $calls != 0 ]] || bad "$p/$n: the workload never reached it"
		kprobe_count_stop fi_calls
		settled "$p/$n" "$k0"
	done
done

# sweep TYPE N...: the task-filtered sweep of one failure type.
sweep() {
	local what=$1 dir=$DBG/$1 n k0
	shift
	echo Y >"$dir/task-filter"
	echo 100 >"$dir/probability"
	echo -1 >"$dir/times"
	echo 0 >"$dir/verbose"
	echo N >"$dir/ignore-gfp-wait"
	[[ ! -e $dir/ignore-gfp-highmem ]] || echo N >"$dir/ignore-gfp-highmem"
	for n in "$@"; do
		k0=$(dmesg | wc -l)
		echo "== $what: every ${n}th allocation of obj_churn's rounds"
		echo "$n" >"$dir/interval"
		ARM=1 workload "$what/$n"
		echo 0 >"$dir/probability"
		settled "$what/$n" "$k0"
		echo 100 >"$dir/probability"
	done
	echo 0 >"$dir/probability"
}
step "failslab with the task filter"
sweep failslab 3 7 17 41
step "fail_page_alloc with the task filter"
sweep fail_page_alloc 5 23

step "teardown"
siw_pair_down
((${#FAILED[@]} == 0)) || fail "${#FAILED[@]} finding(s): ${FAILED[*]}"
echo PASS
