#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 600
# cost: 120
# guest: own (NFS and NVMe-oF servers, brd: more than a test can leave clean)
#
# Kernel ULPs over our siw, in one guest, one address: siw0 on eth0
# (10.99.20.1/24), server and client on the same host, so every
# connection runs between two QPs of siw0 (rdma_cm/iw_cm). These ULPs use
# kernel verbs paths that the other tests do not: fast registration
# (IB_WR_REG_MR with page lists), local invalidate, Send with Invalidate,
# the PD's local_dma_lkey (STag 0), RDMA Read and Write posted by kernel
# QPs.
#  1. NVMe-oF/RDMA: nvmet with a brd ramdisk (/dev/ram0) as namespace 1,
#     an nvmet-rdma port 4420 on 10.99.20.1; "nvme connect -t rdma"; 8 MiB
#     of random data written with O_DIRECT to the nvme block device, read
#     back with O_DIRECT and compared, and compared with /dev/ram0 on the
#     target side; 33 blocks of 4 KiB at an odd offset likewise;
#     disconnect, configfs torn down; no QP is left.
#  2. NFS/RDMA: knfsd exports a tmpfs (rpcbind, exportfs, rpc.mountd,
#     rpc.nfsd, then "rdma 20049" in /proc/fs/nfsd/portlist: svcrdma
#     listens on 0.0.0.0:20049 and on [::]:20049 with afonly set, so the
#     IPv6 wildcard listener must not take the IPv4 addresses); the client
#     mounts it with -o rdma,port=20049, once with vers=4.2 and once with
#     vers=3 (nolock). The mount must use RDMA (mountstats shows an rdma
#     transport, proto=rdma in /proc/mounts, QPs of siw0 in "rdma res show
#     qp"). A 4 MiB random file is copied in, caches are dropped, it is
#     read back and compared (also against the server's tmpfs); 200 small
#     files are written, listed and compared. Unmount and stop knfsd; no QP
#     is left.
# Afterwards siw0 is deleted and siw unloads with no leak.
# Our siw only (SIW_TEST_TYPE=linux_siw skips): Linux's siw was checked by
# hand (shared/FACTS.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/ulp.sh"

[[ $SIW_TEST_TYPE == siw ]] ||
	skip "kernel ULP test runs on our siw only"

IP=10.99.20.1
DEV=siw0
ULOG=$TLOG/ulp
mkdir -p "$ULOG"
DATA=/var/tmp/ulp-data
mkdir -p "$DATA"

need_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null ||
			fail "$c not installed (tools/deps installs nfs-kernel-server, nfs-common, rpcbind, nvme-cli)"
	done
}
need_cmd rpcbind exportfs rpc.mountd rpc.nfsd mount.nfs nvme cmp dd

show_qps() { rdma res show qp 2>&1 | sed 's/^/   | /'; }

# The kernel log since the last mark, for a failing step.
dmesg_mark() { DMESG_LINES=$(dmesg | wc -l); }
dmesg_since() { dmesg | tail -n "+$((DMESG_LINES + 1))" | tail -n 40 | sed 's/^/   | /'; }
step_fail() {
	echo "   kernel log since the step began:"
	dmesg_since
	fail "$*"
}

# Daemons this test started (foreground processes, stopped by pid).
DAEMONS=()
stop_daemons() {
	local p
	for p in "${DAEMONS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	DAEMONS=()
}
trap stop_daemons EXIT

step "siw0 on eth0 ($IP)"
siw_load
modprobe -a rpcrdma nfsd nfs nfsv3 nfsv4 || fail "NFS/RDMA modules do not load"
ip addr add "$IP/24" dev eth0
ip link set eth0 up
rdma link add "$DEV" type siw netdev eth0 || fail "rdma link add $DEV failed"
wait_for 20 port_active "$DEV"

# ---------------------------------------------------------------------------
# 1. NVMe-oF over RDMA (first: its listener is on one address)

