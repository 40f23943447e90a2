#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 16
#
# "rdma link add" autoloads siw and creates one device per netdev on
# Ethernet (virtio-net, dummy), veth and loopback; "rdma link delete"
# removes it; the module then unloads without leaks.
. "$(dirname "$0")/lib.sh"

rdma_core_load
grep -q '^siw ' /proc/modules && fail "siw loaded before the test"

step "autoload through the rdma-link-siw alias"
rdma link add siw0 type siw netdev eth0
grep -q '^siw ' /proc/modules || fail "siw was not autoloaded"
ib_exists siw0 || fail "siw0 not created"
[[ $(link_netdev siw0) == eth0 ]] || fail "siw0 not bound to eth0: $(rdma link)"

step "one device per netdev type"
ip link add dum0 type dummy
ip link set dum0 up
ip link add va type veth peer name vb
ip link set va up
ip link set vb up
rdma link add siw1 type siw netdev dum0
rdma link add siw2 type siw netdev va
rdma link add siw3 type siw netdev lo
rdma link show
for pair in siw1:dum0 siw2:va siw3:lo; do
	dev=${pair%%:*} nd=${pair#*:}
	[[ $(link_netdev "$dev") == "$nd" ]] || fail "$dev not bound to $nd"
	[[ $(cat "/sys/class/infiniband/$dev/node_type") == *RNIC* ]] ||
		fail "$dev node_type: $(cat "/sys/class/infiniband/$dev/node_type")"
done

step "GIDs are unique (loopback has no MAC of its own)"
gids=$(for d in siw0 siw1 siw2 siw3; do
	cat "/sys/class/infiniband/$d/ports/1/gids/0"
done)
echo "$gids"
[[ $(sort -u <<<"$gids" | wc -l) == 4 ]] || fail "GIDs not unique"
grep -q '^0000:0000:0000:0000:0000:0000:0000:0000$' <<<"$gids" && fail "zero GID"

step "delete each link"
for d in siw0 siw1 siw2 siw3; do
	rdma link delete "$d"
	ib_exists "$d" && fail "$d still present after delete"
done
[[ -z $(rdma link show 2>/dev/null | grep siw) ]] || fail "links left: $(rdma link)"

step "add again after delete, same name"
rdma link add siw0 type siw netdev eth0
ib_exists siw0 || fail "re-add failed"
rdma link delete siw0

siw_unload
echo PASS
