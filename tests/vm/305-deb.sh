#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# timeout: 3600
# cost: 2100
# guest: own (dpkg and DKMS change the guest's root; it builds a module)
# make check: skip (DKMS builds siw.ko in the guest: 34 minutes here under TCG with other guests beside it, for each of 6.1 and 6.12 when both have headers)
# debug: skip (checks the packages, not siw's code, which every other test runs there; the debug kernel has no headers package for DKMS)
#
# The Debian packages of make deb (tests/run builds them: build/deb/), as
# an admin uses them, in a guest whose root is a writable copy of the
# host's:
#  1. dpkg -i siw-dkms and siw-ibverbs-provider: DKMS builds siw.ko for the
#     running kernel (and for the newest installed one, 6.12 on this
#     machine, which the test does not load) into updates/dkms/ (the harness's own siw.ko is taken
#     away first, so no other one can load), "dkms status" says installed,
#     the module's parameters are the ones README.Debian documents, and
#     the stock provider is diverted, not overwritten.
#  2. modprobe siw, rdma link add on a veth pair between two namespaces:
#     rping -V and ibv_rc_pingpong -c, through our provider (with
#     VERBS_LOG_LEVEL=4 it names itself); rmmod siw without leaks.
#  3. dpkg --purge both: nothing of ours is left (module, DKMS tree,
#     sources, docs, diversion, dpkg's record of either package), the
#     stock provider is back byte for byte (dpkg --verify
#     ibverbs-providers) and opens a siw device again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/traffic.sh"
. "$(dirname "$0")/qpc.sh"

kver=$(uname -r)
[[ $kver != *siwdebug* ]] ||
	skip "checks the packages, not siw's code (which every other test runs on this kernel); the debug kernel's tree has no headers package for DKMS to build against"
deb=${SIW_BUILD:-$SIW_SRC/build}/deb
dkms_deb=$(ls "$deb"/siw-dkms_*_all.deb 2>/dev/null | head -n1)
prov_deb=$(ls "$deb"/siw-ibverbs-provider_*_"$(dpkg --print-architecture)".deb 2>/dev/null | head -n1)
[[ -f $dkms_deb && -f $prov_deb ]] || fail "no packages in $deb (make deb; tests/run builds them)"
ver=$(dpkg-deb -f "$dkms_deb" Version)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
stock=/usr/lib/$multiarch/libibverbs/libsiw-rdmav34.so
[[ -f $stock ]] || fail "the stock provider $stock is missing (ibverbs-providers)"
stock_md5=$(md5sum <"$stock")
[[ -e /lib/modules/$kver/build/Makefile ]] || fail "no headers for $kver (linux-headers-$kver)"
export DEBIAN_FRONTEND=noninteractive
unset RDMAV_DRIVERS IBV_DRIVERS

# What of ours is on the guest's root: nothing, before and after.
ours_left() {
	local f
	dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' 'siw-*' 2>/dev/null | grep -v ' un *$' || true
	dpkg-divert --list | grep -F "$stock" || true
	for f in /usr/src/siw-* /var/lib/dkms/siw /usr/share/doc/siw-dkms \
		/usr/share/doc/siw-ibverbs-provider "$stock.stock" \
		/lib/modules/"$kver"/updates/dkms/siw.ko; do
		[[ -e $f ]] && echo "$f"
	done
	return 0
}

step "before: nothing of ours installed; the harness's siw.ko taken away"
left=$(ours_left)
[[ -z $left ]] || fail "already there: $left"
rm -f "/lib/modules/$kver/updates/siw.ko"
grep -q '^siw ' /proc/modules && fail "siw loaded before the test"

step "dpkg -i $(basename "$dkms_deb") $(basename "$prov_deb") (DKMS builds siw $ver for $kver)"
t0=$SECONDS
dpkg -i "$dkms_deb" "$prov_deb" >"$TLOG/dpkg-install.log" 2>&1 || {
	show_log "$TLOG/dpkg-install.log"
	cat "/var/lib/dkms/siw/$ver/build/make.log" 2>/dev/null | tail -n 30
	fail "dpkg -i failed"
}
echo "   installed in $((SECONDS - t0)) s"
grep -E 'diversion|Building|Installing|DKMS' "$TLOG/dpkg-install.log" | sed 's/^/   | /'
status=$(dkms status siw)
echo "   dkms status: $status"
grep -q "^siw/$ver, $kver, .*: installed" <<<"$status" ||
	fail "DKMS did not install siw $ver for $kver: '$status'"
