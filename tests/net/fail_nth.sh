#!/usr/bin/env bash
# fail_nth.sh - the error paths of a port's netdev operations, of device
# creation and of cabling (issue 31, deliverable 4): gn-fail-nth
# (tests/accel/fail_nth.c) fails every fault-injection site on the path of
# each call in turn, through /proc/thread-self/fail-nth:
#  - net: open (SIOCSIFFLAGS IFF_UP), an MTU change (SIOCSIFMTU) with the
#    port down, and with the port up a ring change (ethtool's
#    SRINGPARAM), on port 0 of device $DEV, one channel and 64-descriptor
#    rings (each RX buffer is two fault sites that all fail the same way:
#    with the defaults an open has thousands; gn-fail-nth visits each
#    site before and after the buffers, a stride among them), IPv6 off in
#    its namespace (the addrconf work of an open is not ours);
#  - link: link_device of ports 0 and 1, undone by unlink_device;
#  - device: new_device of device $NEWDEV (one port, 16 MiB HBM), which in
#    the writing task probes the accel driver, then the Ethernet and RDMA
#    auxiliary drivers (netdev, ib_device); undone by del_device.  Its
#    path has thousands of sites, each visit two creations: gn-fail-nth
#    visits every one of the first 10 and of the last 4, and a fixed
#    stride between, 24 in all (it prints which; FAILNTH_BUDGET=N in the
#    environment sets N visits instead, for every step).
# Each call must fail cleanly or absorb the fault (a device whose
# auxiliary probe failed is absorbed only if del_device then removes it),
# and the same call without a fault then succeed.  Afterwards there are as
# many devices, accel nodes, netdevs and ib_devices as before, and the
# debug lane's watch (kmemleak, lockdep, KASAN) sees nothing.  Needs a
# kernel with fault injection (the debug kernel); elsewhere it skips,
# saying so.  Output: TAP.
here=$(dirname "$0")
. "$here/../rdma/lib.sh"
. "$here/../lib/failnth.sh"
DEV=${FN_NET_DEV:-67}
NEWDEV=${FN_NEW_DEV:-68}
NS=gn-fn-$DEV
P0=gn${DEV}p0
P1=gn${DEV}p1

cleanup() {
	fn_restore
	ip netns del "$NS" 2>/dev/null
	if [ -e "$GN_SYSFS/del_device" ]; then
		gn_del_device "$DEV" 2>/dev/null
		gn_del_device "$NEWDEV" 2>/dev/null
	fi
	return 0
}
trap cleanup EXIT
setup() {
	gib_load || return 1
	gn_new_device "$DEV" 2 16 || return 1
	ip netns add "$NS" || return 1
	ip netns exec "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
		net.ipv6.conf.default.disable_ipv6=1 || return 1
	ip link set "$P0" netns "$NS" && ip link set "$P1" netns "$NS" || return 1
	ip netns exec "$NS" ethtool -L "$P0" combined 1 || return 1
	ip netns exec "$NS" ethtool -G "$P0" rx 64 tx 64
}
tap_env_start setup
t_ok "environment: $P0 and $P1 in $NS, $P0 with one channel and 64-descriptor rings"
bin=${GN_FAIL_NTH:-/build/tests-accel-rel/gn-fail-nth}
need_test_bin gn-fail-nth "$bin"
fn_setup "every fault site of the netdev operations, new_device and link_device"
census0=$(fn_census)
# run DESC CMD...: relay gn-fail-nth's points, and its exit status
run() {
	local desc=$1 out rc
	shift
	out=$(mktemp)
	timeout 600 "$@" >"$out" 2>&1
	rc=$?
	ksft_relay gn-fail-nth " ($desc)" <"$out"
	t_expect "gn-fail-nth $desc exits 0 (1: a step failed, 124: timed out)" 0 "$rc"
	rm -f "$out"
}
run net ip netns exec "$NS" "$bin" net "$P0"
run link ip netns exec "$NS" "$bin" link "$P0" "$P1"
run device "$bin" device "$NEWDEV" 1 16
t_expect "as many devices, accel nodes, netdevs and ib_devices as before" "$census0" "$(fn_census)"
tap_done
