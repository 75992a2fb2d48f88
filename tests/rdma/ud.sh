#!/usr/bin/env bash
# ud.sh - user UD QPs between two gaudi devices in two namespaces over a
# cable and on one port (loopback), IPv4 and IPv6: tests/rdma/ud_test.c
# (sends, GRH, ibv_create_ah_from_wc, Q_Key violations, length errors,
# opcodes and verbs the device lacks, objects outliving their context)
# and ud_qpex_test.c (the extended QP and CQ APIs on UD QPs),
# then ibv_ud_pingpong and perftest's ib_send_bw -c UD.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-36}
DEV_B=${DEV_B:-37}
. "$here/lib.sh"

trap rdma_env_cleanup EXIT
dmesg_mark=$(dmesg | wc -l)
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B, gids $GID_A/$GID_B"
# built by `make user` (tests/rdma/meson.build): the ASan+UBSan build
bin=${UD_TEST:-/build/tests-rdma/ud_test}
qpexbin=${UD_QPEX_TEST:-/build/tests-rdma/ud_qpex_test}
need_test_bin ud_test "$bin"
need_test_bin ud_qpex_test "$qpexbin"
# no LeakSanitizer: a context closed with objects open keeps its memory on
# purpose (the provider's answer to pyverbs' teardown order)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
# global IPv6 addresses (no DAD) give each port a RoCE v2 IPv6 GID
ns_a ip -6 addr add 2001:db8:6::1/64 dev "$IF_A" nodad
ns_b ip -6 addr add 2001:db8:6::2/64 dev "$IF_B" nodad
for ((i = 0; i < 50; i++)); do
	grep -qs '^2001:0db8:0006:' /sys/class/infiniband/"$IB_A"/ports/1/gids/* &&
	grep -qs '^2001:0db8:0006:' /sys/class/infiniband/"$IB_B"/ports/1/gids/* && break
	sleep 0.1
done
# each again as a provider from before 256-byte UD WQEs (issue 35) would
# run: GAUDI_UD_WQE=128 gives 128-byte UD WQEs with 4 SGEs and 64 bytes
# inline, the kernel's and the engine's compatibility path
for prog in "$bin" "$qpexbin"; do
	name=${prog##*/}
	ksft_relay "$name" < <(timeout 300 "$prog" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
	ksft_relay "$name" " (128-byte UD WQEs)" < <(GAUDI_UD_WQE=128 timeout 300 \
		"$prog" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
done
diag "$IB_A: $(ib_stats "$IB_A" 1)"
diag "$IB_B: $(ib_stats "$IB_B" 1)"

# the libibverbs example (path MTU 1024 with the netdev's 1500)
pair "ibv_ud_pingpong $IB_A <- $IB_B (1000 B x 100)" 120 \
	ibv_ud_pingpong -d "$IB_A" -g "$GID_A" -n 100 -s 1000 -- \
	ibv_ud_pingpong -d "$IB_B" -g "$GID_B" -n 100 -s 1000 "$IP_A"
diag "$PAIR_OUT_C" | tail -n 2

# perftest's UD bandwidth test with its defaults (one path MTU a message,
# tx depth 128) and 5000 iterations: it posts one receive per iteration
# (up to 16000) without looking at max_qp_wr, so the device's 4096-WQE
# work queues refused its QP.  The server counts every message it
# receives (a lost one stops it after 60 s, "Did not get Message").
# (a failed clock calibration, perftest's own, is run again up to five
# times: beside the background lane it failed three times in a row once)
PAIR_CALIB_RETRY=5 pair "ib_send_bw -c UD $IB_A <- $IB_B (defaults, 5000 iterations)" 120 \
	ib_send_bw -c UD -n 5000 -d "$IB_A" -x "$GID_A" -- \
	ib_send_bw -c UD -n 5000 -d "$IB_B" -x "$GID_B" "$IP_A"
res=$(awk '/^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+/ { print $1, $2 }' <<<"$PAIR_OUT_S")
if [ "$res" = "1024 5000" ] && ! grep -q "Did not get Message" <<<"$PAIR_OUT_S"; then
	t_ok "ib_send_bw -c UD: the server received 5000 messages of 1024 B"
else
	t_fail "ib_send_bw -c UD: the server received 5000 messages of 1024 B" \
		"its result: '$res'" "$PAIR_OUT_S"
fi
diag "$(grep -A1 '#bytes' <<<"$PAIR_OUT_C")"

dmesg_check "$dmesg_mark"
tap_done