NQN=nqn.2026-11.org.siw:ulp-test
CFS=/sys/kernel/config/nvmet

step "NVMe-oF target: brd /dev/ram0, nvmet-rdma port 4420"
dmesg_mark
modprobe brd rd_nr=1 rd_size=65536 || fail "brd does not load"
modprobe -a nvmet nvmet-rdma nvme-rdma || fail "nvmet-rdma / nvme-rdma do not load"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
[[ -d $CFS ]] || fail "$CFS missing"
mkdir "$CFS/subsystems/$NQN"
echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host"
mkdir "$CFS/subsystems/$NQN/namespaces/1"
echo -n /dev/ram0 >"$CFS/subsystems/$NQN/namespaces/1/device_path"
echo 1 >"$CFS/subsystems/$NQN/namespaces/1/enable"
mkdir "$CFS/ports/1"
echo rdma >"$CFS/ports/1/addr_trtype"
echo ipv4 >"$CFS/ports/1/addr_adrfam"
echo "$IP" >"$CFS/ports/1/addr_traddr"
echo 4420 >"$CFS/ports/1/addr_trsvcid"
ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN" ||
	step_fail "enabling nvmet-rdma port on $IP:4420 failed"
wait_for 30 bash -c "[[ -n \$(ss -Hltn 'sport = :4420') ]]"

step "NVMe-oF: nvme connect -t rdma"
dmesg_mark
timeout -k 5 120 nvme connect -t rdma -a "$IP" -s 4420 -n "$NQN" \
	>"$ULOG/nvme-connect.log" 2>&1 || {
	show_log "$ULOG/nvme-connect.log"
	step_fail "nvme connect -t rdma failed"
}
show_log "$ULOG/nvme-connect.log"

# The controller of our subsystem and its namespace's block device.
nvme_ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[[ -e $c/subsysnqn && $(<"$c/subsysnqn") == "$NQN" ]] &&
			{ basename "$c"; return 0; }
	done
	return 1
}
wait_for 30 nvme_ctrl
CTRL=$(nvme_ctrl)
[[ $(<"/sys/class/nvme/$CTRL/transport") == rdma ]] ||
	step_fail "$CTRL transport is $(<"/sys/class/nvme/$CTRL/transport"), not rdma"
wait_for 30 ulp_nvme_bdev "$NQN"
BDEV=/dev/$(ulp_nvme_bdev "$NQN")
wait_for 10 test -b "$BDEV"
echo "   controller $CTRL, namespace $BDEV, $(blockdev --getsize64 "$BDEV") bytes"
[[ $(blockdev --getsize64 "$BDEV") == $((64 << 20)) ]] ||
	step_fail "$BDEV is not the 64 MiB ramdisk"
echo "   QPs of $DEV while connected: $(qp_count "$DEV")"
(($(qp_count "$DEV") >= 2)) ||
	step_fail "expected host and target QPs on $DEV, found $(qp_count "$DEV")"

step "NVMe-oF: 8 MiB O_DIRECT write, read back, compare"
dmesg_mark
dd if=/dev/urandom of="$DATA/nvme.data" bs=1M count=8 status=none
timeout -k 5 300 dd if="$DATA/nvme.data" of="$BDEV" bs=1M oflag=direct \
	conv=fsync status=none || step_fail "O_DIRECT write to $BDEV failed"
timeout -k 5 300 dd if="$BDEV" of="$DATA/nvme.back" bs=1M count=8 \
	iflag=direct status=none || step_fail "O_DIRECT read from $BDEV failed"
cmp "$DATA/nvme.data" "$DATA/nvme.back" ||
	step_fail "data read back over NVMe/RDMA differs"
cmp -n $((8 << 20)) "$DATA/nvme.data" /dev/ram0 ||
	step_fail "data on the target's /dev/ram0 differs"
