# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Shared helpers for guest test scripts (sourced inside the QEMU guest that
# tools/testing/vm/run boots). A script fails on the first failed check
# (set -e); the runner additionally fails it on kernel BUG/WARNING reports.

set -euo pipefail

# SIW_TEST_HOG=N (tests/run --hog N): N busy loops share the guest's CPUs
# with the test for its whole run, to bring out faults that only timing
# shows. They end with the guest.
hog_start() {
	local i
	for ((i = 0; i < $1; i++)); do
		(trap - EXIT; while :; do :; done) &
	done
}
[[ ${SIW_TEST_HOG:-0} =~ ^[0-9]+$ ]] && hog_start "${SIW_TEST_HOG:-0}"

# SIW_TEST_TRACE=1: every command the test runs, with the time it began,
# goes to $VM_JOB/trace.PID (bash xtrace): where a test spends its time,
# for the suite's budget (tools/testing/vm/trace-sum adds it up).
if [[ ${SIW_TEST_TRACE:-0} == 1 && -n ${VM_JOB:-} ]]; then
	exec {BASH_XTRACEFD}>>"$VM_JOB/trace.$$"
	PS4='+${EPOCHREALTIME} ${BASH_SOURCE[0]##*/}:${LINENO} '
	set -x
fi

# SIW_TEST_SLOW=N (tests/run --debug: the debug kernel, N times slower
# under TCG) stretches the bounds of wait_for, until_ok, srv_start and
# run_client N times: a bound says "this hangs", not how fast it is.
SLOW=${SIW_TEST_SLOW:-1}
[[ $SLOW =~ ^[1-9][0-9]*$ ]] || SLOW=1

# Print a step, so the console log tells where a failure happened, and
# when (the guest's uptime: where a test spends its time).
step() {
	local up
	read -r up _ </proc/uptime
	echo "== [${up%.*}s] $*"
}

# A matrix shared by a test's two runs. make check runs a test marked
# "# providers: stock ours" twice, on the stock libsiw and on ours
# (tools/libsiw/with-ours). Where the provider is one axis of a larger
# matrix (CRC mode, MPA revision, direction, size, tool), the two runs
# deal the other cells between them: tests/run sets SIW_TEST_SHARE to 0
# for the first run and 1 for the second, and "cell" deals the cells, in
# the order they are asked for, by the parity of the bits of their index
# (the Thue-Morse sequence: 0 1 1 0 1 0 0 1 ...). Every aligned pair of
# cells goes one to each run, and unlike plain alternation, a matrix
# whose rows have an even number of cells does not give the same column
# to the same run in every row. Each cell then runs once, and each
# provider meets every kind of cell. Cells must be asked for in the same
# order in both runs. tests/run sets SIW_TEST_SAMPLE=1 for make check;
# make check-full, or a run outside tests/run, runs every cell.
#
# A matrix too costly for make check even halved (the interop matrix)
# sets CELL_ROW=N, the cells of one setting (N tools, say): make check
# then runs one cell of each row, row r its column (r + r / N) mod N (a
# diagonal that shifts by one every N rows, so that a pattern of settings
# that repeats every N rows still meets every column), and deals the rows
# as above. Each setting then runs once and each column as often as any
# other; make check-full runs every cell.
CELL_NEXT=0 CELLS_RUN=0 CELL_ROW=0
cell() {
	local k=$CELL_NEXT owner=0 r
	CELL_NEXT=$((k + 1))
	if [[ ${SIW_TEST_SAMPLE:-0} == 1 ]] && ((CELL_ROW > 0)); then
		r=$((k / CELL_ROW))
		((k % CELL_ROW == (r + r / CELL_ROW) % CELL_ROW)) || return 1
		k=$r
	fi
	while ((k)); do
		owner=$((owner ^ (k & 1)))
		k=$((k >> 1))
	done
	if [[ ${SIW_TEST_SAMPLE:-0} == 1 && ${SIW_TEST_SHARE:-} =~ ^[01]$ ]] &&
		((owner != SIW_TEST_SHARE)); then
		return 1
	fi
	CELLS_RUN=$((CELLS_RUN + 1))
}

