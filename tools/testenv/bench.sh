#!/usr/bin/env bash
# bench.sh - what 'make bench' runs, inside the test root.  Benchmarks never
# pass or fail on speed: each prints its numbers next to a peer measured in
# the same run (Open MPI, a veth pair, rdma_rxe), as a ratio.
#   host:  collectives/bench/run.sh (gcoll_allreduce vs MPI_Allreduce, interleaved
#          in one process tree: medians, spread and a sign-test verdict)
#   guest: every test of tests/bench.d/*.list, in one boot (6 GiB: 8
#          devices with 192 MiB of HBM each and 8 Open MPI ranks)
#   two guests: tests/vm2-bench.d, two machines on a wire (vm2.sh)
set -uo pipefail
cd /src
status=0
echo "# collectives: gcoll_allreduce vs Open MPI MPI_Allreduce, interleaved (root, no VM)"
collectives/bench/run.sh || status=1
echo "# torch.distributed: gcoll vs gloo vs mpi backends (root, no VM)"
python3 tests/torch/bench.py --ranks 2 --reps 3 || status=1
echo "# in the guest: tests/bench.d"
# the benchmarks take longer than the test lanes' 40-minute guard
GAUDI_NIC_VM_MEM=${GAUDI_NIC_VM_MEM:-6G} GAUDI_NIC_VM_LIMIT=${GAUDI_NIC_VM_LIMIT:-9000} \
	tools/testenv/vm.sh tests/bench.d /build/results/bench || status=1
echo "# two guests: tests/vm2-bench.d"
GAUDI_NIC_VM_LIMIT=${GAUDI_NIC_VM_LIMIT:-3000} \
	tools/testenv/vm2.sh tests/vm2-bench.d /build/results/bench-vm2 || status=1
for f in /build/results/bench/*.log /build/results/bench-vm2/node*/*.log; do
	[ -e "$f" ] || continue
	case $f in */dmesg.log) continue ;; esac
	echo "# ---- ${f#/build/results/}"
	cat "$f"
done
exit $status
