#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# The demo (make demo) runs this inside a QEMU guest: two "hosts" (network
# namespaces joined by veth), a siw link on each, and what the RDMA tools
# and the stock rdma-core provider see of them.
. "$SIW_SRC/tests/vm/lib.sh"

rdma_core_load
host_add alice
host_add bob
host_link alice bob 10.99.0

step "rdma link add siw_alice type siw netdev v-alice   (inside alice)"
on alice rdma link add siw_alice type siw netdev v-alice
step "rdma link add siw_bob type siw netdev v-bob       (inside bob)"
on bob rdma link add siw_bob type siw netdev v-bob

step "rdma link   (each host sees its own netdev)"
on alice rdma link show
on bob rdma link show
step "ibv_devices"
ibv_devices
step "ibv_devinfo -d siw_alice"
on alice ibv_devinfo -d siw_alice
step "module"
modinfo -F description siw
modinfo -F filename siw
