#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 900
# cost: 240
# guests: pair
#
# iSER over siw between two guests, through the iWARP port mapper
# (Documentation/admin-guide/iser.rst). Guest a is the target: LIO
# (targetcli) with a ramdisk LUN on the portal 0.0.0.0:3260, then
# enable_iser on that portal, its iSCSI/TCP listener still there. Guest b
# is the initiator: open-iscsi, discovery over TCP, login with
# iface.transport_name=iser. Both run iwpmd as its systemd unit does
# (iwpmd --systemd), and siw0 on eth0.
#   - a: the iSER listener is a siw socket on a port iwpmd mapped (not
#     3260); LIO's TCP listener on 3260 stays.
#   - b: login over iSER: the session is iser, its connection goes to a's
#     mapped port; fio writes 256 MiB and reads it back with crc32c
#     verify (throughput printed), then reads it again; logout; no QP
#     left. A second login in the same boot, 32 MiB verified, logout.
#     The same fio over iSCSI/TCP for comparison (printed, never judged).
#   - iwpmd stopped on b: the login fails within its bound, b's kernel
#     log says that nothing answered the MPA request and why (iwpmd).
#   - iwpmd stopped on a: enable_iser fails, a's kernel log names the
#     port held by a TCP socket and iwpmd; a login from b fails within
#     its bound, saying why. iwpmd back on a: iSER works again.
#   - Teardown: logout, targetcli clearconfig, iwpmd stopped, siw
#     unloaded without leaks on both.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pair.sh"

[[ ${SIW_TEST_TYPE:-siw} == siw ]] || skip "tests our siw only"
for t in targetcli dbus-daemon iscsiadm iscsid iwpmd fio jq; do
	command -v "$t" >/dev/null || skip "needs $t (make deps)"
done

IQN=iqn.2026-11.org.example.siw:iser-lun
PORTAL=${PAIR_IP[a]}:3260
LOG=$VM_JOB/iser
mkdir -p "$LOG"

step "network, siw0 on eth0, iwpmd"
pair_net
siw_load
rdma link add siw0 type siw netdev eth0
wait_for 30 port_active siw0
iwpmd_start

# ---------------------------------------------------------------------
# a: the target
# ---------------------------------------------------------------------
tc() {
	targetcli "$@" 2>&1 | tee -a "$LOG/targetcli.log"
	return "${PIPESTATUS[0]}"
}
# listen_ports: the ports with a TCP listener on a's address or the
# wildcard, one per line.
listen_ports() {
	ss -Hltn | awk '{ n = split($4, p, ":"); print p[n] }' | sort -un
}
iser_port() {
	local p
	for p in $(ss -Hltn "src ${PAIR_IP[a]}" | awk '{ n = split($4, p, ":"); print p[n] }'); do
		[[ $p != 3260 ]] && echo "$p" && return 0
	done
	return 1
}

target_up() {
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	# targetcli asks the system bus for tcmu-runner's backstores, and
	# exits when there is no bus at all: a private one, empty, will do.
	dbus-daemon --session --fork --nopidfile --address=unix:path=/run/siw-dbus ||
		fail "no D-Bus daemon for targetcli"
	export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/siw-dbus
	modprobe -a target_core_mod iscsi_target_mod ib_isert ||
		fail "LIO or ib_isert does not load"
	# One targetcli for all (each start costs seconds under TCG): it
	# reads commands from stdin.
	tc <<-EOF
		set global auto_save_on_exit=false
		/backstores/ramdisk create name=rd0 size=288M
		/iscsi create $IQN
		/iscsi/$IQN/tpg1/luns create /backstores/ramdisk/rd0
		/iscsi/$IQN/tpg1 set attribute authentication=0 demo_mode_write_protect=0 generate_node_acls=1 cache_dynamic_acls=1
		/iscsi/$IQN/tpg1/portals ls
	EOF
	[[ $(listen_ports) == *3260* ]] || fail "LIO does not listen on 3260"
}

