#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# cost: 120
# guests: pair
#
# The iWARP port mapper with the other ULPs, between two guests (a
# server, b client), siw0 on eth0 in each (Documentation/iser.rst):
#   - iwpmd on both: rping (verified) to a server on 7174 whose siw
#     socket listens on a port iwpmd mapped, not on 7174, and b's
#     connection goes there; ib_write_bw -R and ib_read_bw -R; NVMe-oF
#     over RDMA (nvmet-rdma on 4420, brd namespace), fio with crc32c
#     verify from b, disconnect.
#   - iwpmd on a only: a's listener is mapped, b connects to the port
#     the application named, where nothing listens: rping fails at once
#     and b's kernel log says that iwpmd is missing here.
#   - iwpmd on b only: a's listener is not mapped, b's iwpmd gets no
#     answer from a's, and iw_cm connects to the port as named: rping
#     passes (a peer without port mapping is still reached).
#   - Teardown: no QP or rdma_cm ID left, siw unloaded without leaks.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/pair.sh"

[[ ${SIW_TEST_TYPE:-siw} == siw ]] || skip "tests our siw only"
for t in iwpmd rping ib_write_bw nvme fio jq; do
	command -v "$t" >/dev/null || skip "needs $t (make deps)"
done
LOG=$VM_JOB/ulps
mkdir -p "$LOG"
NQN=nqn.2026-11.org.example.siw:portmap

# ports_listening: the ports with a TCP listener on this guest's address.
ports_listening() {
	ss -Hltn "src $MY_IP" | awk '{ n = split($4, p, ":"); print p[n] }' | sort -un
}
listening_on() { ports_listening | grep -qx "$1"; }
# mapped_port APP: the one listening port of a siw listener that is not
# APP (iwpmd's), or nothing.
mapped_port() {
	local p
	for p in $(ports_listening); do
		[[ $p != "$1" && $p != 4420 ]] && echo "$p" && return 0
	done
	return 1
}

step "network, siw0 on eth0, iwpmd on both"
pair_net
siw_load
rdma link add siw0 type siw netdev eth0
wait_for 30 port_active siw0
iwpmd_start

# rping_server PORT COUNT: in the background; RPING_PID.
rping_server() {
	rping -s -a "$MY_IP" -p "$1" -C "$2" -S 4096 -V >"$LOG/rping-s-$1.log" 2>&1 &
	RPING_PID=$!
}
rping_client() {
	timeout -k 5 $((120 * SLOW)) rping -c -a "$PEER_IP" -p "$1" -C "$2" -S 4096 -V \
		>"$LOG/rping-c-$1.log" 2>&1
}

if [[ $ME == a ]]; then
	step "a: rping server on 7174, mapped"
	rping_server 7174 50
	wait_for 30 mapped_port 7174
	P=$(mapped_port 7174)
	[[ $(ports_listening) != *7174* ]] || fail "siw listens on 7174 itself"
	echo "   listening on $MY_IP: $(ports_listening | tr '\n' ' ')(7174 mapped to $P)"
	pair_signal rping-up "$P"
	wait "$RPING_PID" || fail "rping server failed: $(tail -n3 "$LOG/rping-s-7174.log")"

	step "a: perftest servers (-R)"
	for t in ib_write_bw ib_read_bw; do
		timeout -k 5 $((180 * SLOW)) "$t" -R -F -d siw0 -s 65536 -n 200 \
			>"$LOG/$t-s.log" 2>&1 &
		pid=$!
		wait_for 30 bash -c "[[ -n \$(ss -Hltn 'src $MY_IP') ]]"
		pair_signal "$t-up" "$(mapped_port 18515)"
		wait "$pid" || fail "$t server failed: $(tail -n 5 "$LOG/$t-s.log")"
		pair_wait "$t-done" 300 >/dev/null
	done

	step "a: NVMe-oF target (nvmet-rdma, $MY_IP:4420, brd)"
	modprobe brd rd_nr=1 rd_size=$((64 * 1024)) || fail "brd does not load"
	modprobe -a nvmet nvmet-rdma || fail "nvmet-rdma does not load"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	C=/sys/kernel/config/nvmet
	mkdir "$C/subsystems/$NQN"
	echo 1 >"$C/subsystems/$NQN/attr_allow_any_host"
	mkdir "$C/subsystems/$NQN/namespaces/1"
	echo -n /dev/ram0 >"$C/subsystems/$NQN/namespaces/1/device_path"
	echo 1 >"$C/subsystems/$NQN/namespaces/1/enable"
	mkdir "$C/ports/1"
	echo rdma >"$C/ports/1/addr_trtype"
	echo ipv4 >"$C/ports/1/addr_adrfam"
	echo "$MY_IP" >"$C/ports/1/addr_traddr"
	echo 4420 >"$C/ports/1/addr_trsvcid"
	ln -s "$C/subsystems/$NQN" "$C/ports/1/subsystems/$NQN" ||
		fail "the nvmet-rdma port does not come up"
	wait_for 30 mapped_port 4420
	echo "   listening on $MY_IP: $(ports_listening | tr '\n' ' ')(4420 mapped to $(mapped_port 4420))"
	[[ $(ports_listening) != *4420* ]] || fail "siw listens on 4420 itself"
	pair_signal nvme-up
	pair_wait nvme-done 600 >/dev/null
	rm "$C/ports/1/subsystems/$NQN"
	rmdir "$C/ports/1" "$C/subsystems/$NQN/namespaces/1" "$C/subsystems/$NQN"
	modprobe -r nvmet-rdma nvmet brd

	pair_wait b-no-iwpmd 300 >/dev/null
	step "a: rping server on 7175, mapped; b has no iwpmd"
	rping_server 7175 5
	wait_for 30 mapped_port 7175
	pair_signal rping2-up
	pair_wait rping2-done 300 >/dev/null
	kill "$RPING_PID" 2>/dev/null || true
	wait "$RPING_PID" 2>/dev/null || true

	step "a: iwpmd stopped, rping server on 7176, not mapped"
	iwpmd_stop
	rping_server 7176 20
	wait_for 30 listening_on 7176
	[[ -z $(mapped_port 7176) ]] || fail "a listener was mapped without iwpmd"
	pair_signal rping3-up
	wait "$RPING_PID" || fail "rping server (not mapped) failed: $(tail -n3 "$LOG/rping-s-7176.log")"
	pair_wait b-done 300 >/dev/null
