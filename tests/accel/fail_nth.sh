#!/usr/bin/env bash
# fail_nth.sh - the error paths of the accel driver's calls (issue 31,
# deliverable 4): gn-fail-nth (tests/accel/fail_nth.c) fails every
# fault-injection site on the path of each in turn, through
# /proc/thread-self/fail-nth: the open of the accel node, and the memory
# ioctls ALLOC, MAP and EXPORT_DMABUF_FD, each undone (close, FREE, UNMAP,
# close of the dma-buf).  Each call must fail cleanly or absorb the fault,
# and the device serve the call again; afterwards the device holds no
# allocation, mapping, export or context more than before, and the debug
# lane's watch (kmemleak, lockdep, KASAN) sees nothing.  Needs a kernel
# with fault injection (the debug kernel); elsewhere it skips, saying so.
# Output: TAP.
here=$(dirname "$0")
. "$here/../rdma/lib.sh"
. "$here/../lib/failnth.sh"
ID=${FN_ACCEL_DEV:-66}

cleanup() {
	fn_restore
	[ -e "$GN_SYSFS/del_device" ] && gn_del_device "$ID" 2>/dev/null
	return 0
}
trap cleanup EXIT
setup() { gn_load && gn_new_device "$ID" 1 16; }
tap_env_start setup
t_ok "environment: device gaudi_nic.$ID"
bin=${GN_FAIL_NTH:-/build/tests-accel-rel/gn-fail-nth}
need_test_bin gn-fail-nth "$bin"
fn_setup "every fault site of each accel call"
mem0=$(accel_mem "$ID")
out=$(mktemp)
timeout 600 "$bin" accel "gaudi_nic.$ID" >"$out" 2>&1
rc=$?
ksft_relay gn-fail-nth " (accel)" <"$out"
t_expect "gn-fail-nth accel exits 0 (1: a step failed, 124: timed out)" 0 "$rc"
rm -f "$out"
t_expect "nothing gn-fail-nth made is left on gaudi_nic.$ID" "$mem0" "$(accel_mem "$ID")"
tap_done
