#!/usr/bin/env bash
# fail_nth.sh - the error paths of the verbs creations (issue 31,
# deliverable 4): tests/rdma/fail_nth.c fails every fault-injection site
# on the path of each creation in turn (a dma-buf MR on HBM of the accel
# device among them), through /proc/thread-self/fail-nth,
# with failslab and fail_page_alloc told to fail sleeping allocations too
# and to print nothing (their stack traces would read as warnings).  Each
# call must fail cleanly and the device serve it again; afterwards nothing
# the program made is left on the device, and the debug lane's watch
# (kmemleak, lockdep, KASAN) sees nothing.  Needs a kernel with fault
# injection (the debug kernel); elsewhere it skips, saying so.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-64}
DEV_B=${DEV_B:-65}
. "$here/lib.sh"
. "$here/../lib/failnth.sh"

restore() {
	fn_restore
	rdma_env_cleanup
}
trap restore EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B"
bin=${FAIL_NTH:-/build/tests-rdma-rel/fail_nth}
need_test_bin fail_nth "$bin"
fn_setup "every fault site of each verbs creation"
res0=$(res_of "$IB_A")
mem0=$(accel_mem "$DEV_A")
out=$(mktemp)
# the dma-buf MR's export: HBM of DEV_A's accel device
timeout 600 "$bin" "$IB_A" "$GID_A" "gaudi_nic.$DEV_A" >"$out" 2>&1
rc=$?
ksft_relay fail_nth " (fail_nth)" <"$out"
t_expect "fail_nth exits 0 (1: a step failed, 124: timed out)" 0 "$rc"
rm -f "$out"
res_back fail_nth "$IB_A" "$res0"
# the exported HBM went with the program (its dma-buf, mapping, allocation)
t_expect "nothing fail_nth made is left on gaudi_nic.$DEV_A's accel device" "$mem0" "$(accel_mem "$DEV_A")"
tap_done