ko=$(modinfo -n siw 2>&1) || fail "modinfo siw: $ko"
[[ $ko == /lib/modules/$kver/updates/dkms/siw.ko* ]] ||
	fail "modprobe would load $ko, not DKMS's build"
state=$(dpkg-query -W -f='${db:Status-Abbrev}' siw-dkms siw-ibverbs-provider)
[[ $state == "ii ii " ]] || fail "package states '$state', expected both ii"

step "the parameters README.Debian documents are the module's"
readme=/usr/share/doc/siw-dkms/README.Debian
[[ -f $readme ]] || fail "$readme missing"
documented=$(sed -n '/^Module parameters/,/^Troubleshooting/p' "$readme" |
	sed -n 's/^  \([a-z_][a-z0-9_]*\)  .*/\1/p' | sort)
actual=$(modinfo -p siw | cut -d: -f1 | sort)
echo "   module: $(echo $actual)"
[[ -n $actual && $documented == "$actual" ]] ||
	fail "README.Debian documents [$(echo $documented)], the module has [$(echo $actual)]"

step "the stock provider is diverted, ours in its place"
dpkg-divert --list | grep -F "$stock" | sed 's/^/   /'
[[ $(dpkg-divert --truename "$stock") == "$stock.stock" ]] ||
	fail "no diversion of $stock"
[[ $(md5sum <"$stock.stock") == "$stock_md5" ]] || fail "the stock provider was changed, not moved aside"
[[ $(md5sum <"$stock") != "$stock_md5" ]] || fail "$stock is still the stock provider"

step "modprobe siw, two hosts on a veth pair: rping -V and ibv_rc_pingpong through our provider"
rdma_core_load
out=$(modprobe -v siw 2>&1) || fail "modprobe siw failed: $out"
grep -q "^insmod $ko" <<<"$out" || fail "modprobe did not load DKMS's build $ko: $out"
echo "   modprobe -v siw: ${out//$'\n'/; }"
siw_pair siw siw
out=$(VERBS_LOG_LEVEL=4 ibv_devinfo -d "$DEV_A" 2>&1) || fail "ibv_devinfo -d $DEV_A: $out"
grep -q 'siw project provider' <<<"$out" ||
	fail "$DEV_A was not opened by our provider: $(head -n 3 <<<"$out")"
rping_run b 4096 100 || fail "rping -V between the hosts"
echo "   rping -V -C 100 -S 4096: passed"
pp_run ibv_rc_pingpong -g 1 -c -n 300 || fail "ibv_rc_pingpong -g 1 -c between the hosts"
siw_pair_down
siw_unload

step "dpkg --purge both: the stock provider back, nothing of ours left"
t0=$SECONDS
dpkg --purge siw-ibverbs-provider siw-dkms >"$TLOG/dpkg-purge.log" 2>&1 || {
	show_log "$TLOG/dpkg-purge.log"
	fail "dpkg --purge failed"
}
echo "   purged in $((SECONDS - t0)) s"
left=$(ours_left)
[[ -z $left ]] || fail "left after purge: $left"
[[ $(md5sum <"$stock") == "$stock_md5" ]] || fail "$stock is not the stock provider after purge"
out=$(dpkg --verify ibverbs-providers 2>&1) || true
[[ -z $out ]] || fail "dpkg --verify ibverbs-providers: $out"
modinfo -n siw >/dev/null 2>&1 && fail "a siw module is still installed: $(modinfo -n siw)"

step "the stock provider opens a siw device again"
insmod "$SIW_KO" || fail "insmod $SIW_KO"
rdma link add siw0 type siw netdev eth0 || fail "rdma link add siw0"
out=$(LD_DEBUG=files VERBS_LOG_LEVEL=4 ibv_devinfo -d siw0 2>&1) || fail "ibv_devinfo -d siw0: $out"
grep -q "file=$stock " <<<"$out" || fail "ibv_devinfo did not load $stock"
grep -q 'siw project provider' <<<"$out" && fail "our provider opened siw0 after the purge"
echo "   ibv_devinfo -d siw0: opened by $stock"
rdma link delete siw0
siw_unload
echo PASS
