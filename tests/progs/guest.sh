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

# pyverbs_write_race LOG HEADER: is the failure HEADER of LOG (a line
# "ERROR: test_x (tests.mod.Class.test_x)") only the RDMA Write race of
# pyverbs' rdma_traffic? It reads the target buffer as soon as the
# writer's Write has completed. On iWARP that completion means TCP has
# the data (RFC 5040), not that the peer has placed it (Linux's siw does
# the same), so on a slow guest the reader may still see its own fill.
# It is the race when the test is a Write one (by its name, or by the
# call in its traceback) and the traceback ends in rdma_traffic's check
# with the two sides' fill characters swapped.
pyverbs_write_race() {
	local tb
	tb=$(awk -v h="$2" '$0 == h { p = 1; next }
		p && (/^=+$/ || /^Ran [0-9]+ tests?/) { exit }
		p' "$1")
	[[ $2 =~ rdma_write || $tb == *RDMA_WRITE* ]] || return 1
	grep -q ', in rdma_traffic$' <<<"$tb" || return 1
	grep -v '^-*$' <<<"$tb" | tail -n 1 |
		grep -Eq 'Data validation failure: expected (s+, received c+|c+, received s+)$'
}

# pyverbs_untolerated LOG: read failure headers of LOG on stdin, one per
# line; print those that are not pyverbs_write_race, and name the others
# in a NOTE.
pyverbs_untolerated() {
	local log=$1 t tolerated=
	while read -r t; do
		[[ -n $t ]] || continue
		if pyverbs_write_race "$log" "$t"; then
			tolerated+="   $t"$'\n'
		else
			echo "$t"
		fi
	done
	[[ -z $tolerated ]] ||
		echo -n "NOTE: an RDMA Write completed before its data showed at the peer (iWARP completes a Write once TCP has it):"$'\n'"$tolerated" >&2
}

# pyverbs_failures LOG: the failure headers of LOG, sorted, one each.
pyverbs_failures() {
	grep -E '^(FAIL|ERROR): ' "$1" | sort -u || true
}

# pyverbs_skips LOG: why tests were skipped (count, reason), most first.
pyverbs_skips() {
	grep -oE "skipped ('[^']*'|\"[^\"]*\")" "$1" | sort | uniq -c |
		sort -rn | head -n 25 || true
}
