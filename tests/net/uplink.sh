#!/usr/bin/env bash
# uplink.sh - a port whose cable ends in a Linux netdev (sim/uplink.c).
#
# Device $GN_DEV (two ports) and device $GN_DEV+1 (one port):
#  - port 0 in $A_NS is uplinked to veth $UP_A in the same namespace; its
#    peer $HOST_IF in $H_NS is an ordinary interface of the kernel's stack.
#    ping (v4, v6, at the MTU), TCP both ways (the host side sends TSO/GSO
#    frames through the veth, which the uplink must segment) and UDP;
#  - port 1 and the other device's port 0 are uplinked to veths whose
#    peers are ports of a Linux bridge in $BR_NS: ping and TCP between two
#    gaudi ports through a real switch;
#  - carrier follows the uplink; an MTU above the uplink's is reported and
#    the frames it would truncate are counted, not delivered;
#  - bad input: a veth already an uplink or a bridge port, two non-ports;
#  - the cable ends cleanly under traffic by unlink_device (either end),
#    by deleting the uplink, by moving it to another namespace and by
#    del_device; afterwards the veth is free again (it can join a bridge:
#    our rx_handler is gone) and not promiscuous.
# Output: TAP.
here=$(dirname "$0")
GN_DEV=${GN_DEV:-26}
. "$here/lib.sh"
. "$here/../lib/klog.sh"
DEV2=$((GN_DEV + 1))
P0=gn${GN_DEV}p0
P1=gn${GN_DEV}p1
Q0=gn${DEV2}p0
A_NS=gu-a-$GN_DEV
H_NS=gu-h-$GN_DEV
B_NS=gu-b-$GN_DEV
BR_NS=gu-br-$GN_DEV
X_NS=gu-x-$GN_DEV
UP_A=gua$GN_DEV
HOST_IF=guh$GN_DEV
UP_P1=gup$GN_DEV
UP_Q0=guq$GN_DEV
A4=198.51.100.1 H4=198.51.100.2 A6=2001:db8:100::1 H6=2001:db8:100::2
P1_4=198.51.101.1 Q0_4=198.51.101.2

ns() { in_ns "$@"; }
# promisc NS IF: the interface's promiscuity count
promisc() { ns "$1" ip -d -j link show "$2" | python3 -c 'import json, sys; print(json.load(sys.stdin)[0].get("promiscuity", "?"))'; }
# klog_grep MARK PATTERN: the kernel log lines after MARK matching PATTERN
klog_grep() { dmesg | tail -n +"$(($1 + 1))" | grep -E "$2"; }

uplink_setup() {
	gn_load || { echo "cannot load the drivers"; return 1; }
	modprobe -q veth && modprobe -q bridge || { echo "cannot load veth and bridge"; return 1; }
	gn_new_device "$GN_DEV" 2 && gn_new_device "$DEV2" 1 || return 1
	for n in "$A_NS" "$H_NS" "$B_NS" "$BR_NS" "$X_NS"; do
		ip netns add "$n" && ns "$n" ip link set lo up || return 1
	done
	# port 0 and its uplink in A_NS; the uplink's peer in H_NS
	ip link set "$P0" netns "$A_NS" || return 1
	ns "$A_NS" ip link add "$UP_A" type veth peer name "$HOST_IF" netns "$H_NS" || return 1
	gn_link "$A_NS" "$P0" "$A_NS" "$UP_A" || return 1
	ns "$A_NS" ip addr add "$A4/24" dev "$P0"
	ns "$A_NS" ip addr add "$A6/64" dev "$P0" nodad
	ns "$H_NS" ip addr add "$H4/24" dev "$HOST_IF"
	ns "$H_NS" ip addr add "$H6/64" dev "$HOST_IF" nodad
	ns "$A_NS" ip link set "$UP_A" up
	ns "$H_NS" ip link set "$HOST_IF" up
	ns "$A_NS" ip link set "$P0" up
	# port 1 (in B_NS) and the other device's port 0 (init) on a bridge
	ns "$BR_NS" ip link add br0 type bridge || return 1
	ns "$BR_NS" ip link set br0 up
	ip link set "$P1" netns "$B_NS" || return 1
	ns "$B_NS" ip link add "$UP_P1" type veth peer name brp1 netns "$BR_NS" || return 1
	ip link add "$UP_Q0" type veth peer name brq0 netns "$BR_NS" || return 1
	ns "$BR_NS" ip link set brp1 master br0 && ns "$BR_NS" ip link set brq0 master br0 || return 1
	ns "$BR_NS" ip link set brp1 up && ns "$BR_NS" ip link set brq0 up
	gn_link "$B_NS" "$P1" "$B_NS" "$UP_P1" && gn_link init "$Q0" init "$UP_Q0" || return 1
	ns "$B_NS" ip link set "$UP_P1" up
	ip link set "$UP_Q0" up
	ns "$B_NS" ip addr add "$P1_4/24" dev "$P1"
	ip addr add "$Q0_4/24" dev "$Q0"
	ns "$B_NS" ip link set "$P1" up
	ip link set "$Q0" up
	wait_carrier "$A_NS" "$P0" 1 && wait_carrier "$B_NS" "$P1" 1 &&
		wait_carrier init "$Q0" 1
}

