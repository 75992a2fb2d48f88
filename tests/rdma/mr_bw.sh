#!/usr/bin/env bash
# mr_bw.sh - what a dma-buf MR costs the data path (issue 33): RDMA WRITEs
# from gaudi_$DEV_A into three kinds of MR on gaudi_$DEV_B in the same run
# (tests/rdma/mr_bw.c): host memory (ibv_reg_mr), host memory exported by
# udmabuf and the HBM of device X, both registered as dma-buf MRs (the
# revocable path).  Prints the median and spread of each, and its ratio to
# host; timing decides nothing.  "quick" (make check) takes one short
# sample per kind: every WRITE must complete and land, on a dma-buf from
# another exporter (udmabuf) too.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-86}
DEV_B=${DEV_B:-87}
DEV_X=${DEV_X:-88}
. "$here/lib.sh"
# 2 sizes, RUNS samples of SECS s per kind (make bench); quick: 1 of 0.2 s
if [ "${1:-}" = quick ]; then
	SIZES=65536 RUNS=1 SECS=0.2
else
	SIZES=${SIZES:-"65536 1048576"} RUNS=${RUNS:-7} SECS=${SECS:-1}
fi
RDMA_MTU=${RDMA_MTU:-9000}

cleanup() {
	gn_del_device "$DEV_X" 2>/dev/null
	rdma_env_cleanup
}
trap cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B, gids $GID_A/$GID_B"
# the release build when there is one: the ASan build's own costs are not
# the data path's
bin=${MR_BW:-/build/tests-rdma-rel/mr_bw}
[ -x "$bin" ] || bin=/build/tests-rdma/mr_bw
need_test_bin mr_bw "$bin"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
if ! gn_new_device "$DEV_X" 1; then
	t_fail "device $DEV_X, whose HBM is the third target"
	exit
fi
for size in $SIZES; do
	if out=$("$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" "$DEV_X" "$size" "$RUNS" "$SECS" 2>&1); then
		t_ok "WRITE $size B into host, udmabuf and HBM MRs: every WRITE completed and landed"
	else
		t_fail "WRITE $size B into host, udmabuf and HBM MRs" "$out"
	fi
	diag "$(grep '^#' <<<"$out")"
done