# full_or N_FULL N_CHECK: how many rounds of a repeated case to run:
# N_CHECK in make check (SIW_TEST_SAMPLE=1), N_FULL in make check-full or
# outside tests/run.
full_or() {
	if [[ ${SIW_TEST_SAMPLE:-0} == 1 ]]; then
		echo "$2"
	else
		echo "$1"
	fi
}

# cells_done: say how much of the matrix this run covered.
cells_done() {
	echo "   cells run here: $CELLS_RUN of $CELL_NEXT${SIW_TEST_SHARE:+ (share $SIW_TEST_SHARE of 2)}"
	((CELLS_RUN > 0)) || fail "no cell of the matrix ran"
}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

# Exit code 77 means "skipped" to tests/run.
skip() {
	echo "SKIP: $*"
	exit 77
}

# expect_fail CMD...: CMD must exit non-zero.
expect_fail() {
	if "$@"; then
		fail "expected failure: $*"
	fi
}

# A process costs a TCG guest about a quarter of a second (fork, exec,
# the dynamic loader) when two guests share this machine's cores, and the
# polling loops below ran one or two each turn. nap SECS sleeps without
# one: a read that times out on a pipe nobody writes to. file_has FILE ERE
# is grep -Eq without one, for the small logs the tests poll.
exec {NAP_FD}<> <(:)
nap() {
	read -rt "$1" -u "$NAP_FD" _ || true
}

file_has() {
	local l
	[[ -r $1 ]] || return 1
	while IFS= read -r l || [[ -n $l ]]; do
		[[ $l =~ $2 ]] && return 0
	done <"$1"
	return 1
}

# wait_for SECONDS CMD...: poll until CMD succeeds or SECONDS pass.
wait_for() {
	local t=$(($1 * SLOW)) end
	shift
	end=$((SECONDS + t))
	until "$@" >/dev/null 2>&1; do
		((SECONDS < end)) || fail "timed out after ${t}s waiting for: $*"
		nap 0.2
	done
}

# until_ok SECONDS CMD...: like wait_for, but returns 1 instead of failing
# the test; CMD's output of its last try is left in UNTIL_OK_OUT.
UNTIL_OK_OUT=
until_ok() {
	local end=$((SECONDS + $1 * SLOW))
	shift
	until UNTIL_OK_OUT=$("$@" 2>&1); do
		((SECONDS < end)) || return 1
		nap 0.2
	done
}

# qp_count [DEV]: how many QPs the RDMA core lists (of DEV only, if given).
qp_count() {
	rdma res show qp 2>/dev/null | grep -c "^link ${1:+$1/}" || true
}

qps_none() { [[ $(qp_count "${1:-}") == 0 ]]; }

# qps_gone SECS [DEV]: within SECS no QP is left (of DEV only, if given);
# else print those there are, for the log, and return 1. The caller says
# what failed.
qps_gone() {
	local secs=$1 dev=${2:-}
	until_ok "$secs" qps_none "$dev" && return 0
	echo "   QPs left after ${secs}s${dev:+ on $dev}:"
	rdma res show qp 2>&1 | sed 's/^/   | /'
	return 1
}

# Load the RDMA core modules our siw.ko needs (siw itself is loaded on
# demand by "rdma link add", or explicitly by siw_load).
rdma_core_load() {
	modprobe -a ib_core ib_uverbs iw_cm rdma_cm rdma_ucm libcrc32c
}

siw_load() {
	rdma_core_load
	modprobe siw
	grep -q '^siw ' /proc/modules || fail "siw did not load"
	siw_options_check
}

# tests/run --siw-options: each parameter reads back as asked (a boolean
# reads Y or N).
siw_options_check() {
	local o name want got
	for o in ${SIW_TEST_SIW_OPTIONS:-}; do
		name=${o%%=*} want=${o#*=}
		got=$(cat "/sys/module/siw/parameters/$name" 2>/dev/null) ||
			fail "siw has no parameter $name (--siw-options)"
		if [[ $got == [YN] ]]; then
			case $want in
			1 | [yY]*) want=Y ;;
			0 | [nN]*) want=N ;;
			esac
		fi
		[[ $got == "$want" ]] ||
			fail "siw loaded with $name=$got, not $want (--siw-options)"
	done
}