if [[ $ME == a ]]; then
	step "a: LIO target, portal 0.0.0.0:3260 over TCP, then iSER on it"
	target_up
	tc "/iscsi/$IQN/tpg1/portals/0.0.0.0:3260" enable_iser true ||
		fail "enable_iser failed: $(tail -n 3 "$LOG/targetcli.log")"
	wait_for 30 iser_port
	P=$(iser_port)
	echo "   listening: $(listen_ports | tr '\n' ' ')(3260 LIO's iSCSI/TCP, $P siw's iSER, mapped by iwpmd)"
	rdma res show cm_id | sed 's/^/   | /'
	pair_signal target-up "$P"

	pair_wait phase1-done 900 >/dev/null
	step "a: iwpmd stopped, enable_iser again: refused, saying why"
	tc "/iscsi/$IQN/tpg1/portals/0.0.0.0:3260" enable_iser false
	[[ -z $(iser_port) ]] || fail "the iSER listener stayed after enable_iser false"
	iwpmd_stop
	m=$(klog_mark)
	if tc "/iscsi/$IQN/tpg1/portals/0.0.0.0:3260" enable_iser true; then
		# targetcli may report success where the kernel failed.
		:
	fi
	[[ -z $(iser_port) ]] || fail "siw listens for iSER without iwpmd: $(ss -Hltn)"
	# isert's listen runs after targetcli has answered.
	refused_logged() { klog_since "$m" | grep -q 'cannot listen on'; }
	wait_for 60 refused_logged
	why=$(klog_since "$m" | grep 'cannot listen on' | head -n1)
	echo "   a's kernel log: ${why#*] }"
	[[ $why == *"0.0.0.0:3260"*"a TCP socket of this host holds the port"*iwpmd* ]] ||
		fail "the refused listen does not say why: $why"
	pair_signal a-no-iwpmd

	pair_wait tried-a-down 900 >/dev/null
	step "a: iwpmd back, iSER on again"
	tc "/iscsi/$IQN/tpg1/portals/0.0.0.0:3260" enable_iser false || true
	iwpmd_start
	tc "/iscsi/$IQN/tpg1/portals/0.0.0.0:3260" enable_iser true ||
		fail "enable_iser with iwpmd back failed"
	wait_for 30 iser_port
	pair_signal target-up2 "$(iser_port)"

	pair_wait initiator-done 900 >/dev/null
	step "a: teardown"
	tc clearconfig confirm=True >/dev/null
	wait_for 30 qps_none siw0
	[[ -z $(iser_port) ]] || fail "the iSER listener stayed after clearconfig"
	modprobe -r ib_isert iscsi_target_mod target_core_mod 2>/dev/null || true
	iwpmd_stop
	rdma link delete siw0
	siw_unload
	echo PASS
	exit 0
fi

# ---------------------------------------------------------------------
# b: the initiator
# ---------------------------------------------------------------------
NODE=(iscsiadm -m node -T "$IQN" -p "$PORTAL")
ISCSID_PID=
initiator_up() {
	# No udev here to load the disk driver for a new LUN.
	modprobe -a ib_iser iscsi_tcp sd_mod || fail "ib_iser / iscsi_tcp / sd_mod do not load"
	mkdir -p /etc/iscsi
	echo "InitiatorName=iqn.2026-11.org.example.siw:initiator-b" >/etc/iscsi/initiatorname.iscsi
	rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets /var/lib/iscsi
	# A session of its own: stopped, iscsid signals its whole process
	# group, which would otherwise be this test's.
	setsid iscsid -f >>"$LOG/iscsid.log" 2>&1 &
	ISCSID_PID=$!
	wait_for 30 bash -c "iscsiadm -m session 2>&1 | grep -q 'No active sessions'"
}

# set_transport T: the node record's transport (iser or tcp); a login
# gives up after one try of 15 s.
set_transport() {
	"${NODE[@]}" -o update -n iface.transport_name -v "$1" >/dev/null
	"${NODE[@]}" -o update -n node.session.initial_login_retry_max -v 1 >/dev/null
	"${NODE[@]}" -o update -n node.conn[0].timeo.login_timeout -v 15 >/dev/null
}

session_disk() {
	local d
	d=$(iscsiadm -m session -P3 2>/dev/null | sed -n 's/.*Attached scsi disk \(sd[a-z]*\).*/\1/p' | head -n1)
	[[ -n $d && -b /dev/$d ]] && echo "$d"
}

login() {
	timeout -k 5 $((90 * SLOW)) "${NODE[@]}" -l >"$LOG/login.log" 2>&1
}

logout_all() {
	timeout -k 5 $((60 * SLOW)) iscsiadm -m node -u >"$LOG/logout.log" 2>&1 || {
		show_log "$LOG/logout.log"
		fail "logout failed"
	}
	wait_for 30 bash -c "iscsiadm -m session 2>&1 | grep -q 'No active sessions'"
}

# fio_run NAME RW MIB: fio on the session's disk; prints MiB/s of RW and
# of the verify pass, if any. Fails on any fio error or verify mismatch.
fio_run() {
	local d name=$1 rw=$2 mib=$3 j
	d=$(session_disk) || fail "no disk for the session"
	j=$LOG/fio-$name.json
	timeout -k 5 $((300 * SLOW)) fio --name="$name" --filename="/dev/$d" \
		--direct=1 --ioengine=libaio --bs=128k --iodepth=16 \
		--size="${mib}M" --rw="$rw" --verify=crc32c --do_verify=1 \
		--verify_fatal=1 --eta=never --output-format=json --output="$j" ||
		fail "fio $name on /dev/$d failed: $(head -c 600 "$j")"
	[[ $(jq '.jobs[0].error' "$j") == 0 ]] || fail "fio $name: error $(jq '.jobs[0].error' "$j")"
	jq -r --arg n "$name" '.jobs[0] | "   fio \($n): write \(.write.bw_bytes / 1048576 | floor) MiB/s, read \(.read.bw_bytes / 1048576 | floor) MiB/s (\(.write.io_bytes / 1048576) MiB written, \(.read.io_bytes / 1048576) MiB read and verified)"' "$j"
}

