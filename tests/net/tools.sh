#!/usr/bin/env bash
# tools.sh - what ip, ethtool and devlink show and change on a port, and
# RoCE receive steering switched by the devlink param enable_roce.
# Output: TAP.
here=$(dirname "$0")
GN_DEV=${GN_DEV:-22}
. "$here/lib.sh"

trap env_cleanup EXIT
tap_env_start env_setup
t_ok "environment: $NETIF ($LOCAL_NS) cabled to $REMOTE_IFNAME ($REMOTE_NS)"
DL=platform/gaudi_nic.$GN_DEV

# ethtool_field OUTPUT "Key" -> value after "Key:"
field() { awk -v k="$2" -F: '{ sub(/^[ \t]+/, "", $1) } $1 == k { sub(/^[ \t]+/, "", $2); print $2; exit }' <<<"$1"; }

# --- link settings and driver info
out=$(lcl ethtool "$NETIF")
if [ "$(field "$out" "Link detected")" = yes ] && [ "$(field "$out" "Duplex")" = Full ] &&
   grep -q "Speed: Unknown" <<<"$out"; then
	t_ok "ethtool: link detected, full duplex, speed reported as unknown (emulated cable)"
else
	t_fail "ethtool link settings" "$out"
fi
out=$(lcl ethtool -i "$NETIF")
if [ "$(field "$out" driver)" = gaudi_nic ] && [ "$(field "$out" bus-info)" = "gaudi_nic.$GN_DEV" ] &&
   [ -n "$(field "$out" version)" ] && [ "$(field "$out" firmware-version)" = 1.0.0-sim ]; then
	t_ok "ethtool -i: driver gaudi_nic, bus-info gaudi_nic.$GN_DEV, version, firmware-version"
else
	t_fail "ethtool -i" "$out"
fi
mac=$(lcl cat "/sys/class/net/$NETIF/address")
if [[ $mac =~ ^02:..:..:..:..:00$ ]] && [ "$(rmt cat "/sys/class/net/$REMOTE_IFNAME/address")" = "${mac%:00}:01" ]; then
	t_ok "MAC addresses locally administered, per port: $mac, ${mac%:00}:01"
else
	t_fail "MAC addresses" "$mac"
fi
# a new address while the port is up (IFF_LIVE_ADDR_CHANGE: the MAC filters
# no unicast address): the peer reaches the new one, then the old is back
newmac=${mac%:00}:42
if lcl ip link set dev "$NETIF" address "$newmac" 2>/dev/null &&
   [ "$(lcl cat "/sys/class/net/$NETIF/address")" = "$newmac" ]; then
	rmt ip neigh flush dev "$REMOTE_IFNAME"
	t_check "MAC address $newmac set while up; the peer pings it" \
		rmt ping -c 2 -W 5 -q "$LOCAL_V4"
	t_expect "the peer resolved the new address" "$newmac" \
		"$(rmt ip neigh show "$LOCAL_V4" dev "$REMOTE_IFNAME" | awk '{ print $3 }')"
else
	t_fail "MAC address set while up" "$(lcl ip link set dev "$NETIF" address "$newmac" 2>&1)"
fi
lcl ip link set dev "$NETIF" address "$mac"
rmt ip neigh flush dev "$REMOTE_IFNAME"
t_expect "phys_port_name from the devlink port" p0 "$(lcl cat "/sys/class/net/$NETIF/phys_port_name" 2>&1)"

# --- offloads: what the emulated MAC does, and the paths without them
out=$(lcl ethtool -k "$NETIF")
bad=""
for f in "scatter-gather: on" "tx-checksum-ip-generic: on" "tx-tcp-segmentation: on" \
	 "tx-tcp6-segmentation: on" "rx-checksumming: on" "receive-hashing: on" \
	 "tx-udp-segmentation: off" "rx-vlan-offload: off [fixed]"; do
	grep -qF -- "$f" <<<"$out" || bad+=" [$f]"
