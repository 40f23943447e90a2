#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 420
# cost: 201
#
# The connection manager (cm.c, cm_listen.c) against hostile peers and
# users, between hosts A and B:
#   stale   two listeners on B (ports P1, P2: two users). A peer's MPA
#           request on P1 is held without an answer until siw drops it
#           (mpa_accept_timeout_ms=2000 where the parameter exists,
#           otherwise the fixed 60 s), then a second peer sends one to P2.
#           The endpoint ID of the dropped request is free again by then
#           and the new request gets it: the P1 user's rdma_accept() of
#           its stale request must fail, not connect its QP to the peer of
#           P2, and the P2 request must still be accepted (ESTABLISHED).
#           The peers are plain TCP (tests/vm/tools/cm_flood.py request);
#           each accept carries "accepted on port N" as private data, so
#           the second peer tells whose accept answered it.
#   backlog rping -s on B (rdma_cm backlog 3); A opens 64 TCP connections
#           to it and sends nothing (cm_flood.py silent). At most
#           max(backlog, 16) = 16 of them may be siw's, endpoints waiting
#           for an MPA request (established, not in the accept queue); the
#           rest must wait in the listening socket's accept queue in B
#           (not empty), and a log line says so. Once A closes them, a
#           real rping client must still pass.
#   unanswered  a consumer that takes connection requests and never
#           answers them (tests/progs/cm_hostile hold, backlog 3) on B;
#           A opens 64 TCP connections to it, each sending one valid MPA
#           request (cm_flood.py silent --mpa) once it is up. While TCP
#           lets in more of them (looked at once a second, 10 to 40 s),
#           at most 16 may be siw's (a request reported and unanswered
#           holds its room like one still to come), siw must come to hold
#           16, then the rest wait in the accept queue, the consumer sees
#           at most 16 requests, and a log line says so.
#   orphan  a consumer destroys its listener after a request was reported
#           to it and then accepts the request (cm_hostile orphan): the
#           accept succeeds and the peer gets the MPA reply.
#   flood   a librdmacm program (tests/progs/cm_hostile cycle) creates,
#           binds to 0.0.0.0:P, listens with and destroys an rdma_cm ID,
#           1000 times or for 12 s, while A floods B's address on P with
#           TCP connections, each sending a valid MPA request at once
#           (tests/vm/tools/cm_flood.py flood; reset 200 ms later). v-b
#           has 14 IPv4 addresses, so each listen makes 14 listening
#           sockets: connections land on the first while the others are
#           still being made (their requests may reach the listener before
#           it is complete), and listeners are torn down while their
#           accept work runs.
#   inuse   the same while a plain TCP listener (python) holds the last of
#           those addresses on P: every rdma_listen() must fail with
#           EADDRINUSE, after 13 of its sockets listened already and took
#           connections (the error path).
#   child   a connection's first data reaches the callback its socket
#           copied from the listening socket while the accept work hooks
#           an endpoint to it. tests/kmod/siw_kdelay.ko pauses the accept
#           work 400 ms right before the hook swaps the socket's callbacks
#           (as tcp_sock_set_nodelay() returns) and holds each call of
#           siw_lsock_data_ready on a connection's socket 800 ms; 4 peers
#           (cm_flood.py request) send their MPA request 100 ms after
#           connecting to a persistent rping server in B. All 4 pauses must be used and each peer must get
#           its MPA reply. (Before the fix the held callback went on with
#           the new endpoint as its listening socket: 'refcount_t:
#           addition on 0' on the device's first word, an oops in the next
#           ib_umem_get().)
#   halfclose  a peer (cm_flood.py request --half-close) sends a valid
#           MPA request and a FIN right after it, to a persistent rping
#           server in B, which accepts. The FIN came while the request
#           waited for its answer; the connection it ends is the one the
#           accept makes: the peer must see it closed within 10 s of the
#           MPA reply. (Before the fix it stayed up, half closed, until
#           the consumer ended it.)
# In flood and inuse every call returns within 20 s (the program stops by
# itself after 12 s; one still there 90 s after it started, or 5 s after
# an oops, hangs in the kernel: its stacks are shown), no listener and no connection is left on
# P 30 s later, and the kernel stays clean (no oops, list or refcount
# report, hung task).
# The module unloads without leaks at the end. Cases run in the order
# stale, backlog, unanswered, orphan, child, halfclose, flood, inuse (the last two are the
# most likely to bring the kernel down); arguments pick some:
# 268-cm-hostile.sh flood inuse.
# Each case runs in a subshell: a failed one does not keep the next from
# running, and the kernel reports that came during a case fail it too.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$SIW_SRC/tests/progs/guest.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw only (its parameters and log lines)"
need_progs cm_hostile

