#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 10
#
# The kernel verbs path that ULPs (NFS/RDMA, iSER, NVMe-oF) use: the
# siw_ktest module (tests/kmod) allocates a PD with the local DMA lkey,
# flushes RC QPs through CQs (notify, resize with entries in flight,
# overflow) and checks SRQ attributes; it logs PASS/FAIL per case.
. "$(dirname "$0")/lib.sh"

ko=$SIW_SRC/tests/kmod/siw_ktest.ko
[[ -f $ko ]] || fail "$ko not built (tests/run builds it)"
siw_load
rdma link add siw0 type siw netdev eth0

insmod "$ko" dev=siw0
rmmod siw_ktest
klog | grep 'siw_ktest:' | tee /tmp/ktest
grep -q 'siw_ktest: done, [0-9]* passed, 0 failed' /tmp/ktest ||
	fail "kernel verbs cases failed"
[[ $(grep -c 'siw_ktest: PASS' /tmp/ktest) -ge 6 ]] || fail "cases missing"

rdma link delete siw0
siw_unload
echo PASS
