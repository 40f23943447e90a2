#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
#
# rdma-core's own test suite (Debian python3-pyverbs) against siw0 through
# the stock provider, via tools/pyverbs-suite. Passes only with 0 failures
# and 0 errors. The suite skips its traffic tests on siw: it picks GIDs by
# itself and ignores those whose last 8 bytes are zero, which siw's
# MAC-based GID is ("No supported port is up, can't run traffic").
# Selection: tools/pyverbs-suite passes extra arguments to run_tests.py,
# which hands unknown ones to unittest: -k PATTERN, test names such as
# tests.test_mr.MRTest, --list-tests, --gid N (forces a GID index).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

/usr/bin/python3 -c 'import pyverbs' || fail "python3-pyverbs not installed"
siw_up

step "pyverbs suite on siw0"
rc=0
"$SIW_SRC/tools/pyverbs-suite" siw0 >/var/tmp/pyverbs.log 2>&1 || rc=$?
grep -E ' \.\.\. (FAIL|ERROR)$' /var/tmp/pyverbs.log || true
grep -E '^(FAIL|ERROR):' -A12 /var/tmp/pyverbs.log | head -n 150 || true
counts=$(grep '^pyverbs: ran' /var/tmp/pyverbs.log) ||
	{ tail -n 40 /var/tmp/pyverbs.log; fail "no counts line from pyverbs-suite"; }
step "why tests were skipped (count, reason)"
grep -oE "skipped ('[^']*'|\"[^\"]*\")" /var/tmp/pyverbs.log | sort | uniq -c |
	sort -rn | head -n 25 || true
echo "$counts"
((rc == 0)) || fail "pyverbs suite: $counts"

siw_down
echo PASS
