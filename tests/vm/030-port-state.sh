#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 20
#
# The port follows its netdev: ACTIVE when up with carrier, DOWN otherwise,
# with IB_EVENT_PORT_ERR / IB_EVENT_PORT_ACTIVE delivered to verbs users
# (watched with ibv_asyncwatch through the stock libsiw); MTU follows too.
. "$(dirname "$0")/lib.sh"

siw_load
ip link add va type veth peer name vb
ip link set va up
ip link set vb up
rdma link add siw0 type siw netdev va
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state ACTIVE"* ]]'

stdbuf -oL ibv_asyncwatch -d siw0 >/tmp/events 2>&1 &
watch=$!
# Events reach only contexts open at the time: wait until it has one.
wait_for 20 grep -q 'async event FD' /tmp/events

step "admin down"
ip link set va down
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state DOWN"* ]]'
ibv_devinfo -d siw0 | grep -q 'state:.*PORT_DOWN' || fail "devinfo not DOWN"

step "admin up"
ip link set va up
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state ACTIVE"* ]]'
ibv_devinfo -d siw0 | grep -q 'state:.*PORT_ACTIVE' || fail "devinfo not ACTIVE"

step "carrier loss (peer down) and back"
ip link set vb down
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state DOWN"* ]]'
ip link set vb up
wait_for 5 bash -c '[[ $(rdma link show siw0/1) == *"state ACTIVE"* ]]'

step "events seen by a verbs user"
wait_for 5 bash -c '[[ $(grep -c PORT_ACTIVE /tmp/events) -ge 2 ]]'
kill "$watch" || true
wait "$watch" 2>/dev/null || true
cat /tmp/events
[[ $(grep -c 'IBV_EVENT_PORT_ERR' /tmp/events) == 2 ]] ||
	fail "expected 2 PORT_ERR events"
[[ $(grep -c 'IBV_EVENT_PORT_ACTIVE' /tmp/events) == 2 ]] ||
	fail "expected 2 PORT_ACTIVE events"

step "MTU follows the netdev"
ip link set va mtu 1500
ibv_devinfo -d siw0 | grep -q 'active_mtu:.*1024' || fail "mtu 1500 -> 1024"
ip link set va mtu 9000
ibv_devinfo -d siw0 | grep -q 'active_mtu:.*4096' || fail "mtu 9000 -> 4096"

rdma link delete siw0
siw_unload
echo PASS
