#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# guest.sh --part PART [--impls "I..."] [--rounds N] [--quick]
#
# Benchmark body, run inside one guest by tests/perf/run, one PART per
# boot. Hosts are network namespaces joined by veths, one pair per
# implementation ("impl"), so that every impl has its own link and its
# own iperf3 figure:
#     ours   oa 10.99.1.1 <-> ob 10.99.1.2   our siw, both ends
#     linux  la 10.99.2.1 <-> lb 10.99.2.2   Linux's siw (linux_siw)
#     seg    sa 10.99.3.1 <-> sb 10.99.3.2   our siw, large_fpdu=N: one
#            FPDU per TCP segment, as it sends to Linux's siw and RNICs
#     crc    ca 10.99.5.1 <-> cb 10.99.5.2   our siw, mpa_crc=2 (CRC on)
#     o2l    xa 10.99.4.1 (ours) -> xb 10.99.4.2 (Linux's): client ours
#     l2o    xb (Linux's) -> xa (ours): client Linux's
# Clients run in host a (o2l: xa; l2o: xb), servers in the other, and a
# perftest server listens on its own address only (the preload shim
# build/progs/bind_addr.so), so every link stays up: a wildcard listen
# would make every iWARP device listen, and Linux's siw listens in the
# caller's namespace, where it would collide with ours.
#
# Parts (tests/perf/run boots each with its vCPU count):
#   bw        ib_{write,read,send}_bw at 64 KiB and 1 MiB, iperf3 per link
#             (default impls: ours seg crc linux)
#   lat       ib_{write,read,send}_lat at 8 B (ours linux)
#   mq        ib_write_bw and ib_send_bw 64 KiB with -q 1 and -q 4 (ours linux)
#   interop   bw at 64 KiB and lat at 8 B (ours linux o2l l2o)
#   storage   in the initial namespace, over one address (siw0 on eth0):
#             fio on one nvmet target (brd) through NVMe-oF/RDMA and
#             NVMe/TCP (seqread and seqwrite 128 KiB, randread 4 KiB,
#             iodepth 16), and a 256 MiB file written and read through
#             NFS/RDMA and NFS/TCP (impls nvme-rdma nvme-tcp nfs-rdma nfs-tcp)
#   sweep-bw  the bw tools and iperf3 (-l SIZE) at 2 B .. 1 MiB (ours linux)
#   sweep-lat the lat tools at 2 B .. 1 MiB (ours linux)
#   prof      the lat tools at 8 B with the client under perf record -a -g
#             (cpu-clock; TCG has no PMU): logs/NAME.prof is perf report's
#             view by symbol, for finding where the time goes (ours linux)
#   prof-bw   likewise for the bw tools at 64 KiB and iperf3, on 1 vCPU, so
#             that the samples cover both ends and every softirq, and
#             build/progs/memcrc: memcpy and CRC32C MiB/s (ours)
# A round runs every test of the part on each impl in turn (ours, linux,
# ours, linux, ... in one boot). Every measurement is one line of
# $VM_JOB/runs.tsv:
#     part round impl test size unit value
# and each tool's output is kept in $VM_JOB/logs/. tests/perf/table turns
# runs.tsv into the table. Nothing here asserts on time: the script fails
# (at the end, after every test ran) only if a tool failed.
# shellcheck source=tests/vm/lib.sh
. "$SIW_SRC/tests/vm/lib.sh"
# shellcheck source=tests/vm/traffic.sh
. "$SIW_SRC/tests/vm/traffic.sh"
# shellcheck source=tests/vm/ulp.sh
. "$SIW_SRC/tests/vm/ulp.sh"

part='' impls=() rounds=3 quick=0
while (($#)); do
	case $1 in
	--part) part=$2; shift 2 ;;
	--impls) read -ra impls <<<"$2"; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--quick) quick=1; shift ;;
	# tools/testing/vm/run hands a script without arguments one empty one.
	'') shift ;;
	*) fail "guest.sh: unknown argument $1" ;;
	esac
done

