#!/usr/bin/env bash
# lib.sh - what the two-machine tests (tests/multi, run on both guests at
# once by tools/testenv/vm2.sh) share, on top of tests/rdma/lib.sh and
# gcoll_lib.sh: this node's role and addresses, its device uplinked to the
# NIC on the wire, barriers between the nodes over the network, and a
# server on node 0 with its client on node 1.
multi_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$multi_dir/../rdma/lib.sh"
. "$multi_dir/../rdma/gcoll_lib.sh"
NODE=${GN_NODE:?set GN_NODE to 0 or 1 (tools/testenv/vm2.sh does)}
PEER=$((1 - NODE))
DEV=${DEV:-0}
IB=gaudi_$DEV
IF=gn${DEV}p0
NET=10.96.0
IP_ME=$NET.$((NODE + 1))
IP_PEER=$NET.$((PEER + 1))
IP_0=$NET.1
MAC=52:54:00:96:00:0$NODE
BARRIER_PORT=${BARRIER_PORT:-29800}
export PYTHONPATH=/build/prefix/lib/python3/dist-packages

# barrier NAME: both nodes have reached NAME (600 s at most)
barrier() {
	BARRIER_PORT=$((BARRIER_PORT + 1))
	if [ "$NODE" = 0 ]; then
		python3 "$multi_dir/barrier.py" serve "$BARRIER_PORT" "$1" 600
	else
		python3 "$multi_dir/barrier.py" join "$IP_0" "$BARRIER_PORT" "$1" 600
	fi
}
# the wire: the virtio-net NIC with this node's MAC
nic_of() {
	local f
	for f in /sys/class/net/*/address; do
		[ "$(cat "$f")" = "$1" ] && { basename "${f%/address}"; return 0; }
	done
	return 1
}

# node_setup: device $DEV with one port, uplinked to the NIC on the wire,
# $IP_ME/24 on it, at MTU $NODE_MTU (1500) and with $NODE_HBM_MB MiB of HBM
# (the driver's default if unset); sets NIC and GID
node_setup() {
	modprobe -q virtio_net
	gib_load && modprobe -q rdma_ucm || { echo "cannot load the drivers"; return 1; }
	NIC=$(nic_of "$MAC") || { echo "no NIC with MAC $MAC: $(ip -br link)"; return 1; }
	gn_new_device "$DEV" 1 ${NODE_HBM_MB:+"$NODE_HBM_MB"} || return 1
	ip link set "$NIC" mtu "${NODE_MTU:-1500}" up || return 1
	gn_link init "$IF" init "$NIC" || return 1
	ip link set "$IF" mtu "${NODE_MTU:-1500}" || return 1
	ip addr add "$IP_ME/24" dev "$IF"
	ip link set "$IF" up
	wait_carrier init "$IF" 1 30 || { echo "$IF: no carrier through $NIC"; return 1; }
	ib_wait_active "$IB" 1 || return 1
	GID=$(gid_index "$IB" 1 "$IP_ME")
}
node_cleanup() {
	pkill -f gcoll-perf 2>/dev/null
	gn_del_device "$DEV" 2>/dev/null
	return 0
}

# server_client DESC TMO LISTEN SERVER_CMD -- CLIENT_CMD: node 0 runs the
# server until it listens (LISTEN: tcp:PORT or cm:PORT), node 1 the client
server_client() {
	local d=$1 tmo=$2 listen=$3 cmd=() out rc pid
	shift 3
	out=$(mktemp)
	if [ "$NODE" = 0 ]; then
		while [ "$1" != -- ]; do cmd+=("$1"); shift; done
		timeout "$tmo" "${cmd[@]}" >"$out" 2>&1 &
		pid=$!
		case "$listen" in
		tcp:*) wait_listen init "${listen#tcp:}" "$pid" ;;
		cm:*) for ((i = 0; i < 600; i++)); do
			rdma resource show cm_id 2>/dev/null | grep 'state LISTEN' |
				grep -q ":${listen#cm:} " && break
			sleep 0.1
		      done ;;
		esac
		barrier "$d"
		wait "$pid"
		rc=$?
	else
		while [ "$1" != -- ]; do shift; done
		shift
		barrier "$d"
		timeout "$tmo" "$@" >"$out" 2>&1
		rc=$?
	fi
	SC_OUT=$(cat "$out")
	SC_RC=$rc
	rm -f "$out"
	[ -n "${SC_QUIET:-}" ] && return "$rc"
	if [ "$rc" = 0 ]; then
		t_ok "node $NODE: $d"
	else
		t_fail "node $NODE: $d (rc $rc)" "$(tail -n 15 <<<"$SC_OUT")"
	fi
}
