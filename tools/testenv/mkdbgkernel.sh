#!/usr/bin/env bash
# mkdbgkernel.sh - build (or reuse) the debug kernel of the debug-kernel
# lane, inside the test root: the same 6.12 source the root's kernel comes
# from (Debian's linux-source-6.12, kept in /usr/src by root-setup.sh), with
# virtme-ng's minimal config, what our tests need (kernel-debug.config), the
# kernel's own kernel/configs/debug.config unchanged (lockdep, KASAN,
# kmemleak, UBSAN, DEBUG_OBJECTS, DEBUG_NET, ...) and last
# kernel-debug-last.config (no debug info, kmemleak scans on request).
#
# The kernel is cached in the root under /opt/kernel-debug/KEY, KEY made of
# the source version, the compiler, the fragments and $recipe below: it is
# rebuilt only when one of them changes (and with the root, which a new
# package list replaces).  Bump $recipe when a change here changes what
# is built; changes to messages and checks need no rebuild.  Its image goes to /boot/vmlinuz-RELEASE and its
# modules to /lib/modules/RELEASE, where vm.sh and Kbuild find them.
#
# Prints progress while it builds, and the kernel release on its last line
# of stdout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=/opt/kernel-debug
localversion=-gndbg
recipe=1

log() { printf 'dbgkernel: %s\n' "$*" >&2; }
die() { printf 'dbgkernel: error: %s\n' "$*" >&2; exit 1; }

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null) ||
	die "linux-source-6.12 is not installed in the root (tools/testenv/packages.txt)"
tarball=$(ls /usr/src/linux-source-6.12*.tar.xz 2>/dev/null | head -n1)
[ -n "$tarball" ] || die "no /usr/src/linux-source-6.12.tar.xz: the root predates root-setup.sh keeping it; remove it from the cache and run again"
key=$( (echo "$srcver $localversion $recipe"; gcc --version | head -n1
	cat "$here/kernel-debug.config" "$here/kernel-debug-last.config") |
	sha256sum | cut -c1-12)
dir=$top/$key
tree=$dir/linux

mkdir -p "$top"
exec 8>"$top/.lock"
flock 8

# install_kernel: image and modules where the guest and Kbuild look
install_kernel() {
	local rel
	rel=$(cat "$dir/release")
	if [ "$(cat "/lib/modules/$rel/.gaudi_nic_key" 2>/dev/null)" != "$key" ]; then
		log "installing $rel into /boot and /lib/modules"
		rm -rf "/lib/modules/$rel"
		make -s -C "$tree" INSTALL_MOD_PATH=/ INSTALL_MOD_STRIP=1 \
			modules_install >/dev/null
		install -m 0644 "$tree/arch/x86/boot/bzImage" "/boot/vmlinuz-$rel"
		install -m 0644 "$tree/System.map" "/boot/System.map-$rel"
		install -m 0644 "$tree/.config" "/boot/config-$rel"
		echo "$key" > "/lib/modules/$rel/.gaudi_nic_key"
	fi
	echo "$rel"
}

if [ -f "$dir/.ok" ]; then
	log "reusing debug kernel $(cat "$dir/release") ($dir)"
	install_kernel
	exit 0
fi

# Anything else here is an older key or a build that was interrupted.
for old in "$top"/*/; do
	[ -d "$old" ] || continue
	log "removing ${old%/}"
	rm -rf --one-file-system "${old%/}"
done

start=$(date +%s)
mkdir -p "$tree"
log "extracting $(basename "$tarball") ($srcver)"
tar -xJf "$tarball" -C "$tree" --strip-components=1

cd "$tree"
log "configuring: virtme-ng's minimal config + kernel-debug.config + kernel/configs/debug.config + kernel-debug-last.config"
printf 'CONFIG_LOCALVERSION="%s"\n# CONFIG_LOCALVERSION_AUTO is not set\n' \
	"$localversion" > "$dir/localversion.config"
# vng appends its own must-haves after the fragments it is given (among
# them DWARF debug info), so the last fragment goes in after it.
{
	vng --kconfig --config "$here/kernel-debug.config" \
		--config kernel/configs/debug.config &&
	cat "$here/kernel-debug-last.config" "$dir/localversion.config" >> .config &&
	make olddefconfig
} >"$dir/config.log" 2>&1 ||
	{ cat "$dir/config.log" >&2; die "configuring the kernel failed"; }

# Every option our fragments ask for must have survived olddefconfig (a
# dependency missing would silently drop it); of debug.config, the
# detectors the lane is for.
missing=()
want() { # FRAGMENT...: its CONFIG_X=y|m lines
	grep -hE '^CONFIG_[A-Z0-9_]+=[ym]$' "$@"
}
detectors='CONFIG_PROVE_LOCKING=y
CONFIG_DEBUG_ATOMIC_SLEEP=y
CONFIG_PROVE_RCU=y
CONFIG_KASAN=y
CONFIG_DEBUG_KMEMLEAK=y
CONFIG_DEBUG_OBJECTS=y
CONFIG_UBSAN=y
CONFIG_DEBUG_NET=y
CONFIG_REF_TRACKER=y
CONFIG_NET_DEV_REFCNT_TRACKER=y
CONFIG_DEBUG_LIST=y
CONFIG_DETECT_HUNG_TASK=y'
while read -r line; do
	grep -qxF "$line" .config || missing+=("$line")
done < <(want "$here/kernel-debug.config" "$here/kernel-debug-last.config"
	 echo "$detectors")
if [ "${#missing[@]}" -gt 0 ]; then
	printf 'dbgkernel:   not in the final .config: %s\n' "${missing[@]}" >&2
	die "the debug kernel's config lacks what the lane needs (see above; config log: $dir/config.log)"
fi
dropped=$(want kernel/configs/debug.config | while read -r line; do
	grep -qE "^(# )?${line%%=*}(_[A-Z0-9_]+)?[= ]" "$here/kernel-debug-last.config" ||
	grep -qxF "$line" .config || echo "${line%%=*}"; done | tr '\n' ' ')
[ -z "$dropped" ] || log "debug.config options this architecture or config cannot have: $dropped"

jobs=$(nproc)
log "building with $jobs jobs (about 10 minutes on 2 cores; log: $dir/build.log)"
make -j"$jobs" bzImage modules >"$dir/build.log" 2>&1 &
bpid=$!
while kill -0 "$bpid" 2>/dev/null; do
	sleep 30
	kill -0 "$bpid" 2>/dev/null || break
	log "  $(( ($(date +%s) - start) / 60 )) min: $(grep -cE '^  CC ' "$dir/build.log") files compiled"
done
wait "$bpid" || { tail -n 40 "$dir/build.log" >&2; die "the kernel build failed (log: $dir/build.log)"; }
rel=$(cat include/config/kernel.release)
echo "$rel" > "$dir/release"
touch "$dir/.ok"
log "built $rel in $(( $(date +%s) - start )) s"
install_kernel
