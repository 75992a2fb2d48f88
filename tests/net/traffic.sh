#!/usr/bin/env bash
# traffic.sh - data path over a cabled pair of ports in two namespaces:
# ping/ping6, iperf3 TCP both ways, a UDP flood whose every drop is
# counted, link down/up seen by the peer, MTU changes under traffic.
# Output: TAP.
here=$(dirname "$0")
GN_DEV=${GN_DEV:-21}
. "$here/lib.sh"

trap env_cleanup EXIT
tap_env_start env_setup
t_ok "environment: $NETIF ($LOCAL_NS) cabled to $REMOTE_IFNAME ($REMOTE_NS)"

t_check "ping $REMOTE_V4" lcl ping -c 3 -i 0.2 -W 5 "$REMOTE_V4"
t_check "ping6 $REMOTE_V6" lcl ping -6 -c 3 -i 0.2 -W 5 "$REMOTE_V6"

# iperf3 DIRECTION_ARGS DESC: bounded TCP transfer, ok if bytes moved
iperf() {
	local desc=$1 json bps
	shift
	rmt iperf3 -s -1 >/dev/null 2>&1 &
	wait_listen "$REMOTE_NS" 5201 || { t_fail "$desc" "iperf3 server did not start"; return; }
	if ! json=$(lcl timeout 40 iperf3 -c "$REMOTE_V4" -t 3 -J "$@" 2>&1); then
		t_fail "$desc" "$json"
		wait
		return
	fi
	wait
	bps=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"]))' <<<"$json")
	if [ "${bps:-0}" -gt 0 ]; then
		t_ok "$desc ($((bps / 1000000)) Mbit/s)"
	else
		t_fail "$desc" "no bytes received"
	fi
}
iperf "iperf3 TCP $NETIF -> $REMOTE_IFNAME"
iperf "iperf3 TCP $REMOTE_IFNAME -> $NETIF" -R

# --- UDP flood: every datagram sent is received or counted as a drop.
# Keep other traffic off the cable while counting: static neighbours and
# no IPv6 (no ND/MLD frames).
lmac=$(lcl cat "/sys/class/net/$NETIF/address")
rmac=$(rmt cat "/sys/class/net/$REMOTE_IFNAME/address")
lcl ip neigh replace "$REMOTE_V4" lladdr "$rmac" dev "$NETIF" nud permanent
rmt ip neigh replace "$LOCAL_V4" lladdr "$lmac" dev "$REMOTE_IFNAME" nud permanent
lcl sysctl -qw "net.ipv6.conf.$NETIF.disable_ipv6=1"
rmt sysctl -qw "net.ipv6.conf.$REMOTE_IFNAME.disable_ipv6=1"
rmt ethtool -G "$REMOTE_IFNAME" rx 64 >/dev/null
sleep 0.5
counters() {
	echo "$(snmp "$LOCAL_NS" Udp SndbufErrors) $(link_stat "$LOCAL_NS" "$NETIF" tx_dropped)" \
	     "$(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_missed_errors)" \
	     "$(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_length_errors)" \
	     "$(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_dropped)" \
	     "$(snmp "$REMOTE_NS" Udp InErrors)" "$(link_stat "$LOCAL_NS" "$NETIF" tx_packets)" \
	     "$(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_packets)"
}
read -r b_snd b_txd b_miss b_len b_rxd b_inerr b_txp b_rxp <<<"$(counters)"
coproc RECV { rmt python3 "$here/udp_flood.py" recv 7777 3; }
read -r _ <&"${RECV[0]}"
sent=$(lcl python3 "$here/udp_flood.py" send "$REMOTE_V4" 7777 20000 1000)
read -r received <&"${RECV[0]}"
wait "$RECV_PID" 2>/dev/null
read -r a_snd a_txd a_miss a_len a_rxd a_inerr a_txp a_rxp <<<"$(counters)"
d_snd=$((a_snd - b_snd)) d_txd=$((a_txd - b_txd)) d_miss=$((a_miss - b_miss))
d_len=$((a_len - b_len)) d_rxd=$((a_rxd - b_rxd)) d_inerr=$((a_inerr - b_inerr))
accounted=$((received + d_snd + d_txd + d_miss + d_len + d_rxd + d_inerr))
diag "sent $sent, received $received; drops: qdisc/sndbuf $d_snd, tx $d_txd," \
     "rx no buffer $d_miss, rx too long $d_len, rx driver $d_rxd, socket $d_inerr;" \
     "netdev tx_packets +$((a_txp - b_txp)), peer rx_packets +$((a_rxp - b_rxp))"
if [ "${sent:-0}" -gt 0 ] && [ "$sent" = "$accounted" ]; then
	t_ok "UDP flood: sent $sent = received $received + counted drops $((accounted - received))"
else
	t_fail "UDP flood: every drop counted" "sent $sent, accounted $accounted"
fi
if [ "$((a_txp - b_txp))" = "$((a_rxp - b_rxp + d_miss + d_len + d_rxd))" ]; then
	t_ok "UDP flood: frames sent by $NETIF = frames passed up by $REMOTE_IFNAME + its drops"
else
	t_fail "UDP flood: frame accounting across the cable"
fi
rmt ethtool -G "$REMOTE_IFNAME" rx 512 >/dev/null
lcl sysctl -qw "net.ipv6.conf.$NETIF.disable_ipv6=0"
rmt sysctl -qw "net.ipv6.conf.$REMOTE_IFNAME.disable_ipv6=0"
lcl ip addr add "$LOCAL_V6/64" dev "$NETIF" nodad 2>/dev/null
rmt ip addr add "$REMOTE_V6/64" dev "$REMOTE_IFNAME" nodad 2>/dev/null

