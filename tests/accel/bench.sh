#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Not a test of speed: runs the benchmark once and reports its number.
. "$(dirname "$0")/lib.sh"
ensure_loaded || { echo "not ok 1 - load"; exit 1; }
out=$($BIN/hlthunk-bench 5 65536 gaudi_nic.0 2>&1)
rc=$?
echo "# $out"
echo "$out" > /build/results/accel-bench.txt 2>/dev/null || true
ok "hlthunk-bench ran (alloc+map+export+free cycles/s reported)" "[ $rc = 0 ]"
echo "1..$n"
