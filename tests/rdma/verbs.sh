#!/usr/bin/env bash
# verbs.sh - our own verbs test (tests/rdma/verbs_test.c) between two
# gaudi devices: device limits, address handles (IPv4 and IPv6 GIDs), QP
# state machine, data path operations, protection and RNR errors,
# HBM-to-HBM RDMA through dma-buf MRs; extended QPs (qpex_test.c); memory
# windows, MR re-registration and parent domains (mw_test.c); CQ and SRQ
# resizing and reset (queue_test.c); then teardown in the wrong order
# (del_device under live processes: QPs, CQs, MRs, an AH).  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-34}
DEV_B=${DEV_B:-35}
. "$here/lib.sh"

trap 'echo 1 > /sys/module/gaudi_nic_sim/parameters/roce_rx_pipeline 2>/dev/null; rdma_env_cleanup' EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B"
# built by `make user` (tests/rdma/meson.build): the ASan+UBSan build
bin=${VERBS_TEST:-/build/tests-rdma/verbs_test}
need_test_bin verbs_test "$bin"
# no LeakSanitizer: a failed step leaves its objects behind on purpose and
# the program exits without closing its devices
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
# global IPv6 addresses (no DAD) give each port a RoCE v2 IPv6 GID
ns_a ip -6 addr add 2001:db8:5::1/64 dev "$IF_A" nodad
ns_b ip -6 addr add 2001:db8:5::2/64 dev "$IF_B" nodad
for ((i = 0; i < 50; i++)); do
	grep -qs '^2001:0db8:0005:' /sys/class/infiniband/"$IB_A"/ports/1/gids/* &&
	grep -qs '^2001:0db8:0005:' /sys/class/infiniband/"$IB_B"/ports/1/gids/* && break
	sleep 0.1
done
# the test's own KTAP lines, renumbered into ours, SUFFIX after each name
run_verbs_test() { # SUFFIX
	ksft_relay verbs_test "$1" < <(timeout 300 "$bin" "$IB_A" "$GID_A" \
		"$IB_B" "$GID_B" "$DEV_A" "$DEV_B" 2>&1)
	diag "$IB_A: $(ib_stats "$IB_A" 1)"
}
run_verbs_test ""
# again with large frames received in the sender's context, not queued by
# reference to the sender's pages (the receive pipeline, rdma.md); the
# debug-kernel lane, short of time, leaves that pass to the stock lane
PIPE_PARAM=/sys/module/gaudi_nic_sim/parameters/roce_rx_pipeline
if [ -n "${VERBS_ONE_PASS:-}" ]; then
	diag "VERBS_ONE_PASS: the pass with the receive pipeline off runs in the stock lane only"
elif [ -w "$PIPE_PARAM" ]; then
	echo 0 > "$PIPE_PARAM"
	run_verbs_test " [receive pipeline off]"
	echo 1 > "$PIPE_PARAM"
else
	t_fail "roce_rx_pipeline parameter" "$PIPE_PARAM missing"
fi

# extended QPs: the ibv_wr_* work request API (tests/rdma/qpex_test.c)
qpexbin=${QPEX_TEST:-/build/tests-rdma/qpex_test}
if [ -x "$qpexbin" ]; then
	ksft_relay qpex_test < <(timeout 300 "$qpexbin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
else
	t_fail "qpex_test built" "$qpexbin missing (make user)"
fi

# memory windows, rereg MR and parent domains (tests/rdma/mw_test.c)
mwbin=${MW_TEST:-/build/tests-rdma/mw_test}
if [ -x "$mwbin" ]; then
	ksft_relay mw_test < <(timeout 300 "$mwbin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
	# bound_dereg leaves an MR with a window bound to its exit: uverbs
	# retries the MR, refused while the window lived, after the window
	mrs=$(rdma resource show mr 2>&1 | grep -E "dev $IB_A .*comm mw_test")
	if [ -z "$mrs" ]; then
		t_ok "no MR of mw_test is left after it exited (one had a window bound)"
	else
		t_fail "no MR of mw_test is left after it exited" "$mrs"
	fi
else
	t_fail "mw_test built" "$mwbin missing (make user)"
fi

# CQs and SRQs resized, a QP's completions at reset and destroy
# (tests/rdma/queue_test.c)
queuebin=${QUEUE_TEST:-/build/tests-rdma/queue_test}
if [ -x "$queuebin" ]; then
	ksft_relay queue_test < <(timeout 300 "$queuebin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
else
	t_fail "queue_test built" "$queuebin missing (make user)"
fi

# device memory on the HBM (tests/rdma/dm_test.c)
dmbin=${DM_TEST:-/build/tests-rdma/dm_test}
if [ -x "$dmbin" ]; then
	ksft_relay dm_test < <(timeout 300 "$dmbin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" 2>&1)
else
	t_fail "dm_test built" "$dmbin missing (make user)"
fi

# teardown in the wrong order: a process holds a QP, CQ and MR while its
# device is deleted; it must get errors, not hang, and the kernel must not
# oops
ns_a timeout 60 ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -n 1000000 >/tmp/pp.log 2>&1 &
sp=$!
wait_listen "$NS_A" 18515
ns_b timeout 60 ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -n 1000000 "$IP_A" >/tmp/pc.log 2>&1 &
cp=$!
# the client creates its QP once connected to the server: on the debug
# kernel that can take longer than the 2 s once waited here, so wait for it
# (up to 30 s) rather than for a fixed time
for ((i = 0; i < 100; i++)); do
	res=$(rdma resource show qp link "$IB_B/1" 2>&1; rdma resource show cq dev "$IB_B" 2>&1;
	      rdma resource show mr dev "$IB_B" 2>&1)
	grep -q "type RC" <<<"$res" && break
	sleep 0.3
done
if grep -q "type RC" <<<"$res" && grep -q "^dev $IB_B cqn" <<<"$res" &&
   grep -q "^dev $IB_B mrn" <<<"$res" && grep -q ibv_rc_pingpong <<<"$res"; then
	t_ok "rdma resource shows the live QP, CQ and MR"
else
	t_fail "rdma resource shows the live QP, CQ and MR" "$res"
fi
# A holder: a program that keeps objects on $IB_B until EOF on its stdin,
# the FIFO /tmp/NAME.ctl whose writing end the caller holds as FD (close
# it to let the program go on), logging to /tmp/NAME.log; it must say
# OK_RE once ready.  Its pid in holder_pid.
start_holder() { # NAME FD OK_RE DESC CMD...
	local name=$1 fd=$2 re=$3 desc=$4 i
	shift 4
	mkfifo "/tmp/$name.ctl"
	# without the other holders' FIFO ends, so each sees its own EOF
	"$@" <"/tmp/$name.ctl" >"/tmp/$name.log" 2>&1 7>&- 8>&- &
	holder_pid=$!
	eval "exec $fd>/tmp/$name.ctl"
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready' "/tmp/$name.log" && break
		sleep 0.1
	done
	if grep -q "$re" "/tmp/$name.log"; then
		t_ok "$desc"
	else
		t_fail "$desc" "$(cat "/tmp/$name.log")"
	fi
}
# an address handle held by another process over the removal
start_holder ah 7 '^ok .*AH on' "a second process holds an AH on $IB_B" \
	"$bin" --hold-ah "$IB_B" "$GID_B" "$IP_A"
ahp=$holder_pid
# and device memory (HBM), mapped, with a DM MR on it
start_holder dm 8 '^ok .*DM MR on it held' \
	"a third process holds a mapped DM and a DM MR on $IB_B" \
	"$dmbin" --hold "$IB_B"
dmp=$holder_pid
t0=$(date +%s)
if gn_del_device "$DEV_B"; then
	t_ok "del_device $DEV_B with live QPs, CQs, MRs, AHs and DMs ($(( $(date +%s) - t0 )) s)"
else
	t_fail "del_device $DEV_B with live QPs, CQs, MRs, AHs and DMs"
fi
exec 7>&- 8>&-
wait "$ahp"
rc=$?
if [ "$rc" = 0 ] && grep -q '^ok .*after the device is gone' /tmp/ah.log; then
	t_ok "the AH holder cleans up after the removal"
else
	t_fail "the AH holder cleans up after the removal" "rc=$rc" "$(cat /tmp/ah.log)"
fi
wait "$dmp"
rc=$?
if [ "$rc" = 0 ] && [ "$(grep -c '^ok ' /tmp/dm.log)" = 3 ]; then
	t_ok "the DM holder reads its old mapping and frees after the removal"
else
	t_fail "the DM holder reads its old mapping and frees after the removal" "rc=$rc" "$(cat /tmp/dm.log)"
fi
rm -f /tmp/ah.ctl /tmp/dm.ctl
kill "$cp" 2>/dev/null
wait "$cp"
kill "$sp" 2>/dev/null
wait "$sp" 2>/dev/null
if [ -e /sys/class/infiniband/$IB_B ]; then
	t_fail "$IB_B is gone"
else
	t_ok "$IB_B is gone"
fi
if dmesg | grep -q "$IB_A: MR of [0-9]* bytes refused: max_mr_size is"; then
	t_ok "the refused oversized MR is logged"
else
	t_fail "the refused oversized MR is logged" "$(dmesg | tail -n 20)"
fi
dmesg_check
tap_done
