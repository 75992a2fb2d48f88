#!/usr/bin/env bash
# basic.sh - gaudi_ib device, ports, GIDs and verbs objects as seen by
# ibv_devinfo, then ibv_rc_pingpong between two devices in two namespaces
# over a cable.  Output: TAP.
here=$(dirname "$0")
. "$here/lib.sh"
export GAUDI_DEBUG=1

trap rdma_env_cleanup EXIT
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($IF_A in $NS_A) cabled to $IB_B ($IF_B in $NS_B), gids $GID_A/$GID_B"

# the engines' threads: by default all on the last online CPU
# (roce_engine_cpu in sim/roce.c), -2 leaves them to the scheduler, and a
# CPU that is not online is refused with a warning
ENGINE_CPU=/sys/module/gaudi_nic_sim/parameters/roce_engine_cpu
engine_cpus() { taskset -pc "$(pgrep -x "gaudi_roce/$1")" 2>&1 | awk '{ print $NF }'; }
all_cpus=$(taskset -pc $$ | awk '{ print $NF }')
last_cpu=$(awk -F'[-,]' '{ print $NF }' /sys/devices/system/cpu/online)
if [ "$(nproc)" -ge 2 ]; then
	t_expect "engine thread of $IB_A on the last online CPU" "$last_cpu" "$(engine_cpus "$DEV_A")"
else
	t_expect "engine thread of $IB_A on any CPU (one CPU online)" "$all_cpus" "$(engine_cpus "$DEV_A")"
fi
t_expect "roce_engine_cpu defaults to -1" "-1" "$(cat "$ENGINE_CPU")"
for v in -2 99999; do
	echo "$v" > "$ENGINE_CPU"
	gn_new_device 98 1
	t_expect "roce_engine_cpu=$v: engine thread on any online CPU" "$all_cpus" "$(engine_cpus 98)"
	gn_del_device 98
done
echo -1 > "$ENGINE_CPU"
if dmesg | grep -q "roce_engine_cpu=99999 is not an online CPU"; then
	t_ok "roce_engine_cpu=99999 is refused with a warning"
else
	t_fail "roce_engine_cpu=99999 is refused with a warning" "$(dmesg | tail -n 5)"
fi

devs=$(ibv_devices 2>&1)
if grep -qw "$IB_A" <<<"$devs" && grep -qw "$IB_B" <<<"$devs"; then
	t_ok "ibv_devices lists $IB_A and $IB_B"
else
	t_fail "ibv_devices lists $IB_A and $IB_B" "$devs"
fi

info=$(ibv_devinfo -v -d "$IB_A" 2>&1)
field() { awk -v k="$1:" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' <<<"$info"; }
t_expect "devinfo transport" "InfiniBand (0)" "$(field transport)"
t_expect "devinfo fw_ver" "1.0.0" "$(field fw_ver)"
t_expect "devinfo vendor_id" "0x1da3" "$(field vendor_id)"
t_expect "devinfo phys_port_cnt" "1" "$(field phys_port_cnt)"
t_expect "devinfo max_qp_wr" "16384" "$(field max_qp_wr)"
t_expect "devinfo max_sge" "6" "$(field max_sge)"
t_expect "devinfo max_qp_rd_atom" "16" "$(field max_qp_rd_atom)"
t_expect "devinfo port state" "PORT_ACTIVE (4)" "$(field state)"
t_expect "devinfo link_layer" "Ethernet" "$(field link_layer)"
t_expect "devinfo max_mtu" "4096 (5)" "$(field max_mtu)"
t_expect "devinfo active_mtu (netdev MTU 1500)" "1024 (3)" "$(field active_mtu)"
if grep -q "GID\[ *$GID_A\]:.*::ffff:$IP_A, RoCE v2" <<<"$info"; then
	t_ok "devinfo shows RoCE v2 GID ::ffff:$IP_A"
else
	t_fail "devinfo shows RoCE v2 GID ::ffff:$IP_A" "$(grep GID <<<"$info")"
fi

# active MTU follows the netdev MTU
ns_a ip link set "$IF_A" mtu 9000 && ns_b ip link set "$IF_B" mtu 9000
info=$(ibv_devinfo -v -d "$IB_A" 2>&1)
t_expect "active_mtu follows netdev MTU 9000" "4096 (5)" "$(field active_mtu)"

# port state follows carrier
ns_b ip link set "$IF_B" down
sleep 0.5
t_expect "port down when the peer is down" "1: DOWN" "$(cat /sys/class/infiniband/$IB_A/ports/1/state)"
ns_b ip link set "$IF_B" up
wait_carrier "$NS_A" "$IF_A" 1
ib_wait_active "$IB_A" 1
t_expect "port active again" "4: ACTIVE" "$(cat /sys/class/infiniband/$IB_A/ports/1/state)"

pair "ibv_rc_pingpong $IB_A <- $IB_B (4 KiB x 100)" 120 \
	ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -n 100 -s 4096 -- \
	ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -n 100 -s 4096 "$IP_A"
diag "$PAIR_OUT_C" | tail -n 2
diag "$IB_B counters: $(ib_stats "$IB_B" 1)"
pair "ibv_rc_pingpong 64 KiB x 50, MTU 4096" 120 \
	ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -n 50 -s 65536 -m 4096 -- \
	ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -n 50 -s 65536 -m 4096 "$IP_A"
pair "ibv_rc_pingpong with events, 4 KiB, MTU 1024" 120 \
	ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -e -n 50 -s 4096 -- \
	ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -e -n 50 -s 4096 "$IP_A"
pair "ibv_rc_pingpong with events, 64 KiB, MTU 4096" 120 \
	ibv_rc_pingpong -d "$IB_A" -g "$GID_A" -e -n 50 -s 65536 -m 4096 -- \
	ibv_rc_pingpong -d "$IB_B" -g "$GID_B" -e -n 50 -s 65536 -m 4096 "$IP_A"
diag "$PAIR_OUT_C" | tail -n 2
diag "$IB_B counters: $(ib_stats "$IB_B" 1)"
st=$(ib_stats "$IB_A" 1)
if grep -q "tx_packets [1-9]" <<<"$st" && grep -q "rx_packets [1-9]" <<<"$st"; then
	t_ok "rdma statistic counts packets"
else
	t_fail "rdma statistic counts packets" "$st"
fi
tap_done
