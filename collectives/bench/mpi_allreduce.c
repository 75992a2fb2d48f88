/* SPDX-License-Identifier: MIT */
/* Tiny MPI_Allreduce benchmark (fp32 sum), the peer gcoll-perf is compared
 * with.  Usage: mpi_allreduce MINBYTES MAXBYTES
 * Prints: size_bytes time_us busbw_GBps (rank 0, max time over ranks). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	size_t minb = argc > 1 ? strtoull(argv[1], NULL, 0) : 8;
	size_t maxb = argc > 2 ? strtoull(argv[2], NULL, 0) : 64u << 20;
	int rank, n;
	float *a, *b;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	a = malloc(maxb);
	b = malloc(maxb);
	memset(a, 0, maxb);
	memset(b, 0, maxb);
	for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
		int count = (int)(bytes / sizeof(float));
		int iters = bytes <= (64 << 10) ? 1000 : 20, warm = bytes <= (64 << 10) ? 100 : 3;
		double t0, t, tmax;

		for (int i = 0; i < warm; i++)
			MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(a, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		t = (MPI_Wtime() - t0) / iters;
		MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0)
			printf("%zu %.2f %.3f\n", bytes, tmax * 1e6,
			       (double)bytes / tmax / 1e9 * 2.0 * (n - 1) / n);
	}
	free(a);
	free(b);
	MPI_Finalize();
	return 0;
}
