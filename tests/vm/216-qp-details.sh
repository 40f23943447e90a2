#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 360
# cost: 60
#
# What siw tells an admin about its QPs, checked against known traffic
# between hosts a and b (our siw on both):
#  - "rdma -dd res show qp" (restrack.c) while one rdma_cm connection
#    (tests/vm/tools/cm_xfer.py) is up and idle, before and after 24 RDMA
#    Writes of 64 KiB and one RDMA Read of 40 KiB: both QPs in iWARP RTS,
#    each one's local address the other's peer, one MPA revision and CRC
#    setting on both, IRD and ORD 1..4 (4 asked); a's tx_bytes grew by
#    exactly 24 x 64 KiB and b's rx_bytes as much, b's tx_bytes and a's
#    rx_bytes by 40 KiB, the FPDUs one QP sent are those the other got,
#    and b's device counter rx_fpdus grew as its QP's did;
#  - the tracepoints (trace.h, events/siw/ in a tracefs instance of its
#    own) during one rping: each endpoint's CM states in order (active:
#    CONNECTING, AWAIT_REPLY, CONNECTED, CLOSED; passive: AWAIT_REQUEST,
#    REQUESTED, CONNECTED, CLOSED), both QPs to RTS and on to ERROR, one
#    siw_fpdu_tx per FPDU the device counted and one siw_fpdu_rx on the
#    other side for each, the four opcodes rping uses, no Terminate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"

[[ $SIW_TEST_TYPE == siw ]] || skip "tests our siw's QP details and tracepoints"
PY=/usr/bin/python3
TOOLS=$SIW_SRC/tests/vm/tools
siw_pair siw siw

WRITES=24 SIZE=65536 READ=40960

# qp_json HOST DEV LQPN FILE: the QP's "rdma -j -dd res show qp" entry.
qp_json() {
	on "$1" rdma -j -dd res show qp link "$2/1" lqpn "$3" >"$4" ||
		fail "rdma res show qp link $2/1 lqpn $3 failed"
}

step "one connection, idle: QP details on both sides"
next_port
srv_start b 120 "$TLOG/xfer.srv" "$PY" "$TOOLS/cm_xfer.py" server "$IP_B" "$TPORT" "$SIZE"
SRV=$SRV_PID
wait_listen b "$TPORT" "$SRV" || { show_log "$TLOG/xfer.srv"; fail "cm_xfer.py does not listen"; }
# The client paces itself by lines on its stdin: a pipe from this shell.
coproc XFER {
	on a timeout -k 5 $((120 * SLOW)) stdbuf -oL -eL "$PY" "$TOOLS/cm_xfer.py" \
		client "$IP_B" "$TPORT" "$WRITES" "$SIZE" "$READ" >"$TLOG/xfer.cli" 2>&1
}
CLI=$XFER_PID
SRV_PIDS+=("$CLI")
exec 7>&"${XFER[1]}"
until_ok 60 grep -q '^ready qpn' "$TLOG/xfer.cli" ||
	{ show_log "$TLOG/xfer.cli"; show_log "$TLOG/xfer.srv"; fail "the client did not connect"; }
until_ok 30 grep -q '^server qpn' "$TLOG/xfer.srv" ||
	{ show_log "$TLOG/xfer.srv"; fail "the server did not report its QP"; }
step "connected"
qa=$(awk '/^ready qpn/ { print $3 }' "$TLOG/xfer.cli")
qb=$(awk '/^server qpn/ { print $3 }' "$TLOG/xfer.srv")
echo "   a: $DEV_A QP $qa, b: $DEV_B QP $qb"
qp_json a "$DEV_A" "$qa" "$TLOG/a0.json"
qp_json b "$DEV_B" "$qb" "$TLOG/b0.json"
rx0=$(dev_stat b "$DEV_B" rx_fpdus)
on a rdma -dd res show qp link "$DEV_A/1" lqpn "$qa" | sed 's/^/   | /'

step "$WRITES RDMA Writes of $SIZE bytes and an RDMA Read of $READ, a to b"
echo go >&7
until_ok 60 grep -q '^done' "$TLOG/xfer.cli" ||
	{ show_log "$TLOG/xfer.cli"; fail "the transfer did not finish"; }
