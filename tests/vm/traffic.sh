# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Sourced, after tests/vm/lib.sh, by the traffic tests (tests/vm/2xx-*.sh).
# Drivers for rdma_cm tools between the two hosts of siw_pair: each run
# starts the server in one host, waits until it listens, runs the client in
# the other host, checks both exit statuses and output, and stops the
# server. Every process is bounded by timeout(1). Logs are kept under
# /var/tmp/traffic/ and the tail is printed when a run fails.

# In the job directory when there is one: the runner keeps it (--out) for
# a look after a failure.
if [[ -n ${VM_JOB:-} && -w ${VM_JOB:-} ]]; then
	TLOG=$VM_JOB/traffic
else
	TLOG=/var/tmp/traffic
fi
mkdir -p "$TLOG"

# Each connection gets its own TCP port: no listener or TIME_WAIT left
# from an earlier run can interfere.
TPORT=${TPORT:-20000}
next_port() { TPORT=$((TPORT + 1)); }

# Device and address of host a or b.
host_dev() { if [[ $1 == a ]]; then echo "$DEV_A"; else echo "$DEV_B"; fi; }
host_ip() { if [[ $1 == a ]]; then echo "$IP_A"; else echo "$IP_B"; fi; }
# The other end of a pair: a and b, or oa and ob (tests/perf: one pair per
# implementation, named by a prefix).
other_host() { if [[ $1 == *a ]]; then echo "${1%a}b"; else echo "${1%b}a"; fi; }

# watch_client HOST SECS LOG PATTERN CMD...: like run_client, but a client
# that printed a line matching PATTERN (its own report of a fatal error)
# and has not exited 2 s later is stopped and counted as failed: rping
# hangs forever after "rdma_connect: Connection refused", and a refused
# connection must fail the test at once, not after the timeout.
watch_client() {
	local h=$1 secs=$(($2 * SLOW)) log=$3 pat=$4 pid rc=0 grace=0 end
	shift 4
	on "$h" timeout -k 5 "$secs" "$@" >"$log" 2>&1 &
	pid=$!
	end=$((SECONDS + secs))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do
		if file_has "$log" "$pat"; then
			grace=$((grace + 1))
			if ((grace > 10)); then
				pkill -TERM -P "$pid" 2>/dev/null || true
				kill "$pid" 2>/dev/null || true
				wait_bounded "$pid" $((10 + 60 * SLOW)) "the client ($1)" >>"$log"
				echo "[test: stopped after it reported an error and hung]" >>"$log"
				return 1
			fi
		fi
		nap 0.2
	done
	# timeout(1) ends it; one still there after that is stuck.
	wait_bounded "$pid" $((5 + 60 * SLOW)) "the client ($1)" || rc=$?
	return "$rc"
}