uplink_cleanup() {
	for n in "$A_NS" "$H_NS" "$B_NS" "$BR_NS" "$X_NS"; do
		ip netns pids "$n" 2>/dev/null | xargs -r kill 2>/dev/null
	done
	sleep 0.2
	ip link del "$UP_Q0" 2>/dev/null
	for n in "$A_NS" "$H_NS" "$B_NS" "$BR_NS" "$X_NS"; do
		ip netns del "$n" 2>/dev/null
	done
	gn_del_device "$GN_DEV" 2>/dev/null
	gn_del_device "$DEV2" 2>/dev/null
	return 0
}
trap uplink_cleanup EXIT
klog_mark
mark=$KLOG_MARK
# seconds of each TCP and UDP transfer (the debug lane, 6-9x slower,
# sets 1: the same paths, less data)
SECS=${UPLINK_SECS:-3}
tap_env_start uplink_setup
t_ok "environment: $P0 uplinked to $UP_A (peer $HOST_IF in $H_NS); $P1 and $Q0 uplinked to ports of br0 in $BR_NS"
diag "$(klog_grep "$mark" "linked .*uplink")"

# ---- the port meets the kernel's own stack through a veth
t_check "ping $P0 -> $HOST_IF (IPv4)" ns "$A_NS" ping -c 3 -i 0.2 -W 5 "$H4"
t_check "ping $HOST_IF -> $P0 (IPv6)" ns "$H_NS" ping -6 -c 3 -i 0.2 -W 5 "$A6"
t_check "ping at the MTU, DF set (1472 bytes of ICMP payload)" \
	ns "$A_NS" ping -M do -s 1472 -c 2 -i 0.2 -W 5 "$H4"
tcp_both() {
	local d=$1 sns=$2 cns=$3 saddr=$4 out spid
	ns "$sns" timeout 90 iperf3 -s -1 -p 5301 >/dev/null 2>&1 &
	spid=$!
	wait_listen "$sns" 5301 "$spid"
	if out=$(ns "$cns" timeout 60 iperf3 -c "$saddr" -p 5301 -t "$SECS" -J 2>&1) &&
	   bytes=$(python3 -c 'import json, sys; print(json.loads(sys.argv[1])["end"]["sum_received"]["bytes"])' "$out") &&
	   [ "$bytes" -gt 0 ]; then
		t_ok "$d: $((bytes / 1024)) KiB received"
	else
		t_fail "$d" "$out"
	fi
	wait "$spid"
}
tso0=$(ethtool_stat "$A_NS" "$P0" mac_rx_uplink_dropped)
tcp_both "TCP $HOST_IF -> $P0 (the host sends TSO frames through the veth)" "$A_NS" "$H_NS" "$A4"
tcp_both "TCP $P0 -> $HOST_IF (our TSO, segmented by the MAC)" "$H_NS" "$A_NS" "$H4"
t_expect "no frame from the uplink dropped" "$tso0" "$(ethtool_stat "$A_NS" "$P0" mac_rx_uplink_dropped)"
t_check "UDP $P0 -> $HOST_IF (iperf3 -u, $SECS s)" bash -c "
	ip netns exec $H_NS timeout 60 iperf3 -s -1 -p 5302 >/dev/null 2>&1 &
	for i in \$(seq 100); do ip netns exec $H_NS ss -Hltn 'sport = :5302' | grep -q . && break; sleep 0.1; done
	ip netns exec $A_NS timeout 60 iperf3 -u -b 20M -c $H4 -p 5302 -t $SECS >/dev/null; rc=\$?; wait; exit \$rc"
rx_host=$(link_stat "$H_NS" "$HOST_IF" rx_packets)
diag "$HOST_IF received $rx_host frames; $P0 MAC: tx $(ethtool_stat "$A_NS" "$P0" mac_tx_frames), rx $(ethtool_stat "$A_NS" "$P0" mac_rx_frames)"

# ---- carrier follows the uplink
ns "$H_NS" ip link set "$HOST_IF" down
if wait_carrier "$A_NS" "$P0" 0; then
	t_ok "$HOST_IF down (the veth loses carrier): $P0 loses carrier"
else
	t_fail "$P0 loses carrier with its uplink's"
