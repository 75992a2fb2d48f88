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
rm -f "$tarball"
test -x /opt/checkpatch/scripts/checkpatch.pl
echo "root-setup: checkpatch in /opt/checkpatch/scripts"
