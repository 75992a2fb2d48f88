#!/usr/bin/env bash
# mkroot.sh - create (or reuse) the Debian 13 "trixie" root that every build
# and test of gaudi_nic runs in.
#
# The root lives outside the checkout, in $GAUDI_NIC_CACHE (default
# /var/cache/gaudi_nic), under a key made from what decides its content
# (packages.txt, root-setup.sh, mirror and suite): change one and the next
# run builds a new root.  Roots unused for a day are removed.  A lock serialises runs,
# a root is built in a temporary directory and renamed into place only when
# it is complete, so an interrupted build leaves nothing that a later run
# could mistake for a good root.
#
# Prints the path of the ready root on its last line of stdout.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${GAUDI_NIC_CACHE:-/var/cache/gaudi_nic}
mirror=${GAUDI_NIC_MIRROR:-http://deb.debian.org/debian}
suite=trixie

log() { printf 'testenv: %s\n' "$*" >&2; }
die() { printf 'testenv: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (mmdebstrap, chroot and mounts need it); try: sudo make"

key=$( (cat "$here/packages.txt" "$here/root-setup.sh"; echo "$mirror $suite") | sha256sum | cut -c1-12)
root="$cache/root-$key"

mkdir -p "$cache"
exec 9>"$cache/.lock"
if ! flock -n 9; then
	log "another run holds $cache/.lock; waiting for it"
	flock 9
fi

if [ -f "$root/.gaudi_nic_root_ok" ]; then
	touch "$root/.gaudi_nic_root_ok"	# last use, for the clean-up below
	log "reusing cached root $root"
	echo "$root"
	exit 0
fi

# Anything here without the completion marker is a half-built leftover of an
# interrupted run (we hold the lock, so nobody else is building it).
for stale in "$cache"/root-*.tmp "$cache"/root-*; do
	[ -e "$stale" ] || continue
	[ -f "$stale/.gaudi_nic_root_ok" ] && continue
	log "removing half-built root $stale"
	rm -rf --one-file-system "$stale"
done

if ! command -v mmdebstrap >/dev/null; then
	log "installing host prerequisite mmdebstrap"
	command -v apt-get >/dev/null || die "no apt-get: the host must be Debian or Ubuntu"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >&2
fi

pkgs=$(grep -v '^[[:space:]]*\(#\|$\)' "$here/packages.txt" | tr '\n' ',' | sed 's/,$//')
tmp="$root.tmp"
start=$(date +%s)
log "building trixie root in $tmp (first run only: a few minutes, ~2.5 GB)"

# apt runs its hooks with "cat >&N" through /bin/sh, and dash only takes
# one-digit descriptors: with descriptors inherited above 9 (CI runners and
# IDE shells leave some open), mmdebstrap's own pipes land on 10 or more and
# the download step fails with "Bad fd number".  Close everything inherited
# but stdio and our lock.
for fd in /proc/$$/fd/*; do
	fd=${fd##*/}
	case $fd in
	0|1|2|9) ;;
	*) eval "exec $fd>&-" 2>/dev/null || true ;;
	esac
done

# root-setup.sh runs inside the new root once everything is installed.
mmdebstrap --mode=root --format=directory --variant=apt \
	--components=main --include="$pkgs" \
	--aptopt='APT::Install-Recommends "false"' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='echo "deb-src '"$mirror $suite"' main" > "$1/etc/apt/sources.list.d/src.list"' \
	--customize-hook='chroot "$1" apt-get update -qq' \
	--customize-hook='cp "'"$here/root-setup.sh"'" "$1/root-setup.sh"' \
	--customize-hook='chroot "$1" sh /root-setup.sh' \
	--customize-hook='rm "$1/root-setup.sh"' \
	--customize-hook='echo gaudi-nic-test > "$1/etc/hostname"' \
	--customize-hook='chroot "$1" apt-get clean' \
	"$suite" "$tmp" "$mirror" >&2 ||
	die "mmdebstrap failed (see above); the half-built root is removed on the next run"

kver=$(ls "$tmp/lib/modules" | sort -V | tail -n1)
[ -e "$tmp/boot/vmlinuz-$kver" ] || die "root has no kernel image for $kver"
[ -d "$tmp/lib/modules/$kver/build" ] || die "root has no headers for $kver"
echo "$kver" > "$tmp/.gaudi_nic_kver"
touch "$tmp/.gaudi_nic_root_ok"
mv "$tmp" "$root"
# Older roots unused for a day go (one in use by a running command has had
# its marker touched when that command started).
find "$cache" -mindepth 2 -maxdepth 2 -name .gaudi_nic_root_ok -mtime +0 \
	-printf '%h\n' | while read -r old; do
	log "removing root unused for a day: $old"
	rm -rf --one-file-system "$old"
done
log "root ready in $(( $(date +%s) - start )) s: $root (kernel $kver)"
echo "$root"
