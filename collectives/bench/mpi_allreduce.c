/* SPDX-License-Identifier: MIT */
/*
 * mpi_allreduce: MPI_Allreduce (fp32 sum) timed the way gcoll-perf times
 * gcoll_allreduce, for tests/rdma/gcoll_bench.sh's Open MPI column.
 *
 *   mpi_allreduce [minbytes [maxbytes [factor [iters [warmup]]]]]
 *
 * For each size (minbytes, times factor, up to maxbytes): warmup untimed
 * all-reduces, a barrier, then iters timed ones; the time is the slowest
 * rank's mean.  Rank 0 prints "bytes time_us algbw_GBps busbw_GBps" per
 * size, busbw = algbw * 2(n-1)/n as in gcoll-perf and nccl-tests, and
 * checks the first and last elements (every rank contributes rank+1).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	size_t minb = argc > 1 ? strtoull(argv[1], NULL, 0) : 4096;
	size_t maxb = argc > 2 ? strtoull(argv[2], NULL, 0) : 1 << 24;
	size_t f = argc > 3 ? strtoull(argv[3], NULL, 0) : 4;
	int iters = argc > 4 ? atoi(argv[4]) : 5, warm = argc > 5 ? atoi(argv[5]) : 1;
	int rank, n, bad = 0;
	float *in, *out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (f < 2)
		f = 2;
	if (iters < 1)
		iters = 1;
	in = malloc(maxb);
	out = malloc(maxb);
	if (!in || !out)
		MPI_Abort(MPI_COMM_WORLD, 2);
	for (size_t i = 0; i < maxb / sizeof(float); i++)
		in[i] = (float)(rank + 1);
	if (rank == 0)
		printf("# mpi_allreduce: %d ranks, fp32 sum, %d iterations, %d warmup\n"
		       "# bytes time_us algbw_GBps busbw_GBps\n", n, iters, warm);
	for (size_t b = minb; b <= maxb && b >= sizeof(float); b *= f) {
		int cnt = (int)(b / sizeof(float));
		double t0, t, tmax;

		for (int i = 0; i < warm; i++)
			MPI_Allreduce(in, out, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(in, out, cnt, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		t = (MPI_Wtime() - t0) / iters;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (out[0] != (float)n * (n + 1) / 2 || out[cnt - 1] != (float)n * (n + 1) / 2)
			bad++;
		if (rank == 0) {
			double alg = (double)b / tmax / 1e9;

			printf("%zu %.1f %.4f %.4f\n", b, tmax * 1e6, alg,
			       alg * 2.0 * (n - 1) / n);
			fflush(stdout);
		}
	}
	if (bad)
		fprintf(stderr, "mpi_allreduce: rank %d: %d sizes with a wrong sum\n", rank, bad);
	free(in);
	free(out);
	MPI_Finalize();
	return bad ? 1 : 0;
}
