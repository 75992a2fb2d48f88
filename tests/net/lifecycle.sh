#!/usr/bin/env bash
# lifecycle.sh - cables and devices coming and going: unlink/relink, bad
# input to link_device, a port moved to another namespace, del_device
# while traffic flows.  Output: TAP.
here=$(dirname "$0")
GN_DEV=${GN_DEV:-23}
. "$here/lib.sh"
OTHER_DEV=$((GN_DEV + 1))
THIRD_NS=gn-third-$GN_DEV

cleanup() {
	ip netns pids "$THIRD_NS" 2>/dev/null | xargs -r kill 2>/dev/null
	ip netns del "$THIRD_NS" 2>/dev/null
	env_cleanup
	[ -e "/sys/bus/platform/devices/gaudi_nic.$OTHER_DEV" ] && gn_del_device "$OTHER_DEV" 2>/dev/null
	return 0
}
trap cleanup EXIT
tap_env_start env_setup
t_ok "environment: $NETIF ($LOCAL_NS) cabled to $REMOTE_IFNAME ($REMOTE_NS)"

# --- unlink and relink
t_check "unlink_device $NETIF" gn_unlink "$LOCAL_NS" "$NETIF"
if wait_carrier "$LOCAL_NS" "$NETIF" 0 && wait_carrier "$REMOTE_NS" "$REMOTE_IFNAME" 0; then
	t_ok "unlinked: no carrier on either end"
else
	t_fail "unlinked: no carrier on either end"
fi
t_check "no ping without a cable" bash -c "! ip netns exec $LOCAL_NS ping -c 1 -W 1 $REMOTE_V4 >/dev/null"
t_check "unlink_device of an unlinked port refused" bash -c "! (. $here/lib.sh; gn_unlink $LOCAL_NS $NETIF) 2>/dev/null"
t_check "link_device again" gn_link "$REMOTE_NS" "$REMOTE_IFNAME" "$LOCAL_NS" "$NETIF"
if wait_carrier "$LOCAL_NS" "$NETIF" 1 && wait_carrier "$REMOTE_NS" "$REMOTE_IFNAME" 1; then
	t_ok "relinked: carrier on both ends"
else
	t_fail "relinked: carrier on both ends"
fi
# The cable-less ping left a neighbour entry whose ARP probes may still
# be running out: a ping queued on it fails when they do, however quickly
# the relinked cable answers (seen on a loaded guest).  Start afresh.
lcl ip neigh flush dev "$NETIF"
t_check "ping after relink" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"

# --- bad input: refused with an error, and the kernel log says why
# bad_link (lib.sh); $fl/$fr are namespace fds of this shell
exec {fl}<"/run/netns/$LOCAL_NS" {fr}<"/run/netns/$REMOTE_NS" {fi}</proc/1/ns/net
lidx=$(ifindex "$LOCAL_NS" "$NETIF")
ridx=$(ifindex "$REMOTE_NS" "$REMOTE_IFNAME")
bad_link "garbage" "hello world" "expected \"netnsfd_a:ifindex_a netnsfd_b:ifindex_b\""
bad_link "one end only" "$fl:$lidx" "expected"
bad_link "not a namespace fd" "0:$lidx $fr:$ridx" "is not a network namespace"
bad_link "no such ifindex" "$fl:99999 $fr:$ridx" "no interface with ifindex 99999"
bad_link "self-link" "$fl:$lidx $fl:$lidx" "cannot link $NETIF to itself"
bad_link "not Ethernet (lo)" "$fl:1 $fr:$ridx" "lo is neither a gaudi_nic port nor an Ethernet interface"
gn_new_device "$OTHER_DEV" 2
oidx=$(ifindex init "gn${OTHER_DEV}p0")
bad_link "port already linked" "$fl:$lidx $fi:$oidx" "$NETIF is already linked"
bad_link "peer already linked" "$fi:$oidx $fr:$ridx" "$REMOTE_IFNAME is already linked"
t_expect "still cabled to the original peer" 1 "$(carrier "$REMOTE_NS" "$REMOTE_IFNAME")"
t_check "two ports of another device can be cabled (init namespace)" gn_link init "gn${OTHER_DEV}p0" init "gn${OTHER_DEV}p1"
exec {fl}<&- {fr}<&- {fi}<&-

