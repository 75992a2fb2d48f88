#!/bin/sh
# root-setup.sh - runs once inside a freshly made test root (mkroot.sh).
# Extracts checkpatch.pl from the kernel source tarball, then fetches and
# unpacks the rdma-core source of exactly the installed version:
# the provider is built inside it, since rdma-core does not install its
# private driver.h.
set -eu
full=$(dpkg-query -W -f='${Version}' libibverbs-dev)
ver=${full%-*}
mkdir -p /opt/src
cd /opt/src
# The .dsc may 404 on some mirrors while the .orig tarball arrives: only the
# tarball is needed, so the command's status is not trusted, the file is.
apt-get source --download-only "rdma-core=$full" >/dev/null 2>&1 || true
orig=$(ls rdma-core_"$ver".orig.tar.* 2>/dev/null | head -n1)
[ -n "$orig" ] || { echo "root-setup: rdma-core $ver source did not download" >&2; exit 1; }
tar xf "$orig"
test -f "rdma-core-$ver/libibverbs/driver.h"
ln -sfn "rdma-core-$ver" rdma-core
echo "root-setup: rdma-core $ver source in /opt/src/rdma-core"

# checkpatch.pl with the data files it reads, for the kernel style check.
tarball=$(ls /usr/src/linux-source-*.tar.xz | head -n1)
mkdir -p /opt/checkpatch
tar -xJf "$tarball" -C /opt/checkpatch --strip-components=1 --wildcards \
	'*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
	'*/scripts/const_structs.checkpatch'
test -x /opt/checkpatch/scripts/checkpatch.pl
echo "root-setup: checkpatch in /opt/checkpatch/scripts"

# The kernel's own selftests (kselftest runner, drivers/net, net, their
# Python and shell libraries) and the YNL library with its netlink specs,
# from the same tarball.  tests/ksft/build.sh copies them, applies our
# backports (tests/ksft/patches) and installs them into /build/ksft.
mkdir -p /opt/linux-src/usr
tar -xJf "$tarball" -C /opt/linux-src --strip-components=1 --wildcards \
	'*/tools/testing/selftests/*' '*/tools/net/ynl/*' '*/tools/include/*' \
	'*/Documentation/netlink/*' '*/scripts/subarch.include'
# The uAPI headers of the root's linux-libc-dev are those of this kernel.
ln -sfn /usr/include /opt/linux-src/usr/include
# The tarball stays: the debug kernel is built from it (mkdbgkernel.sh).
test -x /opt/linux-src/tools/testing/selftests/run_kselftest.sh
echo "root-setup: kselftest and ynl sources in /opt/linux-src"