done
if [ -z "$bad" ]; then t_ok "ethtool -k: sg, hw csum, tso/tso6, rxcsum, rxhash on; nothing else"; else t_fail "ethtool -k" "missing:$bad" "$out"; fi
lcl ethtool -K "$NETIF" tso off sg off tx off rxcsum off rxhash off 2>/dev/null
rmt ethtool -K "$REMOTE_IFNAME" rxcsum off 2>/dev/null
rmt iperf3 -s -1 >/dev/null 2>&1 &
wait_listen "$REMOTE_NS" 5201
t_check "iperf3 with every offload off" lcl timeout 30 iperf3 -c "$REMOTE_V4" -t 1
wait
lcl ethtool -K "$NETIF" tso on sg on tx on rxcsum on rxhash on 2>/dev/null
rmt ethtool -K "$REMOTE_IFNAME" rxcsum on 2>/dev/null
t_expect "no checksum errors on either end" "0 0" \
	"$(snmp "$LOCAL_NS" Tcp InCsumErrors) $(snmp "$REMOTE_NS" Tcp InCsumErrors)"

# --- rings
out=$(lcl ethtool -g "$NETIF")
if grep -A4 "Pre-set maximums" <<<"$out" | grep -q "RX:[[:space:]]*4096" &&
   grep -A4 "Current hardware" <<<"$out" | grep -q "TX:[[:space:]]*512"; then
	t_ok "ethtool -g: max 4096, current 512"
else
	t_fail "ethtool -g" "$out"
fi
lcl ethtool -G "$NETIF" rx 256 tx 100
out=$(lcl ethtool -g "$NETIF" | grep -A4 "Current hardware")
if grep -q "RX:[[:space:]]*256" <<<"$out" && grep -q "TX:[[:space:]]*128" <<<"$out"; then
	t_ok "ethtool -G rx 256 tx 100: rx 256, tx rounded up to 128"
else
	t_fail "ethtool -G" "$out"
fi
t_check "ethtool -G rx 8192 refused" bash -c "! ip netns exec $LOCAL_NS ethtool -G $NETIF rx 8192 2>/dev/null"
t_check "ethtool -G rx 16 refused" bash -c "! ip netns exec $LOCAL_NS ethtool -G $NETIF rx 16 2>/dev/null"
t_check "ping after ring changes" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"

# --- channels
out=$(lcl ethtool -l "$NETIF")
if grep -A5 "Pre-set maximums" <<<"$out" | grep -q "Combined:[[:space:]]*8"; then
	t_ok "ethtool -l: up to 8 combined channels ($(grep -A5 'Current' <<<"$out" | awk '/Combined/ { print $2 }') now)"
else
	t_fail "ethtool -l" "$out"
fi
lcl ethtool -L "$NETIF" combined 4
rmt ethtool -L "$REMOTE_IFNAME" combined 4
t_expect "ethtool -L combined 4" 4 "$(lcl ethtool -l "$NETIF" | grep -A5 Current | awk '/Combined/ { print $2 }')"
t_expect "4 TX queues in sysfs" 4 "$(lcl ls "/sys/class/net/$NETIF/queues" | grep -c tx-)"
# several flows land on several RX queues of the peer (RSS)
rmt iperf3 -s -1 >/dev/null 2>&1 &
wait_listen "$REMOTE_NS" 5201
lcl timeout 30 iperf3 -c "$REMOTE_V4" -t 2 -P 8 >/dev/null 2>&1
wait
used=0
for q in 0 1 2 3; do
	[ "$(ethtool_stat "$REMOTE_NS" "$REMOTE_IFNAME" "rx${q}_packets")" -gt 0 ] && used=$((used + 1))
done
if [ "$used" -ge 2 ]; then t_ok "RSS: 8 TCP flows spread over $used of 4 RX queues"; else t_fail "RSS spreads flows" "$used queue(s) used"; fi
t_check "ethtool -L combined 9 refused" bash -c "! ip netns exec $LOCAL_NS ethtool -L $NETIF combined 9 2>/dev/null"
lcl ethtool -L "$NETIF" combined 1
t_expect "ethtool -L combined 1" 1 "$(lcl ethtool -l "$NETIF" | grep -A5 Current | awk '/Combined/ { print $2 }')"
t_check "ping with 1 channel" lcl ping -c 2 -i 0.2 -W 5 "$REMOTE_V4"

# --- pause
out=$(lcl ethtool -a "$NETIF")
if [ "$(field "$out" Autonegotiate)" = off ] && [ "$(field "$out" RX)" = off ] && [ "$(field "$out" TX)" = off ]; then
	t_ok "ethtool -a: autoneg off, rx off, tx off"
else
	t_fail "ethtool -a" "$out"