# client_server NAME SRV_HOST SECS SRV_CMD -- CLI_CMD: one run of a tool.
# SRV_CMD must listen on $TPORT (call next_port first). Returns 0 when the
# server listened and both ends exited 0; logs: $TLOG/NAME.{srv,cli}, exit
# statuses in CS_CLI_RC and CS_SRV_RC (-1: not run). QUIET=1 prints no
# logs on failure (for runs expected to fail). CLIENT_WATCH (an ERE) makes
# the client run under watch_client.
CLIENT_WATCH='' QUIET=''
client_server() {
	local name=$1 sh=$2 secs=$3 ch srv=() rc=0 src=0
	CS_CLI_RC=-1 CS_SRV_RC=-1
	shift 3
	ch=$(other_host "$sh")
	while (($#)) && [[ $1 != -- ]]; do
		srv+=("$1")
		shift
	done
	shift
	CS_HOSTS=("$ch" "$sh") CS_CLI_CMD=("$@") CS_SRV_CMD=("${srv[@]}")
	# The server outlives the client's bound, so that a stalled client's
	# snapshot (run_client) still finds both ends.
	srv_start "$sh" $((secs + 10)) "$TLOG/$name.srv" "${srv[@]}"
	if ! wait_listen "$sh" "$TPORT" "$SRV_PID"; then
		echo "   $name: server in $sh is not listening on port $TPORT"
		srv_stop_all
		show_log "$TLOG/$name.srv"
		return 1
	fi
	if [[ -n $CLIENT_WATCH ]]; then
		watch_client "$ch" "$secs" "$TLOG/$name.cli" "$CLIENT_WATCH" "$@" || rc=$?
	else
		run_client "$ch" "$secs" "$TLOG/$name.cli" "$@" || rc=$?
	fi
	# After a failed client the server may wait forever: give it a
	# second, then stop it (reported as exit 143).
	((rc == 0)) || ! kill -0 "$SRV_PID" 2>/dev/null || sleep 1
	if ((rc != 0)) && kill -0 "$SRV_PID" 2>/dev/null; then
		srv_stop_all
		src=143
	else
		srv_wait "$SRV_PID" || src=$?
	fi
	# shellcheck disable=SC2034 # lib.sh's list; CS_*: read by the tests
	SRV_PIDS=() CS_CLI_RC=$rc CS_SRV_RC=$src
	if ((rc != 0 || src != 0)); then
		[[ -n $QUIET ]] || cs_report "$name"
		return 1
	fi
}

# cs_report NAME: what went wrong in the last client_server run NAME.
cs_report() {
	echo "   $1: client (in ${CS_HOSTS[0]}) exit $CS_CLI_RC, server (in ${CS_HOSTS[1]}) exit $CS_SRV_RC"
	echo "   client: ${CS_CLI_CMD[*]}"
	show_log "$TLOG/$1.cli"
	echo "   server: ${CS_SRV_CMD[*]}"
	show_log "$TLOG/$1.srv"
	siw_klog_tail
}

# --- rping ------------------------------------------------------------------

# Smallest -S that this rping accepts (it says "valid range is N to M").
rping_min_size() {
	local out
	out=$(rping -c -a 127.0.0.1 -S 1 -C 1 2>&1) || true
	sed -n 's/.*valid range is \([0-9]*\) to.*/\1/p' <<<"$out"
}

# rping's own exit race (rdma-core 44; later rpings stop their CM thread
# first): main() destroys the CM event channel once its run is over while
# its CM thread may be on its way back into rdma_get_cm_event(), which
# then fails with EBADF, and the thread exits the process with 255. Such
# an end counts as a pass only after a complete run: the final DISCONNECT
# in the log and no other complaint, a server's usual last words
# "wait for RDMA_READ_ADV state 10" (DISCONNECTED) aside.
# rping_exit_race RC LOG
rping_exit_race() {
	[[ $1 == 255 ]] || return 1
	grep -qx 'rdma_get_cm_event: Bad file descriptor' "$2" || return 1
	grep -q 'DISCONNECT EVENT' "$2" || return 1
	! grep -vx -e 'rdma_get_cm_event: Bad file descriptor' \
		-e 'wait for RDMA_READ_ADV state 10' "$2" |
		grep -Eiq 'mismatch|error|fail|wait for'
}

# rping_end_ok RC LOG: exit 0, or exit 255 from rping_exit_race.
rping_end_ok() {
	[[ $1 == 0 ]] || rping_exit_race "$1" "$2"
}

# rping_run SRV_HOST SIZE COUNT: rping server (-V, verify) in SRV_HOST,
# client in the other host, COUNT pings of SIZE bytes. Never with -v:
# its output is the ping data.
rping_run() {
	local sh=$1 size=$2 count=$3 ip name end
	ip=$(host_ip "$sh")
	next_port
	name=rping-$sh-$size-$TPORT
	if ! QUIET=1 CLIENT_WATCH='connect error|rdma_connect:|cma event RDMA_CM_EVENT_(REJECTED|CONNECT_ERROR|UNREACHABLE|ADDR_ERROR|ROUTE_ERROR)' \
		client_server "$name" "$sh" "${RPING_SECS:-180}" \
		rping -s -V -a "$ip" -p "$TPORT" -S "$size" -C "$count" -- \
		rping -c -V -a "$ip" -p "$TPORT" -S "$size" -C "$count"; then
		if ! rping_end_ok "$CS_CLI_RC" "$TLOG/$name.cli" ||
			! rping_end_ok "$CS_SRV_RC" "$TLOG/$name.srv"; then
			[[ -n $QUIET ]] || cs_report "$name"
			return 1
		fi
		end=
		((CS_CLI_RC == 0)) || end=client
		((CS_SRV_RC == 0)) || end+=${end:+ and }server
		echo "   NOTE: $name: the CM thread of its $end lost rping's exit race (EBADF, exit 255) after a complete run"
	fi
	# -V makes a mismatch an error exit; still refuse any error report.
	# A client whose connection ends early says "wait for <state>" and
	# may still exit 0 (seen: "wait for RDMA_WRITE_ADV state 10"); the
	# server ends every good run with "wait for RDMA_READ_ADV state 10".
	if grep -Eiq 'mismatch|error|fail' "$TLOG/$name.cli" "$TLOG/$name.srv" ||
		grep -q 'wait for' "$TLOG/$name.cli"; then
		echo "   $name: error reported although both ended well"
		show_log "$TLOG/$name.cli"
		show_log "$TLOG/$name.srv"
		return 1
	fi
}

# --- perftest ---------------------------------------------------------------

# perf_value TOOL LOG: the figure of a perftest report, from the row after
# its "#bytes" header: average bandwidth (column 4) or typical latency
# (column 5); empty if there is no positive number (0.00 and "inf" are
# what a failed clock calibration leaves). Bandwidth has two decimals
# only: below 1 MB/s (tiny messages) it is taken from the message rate
# (column 5, Mpps with six) times the size (column 1), in perftest's MB
# (2^20 octets).
perf_value() {
	local col=4
	[[ $1 == *_lat ]] && col=5
	awk -v c="$col" -v bw="$([[ $1 == *_bw ]] && echo 1)" '
		function num(x) { return x ~ /^[0-9]+(\.[0-9]+)?$/ }
		/#bytes/ { on = 1; next }
		on && /^ *[0-9]+ +[0-9]+ / {
			if (bw && num($c) && $c < 1 && num($5) && $5 > 0)
				printf "%.4g\n", $5 * 1e6 * $1 / 1048576
			else if (num($c) && $c > 0)
				print $c
			exit
		}' "$2"
}

# iperf_mibs LOG: the throughput iperf3 -J's receiver saw, in MiB/s with
# two decimals; fails when the report has none.
iperf_mibs() {
	local v
	v=$(jq -r '.end.sum_received.bits_per_second / 8 / 1048576 * 100 | round / 100' \
		"$1" 2>/dev/null) || return 1
	[[ $v =~ ^[0-9]+(\.[0-9]+)?$ ]] || return 1
	echo "$v"
}

# perf_run TOOL SRV_HOST ARGS...: TOOL (ib_send_bw, ib_read_lat, ...) with
# -R (rdma_cm; iWARP needs it) and -F (TCG's clock is not steady) as server
# in SRV_HOST and client in the other host, each on its own device.
# The client's log is $TLOG/$PERF_NAME.cli, the server's .srv. Besides
# both exit statuses, perftest's report of a failed rdma_disconnect()
# ("Failed to disconnect RDMA CM connection", which it does not count as
# an error) fails the run: Linux's siw never gives it.
# The server listens on the wildcard address (perftest 6.06 ignores
# --source_ip there), so rdma_cm listens on every RDMA device, the other
# host's too; with PERF_SRV_BIND=ADDR it listens on ADDR only (through
# the preload shim build/progs/bind_addr.so, see tests/progs/bind_addr.c).
#
# perftest -R makes two connections to the server's port: the first
# carries its parameter exchange; then the server destroys that listener
# and listens anew for the test's own connection, while the client
# resolves and connects. A client faster than its server (a loaded TCG
# guest) finds nobody listening: TCP refuses it, the client reports
# RDMA_CM_EVENT_REJECTED with error -111 (and perftest 6.06 then crashes
# in librdmacm). That run is repeated, on a new port, up to twice, with
# a note; any other failure, or the same one three times, fails. A run
# expected to fail (QUIET=1) is never repeated. A test that knows another
# fault of a peer names a function in PERF_RETRY_IF: called with the
# failed run's PERF_NAME, its exit status 0 (after printing its note)
# repeats the run the same way.
perf_run() {
	local tool=$1 sh=$2 ch srv_env=() try tries=3 quiet
	shift 2
	ch=$(other_host "$sh")
	if [[ -n ${PERF_SRV_BIND:-} ]]; then
		srv_env=(env "LD_PRELOAD=${SIW_BUILD:-${SIW_SRC:-.}/build}/progs/bind_addr.so"
			"SIW_BIND_ADDR=$PERF_SRV_BIND")
	fi
	[[ -z $QUIET ]] || tries=1
	for ((try = 1; try <= tries; try++)); do
		next_port
		PERF_NAME=$tool-$sh-$TPORT
		quiet=$QUIET
		((try < tries)) && quiet=1
		CLIENT_WATCH='' QUIET=$quiet client_server "$PERF_NAME" "$sh" "${PERF_SECS:-120}" \
			"${srv_env[@]}" "$tool" -R -F -d "$(host_dev "$sh")" -p "$TPORT" "$@" -- \
			"$tool" -R -F -d "$(host_dev "$ch")" -p "$TPORT" "$@" "$(host_ip "$sh")" &&
			break
		if ((try < tries)) &&
			grep -q 'RDMA_CM_EVENT_REJECTED; error: -111' "$TLOG/$PERF_NAME.cli"; then
			echo "   $PERF_NAME: the client connected before the server listened again (perftest -R race): once more"
			continue
		fi
		if ((try < tries)) && [[ -n ${PERF_RETRY_IF:-} ]] &&
			"$PERF_RETRY_IF" "$PERF_NAME"; then
			continue
		fi
		((try == tries)) || cs_report "$PERF_NAME"
		return 1
	done
	if grep -q 'Failed to disconnect' "$TLOG/$PERF_NAME.cli" "$TLOG/$PERF_NAME.srv"; then
		echo "   $PERF_NAME: exit 0, but rdma_disconnect() failed:"
		grep -A1 'Failed to disconnect' "$TLOG/$PERF_NAME.cli" \
			"$TLOG/$PERF_NAME.srv" | sed "s@^$TLOG/@   | @"
		return 1
	fi
}

# perf_check_bw LOG SIZE...: LOG (client or server) has exactly one row per
# SIZE, in order, each with a positive message rate or bandwidth (the rate
# rounds to 0 Mpps for big messages at TCG speed) and, from 1 KiB up, a
# positive average bandwidth (tiny messages at few iterations round to
# 0.00 MB/s even when all went well). Rows of all zeros pass only as many
# times as perftest said its clock calibration failed (see perf_check_lat);
# for a server's LOG that counts the client's failures too: the passive side
# of ib_write_bw/ib_read_bw prints the figures the client measured.
# One awk reads it all: a process costs a TCG guest a quarter of a second,
# and a row each made this check a tenth of test 210's time.
perf_check_bw() {
	local log=$1 cli=/dev/null rc=0
	shift
	[[ $log == *.srv && -f ${log%.srv}.cli ]] && cli=${log%.srv}.cli
	awk -v want="$*" -v path="$log" '
	# perftest calibrates its clock for each row; each failure prints
	# this warning and zeroes that row.
	/Correlation coefficient/ { nocal++ }
	FILENAME != path { next }
	/#bytes.*BW average/ { on = 1; next }
	on && /^ *[0-9]+ +[0-9]+ / { row[++n] = $1 " " $2 " " $3 + 0 " " $4 + 0 " " $5 + 0; next }
	on && /^-+$/ { on = 0 }
	END {
		nw = split(want, w, " ")
		if (!n) {
			printf "   no result rows in %s\n", path
			exit 2
		}
		for (k = 1; k <= n; k++) {
			split(row[k], f, " ")
			b = f[1]; i = f[2]; p = f[3]; a = f[4]; r = f[5]
			if (k > nw || b != w[k]) {
				printf "   %s: row for %s bytes, expected %s\n", path, b,
					(k > nw ? "no more rows" : w[k])
				exit 1
			}
			if (i > 0 && (r > 0 || a > 0) && (b < 1024 || a > 0))
				continue
			# See perf_check_lat: no clock, no figures (all zero).
			if (zero < nocal && i > 0 && r == 0 && a == 0 && p == 0) {
				zero++
				continue
			}
			printf "   %s: bad row: %s %s %s %s %s\n", path, b, i, p, a, r
			exit 1
		}
		if (n < nw) {
			printf "   %s: rows end after %d sizes; missing:", path, n
			for (k = n + 1; k <= nw; k++)
				printf " %s", w[k]
			print ""
			exit 1
		}
		sub(/.*\//, "", path)
		printf "   %s: %d sizes ok, avg MB/s at %s B: %s", path, n, b, a
		if (zero)
			printf " (%d rows without figures: perftest\047s clock calibration failed under TCG)", zero
		print ""
	}' "$log" "$cli" || rc=$?
	((rc != 2)) || { show_log "$log"; rc=1; }
	return "$rc"
}

# Sizes of perftest -a: 2 B to 8 MiB (perftest 6.06 runs 2^1 .. 2^23).
perf_all_sizes() {
	local s
	for ((s = 2; s <= 8388608; s *= 2)); do echo "$s"; done
}

# perf_check_lat LOG SIZE ITERS: the latency row for SIZE counts ITERS
# iterations and has finite, positive t_min and t_avg. One exception:
# perftest times with the TSC and calibrates it against gettimeofday; under
# TCG that calibration sometimes fails ("Correlation coefficient r^2 < 0.9",
# even with -F) and every figure prints as inf. The run itself passed (both
# sides exited 0 after ITERS round trips), so that row is accepted with a
# note. (A send_lat server always prints inf: only the client is checked.)
perf_check_lat() {
	local log=$1 size=$2 iters=$3 row tmin tavg
	row=$(awk -v s="$size" '/#bytes/ { on = 1; next }
		on && $1 == s { print; exit }' "$log")
	read -r _ _ tmin _ _ tavg _ <<<"$row"
	if [[ -n $row ]] && awk -v r="$row" -v n="$iters" 'BEGIN {
		split(r, f, " ")
		exit !(f[2] == n && f[3] ~ /^[0-9.]+$/ && f[3] > 0 &&
		       f[6] ~ /^[0-9.]+$/ && f[6] > 0)
	}'; then
		echo "   $(basename "$log"): $size B t_min ${tmin} us, t_avg ${tavg} us"
	elif [[ -n $row && $(awk '{ print $2 }' <<<"$row") == "$iters" &&
		$tmin == inf ]] && grep -q 'Correlation coefficient' "$log"; then
		echo "   $(basename "$log"): $size B: no timing (perftest's clock calibration failed under TCG)"
	else
		echo "   $log: no sane latency row for $size bytes, $iters iterations: '$row'"
		show_log "$log"
		return 1
	fi
}

# perf_crc_modes: set the array crc_modes to the MPA CRC settings a
# perftest script goes through: for our siw off (mpa_crc=0) and insisting
# (2); Linux's siw cannot switch (constants in its siw_main.c) and runs
# without only.
perf_crc_modes() {
	case $SIW_TEST_TYPE in
	siw) crc_modes=(0 2) ;;
	linux_siw)
		crc_modes=(linux)
		echo "NOTE: linux_siw cannot switch MPA CRC: CRC off only"
		;;
	*) fail "SIW_TEST_TYPE=$SIW_TEST_TYPE" ;;
	esac
}

