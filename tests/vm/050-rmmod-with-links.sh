#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 120
# cost: 22
#
# rmmod siw with several links present removes all devices cleanly, and the
# module loads and works again afterwards.
. "$(dirname "$0")/lib.sh"

for round in 1 2 3; do
	step "round $round"
	siw_load
	ip link add dum$round type dummy
	rdma link add siw0 type siw netdev eth0
	rdma link add siw1 type siw netdev lo
	rdma link add siw2 type siw netdev dum$round
	ibv_devices | grep -c siw
	[[ $(ibv_devices | grep -c siw) == 3 ]] || fail "expected 3 devices"
	rmmod siw || fail "rmmod failed"
	ls /sys/class/infiniband/ | grep siw && fail "devices left after rmmod"
	ip link del dum$round
done
siw_unload
echo PASS
