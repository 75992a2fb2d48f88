#!/usr/bin/env bash
# srq.sh - shared receive queues between two gaudi devices in two
# namespaces over a cable: tests/rdma/srq_test.c (several RC QPs on one
# SRQ, ring order, length errors, the limit event, bad input, a context
# closed with an SRQ open), ibv_srq_pingpong with 4 QPs on one SRQ, and a
# process that exits with its SRQ, QPs on it and an armed limit still
# live: no leak (the devices delete cleanly) and no kernel warning.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-50}
DEV_B=${DEV_B:-51}
. "$here/lib.sh"

trap rdma_env_cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B, gids $GID_A/$GID_B"
# built by `make user` (tests/rdma/meson.build): the ASan+UBSan build
bin=${SRQ_TEST:-/build/tests-rdma/srq_test}
need_test_bin srq_test "$bin"
# no LeakSanitizer: a context closed with objects open keeps its memory on
# purpose, and --exit-live exits with everything open
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
ksft_relay srq_test < <(timeout 300 "$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
diag "$IB_B: $(ib_stats "$IB_B" 1)"

# the libibverbs example: 4 QPs on one SRQ on each side
pair "ibv_srq_pingpong -q 4 $IB_A <- $IB_B (4 KiB x 200)" 180 \
	ibv_srq_pingpong -d "$IB_A" -g "$GID_A" -q 4 -n 200 -s 4096 -- \
	ibv_srq_pingpong -d "$IB_B" -g "$GID_B" -q 4 -n 200 -s 4096 "$IP_A"
diag "$PAIR_OUT_C" | tail -n 2
pair "ibv_srq_pingpong -q 16 with events, 1 KiB x 100" 180 \
	ibv_srq_pingpong -d "$IB_A" -g "$GID_A" -q 16 -e -n 100 -s 1024 -- \
	ibv_srq_pingpong -d "$IB_B" -g "$GID_B" -q 16 -e -n 100 -s 1024 "$IP_A"
diag "$PAIR_OUT_C" | tail -n 2

# teardown in the wrong order: the process exits with its SRQ, the QPs on
# it, posted WQEs and an armed limit; the kernel destroys the QPs first
out=$(timeout 60 "$bin" --exit-live "$IB_B" "$GID_B" 2>&1)
rc=$?
if [ "$rc" = 0 ] && grep -q '^ready' <<<"$out"; then
	t_ok "a process exits with an SRQ, 4 QPs on it and an armed limit live"
else
	t_fail "a process exits with an SRQ, 4 QPs on it and an armed limit live" "rc=$rc" "$out"
fi
sleep 0.5
res=$(rdma resource show qp link "$IB_B/1" 2>&1; rdma resource show srq dev "$IB_B" 2>&1)
if grep -q srq_test <<<"$res"; then
	t_fail "its QPs and SRQ are gone" "$res"
else
	t_ok "its QPs and SRQ are gone"
fi
# an SRQ left in the driver would trip gib_remove()'s WARN_ON
if gn_del_device "$DEV_B"; then
	t_ok "del_device $DEV_B afterwards"
else
	t_fail "del_device $DEV_B afterwards"
fi
dmesg_check
tap_done