if ((${#impls[@]} == 0)); then
	case $part in
	bw) impls=(ours seg crc linux) ;;
	interop) impls=(ours linux o2l l2o) ;;
	storage) impls=(nvme-rdma nvme-tcp nfs-rdma nfs-tcp) ;;
	lat | mq | sweep-bw | sweep-lat | prof) impls=(ours linux) ;;
	prof-bw) impls=(ours) ;;
	*) fail "guest.sh: --part takes bw, lat, mq, interop, storage, sweep-bw, sweep-lat, prof or prof-bw" ;;
	esac
fi

out=${VM_JOB:-/run/vm}
logs=$out/logs
mkdir -p "$logs"
# client_server (traffic.sh) keeps each tool's output here.
TLOG=$logs
rm -f "$out/notes"
runs=$out/runs.tsv
printf 'part\tround\timpl\ttest\tsize\tunit\tvalue\n' >"$runs"
# perftest's client can crash in librdmacm after a failed connect (seen:
# ib_read_lat after "Connection refused"). Its exit status already counts
# that run as failed; keep the kernel from logging the user-space fault as
# "traps: ... general protection fault", which the runner would take for a
# kernel problem.
sysctl -qw debug.exception-trace=0 || true

# Sizes and iterations. perftest reports 0.00 MB/s when the iterations
# do not exceed its TX depth (128), and its duration mode (-D) reports
# 0.00 too and may hang ib_send_bw, so counts are fixed: about 64 MiB per
# bandwidth run (at least 200, at most 20000 messages), about 16 MiB per
# latency run (at least 100, at most 5000).
bw_sizes=(65536 1048576)
lat_sizes=(8)
sweep_sizes=(2 8 32 128 512 2048 8192 32768 131072 524288 1048576)
iperf_secs=5 fio_secs=10 nfs_mib=256 nvme_mib=256
bw_iters() { local n=$((64 * 1048576 / $1)); ((n < 200)) && n=200; ((n > 20000)) && n=20000; echo "$n"; }
lat_iters() { local n=$((16 * 1048576 / $1)); ((n < 100)) && n=100; ((n > 5000)) && n=5000; echo "$n"; }
if ((quick)); then
	bw_sizes=(65536) sweep_sizes=(8 65536)
	bw_iters() { echo 300; }
	lat_iters() { echo 500; }
	iperf_secs=2 fio_secs=3 nfs_mib=32 nvme_mib=64
fi
# No single run may take longer than this (seconds).
run_limit=300

# Per impl: its two hosts' prefix, the link type on each, its subnet.
declare -A pfx=([ours]=o [linux]=l [seg]=s [crc]=c [o2l]=x [l2o]=x)
declare -A subnet=([o]=10.99.1 [l]=10.99.2 [s]=10.99.3 [x]=10.99.4 [c]=10.99.5)
# Link type of host HOST (oa, ob, la, ...): xb is Linux's end of the
# interop pair.
host_type() {
	case $1 in
	l? | xb) echo linux_siw ;;
	*) echo siw ;;
	esac
}
dev_of() { echo "p_$1"; }
ip_of() { if [[ $1 == *a ]]; then echo "${subnet[${1:0:1}]}.1"; else echo "${subnet[${1:0:1}]}.2"; fi; }
# The server's host of IMPL: b, but a (our end) when Linux's initiates.
srv_of() { if [[ $1 == l2o ]]; then echo xa; else echo "${pfx[$1]}b"; fi; }

failures=()

# record ROUND IMPL TEST SIZE UNIT VALUE
record() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$part" "$@" >>"$runs"
	printf 'perf: %s round %s %-9s %-14s %8s %10s %s\n' "$part" "$@"
}

note() {
	echo "perf: NOTE: $*"
	echo "$*" >>"$out/notes"
}

# The hosts of every impl (each pair once) with their links.
setup_links() {
	local impl p h seen=' '
	for impl in "${impls[@]}"; do
		p=${pfx[$impl]}
		[[ $seen == *" $p "* ]] && continue
		seen+="$p "
		for h in "${p}a" "${p}b"; do
			link_type_load "$(host_type "$h")"
			host_add "$h"
		done
		host_link "${p}a" "${p}b" "${subnet[$p]}"
		for h in "${p}a" "${p}b"; do
			on "$h" rdma link add "$(dev_of "$h")" type "$(host_type "$h")" \
				netdev "v-$h" || fail "rdma link add $(dev_of "$h") failed"
		done
		for h in "${p}a" "${p}b"; do
			wait_for 20 port_active "$(dev_of "$h")"
		done
		echo "perf: ${p}a $(host_type "${p}a") $(ip_of "${p}a") <-> ${p}b $(host_type "${p}b") $(ip_of "${p}b")"
	done
}