# perf_crc_mode MODE: switch to one of perf_crc_modes' settings; sets
# crc (0 or 1, what the MPA frames on the wire must show) and label.
perf_crc_mode() {
	crc=0
	if [[ $1 != linux ]]; then
		siw_param mpa_crc "$1"
		[[ $1 == 2 ]] && crc=1
	fi
	label="CRC $( ((crc)) && echo on || echo off)"
}

# perf_crc_restore: back to the module's default (mpa_crc=1, CRC if the
# peer asks), where the setting could be changed at all.
perf_crc_restore() {
	[[ $SIW_TEST_TYPE != siw ]] || siw_param mpa_crc 1
}

# --- MPA negotiation on the wire ---------------------------------------------

# mpa_capture_start: record every MPA Request/Reply frame that crosses
# v-a (so every connection of the pair) until mpa_capture_stop. The BPF
# filter keeps only TCP segments whose payload starts with "MPA ", so the
# capture stays tiny however much traffic runs. mpa_seen PORT then tells
# what the connection(s) to server port PORT negotiated.
MPA_PCAP=$TLOG/mpa.pcap
mpa_capture_start() {
	local t0
	t0=$(now_ms)
	rm -f "$MPA_PCAP"
	on a dumpcap -q -P -i v-a -s 128 -w "$MPA_PCAP" \
		-f 'tcp[((tcp[12:1] & 0xf0) >> 2):4] = 0x4d504120' \
		>"$TLOG/dumpcap.log" 2>&1 &
	MPA_CAP_PID=$!
	# dumpcap writes the file header once it captures.
	wait_for 30 test -s "$MPA_PCAP"
	echo "   capturing MPA frames on v-a (ready after $(($(now_ms) - t0)) ms)"
}