ulimit -l unlimited
PY=/usr/bin/python3
FLOOD=$(dirname "$(readlink -f "$0")")/tools/cm_flood.py

# Connections of local port $2 in host $1 in state $3 (as ss names it).
conns() {
	on "$1" ss -Htan "( sport = :$2 )" | grep -c "^$3 " || true
}

# backlog_look HOST PORT: one look at the connections established on PORT
# in HOST: prints "Q T", those waiting in the listening socket's accept
# queue and those siw took. Each is told by its own socket: one that was
# accepted has a struct socket (an inode), one still queued has none
# (ino:0). (The listener's Recv-Q minus the established ones is not one
# snapshot: ss reads the listener before the connections, and one that
# arrives in between counted as taken.)
backlog_look() {
	on "$1" ss -Htane "( sport = :$2 )" 2>/dev/null | awk '
		$1 != "ESTAB" { next }
		/ ino:0 / { q++; next }
		{ t++ }
		END { print q + 0, t + 0 }'
}

# ---------------------------------------------------------------------------

case_stale() {
	local p1=21001 p2=21002 acc rc=0 reply
	step "stale: a request on port $p1 held until siw drops it, then one on port $p2"
	if [[ -e /sys/module/siw/parameters/mpa_accept_timeout_ms ]]; then
		siw_param mpa_accept_timeout_ms 2000
		acc=2
	else
		echo "   siw has no mpa_accept_timeout_ms: waiting its fixed 60 s"
		acc=60
	fi
	srv_start b $((acc + 150)) "$TLOG/stale.srv" \
		"$progs/cm_hostile" stale "$IP_B" "$p1" "$p2" $((acc + 60))
	wait_listen b "$p1" "$SRV_PID" && wait_listen b "$p2" "$SRV_PID" ||
		{ show_log "$TLOG/stale.srv"; fail "stale: cm_hostile does not listen"; }

	rc=0
	run_client a $((acc + 40)) "$TLOG/stale.c1" "$PY" "$FLOOD" request \
		--server "$IP_B" --port "$p1" --wait $((acc + 30)) --hold 1 || rc=$?
	echo "   peer 1 (port $p1):"
	show_log "$TLOG/stale.c1"
	((rc == 0)) || fail "stale: peer 1 saw neither an answer nor a close within $((acc + 30)) s (exit $rc)"
	# Dropped: closed, maybe after an MPA reject.
	grep -Eq '^closed by the server|^mpa reply .*: reject,' "$TLOG/stale.c1" ||
		fail "stale: peer 1's request was accepted, not dropped"

	rc=0
	run_client a 60 "$TLOG/stale.c2" "$PY" "$FLOOD" request \
		--server "$IP_B" --port "$p2" --wait 40 --hold 3 || rc=$?
	echo "   peer 2 (port $p2):"
	show_log "$TLOG/stale.c2"
	local src=0
	srv_wait "$SRV_PID" || src=$?
	SRV_PIDS=()
	echo "   cm_hostile stale (exit $src):"
	show_log "$TLOG/stale.srv"
	reply=$(sed -n "s/^mpa reply.*, pd '\(.*\)'$/\1/p" "$TLOG/stale.c2")
	[[ $reply != "accepted on port $p1" ]] ||
		fail "stale: the user of port $p1 accepted its dropped request, and that accept answered the peer of port $p2 (whose request got the dropped one's endpoint ID): its QP is connected to another user's peer"
	((src == 0)) || fail "stale: cm_hostile stale exit $src"
	((rc == 0)) || fail "stale: peer 2 exit $rc"
	[[ $reply == "accepted on port $p2" ]] ||
		fail "stale: peer 2 (port $p2) got no accept from port $p2 (its reply: '${reply:-none}')"
	wait_settled stale
}

