#!/usr/bin/env bash
# revoke.sh - device memory taken back while it is in use (issue 33): a
# dma-buf of device X's HBM (X's port carries nothing) is registered as an MR on
# gaudi_$DEV_B, and gaudi_$DEV_A streams RDMA WRITEs into it
# (tests/rdma/revoke_test.c); X is deleted under the traffic.  The writer
# must get an error completion within a second of the removal's end (its
# MR revoked: a remote access error, not writes into HBM that is gone),
# the revoked MR must deregister, X must go, and the kernel log must stay
# clean.  The same again with a reset of X (devlink dev reload) instead of
# its removal, where X lives on: its HBM must come back whole and stay
# zero for its next owner while the old writer keeps trying, and X must
# serve new opens and have its netdev and RDMA device again; then two
# reloads at once, registrations, fd closes and deregistrations racing
# resets, and reloads into another namespace and back; last, the removal
# of B itself, whose own HBM and port carry the traffic.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-93}
DEV_B=${DEV_B:-94}
DEV_X=${DEV_X:-95}
DEV_Y=${DEV_Y:-96}
. "$here/lib.sh"

cleanup() {
	gn_del_device "$DEV_X" 2>/dev/null
	gn_del_device "$DEV_Y" 2>/dev/null
	rm -f /tmp/revoke.ctl
	ip netns del gn_revoke_ns 2>/dev/null
	rdma_env_cleanup
}
trap cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B, gids $GID_A/$GID_B"
bin=${REVOKE_TEST:-/build/tests-rdma/revoke_test}
need_test_bin revoke_test "$bin"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
klog0=$(dmesg | wc -l)

# revoke OP DEV [reload]: OP (write or read) streams between gaudi_$DEV_A
# and a dma-buf MR of device DEV's HBM on gaudi_$DEV_B; DEV is deleted
# midway, or reset with "reload"
revoke() {
	local op=$1 dev=$2 how=${3:-} tp rc took after i act=del_device arg=
	[ "$how" = reload ] && act="devlink dev reload" arg=reload
	if [ "$how" != own ] && ! gn_new_device "$dev" 1; then
		t_fail "$op: device $dev, whose HBM is exported"
		return
	fi
	rm -f /tmp/revoke.ctl
	mkfifo /tmp/revoke.ctl
	"$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" "$dev" "$op" $arg </tmp/revoke.ctl \
		>/tmp/revoke.log 2>&1 &
	tp=$!
	exec 7>/tmp/revoke.ctl
	for ((i = 0; i < 300; i++)); do
		grep -q '^ready' /tmp/revoke.log && break
		kill -0 "$tp" 2>/dev/null || break
		sleep 0.1
	done
	took=0
	if grep -q '^ready' /tmp/revoke.log; then
		t_ok "$op: traffic between $IB_A and a dma-buf MR of device $dev's HBM on $IB_B"
		echo go >&7
		t0=$(date +%s.%N)
		if if [ "$how" = reload ]; then
			devlink dev reload "platform/gaudi_nic.$dev"
		   else gn_del_device "$dev"; fi; then
			took=$(echo "$(date +%s.%N) - $t0" | bc)
			t_ok "$op: $act $dev under the traffic ($took s)"
		else
			t_fail "$op: $act $dev under the traffic"
		fi
	else
		t_fail "$op: traffic between $IB_A and a dma-buf MR of device $dev's HBM on $IB_B" \
			"$(cat /tmp/revoke.log)"
	fi
	# the end of its stdin: the reset has returned (revoke_test waits
	# for it before it looks at the device that lives on)
	exec 7>&-
	wait "$tp"
	rc=$?
	diag "$(cat /tmp/revoke.log)"
	after=$(sed -n 's/^# revoked after \([0-9.]*\) s$/\1/p' /tmp/revoke.log)
	if [ "$rc" = 0 ] && [ -n "$after" ] &&
	   [ "$(echo "$after <= $took + 1" | bc)" = 1 ]; then
		t_ok "$op: an error completion within 1 s of the $act ($after s from its start; it took $took s)"
	elif [ "$rc" != 0 ]; then
		t_fail "$op: revoke_test passes every check (its \"not ok\" lines are above)" \
			"rc=$rc after=${after:-none} $act=$took s"
	else
		t_fail "$op: an error completion within 1 s of the $act" \
			"after=${after:-none} $act=$took s"
	fi
	if [ "$how" = reload ]; then
		reloaded "$op" "$dev"
		gn_del_device "$dev"
	elif [ -e "/sys/bus/platform/devices/gaudi_nic.$dev" ]; then
		t_fail "$op: device $dev is gone"
	else
		t_ok "$op: device $dev is gone"
	fi
}
# reloaded OP DEV [NS]: after its reset, DEV has its netdev (in NS, by
# default the initial namespace) and an RDMA device again
reloaded() {
	local ib ns=${3:-}
	ib=$(ls "/sys/bus/auxiliary/devices/gaudi_nic.rdma.$2/infiniband" 2>/dev/null)
	if [ -n "$ib" ] && ibv_devinfo -d "$ib" >/dev/null 2>&1 &&
	   ${ns:+ip netns exec "$ns"} ip link show "gn$2p0" >/dev/null 2>&1; then
		t_ok "$1: device $2 has its RDMA device $ib and its netdev gn$2p0${ns:+ in $ns} again"
	else
		t_fail "$1: device $2 has its RDMA device and its netdev${ns:+ in $ns} again" \
			"$(ls -R "/sys/bus/auxiliary/devices/gaudi_nic.rdma.$2" 2>&1 | head)"
	fi
}
revoke write "$DEV_X"
revoke read "$DEV_Y"
revoke write "$DEV_X" reload
revoke read "$DEV_Y" reload
# two resets of one device at once: devlink orders them, both succeed;
# the device's params (the per-context limits) keep their values
if gn_new_device "$DEV_X" 1; then
	dl=platform/gaudi_nic.$DEV_X
	devlink dev param set "$dl" name max_qp_per_ctx value 77 cmode runtime
	devlink dev param set "$dl" name max_hbm_mb_per_ctx value 5 cmode runtime
	devlink dev reload "platform/gaudi_nic.$DEV_X" & p1=$!
	devlink dev reload "platform/gaudi_nic.$DEV_X" & p2=$!
	wait "$p1"; r1=$?
	wait "$p2"; r2=$?
	t_expect "two reloads of device $DEV_X at once both succeed" "0 0" "$r1 $r2"
	reloaded "two reloads" "$DEV_X"
	t_expect "devlink params max_qp_per_ctx 77 and max_hbm_mb_per_ctx 5 outlive the reloads" \
		"value 77 value 5" \
		"$(devlink dev param show "$dl" name max_qp_per_ctx | grep -o 'value [0-9]*') $(devlink dev param show "$dl" name max_hbm_mb_per_ctx | grep -o 'value [0-9]*')"
	gn_del_device "$DEV_X"