# Small and unaligned-offset I/O: 4 KiB blocks at an odd block offset.
dd if=/dev/urandom of="$DATA/nvme.small" bs=4k count=33 status=none
timeout -k 5 120 dd if="$DATA/nvme.small" of="$BDEV" bs=4k seek=1031 \
	oflag=direct status=none || step_fail "4 KiB O_DIRECT writes failed"
timeout -k 5 120 dd if="$BDEV" of="$DATA/nvme.sback" bs=4k skip=1031 count=33 \
	iflag=direct status=none || step_fail "4 KiB O_DIRECT reads failed"
cmp "$DATA/nvme.small" "$DATA/nvme.sback" ||
	step_fail "4 KiB blocks read back over NVMe/RDMA differ"
rm -f "$DATA"/nvme.*

step "NVMe-oF: disconnect, tear down configfs"
dmesg_mark
timeout -k 5 60 nvme disconnect -n "$NQN" | sed 's/^/   | /'
wait_for 30 bash -c '! ls /sys/class/nvme/ 2>/dev/null | grep -q .'
rm "$CFS/ports/1/subsystems/$NQN"
rmdir "$CFS/ports/1"
echo 0 >"$CFS/subsystems/$NQN/namespaces/1/enable"
rmdir "$CFS/subsystems/$NQN/namespaces/1"
rmdir "$CFS/subsystems/$NQN"
qps_gone 60 "$DEV" || step_fail "QPs left on $DEV after nvme disconnect"
modprobe -r nvme-rdma nvmet-rdma || fail "cannot unload nvme-rdma / nvmet-rdma"

# ---------------------------------------------------------------------------
# 2. NFS over RDMA

EXP=/srv/siw-export
MNT=/mnt/siw-nfs
mkdir -p "$EXP" "$MNT" /var/lib/nfs/v4recovery /run/rpcbind
mount -t tmpfs -o size=128m tmpfs "$EXP"

step "NFS server: rpcbind, exportfs, rpc.mountd, rpc.nfsd, portlist rdma 20049"
dmesg_mark
rpcbind -f -w >"$ULOG/rpcbind.log" 2>&1 &
DAEMONS+=($!)
wait_for 20 bash -c 'rpcinfo -p 127.0.0.1 >/dev/null'
echo "$EXP $IP/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" >/etc/exports
mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
exportfs -ra || step_fail "exportfs -ra failed"
rpc.mountd -F -d auth >"$ULOG/mountd.log" 2>&1 &
DAEMONS+=($!)
# rpc.mountd answers the kernel's export cache upcalls: it must be up
# before the first mount.
wait_for 30 bash -c 'rpcinfo -p 127.0.0.1 | grep -q mountd'
# NFSv4 refuses new OPENs during the grace period (90 s by default).
echo 10 >/proc/fs/nfsd/nfsv4leasetime
echo 10 >/proc/fs/nfsd/nfsv4gracetime
rpc.nfsd 4 || step_fail "rpc.nfsd failed"
echo 'rdma 20049' >/proc/fs/nfsd/portlist ||
	step_fail "knfsd cannot listen on rdma 20049 (svcrdma over $DEV)"
grep -q '^rdma 20049' /proc/fs/nfsd/portlist ||
	step_fail "portlist lacks 'rdma 20049': $(tr '\n' ' ' </proc/fs/nfsd/portlist)"
wait_for 30 bash -c "[[ -n \$(ss -Hltn 'sport = :20049') ]]"
exportfs -v | sed 's/^/   | /'