case_backlog() {
	local port=21011 n=64 go=$TLOG/backlog.go fpid rc=0 q t maxq=0 held=0 i line
	step "backlog: $n silent TCP connections to an rping server (backlog 3)"
	# Endpoints that wait for their request live mpa_timeout_ms: long
	# enough here for a slow guest to look at them.
	siw_param mpa_timeout_ms 30000
	srv_start b 120 "$TLOG/backlog.srv" rping -s -V -a "$IP_B" -p "$port" -C 5
	wait_listen b "$port" "$SRV_PID" || { show_log "$TLOG/backlog.srv"; fail "backlog: rping -s does not listen"; }
	rm -f "$go"
	on a "$PY" "$FLOOD" silent --server "$IP_B" --port "$port" --count "$n" \
		--until "$go" --max-secs 60 >"$TLOG/backlog.flood" 2>&1 &
	fpid=$!
	wait_for 30 grep -q '^connected' "$TLOG/backlog.flood"
	# Those siw took wait for their request: established, not queued.
	for i in 1 2 3; do
		read -r q t < <(backlog_look b "$port")
		((q > maxq)) && maxq=$q
		((t > held)) && held=$t
		sleep 0.3
	done
	echo "   peer: $(grep '^connected' "$TLOG/backlog.flood")"
	echo "   in b, most seen in 3 looks: $held connections taken by siw (established, not queued), $maxq in the listening socket's accept queue"
	touch "$go"
	wait "$fpid" || true
	((held <= 16)) ||
		fail "backlog: siw took $held connections that sent nothing, each an endpoint waiting for its MPA request; at most max(backlog 3, 16) = 16 may wait"
	((maxq > 0)) ||
		fail "backlog: the listening socket's accept queue stayed empty: the connections siw did not take must wait there"
	line=$(klog | grep -E "siw_b: listener .* wait for their MPA request" | tail -n1) ||
		fail "backlog: no log line about endpoints waiting for their MPA request"
	echo "   log: ${line#*] }"
	run_client a 60 "$TLOG/backlog.cli" rping -c -V -a "$IP_B" -p "$port" -C 5 || rc=$?
	rping_end_ok "$rc" "$TLOG/backlog.cli" ||
		{ show_log "$TLOG/backlog.cli"; fail "backlog: rping client after the silent connections: exit $rc"; }
	rc=0
	srv_wait "$SRV_PID" || rc=$?
	SRV_PIDS=()
	rping_end_ok "$rc" "$TLOG/backlog.srv" ||
		{ show_log "$TLOG/backlog.srv"; fail "backlog: rping server exit $rc"; }
	echo "   rping -c -V -C 5 afterwards: passed"
	siw_param mpa_timeout_ms 10000
	wait_settled backlog
}