sed 's/^/   /' "$TLOG/xfer.cli"
qp_json a "$DEV_A" "$qa" "$TLOG/a1.json"
qp_json b "$DEV_B" "$qb" "$TLOG/b1.json"
rx1=$(dev_stat b "$DEV_B" rx_fpdus)
echo bye >&7
exec 7>&-
rc=0
srv_wait "$CLI" || rc=$?
((rc == 0)) || { show_log "$TLOG/xfer.cli"; fail "cm_xfer.py client exit $rc"; }
rc=0
srv_wait "$SRV" || rc=$?
((rc == 0)) || { show_log "$TLOG/xfer.srv"; fail "cm_xfer.py server exit $rc"; }

step "the details and their deltas"
"$PY" - "$TLOG" "$WRITES" "$SIZE" "$READ" "$((rx1 - rx0))" <<'EOF' || fail "QP details"
import json
import sys

d, writes, size, read, dev_rx = sys.argv[1], *map(int, sys.argv[2:])


def load(name):
    with open("%s/%s.json" % (d, name)) as f:
        qps = json.load(f)
    if len(qps) != 1:
        sys.exit("FAIL: %s: %d QPs, expected 1" % (name, len(qps)))
    # iproute2 prints siw's attributes as "drv_NAME".
    return {k[4:]: v for k, v in qps[0].items() if k.startswith("drv_")}


a0, b0, a1, b1 = (load(n) for n in ("a0", "b0", "a1", "b1"))
bad = []


def need(ok, what):
    print("   %s %s" % ("ok  " if ok else "BAD ", what))
    if not ok:
        bad.append(what)


for side, q in (("a", a1), ("b", b1)):
    missing = [k for k in ("iwarp_state", "local", "peer", "mpa_rev", "crc",
                           "ird", "ord", "fpdu_size", "tx_fpdus", "tx_bytes",
                           "rx_fpdus", "rx_bytes") if k not in q]
    if missing:
        sys.exit("FAIL: %s's QP has no %s: %s" % (side, ", ".join(missing),
                                                  json.dumps(q)))
    need(q["iwarp_state"] == "rts", "%s: iwarp_state %s" % (side, q["iwarp_state"]))
    need(q["mpa_rev"] in (1, 2), "%s: mpa_rev %s" % (side, q["mpa_rev"]))
    need(1 <= q["ird"] <= 4 and 1 <= q["ord"] <= 4,
         "%s: ird %s ord %s (4 asked)" % (side, q["ird"], q["ord"]))
    need(q["fpdu_size"] in ("segment", "large", "fixed"),
         "%s: fpdu_size %s" % (side, q["fpdu_size"]))
need(a1["local"] == b1["peer"] and b1["local"] == a1["peer"],
     "addresses: a %s -> %s, b %s -> %s" % (a1["local"], a1["peer"],
                                            b1["local"], b1["peer"]))
need(a1["mpa_rev"] == b1["mpa_rev"] and a1["crc"] == b1["crc"],
     "both: MPA rev %s/%s, CRC %s/%s" % (a1["mpa_rev"], b1["mpa_rev"],
                                         a1["crc"], b1["crc"]))


def delta(q0, q1, k):
    return q1[k] - q0[k]


w = writes * size
need(delta(a0, a1, "tx_bytes") == w,
     "a tx_bytes +%d (%d written)" % (delta(a0, a1, "tx_bytes"), w))
need(delta(b0, b1, "rx_bytes") == w,
     "b rx_bytes +%d" % delta(b0, b1, "rx_bytes"))
need(delta(b0, b1, "tx_bytes") == read,
     "b tx_bytes +%d (%d read)" % (delta(b0, b1, "tx_bytes"), read))
need(delta(a0, a1, "rx_bytes") == read,
     "a rx_bytes +%d" % delta(a0, a1, "rx_bytes"))
need(delta(a0, a1, "tx_fpdus") == delta(b0, b1, "rx_fpdus") >= writes + 1,
     "FPDUs a sent +%d, b got +%d (at least %d)" % (
         delta(a0, a1, "tx_fpdus"), delta(b0, b1, "rx_fpdus"), writes + 1))
need(delta(b0, b1, "tx_fpdus") == delta(a0, a1, "rx_fpdus") >= 1,
     "FPDUs b sent +%d, a got +%d" % (delta(b0, b1, "tx_fpdus"),
                                      delta(a0, a1, "rx_fpdus")))
need(dev_rx == delta(b0, b1, "rx_fpdus"),
     "b's device counter rx_fpdus +%d" % dev_rx)
