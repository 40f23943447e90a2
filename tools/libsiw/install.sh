#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# install.sh install PLUGIN | uninstall
#
# Installs the siw project's provider so that libibverbs picks it for siw
# devices, deterministically: the stock /etc/libibverbs.d/siw.driver
# (rdma-core's ibverbs-providers) is moved out of the directory, with
# dpkg-divert when dpkg owns it so that package upgrades keep going to
# the moved copy, and ours takes its name. Uninstall removes ours and
# puts the stock entry back. The stock plugin file itself is never
# touched. Environment: DESTDIR, PROVIDER_DIR, CONF_DIR.
set -euo pipefail

dest=${DESTDIR:-}
pdir=${PROVIDER_DIR:?}
cdir=${CONF_DIR:-/etc/libibverbs.d}
conf=$cdir/siw.driver
save_dir=/etc/siw-project
save=$save_dir/siw.driver.stock
ours=$pdir/libsiw-project-rdmav34.so
marker="siw project provider"

use_divert() {
	[[ -z $dest ]] && command -v dpkg-divert >/dev/null &&
		dpkg -S "$conf" >/dev/null 2>&1
}

is_ours() {
	grep -qs "$marker" "$dest$conf"
}

case ${1:-} in
install)
	plugin=${2:?plugin}
	install -d "$dest$pdir" "$dest$cdir" "$dest$save_dir"
	install -m 0644 "$plugin" "$dest$ours"
	if [[ -e $dest$conf ]] && ! is_ours; then
		if use_divert; then
			dpkg-divert --local --rename --divert "$save" --add "$conf"
		else
			mv "$dest$conf" "$dest$save"
		fi
	fi
	printf '# %s (tools/libsiw); make uninstall restores the stock entry\ndriver %s\n' \
		"$marker" "${ours%-rdmav34.so}" >"$dest$conf"
	;;
uninstall)
	rm -f "$dest$ours"
	if is_ours; then
		rm -f "$dest$conf"
	fi
	if [[ -z $dest ]] && command -v dpkg-divert >/dev/null &&
		dpkg-divert --list "$conf" | grep -q .; then
		dpkg-divert --local --rename --remove "$conf"
	elif [[ -e $dest$save && ! -e $dest$conf ]]; then
		mv "$dest$save" "$dest$conf"
	fi
	rmdir "$dest$save_dir" 2>/dev/null || true
	;;
*)
	echo "usage: $0 install PLUGIN | uninstall" >&2
	exit 2
	;;
esac