case_unanswered() {
	local port=21013 n=64 go=$TLOG/unanswered.go fpid q t maxq=0 held=0 i line reqs
	local full=0 looks='' refused
	step "unanswered: $n connections with an MPA request to a consumer that never answers"
	# Requests wait for their answer, and connections for their request,
	# longer than the case lasts: siw's room only fills.
	siw_param mpa_accept_timeout_ms 60000
	siw_param mpa_timeout_ms 60000
	rm -f "$go"
	srv_start b 120 "$TLOG/unanswered.srv" "$progs/cm_hostile" hold "$IP_B" "$port" 60 "$go"
	wait_listen b "$port" "$SRV_PID" || { show_log "$TLOG/unanswered.srv"; fail "unanswered: cm_hostile hold does not listen"; }
	on a "$PY" "$FLOOD" silent --mpa --server "$IP_B" --port "$port" --count "$n" \
		--until "$go" --max-secs 60 >"$TLOG/unanswered.flood" 2>&1 &
	fpid=$!
	wait_for 30 grep -q '^connected' "$TLOG/unanswered.flood"
	# TCP drops the SYNs beyond its accept queue (backlog 3); the peers
	# send them again after 1, 3, 7, 15 and 31 s. Requests that reach
	# iw_cm faster than it takes them (more than its backlog of 3 at
	# once) are refused at once ("listen backlog full") and free their
	# room, so the room may take a while to fill. Look once a second, at
	# least 10 s, until a connection waits in the accept queue after the
	# room was full (at most 40 s; the consumer holds up to 60 s, until
	# the file $go tells it and the peers to stop).
	for ((i = 1; ; i++)); do
		read -r q t < <(backlog_look b "$port")
		looks+=" $t/$q"
		((t >= 16)) && full=1
		((full && q > maxq)) && maxq=$q
		((t > held)) && held=$t
		((i >= 40 || (i >= 10 && maxq > 0))) && break
		sleep 1
	done
	refused=$(klog | grep -c "siw_b: connection $IP_B:$port -> .*listen backlog full") || true
	echo "   peer: $(grep '^connected' "$TLOG/unanswered.flood")"
	echo "   in b, taken by siw / in the accept queue, once a second:$looks"
	echo "   most seen: $held connections taken by siw, $maxq in the listening socket's accept queue once siw held 16"
	echo "   refused at once (listen backlog full): $refused"
	touch "$go"
	srv_wait "$SRV_PID" || { show_log "$TLOG/unanswered.srv"; fail "unanswered: cm_hostile hold failed"; }
	SRV_PIDS=()
	wait "$fpid" || true
	echo "   peer: $(grep '^closed all' "$TLOG/unanswered.flood")"
	reqs=$(sed -n 's/^requests //p' "$TLOG/unanswered.srv")
	echo "   the consumer saw ${reqs:-no} requests"
	siw_param mpa_timeout_ms 10000
	((held <= 16)) ||
		fail "unanswered: siw took $held connections whose requests nobody answers; at most max(backlog 3, 16) = 16 may wait (taken/queued once a second:$looks)"
	((${reqs:-99} <= 16)) ||
		fail "unanswered: the consumer got $reqs requests it never answered; at most 16 may wait"
	((full)) ||
		fail "unanswered: siw never held 16 connections in $i s while $n peers tried (most: $held; $refused refused because iw_cm's backlog was full; taken/queued once a second:$looks)"
	((maxq > 0)) ||
		fail "unanswered: the listening socket's accept queue stayed empty after siw held 16: the connections siw did not take must wait there (taken/queued once a second:$looks)"
	line=$(klog | grep -E "siw_b: listener $IP_B:$port: .* wait for their MPA request or its answer" | tail -n1) ||
		fail "unanswered: no log line about connections waiting for an answer"
	echo "   log: ${line#*] }"
	wait_settled unanswered
}

case_orphan() {
	local port=21014 rc=0 reply
	step "orphan: a request accepted after its listener was destroyed"
	srv_start b 60 "$TLOG/orphan.srv" "$progs/cm_hostile" orphan "$IP_B" "$port" 30
	wait_listen b "$port" "$SRV_PID" || { show_log "$TLOG/orphan.srv"; fail "orphan: cm_hostile orphan does not listen"; }
	run_client a 40 "$TLOG/orphan.cli" "$PY" "$FLOOD" request \
		--server "$IP_B" --port "$port" --wait 30 --hold 2 || rc=$?
	show_log "$TLOG/orphan.cli"
	local src=0
	srv_wait "$SRV_PID" || src=$?
	SRV_PIDS=()
	show_log "$TLOG/orphan.srv"
	((src == 0)) || fail "orphan: cm_hostile orphan exit $src"
	((rc == 0)) || fail "orphan: the peer exit $rc"
	reply=$(sed -n "s/^mpa reply.*: accept, pd '\(.*\)'$/\1/p" "$TLOG/orphan.cli")
	[[ $reply == "accepted on port $port" ]] ||
		fail "orphan: the peer got no accept (its reply: '${reply:-none}')"
	wait_settled orphan
}

# The process tree under PID: each task's kernel stack (where it waits).
stacks() {
	local p
	echo "   task $1 ($(cat "/proc/$1/comm" 2>/dev/null)):"
	sed 's/^/   | /' "/proc/$1/stack" 2>/dev/null || true
	for p in $(pgrep -P "$1"); do
		stacks "$p"
	done
}

# flood_addrs add|del: v-b gets (loses) 13 more addresses, 10.99.1.11-23;
# a wildcard listen then makes 14 listening sockets.
flood_addrs() {
	local i
	for i in $(seq 11 23); do
		if [[ $1 == add ]]; then
			echo "addr replace 10.99.1.$i/24 dev v-b"
		else
			echo "addr del 10.99.1.$i/24 dev v-b"
		fi
	done | on b ip -force -batch - 2>/dev/null || [[ $1 == del ]]
}

