#!/usr/bin/env bash
# inroot.sh CMD [ARG...] - run a command inside the trixie test root.
#
# The root sees the checkout at /src and the build directory at /build
# (default: <checkout>/build, override with GAUDI_NIC_BUILD).  /proc, /sys
# and /dev are the host's; /tmp and /run are private tmpfs.  Everything is
# mounted in a private mount namespace created for this command, so the
# mounts vanish with it, however it ends (exit, Ctrl-C, kill -9).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/../.." && pwd)
build=${GAUDI_NIC_BUILD:-$src/build}
[ $# -gt 0 ] || { echo "usage: $0 CMD [ARG...]" >&2; exit 2; }

root=$("$here/mkroot.sh" | tail -n1)
mkdir -p "$build" "$root/src" "$root/build"

# A private mount namespace (mounts vanish with it) and a private PID
# namespace: when its first process dies, the kernel kills every process
# left in it, so no qemu or test process can outlive this command.
# unshare ignores SIGINT/SIGTERM while it waits, and the guest runs in a
# process group of its own, so the terminal's Ctrl-C would reach neither:
# on any of those signals SIGKILL unshare itself; --kill-child then kills
# the namespace's first process, and with it the kernel kills the rest.
trap 'echo "inroot: interrupted; killing everything started in the root" >&2
      kill -KILL "$pid" 2>/dev/null' INT TERM HUP
unshare --mount --propagation private --pid --fork --kill-child -- \
	bash -euc '
root=$1 src=$2 build=$3; shift 3
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"
mount -t tmpfs -o mode=1777 tmpfs "$root/dev/shm"
mount -t tmpfs -o mode=1777 tmpfs "$root/tmp"
mount -t tmpfs tmpfs "$root/run"
mount --bind "$src" "$root/src"
mount --bind "$build" "$root/build"
exec chroot "$root" /usr/bin/env -i \
	PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 CI="${CI:-}" \
	GAUDI_NIC_KVER="$(cat "$root/.gaudi_nic_kver")" \
	/bin/bash -c '\''cd "${GAUDI_NIC_CWD:-/src}" && exec "$@"'\'' inroot-cmd "$@"
' inroot "$root" "$src" "$build" "$@" <&0 &
pid=$!
rc=0
while :; do
	wait "$pid" 2>/dev/null && break
	rc=$?
	kill -0 "$pid" 2>/dev/null || break	# exited, not just a trapped signal
done
# Everything inside ran as root; hand the build output back to whoever owns
# the checkout so it holds no root-owned leftovers.
chown -R --reference="$src" "$build" 2>/dev/null || true
exit "$rc"
