#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 300
# cost: 45
# guest: own (iw_cm keeps the fake port mapper's registration for the rest of the boot)
#
# A lying port mapper. iw_cm takes port mappings from whoever answers on
# the RDMA netlink socket (tests/vm/tools/fake_iwpmd.py speaks its
# protocol), and siw's socket on a mapped port shares the port with the
# mapper's reservation (Documentation/iser.rst). So a mapping onto a
# port where a service of this host listens must not let siw listen
# there beside it and take its connections:
#   - a service listens on 10.97.0.1:8080; the mapper maps rping's listen
#     on 7000 to 8080: rdma_listen fails (EADDRINUSE), siw's log names
#     the listen, the mapped port and why, the service still has the one
#     listener on 8080 and answers;
#   - the mapper maps to 8081, where nothing listens: siw listens there
#     (not on 7000), and an rping through the mapper (its connect mapped
#     to 8081) passes, verified;
#   - nothing is left; siw unloads without leaks.
. "$(dirname "$0")/lib.sh"

[[ ${SIW_TEST_TYPE:-siw} == siw ]] || skip "tests our siw only"
IP=10.97.0.1
LOG=$VM_JOB/portmap
mkdir -p "$LOG"

rdma_core_load
siw_load
ip addr add "$IP/24" dev eth0
rdma link add siw0 type siw netdev eth0
wait_for 30 port_active siw0

step "a TCP service on $IP:8080"
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 8080))
s.listen(8)
while True:
    c, _ = s.accept()
    c.sendall(b"service\n")
    c.close()
' "$IP" >"$LOG/service.log" 2>&1 &
wait_for 30 bash -c "ss -Hltn 'sport = :8080' | grep -q ."
ask_service() {
	python3 -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 8080), timeout=10)
print(c.recv(64).decode().strip())' "$IP"
}
[[ $(ask_service) == service ]] || fail "the service does not answer"

FAKE_PID=
fake_start() {
	: >"$LOG/fake.log"
	python3 "$SIW_SRC/tests/vm/tools/fake_iwpmd.py" "$@" >"$LOG/fake.log" 2>&1 &
	FAKE_PID=$!
	wait_for 30 grep -q 'fake_iwpmd: up' "$LOG/fake.log"
}
fake_stop() {
	kill "$FAKE_PID" 2>/dev/null || true
	wait "$FAKE_PID" 2>/dev/null || true
}

step "the mapper maps a listen on 7000 onto the service's port: refused"
fake_start --listen-port 8080
m=$(klog | wc -l)
rc=0
timeout -k 5 $((60 * SLOW)) rping -s -a "$IP" -p 7000 -C 1 >"$LOG/rping-s1.log" 2>&1 || rc=$?
sed 's/^/   | /' "$LOG/fake.log"
grep -q "listen $IP:7000 mapped to $IP:8080" "$LOG/fake.log" ||
	fail "the fake mapper was not asked for the listen (iw_cm did not map it)"
((rc != 0 && rc != 124)) || fail "rping -s: exit $rc (want a failed listen): $(tail -n 2 "$LOG/rping-s1.log")"
echo "   rping -s: exit $rc: $(grep -m1 -i 'listen' "$LOG/rping-s1.log")"
why=$(klog | tail -n +"$((m + 1))" | grep 'cannot listen on' | head -n1)
echo "   kernel: ${why#*] }"
[[ $why == *"siw0: cannot listen on $IP:7000: iwpmd mapped it to port 8080, which siw cannot share: a TCP socket of this host listens there"* ]] ||
	fail "siw does not say why the listen failed: ${why:-no line}"
n=$(ss -Hltn 'sport = :8080' | wc -l)
((n == 1)) || fail "$n listeners on 8080: $(ss -Hltn 'sport = :8080')"
[[ $(ask_service) == service ]] || fail "the service stopped answering"
[[ -z $(rdma res show cm_id 2>/dev/null) ]] || fail "rdma_cm IDs left: $(rdma res show cm_id)"
fake_stop

step "the mapper maps to 8081, where nothing listens: rping through it passes"
fake_start --listen-port 8081 --remote-port 8081
timeout -k 5 $((120 * SLOW)) rping -s -a "$IP" -p 7001 -C 20 -S 4096 -V >"$LOG/rping-s2.log" 2>&1 &
spid=$!
wait_for 30 bash -c "ss -Hltn 'sport = :8081' | grep -q ."
[[ -z $(ss -Hltn 'sport = :7001') ]] || fail "siw listens on 7001, the port it was not mapped to"
timeout -k 5 $((120 * SLOW)) rping -c -a "$IP" -p 7001 -C 20 -S 4096 -V >"$LOG/rping-c2.log" 2>&1 ||
	fail "rping through the mapper failed: $(tail -n 3 "$LOG/rping-c2.log")"
wait "$spid" || fail "rping server failed: $(tail -n 3 "$LOG/rping-s2.log")"
sed 's/^/   | /' "$LOG/fake.log"
grep -q "connect .* -> $IP:7001 mapped to $IP:8081" "$LOG/fake.log" ||
	fail "the connect was not mapped by the fake mapper"
fake_stop

step "teardown"
wait_for 30 qps_none siw0
[[ -z $(rdma res show cm_id 2>/dev/null) ]] || fail "rdma_cm IDs left: $(rdma res show cm_id)"
[[ $(ask_service) == service ]] || fail "the service stopped answering"
rdma link delete siw0
siw_unload
echo PASS