# flood_run NAME PORT MODE: cm_hostile cycle (MODE listen|eaddrinuse) on
# 0.0.0.0:PORT in B, 1000 cycles or 12 s, while A floods B:PORT. A
# cm_hostile still running 90 s later hangs in the kernel: its stacks are
# shown, and it fails.
flood_run() {
	local name=$1 port=$2 mode=$3 fpid cpid rc=0 end stop=$TLOG/$1.stop
	rm -f "$stop"
	on a "$PY" "$FLOOD" flood --server "$IP_B" --port "$port" --secs 120 \
		--until "$stop" --hold-ms 200 >"$TLOG/$name.flood" 2>&1 &
	fpid=$!
	wait_for 30 grep -q '^flooding' "$TLOG/$name.flood"
	on b "$progs/cm_hostile" cycle 0.0.0.0 "$port" 1000 12 "$mode" \
		>"$TLOG/$name.cyc" 2>&1 &
	cpid=$!
	# A task blocked for 30 s is reported by the kernel (hung task);
	# this bound is for a slow guest. An oops ends the wait 5 s later:
	# the program will not return.
	end=$((SECONDS + 90))
	while kill -0 "$cpid" 2>/dev/null && ((SECONDS < end)); do
		if ((end - SECONDS > 5)) && grep -Eq 'Oops|BUG:' <<<"$(dmesg | tail -n +"$((K0 + 1))")"; then
			end=$((SECONDS + 5))
		fi
		sleep 0.5
	done
	touch "$stop"
	wait "$fpid" || true
	echo "   $(grep -v '^flooding' "$TLOG/$name.flood")"
	if kill -0 "$cpid" 2>/dev/null; then
		stacks "$cpid"
		show_log "$TLOG/$name.cyc" 6
		fail "$name: cm_hostile cycle has not returned (its cycles end after 12 s): hung in the kernel"
	fi
	wait "$cpid" || rc=$?
	show_log "$TLOG/$name.cyc" 6
	((rc == 0)) || fail "$name: cm_hostile cycle exit $rc"
	# While listens fail, connections land only in the moments between
	# the first socket's listen and the failed bind: none is no fault.
	grep -Eq 'flood: .* [1-9][0-9]* connected' "$TLOG/$name.flood" ||
		[[ $mode == eaddrinuse ]] ||
		fail "$name: no connection of the flood reached a listener: nothing was tested"
}

# flood_settled NAME PORT: within 30 s no listener and no connection is
# left on PORT (the flood resets what it opened; siw's MPA timeout, 10 s,
# ends what it did not).
flood_settled() {
	local end=$((SECONDS + 30))
	until [[ $(conns b "$2" ESTAB) == 0 && -z $(on b ss -Hltn "( sport = :$2 )") &&
		-z $(on a ss -Hltn "( sport = :$2 )") ]]; do
		if ((SECONDS >= end)); then
			on b ss -tan "( sport = :$2 )" | head -n 20 | sed 's/^/   | /'
			fail "$1: connections or listeners left on port $2 30 s after the last listener went"
		fi
		sleep 0.2
	done
	wait_settled "$1"
}

case_flood() {
	local port=21021
	step "flood: listen/destroy cycles on 0.0.0.0:$port (14 addresses) under a connect flood"
	flood_addrs add
	flood_run flood "$port" listen
	flood_settled flood "$port"
	flood_addrs del
}

case_inuse() {
	local port=21022 blk=10.99.1.23
	step "inuse: the same with $blk:$port held by a TCP listener: every listen fails"
	flood_addrs add
	srv_start b 80 "$TLOG/inuse-blocker.log" "$PY" -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2])))
s.listen(8)
time.sleep(75)' "$blk" "$port"
	wait_listen b "$port" "$SRV_PID" || fail "inuse: the blocking listener does not listen"
	flood_run inuse "$port" eaddrinuse
	srv_stop_all
	flood_settled inuse "$port"
	flood_addrs del
}

