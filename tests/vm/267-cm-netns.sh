#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 240
# cost: 60
# needs: debug-kernel
#
# A network namespace goes away while connections to siw in it wait. A
# kernel socket holds no reference on its namespace, so siw must have
# released every socket of its own there before the namespace's exit
# returns. Host B's QP-connect listener (made by mem_victim qpc-arm) takes
# 4 TCP connections from A that send nothing (cm_flood.py silent): 4
# endpoints waiting for their MPA request, which belong to no device.
# tests/kmod/siw_kdelay.ko pauses each run of the endpoint work 1.5 s,
# then B's namespace is deleted. Before the fix the namespace's exit only
# queued the endpoints' end, and their sockets were released after the
# namespace was freed (KASAN: use-after-free in the TCP close path); now
# the exit waits for them. Needs the debug kernel: on Debian's kernel the
# freed namespace is read without a trace.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only"
need_progs mem_victim

PY=/usr/bin/python3
FLOOD=$(dirname "$(readlink -f "$0")")/tools/cm_flood.py
SYNC=/tmp/267-sync
mkdir -p "$SYNC"
rm -f "$SYNC"/*

siw_pair siw siw
siw_param mpa_timeout_ms 60000
QP_PORT=$(</sys/module/siw/parameters/qp_port)

step "B listens on the QP-connect port $QP_PORT in its namespace"
srv_start b 60 "$TLOG/qpc.log" "$progs/mem_victim" qpc-arm "$DEV_B" "$IP_A" \
	--ready "$SYNC/ready" --quit "$SYNC/quit" --wait 50
QPC_PID=$SRV_PID
wait_for 30 test -e "$SYNC/ready"
touch "$SYNC/quit"
srv_wait "$QPC_PID" || { show_log "$TLOG/qpc.log"; fail "mem_victim qpc-arm failed"; }
SRV_PIDS=()

step "4 silent connections from A to it"
srv_start a 120 "$TLOG/silent.log" "$PY" "$FLOOD" silent --server "$IP_B" \
	--port "$QP_PORT" --count 4 --until "$SYNC/done" --max-secs 100
SILENT_PID=$SRV_PID
wait_for 30 grep -q '^connected 4 of 4' "$TLOG/silent.log" ||
	{ show_log "$TLOG/silent.log"; fail "the 4 connections did not come up"; }
[[ $(on b ss -Htn "( sport = :$QP_PORT )" | grep -c '^ESTAB') == 4 ]] ||
	fail "B does not hold the 4 connections"

step "B's namespace goes while the endpoint work is paused"
insmod "$SIW_SRC/tests/kmod/siw_kdelay.ko" pause=siw_cep_work pause_entry=1 \
	pause_ms=1500 pause_left=4 || fail "insmod siw_kdelay failed"
ip netns del b
# The namespace's exit runs in a kernel worker; it is done when the
# device on its veth is gone and no pause is left.
wait_for 60 bash -c "! [[ -e /sys/class/infiniband/$DEV_B ]]" ||
	fail "$DEV_B still there 60 s after its namespace was deleted"
wait_for 30 bash -c '[[ $(</sys/module/siw_kdelay/parameters/pause_left) == 0 ]]' ||
	fail "the endpoint work was paused $((4 - $(</sys/module/siw_kdelay/parameters/pause_left))) of 4 times: nothing was tested"
sleep 3
rmmod siw_kdelay
touch "$SYNC/done"
srv_wait "$SILENT_PID" || true
SRV_PIDS=()

step "teardown"
siw_pair_down
echo PASS
