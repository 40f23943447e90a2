# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Sourced, after tests/vm/lib.sh, by the guest tests that run the verbs
# test programs of tests/progs. The programs are built on the host by
# tests/run (make -C tests/progs) into build/progs; guest tests build
# nothing. A program exits 0 (pass), 1 (fail) or 77 (a kernel feature it
# needs says EOPNOTSUPP/ENOSYS), which skips the guest test.

progs=${SIW_BUILD:-${SIW_SRC:-/work/main}/build}/progs

# need_progs NAME...: the programs must be there.
need_progs() {
	local p
	for p in "$@"; do
		[[ -x $progs/$p ]] ||
			fail "$progs/$p missing: build it with make -C tests/progs (tests/run does)"
	done
}

# siw_up: siw0 on eth0, used through the stock rdma-core provider.
siw_up() {
	unset RDMAV_DRIVERS IBV_DRIVERS RDMAV_FORK_SAFE IBV_FORK_SAFE
	siw_load
	rdma link add siw0 type siw netdev eth0
}

# gid1_is_ipv4: GID 1 of siw0 is an IPv4-mapped address GID (eth0's first
# IPv4 address), which the programs that connect QPs without rdma_cm use.
gid1_is_ipv4() {
	grep -q '^0000:0000:0000:0000:0000:ffff:' \
		/sys/class/infiniband/siw0/ports/1/gids/1
}

# siw_down: delete siw0, unload siw, check for leaks.
siw_down() {
	rdma link delete siw0 2>/dev/null || true
	siw_unload
}

# unprivileged_copy NAME: a copy of program NAME that user nobody can run
# (the tree seen over 9p need not be readable by nobody); prints its path.
unprivileged_copy() {
	local dir
	dir=$(mktemp -d /var/tmp/progs.XXXXXX)
	cp "$progs/$1" "$dir/"
	chmod 755 "$dir" "$dir/$1"
	echo "$dir/$1"
}

# as_nobody CMD...: run CMD as user and group 65534 with no other groups.
as_nobody() {
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"
}

# run_prog CMD...: run a test program (or a wrapper around one); its exit
# 77 tears siw down and skips the guest test, any other failure fails it.
run_prog() {
	local rc=0
	"$@" || rc=$?
	case $rc in
	0) ;;
	77)
		siw_down
		skip "$(basename "$1"): a kernel verb it needs is not implemented yet"
		;;
	*) fail "$* exited $rc" ;;
	esac
}

# pyverbs_dir: where the pyverbs suite's logs go (the job directory when
# the runner keeps one, run --out DIR).
pyverbs_dir() {
	if [[ -n ${VM_JOB:-} && -w ${VM_JOB:-} ]]; then
		echo "$VM_JOB"
	else
		echo /var/tmp
	fi
}

# pyverbs_run LOG: rdma-core's pyverbs suite on siw0 (tools/pyverbs-suite)
# into LOG, with whatever provider RDMAV_DRIVERS picks. Prints the tests
# that failed or erred and sets PV_COUNTS to the suite's counts line
# ("pyverbs: ran N, ok N, ..."). Returns the suite's exit status.
pyverbs_run() {
	local log=$1 rc=0
	"$SIW_SRC/tools/pyverbs-suite" siw0 >"$log" 2>&1 || rc=$?
	grep -E ' \.\.\. (FAIL|ERROR)$' "$log" || true
	grep -E '^(FAIL|ERROR):' -A12 "$log" | head -n 150 || true
	PV_COUNTS=$(grep '^pyverbs: ran' "$log") ||
		{ tail -n 40 "$log"; fail "no counts line from pyverbs-suite ($log)"; }
	return "$rc"
}

# pyverbs_skips LOG: why tests were skipped (count, reason), most first.
pyverbs_skips() {
	grep -oE "skipped ('[^']*'|\"[^\"]*\")" "$1" | sort | uniq -c |
		sort -rn | head -n 25 || true
}
