#!/usr/bin/env bash
# lifecycle.sh - module unload ordering and teardown with live RDMA users:
# rmmod gaudi_nic under gaudi_ib (refused, nothing breaks); rmmod gaudi_ib
# under processes holding ucontexts, QPs, CQs and MRs (the RDMA core
# disassociates them: the unload completes, the processes get errors and
# exit, none hangs); reload gaudi_ib onto the existing devices; rmmod
# gaudi_ib, gaudi_nic and gaudi_nic_sim with devices existing; reload them; del_device of
# one device while its peer has QPs connected to it (the peer's QPs exhaust
# their retries, report an error and are destroyed).  After each step the
# kernel log is checked and ibv_rc_pingpong must work again.  Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-40}
DEV_B=${DEV_B:-41}
. "$here/lib.sh"
GIB_NAME=gaudi_ib

trap rdma_env_cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A cabled to $IB_B"

klog_mark	# klog_clean DESC after each step (tests/lib/klog.sh)
works() { # DESC
	pair "ibv_rc_pingpong works $1" 120 \
		ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -c -n 20 -s 4000 -- \
		ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -c -n 20 -s 4000 "$IP_A"
}
# start_pp: a long ibv_rc_pingpong pair (completion events) in the background
start_pp() {
	ns_a timeout 300 ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -e -n 100000000 -s 4000 >"$1.s" 2>&1 &
	PP_S=$!
	wait_listen "$NS_A" 18515
	ns_b timeout 300 ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -e -n 100000000 -s 4000 "$IP_A" >"$1.c" 2>&1 &
	PP_C=$!
	# running: both QPs exist and the counters move
	local i t0
	t0=$(ib_counter "$IB_A" 1 rx_packets)
	for ((i = 0; i < 100; i++)); do
		[ "$(ib_counter "$IB_A" 1 rx_packets)" -gt $((t0 + 50)) ] && return 0
		sleep 0.1
	done
	return 1
}
# wait_exit PID SECONDS: WAIT_RC = the process's exit status, or "hung"
# (not in a subshell: only this shell can collect its children's status)
wait_exit() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		if ! kill -0 "$1" 2>/dev/null; then
			wait "$1"
			WAIT_RC=$?
			return
		fi
		sleep 0.1
	done
	WAIT_RC=hung
}
reenv() { # the namespaces and devices again, after the modules went
	rdma_env_cleanup
	rdma_env_setup
}
works "at start"

# 1. gaudi_nic cannot go while gaudi_ib is bound to its aux devices
if out=$(rmmod gaudi_nic 2>&1); then
	t_fail "rmmod gaudi_nic with gaudi_ib loaded is refused" "it was unloaded"
	gib_load
	reenv
else
	t_ok "rmmod gaudi_nic with gaudi_ib loaded is refused ($out)"
fi
t_expect "both modules still loaded" "2" "$(grep -cE '^(gaudi_nic|gaudi_ib) ' /proc/modules)"
works "after the refused rmmod"
klog_clean "the refused rmmod"

# 2. rmmod gaudi_ib while two processes hold ucontexts, PDs, CQs, QPs
# and MRs and move traffic: the core disassociates them
tmp=$(mktemp)
if start_pp "$tmp"; then
	t_ok "ibv_rc_pingpong pair running (events mode)"
else
	t_fail "ibv_rc_pingpong pair running (events mode)" "$(cat "$tmp.s" "$tmp.c")"
fi
res=$(rdma resource show qp link "$IB_A/1" 2>&1)
grep -q ibv_rc_pingpong <<<"$res" && t_ok "rdma resource shows the live QP" || t_fail "rdma resource shows the live QP" "$res"
t0=$(date +%s)
out=$(timeout 120 rmmod "$GIB_NAME" 2>&1)
rc=$?
if [ "$rc" = 0 ]; then
	t_ok "rmmod gaudi_ib with live user objects ($(( $(date +%s) - t0 )) s)"
else
	t_fail "rmmod gaudi_ib with live user objects" "rc=$rc $out" "$(grep gaudi /proc/modules)"
fi
wait_exit "$PP_S" 60; es=$WAIT_RC
wait_exit "$PP_C" 60; ec=$WAIT_RC
if [ "$es" != hung ] && [ "$es" != 0 ] && [ "$es" != 124 ] &&
   [ "$ec" != hung ] && [ "$ec" != 0 ] && [ "$ec" != 124 ]; then
	t_ok "both processes got errors and exited by themselves (status $es, $ec)"
else
	t_fail "both processes got errors and exited by themselves (status $es, $ec)" \
		"server:" "$(tail -n 5 "$tmp.s")" "client:" "$(tail -n 5 "$tmp.c")"
	kill "$PP_S" "$PP_C" 2>/dev/null
fi
diag "server: $(grep -i "fail\|err" "$tmp.s" | tr "\n" " ")" "client: $(grep -i "fail\|err" "$tmp.c" | tr "\n" " ")"
t_expect "no gaudi ib_device left" "" "$(ls /sys/class/infiniband | grep '^gaudi_')"
klog_clean "rmmod gaudi_ib under live processes"

# 3. gaudi_ib again, onto the existing devices (netdevs in namespaces)
if insmod "$GIB_KO" && ib_wait_active "$IB_A" 1 && ib_wait_active "$IB_B" 1; then
	t_ok "insmod gaudi_ib: $IB_A and $IB_B back and active"
else
	t_fail "insmod gaudi_ib: $IB_A and $IB_B back and active" "$(ls /sys/class/infiniband)"
