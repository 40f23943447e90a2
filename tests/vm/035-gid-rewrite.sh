#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 27
#
# Address changes never hide the device from rdma_cm. Each "ip addr
# add/del" makes siw report IB_EVENT_GID_CHANGE, and the core rewrites its
# GID cache entry by entry; rdma_cm finds the device of a connection
# request (or of a local address) by the MAC-based GID in that cache, so
# the table keeps a second copy of it in its last entry (gid.c).
# gid_watch (tests/progs) snapshots the cache without pause while
# addresses come and go, and fails if one snapshot lacks the MAC GID, or
# if the table never changed while it watched.
. "$(dirname "$0")/lib.sh"

progs=${SIW_BUILD:-$SIW_SRC/build}/progs
siw_load
ip link add va type veth peer name vb
ip link set va up
ip link set vb up
ip addr add 10.97.0.1/24 dev va
rdma link add siw0 type siw netdev va
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state ACTIVE"* ]]'

gids=/sys/class/infiniband/siw0/ports/1/gids
step "GID 0 and the last GID are the MAC-based one"
mac=$(cat /sys/class/net/va/address)
g0=$(cat "$gids/0")
[[ ${g0//:/} == "${mac//:/}00000000000000000000" ]] || fail "GID 0 $g0 is not from MAC $mac"
g15=$(cat "$gids/15")
[[ $g15 == "$g0" ]] || fail "GID 15 is $g15, not a copy of GID 0 ($g0)"

step "the MAC GID is in every snapshot while addresses change"
"$progs/gid_watch" siw0 15 >/tmp/gid_watch.log 2>&1 &
watch=$!
changes=0
while kill -0 "$watch" 2>/dev/null; do
	ip addr add "fd00:97::$((changes % 200 + 1))/64" dev va nodad
	ip addr add "10.97.1.$((changes % 200 + 1))/24" dev va
	ip addr del "fd00:97::$((changes % 200 + 1))/64" dev va
	ip addr del "10.97.1.$((changes % 200 + 1))/24" dev va
	changes=$((changes + 4))
	sleep 0.05
done
wait "$watch" && rc=0 || rc=$?
cat /tmp/gid_watch.log
echo "   $changes address changes"
((rc == 0)) || fail "gid_watch exit $rc"

step "the table settles to the addresses left"
wait_for 5 grep -q '0000:0000:0000:0000:0000:ffff:0a61:0001' "$gids/1" ||
	fail "GID 1 is $(cat "$gids/1"), not 10.97.0.1"
[[ $(cat "$gids/15") == "$g0" ]] || fail "GID 15 is $(cat "$gids/15") after the changes"

rdma link delete siw0
siw_unload
echo PASS