# --- a port moved to another namespace keeps its cable
ip netns add "$THIRD_NS"
ip netns exec "$THIRD_NS" ip link set lo up
rmt ip link set "$REMOTE_IFNAME" netns "$THIRD_NS"
if wait_carrier "$LOCAL_NS" "$NETIF" 0; then
	t_ok "$REMOTE_IFNAME moved to $THIRD_NS (closed on the way): $NETIF loses carrier"
else
	t_fail "moving $REMOTE_IFNAME drops the carrier of $NETIF"
fi
ip netns exec "$THIRD_NS" ip addr add "$REMOTE_V4/24" dev "$REMOTE_IFNAME"
ip netns exec "$THIRD_NS" ip link set "$REMOTE_IFNAME" up
wait_carrier "$LOCAL_NS" "$NETIF" 1
t_check "ping to $REMOTE_IFNAME in $THIRD_NS" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"
t_check "ethtool -S in $THIRD_NS" ip netns exec "$THIRD_NS" ethtool -S "$REMOTE_IFNAME"
ip netns exec "$THIRD_NS" ip link set "$REMOTE_IFNAME" netns "$REMOTE_NS"
rmt ip addr add "$REMOTE_V4/24" dev "$REMOTE_IFNAME"
rmt ip link set "$REMOTE_IFNAME" up
wait_carrier "$LOCAL_NS" "$NETIF" 1
t_check "ping after moving it back" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"

# --- del_device while traffic flows
lmac=$(lcl cat "/sys/class/net/$NETIF/address")
rmt iperf3 -s -1 >/dev/null 2>&1 &
wait_listen "$REMOTE_NS" 5201
lcl timeout 60 iperf3 -c "$REMOTE_V4" -t 30 >/dev/null 2>&1 &
lcl ping -f -W 1 -c 100000 "$REMOTE_V4" >/dev/null 2>&1 &
sleep 3
t_check "del_device $GN_DEV while iperf3 and ping -f run" gn_del_device "$GN_DEV"
t_check "its netdevs are gone" bash -c "! ip netns exec $LOCAL_NS ip link show $NETIF 2>/dev/null && ! ip netns exec $REMOTE_NS ip link show $REMOTE_IFNAME 2>/dev/null"
t_check "its devlink instance is gone" bash -c "! devlink dev show | grep -qx platform/gaudi_nic.$GN_DEV"
lcl pkill iperf3; rmt pkill iperf3; lcl pkill ping
wait
t_check "the other device is unaffected" ip link show "gn${OTHER_DEV}p0"
t_check "new_device $GN_DEV again" gn_new_device "$GN_DEV" 2
t_expect "same MAC address after re-creation (stable, from the serial)" "$lmac" "$(cat "/sys/class/net/$NETIF/address")"
out=$(devlink port show 2>&1)
if grep -q "^platform/gaudi_nic.$GN_DEV/0: type eth netdev $NETIF flavour physical port 0" <<<"$out"; then
	t_ok "devlink port show names netdev $NETIF"
else
	t_fail "devlink port linked to the netdev" "$out"
fi
t_check "del_device $OTHER_DEV with its ports up and cabled" bash -c "ip link set gn${OTHER_DEV}p0 up && ip link set gn${OTHER_DEV}p1 up && echo $OTHER_DEV > $GN_SYSFS/del_device"
refs=$(cat /sys/module/gaudi_nic/refcnt)
[ "$refs" = 0 ] || diag "holders: $(ls /sys/module/gaudi_nic/holders); open: $(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -E 'accel|dmabuf' | head -5)"
t_expect "no module references left behind (refcnt)" 0 "$refs"

tap_done