fi
ns "$H_NS" ip link set "$HOST_IF" up
if wait_carrier "$A_NS" "$P0" 1; then
	t_ok "$HOST_IF up: $P0 has carrier again"
else
	t_fail "$P0 gets carrier back with its uplink's"
fi
ns "$A_NS" ip link set "$UP_A" down
wait_carrier "$A_NS" "$P0" 0 && t_ok "the uplink $UP_A itself down: no carrier" ||
	t_fail "the uplink $UP_A down: no carrier"
ns "$A_NS" ip link set "$UP_A" up
wait_carrier "$A_NS" "$P0" 1 && t_ok "the uplink up: carrier" || t_fail "the uplink up: carrier"

# ---- MTU: a port MTU above the uplink's is reported, long frames counted
before=$(dmesg | wc -l)
d0=$(ethtool_stat "$A_NS" "$P0" mac_tx_uplink_dropped)
ns "$A_NS" ip link set "$P0" mtu 4000
if klog_grep "$before" "MTU 4000 is above the MTU 1500 of its uplink $UP_A" >/dev/null; then
	t_ok "MTU 4000 over a 1500 uplink reported: $(klog_grep "$before" "above the MTU" | head -n 1 | sed 's/^\[[^]]*\] //')"
else
	t_fail "MTU above the uplink's reported" "$(dmesg | tail -n +$((before + 1)))"
fi
ns "$A_NS" ping -M do -s 3000 -c 2 -i 0.2 -W 1 "$H4" >/dev/null 2>&1
d1=$(ethtool_stat "$A_NS" "$P0" mac_tx_uplink_dropped)
if [ "$d1" -ge $((d0 + 2)) ]; then
	t_ok "3028-byte IP packets are not truncated: mac_tx_uplink_dropped $d0 -> $d1"
else
	t_fail "frames above the uplink's MTU counted in mac_tx_uplink_dropped" "$d0 -> $d1"
fi
ns "$A_NS" ip link set "$P0" mtu 1500
t_check "ping after the MTU is back" ns "$A_NS" ping -c 2 -i 0.2 -W 5 "$H4"

# ---- through a Linux bridge: two gaudi ports on one switch
t_check "ping $P1 -> $Q0 through br0" ns "$B_NS" ping -c 3 -i 0.2 -W 5 "$Q0_4"
tcp_both "TCP $P1 -> $Q0 through br0" init "$B_NS" "$Q0_4"
fdb=$(ns "$BR_NS" bridge fdb show br br0 dynamic)
mac_p1=$(ns "$B_NS" cat "/sys/class/net/$P1/address")
if grep -q "$mac_p1 dev brp1" <<<"$fdb"; then
	t_ok "br0 learnt $P1's MAC ($mac_p1) on brp1"
else
	t_fail "br0 learnt $P1's MAC on brp1" "$fdb"
fi

# ---- bad input
exec {fa}<"/run/netns/$A_NS" {fb}<"/run/netns/$B_NS" {fbr}<"/run/netns/$BR_NS" {fi}</proc/1/ns/net
gn_new_device $((GN_DEV + 2)) 1
r0=gn$((GN_DEV + 2))p0
ridx=$(ifindex init "$r0")
bad_link "a veth that is already another port's uplink" \
	"$fi:$ridx $fa:$(ifindex "$A_NS" "$UP_A")" "$UP_A is already an uplink"
bad_link "a bridge port (it has a receive handler)" \
	"$fi:$ridx $fbr:$(ifindex "$BR_NS" brp1)" "brp1 already has a receive handler"
bad_link "two interfaces, neither a port" \
	"$fbr:$(ifindex "$BR_NS" brp1) $fbr:$(ifindex "$BR_NS" brq0)" "neither brp1 nor brq0 is a gaudi_nic port"
bad_link "a port that already has an uplink" \
	"$fa:$(ifindex "$A_NS" "$P0") $fbr:$(ifindex "$BR_NS" br0)" "$P0 is already linked"
t_expect "$r0 got no cable from the refused writes" 0 "$(carrier init "$r0")"
before=$(dmesg | wc -l)
if echo "$fbr:$(ifindex "$BR_NS" brq0)" >"$GN_SYSFS/unlink_device" 2>/dev/null; then
	t_fail "unlink_device of a netdev that is nobody's uplink: refused" "the write succeeded"
elif klog_grep "$before" "unlink_device: brq0 is not linked" >/dev/null; then
	t_ok "unlink_device of a netdev that is nobody's uplink: refused, log: unlink_device: brq0 is not linked"
else
	t_fail "unlink_device of a netdev that is nobody's uplink: refused with a clear message" \
		"$(dmesg | tail -n +$((before + 1)))"
fi
gn_del_device $((GN_DEV + 2))
t_expect "$P0 still has its uplink (carrier)" 1 "$(carrier "$A_NS" "$P0")"