fi
GID_A=$(gid_index "$IB_A" 1 "$IP_A") && GID_B=$(gid_index "$IB_B" 1 "$IP_B")
t_check "GIDs of the namespaced netdevs restored ($GID_A, $GID_B)" test -n "$GID_A" -a -n "$GID_B"
works "after reloading gaudi_ib"
klog_clean "reloading gaudi_ib"

# 4. both modules out with devices existing, cabled and addressed
grep -q '^gaudi_nic_test_importer ' /proc/modules && rmmod gaudi_nic_test_importer
t_check "rmmod gaudi_ib with devices existing" rmmod "$GIB_NAME"
t_check "rmmod gaudi_nic with devices existing" rmmod gaudi_nic
t_expect "no gaudi netdev left" "" "$(ns_a ls /sys/class/net | grep '^gn'; ns_b ls /sys/class/net | grep '^gn')"
t_check "rmmod gaudi_nic_sim with its (unbound) devices existing" rmmod gaudi_nic_sim
t_expect "no gaudi_nic platform device left" "" "$(ls /sys/bus/platform/devices | grep '^gaudi_nic')"
klog_clean "unloading the modules"
if reenv >"$tmp" 2>&1; then
	t_ok "modules reloaded, devices, cable and addresses again"
else
	t_fail "modules reloaded, devices, cable and addresses again" "$(cat "$tmp")"
fi
works "after reloading both modules"
klog_clean "reloading both modules"

# 5. del_device of B while A's QP is connected to B's and moving traffic:
# A's requests go unanswered, its QP exhausts its retries (transport retry
# counter exceeded), the process exits with the error and its QP goes.
# A must be the requester with WRs in flight (ib_write_bw client): a QP
# that only waits for a receive has nothing to time out (RC has no
# keepalive), so ibv_rc_pingpong would hang there by design.
ns_b timeout 300 ib_write_bw -d "$IB_B" -x "$GID_B" -F -s 65536 -D 200 >"$tmp.c" 2>&1 &
PP_C=$!
wait_listen "$NS_B" 18515
ns_a timeout 300 ib_write_bw -d "$IB_A" -x "$GID_A" -F -s 65536 -D 200 "$IP_B" >"$tmp.s" 2>&1 &
PP_S=$!
t0=$(ib_counter "$IB_A" 1 tx_packets)
for ((i = 0; i < 300; i++)); do
	[ "$(ib_counter "$IB_A" 1 tx_packets)" -gt $((t0 + 200)) ] && break
	sleep 0.1
done
if [ "$(ib_counter "$IB_A" 1 tx_packets)" -gt $((t0 + 200)) ]; then
	t_ok "ib_write_bw $IB_A -> $IB_B running"
else
	t_fail "ib_write_bw $IB_A -> $IB_B running" "$(cat "$tmp.s" "$tmp.c")"
fi
to0=$(ib_counter "$IB_A" 1 local_ack_timeouts)
t_check "del_device $DEV_B with a connected peer" gn_del_device "$DEV_B"
wait_exit "$PP_S" 60; es=$WAIT_RC
if [ "$es" != hung ] && [ "$es" != 0 ] && [ "$es" != 124 ]; then
	t_ok "$IB_A's process got an error and exited (status $es)"
else
	t_fail "$IB_A's process got an error and exited (status $es)" "$(tail -n 5 "$tmp.s")"
	kill "$PP_S" 2>/dev/null
fi
diag "$IB_A's process: $(grep -i "fail\|err" "$tmp.s" | tr "\n" " ")"
# the ib_write_bw server is passive (it never touches its QP or CQ during
# the run): it learns nothing from the device's removal, but it must not
# be stuck in the kernel, a signal ends it
wait_exit "$PP_C" 5; ec=$WAIT_RC
if [ "$ec" = hung ]; then kill "$PP_C" 2>/dev/null; wait_exit "$PP_C" 20; ec=$WAIT_RC; fi
if [ "$ec" != hung ]; then
	t_ok "$IB_B's (passive) process is not stuck (status $ec)"
else
	t_fail "$IB_B's (passive) process is not stuck" "$(cat /proc/"$PP_C"/stack 2>/dev/null)" "$(tail -n 5 "$tmp.c")"
	kill -9 "$PP_C" 2>/dev/null
fi
to1=$(ib_counter "$IB_A" 1 local_ack_timeouts)
if [ "$to1" -gt "$to0" ]; then
	t_ok "$IB_A's QP timed out (local_ack_timeouts $to0 -> $to1)"
else
	t_fail "$IB_A's QP timed out (local_ack_timeouts $to0 -> $to1)" "$(tail -n 5 "$tmp.s")"
fi
t_expect "$IB_A has no QP left" "" "$(rdma resource show qp link "$IB_A/1" 2>&1 | grep -v 'type GSI\|type SMI')"
klog_clean "del_device with a connected peer"
# B again, cabled to A
if gn_new_device "$DEV_B" 1 && ip link set "$IF_B" netns "$NS_B" &&
   gn_link "$NS_A" "$IF_A" "$NS_B" "$IF_B" && ns_b ip addr add "$IP_B/24" dev "$IF_B" &&
   ns_b ip link set "$IF_B" up && wait_carrier "$NS_A" "$IF_A" 1 && ib_wait_active "$IB_B" 1 &&
   GID_B=$(gid_index "$IB_B" 1 "$IP_B") && ib_wait_active "$IB_A" 1; then
	t_ok "$IB_B created again and cabled"
else
	t_fail "$IB_B created again and cabled"
fi
works "with the new $IB_B"
klog_clean "re-creating $IB_B"
rm -f "$tmp" "$tmp.s" "$tmp.c"
tap_done
