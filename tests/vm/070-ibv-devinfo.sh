#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 48
#
# ibv_devices and ibv_devinfo -v work through the stock rdma-core libsiw
# (ibverbs-providers): the device opens (ucontext), queries succeed and
# report an iWARP RNIC with sane limits.
. "$(dirname "$0")/lib.sh"

stock=$(ls /usr/lib/*/libibverbs/libsiw-rdmav*.so 2>/dev/null | head -n1)
[[ -n $stock ]] || fail "stock libsiw not installed (make deps)"
unset RDMAV_DRIVERS IBV_DRIVERS

siw_load
rdma link add siw0 type siw netdev eth0

step "ibv_devices"
ibv_devices | tee /tmp/devs
grep -q 'siw0' /tmp/devs || fail "siw0 not listed"

step "ibv_devinfo -v (opens a user context through $stock)"
ibv_devinfo -v -d siw0 | tee /tmp/info
field() { sed -n "s/^[[:space:]]*$1:[[:space:]]*//p" /tmp/info | head -n1; }
[[ $(field transport) == *iWARP* ]] || fail "transport: $(field transport)"
[[ $(field state) == PORT_ACTIVE* ]] || fail "port state: $(field state)"
[[ $(field link_layer) == Ethernet ]] || fail "link_layer: $(field link_layer)"
for f in max_qp max_qp_wr max_sge max_cq max_cqe max_mr max_pd max_srq \
	max_qp_rd_atom max_qp_init_rd_atom; do
	v=$(field "$f")
	[[ $v =~ ^[0-9]+$ && $v -gt 0 ]] || fail "$f = '$v'"
done
[[ $(field max_sge) -ge 6 ]] || fail "max_sge below SIW_MAX_SGE"
# ibv_devinfo hides GIDs whose last 8 bytes are zero (siw's MAC-based GID
# is one), so read GID 0 from sysfs.
gid=$(cat /sys/class/infiniband/siw0/ports/1/gids/0)
mac=$(tr -d ':' </sys/class/net/eth0/address)
[[ ${gid//:/} == "${mac}00000000000000000000" ]] || fail "GID 0 $gid not from MAC $mac"

step "the provider that opened the device is the stock one"
LD_DEBUG=files ibv_devinfo -d siw0 2>&1 >/dev/null | grep -q "file=$stock" ||
	grep -q "$(basename "$stock")" <(LD_DEBUG=files ibv_devinfo -d siw0 2>&1) ||
	fail "stock libsiw was not loaded"

step "sysfs and rdma tool agree"
[[ $(cat /sys/class/infiniband/siw0/node_type) == *RNIC* ]] || fail "node_type"
rdma dev show siw0 | tee /dev/stderr | grep -q 'node_type rnic' || fail "rdma dev"
cat /sys/class/infiniband/siw0/fw_ver
ls /sys/class/infiniband_verbs/ | grep -q uverbs || fail "no uverbs device"

step "open and close repeatedly (ucontext alloc/dealloc)"
for _ in $(seq 1 50); do ibv_devinfo -d siw0 >/dev/null || fail "open failed"; done

rdma link delete siw0
siw_unload
echo PASS
