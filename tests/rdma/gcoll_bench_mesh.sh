#!/usr/bin/env bash
# gcoll_bench_mesh.sh - the 4-rank benchmark of issue 16 (make bench): the
# same columns as gcoll_bench.sh, at 4 ranks, each on its own device in its
# own namespace, every pair of devices joined by a cable (gcoll_lib.sh's
# full mesh, the topology of gcoll_mesh.sh).  All-reduce fp32 sum, busbw at
# 4 KiB to $MAXB, the median of RUNS runs with min and max, for:
#  * gcoll over verbs;ofi_rxm, buffers in HBM registered with FI_MR_DMABUF;
#  * gcoll over libfabric's tcp provider on the same ports and HBM;
#  * Open MPI (btl tcp,self) with each rank in its namespace, so that its
#    traffic crosses the cables too;
#  * ib_write_bw over one cable (rank 1's device to rank 0's), one way and
#    both ways at once (-b, one direction's share): what one link does.
# A ring all-reduce keeps every device sending on one cable and receiving
# on another at once, so the one-way figure is its ceiling per link.
# Timing never decides pass/fail; a tool that fails to run does.  Output:
# TAP.
here=$(dirname "$0")
. "$here/lib.sh"
. "$here/gcoll_lib.sh"
FIRST_DEV=${FIRST_DEV:-72}
PORT=29800
N=4
RUNS=${RUNS:-3}
MINB=4096
MAXB=${MAXB:-16777216}
PERFN_TIMEOUT=${PERFN_TIMEOUT:-900}
# jumbo frames, as gcoll_bench.sh (which says why)
MESH_MTU=${BENCH_MTU:-9000}
work=$(mktemp -d)

NR=0
cleanup() { rm -rf "$work"; mesh_cleanup; }
trap cleanup EXIT
tap_start
gib_load && modprobe -q rdma_ucm || { t_fail "load gaudi_ib and rdma_ucm"; tap_done; exit 1; }
need_test_bin gcoll-perf "$PERF"
NR=$N	# mesh_setup runs in a subshell: the cleanup needs the count here
if ! out=$(mesh_setup "$N" 2>&1); then
	t_fail "$N devices with $((N - 1)) ports each, cabled in a full mesh" "$out"
	tap_done
	exit 1
fi
t_ok "$N devices with $((N - 1)) ports each, cabled in a full mesh, one address per rank, MTU $MESH_MTU"

# tx_sum: bytes sent by rank 0's ports (the glob is expanded in its namespace)
tx_sum() {
	ip netns exec "$(ns 0)" sh -c "cat /sys/class/net/gn$(dev 0)p*/statistics/tx_bytes" |
		awk '{ t += $1 } END { print t + 0 }'
}

# mpi: Open MPI's all-reduce with mpirun in rank 0's namespace and rank r
# moved into gm-r (gcoll_bench.sh's mpi() says why so); its traffic must
# leave rank 0's device through its ports
mpi() {
	local r s tx0 tx1 want=0 nsenv=()
	for ((r = 0; r < N; r++)); do
		nsenv+=("MPI_NETNS_$r=$([ "$r" = 0 ] || ns $r)")
	done
	tx0=$(tx_sum)
	bench_mpi mpi "$(ns 0)" 10.99.0.0/24 "${nsenv[@]}" || return
	tx1=$(tx_sum)
	# 1 warm-up + 5 timed all-reduces per size and run: rank 0 sends at
	# least (n-1)/n of every buffer, whatever the algorithm
	for s in $(bench_sizes); do want=$((want + s * 3 * 6 * RUNS / 4)); done
	if [ -s "$work/mpi" ] && ! grep -q 'wrong sum' "$work/mpi.err" && [ $((tx1 - tx0)) -ge "$want" ]; then
		t_ok "Open MPI $(mpirun --allow-run-as-root --version 2>/dev/null | head -1 | grep -o '[0-9.]*$') on $N namespaces: rank 0's ports sent $((tx1 - tx0)) bytes (at least $want)"
	else
		t_fail "Open MPI across the mesh" "rank 0's ports sent $((tx1 - tx0)) bytes (want $want)" \
			"$(tail -n 20 "$work/mpi.err")"
	fi
}

bench_gcolln verbs-hbm
PERFN_TCP=1 bench_gcolln tcp-hbm
mpi
# rank 1's device to rank 0's over the cable between them
g0=$(gid_index "gaudi_$(dev 0)" $(($(port_to 0 1) + 1)) "$(addr 0)")
g1=$(gid_index "gaudi_$(dev 1)" $(($(port_to 1 0) + 1)) "$(addr 1)")
link=("$(ns 0)" "gaudi_$(dev 0)" $(($(port_to 0 1) + 1)) "$g0"
      "$(ns 1)" "gaudi_$(dev 1)" $(($(port_to 1 0) + 1)) "$g1" "$(addr 0)")
bench_ibw ibw "${link[@]}"
bench_ibw ibw-bidi "${link[@]}" -b

bench_ceiling "$N"
diag "all-reduce fp32 sum, $N ranks on a full mesh, MTU $MESH_MTU: busbw GB/s, median of $RUNS (min-max)"
diag "(ib_write_bw over one cable; -b: one direction's share while both write)"
bench_table verbs-hbm=verbs-HBM tcp-hbm=tcp-HBM=v/tcp "mpi=Open MPI tcp=v/MPI" \
	ibw=ib_write_bw=v/ibw "ibw-bidi=ib_write_bw -b=v/bidi"
bench_goals
tap_done