step "b: iscsid, discovery over TCP"
initiator_up
pair_wait target-up 900 >/dev/null
P=$(cat "$PAIR_DIR/a.target-up")
timeout -k 5 $((60 * SLOW)) iscsiadm -m discovery -t sendtargets -p "$PORTAL" \
	>"$LOG/discovery.log" 2>&1 || { show_log "$LOG/discovery.log"; fail "discovery failed"; }
grep -q "$IQN" "$LOG/discovery.log" || fail "discovery does not list $IQN: $(cat "$LOG/discovery.log")"
sed 's/^/   | /' "$LOG/discovery.log"

step "b: login over iSER (a's iSER port $P)"
set_transport iser
login || { show_log "$LOG/login.log"; fail "iSER login failed"; }
iscsiadm -m session | sed 's/^/   | /'
iscsiadm -m session | grep -q "^iser: .*$PORTAL" || fail "the session is not iser"
ss -Htn "dst ${PAIR_IP[a]}" | sed 's/^/   | /'
[[ -n $(ss -Htn "dst ${PAIR_IP[a]}:$P") ]] ||
	fail "no connection to a's mapped port $P: $(ss -Htn)"
[[ -z $(ss -Htn "dst ${PAIR_IP[a]}:3260") ]] ||
	fail "an iSER session has a connection to 3260: $(ss -Htn)"
wait_for 30 session_disk
fio_run iser-write write 256
fio_run iser-read read 256

step "b: logout, a second login over iSER"
logout_all
wait_for 30 qps_none siw0
login || { show_log "$LOG/login.log"; fail "the second iSER login failed"; }
iscsiadm -m session | grep -q "^iser: " || fail "the second session is not iser"
wait_for 30 session_disk
fio_run iser-again randwrite 32
logout_all
wait_for 30 qps_none siw0

step "b: the same over iSCSI/TCP, for comparison"
set_transport tcp
login || { show_log "$LOG/login.log"; fail "iSCSI/TCP login failed"; }
iscsiadm -m session | grep -q "^tcp: " || fail "the session is not tcp"
wait_for 30 session_disk
fio_run tcp-write write 256
fio_run tcp-read read 256
logout_all

# login_fails WHY: an iSER login that must fail (WHY names the setup),
# and b's kernel log then says that the MPA request to a's 3260 got no
# answer and that iwpmd is why.
login_fails() {
	local m t0=$SECONDS why
	m=$(klog_mark)
	login && fail "an iSER login $1 succeeded"
	echo "   login failed after $((SECONDS - t0)) s: $(grep -m1 -i 'error\|fail' "$LOG/login.log")"
	why=$(klog_since "$m" | grep -E 'MPA reply' | head -n1)
	echo "   b's kernel log: ${why#*] }"
	[[ $why == *"${PAIR_IP[a]}:3260"*"iWARP listener"*iwpmd* ]] ||
		fail "the failed connection does not say why: ${why:-nothing from siw0}"
	qps_gone 60 siw0 || fail "QPs left after the failed login"
}

step "b: iwpmd stopped here: the iSER login fails, saying why"
set_transport iser
iwpmd_stop
login_fails "without iwpmd on the initiator"
iwpmd_start
pair_signal phase1-done

pair_wait a-no-iwpmd 900 >/dev/null
step "b: iwpmd stopped on a: the iSER login fails, saying why"
login_fails "to a target without iwpmd"
pair_signal tried-a-down

pair_wait target-up2 900 >/dev/null
step "b: iwpmd back on a: iSER login again"
login || { show_log "$LOG/login.log"; fail "the iSER login after iwpmd came back failed"; }
iscsiadm -m session | grep -q "^iser: " || fail "the session is not iser"
wait_for 30 session_disk
fio_run iser-back randwrite 32
logout_all

step "b: teardown"
rm -rf /etc/iscsi/nodes /etc/iscsi/send_targets
iscsiadm -k 0 >/dev/null 2>&1 || kill "$ISCSID_PID" 2>/dev/null || true
wait "$ISCSID_PID" 2>/dev/null || true
modprobe -r ib_iser 2>/dev/null || true
wait_for 30 qps_none siw0
iwpmd_stop
pair_signal initiator-done
rdma link delete siw0
siw_unload
echo PASS