# activate IMPL: our siw's parameters as IMPL wants them (each new
# connection reads them).
activate() {
	grep -q '^siw ' /proc/modules || return 0
	case $1 in
	seg) siw_param large_fpdu N; siw_param mpa_crc 1 ;;
	crc) siw_param large_fpdu Y; siw_param mpa_crc 2 ;;
	*) siw_param large_fpdu Y; siw_param mpa_crc 1 ;;
	esac
}

# Tear down whatever is set up (also on a failing exit).
cleanup() {
	local h
	srv_stop_all
	# Every link first, then the namespaces: deleting a namespace takes
	# the other end's veth down too, and Linux's siw 6.1 oopsed in its
	# netdev-down work (siw_netdev_down) when its link was deleted just
	# after that (seen here).
	for h in oa ob la lb sa sb ca cb xa xb; do
		rdma link delete "$(dev_of "$h")" 2>/dev/null || true
	done
	for h in oa ob la lb sa sb ca cb xa xb; do
		ip netns del "$h" 2>/dev/null || true
	done
	[[ $part != storage ]] || storage_down
}
trap cleanup EXIT

# perftest ROUND IMPL TOOL SIZE [TEST [ARGS...]]: one perftest run,
# recorded under TEST (default TOOL) as the client's average bandwidth
# (MiB/s, perftest's MB = 2^20 bytes) or typical (median) latency in
# microseconds. ib_send_lat measures on both sides and one of them may
# print "inf"; then the server's figure counts. A run without a figure,
# or whose connection was refused before any transfer, is retried twice,
# on a fresh port, and said so (notes): both drivers now and then see the
# TCP SYN to a listening perftest server refused (about 1 connection in
# 30 in a loaded guest; cause not known). Under TCG a latency run, for
# both drivers, either shows tens of microseconds or is dominated by
# waits of a scheduler tick (4 ms at HZ=250), hence medians over rounds.
perftest() {
	local r=$1 impl=$2 tool=$3 size=$4 test=${5:-$3} name val unit=MiB/s try tries=3 n sh ch
	shift 5 2>/dev/null || shift $#
	[[ $tool == *_lat ]] && unit=us
	if [[ $unit == us ]]; then n=$(lat_iters "$size"); else n=$(bw_iters "$size"); fi
	sh=$(srv_of "$impl") ch=$(other_host "$(srv_of "$impl")")
	for ((try = 1; try <= tries; try++)); do
		next_port
		name=r$r-$impl-$test-$size
		((try == 1)) || name+=-retry$((try - 1))
		local prof=()
		[[ $part != prof* ]] || prof=("${prof_cmd[@]}" -o "/tmp/$name.data" --)
		if ! client_server "$name" "$sh" "$run_limit" \
			env "LD_PRELOAD=$SIW_BUILD/progs/bind_addr.so" "SIW_BIND_ADDR=$(ip_of "$sh")" \
			"$tool" -R -F -d "$(dev_of "$sh")" -p "$TPORT" -s "$size" -n "$n" "$@" -- \
			"${prof[@]}" "$tool" -R -F -d "$(dev_of "$ch")" -p "$TPORT" -s "$size" -n "$n" "$@" \
			"$(ip_of "$sh")"; then
			if ((try < tries)) && [[ -f $TLOG/$name.cli ]] &&
				grep -Eq 'Connection refused|REJECTED; error: -111' "$TLOG/$name.cli" &&
				! grep -q '#bytes' "$TLOG/$name.cli"; then
				note "$name: connection refused, retried"
				continue
			fi
			failures+=("$name")
			return 0
		fi
		val=$(perf_value "$tool" "$TLOG/$name.cli")
		if [[ -z $val && $tool == ib_send_lat ]]; then
			val=$(perf_value "$tool" "$TLOG/$name.srv")
		fi
		[[ -n $val ]] && break
		# perftest calibrates its clock per report; under TCG that
		# sometimes fails and the row reads 0.00 or inf.
		if ((try < tries)); then
			note "$name: no figure in the report ($(grep -c 'Correlation coefficient' \
				"$TLOG/$name.cli") clock calibration warnings), retried"
			continue
		fi
		echo "perf: $name: no figure in the report"
		show_log "$TLOG/$name.cli"
		failures+=("$name")
		return 0
	done
	record "$r" "$impl" "$test" "$size" "$unit" "$val"
	[[ $part != prof* ]] || prof_report "$name"
}