# ---- endings under traffic
# flood NS ADDR: a ping flood in the background (its pid in $flood)
flood() { ns "$1" ping -f -W 1 -c 1000000 "$2" >/dev/null 2>&1 & flood=$!; sleep 1; }
unflood() { kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null; }
# freed NS IF: the veth is no longer ours: not promiscuous, and a bridge
# takes it (an rx_handler left behind would refuse it with EBUSY)
freed() {
	local p
	p=$(promisc "$1" "$2")
	if [ "$p" = 0 ] && ns "$1" ip link add gufree type bridge &&
	   ns "$1" ip link set "$2" master gufree; then
		ns "$1" ip link del gufree
		t_ok "$3: $2 is free again (promiscuity 0, a bridge can take it)"
	else
		ns "$1" ip link del gufree 2>/dev/null
		t_fail "$3: $2 is free again" "promiscuity $p"
	fi
}
t_expect "an uplink is promiscuous while it is one" 1 "$(promisc "$A_NS" "$UP_A")"

flood "$A_NS" "$H4"
t_check "unlink_device from the uplink's end, under a ping flood" gn_unlink "$A_NS" "$UP_A"
unflood
wait_carrier "$A_NS" "$P0" 0 && t_ok "unlinked: $P0 has no carrier" || t_fail "unlinked: $P0 has no carrier"
freed "$A_NS" "$UP_A" "unlink_device"

t_check "relink $P0 to $UP_A" gn_link "$A_NS" "$P0" "$A_NS" "$UP_A"
wait_carrier "$A_NS" "$P0" 1
# the flood across the unlink left the peer's neighbour entry FAILED,
# which answers "Destination Host Unreachable" until it is probed again:
# start from a clean entry, and give ping a deadline rather than a count
ns "$A_NS" ip neigh flush dev "$P0"
t_check "ping after relink" ns "$A_NS" ping -c 2 -i 0.2 -w 10 "$H4"
flood "$A_NS" "$H4"
t_check "unlink_device from the port's end, under a ping flood" gn_unlink "$A_NS" "$P0"
unflood
freed "$A_NS" "$UP_A" "unlink_device from the port"

t_check "relink, then move the uplink to another namespace under traffic" \
	gn_link "$A_NS" "$P0" "$A_NS" "$UP_A"
wait_carrier "$A_NS" "$P0" 1
flood "$A_NS" "$H4"
before=$(dmesg | wc -l)
ns "$A_NS" ip link set "$UP_A" netns "$X_NS"
unflood
if wait_carrier "$A_NS" "$P0" 0 && klog_grep "$before" "uplink $UP_A unregistered or left its namespace" >/dev/null; then
	t_ok "$UP_A moved to $X_NS: the cable ended, $P0 has no carrier, the log says why"
else
	t_fail "moving the uplink ends the cable" "carrier $(carrier "$A_NS" "$P0")" "$(dmesg | tail -n +$((before + 1)))"
fi
freed "$X_NS" "$UP_A" "moved"

t_check "relink across namespaces ($P0 in $A_NS, $UP_A in $X_NS)" gn_link "$A_NS" "$P0" "$X_NS" "$UP_A"
ns "$X_NS" ip link set "$UP_A" up
wait_carrier "$A_NS" "$P0" 1
# the flood left $H4's neighbour entry FAILED when the cable ended: as
# after the relink above, start from a clean entry, with a deadline
ns "$A_NS" ip neigh flush dev "$P0"
t_check "ping with the uplink in another namespace than the port" ns "$A_NS" ping -c 2 -i 0.2 -w 10 "$H4"
flood "$A_NS" "$H4"
ns "$X_NS" ip link del "$UP_A"
unflood
wait_carrier "$A_NS" "$P0" 0 && t_ok "the uplink deleted under traffic: $P0 has no carrier" ||
	t_fail "deleting the uplink ends the cable"

# del_device of a device whose port is uplinked, with TCP through the bridge
ns "$B_NS" timeout 30 iperf3 -s -1 -p 5303 >/dev/null 2>&1 &
spid=$!
wait_listen "$B_NS" 5303 "$spid"
timeout 30 iperf3 -c "$P1_4" -p 5303 -t 5 >/dev/null 2>&1 &
cpid=$!
sleep 2
t_check "del_device $DEV2 while its uplinked port sends TCP" gn_del_device "$DEV2"
kill "$spid" "$cpid" 2>/dev/null
wait "$spid" "$cpid" 2>/dev/null
freed init "$UP_Q0" "del_device"
t_expect "$P1 still has carrier (its own uplink into br0)" 1 "$(carrier "$B_NS" "$P1")"

exec {fa}<&- {fb}<&- {fbr}<&- {fi}<&-
klog_clean "the uplink tests"
tap_done
