#!/usr/bin/env bash
# wire.sh - our RoCE v2 meets rdma_rxe over a real wire (issue 32).
#
# gaudi_$DEV_A's port in $NS_A is uplinked (sim/uplink.c) to veth $UP in
# the same namespace; the veth's peer $RXE_NETIF is in the initial
# namespace with rdma_rxe on it.  Unlike interop.sh, where rxe runs on one
# of our own netdevs with RoCE steering off, every frame here leaves our
# MAC through dev_queue_xmit(), crosses the kernel's veth and reaches rxe
# through its UDP socket, and rxe's frames come back through the uplink's
# rx_handler: an implementation we did not write, through the kernel's own
# network path.  Both ways: RC SEND (ibv_rc_pingpong), WRITE, WRITE with
# immediate and READ (perftest), rping over rdma_cm, and one libgcoll
# all-reduce with a rank on each.  Counters of both ends are compared.
# Output: TAP.
here=$(dirname "$0")
DEV_A=${DEV_A:-84}
. "$here/rcm_lib.sh"
. "$here/gcoll_lib.sh"
UP=gw$DEV_A
RXE_NETIF=gwr$DEV_A
RXE=rxe_w$DEV_A
IP_A=198.18.$DEV_A.1
IP_R=198.18.$DEV_A.2
IP6_A=2001:db8:$DEV_A::1
IP6_R=2001:db8:$DEV_A::2

wire_setup() {
	gib_load || { echo "cannot load the drivers"; return 1; }
	modprobe -q rdma_rxe && modprobe -q rdma_ucm && modprobe -q veth ||
		{ echo "cannot load rdma_rxe, rdma_ucm and veth"; return 1; }
	gn_new_device "$DEV_A" 1 || return 1
	ip netns add "$NS_A" || return 1
	ns_a ip link set lo up
	ip link set "$IF_A" netns "$NS_A" || return 1
	ip link add "$RXE_NETIF" type veth peer name "$UP" netns "$NS_A" || return 1
	gn_link "$NS_A" "$IF_A" "$NS_A" "$UP" || return 1
	ns_a ip addr add "$IP_A/24" dev "$IF_A"
	ns_a ip addr add "$IP6_A/64" dev "$IF_A" nodad
	ip addr add "$IP_R/24" dev "$RXE_NETIF"
	ip addr add "$IP6_R/64" dev "$RXE_NETIF" nodad
	ns_a ip link set "$UP" up
	ip link set "$RXE_NETIF" up
	ns_a ip link set "$IF_A" up
	wait_carrier "$NS_A" "$IF_A" 1 || return 1
	rdma link add "$RXE" type rxe netdev "$RXE_NETIF" || return 1
	ib_wait_active "$IB_A" 1 && ib_wait_active "$RXE" 1 || return 1
	GID_A=$(gid_index "$IB_A" 1 "$IP_A") && GID_R=$(gid_index "$RXE" 1 "$IP_R") &&
	GID6_A=$(gid_index "$IB_A" 1 "$IP6_A") && GID6_R=$(gid_index "$RXE" 1 "$IP6_R")
}

wire_cleanup() {
	ip netns pids "$NS_A" 2>/dev/null | xargs -r kill 2>/dev/null
	sleep 0.2
	rdma link del "$RXE" 2>/dev/null
	ip link del "$RXE_NETIF" 2>/dev/null
	ip netns del "$NS_A" 2>/dev/null
	gn_del_device "$DEV_A" 2>/dev/null
	return 0
}
trap wire_cleanup EXIT
tap_env_start wire_setup
t_ok "environment: $IB_A ($IF_A in $NS_A) uplinked to $UP, whose peer $RXE_NETIF (initial namespace) carries $RXE; gids $GID_A/$GID_R, IPv6 $GID6_A/$GID6_R"

# counters of both ends: ours (rdma statistic, the MAC) and the wire's
snap() {
	local p=$1
	eval "${p}_gtx=$(ib_counter "$IB_A" 1 tx_packets) ${p}_grx=$(ib_counter "$IB_A" 1 rx_packets)"
	eval "${p}_rtx=$(ib_counter "$RXE" 1 sent_pkts) ${p}_rrx=$(ib_counter "$RXE" 1 rcvd_pkts)"
	eval "${p}_ertx=$(ethtool_stat "$NS_A" "$IF_A" roce_tx_frames) ${p}_errx=$(ethtool_stat "$NS_A" "$IF_A" roce_rx_frames)"
	eval "${p}_vrx=$(link_stat init "$RXE_NETIF" rx_packets) ${p}_vtx=$(link_stat init "$RXE_NETIF" tx_packets)"
	eval "${p}_utx=$(ethtool_stat "$NS_A" "$IF_A" mac_tx_uplink_dropped) ${p}_urx=$(ethtool_stat "$NS_A" "$IF_A" mac_rx_uplink_dropped)"
	eval "${p}_vdrop=$(( $(link_stat "$NS_A" "$UP" tx_dropped) + $(link_stat init "$RXE_NETIF" rx_dropped) ))"
}

