#!/usr/bin/env bash
# two_node.sh - the stack on two machines (issue 32), run on both at once
# by tools/testenv/vm2.sh: each guest has its own emulated device, whose
# port 0 is uplinked (sim/uplink.c) to the guest's virtio-net NIC; the two
# NICs are joined by a wire (a qemu socket pair).  Nothing is shared but
# that wire: node 0 serves, node 1 connects, and they meet at barriers
# over the network (barrier.py).
#
# Both nodes: ping; rping over rdma_cm (verified); ib_write_bw; a libgcoll
# all-reduce HBM to HBM, rank = node; a PyTorch DDP job launched as a
# multi-node job, torch_gcoll.run --nnodes 2 with its c10d rendezvous on
# node 0, gradients over libgcoll in HBM.  Then a failure at scale: node
# 1's rank is killed in the middle of a stream of all-reduces, and node
# 0's rank must return an error within its timeout, not hang.
#
# The same commands work on two real hosts over a real NIC:
# Documentation/cluster.md.  Output: TAP (each node its own points).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
DDP=/src/collectives/bindings/torch/examples/ddp_train.py

trap node_cleanup EXIT
tap_env_start node_setup
t_ok "node $NODE: $IB's port $IF uplinked to $NIC ($MAC), $IP_ME"
mark=$(dmesg | wc -l)
if barrier up; then
	t_ok "node $NODE: met node $PEER over the wire (barrier over TCP, through both gaudi ports)"
else
	t_fail "node $NODE: meet node $PEER over the wire"
	tap_done
	exit 1
fi
t_check "node $NODE: ping $IP_PEER" ping -c 3 -i 0.2 -W 5 "$IP_PEER"
# two boards have two serials: the same device id on two hosts must not
# give the same MAC (IPv6 would report a duplicate address) or node GUID
dup=$(dmesg | grep -E "duplicate address .* used by $(cat "/sys/class/net/$IF/address")")
t_expect "node $NODE: $IF's MAC $(cat "/sys/class/net/$IF/address") and GUID $(cat "/sys/class/infiniband/$IB/node_guid") are this machine's own (no duplicate address)" "" "$dup"

server_client "rping over rdma_cm, 50 iterations, verified" 180 cm:7190 \
	rping -s -a "$IP_0" -p 7190 -C 50 -V -- rping -c -a "$IP_0" -p 7190 -C 50 -V
server_client "ib_write_bw 64 KiB x 1000 between the machines" 300 tcp:18515 \
	ib_write_bw -d "$IB" -x "$GID" -F -s 65536 -n 1000 -- \
	ib_write_bw -d "$IB" -x "$GID" -F -s 65536 -n 1000 "$IP_0"
bw=$(bw_avg "$SC_OUT")
is_meas "$bw" && diag "ib_write_bw between the guests: $bw MiB/s (TCG, 1 vCPU each)"
diag "$IB port 1 counters: $(ib_stats "$IB" 1)"
diag "$NIC: $(ip -s -br link show "$NIC" 2>&1 | tr -s ' ') rx_dropped $(link_stat init "$NIC" rx_dropped) tx_dropped $(link_stat init "$NIC" tx_dropped)"

# libgcoll: one rank per machine, HBM to HBM, the provider libgcoll's own
# choice (every rank has a gaudi port: verbs;ofi_rxm)
barrier gcoll
out=$(RANK=$NODE WORLD_SIZE=2 MASTER_ADDR=$IP_0 MASTER_PORT=29790 \
	timeout 300 "$PERF" -H "$DEV" -C allreduce -b 4K -e 4M -f 4 -n 3 -w 1 -c 1 2>&1)
rc=$?
if [ "$NODE" = 0 ]; then
	PERF_ERR=$out
	perf_ok "node 0: gcoll all-reduce across the machines, HBM to HBM, 4 KiB to 4 MiB" "$out"
	native_ok "node 0: gcoll across the machines" "$out"
elif [ "$rc" = 0 ]; then
	t_ok "node 1: gcoll all-reduce rank 1 finished"
else
	t_fail "node 1: gcoll all-reduce rank 1 (rc $rc)" "$(tail -n 15 <<<"$out")"
fi

# PyTorch DDP as a multi-node job: torchrun's c10d rendezvous on node 0.
# is_host: node 0 hosts the rendezvous store; torchrun would otherwise
# look for the endpoint's address among the addresses of the hostname,
# which on these guests (and on many multi-homed hosts) resolves elsewhere
barrier ddp
out=$(USE_LIBUV=0 OMP_NUM_THREADS=1 timeout 600 python3 -m torch_gcoll.run \
	--nnodes 2 --nproc-per-node 1 --rdzv-backend c10d --rdzv-endpoint "$IP_0:29780" \
	--rdzv-id gn-two-node --rdzv-conf "is_host=$((1 - NODE))" --local-addr "$IP_ME" \
	"$DDP" --backend gcoll --hbm --hbm-device "$DEV" --steps 5 2>&1)
rc=$?
if [ "$rc" = 0 ] && { [ "$NODE" = 1 ] ||
   grep -qE '^backend gcoll over verbs;ofi_rxm ranks 2 steps 5 loss' <<<"$out"; }; then
	t_ok "node $NODE: DDP over gcoll, torch_gcoll.run --nnodes 2 (c10d rendezvous on node 0)"
	diag "$(grep -E '^backend' <<<"$out")"
else
	t_fail "node $NODE: DDP over gcoll, torch_gcoll.run --nnodes 2 (rc $rc)" "$(tail -n 20 <<<"$out")"
fi

# failure at scale: node 1's rank dies in the middle of all-reduces; node
# 0's must return an error of its own within 60 s (GCOLL_TIMEOUT_MS is
# 30 s, a backstop: the peer's kernel tears its connections down), not hang
barrier kill
o=$(mktemp)
RANK=$NODE WORLD_SIZE=2 MASTER_ADDR=$IP_0 MASTER_PORT=29791 GCOLL_TIMEOUT_MS=30000 \
	timeout 300 "$PERF" -H "$DEV" -C allreduce -b 4M -e 4M -n 100000 -w 0 -c 0 >"$o" 2>&1 &
pid=$!
if [ "$NODE" = 0 ]; then
	# mid-stream, not mid-bootstrap: the header comes once all are connected
	for ((i = 0; i < 1800; i++)); do
		grep -q '^# gcoll-perf' "$o" && break
		sleep 0.1
	done
	sleep 2
	barrier kill-now
	t0=$(date +%s)
	for ((i = 0; i < 600; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid"
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ "$rc" = 1 ] && [ -n "$(perf_error "$o")" ] && [ "$secs" -le 60 ]; then
		t_ok "node 0: the other machine's rank killed mid all-reduce: ours returned an error after $secs s ($(perf_error "$o"))"
	else
		t_fail "node 0: the other machine's rank killed mid all-reduce: ours returns an error, with its reason, within 60 s" \
			"rc $rc after $secs s" "$(tail -n 20 "$o")"
	fi
else
	barrier kill-now
	if kill -0 "$pid" 2>/dev/null; then
		pkill -KILL -f "gcoll-perf -H $DEV " 2>/dev/null
		wait "$pid" 2>/dev/null
		t_ok "node 1: our rank killed (SIGKILL) in the middle of its all-reduces"
	else
		wait "$pid"
		t_fail "node 1: the rank to kill ended early (rc $?)" "$(tail -n 10 "$o")"
	fi
fi
rm -f "$o"
barrier done
dmesg_check "$mark"
tap_done