# The profiler of the prof parts (cpu-clock: TCG has no PMU), and
# prof_report NAME: perf report's view by symbol of /tmp/NAME.data into
# logs/NAME.prof, and the CPU's share per task (the polling process,
# ksoftirqd, the siw_tx workers...) into logs/NAME.comm.
prof_cmd=(perf record -q -a -g -e cpu-clock -F 499)
prof_report() {
	perf report -i "/tmp/$1.data" --stdio --no-children --sort sym \
		--percent-limit 0.2 -g caller,0.5,callee --max-stack 12 \
		>"$TLOG/$1.prof" 2>/dev/null || note "$1: perf report failed"
	perf report -i "/tmp/$1.data" --stdio --no-children --sort comm,dso \
		-g none --percent-limit 0.5 >"$TLOG/$1.comm" 2>/dev/null ||
		note "$1: perf report by task failed"
	rm -f "/tmp/$1.data"
}

# iperf ROUND IMPL [SIZE]: TCP throughput over IMPL's veth (MiB/s,
# received), with writes of SIZE octets (iperf3 -l) if given; recorded as
# test iperf3, size "tcp" (or SIZE).
iperf() {
	local r=$1 impl=$2 size=${3:-} name val sh args=() prof=()
	sh=$(srv_of "$impl")
	[[ -z $size ]] || args=(-l "$size")
	next_port
	name=r$r-$impl-iperf3${size:+-$size}
	[[ $part != prof* ]] || prof=("${prof_cmd[@]}" -o "/tmp/$name.data" --)
	if ! client_server "$name" "$sh" "$run_limit" \
		iperf3 -s -1 -p "$TPORT" -- \
		"${prof[@]}" iperf3 -c "$(ip_of "$sh")" -p "$TPORT" -t "$iperf_secs" "${args[@]}" -J; then
		failures+=("$name")
		return 0
	fi
	if ! val=$(iperf_mibs "$TLOG/$name.cli"); then
		echo "perf: $name: no throughput in iperf3's report"
		show_log "$TLOG/$name.cli"
		failures+=("$name")
		return 0
	fi
	record "$r" "$impl" iperf3 "${size:-tcp}" MiB/s "$val"
	[[ $part != prof* ]] || prof_report "$name"
}

# memcrc ROUND IMPL: what a copy and a CRC32C of 64 KiB cost on this
# (emulated) CPU, recorded as tests memcpy and crc32c (MiB/s).
memcrc() {
	local r=$1 impl=$2 log=$TLOG/r$1-memcrc v
	if ! "$SIW_BUILD/progs/memcrc" 2 >"$log" 2>&1; then
		show_log "$log"
		failures+=("r$r-memcrc")
		return 0
	fi
	v=$(awk '/^memcpy/ { print $3 }' "$log")
	record "$r" "$impl" memcpy 65536 MiB/s "$v"
	v=$(awk '/^crc32c 64KiB/ { print $3 }' "$log")
	record "$r" "$impl" crc32c 65536 MiB/s "$v"
}

# ---------------------------------------------------------------------------
# Storage: one nvmet subsystem (brd) with an RDMA and a TCP port, and one
# knfsd export (tmpfs) that serves over TCP and RDMA, all on 10.99.20.1
# (siw0 on eth0): kernel ULPs use the initial namespace, so target and
# host, server and client, talk over that one address, both transports.
ST_IP=10.99.20.1 ST_NQN=nqn.2026-11.org.siw:perf MNT=/mnt/perf-nfs

