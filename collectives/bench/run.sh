#!/usr/bin/env bash
# bench/run.sh - gcoll_allreduce against MPI_Allreduce (Open MPI), fp32 sum,
# interleaved in one process tree (bench/vs_mpi.c), 2 and 4 ranks (4 is
# oversubscribed on a 2-core machine).  Run inside the test root:
#   tools/testenv/inroot.sh bash -c 'cd /src && collectives/bench/run.sh'
# Environment (defaults in brackets):
#   BENCH_MIN [8], BENCH_MAX [64M]   sizes, doubling (K/M suffixes work)
#   BENCH_REPS [11]                  interleaved samples per size and library
#   BENCH_SAMPLE_MS [5]              length of one sample
#   BENCH_RANKS ["2 4"]              rank counts
#   BENCH_CHECK [1]                  check both results once per size
#   BENCH_AB []                      VAR=VALUE[,...]: gcoll against gcoll with
#                                    these tunables instead of MPI (vs_mpi -B)
#   BENCH_MPI_ARGS [--mca btl self,sm]  mpirun arguments for Open MPI (its
#                                    default pml ob1 with the sm BTL; no tcp)
# Uses the release build in /build/collectives-rel (built here if missing).
# How to read the table: Documentation/collectives.md, "Benchmark".
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(cd "$here/.." && pwd)
rel=${GCOLL_REL_BUILD:-/build/collectives-rel}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -f "$rel/libgcoll.so" ]; then
	[ -f "$rel/build.ninja" ] || meson setup "$rel" "$src" --buildtype=release \
		-Dwerror=true -Dwarning_level=2 >/dev/null
fi
ninja -C "$rel" >/dev/null
mpicc -O2 -Wall -Wextra -Werror -I "$src/include" -o "$work/vs_mpi" "$here/vs_mpi.c" \
	-L "$rel" -Wl,-rpath,"$rel" -lgcoll -lm

args=(-b "${BENCH_MIN:-8}" -e "${BENCH_MAX:-64M}" -r "${BENCH_REPS:-11}" -t "${BENCH_SAMPLE_MS:-5}")
[ "${BENCH_CHECK:-1}" = 0 ] || args+=(-c)
[ -z "${BENCH_AB:-}" ] || args+=(-B "$BENCH_AB")
status=0
for n in ${BENCH_RANKS:-2 4}; do
	echo
	# shellcheck disable=SC2086
	mpirun --allow-run-as-root --oversubscribe -np "$n" --bind-to none ${BENCH_MPI_ARGS---mca btl self,sm} \
		"$work/vs_mpi" "${args[@]}" || { echo "vs_mpi with $n ranks failed"; status=1; }
done
echo
echo "(speedup = MPI median / gcoll median: > 1 means gcoll is faster; verdict: sign test"
echo " over the paired samples at 5 %, \"noise\" when the samples do not decide;"
echo " /cpy, /red: gcoll busbw as a fraction of one core's memcpy and fp32 a+b bandwidth)"
exit $status
