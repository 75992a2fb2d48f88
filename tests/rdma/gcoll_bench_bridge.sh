#!/usr/bin/env bash
# gcoll_bench_bridge.sh - the 8-rank benchmark of issue 32 (make bench):
# the topology of gcoll_bridge.sh (bridge_lib.sh: 8 devices, port p of
# each uplinked through a veth to the Linux bridge br<p>), one rail (br0),
# jumbo frames on ports, veths and bridges alike.  All-reduce fp32 sum,
# busbw at 4 KiB to $MAXB, the median of RUNS runs with min and max, for:
#  * gcoll over verbs;ofi_rxm, buffers in HBM registered with FI_MR_DMABUF;
#  * Open MPI with pml cm and mtl ofi over the same verbs;ofi_rxm on the
#    same ports (each rank on port 1 of its own device: FI_VERBS_DEVICE_NAME
#    and FI_VERBS_IFACE), host buffers: the fair peer, same wire and
#    provider, its own algorithms;
#  * ib_write_bw through br0, rank 1's device to rank 0's, one way: what
#    one port does through the switch, the ceiling of a ring all-reduce's
#    busbw, where every device sends on its port while it receives.
# Timing never decides pass/fail; a tool that fails to run, or Open MPI's
# bytes not crossing the ports, does.  Output: TAP.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/gcoll_lib.sh"
FIRST_DEV=${FIRST_DEV:-88}
N=${BRIDGE_RANKS:-8}
PORT=29600
RUNS=${RUNS:-3}
MINB=4096
MAXB=${MAXB:-67108864}
PERFN_TIMEOUT=${PERFN_TIMEOUT:-1800}
# gcoll-perf's send and receive buffers of MAXB, and room for the rest
HBM_MB=$((2 * MAXB / 1048576 + 64))
BRIDGE_MTU=${BENCH_MTU:-9000}
. "$here/bridge_lib.sh"
work=$(mktemp -d)

cleanup() { rm -rf "$work"; bridge_cleanup; }
trap cleanup EXIT
tap_env_start bridge_setup
t_ok "$N devices through bridge br0 (and br1, idle here), MTU $BRIDGE_MTU, $HBM_MB MiB of HBM each"
need_test_bin gcoll-perf "$PERF"
mark=$(dmesg | wc -l)

# mpi_ofi: Open MPI's all-reduce, mpirun in rank 0's namespace, rank r
# moved into gb-r on port 1 of its own device; its bytes must leave rank
# 0's device through that port
mpi_ofi() {
	local r s tx0 tx1 want=0 envs=()
	for ((r = 0; r < N; r++)); do
		envs+=("MPI_NETNS_$r=$([ "$r" = 0 ] || ns $r)"
		       "MPI_ENV_$r=FI_VERBS_DEVICE_NAME=gaudi_$(dev $r) FI_VERBS_IFACE=gn$(dev $r)p0")
	done
	tx0=$(ib_counter "gaudi_$(dev 0)" 1 tx_bytes)
	bench_mpi mpi-ofi "$(ns 0)" ofi "${envs[@]}" || return
	tx1=$(ib_counter "gaudi_$(dev 0)" 1 tx_bytes)
	# 1 warm-up + 5 timed all-reduces per size and run: rank 0 sends at
	# least (N-1)/N of every buffer, whatever the algorithm
	for s in $(bench_sizes); do want=$((want + s * (N - 1) / N * 6 * RUNS)); done
	if [ -s "$work/mpi-ofi" ] && ! grep -q 'wrong sum\|exit status' "$work/mpi-ofi.err" &&
	   [ $((tx1 - tx0)) -ge "$want" ]; then
		t_ok "Open MPI $(mpirun --allow-run-as-root --version 2>/dev/null | head -1 | grep -o '[0-9.]*$'), pml cm + mtl ofi (verbs;ofi_rxm), $N ranks: gaudi_$(dev 0) port 1 sent $((tx1 - tx0)) bytes (at least $want)"
	else
		t_fail "Open MPI pml cm + mtl ofi on $N ranks through br0" \
			"gaudi_$(dev 0) port 1 sent $((tx1 - tx0)) bytes (want $want)" \
			"$(tail -n 20 "$work/mpi-ofi.err")"
	fi
}

bench_gcolln verbs-hbm
mpi_ofi
# rank 1's device to rank 0's, port 1 of each, through br0
g0=$(gid_index "gaudi_$(dev 0)" 1 "$(addr 0)")
g1=$(gid_index "gaudi_$(dev 1)" 1 "$(addr 1)")
bench_ibw ibw "$(ns 0)" "gaudi_$(dev 0)" 1 "$g0" "$(ns 1)" "gaudi_$(dev 1)" 1 "$g1" "$(addr 0)"

bench_ceiling "$N"
diag "all-reduce fp32 sum, $N ranks through a Linux bridge, MTU $BRIDGE_MTU: busbw GB/s, median of $RUNS (min-max)"
diag "(ib_write_bw: one port's one-way rate through br0, rank 1 -> rank 0)"
bench_table verbs-hbm=gcoll-HBM "mpi-ofi=Open MPI ofi=g/MPIofi" ibw=ib_write_bw=g/ibw
dmesg_check "$mark"
tap_done
