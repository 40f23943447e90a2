#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 18
#
# Unregistering the netdev removes its siw device, also while a verbs user
# holds it open; deleting a namespace takes its veth (and the peer) along.
. "$(dirname "$0")/lib.sh"

siw_load

step "delete a dummy netdev under its link"
ip link add dum0 type dummy
ip link set dum0 up
rdma link add siw0 type siw netdev dum0
ip link del dum0
wait_for 10 bash -c '! [[ -e /sys/class/infiniband/siw0 ]]'

# events_wait SECS PATTERN: wait for ibv_asyncwatch (output in
# /tmp/events) to print PATTERN; on timeout show what it did print.
events_wait() {
	local end=$((SECONDS + $1))

	until grep -q "$2" /tmp/events; do
		if ((SECONDS >= end)); then
			cat /tmp/events
			fail "ibv_asyncwatch printed no '$2' within $1 s"
		fi
		sleep 0.2
	done
}

step "delete a veth while a verbs user has the device open"
ip link add va type veth peer name vb
ip link set va up
ip link set vb up
rdma link add siw1 type siw netdev va
stdbuf -oL ibv_asyncwatch -d siw1 >/tmp/events 2>&1 &
watch=$!
# It names its event FD once it has the device open (a loaded TCG guest
# took more than a second to get there).
events_wait 20 'async event FD'
ip link del va
wait_for 20 bash -c '! [[ -e /sys/class/infiniband/siw1 ]]'
# The open user context is disassociated and told DEVICE_FATAL;
# ibv_asyncwatch then blocks forever, so stop it.
events_wait 10 DEVICE_FATAL
kill "$watch"
wait "$watch" 2>/dev/null || true
cat /tmp/events

step "deleting a namespace removes the device of its veth peer too"
host_add a
ip link add va type veth peer name vb
ip link set vb netns a
ip link set va up
ip -n a link set vb up
rdma link add siw2 type siw netdev va
ip netns del a
wait_for 20 bash -c '! [[ -e /sys/class/infiniband/siw2 ]]'

siw_unload
echo PASS