# klog: the kernel log of this test. Tests that share a guest
# (tools/testing/vm/group) see only what came after their own start. One
# pass that reads all of dmesg: a reader that stops early (sed q) gets its
# writer a SIGPIPE, and pipefail turned that into a failed klog once the
# shared guest's log was large (seen: 120 found no line it had printed).
klog() {
	dmesg | awk '/ vm-group: begin / { n = 0 } { l[n++] = $0 }
		END { for (i = 0; i < n; i++) print l[i] }'
}

# klog_has ERE: this test's kernel log has a line matching ERE (not
# "klog | grep -q", whose early exit would stop klog with a SIGPIPE).
klog_has() {
	local log
	log=$(klog)
	grep -Eq -- "$1" <<<"$log"
}

# Unload siw and check it left nothing behind.
siw_unload() {
	if grep -q '^siw ' /proc/modules; then
		rmmod siw || fail "rmmod siw failed"
	fi
	if klog | grep -E 'siw.*leak'; then
		fail "siw reported leaked objects"
	fi
}

# Name of the netdev an RDMA link is bound to, as "rdma link" reports it.
link_netdev() {
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* netdev \([^ ]*\).*/\1/p'
}

link_state() {
	rdma link show "$1/1" 2>/dev/null | sed -n 's/.* state \([A-Z_]*\).*/\1/p'
}

ib_exists() { [[ -e /sys/class/infiniband/$1 ]]; }

# Test "hosts" are network namespaces joined by veth pairs.
# host_add NAME
host_add() {
	ip netns add "$1"
	ip -n "$1" link set lo up
}

# host_link A B SUBNET: veth between A and B, addresses SUBNET.1 in A and
# SUBNET.2 in B (SUBNET like 10.99.1), device names v-A / v-B.
host_link() {
	local a=$1 b=$2 net=$3
	ip link add "v-$a" type veth peer name "v-$b"
	ip link set "v-$a" netns "$a"
	ip link set "v-$b" netns "$b"
	ip -n "$a" addr add "$net.1/24" dev "v-$a"
	ip -n "$b" addr add "$net.2/24" dev "v-$b"
	ip -n "$a" link set "v-$a" up
	ip -n "$b" link set "v-$b" up
}

# host_netem HOST DEV ARGS...: e.g. host_netem a v-a delay 5ms loss 1%
host_netem() {
	local h=$1 dev=$2
	shift 2
	ip netns exec "$h" tc qdisc replace dev "$dev" root netem "$@"
}

# on HOST CMD...: run CMD inside HOST's network namespace.
on() {
	local h=$1
	shift
	ip netns exec "$h" "$@"
}

# ---------------------------------------------------------------------------
# Traffic tests: two hosts with one RDMA device each.
#
# SIW_TEST_TYPE is the RDMA link type the traffic tests (2xx) put on both
# hosts: "siw" (ours, the default) or "linux_siw" (Linux's own siw, built by
# tools/linux-siw/build into build/linux-siw/KERNEL-RELEASE/siw_linux.ko). tools/testing/vm/run
# passes every SIW_TEST_* variable of its caller into the guest, so
#     SIW_TEST_TYPE=linux_siw tools/testing/vm/run tests/vm/200-rping.sh
# points a traffic test at Linux's siw.
SIW_TEST_TYPE=${SIW_TEST_TYPE:-siw}
LINUX_SIW_KO=${SIW_BUILD:-${SIW_SRC:-.}/build}/linux-siw/$(uname -r)/siw_linux.ko

# Loaded module of a link type ("siw" -> siw, "linux_siw" -> siw_linux).
link_type_module() {
	case $1 in
	siw) echo siw ;;
	linux_siw) echo siw_linux ;;
	*) fail "unknown link type '$1' (siw or linux_siw)" ;;
	esac
}

# link_type_load TYPE: load what "rdma link add ... type TYPE" needs.
# siw_linux.ko is not in the guest's depmod index, so it is insmod'ed.
link_type_load() {
	case $1 in
	siw) siw_load ;;
	linux_siw)
		rdma_core_load
		grep -q '^siw_linux ' /proc/modules && return 0
		[[ -f $LINUX_SIW_KO ]] ||
			fail "$LINUX_SIW_KO missing: build it with tools/linux-siw/build"
		insmod "$LINUX_SIW_KO" || fail "insmod $LINUX_SIW_KO failed"
		;;
	*) link_type_module "$1" ;;
	esac
}

