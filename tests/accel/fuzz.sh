#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# fuzz.sh [SECONDS] - gn-accel-fuzz against gaudi_nic.1: random and boundary
# ioctls, mmaps and dma-buf exports for SECONDS (default 15, FUZZ_SECONDS),
# then the device must still work, nothing of the run stay allocated, and
# the kernel log stay clean.  FUZZ_SEED repeats a run.  Output: TAP.
. "$(dirname "$0")/lib.sh"
secs=${1:-${FUZZ_SECONDS:-15}}
if ! ensure_loaded; then
	echo "not ok 1 - loading gaudi_nic.ko, gaudi_nic_sim.ko and the test importer"
	exit 1
fi
used=/sys/bus/platform/devices/gaudi_nic.1/gaudi_nic/hbm_used
before=$(cat "$used")
mark=$(dmesg | wc -l)
out=$(timeout $((secs + 120)) "$TEST_BIN/gn-accel-fuzz" 1 "$secs" ${FUZZ_SEED:-} 2>&1)
rc=$?
# its TAP lines, then ours, numbered on from them (lib.sh's ok)
grep -v '^1\.\.' <<<"$out"
n=$(grep -cE '^(ok|not ok) ' <<<"$out")
KTAP_TESTNO=$((n + 1))
ok "gn-accel-fuzz exited 0 (status $rc)" "[ $rc = 0 ]"
after=$(cat "$used")
ok "HBM in use back to $before bytes after the fuzzer's files closed (now $after)" \
	"[ $after = $before ]"
bad=$(dmesg | tail -n +$((mark + 1)) | grep -E "$KLOG_TROUBLE" | head -n 5)
ok "no kernel warning" "[ -z \"\$bad\" ]"
[ -z "$bad" ] || echo "$bad" | sed 's/^/# /'
echo "1..$n"
[ "$rc" = 0 ] && [ "$after" = "$before" ] && [ -z "$bad" ]