storage_up() {
	local s=$ULP_CFS/subsystems/$ST_NQN p n t port
	command -v fio >/dev/null || fail "fio missing (make deps)"
	ip addr add "$ST_IP/24" dev eth0
	ip link set eth0 up
	link_type_load siw
	rdma link add siw0 type siw netdev eth0 || fail "rdma link add siw0 failed"
	wait_for 20 port_active siw0
	modprobe brd rd_nr=1 rd_size=$((nvme_mib * 1024)) || fail "brd does not load"
	modprobe -a nvmet nvmet-rdma nvmet-tcp nvme-rdma nvme-tcp ||
		fail "nvmet-rdma, nvmet-tcp, nvme-rdma or nvme-tcp does not load"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo -n /dev/ram0 >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable"
	# Fill the ramdisk once, so that reads read pages, not holes.
	dd if=/dev/urandom of=/dev/ram0 bs=1M count="$nvme_mib" status=none
	for p in 1:rdma:4420 2:tcp:4421; do
		IFS=: read -r n t port <<<"$p"
		mkdir "$ULP_CFS/ports/$n"
		echo "$t" >"$ULP_CFS/ports/$n/addr_trtype"
		echo ipv4 >"$ULP_CFS/ports/$n/addr_adrfam"
		echo "$ST_IP" >"$ULP_CFS/ports/$n/addr_traddr"
		echo "$port" >"$ULP_CFS/ports/$n/addr_trsvcid"
		ln -s "$s" "$ULP_CFS/ports/$n/subsystems/$ST_NQN" ||
			fail "enabling the nvmet $t port $ST_IP:$port failed"
		wait_for 30 bash -c "[[ -n \$(ss -Hltn 'sport = :$port') ]]"
	done
	ulp_nfs_up "$ST_IP" "$MNT" 320m
	umount "$MNT" || fail "cannot unmount the first NFS mount"
}

storage_down() {
	local s=$ULP_CFS/subsystems/$ST_NQN n
	umount -f "$MNT" 2>/dev/null || true
	ulp_nfs_down "$MNT"
	timeout -k 5 60 nvme disconnect -n "$ST_NQN" >/dev/null 2>&1 || true
	for n in 1 2; do
		rm -f "$ULP_CFS/ports/$n/subsystems/$ST_NQN"
		rmdir "$ULP_CFS/ports/$n" 2>/dev/null || true
	done
	echo 0 >"$s/namespaces/1/enable" 2>/dev/null || true
	rmdir "$s/namespaces/1" "$s" 2>/dev/null || true
	modprobe -r nvme-rdma nvme-tcp nvmet-rdma nvmet-tcp 2>/dev/null || true
	rmmod brd 2>/dev/null || true
	rdma link delete siw0 2>/dev/null || true
}

# fio_run ROUND IMPL TEST FILE RW BS SIZE_MIB [TIME]: one fio job, recorded
# as MiB/s of its direction.
fio_run() {
	local r=$1 impl=$2 test=$3 file=$4 rw=$5 bs=$6 mib=$7 timed=${8:-} name dir val args=()
	name=r$r-$impl-$test
	dir="read"
	[[ $rw == *write ]] && dir="write"
	[[ -z $timed ]] || args=(--runtime="$fio_secs" --time_based)
	if ! timeout -k 5 "$run_limit" fio --name="$test" --filename="$file" --direct=1 \
		--ioengine=libaio --iodepth=16 --rw="$rw" --bs="$bs" --size="${mib}M" \
		"${args[@]}" --output-format=json --output="$TLOG/$name.json" \
		>"$TLOG/$name.log" 2>&1; then
		show_log "$TLOG/$name.log"
		failures+=("$name")
		return 0
	fi
	val=$(jq -r ".jobs[0].$dir.bw_bytes / 1048576 * 100 | round / 100" "$TLOG/$name.json")
	if ! [[ $val =~ ^[0-9]+(\.[0-9]+)?$ ]] || [[ $val == 0 ]]; then
		echo "perf: $name: no bandwidth in fio's report"
		failures+=("$name")
		return 0
	fi
	record "$r" "$impl" "$test" "$bs" MiB/s "$val"
}