# link_type_unload TYPE: rmmod the module of TYPE (with siw's leak check).
link_type_unload() {
	case $1 in
	siw) siw_unload ;;
	*)
		local m
		m=$(link_type_module "$1")
		if grep -q "^$m " /proc/modules; then
			rmmod "$m" || fail "rmmod $m failed"
		fi
		;;
	esac
}

port_active() {
	[[ $(cat "/sys/class/infiniband/$1/ports/1/state" 2>/dev/null) == *ACTIVE* ]]
}

# siw_pair TYPE_A TYPE_B: hosts (network namespaces) "a" and "b" joined by
# one veth pair (v-a 10.99.1.1 in a, v-b 10.99.1.2 in b, see host_link), an
# RDMA link of TYPE_A on v-a and one of TYPE_B on v-b, both ports ACTIVE.
# Sets and exports DEV_A, DEV_B (device names), IP_A, IP_B, TYPE_A, TYPE_B.
# RDMA devices are visible in every namespace (shared mode); rdma_cm picks
# the device from the route, so a tool run "on a" uses DEV_A. Undo with
# siw_pair_down. An EXIT trap stops servers left by a failing test.
siw_pair() {
	TYPE_A=$1 TYPE_B=$2
	link_type_load "$TYPE_A"
	link_type_load "$TYPE_B"
	DEV_A=$(pair_dev_name "$TYPE_A" a)
	DEV_B=$(pair_dev_name "$TYPE_B" b)
	IP_A=10.99.1.1 IP_B=10.99.1.2
	export TYPE_A TYPE_B DEV_A DEV_B IP_A IP_B
	host_add a
	host_add b
	host_link a b 10.99.1
	on a rdma link add "$DEV_A" type "$TYPE_A" netdev v-a ||
		fail "rdma link add $DEV_A type $TYPE_A failed"
	on b rdma link add "$DEV_B" type "$TYPE_B" netdev v-b ||
		fail "rdma link add $DEV_B type $TYPE_B failed"
	wait_for 20 port_active "$DEV_A"
	wait_for 20 port_active "$DEV_B"
	trap srv_stop_all EXIT
	echo "pair: a $DEV_A ($TYPE_A) $IP_A <-> b $DEV_B ($TYPE_B) $IP_B"
	pair_provider_check
}

# With RDMAV_DRIVERS set (tools/libsiw/with-ours), the provider that opens
# the pair's devices must be ours: libibverbs falls back to the stock one
# without a word when the path does not load.
pair_provider_check() {
	local dev out
	[[ -n ${RDMAV_DRIVERS:-} ]] || return 0
	for dev in "$DEV_A" "$DEV_B"; do
		out=$(VERBS_LOG_LEVEL=4 ibv_devinfo -d "$dev" 2>&1) ||
			fail "ibv_devinfo -d $dev: $out"
		grep -q 'siw project provider' <<<"$out" ||
			fail "RDMAV_DRIVERS=$RDMAV_DRIVERS, but $dev was not opened by our provider"
	done
	echo "provider: ours ($RDMAV_DRIVERS)"
}

# Device name for TYPE on host H: siw_a, lsiw_b, ...
pair_dev_name() {
	case $1 in
	siw) echo "siw_$2" ;;
	linux_siw) echo "lsiw_$2" ;;
	*) link_type_module "$1" ;;
	esac
}

# siw_pair_down: stop servers, delete both links and hosts, unload the
# modules (siw_unload checks for leaks).
siw_pair_down() {
	srv_stop_all
	rdma link delete "$DEV_A" 2>/dev/null || true
	rdma link delete "$DEV_B" 2>/dev/null || true
	ip netns del a 2>/dev/null || true
	ip netns del b 2>/dev/null || true
	wait_for 20 bash -c "! [[ -e /sys/class/infiniband/$DEV_A || -e /sys/class/infiniband/$DEV_B ]]"
	link_type_unload "$TYPE_A"
	[[ $TYPE_B == "$TYPE_A" ]] || link_type_unload "$TYPE_B"
}

