#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 12
#
# A second siw link on the same netdev is refused with a clear message and
# leaves the first one working; a second link with a taken name is refused.
. "$(dirname "$0")/lib.sh"

siw_load
rdma link add siw0 type siw netdev eth0

step "same netdev, other name"
if out=$(rdma link add siw1 type siw netdev eth0 2>&1); then
	fail "second link on eth0 accepted"
fi
echo "rdma said: $out"
ib_exists siw1 && fail "siw1 exists"
klog | grep -E 'siw.*eth0.*(already|exists)' ||
	fail "no kernel log line explaining the refusal"

step "same name, other netdev"
ip link add dum0 type dummy
if rdma link add siw0 type siw netdev dum0 2>/dev/null; then
	fail "duplicate name accepted"
fi
[[ $(link_netdev siw0) == eth0 ]] || fail "siw0 changed"

step "the first link still works"
ibv_devinfo -d siw0 | grep -q 'transport:.*iWARP' || fail "siw0 broken"

rdma link delete siw0
step "after delete, the netdev is free again"
rdma link add siw1 type siw netdev eth0
rdma link delete siw1
siw_unload
echo PASS