mpa_capture_stop() {
	[[ -n ${MPA_CAP_PID:-} ]] || return 0
	pkill -INT -P "$MPA_CAP_PID" 2>/dev/null || true
	kill -INT "$MPA_CAP_PID" 2>/dev/null || true
	wait "$MPA_CAP_PID" 2>/dev/null || true
	MPA_CAP_PID=
}

# mpa_seen PORT: the MPA frames of connections to server port PORT, one
# line each in capture order: "req|rep rev=R crc=C large=L reject=J"
# (large: no, offer (flag 0x08: takes FPDUs above one segment) or taken
# (0x08 and 0x04: a reply that took the offer)). Reads the
# classic pcap file that dumpcap -P writes (Ethernet, IPv4, TCP).
mpa_seen() {
	/usr/bin/python3 - "$MPA_PCAP" "$1" <<'PY'
import struct, sys
path, port = sys.argv[1], int(sys.argv[2])
data = open(path, "rb").read()
magic = struct.unpack_from("<I", data, 0)[0]
end = "<" if magic in (0xa1b2c3d4, 0xa1b23c4d) else ">"
off = 24
while off + 16 <= len(data):
    incl = struct.unpack_from(end + "I", data, off + 8)[0]
    pkt = data[off + 16:off + 16 + incl]
    off += 16 + incl
    if len(pkt) < 34 or pkt[12:14] != b"\x08\x00":
        continue
    ip = pkt[14:]
    tcp = ip[(ip[0] & 0x0f) * 4:]
    if ip[9] != 6 or len(tcp) < 20:
        continue
    sport, dport = struct.unpack_from(">HH", tcp, 0)
    pl = tcp[(tcp[12] >> 4) * 4:]
    if len(pl) < 18 or not pl.startswith(b"MPA ID Re"):
        continue
    kind = pl[7:10].decode()
    if (kind == "Req" and dport != port) or (kind == "Rep" and sport != port):
        continue
    flags = pl[16]
    large = "no"
    if flags & 0x08:
        large = "taken" if flags & 0x04 else "offer"
    print("%s rev=%d crc=%d large=%s reject=%d" % (kind.lower(), pl[17],
          1 if flags & 0x40 else 0, large, 1 if flags & 0x20 else 0))
PY
}

