#!/usr/bin/env bash
# bench_two.sh - the two-machine benchmark of issue 32 (make bench), run
# on both guests at once by tools/testenv/vm2.sh: one rank per machine,
# each on its own device uplinked to the machine's NIC (tests/multi/lib.sh),
# the wire between them a qemu socket pair.  At 4 KiB to $MAXB, RUNS
# times each, interleaved size by size:
#  * gcoll all-reduce fp32 sum, HBM to HBM, libgcoll's own provider
#    choice (verbs;ofi_rxm): busbw;
#  * ib_write_bw node 1 -> node 0 at the same size: what the wire and the
#    two devices carry one way, the all-reduce's ceiling (a 2-rank
#    all-reduce of S bytes sends S/2 + S/2 each way).
# Node 0 prints the table: medians with min and max, and the ratio.  The
# wire is lossy under load (the host's UDP socket buffers drop frames,
# and RC recovers by go-back-N), so the spread is wide; timing never
# decides pass/fail, a tool that fails to run does.  Output: TAP.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
RUNS=${RUNS:-3}
MINB=4096
MAXB=${MAXB:-16777216}
NODE_MTU=${BENCH_MTU:-9000}
NODE_HBM_MB=$((2 * MAXB / 1048576 + 64))
work=$(mktemp -d)

cleanup() { rm -rf "$work"; node_cleanup; }
trap cleanup EXIT
tap_env_start node_setup
t_ok "node $NODE: $IB's port $IF uplinked to $NIC ($MAC), $IP_ME, MTU $NODE_MTU"
barrier up || { t_fail "node $NODE: meet node $PEER over the wire"; tap_done; exit 1; }
need_test_bin gcoll-perf "$PERF"
# the wire's round trip, through both ports: what every small message waits
rtt=$(ping -c 20 -i 0.05 -q "$IP_PEER" 2>&1 | awk -F'[/ =]+' '/^rtt/ { print $7 " ms (min " $6 ", max " $8 ")" }')
diag "node $NODE: ping $IP_PEER, 20 round trips: average ${rtt:-unknown}"

# gcoll_run SIZE: one all-reduce run of SIZE bytes (1 warm-up, 5 timed);
# node 0 appends "size busbw" to $work/gcoll
gcoll_run() {
	local out
	barrier "gcoll-$1-$i"
	out=$(RANK=$NODE WORLD_SIZE=2 MASTER_ADDR=$IP_0 MASTER_PORT=$((BARRIER_PORT + 1000)) \
		timeout 600 "$PERF" -H "$DEV" -C allreduce -b "$1" -e "$1" -n 5 -w 1 -c 0 2>&1) ||
		{ GFAIL+="size $1 run $i: $(tail -n 3 <<<"$out" | tr '\n' ' ');"; return; }
	[ "$NODE" = 0 ] || return 0
	perf_busbw 2 <<<"$out" >>"$work/gcoll"
	grep -m1 '^# gcoll-perf' <<<"$out" >"$work/gcoll.head"
}

# ibw_run SIZE: one ib_write_bw run, node 1 writes to node 0; node 0 (the
# server prints the same report) appends "size GB/s" to $work/ibw
ibw_run() {
	local n
	n=$(((64 << 20) / $1)); ((n > 1000)) && n=1000; ((n < 5)) && n=5
	SC_QUIET=1 server_client "ib_write_bw $1 B" 300 tcp:18515 \
		ib_write_bw -d "$IB" -x "$GID" -F -s "$1" -n "$n" -- \
		ib_write_bw -d "$IB" -x "$GID" -F -s "$1" -n "$n" "$IP_0" ||
		{ IFAIL+="size $1 run $i: rc $SC_RC $(tail -n 3 <<<"$SC_OUT" | tr '\n' ' ');"; return; }
	[ "$NODE" = 0 ] || return 0
	bench_ibw_figure ibw "$1" 1 "$SC_OUT"
}

GFAIL='' IFAIL=''
for ((i = 0; i < RUNS; i++)); do
	for s in $(bench_sizes); do
		gcoll_run "$s"
		ibw_run "$s"
	done
	diag "node $NODE: run $((i + 1)) of $RUNS done"
done
if [ -z "$GFAIL" ]; then
	t_ok "node $NODE: gcoll all-reduce across the machines, $RUNS runs of 4 KiB to $MAXB B" \
		"$(sed 's/^# gcoll-perf allreduce: //' "$work/gcoll.head" 2>/dev/null)"
else
	t_fail "node $NODE: gcoll all-reduce across the machines" "$GFAIL"
fi
[ -z "$IFAIL" ] && t_ok "node $NODE: ib_write_bw node 1 -> node 0, $RUNS runs of every size" ||
	t_fail "node $NODE: ib_write_bw node 1 -> node 0" "$IFAIL"
if [ "$NODE" = 0 ]; then
	diag "all-reduce fp32 sum, 2 ranks on 2 machines (1 vCPU each, TCG), MTU $NODE_MTU: GB/s, median of $RUNS (min-max)"
	diag "(gcoll: busbw HBM to HBM; ib_write_bw: one way, node 1 -> node 0)"
	bench_table gcoll=gcoll-HBM ibw=ib_write_bw=g/ibw
	diag "wire: $NIC $(link_stat init "$NIC" rx_dropped) rx dropped; $IB port 1: $(ib_stats "$IB" 1)"
fi
barrier finished
tap_done