# nfs_rdma_round VERS OPTS PATH: mount PATH over RDMA, move data, unmount.
# The export is NFSv4's root (fsid=0): v4 mounts "/", v3 the full path.
nfs_rdma_round() {
	local vers=$1 opts=$2 path=$3 i f

	step "NFS vers=$vers: mount -o rdma,port=20049,$opts"
	dmesg_mark
	timeout -k 5 120 mount -t nfs -o "rdma,port=20049,$opts" \
		"$IP:$path" "$MNT" || {
		show_log "$ULOG/mountd.log"
		step_fail "NFS vers=$vers mount over RDMA failed"
	}
	grep " $MNT nfs" /proc/mounts | sed 's/^/   | /'
	grep " $MNT nfs.*proto=rdma" /proc/mounts >/dev/null ||
		step_fail "mount of $MNT does not say proto=rdma"
	awk -v m="$MNT" '$0 ~ "mounted on " m " " { on = 1; next }
		/^device / { on = 0 } on && /xprt:/' /proc/self/mountstats |
		tee "$ULOG/xprt.$vers" | sed 's/^/   | /'
	grep -q 'xprt:[[:space:]]*rdma' "$ULOG/xprt.$vers" ||
		step_fail "mountstats shows no rdma transport for $MNT"
	echo "   QPs of $DEV while mounted: $(qp_count "$DEV")"
	show_qps
	(($(qp_count "$DEV") >= 2)) ||
		step_fail "expected client and server QPs on $DEV, found $(qp_count "$DEV")"

	step "NFS vers=$vers: 4 MiB random file, drop caches, read back"
	dmesg_mark
	dd if=/dev/urandom of="$DATA/big" bs=1M count=4 status=none
	timeout -k 5 300 cp "$DATA/big" "$MNT/big.$vers" ||
		step_fail "writing 4 MiB to $MNT failed"
	timeout -k 5 120 sync || step_fail "sync of $MNT failed"
	echo 3 >/proc/sys/vm/drop_caches
	timeout -k 5 300 cmp "$DATA/big" "$MNT/big.$vers" ||
		step_fail "4 MiB file read back over NFS/RDMA differs"
	cmp "$DATA/big" "$EXP/big.$vers" ||
		step_fail "4 MiB file on the server's tmpfs differs"

	step "NFS vers=$vers: 200 small files, listing"
	dmesg_mark
	mkdir "$MNT/small.$vers" || step_fail "mkdir on $MNT failed"
	# Shell builtins only: an exec per file costs more than the NFS
	# operations under TCG.
	small=()
	for ((i = 0; i < 200; i++)); do
		small[i]="file $i of vers $vers $RANDOM$RANDOM"
		printf '%s\n' "${small[i]}" >"$MNT/small.$vers/f$i" ||
			step_fail "writing small file $i failed"
	done
	echo 3 >/proc/sys/vm/drop_caches
	f=$(timeout -k 5 60 ls "$MNT/small.$vers" | wc -l)
	[[ $f == 200 ]] || step_fail "listing shows $f files, expected 200"
	timeout -k 5 60 ls -l "$MNT" | sed 's/^/   | /'
	for ((i = 0; i < 200; i++)); do
		line=
		read -r line <"$MNT/small.$vers/f$i" &&
			[[ $line == "${small[i]}" ]] ||
			step_fail "small file $i read back differs: '$line'"
	done
	timeout -k 5 60 rm -r "$MNT/small.$vers" "$MNT/big.$vers" ||
		step_fail "removing files on $MNT failed"
	[[ -z $(ls -A "$EXP") ]] || step_fail "server tmpfs not empty after rm"

	step "NFS vers=$vers: unmount"
	timeout -k 5 60 umount "$MNT" || step_fail "umount $MNT failed"
}

nfs_rdma_round 4.2 vers=4.2 /
nfs_rdma_round 3 vers=3,nolock "$EXP"

step "NFS server: stop"
dmesg_mark
rpc.nfsd 0 || step_fail "rpc.nfsd 0 failed"
exportfs -ua
stop_daemons
umount /proc/fs/nfsd
qps_gone 60 "$DEV" ||
	step_fail "QPs left on $DEV after unmount and knfsd stop"
umount "$EXP"


step "teardown"
rdma link delete "$DEV"
wait_for 20 bash -c "! [[ -e /sys/class/infiniband/$DEV ]]"
modprobe -r rpcrdma 2>/dev/null || true
siw_unload
echo PASS