fi
lcl ethtool -A "$NETIF" rx on tx on
rmt ethtool -A "$REMOTE_IFNAME" rx on tx on
out=$(lcl ethtool -a "$NETIF")
if [ "$(field "$out" RX)" = on ] && [ "$(field "$out" TX)" = on ]; then t_ok "ethtool -A rx on tx on"; else t_fail "ethtool -A" "$out"; fi
t_check "ethtool -A autoneg on refused" bash -c "! ip netns exec $LOCAL_NS ethtool -A $NETIF autoneg on 2>/dev/null"
# Back-pressure: with pause on, a receiver out of RX buffers holds the
# sender instead of dropping; the sender's TX ring fills and its queue
# stops until completions wake it.  To make the receiver slow, its NAPI
# runs in a thread; BQL is kept out of the way (limit_min) so that the
# driver's own stop/wake is what acts.
rmt ethtool -G "$REMOTE_IFNAME" rx 64
lcl ethtool -G "$NETIF" tx 64
rmt sh -c "echo 1 > /sys/class/net/$REMOTE_IFNAME/threaded"
lcl sh -c "for q in /sys/class/net/$NETIF/queues/tx-*/byte_queue_limits/limit_min; do echo 100000000 > \$q; done"
# queue_settled: wait (up to 10 s) until every TX queue stopped has been
# woken again (as many wakes as stops, or more: see below)
queue_settled() {
	local i
	for ((i = 0; i < 100; i++)); do
		b_stops=$(ethtool_stat "$LOCAL_NS" "$NETIF" 'tx[0-9]+_stops')
		b_wakes=$(ethtool_stat "$LOCAL_NS" "$NETIF" 'tx[0-9]+_wakes')
		[ "$b_wakes" -ge "$b_stops" ] && return
		sleep 0.1
	done
}
b_miss=$(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_missed_errors)
queue_settled
rmt iperf3 -s -1 >/dev/null 2>&1 &
wait_listen "$REMOTE_NS" 5201
t_check "iperf3 UDP flood with pause on, rx ring 64" lcl timeout 30 iperf3 -c "$REMOTE_V4" -u -b 0 -l 1000 -t 2
wait
d_miss=$(( $(link_stat "$REMOTE_NS" "$REMOTE_IFNAME" rx_missed_errors) - b_miss ))
t_expect "pause on: no frame dropped for lack of RX buffers" 0 "$d_miss"
# the flood must stop the queue, and every stop must get its wake.  More
# wakes than stops is no error: a stop still owed its wake from before
# the flood is woken inside the window, and when xmit stops the queue
# while the completion on the other CPU frees room, the completion wakes
# it (a wake) and xmit's re-check finds room (netif_txq_maybe_stop()
# returns -1, which is not counted as a stop)
s0=$b_stops w0=$b_wakes
queue_settled
stops=$((b_stops - s0)) wakes=$((b_wakes - w0))
diag "pause frames: $(rmt ethtool -I -a "$REMOTE_IFNAME" 2>/dev/null | grep -i frames | tr -s ' \n' ' ')"
if [ "$stops" -gt 0 ] && [ "$wakes" -ge "$stops" ]; then
	t_ok "back-pressure: the TX queue was stopped $stops times and woken $wakes times"
else
	t_fail "back-pressure: TX queue stopped and woken" \
		"stops $stops, wakes $wakes in the flood; before it $s0/$w0, after it $b_stops/$b_wakes"
fi
rmt sh -c "echo 0 > /sys/class/net/$REMOTE_IFNAME/threaded"
lcl ethtool -A "$NETIF" rx off tx off
rmt ethtool -A "$REMOTE_IFNAME" rx off tx off
rmt ethtool -G "$REMOTE_IFNAME" rx 512
lcl ethtool -G "$NETIF" tx 512

# --- statistics
out=$(lcl ethtool -S "$NETIF")
missing=""
for s in rx0_packets rx0_bytes rx0_dropped tx0_packets tx0_bytes tx0_stops tx0_wakes tx0_dropped \
	 mac_tx_frames mac_rx_frames mac_rx_no_buffer mac_rx_too_long roce_rx_frames; do
	grep -q "^ *$s:" <<<"$out" || missing+=" $s"
done
if [ -z "$missing" ] && [ "$(ethtool_stat "$LOCAL_NS" "$NETIF" tx0_packets)" -gt 0 ]; then
	t_ok "ethtool -S: per-queue, MAC and RoCE counters"
