# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# shellcheck shell=bash
#
# Kernel ULPs over a siw device in the initial namespace, for guest tests
# that keep them running as load (296-teardown-load, soak.sh); sourced
# after lib.sh. Kernel ULPs use rdma_cm in the initial namespace only, so
# target and host, server and client share one address there and every
# connection runs between two QPs of that one device.
#
#   ulp_nvme_up IP PORT NQN MIB   nvmet-rdma on IP:PORT exporting a brd
#                                 ramdisk of MIB MiB as namespace 1, the
#                                 host connected to it; sets NVME_BDEV
#   ulp_nvme_down NQN             disconnect, configfs torn down, modules
#                                 unloaded (whatever is left of them)
#   ulp_nfs_up IP MNT [SIZE]      knfsd exporting a tmpfs (SIZE, default
#                                 256m) over TCP and rdma 20049, mounted
#                                 at MNT (vers=4.2, proto=rdma); sets
#                                 NFS_EXPORT
#   ulp_nfs_down MNT              unmount, stop knfsd and its daemons
#
# Every wait is bounded and stretched by SLOW (the debug kernel).

ULP_CFS=/sys/kernel/config/nvmet

# The namespace block device of NQN's controller (nvmeXnY, not a hidden
# multipath member nvmeXcYnZ) whose /dev node is there: one of an older
# controller may still be on its way out.
ulp_nvme_bdev() {
	local b
	for b in /sys/block/nvme*n1; do
		[[ $(basename "$b") =~ ^nvme[0-9]+n1$ ]] || continue
		[[ $(cat "$b/device/subsysnqn" 2>/dev/null) == "$1" ]] || continue
		[[ -b /dev/$(basename "$b") ]] || continue
		basename "$b"
		return 0
	done
	return 1
}

ulp_nvme_up() {
	local ip=$1 port=$2 nqn=$3 mib=$4 s
	modprobe brd rd_nr=1 rd_size=$((mib * 1024)) || fail "brd does not load"
	modprobe -a nvmet nvmet-rdma nvme-rdma || fail "nvmet-rdma / nvme-rdma do not load"
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
	s=$ULP_CFS/subsystems/$nqn
	mkdir "$s"
	echo 1 >"$s/attr_allow_any_host"
	mkdir "$s/namespaces/1"
	echo -n /dev/ram0 >"$s/namespaces/1/device_path"
	echo 1 >"$s/namespaces/1/enable"
	mkdir "$ULP_CFS/ports/1"
	echo rdma >"$ULP_CFS/ports/1/addr_trtype"
	echo ipv4 >"$ULP_CFS/ports/1/addr_adrfam"
	echo "$ip" >"$ULP_CFS/ports/1/addr_traddr"
	echo "$port" >"$ULP_CFS/ports/1/addr_trsvcid"
	ln -s "$s" "$ULP_CFS/ports/1/subsystems/$nqn" ||
		fail "enabling the nvmet-rdma port $ip:$port failed"
	wait_for 30 bash -c "[[ -n \$(ss -Hltn 'sport = :$port') ]]"
	timeout -k 5 $((60 * SLOW)) nvme connect -t rdma -a "$ip" -s "$port" -n "$nqn" \
		>"$TLOG/nvme-connect.log" 2>&1 || {
		show_log "$TLOG/nvme-connect.log"
		fail "nvme connect -t rdma to $ip:$port failed"
	}
	until_ok 30 ulp_nvme_bdev "$nqn" || {
		find /sys/block /sys/class/nvme -maxdepth 1 -name 'nvme*' 2>&1 | sed 's/^/   | /'
		fail "no block device of $nqn with a /dev node"
	}
	# shellcheck disable=SC2034 # for the caller
	NVME_BDEV=/dev/$(ulp_nvme_bdev "$nqn")
}

