#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 14
#
# Links created from inside non-initial network namespaces (two "hosts"
# joined by veth), as the multi-host tests will do.
. "$(dirname "$0")/lib.sh"

rdma_core_load
host_add a
host_add b
host_link a b 10.99.1

step "rdma link add inside each namespace"
on a rdma link add siw-a type siw netdev v-a
on b rdma link add siw-b type siw netdev v-b
# rdma only names the netdev to callers in the netdev's own namespace.
on a rdma link show
[[ $(on a rdma link show siw-a/1) == *"netdev v-a"* ]] || fail "siw-a not on v-a"
[[ $(on b rdma link show siw-b/1) == *"netdev v-b"* ]] || fail "siw-b not on v-b"
on a ibv_devinfo -d siw-a | grep -q 'state:.*PORT_ACTIVE' || fail "siw-a not active"
on b ibv_devinfo -d siw-b | grep -q 'state:.*PORT_ACTIVE' || fail "siw-b not active"

step "a netdev of another namespace is not visible"
expect_fail on a rdma link add siw-x type siw netdev v-b 2>/dev/null

step "delete from inside, and by namespace removal"
on a rdma link delete siw-a
ib_exists siw-a && fail "siw-a left"
ip netns del b
wait_for 20 bash -c '! [[ -e /sys/class/infiniband/siw-b ]]'
ip netns del a
siw_unload
echo PASS