else
	t_fail "device $DEV_X for two reloads at once"
fi
# the other orders, against resets: exports registered, closed and
# deregistered in a loop on gaudi_$DEV_B while device X is reset 5 times
if gn_new_device "$DEV_X" 1; then
	"$bin" churn "$IB_B" "$DEV_X" 30 >/tmp/revoke.log 2>&1 &
	tp=$!
	sleep 2
	n=0
	for ((i = 0; i < 5; i++)); do
		devlink dev reload "platform/gaudi_nic.$DEV_X" && n=$((n + 1))
		sleep 1
	done
	wait "$tp"
	rc=$?
	diag "$(cat /tmp/revoke.log)"
	if [ "$rc" = 0 ] && [ "$n" = 5 ]; then
		t_ok "registrations, fd closes and deregistrations race 5 resets of device $DEV_X"
	else
		t_fail "registrations, fd closes and deregistrations race 5 resets of device $DEV_X" \
			"rc=$rc, $n of 5 reloads done"
	fi
	gn_del_device "$DEV_X"
else
	t_fail "device $DEV_X for the races"
fi
# a reload into another namespace re-creates the netdev there, and back
gn_new_device "$DEV_X" 1 || t_fail "device $DEV_X for reloads into namespaces"
ip netns add gn_revoke_ns
if devlink dev reload "platform/gaudi_nic.$DEV_X" netns gn_revoke_ns; then
	reloaded "reload into gn_revoke_ns" "$DEV_X" gn_revoke_ns
else
	t_fail "reload of device $DEV_X into gn_revoke_ns"
fi
if ip netns exec gn_revoke_ns devlink dev reload "platform/gaudi_nic.$DEV_X" netns 1; then
	reloaded "reload back into the initial namespace" "$DEV_X"
else
	t_fail "reload of device $DEV_X back into the initial namespace"
fi
ip netns del gn_revoke_ns
gn_del_device "$DEV_X"
# last, as it takes the environment's device B: B's own HBM, registered
# on B, whose own port carries the WRITEs, and B deleted under them
revoke write "$DEV_B" own
dmesg_check "$klog0"
tap_done
