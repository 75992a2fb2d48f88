#!/usr/bin/env bash
# build.sh - install the kernel's own selftests we run against our ports
# into /build/ksft (in the test root; 'make ksft-build', part of 'make').
#
# The sources are Linux 6.12's, unmodified, from the root's
# linux-source-6.12 (/opt/linux-src, see root-setup.sh), plus the
# patches in tests/ksft/patches (each says why).  The install is what
# 'make -C tools/testing/selftests install' gives: run_kselftest.sh,
# kselftest-list.txt and one directory per target.  Only redone when the
# patches or this script change.
set -euo pipefail
src=/opt/linux-src
out=/build/ksft
work=/build/ksft-src
# net/forwarding: shell only (router.sh; bridge_vlan_aware.sh, in make ksft)
targets="drivers/net drivers/net/hw net/lib net/forwarding"
stamp=$( (cat "$0" /src/tests/ksft/patches/*.patch; echo "$targets") | sha256sum | cut -c1-16)
if [ -f "$out/.stamp" ] && [ "$(cat "$out/.stamp")" = "$stamp" ]; then
	exit 0
fi
echo "  KSFT    $targets (Linux 6.12 selftests -> build/ksft)"
rm -rf "$work" "$out"
mkdir -p "$work"
cp -a "$src"/. "$work"/
for p in /src/tests/ksft/patches/*.patch; do
	patch -s -d "$work" -p1 <"$p"
done
# toeplitz.c (net/) alone: the whole net target builds for minutes.
make -s -C "$work/tools/testing/selftests" TARGETS="$targets" \
	KHDR_INCLUDES="-isystem /usr/include" INSTALL_PATH="$out" install \
	>"$work.log" 2>&1 || { cat "$work.log"; exit 1; }
mkdir -p "$out/net"
gcc -O2 -Wall -isystem /usr/include -I"$work/tools/testing/selftests" \
	-o "$out/net/toeplitz" "$work/tools/testing/selftests/net/toeplitz.c"
cp "$work/tools/testing/selftests/net/toeplitz.sh" \
	"$work/tools/testing/selftests/net/netdevice.sh" \
	"$work/tools/testing/selftests/net/lib.sh" "$out/net/"
echo "$stamp" > "$out/.stamp"
