#!/usr/bin/env bash
# revoke.sh - device memory taken back while it is in use (issue 33): a
# dma-buf of device X's HBM (X's port carries nothing) is registered as an MR on
# gaudi_$DEV_B, and gaudi_$DEV_A streams RDMA WRITEs into it
# (tests/rdma/revoke_test.c); X is deleted under the traffic.  The writer
# must get an error completion within a second of the removal's end (its
# MR revoked: a remote access error, not writes into HBM that is gone),
# the revoked MR must deregister, X must go, and the kernel log must stay
# clean.  Output: TAP.
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
	rdma_env_cleanup
}
trap cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B, gids $GID_A/$GID_B"
bin=${REVOKE_TEST:-/build/tests-rdma/revoke_test}
need_test_bin revoke_test "$bin"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=0}
klog0=$(dmesg | wc -l)

# revoke OP DEV: OP (write or read) streams between gaudi_$DEV_A and a
# dma-buf MR of device DEV's HBM on gaudi_$DEV_B; DEV is deleted midway
revoke() {
	local op=$1 dev=$2 tp rc took after i
	if ! gn_new_device "$dev" 1; then
		t_fail "$op: device $dev, whose HBM is exported"
		return
	fi
	rm -f /tmp/revoke.ctl
	mkfifo /tmp/revoke.ctl
	"$bin" "$IB_A" "$GID_A" "$IB_B" "$GID_B" "$dev" "$op" </tmp/revoke.ctl \
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
		if gn_del_device "$dev"; then
			took=$(echo "$(date +%s.%N) - $t0" | bc)
			t_ok "$op: del_device $dev under the traffic ($took s)"
		else
			t_fail "$op: del_device $dev under the traffic"
		fi
	else
		t_fail "$op: traffic between $IB_A and a dma-buf MR of device $dev's HBM on $IB_B" \
			"$(cat /tmp/revoke.log)"
	fi
	exec 7>&-
	wait "$tp"
	rc=$?
	diag "$(cat /tmp/revoke.log)"
	after=$(sed -n 's/^# revoked after \([0-9.]*\) s$/\1/p' /tmp/revoke.log)
	if [ "$rc" = 0 ] && [ -n "$after" ] &&
	   [ "$(echo "$after <= $took + 1" | bc)" = 1 ]; then
		t_ok "$op: an error completion within 1 s of the removal ($after s from its start; it took $took s)"
	else
		t_fail "$op: an error completion within 1 s of the removal" \
			"rc=$rc after=${after:-none} removal=$took s"
	fi
	if [ -e "/sys/bus/platform/devices/gaudi_nic.$dev" ]; then
		t_fail "$op: device $dev is gone"
	else
		t_ok "$op: device $dev is gone"
	fi
}
revoke write "$DEV_X"
revoke read "$DEV_Y"
dmesg_check "$klog0"
tap_done
