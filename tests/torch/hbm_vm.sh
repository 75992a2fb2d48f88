#!/bin/bash
# SPDX-License-Identifier: MIT
# hbm_vm.sh - torch.distributed on gcoll over our own ports, in the guest:
# gaudi_$DEV_A (port 0 in $NS_A) cabled to gaudi_$DEV_B (in $NS_B), rank r
# in the r-th namespace with torch_gcoll.empty_hbm tensors of its own
# device (tests/torch/hbm_vm.py).  No provider is forced: libgcoll picks
# verbs;ofi_rxm on the gaudi port; at its end rank 1 resets its device
# under a live HBM tensor.  Afterwards: the bytes crossed the ports, and
# the kernel log is clean.  Output: TAP.
DEV_A=60
DEV_B=61
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../rdma/lib.sh"
PORT=29617

trap rdma_env_cleanup EXIT
torch_setup() {
	modprobe -q rdma_ucm || { echo "cannot load rdma_ucm"; return 1; }
	rdma_env_setup
}
tap_env_start torch_setup
t_ok "environment: $IB_A ($IF_A in $NS_A, $IP_A) cabled to $IB_B ($IF_B in $NS_B, $IP_B)"
mark=$(dmesg | wc -l)
tx0=$(ib_counter "$IB_A" 1 tx_bytes)
rx0=$(ib_counter "$IB_A" 1 rx_bytes)

o0=$(mktemp)
o1=$(mktemp)
# rank R NS DEV IF: one rank of hbm_vm.py in namespace NS on device DEV
rank() {
	ip netns exec "$2" env RANK="$1" WORLD_SIZE=2 MASTER_ADDR="$IP_A" MASTER_PORT=$PORT \
		USE_LIBUV=0 OMP_NUM_THREADS=1 HBM_DEV="$3" GLOO_SOCKET_IFNAME="$4" \
		timeout 420 python3 "$here/hbm_vm.py"
}
rank 0 "$NS_A" "$DEV_A" "$IF_A" >"$o0" 2>&1 &
pid0=$!
rank 1 "$NS_B" "$DEV_B" "$IF_B" >"$o1" 2>&1
rc1=$?
wait "$pid0"
rc0=$?
# rank 0's TAP lines, renumbered into this script's stream
n=0
while IFS= read -r line; do
	case $line in
	"ok "*) n=$((n + 1)); t_ok "${line#ok [0-9]* - }" ;;
	"not ok "*) n=$((n + 1)); t_fail "${line#not ok [0-9]* - }" ;;
	"# "*) diag "${line#\# }" ;;
	esac
done < <(grep -E '^(ok|not ok|# )' "$o0")
if [ "$rc0" = 0 ] && [ "$rc1" = 0 ] && [ "$n" -ge 12 ]; then
	t_ok "both ranks finished ($n checks)"
else
	# where each rank was, then the start and the end of what a failed
	# rank printed (a crash report begins with its cause); t_fail keeps
	# 30 lines, and c10d's warnings about host names are left out
	noise='^(ok |not ok |progress:|1\.\.)|The hostname of the client socket cannot be retrieved'
	says() { # RANK FILE RC
		[ "$3" = 0 ] && return
		echo "rank $1 printed:"
		grep -vE "$noise" "$2" | sed -n '1,10p'
		echo "(...)"
		grep -vE "$noise" "$2" | tail -n 2
	}
	t_fail "both ranks finish" \
		"rank 0: exit status $rc0, $n checks; last: $(grep '^progress:' "$o0" | tail -n 1)" \
		"rank 1: exit status $rc1; last: $(grep '^progress:' "$o1" | tail -n 1)" \
		"$(says 0 "$o0" "$rc0")" "$(says 1 "$o1" "$rc1")"
fi
rm -f "$o0" "$o1"
# at least the 1 MiB all-reduce and the 1.2 MB send went out of port 1,
# and the all-reduce came back in
tx=$(( $(ib_counter "$IB_A" 1 tx_bytes) - tx0 ))
rx=$(( $(ib_counter "$IB_A" 1 rx_bytes) - rx0 ))
if [ "$tx" -ge $((1048576 + 1200000)) ] && [ "$rx" -ge 524288 ]; then
	t_ok "$IB_A port 1 carried the tensors (sent $tx B, received $rx B)"
else
	t_fail "$IB_A port 1 carried the tensors" "sent $tx B, received $rx B"
fi
dmesg_check "$mark"
tap_done
