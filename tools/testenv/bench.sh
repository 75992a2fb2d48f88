#!/usr/bin/env bash
# bench.sh - what 'make bench' runs, inside the test root.  Benchmarks never
# pass or fail on speed: each prints its numbers next to a peer measured in
# the same run (Open MPI, a veth pair, rdma_rxe), as a ratio.
#   host:  collectives/bench/run.sh (gcoll_allreduce vs MPI_Allreduce, interleaved
#          in one process tree: medians, spread and a sign-test verdict)
#   guest: every test of tests/bench.d/*.list, in one boot
set -uo pipefail
cd /src
status=0
echo "# collectives: gcoll_allreduce vs Open MPI MPI_Allreduce, interleaved (root, no VM)"
collectives/bench/run.sh || status=1
echo "# torch.distributed: gcoll vs gloo vs mpi backends (root, no VM)"
python3 tests/torch/bench.py --ranks 2 --reps 3 || status=1
echo "# in the guest: tests/bench.d"
tools/testenv/vm.sh tests/bench.d /build/results/bench || status=1
for f in /build/results/bench/*.log; do
	[ -e "$f" ] || continue
	echo "# ---- $(basename "$f" .log)"
	cat "$f"
done
exit $status