# gaudi_srv DESC TMO ARGS...: $IB_A serves, $RXE is the client; rxe_srv:
# the reverse.  ARGS go to both ends; GIDs per $FAMILY (4 or 6).
gaudi_srv() {
	local d=$1 t=$2 ga=$GID_A gr=$GID_R addr=$IP_A
	shift 2
	[ "${FAMILY:-4}" = 6 ] && ga=$GID6_A gr=$GID6_R
	PAIR_CALIB_RETRY=${PAIR_CALIB_RETRY:-2} PAIR_NS_S=$NS_A PAIR_NS_C=init \
		pair "$d: $IB_A server, $RXE client" "$t" \
		"$@" -d "$IB_A" "${GIDOPT:--g}" "$ga" -- "$@" -d "$RXE" "${GIDOPT:--g}" "$gr" "$addr"
}
rxe_srv() {
	local d=$1 t=$2 ga=$GID_A gr=$GID_R addr=$IP_R
	shift 2
	[ "${FAMILY:-4}" = 6 ] && ga=$GID6_A gr=$GID6_R
	PAIR_CALIB_RETRY=${PAIR_CALIB_RETRY:-2} PAIR_NS_S=init PAIR_NS_C=$NS_A \
		pair "$d: $RXE server, $IB_A client" "$t" \
		"$@" -d "$RXE" "${GIDOPT:--g}" "$gr" -- "$@" -d "$IB_A" "${GIDOPT:--g}" "$ga" "$addr"
}

snap s0
gaudi_srv "RC SEND, ibv_rc_pingpong 4000 B x 20" 120 ibv_rc_pingpong -c -s 4000 -n 20
rxe_srv "RC SEND, ibv_rc_pingpong 4000 B x 20" 120 ibv_rc_pingpong -c -s 4000 -n 20
FAMILY=6 gaudi_srv "RC SEND over IPv6, ibv_rc_pingpong 1000 B x 10" 120 ibv_rc_pingpong -c -s 1000 -n 10
GIDOPT=-x gaudi_srv "RDMA WRITE, ib_write_bw 64 KiB x 100" 180 ib_write_bw -F -s 65536 -n 100
GIDOPT=-x rxe_srv "RDMA WRITE, ib_write_bw 64 KiB x 100" 180 ib_write_bw -F -s 65536 -n 100
GIDOPT=-x gaudi_srv "RDMA WRITE with immediate, ib_write_bw --write_with_imm 16 KiB x 100" 180 \
	ib_write_bw -F --write_with_imm -s 16384 -n 100
GIDOPT=-x rxe_srv "RDMA WRITE with immediate, ib_write_bw --write_with_imm 16 KiB x 100" 180 \
	ib_write_bw -F --write_with_imm -s 16384 -n 100
GIDOPT=-x gaudi_srv "RDMA READ, ib_read_bw 64 KiB x 100" 180 ib_read_bw -F -o 16 -s 65536 -n 100
GIDOPT=-x rxe_srv "RDMA READ, ib_read_bw 64 KiB x 100" 180 ib_read_bw -F -o 16 -s 65536 -n 100
snap s1

# rdma_cm: rping, each side the server once (verified data, -V)
cm_pair "rping: $IB_A server, $RXE client (rdma_cm, 20 iterations, verified)" 120 7174 \
	"$NS_A" init rping -s -a "$IP_A" -p 7174 -C 20 -V -- rping -c -a "$IP_A" -p 7174 -C 20 -V
cm_pair "rping: $RXE server, $IB_A client (rdma_cm, 20 iterations, verified)" 120 7175 \
	init "$NS_A" rping -s -a "$IP_R" -p 7175 -C 20 -V -- rping -c -a "$IP_R" -p 7175 -C 20 -V