# --- carrier follows the far end
lcl ip link set "$NETIF" down
if wait_carrier "$REMOTE_NS" "$REMOTE_IFNAME" 0; then
	t_ok "$NETIF down: $REMOTE_IFNAME loses carrier"
else
	t_fail "$NETIF down: $REMOTE_IFNAME loses carrier"
fi
rmt ip link set "$REMOTE_IFNAME" down
rmt ip link set "$REMOTE_IFNAME" up
sleep 0.3
t_expect "$REMOTE_IFNAME up with $NETIF down: still no carrier" 0 "$(carrier "$REMOTE_NS" "$REMOTE_IFNAME")"
lcl ip link set "$NETIF" up
if wait_carrier "$REMOTE_NS" "$REMOTE_IFNAME" 1 && wait_carrier "$LOCAL_NS" "$NETIF" 1; then
	t_ok "$NETIF up: carrier back on both ends"
else
	t_fail "$NETIF up: carrier back on both ends"
fi
t_check "ping after link down/up" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"

# --- MTU
t_check "MTU 67 refused" bash -c "! ip netns exec $LOCAL_NS ip link set $NETIF mtu 67 2>/dev/null"
t_check "MTU 9217 refused" bash -c "! ip netns exec $LOCAL_NS ip link set $NETIF mtu 9217 2>/dev/null"
t_check "MTU 68 and 9216 accepted" bash -c "ip netns exec $LOCAL_NS ip link set $NETIF mtu 68 && ip netns exec $LOCAL_NS ip link set $NETIF mtu 9216 && ip netns exec $LOCAL_NS ip link set $NETIF mtu 1500"

# MTU changes while TCP flows (receiver grows first, sender shrinks first,
# so no frame is ever longer than the receiving end accepts)
rmt iperf3 -s -1 >/dev/null 2>&1 &
wait_listen "$REMOTE_NS" 5201
lcl timeout 60 iperf3 -c "$REMOTE_V4" -t 6 -J > /tmp/gn-mtu-iperf.json 2>&1 &
cpid=$!
sleep 1.5
rc=0
rmt ip link set "$REMOTE_IFNAME" mtu 9000 || rc=1
lcl ip link set "$NETIF" mtu 9000 || rc=1
sleep 1.5
lcl ip link set "$NETIF" mtu 1500 || rc=1
rmt ip link set "$REMOTE_IFNAME" mtu 1500 || rc=1
wait "$cpid"
crc=$?
wait
t_expect "MTU changes (1500 -> 9000 -> 1500) while iperf3 runs" 0 "$rc"
bytes=$(python3 -c 'import json,sys; print(int(json.load(sys.stdin)["end"]["sum_received"]["bytes"]))' < /tmp/gn-mtu-iperf.json 2>/dev/null)
if [ "$crc" = 0 ] && [ "${bytes:-0}" -gt 0 ]; then
	t_ok "iperf3 across the MTU changes completed ($bytes bytes)"
else
	t_fail "iperf3 across the MTU changes completed" "exit $crc" "$(tail -n 5 /tmp/gn-mtu-iperf.json)"
fi
t_check "ping after the MTU changes" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"
lcl ip link set "$NETIF" mtu 9000
rmt ip link set "$REMOTE_IFNAME" mtu 9000
t_check "jumbo ping (8972 bytes, DF) at MTU 9000" lcl ping -M do -s 8972 -c 2 -i 0.2 -W 5 "$REMOTE_V4"
lcl ip link set "$NETIF" mtu 1500
t_check "jumbo frame refused by a 1500-byte MTU sender" bash -c "! ip netns exec $LOCAL_NS ping -M do -s 8972 -c 1 -W 1 $REMOTE_V4 >/dev/null 2>&1"
rmt ip link set "$REMOTE_IFNAME" mtu 1500

# --- a failed reconfiguration leaves the port as it was (rollback)
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
fail=/sys/kernel/debug/gaudi_nic.eth.$GN_DEV/p0_fail_alloc
if [ -w "$fail" ]; then
	echo 1 > "$fail"
	err=$(lcl ip link set "$NETIF" mtu 9000 2>&1)
	t_expect "MTU change with ring allocation failing: refused, MTU still 1500" "1500" \
		"$([ -n "$err" ] && lcl cat "/sys/class/net/$NETIF/mtu")"
	echo 1 > "$fail"
	lcl ethtool -G "$NETIF" rx 1024 2>/dev/null
	t_expect "ring resize with allocation failing: rx ring still 512" 512 \
		"$(lcl ethtool -g "$NETIF" | grep -A4 Current | awk '/^RX:/ { print $2 }')"
	echo 1 > "$fail"
	n=$(lcl ethtool -l "$NETIF" | grep -A5 Current | awk '/Combined/ { print $2 }')
	lcl ethtool -L "$NETIF" combined 3 2>/dev/null
	t_expect "channel change with allocation failing: still $n channels" "$n" \
		"$(lcl ethtool -l "$NETIF" | grep -A5 Current | awk '/Combined/ { print $2 }')"
	t_check "traffic still flows after the failed changes" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"
else
	t_skip "rollback of failed reconfiguration" "no $fail (debugfs)"
fi

tap_done
