#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 9
#
# Memory registration by an unprivileged process under a small
# RLIMIT_MEMLOCK: within the limit works, beyond it fails cleanly, the
# budget comes back after deregistration; MR access flags and keys
# (tests/progs/mr_limits.c).
. "$(dirname "$0")/lib.sh"
. "$SIW_SRC/tests/progs/guest.sh"

need_progs mr_limits
siw_up
ls -l /dev/infiniband/

step "mr_limits as nobody with RLIMIT_MEMLOCK 1024 KiB"
prog=$(unprivileged_copy mr_limits)
run_prog bash -c "ulimit -l 1024 && exec setpriv --reuid=65534 \
	--regid=65534 --clear-groups -- $prog siw0"

siw_down
echo PASS
