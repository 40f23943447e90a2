#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 180
# cost: 39
#
# A listener whose backlog is full. iw_cm keeps at most the listen backlog
# of connection requests that its consumer has not taken yet, and leaves
# the answer to the others to the driver. siw must refuse those at once
# (an MPA reject, logged), not leave the peer waiting for a reply until
# its MPA timeout.
#
# tests/kmod/siw_cmtest.ko listens with a backlog of 1 on siw0's address
# and takes 3 s to refuse each request it gets. Six rping clients connect
# at once, with mpa_timeout_ms=30000: every one must be refused
# (RDMA_CM_EVENT_REJECTED) within 20 s, the listener must have seen fewer
# requests than were made, and siw must have logged its refusals.
. "$(dirname "$0")/lib.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its log lines)"
ko=$SIW_SRC/tests/kmod/siw_cmtest.ko
[[ -f $ko ]] || fail "$ko not built (tests/run builds it)"

ip=10.97.0.1 port=20100 n=6 bound=20
siw_load
ip addr add "$ip/24" dev eth0
rdma link add siw0 type siw netdev eth0
wait_for 20 port_active siw0
siw_param mpa_timeout_ms 30000

step "a listener with a backlog of 1 that takes 3 s per request"
insmod "$ko" addr="$ip" port="$port" hold_ms=3000
klog_has "siw_cmtest: listening on $ip:$port" || fail "siw_cmtest does not listen"

step "$n rping clients at once"
logs=/tmp/backlog
mkdir -p "$logs"
pids=()
t0=$(now_ms)
for i in $(seq 1 "$n"); do
	timeout -k 5 60 stdbuf -oL -eL rping -c -d -a "$ip" -p "$port" -C 1 \
		>"$logs/$i" 2>&1 &
	pids+=($!)
done

# When each client learnt its fate (rping may hang after a refusal: the
# outcome is the CM event, not the exit).
declare -A when=()
while ((${#when[@]} < n)) && (($(now_ms) - t0 < bound * 1000)); do
	for i in $(seq 1 "$n"); do
		[[ -z ${when[$i]:-} ]] || continue
		grep -q 'RDMA_CM_EVENT_\(REJECTED\|UNREACHABLE\|CONNECT_ERROR\|ESTABLISHED\)' \
			"$logs/$i" && when[$i]=$(($(now_ms) - t0))
	done
	sleep 0.2
done
for p in "${pids[@]}"; do
	pkill -TERM -P "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
done

bad=0
for i in $(seq 1 "$n"); do
	ev=$(grep -o 'RDMA_CM_EVENT_[A-Z_]*' "$logs/$i" | grep -v 'ADDR_RESOLVED\|ROUTE_RESOLVED' |
		head -n1) || true
	echo "   client $i: ${ev:-no outcome} after ${when[$i]:-more than $((bound * 1000))} ms"
	if [[ $ev != RDMA_CM_EVENT_REJECTED ]]; then
		sed 's/^/   | /' "$logs/$i" | tail -n 8
		bad=$((bad + 1))
	fi
done

rmmod siw_cmtest
seen=$(klog | sed -n 's/.*siw_cmtest: listener saw \([0-9]*\) requests.*/\1/p' | tail -n1)
refused=$(klog | grep -c 'listen backlog full, connection request refused') || true
echo "   the listener saw ${seen:-?} requests, siw refused $refused for it"
((bad == 0)) || fail "$bad of $n clients were not refused within ${bound} s"
[[ -n $seen ]] && ((seen < n)) ||
	fail "the listener saw ${seen:-?} of $n requests: its backlog never filled"
((refused >= 1)) || fail "siw logged no refusal for a full backlog"
((seen + refused == n)) ||
	fail "requests: $seen reached the listener, $refused refused by siw, $n made"

step "teardown"
rdma link delete siw0
siw_unload
echo PASS