else
	t_fail "ethtool -S" "missing:$missing" "$out"
fi
# the stack may send a frame (ND, MLD) between the two reads, or one may
# be between the MAC and its TX completion: both counts are cumulative, so
# a driver that miscounts never matches again; a race matches on a retry
for _ in 1 2 3 4 5 6 7 8 9 10; do
	tx_sw=$(link_stat "$LOCAL_NS" "$NETIF" tx_packets)
	tx_mac=$(ethtool_stat "$LOCAL_NS" "$NETIF" mac_tx_frames)
	[ "$tx_sw" = "$tx_mac" ] && break
	sleep 0.2
done
t_expect "netdev tx_packets = MAC frames sent" "$tx_sw" "$tx_mac"
out=$(lcl ethtool -S "$NETIF" --all-groups 2>&1)
if grep -q "^ *rx-rmon-etherStatsPkts65to127Octets: [1-9]" <<<"$out" &&
   grep -q "^ *tx-rmon-etherStatsPkts1024to1518Octets: [1-9]" <<<"$out"; then
	t_ok "ethtool -S --all-groups: rmon RX and TX size histograms"
else
	t_fail "ethtool -S --all-groups" "$out"
fi
# Every RMON size bucket counts exactly its frames, in the right direction:
# per bucket, 40 frames of its lowest size from the peer (rx) and 60 from
# $NETIF (tx).  The shape of the kernel's hw/ethtool_rmon.sh (which sends
# 30000 frames per bucket and runs in make ksft for time), at a size TCG
# can afford; the tolerance is for frames the stack sends meanwhile.
rmon_val() { # NS IF SET BUCKET
	ip netns exec "$1" ethtool --json -S "$2" --groups rmon |
		jq -r ".[0].rmon[\"$3-pktsNtoM\"][$4].val"
}
mtu0=$(lcl cat "/sys/class/net/$NETIF/mtu")
rmtu0=$(rmt cat "/sys/class/net/$REMOTE_IFNAME/mtu")
bad="" nb=0
while read -r lo hi; do
	need=$((lo - 18))
	if [ "$need" -gt "$(lcl cat "/sys/class/net/$NETIF/mtu")" ]; then
		lcl ip link set "$NETIF" mtu "$need" && rmt ip link set "$REMOTE_IFNAME" mtu "$need" ||
			{ bad+=" mtu-$need"; break; }
	fi
	len=$((lo > 4 ? lo - 4 : 0))
	rx0=$(rmon_val "$LOCAL_NS" "$NETIF" rx "$nb") tx0=$(rmon_val "$LOCAL_NS" "$NETIF" tx "$nb")
	rmt mausezahn "$REMOTE_IFNAME" -q -c 40 -p "$len" -a own -b bcast -d 10us
	lcl mausezahn "$NETIF" -q -c 60 -p "$len" -a own -b bcast -d 10us
	sleep 0.2
	rx=$(( $(rmon_val "$LOCAL_NS" "$NETIF" rx "$nb") - rx0 ))
	tx=$(( $(rmon_val "$LOCAL_NS" "$NETIF" tx "$nb") - tx0 ))
	[ "$rx" -ge 40 ] && [ "$rx" -le 50 ] && [ "$tx" -ge 60 ] && [ "$tx" -le 70 ] ||
		bad+=" $lo-$hi:rx+$rx,tx+$tx"
	nb=$((nb + 1))
done < <(lcl ethtool --json -S "$NETIF" --groups rmon | jq -r '.[0].rmon["rx-pktsNtoM"][]|"\(.low) \(.high)"')
lcl ip link set "$NETIF" mtu "$mtu0"
rmt ip link set "$REMOTE_IFNAME" mtu "$rmtu0"
if [ -z "$bad" ] && [ "$nb" -ge 7 ]; then
	t_ok "RMON histograms: each of $nb buckets counts its 40 received and 60 sent frames"
else
	t_fail "RMON histograms count each bucket's frames" "$nb buckets;$bad"