# siw_param NAME VALUE: set a runtime parameter of our siw and read it back.
siw_param() {
	local f=/sys/module/siw/parameters/$1
	[[ -w $f ]] || fail "siw has no writable parameter $1"
	echo "$2" >"$f" || fail "cannot set siw $1=$2"
	[[ $(<"$f") == "$2" ]] || fail "siw $1 reads $(<"$f") after writing $2"
}

# Calls of a kernel function, counted by a kprobe (tracefs).
# kprobe_count_start NAME FUNC: arm probe NAME on FUNC, from 0 (returns 1
# when the kernel has no probe point FUNC). kprobe_count NAME: the calls
# so far. kprobe_count_stop NAME: remove it.
KPROBE_DIR=/sys/kernel/tracing
kprobe_count_start() {
	mountpoint -q "$KPROBE_DIR" ||
		mount -t tracefs nodev "$KPROBE_DIR" || fail "cannot mount tracefs"
	echo "p:$1 $2" >>"$KPROBE_DIR/kprobe_events" 2>/dev/null || return 1
	echo 1 >"$KPROBE_DIR/events/kprobes/$1/enable" ||
		fail "cannot enable kprobe $1"
}

kprobe_count() {
	awk -v n="$1" '$1 == n { print $2 }' "$KPROBE_DIR/kprobe_profile"
}

kprobe_count_stop() {
	echo 0 >"$KPROBE_DIR/events/kprobes/$1/enable"
	echo "-:$1" >>"$KPROBE_DIR/kprobe_events"
}

# Timing: now_ms, and timed CMD... which runs CMD, prints how long it took
# and returns CMD's status.
now_ms() {
	local t=${EPOCHREALTIME/./}
	echo $((t / 1000))
}

timed() {
	local t0 rc=0 ms
	t0=$(now_ms)
	"$@" || rc=$?
	ms=$(($(now_ms) - t0))
	printf '   took %d.%01ds (exit %d): %s\n' $((ms / 1000)) $((ms % 1000 / 100)) "$rc" "$*"
	return "$rc"
}

# Servers and clients. Every one is bounded by timeout(1) (TERM after the
# limit, KILL 5 s later) and runs in a host's namespace; output goes to a
# log file that the test inspects.
#
# srv_start HOST SECS LOG CMD...: start a server in the background; sets
# SRV_PID. srv_wait PID: its exit status (0 or the failing one).
SRV_PIDS=()
declare -A SRV_END=()
srv_start() {
	local h=$1 secs=$(($2 * SLOW)) log=$3
	shift 3
	# Line-buffered: a tool stopped by timeout(1) still leaves its log.
	on "$h" timeout -k 5 "$secs" stdbuf -oL -eL "$@" >"$log" 2>&1 &
	SRV_PID=$!
	SRV_PIDS+=("$SRV_PID")
	SRV_END[$SRV_PID]=$((SECONDS + secs + 5))
}

# srv_wait PID: its exit status; one still there well after its timeout
# is stuck (wait_bounded, 125).
srv_wait() {
	local rc=0 left=$((${SRV_END[$1]:-$SECONDS} - SECONDS))
	((left > 0)) || left=0
	wait_bounded "$1" $((left + 60 * SLOW)) "the server" || rc=$?
	return "$rc"
}

# srv_stop_all: kill every server this test started that is still running.
srv_stop_all() {
	local p
	for p in "${SRV_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		pkill -TERM -P "$p" 2>/dev/null || true
		kill "$p" 2>/dev/null || true
		wait_bounded "$p" $((10 + 60 * SLOW)) "a stopped server" || true
	done
	SRV_PIDS=()
}

# tree_of PID: PID and all its descendants.
tree_of() {
	local c
	echo "$1"
	for c in $(pgrep -P "$1" 2>/dev/null); do
		tree_of "$c"
	done
}