sys.exit(1 if bad else 0)
EOF

step "tracepoints: events/siw during one rping"
T=/sys/kernel/tracing
mountpoint -q "$T" || mount -t tracefs nodev "$T" || fail "cannot mount tracefs"
[[ -d $T/events/siw ]] || fail "no events/siw in tracefs: siw has no tracepoints"
I=$T/instances/siw216
rmdir "$I" 2>/dev/null || true
mkdir "$I" || fail "cannot make a tracefs instance"
echo 8192 >"$I/buffer_size_kb"
evs=("$I"/events/siw/*/)
evs=("${evs[@]%/}")
echo "   events: ${evs[*]##*/}"
echo 1 >"$I/events/siw/enable"
txa0=$(dev_stat a "$DEV_A" tx_fpdus)
txb0=$(dev_stat b "$DEV_B" tx_fpdus)
rping_run b 64 10 || fail "rping"
txa=$(($(dev_stat a "$DEV_A" tx_fpdus) - txa0))
txb=$(($(dev_stat b "$DEV_B" tx_fpdus) - txb0))
# A graceful close drains the socket until the peer's FIN (DRAINING):
# the endpoints reach CLOSED a moment after rping is told; the check
# below says which did not.
ceps_closed() {
	grep -q " siw_cep_state: $DEV_A .* -> CLOSED$" "$I/trace" &&
		grep -q " siw_cep_state: $DEV_B .* -> CLOSED$" "$I/trace"
}
until_ok 10 ceps_closed || true
echo 0 >"$I/events/siw/enable"
cat "$I/trace" >"$TLOG/rping.trace"
over=$(awk '/^overrun:/ { n += $2 } END { print n + 0 }' "$I"/per_cpu/cpu*/stats)
rmdir "$I"
echo "   $(grep -vc '^#' "$TLOG/rping.trace") events; device counters: tx_fpdus a +$txa, b +$txb"
((over == 0)) || fail "the trace buffer lost $over events"
grep -m 3 siw_fpdu_tx "$TLOG/rping.trace" | sed 's/^ */   | /'

# ev_count EVENT DEV: events of EVENT on DEV.
ev_count() {
	grep -c " $1: $2 " "$TLOG/rping.trace"
}
# cep_states DEV: the states its endpoints entered, in order.
cep_states() {
	grep " siw_cep_state: $1 " "$TLOG/rping.trace" |
		sed 's/.* -> //' | tr '\n' ' '
}
bad=
for h in a b; do
	dev=$(host_dev "$h")
	o=$(other_host "$h")
	odev=$(host_dev "$o")
	tx=$(ev_count siw_fpdu_tx "$dev")
	rx=$(ev_count siw_fpdu_rx "$odev")
	c=txa
	[[ $h == b ]] && c=txb
	echo "   $h: siw_fpdu_tx $tx (counter +${!c}), $o: siw_fpdu_rx $rx"
	((tx > 0 && tx == ${!c} && rx == tx)) || bad+=" $h's FPDUs: $tx traced, ${!c} counted, $rx received by $o;"
	qs=$(grep " siw_qp_state: $dev " "$TLOG/rping.trace" | sed 's/.* -> //' | tr '\n' ' ')
	echo "   $h: QP states: $qs"
	[[ $qs == *RTS/RTS*ERR/ERROR* ]] || bad+=" $h's QP did not go to RTS and then ERROR;"
done
ca=$(cep_states "$DEV_A")
cb=$(cep_states "$DEV_B")
echo "   a (active): endpoint states: $ca"
echo "   b (passive): endpoint states: $cb"
[[ $ca == "CONNECTING AWAIT_REPLY CONNECTED DRAINING CLOSED " ]] || bad+=" a's endpoint: $ca;"
[[ $cb == "AWAIT_REQUEST REQUESTED CONNECTED DRAINING CLOSED " ]] || bad+=" b's endpoint: $cb;"
for op in SEND READ_REQ READ_RESP WRITE; do
	grep -q "siw_fpdu_tx: .*: $op " "$TLOG/rping.trace" || bad+=" no $op sent;"
done
! grep -q siw_terminate "$TLOG/rping.trace" || bad+=" a Terminate;"
[[ -z $bad ]] || fail "trace:$bad"

siw_pair_down
siw_unload
echo PASS
