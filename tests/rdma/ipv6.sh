#!/usr/bin/env bash
# ipv6.sh - the RoCE v2 IPv6 data path between two gaudi devices in two
# namespaces over a cable: GIDs of global and link-local IPv6 addresses,
# ibv_rc_pingpong (polling and events, path MTU 1024 and 4096), RDMA WRITE
# and READ (perftest) on those GIDs; then ethtool -S shows the RoCE frames
# apart from the netdev's own (roce_tx_frames/roce_rx_frames move by at
# least the engine's packet counts, the netdev RX rings do not).  The frame
# format itself is checked against rdma_rxe and tshark in interop.sh.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-38}
DEV_B=${DEV_B:-39}
. "$here/lib.sh"
IP6_A=2001:db8:38::1
IP6_B=2001:db8:38::2

ipv6_setup() {
	rdma_env_setup || return 1
	ns_a ip addr add "$IP6_A/64" dev "$IF_A" nodad
	ns_b ip addr add "$IP6_B/64" dev "$IF_B" nodad
	GID6_A=$(gid_index "$IB_A" 1 "$IP6_A") && GID6_B=$(gid_index "$IB_B" 1 "$IP6_B") || return 1
	LL_A=$(ns_a ip -6 -o addr show dev "$IF_A" scope link | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	LL_B=$(ns_b ip -6 -o addr show dev "$IF_B" scope link | awk '{ sub(/\/.*/, "", $4); print $4; exit }')
	[ -n "$LL_A" ] && [ -n "$LL_B" ] || { echo "no link-local address"; return 1; }
	GIDL_A=$(gid_index "$IB_A" 1 "$LL_A") && GIDL_B=$(gid_index "$IB_B" 1 "$LL_B")
}

trap rdma_env_cleanup EXIT
tap_env_start ipv6_setup
t_ok "environment: $IB_A cabled to $IB_B; global $IP6_A/$IP6_B gids $GID6_A/$GID6_B, link-local $LL_A/$LL_B gids $GIDL_A/$GIDL_B"
for d in "$IB_A $GID6_A" "$IB_B $GID6_B" "$IB_A $GIDL_A" "$IB_B $GIDL_B"; do
	set -- $d
	t_expect "$1 gid $2 ($(cat /sys/class/infiniband/$1/ports/1/gids/$2)) is RoCE v2" \
		"RoCE v2" "$(cat /sys/class/infiniband/$1/ports/1/gid_attrs/types/$2)"
done

snap() {
	local p=$1
	eval "${p}_gtx=$(ib_counter "$IB_A" 1 tx_packets) ${p}_grx=$(ib_counter "$IB_A" 1 rx_packets)"
	eval "${p}_etx=$(ethtool_stat "$NS_A" "$IF_A" roce_tx_frames) ${p}_erx=$(ethtool_stat "$NS_A" "$IF_A" roce_rx_frames)"
	eval "${p}_nrx=$(ethtool_stat "$NS_A" "$IF_A" 'rx[0-9]+_packets') ${p}_ntx=$(ethtool_stat "$NS_A" "$IF_A" 'tx[0-9]+_packets')"
}
snap s0

# rstat: the recovery counters of both ends, one line
rstat() {
	local d c line=
	for d in "$IB_A" "$IB_B"; do
		line+="$d:"
		for c in local_ack_timeouts retransmits duplicate_requests out_of_sequence rx_dropped; do
			line+=" $c $(ib_counter "$d" 1 $c)"
		done
		line+="; "
	done
	diag "$line"
}
# pp6 DESC GID_A GID_B ARGS...: ibv_rc_pingpong with those GIDs
pp6() {
	local d=$1 ga=$2 gb=$3
	shift 3
	pair "$d" 180 ibv_rc_pingpong -d "$IB_A" -g "$ga" -c "$@" -- \
		ibv_rc_pingpong -d "$IB_B" -g "$gb" -c "$@" "$IP_A"
	rstat
}
pp6 "ibv_rc_pingpong global IPv6, 512 B x 50" "$GID6_A" "$GID6_B" -s 512 -n 50
pp6 "ibv_rc_pingpong global IPv6, 4000 B x 50" "$GID6_A" "$GID6_B" -s 4000 -n 50
pp6 "ibv_rc_pingpong global IPv6, events, 64 KiB x 20" "$GID6_A" "$GID6_B" -e -s 65536 -n 20
pp6 "ibv_rc_pingpong link-local IPv6, 4000 B x 50" "$GIDL_A" "$GIDL_B" -s 4000 -n 50
diag "$(tail -n 2 <<<"$PAIR_OUT_C")"
perf6() { # DESC GID_A GID_B TOOL ARGS...
	local d=$1 ga=$2 gb=$3
	shift 3
	pair "$d" 300 "$@" -d "$IB_A" -x "$ga" -- "$@" -d "$IB_B" -x "$gb" "$IP_A"
	diag "$(tail -n 2 <<<"$PAIR_OUT_C" | head -n 1)"
	rstat
}
perf6 "ib_write_bw global IPv6, 64 KiB x 100" "$GID6_A" "$GID6_B" ib_write_bw -F -s 65536 -n 100
perf6 "ib_read_bw global IPv6, 64 KiB x 100" "$GID6_A" "$GID6_B" ib_read_bw -F -s 65536 -n 100
perf6 "ib_send_bw global IPv6, 64 KiB x 100" "$GID6_A" "$GID6_B" ib_send_bw -F -s 65536 -n 100
perf6 "ib_write_bw link-local IPv6, 64 KiB x 100" "$GIDL_A" "$GIDL_B" ib_write_bw -F -s 65536 -n 100
perf6 "ib_read_bw link-local IPv6, 64 KiB x 100" "$GIDL_A" "$GIDL_B" ib_read_bw -F -s 65536 -n 100

# path MTU 4096: the IPv6 header is 20 bytes longer than the IPv4 one
ns_a ip link set "$IF_A" mtu 9000 && ns_b ip link set "$IF_B" mtu 9000
wait_carrier "$NS_A" "$IF_A" 1 && wait_carrier "$NS_B" "$IF_B" 1
ib_wait_active "$IB_A" 1 && ib_wait_active "$IB_B" 1
pp6 "ibv_rc_pingpong global IPv6, MTU 4096, 64 KiB x 20" "$GID6_A" "$GID6_B" -m 4096 -s 65536 -n 20
perf6 "ib_write_bw global IPv6, MTU 4096, 64 KiB x 100" "$GID6_A" "$GID6_B" ib_write_bw -F -m 4096 -s 65536 -n 100
perf6 "ib_read_bw global IPv6, MTU 4096, 64 KiB x 100" "$GID6_A" "$GID6_B" ib_read_bw -F -m 4096 -s 65536 -n 100

snap s1
gtx=$((s1_gtx - s0_gtx)) grx=$((s1_grx - s0_grx)) etx=$((s1_etx - s0_etx)) erx=$((s1_erx - s0_erx))
nrx=$((s1_nrx - s0_nrx)) ntx=$((s1_ntx - s0_ntx))
diag "$IB_A: $(ib_stats "$IB_A" 1)" \
	"$IB_A tx_packets +$gtx rx_packets +$grx; $IF_A roce_tx_frames +$etx roce_rx_frames +$erx, rx rings +$nrx, tx rings +$ntx"
# no frame rejected or lost; timeouts are timing (the tools' 67 ms can
# pass under TCG), reported, and duplicates may only follow the peer's
for c in rx_icrc_errors seq_nak_received; do
	t_expect "$IB_A $c = 0" 0 "$(ib_counter "$IB_A" 1 $c)"
	t_expect "$IB_B $c = 0" 0 "$(ib_counter "$IB_B" 1 $c)"
done
for d in "$IB_A $IB_B" "$IB_B $IB_A"; do
	set -- $d
	dup=$(ib_counter "$1" 1 duplicate_requests) oos=$(ib_counter "$1" 1 out_of_sequence)
	to=$(ib_counter "$2" 1 local_ack_timeouts)
	if { [ "$dup" = 0 ] && [ "$oos" = 0 ]; } || [ "$to" -gt 0 ]; then
		t_ok "$1: duplicates ($dup) and out-of-sequence ($oos) only after $2 timed out ($to)"
	else
		t_fail "$1: duplicates ($dup) and out-of-sequence ($oos) only after $2 timed out ($to)"
	fi
done
if [ "$gtx" -gt 0 ] && [ "$etx" -ge "$gtx" ]; then
	t_ok "ethtool roce_tx_frames +$etx >= rdma tx_packets +$gtx"
else
	t_fail "ethtool roce_tx_frames +$etx >= rdma tx_packets +$gtx"
fi
if [ "$grx" -gt 0 ] && [ "$erx" -ge "$grx" ]; then
	t_ok "ethtool roce_rx_frames +$erx >= rdma rx_packets +$grx"
else
	t_fail "ethtool roce_rx_frames +$erx >= rdma rx_packets +$grx"
fi
# the netdev's rings carry only the tools' TCP exchanges
if [ "$nrx" -lt "$grx" ] && [ "$ntx" -lt "$gtx" ]; then
	t_ok "netdev rings did not carry the RoCE frames (rx +$nrx, tx +$ntx)"
else
	t_fail "netdev rings did not carry the RoCE frames (rx +$nrx, tx +$ntx)"
fi
tap_done