fi
# IEEE 802.3 MAC statistics (ethtool -S --groups eth-mac): N broadcast
# pings from $NETIF, then the frame counts rise by at least N on both ends
# and equal the mac_* counters of ethtool -S
eth_mac() { # NS IF NAME
	ip netns exec "$1" ethtool -S "$2" --groups eth-mac 2>/dev/null |
		awk -v k="eth-mac-$3:" '$1 == k { print $2; exit }'
}
# mac_vs_std NS IF NAME MAC_COUNTERS...: "STD SUM" from a quiet moment
# (the sum read before and after the group, background IPv6 may send)
mac_vs_std() {
	local ns=$1 ifc=$2 name=$3 i v a b c
	shift 3
	for i in 1 2 3 4 5; do
		a=0 c=0
		for v in "$@"; do a=$((a + $(ethtool_stat "$ns" "$ifc" "$v"))); done
		b=$(eth_mac "$ns" "$ifc" "$name")
		for v in "$@"; do c=$((c + $(ethtool_stat "$ns" "$ifc" "$v"))); done
		[ "$a" = "$c" ] && break
	done
	echo "${b:-none} $c"
}
nb=10
b_tx=$(eth_mac "$LOCAL_NS" "$NETIF" FramesTransmittedOK)
b_btx=$(eth_mac "$LOCAL_NS" "$NETIF" BroadcastFramesXmittedOK)
b_rx=$(eth_mac "$REMOTE_NS" "$REMOTE_IFNAME" FramesReceivedOK)
b_brx=$(eth_mac "$REMOTE_NS" "$REMOTE_IFNAME" BroadcastFramesReceivedOK)
lcl ping -b -c "$nb" -i 0.2 -W 1 "${LOCAL_V4%.*}.255" >/dev/null 2>&1
a_tx=$(eth_mac "$LOCAL_NS" "$NETIF" FramesTransmittedOK)
a_btx=$(eth_mac "$LOCAL_NS" "$NETIF" BroadcastFramesXmittedOK)
a_rx=$(eth_mac "$REMOTE_NS" "$REMOTE_IFNAME" FramesReceivedOK)
a_brx=$(eth_mac "$REMOTE_NS" "$REMOTE_IFNAME" BroadcastFramesReceivedOK)
if [[ "$b_tx$a_tx$b_btx$a_btx$b_rx$a_rx$b_brx$a_brx" =~ ^[0-9]+$ ]] &&
   [ ${#b_tx} -gt 0 ] && [ ${#a_tx} -gt 0 ] && [ ${#b_btx} -gt 0 ] && [ ${#a_btx} -gt 0 ] &&
   [ ${#b_rx} -gt 0 ] && [ ${#a_rx} -gt 0 ] && [ ${#b_brx} -gt 0 ] && [ ${#a_brx} -gt 0 ] &&
   [ $((a_tx - b_tx)) -ge "$nb" ] && [ $((a_btx - b_btx)) -ge "$nb" ] &&
   [ $((a_rx - b_rx)) -ge "$nb" ] && [ $((a_brx - b_brx)) -ge "$nb" ]; then
	t_ok "ethtool -S --groups eth-mac: $nb broadcast pings: Frames/BroadcastFramesXmittedOK +$((a_tx - b_tx))/+$((a_btx - b_btx)), peer Frames/BroadcastFramesReceivedOK +$((a_rx - b_rx))/+$((a_brx - b_brx))"
else
	t_fail "ethtool -S --groups eth-mac after $nb broadcast pings" \
		"FramesTransmittedOK ${b_tx:-none} -> ${a_tx:-none}, BroadcastFramesXmittedOK ${b_btx:-none} -> ${a_btx:-none}" \
		"peer FramesReceivedOK ${b_rx:-none} -> ${a_rx:-none}, BroadcastFramesReceivedOK ${b_brx:-none} -> ${a_brx:-none}" \
		"$(lcl ethtool -S "$NETIF" --all-groups 2>&1)"
fi
read -r std sum <<<"$(mac_vs_std "$LOCAL_NS" "$NETIF" FramesTransmittedOK mac_tx_frames)"
t_expect "eth-mac FramesTransmittedOK = mac_tx_frames" "$sum" "$std"
read -r std sum <<<"$(mac_vs_std "$REMOTE_NS" "$REMOTE_IFNAME" FramesReceivedOK mac_rx_frames roce_rx_frames)"
t_expect "eth-mac FramesReceivedOK (peer) = mac_rx_frames + roce_rx_frames" "$sum" "$std"
out=$(lcl ethtool -I -a "$NETIF" 2>&1)
if grep -q "tx_pause_frames:" <<<"$out" && grep -q "rx_pause_frames:" <<<"$out"; then
	t_ok "ethtool -I -a: pause statistics"
else
	t_fail "ethtool -I -a" "$out"
fi

# --- devlink
out=$(devlink dev show 2>&1)
t_check "devlink dev show lists $DL" grep -qx "$DL" <<<"$out"
out=$(devlink dev info "$DL" 2>&1)
serial=$(cat "/sys/bus/platform/devices/gaudi_nic.$GN_DEV/serial" 2>/dev/null)
if grep -q "driver gaudi_nic" <<<"$out" && grep -q "serial_number $serial" <<<"$out" &&
   grep -q "asic.id gaudi_nic-sim" <<<"$out" && grep -q "fw 1.0.0-sim" <<<"$out"; then
	t_ok "devlink dev info: driver, serial_number $serial, versions"
else
	t_fail "devlink dev info" "$out"
fi
out=$(devlink port show 2>&1)
if grep -q "^$DL/0: type eth .*flavour physical port 0" <<<"$out" &&
   grep -q "^$DL/1: type eth .*flavour physical port 1" <<<"$out"; then
	t_ok "devlink port show: a physical eth port per netdev"
else
	t_fail "devlink port show" "$out"
fi
out=$(devlink dev param show "$DL" name enable_roce 2>&1)
if grep -q "cmode runtime value true" <<<"$out"; then t_ok "devlink param enable_roce: runtime, default true"; else t_fail "devlink param enable_roce" "$out"; fi
# the driver-specific ones: per-context limits and the HBM quota (rdma.md,
# accel.md), u32, runtime, with their defaults
want="max_pd_per_ctx=8192 max_cq_per_ctx=128 max_qp_per_ctx=128 max_srq_per_ctx=128 max_mr_per_ctx=1024 max_ah_per_ctx=8192 max_mw_per_ctx=512 max_dm_per_ctx=64 max_ring_mb_per_ctx=1024 max_hbm_mb_per_ctx=0"
got=""
for p in $want; do
	v=$(devlink dev param show "$DL" name "${p%=*}" 2>&1 | grep -o 'cmode runtime value [0-9]*')
	got="$got ${p%=*}=${v##* }"
done
t_expect "devlink params: the per-context limits and the HBM quota, runtime, at their defaults" "$want" "${got# }"

# --- RoCE steering: UDP 4791 to the engine (on) or the netdev (off)
steer() { # EXPECT_RECEIVED
	local got b a
	b=$(ethtool_stat "$REMOTE_NS" "$REMOTE_IFNAME" roce_rx_frames)
	coproc R4791 { rmt python3 "$here/udp_flood.py" recv 4791 2 6; }
	read -r _ <&"${R4791[0]}"
	lcl python3 "$here/udp_flood.py" send "$REMOTE_V4" 4791 20 100 >/dev/null
	read -r -t 40 got <&"${R4791[0]}" || got=timeout
	kill "$R4791_PID" 2>/dev/null
	wait "$R4791_PID" 2>/dev/null
	a=$(ethtool_stat "$REMOTE_NS" "$REMOTE_IFNAME" roce_rx_frames)
	echo "$got $((a - b))"
}
devlink dev param set "$DL" name enable_roce value false cmode runtime
t_expect "devlink param set enable_roce false" "value false" \
	"$(devlink dev param show "$DL" name enable_roce | grep -o 'value [a-z]*')"
read -r got eng <<<"$(steer)"
if [ "$got" = 20 ] && [ "$eng" = 0 ]; then
	t_ok "enable_roce off: the UDP/4791 socket in $REMOTE_NS got all 20 datagrams, engine 0"
else
	t_fail "enable_roce off: UDP/4791 reaches the netdev" "socket got $got, engine counted $eng"
fi
devlink dev param set "$DL" name enable_roce value true cmode runtime
read -r got eng <<<"$(steer)"
if [ "$got" = 0 ] && [ "$eng" = 20 ]; then
	t_ok "enable_roce on: the socket got nothing, roce_rx_frames +20"
else
	t_fail "enable_roce on: UDP/4791 goes to the RoCE engine" "socket got $got, engine counted $eng"
fi
t_check "other UDP ports still reach the netdev with enable_roce on" lcl ping -c 1 -W 5 "$REMOTE_V4"

tap_done
