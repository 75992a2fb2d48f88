#!/usr/bin/env bash
# loopback.sh - both ends of RC connections on one port: the engine takes
# frames addressed to the port's own MAC back itself (roce_hw.h,
# "Loopback"), through its usual receive path, and the cable carries none
# of them.  ibv_rc_pingpong (SEND) over IPv4 and IPv6, perftest WRITE and
# READ over IPv4, with the peer's counters as the witness.  Output: TAP.
here=$(dirname "$0")
. "$here/lib.sh"

IP6_A=2001:db8:77::1
trap rdma_env_cleanup EXIT
dmesg_mark=$(dmesg | wc -l)
tap_env_start rdma_env_setup
t_ok "environment: $IB_A ($IF_A in $NS_A) cabled to $IB_B ($IF_B in $NS_B)"
ns_a ip addr add "$IP6_A/64" dev "$IF_A" nodad
GID6_A=$(gid_index "$IB_A" 1 "$IP6_A") || t_fail "IPv6 GID of $IB_A" "no GID for $IP6_A"

# one_port DESC TIMEOUT CMD ARGS...: server and client of CMD both on
# $IB_A in $NS_A; the client connects to the server's address (last arg)
one_port() {
	PAIR_NS_S=$NS_A PAIR_NS_C=$NS_A pair "$@"
}

for fam in 4 6; do
	# the tools exchange QP numbers over TCP on IPv4; the GID picks RoCE
	addr=$IP_A
	if [ $fam = 4 ]; then gid=$GID_A; else gid=$GID6_A; fi
	[ -n "$gid" ] || continue
	loop0=$(ib_counter "$IB_A" 1 loopback_packets)
	peer0=$(ib_counter "$IB_B" 1 rx_packets)
	one_port "IPv$fam: ibv_rc_pingpong, client and server on $IB_A" 60 \
		ibv_rc_pingpong -d "$IB_A" -g "$gid" -n 200 -s 4096 -m 1024 -c -- \
		ibv_rc_pingpong -d "$IB_A" -g "$gid" -n 200 -s 4096 -m 1024 -c "$addr"
	# WRITE and READ once (IPv4): the path is the same for both families
	if [ $fam = 4 ]; then
		one_port "IPv$fam: ib_write_bw, client and server on $IB_A" 120 \
			ib_write_bw -d "$IB_A" -x "$gid" -s 65536 -n 200 -F -- \
			ib_write_bw -d "$IB_A" -x "$gid" -s 65536 -n 200 -F "$addr"
		one_port "IPv$fam: ib_read_bw, client and server on $IB_A" 120 \
			ib_read_bw -d "$IB_A" -x "$gid" -s 65536 -n 200 -F -- \
			ib_read_bw -d "$IB_A" -x "$gid" -s 65536 -n 200 -F "$addr"
	fi
	loop1=$(ib_counter "$IB_A" 1 loopback_packets)
	peer1=$(ib_counter "$IB_B" 1 rx_packets)
	# 200 round trips of 4 KiB alone are 800+ frames each way
	if [ $((loop1 - loop0)) -ge 1600 ]; then
		t_ok "IPv$fam: $((loop1 - loop0)) frames looped back on $IB_A"
	else
		t_fail "IPv$fam: frames looped back on $IB_A" "loopback_packets $loop0 -> $loop1"
	fi
	t_expect "IPv$fam: the cable's peer $IB_B received none of them" 0 $((peer1 - peer0))
done
dmesg_check "$dmesg_mark"
tap_done