case_child() {
	local port=21023 i rc ko=$SIW_SRC/tests/kmod/siw_kdelay.ko left pleft
	step "child: 4 MPA requests that arrive while the accept work hooks their socket"
	insmod "$ko" func=siw_lsock_data_ready ms=800 left=4 \
		pause=tcp_sock_set_nodelay pause_ms=400 pause_left=4 ||
		fail "child: insmod $ko failed"
	srv_start b 120 "$TLOG/child.srv" rping -s -P -a "$IP_B" -p "$port"
	wait_listen b "$port" "$SRV_PID" || { rmmod siw_kdelay; fail "child: rping -s does not listen"; }
	for i in 1 2 3 4; do
		rc=0
		run_client a 30 "$TLOG/child.c$i" "$PY" "$FLOOD" request \
			--server "$IP_B" --port "$port" --after-ms 100 --wait 20 --hold 0 || rc=$?
		grep -q '^mpa reply .*: accept,' "$TLOG/child.c$i" || {
			show_log "$TLOG/child.c$i"
			rmmod siw_kdelay
			fail "child: peer $i got no MPA reply (exit $rc)"
		}
	done
	left=$(</sys/module/siw_kdelay/parameters/left)
	pleft=$(</sys/module/siw_kdelay/parameters/pause_left)
	rmmod siw_kdelay
	echo "   4 requests answered; accept work paused $((4 - pleft)) times, the listener's callback ran on a connection's socket $((4 - left)) times"
	((pleft == 0)) || fail "child: the accept work was paused $((4 - pleft)) of 4 times: the window was not tested"
	srv_stop_all
	wait_settled child
}

case_halfclose() {
	local port=21024 rc=0 secs
	step "halfclose: a peer's FIN that comes with its MPA request"
	srv_start b 60 "$TLOG/halfclose.srv" rping -s -P -a "$IP_B" -p "$port"
	wait_listen b "$port" "$SRV_PID" || fail "halfclose: rping -s does not listen"
	run_client a 40 "$TLOG/halfclose.cli" "$PY" "$FLOOD" request \
		--server "$IP_B" --port "$port" --half-close --wait 20 --hold 20 || rc=$?
	show_log "$TLOG/halfclose.cli"
	grep -q '^mpa reply .*: accept,' "$TLOG/halfclose.cli" ||
		fail "halfclose: the peer got no accept (exit $rc)"
	secs=$(sed -n 's/^\(closed\|reset\) by the server after \([0-9]*\)\..*/\2/p' "$TLOG/halfclose.cli")
	[[ -n $secs ]] ||
		fail "halfclose: the connection was still up 20 s after the accept: the FIN that came before it was lost"
	((secs <= 10)) || fail "halfclose: the connection ended $secs s after the accept, more than 10"
	((rc == 0)) || fail "halfclose: the peer exit $rc"
	srv_stop_all
	wait_settled halfclose
}

# ---------------------------------------------------------------------------

# Kernel reports that appeared while a case ran.
KBAD='BUG:|WARNING:|Oops|general protection|list_(add|del) corruption|refcount_t:|blocked for more than|soft lockup|rcu.*stall'

siw_pair siw siw
siw_param mpa_timeout_ms 10000

cases=()
for c in "$@"; do
	[[ -z $c ]] || cases+=("$c")
done
((${#cases[@]})) || cases=(stale backlog unanswered orphan child halfclose flood inuse)
failed=()
for c in "${cases[@]}"; do
	declare -F "case_$c" >/dev/null || fail "no case '$c' (stale, backlog, unanswered, orphan, child, halfclose, flood, inuse)"
	K0=$(dmesg | wc -l)
	t0=$SECONDS rc=0
	# A subshell per case: its first failed check ends it, the next
	# case still runs.
	(trap srv_stop_all EXIT; "case_$c") &
	wait $! || rc=$?
	kbad=$(dmesg | tail -n +"$((K0 + 1))" | grep -E "$KBAD" | head -n 5) || true
	if [[ -n $kbad ]]; then
		sed 's/^/   kernel: /' <<<"$kbad"
		echo "FAIL: $c: the kernel reported a problem" >&2
		rc=1
	fi
	echo "   ($c: $((SECONDS - t0)) s)"
	if ((rc != 0)); then
		failed+=("$c")
		siw_klog_tail
	fi
done
((${#failed[@]} == 0)) || fail "cases failed: ${failed[*]}"

step "teardown"
siw_pair_down
echo PASS