else
	P=$(pair_wait rping-up 300)
	step "b: rping to $PEER_IP:7174 (a listens on $P)"
	rping_client 7174 50 &
	pid=$!
	wait_for 30 bash -c "ss -Htn 'dst $PEER_IP:$P' | grep -q ."
	echo "   b's connection goes to a's mapped port $P"
	wait "$pid" || fail "rping over mapped ports failed: $(tail -n3 "$LOG/rping-c-7174.log")"

	for t in ib_write_bw ib_read_bw; do
		step "b: $t -R to a"
		pair_wait "$t-up" 300 >/dev/null
		timeout -k 5 $((180 * SLOW)) "$t" -R -F -d siw0 -s 65536 -n 200 "$PEER_IP" \
			>"$LOG/$t-c.log" 2>&1 || fail "$t failed: $(tail -n 5 "$LOG/$t-c.log")"
		# (Zeros: perftest's clock calibration under TCG, not the transfer.)
		grep -E '^ *65536 ' "$LOG/$t-c.log" | sed 's/^/   | /'
		pair_signal "$t-done"
	done

	step "b: NVMe-oF over RDMA to a, fio with crc32c verify"
	pair_wait nvme-up 300 >/dev/null
	modprobe nvme-rdma || fail "nvme-rdma does not load"
	timeout -k 5 $((60 * SLOW)) nvme connect -t rdma -a "$PEER_IP" -s 4420 -n "$NQN" \
		>"$LOG/nvme-connect.log" 2>&1 || { show_log "$LOG/nvme-connect.log"; fail "nvme connect failed"; }
	nvme_dev() {
		local b
		for b in /sys/block/nvme*n1; do
			[[ $(cat "$b/device/subsysnqn" 2>/dev/null) == "$NQN" && -b /dev/${b##*/} ]] &&
				echo "${b##*/}" && return 0
		done
		return 1
	}
	wait_for 30 nvme_dev
	d=$(nvme_dev)
	ss -Htn "dst $PEER_IP" | sed 's/^/   | /'
	timeout -k 5 $((300 * SLOW)) fio --name=nvme --filename="/dev/$d" --direct=1 \
		--ioengine=libaio --bs=64k --iodepth=8 --size=32M --rw=randwrite \
		--verify=crc32c --do_verify=1 --verify_fatal=1 --eta=never \
		--output-format=json --output="$LOG/fio-nvme.json" ||
		fail "fio over NVMe-oF failed: $(head -c 600 "$LOG/fio-nvme.json")"
	jq -r '.jobs[0] | "   fio: \(.write.io_bytes / 1048576) MiB written, \(.read.io_bytes / 1048576) MiB read and verified"' "$LOG/fio-nvme.json"
	nvme disconnect -n "$NQN" >/dev/null || fail "nvme disconnect failed"
	modprobe -r nvme-rdma
	pair_signal nvme-done

	step "b: iwpmd stopped here; a's listener is mapped: rping fails, saying why"
	iwpmd_stop
	pair_signal b-no-iwpmd
	pair_wait rping2-up 300 >/dev/null
	m=$(klog_mark)
	t0=$SECONDS
	rping_client 7175 5 && fail "rping to a mapped listener without iwpmd here succeeded"
	echo "   rping failed after $((SECONDS - t0)) s: $(tail -n1 "$LOG/rping-c-7175.log")"
	why=$(klog_since "$m" | grep -E 'TCP connect failed|MPA reply' | head -n1)
	echo "   b's kernel log: ${why#*] }"
	[[ $why == *"$PEER_IP:7175"*iwpmd* ]] ||
		fail "the failed connection does not say why: ${why:-nothing from siw0}"
	pair_signal rping2-done

	step "b: iwpmd here, none on a: rping to a's listener as named"
	iwpmd_start
	pair_wait rping3-up 300 >/dev/null
	t0=$SECONDS
	rping_client 7176 20 || fail "rping from a mapping host to one without failed: $(tail -n3 "$LOG/rping-c-7176.log")"
	echo "   rping passed in $((SECONDS - t0)) s"
	pair_signal b-done
fi

step "$ME: teardown"
iwpmd_stop
wait_for 30 qps_none siw0
[[ -z $(rdma res show cm_id 2>/dev/null) ]] || fail "rdma_cm IDs left: $(rdma res show cm_id)"
pair_signal torn-down
pair_wait torn-down 300 >/dev/null
rdma link delete siw0
siw_unload
echo PASS
