#!/usr/bin/env bash
# bridge_lib.sh - N ranks behind two real switches (gcoll_bridge.sh,
# gcoll_bench_bridge.sh), on top of lib.sh and gcoll_lib.sh: device
# FIRST_DEV+r in namespace gb-r with 2 ports; port p of every device is
# uplinked (sim/uplink.c) to a veth whose peer is a port of the Linux
# bridge br<p> in namespace $SW_NS.  Two bridges, two rails:
#
#   rail p: subnet 10.97.p.0/24, rank r has 10.97.p.(r+1) on port p
#
# (Documentation/collectives.md, "Addressing": rail i of a rank publishes
# the i-th IPv4 address of its device, in address order, so rail i of
# every rank is on the same subnet; rdma_cm resolves each peer through
# the connected route of that subnet to the port on that bridge.)  The
# caller sets FIRST_DEV, N, HBM_MB (per device) and BRIDGE_MTU (1500:
# ports, veths and bridges alike).
SW_NS=gb-sw
ns() { echo "gb-$1"; }
addr() { echo "10.97.0.$(($1 + 1))"; }

NR=0
bridge_cleanup() {
	mesh_cleanup
	ip netns del "$SW_NS" 2>/dev/null
	return 0
}

bridge_setup() {
	local r p mtu=${BRIDGE_MTU:-1500}
	gib_load && modprobe -q rdma_ucm && modprobe -q veth && modprobe -q bridge ||
		{ echo "cannot load gaudi_ib, rdma_ucm, veth and bridge"; return 1; }
	ip netns add "$SW_NS" || return 1
	for ((p = 0; p < 2; p++)); do
		ip -n "$SW_NS" link add "br$p" mtu "$mtu" type bridge || return 1
		ip -n "$SW_NS" link set "br$p" up
	done
	NR=$N
	for ((r = 0; r < N; r++)); do
		gn_new_device "$(dev $r)" 2 "$HBM_MB" || return 1
		ip netns add "$(ns $r)" || return 1
		ip -n "$(ns $r)" link set lo up
		for ((p = 0; p < 2; p++)); do
			ip link set "gn$(dev $r)p$p" netns "$(ns $r)" || return 1
			ip -n "$(ns $r)" link add "up$p" mtu "$mtu" type veth peer name "r${r}p$p" \
				mtu "$mtu" netns "$SW_NS" || return 1
			ip -n "$SW_NS" link set "r${r}p$p" master "br$p" || return 1
			ip -n "$SW_NS" link set "r${r}p$p" up
			ip -n "$(ns $r)" link set "gn$(dev $r)p$p" mtu "$mtu" || return 1
			gn_link "$(ns $r)" "gn$(dev $r)p$p" "$(ns $r)" "up$p" || return 1
			ip -n "$(ns $r)" link set "up$p" up
			ip -n "$(ns $r)" addr add "10.97.$p.$((r + 1))/24" dev "gn$(dev $r)p$p"
			ip -n "$(ns $r)" link set "gn$(dev $r)p$p" up
		done
	done
	for ((r = 0; r < N; r++)); do
		for ((p = 0; p < 2; p++)); do
			wait_carrier "$(ns $r)" "gn$(dev $r)p$p" 1 || return 1
			ib_wait_active "gaudi_$(dev $r)" $((p + 1)) || return 1
		done
	done
}