# mpa_expect PORT REQ REP: the first request and reply to PORT were
# "rev=R crc=C [large=L]" as given (reply "rev=R crc=C reject=1" for a
# refusal); the large flag is checked where REQ/REP name it.
# dumpcap flushes its file in its own time: wait up to 10 s (times SLOW)
# for both.
mpa_expect() {
	local port=$1 want_req=$2 want_rep=$3 seen req rep end=$((SECONDS + 10 * SLOW))
	while :; do
		seen=$(mpa_seen "$port")
		req=$(grep -m1 '^req ' <<<"$seen" | cut -d' ' -f2-) || true
		rep=$(grep -m1 '^rep ' <<<"$seen" | cut -d' ' -f2-) || true
		[[ -n $req && -n $rep ]] && break
		((SECONDS < end)) || break
		nap 0.5
	done
	echo "   MPA to port $port: request ${req:-none}, reply ${rep:-none}"
	# Checked only where the caller names it.
	[[ $want_req == *large=* ]] || req=$(sed 's/ large=[a-z]*//' <<<"$req")
	[[ $want_rep == *large=* ]] || rep=$(sed 's/ large=[a-z]*//' <<<"$rep")
	[[ $req == "$want_req reject=0" ]] ||
		{ echo "   expected request $want_req"; return 1; }
	[[ $rep == "$want_rep" || $rep == "$want_rep reject=0" ]] ||
		{ echo "   expected reply $want_rep"; return 1; }
}