# storage_round ROUND IMPL
storage_round() {
	local r=$1 impl=$2 t=${2#*-} bdev
	case $impl in
	nvme-*)
		local port=4420
		[[ $t == tcp ]] && port=4421
		if ! timeout -k 5 120 nvme connect -t "$t" -a "$ST_IP" -s "$port" -n "$ST_NQN" \
			>"$TLOG/r$r-$impl-connect.log" 2>&1 ||
			! until_ok 30 ulp_nvme_bdev "$ST_NQN"; then
			show_log "$TLOG/r$r-$impl-connect.log"
			failures+=("r$r-$impl-connect")
			return 0
		fi
		bdev=/dev/$(ulp_nvme_bdev "$ST_NQN")
		fio_run "$r" "$impl" seqread "$bdev" read 128k "$nvme_mib" timed
		fio_run "$r" "$impl" seqwrite "$bdev" write 128k "$nvme_mib" timed
		fio_run "$r" "$impl" randread "$bdev" randread 4k "$nvme_mib" timed
		timeout -k 5 60 nvme disconnect -n "$ST_NQN" >/dev/null 2>&1 ||
			failures+=("r$r-$impl-disconnect")
		wait_for 60 ulp_nvme_none
		;;
	nfs-*)
		local opts=vers=4.2,proto=tcp
		[[ $t == rdma ]] && opts=vers=4.2,proto=rdma,port=20049
		if ! timeout -k 5 120 mount -t nfs -o "$opts" "$ST_IP:/" "$MNT"; then
			failures+=("r$r-$impl-mount")
			return 0
		fi
		grep -q " $MNT nfs.*proto=$t" /proc/mounts || fail "$MNT is not mounted with proto=$t"
		rm -f "$MNT/perf.dat"
		fio_run "$r" "$impl" write "$MNT/perf.dat" write 1m "$nfs_mib"
		fio_run "$r" "$impl" read "$MNT/perf.dat" read 1m "$nfs_mib"
		rm -f "$MNT/perf.dat"
		umount "$MNT" || failures+=("r$r-$impl-umount")
		;;
	esac
}

# one_round ROUND IMPL: every test of the part once on IMPL.
one_round() {
	local r=$1 impl=$2 tool s
	activate "$impl"
	case $part in
	bw | interop)
		for tool in ib_write_bw ib_read_bw ib_send_bw; do
			for s in "${bw_sizes[@]}"; do
				[[ $part == interop && $s != 65536 ]] && continue
				perftest "$r" "$impl" "$tool" "$s"
			done
		done
		if [[ $part == interop ]]; then
			perftest "$r" "$impl" ib_write_lat 8
			perftest "$r" "$impl" ib_read_lat 8
		else
			iperf "$r" "$impl"
		fi
		;;
	lat | prof)
		for tool in ib_write_lat ib_read_lat ib_send_lat; do
			for s in "${lat_sizes[@]}"; do
				perftest "$r" "$impl" "$tool" "$s"
			done
		done
		;;
	prof-bw)
		for tool in ib_write_bw ib_read_bw ib_send_bw; do
			perftest "$r" "$impl" "$tool" 65536
		done
		iperf "$r" "$impl"
		memcrc "$r" "$impl"
		;;
	mq)
		for tool in ib_write_bw ib_send_bw; do
			perftest "$r" "$impl" "$tool" 65536 "$tool" -q 1
			perftest "$r" "$impl" "$tool" 65536 "$tool-q4" -q 4
		done
		;;
	sweep-bw | sweep-lat)
		for s in "${sweep_sizes[@]}"; do
			for tool in ib_write ib_read ib_send; do
				perftest "$r" "$impl" "${tool}_${part#sweep-}" "$s"
			done
			# TCP at this size: one link's worth is enough.
			[[ $part != sweep-bw || $impl != ours ]] || iperf "$r" "$impl" "$s"
		done
		;;
	storage) storage_round "$r" "$impl" ;;
	esac
}

step "setup: $part: ${impls[*]}"
[[ $part != prof* ]] || command -v perf >/dev/null || fail "perf missing (linux-perf; make deps)"
if [[ $part == storage ]]; then
	storage_up
else
	setup_links
fi

t0=$SECONDS
for ((r = 1; r <= rounds; r++)); do
	for impl in "${impls[@]}"; do
		step "$part: round $r of $rounds: $impl"
		one_round "$r" "$impl"
	done
done
echo "perf: $part: $rounds rounds in $((SECONDS - t0))s"

step "teardown"
cleanup
trap - EXIT
grep -q '^siw_linux ' /proc/modules && link_type_unload linux_siw
grep -q '^siw ' /proc/modules && link_type_unload siw

if ((${#failures[@]})); then
	fail "tool runs failed: ${failures[*]}"
fi
echo PASS
