#!/usr/bin/env bash
# rcm_lib.sh - environment of the rdma_cm, libfabric and pyverbs tests
# (rdmacm.sh, libfabric.sh, pyverbs.sh, rdmacm_bench.sh), on top of lib.sh.
#
# RCM_DEV selects the device under test:
#   gaudi (default): gaudi_$DEV_A in $NS_A cabled to gaudi_$DEV_B in $NS_B
#     (lib.sh's rdma_env_setup), plus IPv6 addresses $IP6_A/$IP6_B.  "Cable"
#     runs put the server in $NS_A and the client in $NS_B; "loopback" runs
#     put both on $IB_A's one port in $NS_A.
#   rxe: rdma_rxe on one end of a veth pair in the initial namespace (6.12's
#     rxe listens only there, and it refuses RC between two local netdevs):
#     loopback runs only; the cable runs are skipped.  This is the reference
#     the scripts were written against, and the peer of the benchmark.
# Addresses, devices and namespaces are parameters (DEV_A, DEV_B, IP_A,
# IP_B, IP6_A, IP6_B), so that one script serves both.
here_rcm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here_rcm/lib.sh"

RCM_DEV=${RCM_DEV:-gaudi}
IP6_A=${IP6_A:-2001:db8:$DEV_A::1}
IP6_B=${IP6_B:-2001:db8:$DEV_A::2}
RXE_IF=${RXE_IF:-rcmv$DEV_A}
CABLE=1

rxe_setup() {
	modprobe -q rdma_rxe || { echo "cannot load rdma_rxe"; return 1; }
	modprobe -q rdma_ucm
	ip link add "$RXE_IF" type veth peer name "${RXE_IF}p" || return 1
	ip addr add "$IP_A/24" dev "$RXE_IF"
	ip addr add "$IP6_A/64" dev "$RXE_IF" nodad
	ip link set "${RXE_IF}p" up && ip link set "$RXE_IF" up || return 1
	rdma link add "$IB_A" type rxe netdev "$RXE_IF" || return 1
	ib_wait_active "$IB_A" 1 || return 1
	GID_A=$(gid_index "$IB_A" 1 "$IP_A") && GID6_A=$(gid_index "$IB_A" 1 "$IP6_A")
}

rcm_setup() {
	if [ "$RCM_DEV" = rxe ]; then
		rxe_setup
		return
	fi
	modprobe -q rdma_ucm && modprobe -q ib_cm || { echo "cannot load rdma_ucm"; return 1; }
	rdma_env_setup || return 1
	ns_a ip addr add "$IP6_A/64" dev "$IF_A" nodad
	ns_b ip addr add "$IP6_B/64" dev "$IF_B" nodad
	GID6_A=$(gid_index "$IB_A" 1 "$IP6_A") && GID6_B=$(gid_index "$IB_B" 1 "$IP6_B")
}

rcm_cleanup() {
	if [ "$RCM_DEV" = rxe ]; then
		rdma link del "$IB_A" 2>/dev/null
		ip link del "$RXE_IF" 2>/dev/null
		return 0
	fi
	rdma_env_cleanup
}

if [ "$RCM_DEV" = rxe ]; then
	IB_A=rxe_rcm$DEV_A
	IF_A=$RXE_IF
	NS_A=init
	NS_B=init
	IB_B=
	CABLE=0
fi

# ---- kernel log: klog_clean DESC after each round (tests/lib/klog.sh)
klog_mark

# ---- rdma_cm
# cm_wait_listen PORT: until an rdma_cm id listens on PORT (rdma resource
# lists cm_ids of every namespace); at most 60 s (a perftest server took
# over 10 s to start under TCG on a loaded host)
cm_wait_listen() {
	local i
	for ((i = 0; i < 600; i++)); do
		rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1 " && return 0
		sleep 0.1
	done
	return 1
}