# No NVMe controller and no NVMe block device at all. A namespace's block
# device (with native multipath, the head's) can outlive its controller
# for a moment, and its /dev node goes only with it: a new namespace of
# the same name made before then loses its node to the old one's removal.
ulp_nvme_none() {
	[[ $(find /sys/class/nvme/ /sys/block/ -mindepth 1 -maxdepth 1 -name 'nvme*' 2>/dev/null |
		grep -c .) == 0 ]]
}

ulp_nvme_down() {
	local nqn=$1 s=$ULP_CFS/subsystems/$1
	timeout -k 5 $((60 * SLOW)) nvme disconnect -n "$nqn" >/dev/null 2>&1 || true
	wait_for 60 ulp_nvme_none
	rm -f "$ULP_CFS/ports/1/subsystems/$nqn"
	rmdir "$ULP_CFS/ports/1" 2>/dev/null || true
	echo 0 >"$s/namespaces/1/enable" 2>/dev/null || true
	rmdir "$s/namespaces/1" "$s" 2>/dev/null || true
	modprobe -r nvme-rdma nvmet-rdma 2>/dev/null || true
	rmmod brd 2>/dev/null || true
}

ULP_DAEMONS=()
ulp_nfs_up() {
	local ip=$1 mnt=$2 size=${3:-256m}
	command -v rpc.nfsd >/dev/null || fail "nfs-kernel-server missing (make deps)"
	modprobe -a rpcrdma nfsd nfs nfsv4 || fail "NFS/RDMA modules do not load"
	# shellcheck disable=SC2034 # for the caller too
	NFS_EXPORT=/srv/siw-ulp-export
	mkdir -p "$NFS_EXPORT" "$mnt" /var/lib/nfs/v4recovery /run/rpcbind
	mount -t tmpfs -o "size=$size" tmpfs "$NFS_EXPORT"
	rpcbind -f -w >"$TLOG/rpcbind.log" 2>&1 &
	ULP_DAEMONS+=($!)
	wait_for 20 bash -c 'rpcinfo -p 127.0.0.1 >/dev/null'
	echo "$NFS_EXPORT $ip/24(rw,no_root_squash,insecure,no_subtree_check,fsid=0)" >/etc/exports
	mountpoint -q /proc/fs/nfsd || mount -t nfsd nfsd /proc/fs/nfsd
	exportfs -ra || fail "exportfs -ra failed"
	rpc.mountd -F >"$TLOG/mountd.log" 2>&1 &
	ULP_DAEMONS+=($!)
	wait_for 30 bash -c 'rpcinfo -p 127.0.0.1 | grep -q mountd'
	# NFSv4 refuses new OPENs during the grace period (90 s by default).
	echo 10 >/proc/fs/nfsd/nfsv4leasetime
	echo 10 >/proc/fs/nfsd/nfsv4gracetime
	rpc.nfsd 4 || fail "rpc.nfsd failed"
	echo 'rdma 20049' >/proc/fs/nfsd/portlist || fail "knfsd cannot listen on rdma 20049"
	wait_for 30 bash -c "[[ -n \$(ss -Hltn 'sport = :20049') ]]"
	timeout -k 5 $((120 * SLOW)) mount -t nfs -o rdma,port=20049,vers=4.2 "$ip:/" "$mnt" ||
		fail "NFS mount over RDMA failed"
	grep -q " $mnt nfs.*proto=rdma" /proc/mounts || fail "$mnt is not mounted with proto=rdma"
}

ulp_nfs_down() {
	local mnt=$1 p
	timeout -k 5 $((60 * SLOW)) umount -f "$mnt" 2>/dev/null ||
		timeout -k 5 60 umount -l "$mnt" 2>/dev/null || true
	rpc.nfsd 0 2>/dev/null || true
	exportfs -ua 2>/dev/null || true
	for p in "${ULP_DAEMONS[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	ULP_DAEMONS=()
	umount /proc/fs/nfsd 2>/dev/null || true
	umount "$NFS_EXPORT" 2>/dev/null || true
	modprobe -r rpcrdma 2>/dev/null || true
}