# ---------------------------------------------------------------------------
# Device counters of our siw (stats.c, "rdma statistic show link DEV/1").
#
# dev_stats HOST DEV: all of them as "name value" lines.
# dev_stat HOST DEV NAME: the value of one (empty when there is none).
dev_stats() {
	on "$1" rdma statistic show link "$2/1" |
		awk '{ for (i = 3; i < NF; i += 2) print $i, $(i + 1) }'
}
dev_stat() {
	dev_stats "$1" "$2" | awk -v n="$3" '$1 == n { print $2 }'
}

# ---------------------------------------------------------------------------
# Nothing left behind after a case: no QP, and no rdma_cm ID but
# listening ones.
#
# dev_res_count DEV: those of RDMA device DEV (devices are shared by all
# namespaces). host_res_count HOST: those the tools in HOST's namespace see.
dev_res_count() {
	{ rdma res show qp; rdma res show cm_id | grep -v ' state LISTEN '; } 2>/dev/null |
		grep -c "^link $1/" || true
}
host_res_count() {
	{ on "$1" rdma res show qp; on "$1" rdma res show cm_id | grep -v ' state LISTEN '; } 2>/dev/null |
		grep -c '^link ' || true
}

# res_settled [DEV...]: none on each DEV; without DEVs, none in a and b.
res_settled() {
	local d
	if (($# == 0)); then
		[[ $(host_res_count a) == 0 && $(host_res_count b) == 0 ]]
		return
	fi
	for d in "$@"; do
		[[ $(dev_res_count "$d") == 0 ]] || return 1
	done
}

# wait_settled WHAT [DEV...]: within 20 s (times SLOW) res_settled holds,
# else show what is left and fail the test naming WHAT.
wait_settled() {
	local what=$1 end=$((SECONDS + 20 * SLOW)) h
	shift
	until res_settled "$@"; do
		if ((SECONDS >= end)); then
			for h in a b; do
				echo "   seen in $h:"
				on "$h" rdma res show qp | sed 's/^/   | /'
				on "$h" rdma res show cm_id | sed 's/^/   | /'
			done
			fail "$what: QPs or rdma_cm IDs left after $((20 * SLOW)) s${1:+ on $*}"
		fi
		nap 0.2
	done
}

# klog_expect WHAT ERE: a kernel log line matching ERE (after "siw: "),
# printed; else the last lines of siw and a failure naming WHAT.
klog_expect() {
	local line
	line=$(klog | grep -E "siw: $2" | tail -n1) || true
	[[ -n $line ]] || {
		klog | grep 'siw' | tail -n 5 | sed 's/^/   | /'
		fail "$1: no kernel log line matching '$2'"
	}
	echo "   log: ${line#*] }"
}

# re STRING: STRING as an ERE that matches it literally (ip:port in a log
# line: dots escaped).
re() { sed 's/[.[\]/\\&/g' <<<"$1"; }