# wait_bounded PID SECS WHAT: wait for PID (a child of this shell, run
# under timeout(1)) to exit, as wait(1) would, but no longer than SECS: a
# tool that timeout(1) killed and that is still there is stuck in the
# kernel (an uninterruptible wait the hung-task check does not see, or a
# killable one that never ends). Then print each of its processes with
# its state and kernel stack, and a snapshot (stall_snapshot), and return
# 125 without waiting: the test fails with the evidence instead of
# hanging until its runner kills it.
wait_bounded() {
	local pid=$1 end=$((SECONDS + $2)) what=$3 p rc=0
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS >= end)); then
			echo "   $what (pid $pid) is still there $2 s on, after its timeout: stuck in the kernel"
			for p in $(tree_of "$pid"); do
				[[ -r /proc/$p/status ]] || continue
				echo "   task $p ($(<"/proc/$p/comm")): $(grep '^State:' "/proc/$p/status")"
				sed 's/^/     /' "/proc/$p/stack" 2>/dev/null
			done
			stall_snapshot 2>&1 | sed 's/^/   | /'
			return 125
		fi
		nap 0.2
	done
	wait "$pid" || rc=$?
	return "$rc"
}

# run_client HOST SECS LOG CMD...: run a client in the foreground; returns
# its exit status (124 when timeout(1) had to stop it; 125 when it was
# still there after that, see wait_bounded).
run_client() {
	local h=$1 secs=$(($2 * SLOW)) log=$3 pid wd rc=0 i
	shift 3
	rm -f "$log.stall"
	on "$h" timeout -k 5 "$secs" stdbuf -oL -eL "$@" >"$log" 2>&1 &
	pid=$!
	# A client still running 3 s before its timeout has stalled: look
	# at its QPs and sockets while they still exist.
	(sleep $((secs > 6 ? secs - 3 : secs)) &&
		kill -0 "$pid" 2>/dev/null && stall_snapshot >"$log.stall" 2>&1) &
	wd=$!
	wait_bounded "$pid" $((secs + 5 + 60 * SLOW)) "the client ($1)" || rc=$?
	# A snapshot under way may take longer than those 3 s in a loaded
	# guest: let it finish (20 s at most), its end is the kernel log.
	for ((i = 0; i < 20; i++)); do
		[[ -e $log.stall ]] && kill -0 "$wd" 2>/dev/null || break
		sleep 1
	done
	kill "$wd" 2>/dev/null || true
	wait "$wd" 2>/dev/null || true
	return "$rc"
}

# stall_snapshot: the QPs (with siw's engine state), the rdma_cm IDs (which
# QP is on which TCP connection) and TCP sockets of every host, blocked
# tasks and the kernel log's tail.
stall_snapshot() {
	local h
	echo "== rdma -dd res show qp"
	rdma -dd res show qp
	echo "== rdma res show cm_id"
	rdma res show cm_id
	# ss -tan lists every socket; with -m, -i or -o, ss 6.1 leaves out
	# the ones siw connected (not those it accepted), so both run.
	for h in $(ip netns list | cut -d' ' -f1); do
		echo "== ss -tan in $h"
		on "$h" ss -tan
		echo "== ss -tmnio in $h"
		on "$h" ss -tmnio
	done
	# Tasks in D state, with their stacks, into the kernel log.
	echo w >/proc/sysrq-trigger 2>/dev/null || true
	echo "== dmesg"
	dmesg | tail -n 60
}

# wait_listen HOST PORT PID: wait (up to 30 s, SLOW times that on the
# debug kernel) until a TCP listener on PORT exists in HOST: iWARP listens
# on a real TCP socket of the host. Fails at once if the server PID exits
# first.
wait_listen() {
	local h=$1 port=$2 pid=$3 end=$((SECONDS + 30 * SLOW))
	until [[ -n $(on "$h" ss -Hltn "sport = :$port" 2>/dev/null) ]]; do
		kill -0 "$pid" 2>/dev/null || return 1
		((SECONDS < end)) || return 1
		nap 0.2
	done
}

# siw_klog_tail: the kernel's last lines from a siw (every level: the
# console shows errors only), as "   kernel: ..." (tests/run shows them
# first when a test fails).
siw_klog_tail() {
	local k
	k=$(dmesg | grep -E '^\[ *[0-9.]+\] (linux_)?siw' | tail -n 8)
	[[ -z $k ]] || sed 's/^/   kernel: /' <<<"$k"
}

# show_log LOG [LINES]: print the tail of a log, indented.
show_log() {
	tail -n "${2:-20}" "$1" | sed 's/^/   | /'
	if [[ -s $1.stall ]]; then
		echo "   state when it stalled ($1.stall):"
		sed 's/^/   | /' "$1.stall"
	fi
}