# the counters: what one end sent, the wire carried and the other received
d() { echo $(($2 - $1)); }
gtx=$(d "$s0_gtx" "$s1_gtx") grx=$(d "$s0_grx" "$s1_grx")
rtx=$(d "$s0_rtx" "$s1_rtx") rrx=$(d "$s0_rrx" "$s1_rrx")
ertx=$(d "$s0_ertx" "$s1_ertx") vrx=$(d "$s0_vrx" "$s1_vrx")
utx=$(d "$s0_utx" "$s1_utx") vdrop=$(d "$s0_vdrop" "$s1_vdrop")
diag "packets: $IB_A sent $gtx, received $grx; $RXE sent $rtx, received $rrx; our MAC sent $ertx RoCE frames, $RXE_NETIF received $vrx frames; dropped on the way: $utx at our uplink (mac_tx_uplink_dropped), $vdrop by the veths"
# a wire under load may drop (the engines resend; the transfers above
# checked their data): every frame is delivered or counted as dropped
if [ "$gtx" -gt 0 ] && [ "$ertx" -ge "$gtx" ] && [ $((vrx + utx + vdrop)) -ge "$ertx" ]; then
	t_ok "every RoCE frame our engine sent ($ertx) crossed the veth ($vrx frames received by $RXE_NETIF) or was counted as dropped ($utx by our uplink, $vdrop by the veths)"
else
	t_fail "every RoCE frame our engine sent crossed the veth or was counted as dropped" \
		"engine $gtx, MAC $ertx, $RXE_NETIF rx $vrx, dropped: uplink $utx, veths $vdrop"
fi
if [ "$rtx" -gt 0 ] && [ "$grx" -ge "$rtx" ]; then
	t_ok "$IB_A received what $RXE sent ($grx >= $rtx packets)"
else
	t_fail "$IB_A received what $RXE sent" "$RXE sent $rtx, $IB_A received $grx"
fi
snap s2
t_expect "no frame from $RXE dropped on its way into our port (mac_rx_uplink_dropped)" "$s0_urx" "$s2_urx"

# libgcoll: one rank on rxe (host memory), one on gaudi, verbs;ofi_rxm
# (GCOLL_PROVIDER; libgcoll's default would fall back to tcp, as rxe is
# no gaudi port); each rank's libfabric sees only its own device.
# FI_UNIVERSE_SIZE=2: rxm sizes its verbs CQ for libfabric's default
# universe of 256 peers, above rxe's max_cqe (32767), and rxe refuses it
# ("Unable to create verbs CQ"); ours takes it
PORT=29870
o0=$(mktemp) o1=$(mktemp)
ns_a env RANK=0 WORLD_SIZE=2 MASTER_ADDR="$IP_A" MASTER_PORT=$PORT GCOLL_PROVIDER='verbs;ofi_rxm' FI_UNIVERSE_SIZE=2 \
	FI_VERBS_DEVICE_NAME="$IB_A" timeout 300 "$PERF" -C allreduce -b 4K -e 1M -f 4 -n 3 -w 1 -c 1 \
	>"$o0" 2>"$o0.err" &
pid=$!
env RANK=1 WORLD_SIZE=2 MASTER_ADDR="$IP_A" MASTER_PORT=$PORT GCOLL_PROVIDER='verbs;ofi_rxm' FI_UNIVERSE_SIZE=2 \
	FI_VERBS_DEVICE_NAME="$RXE" timeout 300 "$PERF" -C allreduce -b 4K -e 1M -f 4 -n 3 -w 1 -c 1 \
	>"$o1" 2>"$o1.err"
rc1=$?
wait "$pid"
rc0=$?
PERF_ERR="rank 0 (rc $rc0): $(tail -n 30 "$o0.err")
rank 1 (rc $rc1): $(tail -n 30 "$o1.err")"
s3_grx=$(ib_counter "$IB_A" 1 rx_packets)
if [ "$rc0" = 0 ] && [ "$rc1" = 0 ]; then
	perf_ok "gcoll all-reduce 4 KiB..1 MiB, rank 0 on $IB_A, rank 1 on $RXE (verbs;ofi_rxm)" "$(cat "$o0")"
else
	t_fail "gcoll all-reduce with a rank on $IB_A and one on $RXE" "$(cat "$o0")" "$PERF_ERR"
fi
rm -f "$o0" "$o0.err" "$o1" "$o1.err"
grx=$(d "$s2_grx" "$s3_grx")
if [ "$grx" -gt 100 ]; then
	t_ok "the all-reduce went over RoCE: $IB_A received $grx packets"
else
	t_fail "the all-reduce went over RoCE" "$IB_A received $grx packets"
fi

klog_clean "the wire tests"
tap_done
