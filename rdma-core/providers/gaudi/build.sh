#!/usr/bin/env bash
# build.sh - build the gaudi libibverbs provider inside the test root.
#
# The provider uses libibverbs' private provider ABI, so it is built inside
# the rdma-core source of the exact installed version (/opt/src/rdma-core):
# a scratch copy under /build gets providers/gaudi and our uABI header, and
# only the provider library is built.  Installs
#   /build/prefix/lib/libibverbs/libgaudi-rdmav34.so
#   /build/prefix/etc/libibverbs.d/gaudi.driver
# Use it with RDMAV_DRIVERS=/build/prefix/lib/libibverbs/libgaudi (any
# process), or copy gaudi.driver into /etc/libibverbs.d.
set -euo pipefail
src=${GAUDI_NIC_SRC:-/src}
b=${GAUDI_NIC_BUILDDIR:-/build}
upstream=/opt/src/rdma-core
scratch=$b/rdma-core-src
obj=$b/rdma-core-obj
prefix=$b/prefix

[ -d "$upstream" ] || { echo "build.sh: $upstream missing (run inside the test root)" >&2; exit 2; }
mkdir -p "$scratch" "$obj" "$prefix/lib/libibverbs" "$prefix/etc/libibverbs.d"
rsync -a --exclude providers/gaudi --exclude build "$upstream/" "$scratch/"
rsync -a --delete --exclude build.sh "$src/rdma-core/providers/gaudi/" "$scratch/providers/gaudi/"
cp "$src/include/uapi/rdma/gaudi-abi.h" "$scratch/kernel-headers/rdma/gaudi-abi.h"
# register the provider and its kernel ABI header (idempotent)
grep -q 'rdma/gaudi-abi.h' "$scratch/kernel-headers/CMakeLists.txt" ||
	sed -i 's|^  rdma/efa-abi.h$|&\n  rdma/gaudi-abi.h|' "$scratch/kernel-headers/CMakeLists.txt"
grep -q 'providers/gaudi' "$scratch/CMakeLists.txt" ||
	sed -i 's|^add_subdirectory(providers/efa)$|&\nadd_subdirectory(providers/gaudi)|' "$scratch/CMakeLists.txt"
grep -q 'rdma/gaudi-abi.h' "$scratch/kernel-headers/CMakeLists.txt"
grep -q 'providers/gaudi' "$scratch/CMakeLists.txt"

if [ ! -f "$obj/build.ninja" ]; then
	cmake -S "$scratch" -B "$obj" -GNinja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
		-DNO_MAN_PAGES=1 -DNO_PYVERBS=1 -DENABLE_STATIC=0 \
		-DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu \
		-DENABLE_WERROR=1 >"$obj.cmake.log" 2>&1 ||
		{ tail -n 30 "$obj.cmake.log"; exit 1; }
fi
ninja -C "$obj" gaudi-rdmav34 >"$obj.ninja.log" 2>&1 ||
	{ grep -E 'error|warning' "$obj.ninja.log" | head -n 40; tail -n 20 "$obj.ninja.log"; exit 1; }
so=$(find "$obj" -name 'libgaudi-rdmav34.so' -print -quit)
[ -n "$so" ] || { echo "build.sh: libgaudi-rdmav34.so not built" >&2; exit 1; }
install -m 0755 "$so" "$prefix/lib/libibverbs/libgaudi-rdmav34.so"
echo "driver $prefix/lib/libibverbs/libgaudi" >"$prefix/etc/libibverbs.d/gaudi.driver"
echo "  PROVIDER $prefix/lib/libibverbs/libgaudi-rdmav34.so"