# cm_pair DESC TMO PORT NS_S NS_C SERVER_CMD... -- CLIENT_CMD...: the server
# in NS_S, once it listens on PORT (an rdma_cm port, or a TCP one when
# PORT is tcp:N), the client in NS_C; ok if both exit 0.  CM_OUT_S,
# CM_OUT_C: their output; CM_SECS: the client's wall time (s).
# CM_REJECT_RETRY=N runs the pair again, up to N times, when the client
# was rejected.  Only for perftest -R: its server listens a second time,
# for the test QPs, after the parameter exchange, and its client may
# connect before that listen (a reject, "invalid service ID"); perftest
# 25.01 then retries, but its retry crashes (fixed upstream by perftest
# commit 3d9d8d0, "Fix crashes and logical flaws in RDMA CM connection
# retry", December 2025).
cm_pair() {
	local desc=$1 tmo=$2 port=$3 ns_s=$4 ns_c=$5 srv=() cli=() out rc_s rc_c t0 spid i
	shift 5
	while [ $# -gt 0 ] && [ "$1" != -- ]; do srv+=("$1"); shift; done
	shift
	cli=("$@")
	out=$(mktemp)
	in_ns "$ns_s" timeout "$tmo" "${srv[@]}" >"$out.s" 2>&1 &
	spid=$!
	if [[ $port == tcp:* ]]; then
		wait_listen "$ns_s" "${port#tcp:}"
	elif ! cm_wait_listen "$port"; then
		echo "cm_pair: the server did not listen on $port within 60 s" >"$out.c"
	fi
	t0=$(date +%s.%N)
	if [ -s "$out.c" ]; then
		rc_c=1	# no client without a server: it would only be rejected
	else
		in_ns "$ns_c" timeout "$tmo" "${cli[@]}" >"$out.c" 2>&1
		rc_c=$?
	fi
	CM_SECS=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	# a server that is still up once its client is done has missed
	# something: give it 30 s (5 s if the client failed), then end it
	local n=300
	[ "$rc_c" = 0 ] || n=50
	for ((i = 0; i < n; i++)); do
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.1
	done
	# $spid is the shell around `timeout SERVER`: end the server too, or
	# it keeps its port and the next pair's server cannot bind
	pkill -TERM -P "$spid" 2>/dev/null
	kill "$spid" 2>/dev/null
	wait "$spid"
	rc_s=$?
	CM_OUT_S=$(cat "$out.s") CM_OUT_C=$(cat "$out.c")
	rm -f "$out" "$out.s" "$out.c"
	if [ "$rc_c" != 0 ] && rerun_wanted CM_REJECT_RETRY RDMA_CM_EVENT_REJECTED "$CM_OUT_C" \
			"$desc" "the client was rejected (perftest's race, see CM_REJECT_RETRY)"; then
		cm_pair "$desc" "$tmo" "$port" "$ns_s" "$ns_c" "${srv[@]}" -- "${cli[@]}"
		return
	fi
	if [ "$rc_s" = 0 ] && [ "$rc_c" = 0 ]; then
		t_ok "$desc (${CM_SECS} s)"
	else
		t_fail "$desc" "server rc=$rc_s:" "$(tail -n 12 <<<"$CM_OUT_S")" \
			"client rc=$rc_c:" "$(tail -n 12 <<<"$CM_OUT_C")"
		return 1
	fi
}

# topologies: "cable" (server on A in NS_A, client on B in NS_B) and
# "loop" (both on A in NS_A); FAM 4 or 6.  topo_set TOPO FAM sets SRV_NS,
# CLI_NS, SRV_IP (the address the client connects to) and CLI_IP.
topo_set() {
	SRV_NS=$NS_A
	if [ "$2" = 6 ]; then SRV_IP=$IP6_A; else SRV_IP=$IP_A; fi
	if [ "$1" = cable ]; then
		CLI_NS=$NS_B
		if [ "$2" = 6 ]; then CLI_IP=$IP6_B; else CLI_IP=$IP_B; fi
	else
		CLI_NS=$NS_A CLI_IP=$SRV_IP
	fi
}
