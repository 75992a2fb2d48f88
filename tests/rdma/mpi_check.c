// SPDX-License-Identifier: GPL-2.0
/*
 * mpi_check: what an Open MPI transport must get right between the ranks
 * of MPI_COMM_WORLD, every byte checked.
 *
 *   mpi_check [maxbytes]
 *
 *  - point to point: rank 0 sends to rank 1 and rank 1 answers, at every
 *    size from 1 B, times 4, up to maxbytes (default 4 MiB), then once
 *    more at maxbytes - 1: each transport's eager, segmented and
 *    rendezvous paths, odd lengths included.  Each message is a pattern
 *    of its size and direction; the receiver checks every byte, and that
 *    MPI_Get_count() is the size;
 *  - nonblocking both ways at once (MPI_Irecv before MPI_Isend) at
 *    maxbytes;
 *  - MPI_Allreduce of int64 (sum) and fp32 (max) at 1, 1000 and maxbytes
 *    / 8 elements, every element checked;
 *  - MPI_Bcast from the last rank, maxbytes, every byte checked.
 *
 * Rank 0 prints TAP: the plan first, then one numbered point per check
 * (tests/rdma/lib.sh's ksft_relay() carries them, and fails a run that
 * stops before its plan is done); the exit status is 1 if any rank saw
 * a failure.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, nranks, failed, npoints;

/* The byte at @i of a message of @len bytes in direction @dir. */
static uint8_t pat(size_t i, size_t len, int dir)
{
	return (uint8_t)(i * 7 + len * 13 + dir * 101 + (i >> 8));
}

/* A check every rank took part in: failed on any rank is failed. */
static void report(int ok, const char *fmt, size_t arg)
{
	int all;

	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	if (!all)
		failed = 1;
	if (rank == 0) {
		printf("%s %d - ", all ? "ok" : "not ok", ++npoints);
		printf(fmt, arg);
		printf("\n");
		fflush(stdout);
	}
}

static int check_buf(const uint8_t *b, size_t len, int dir)
{
	for (size_t i = 0; i < len; i++)
		if (b[i] != pat(i, len, dir))
			return 0;
	return 1;
}

static void fill(uint8_t *b, size_t len, int dir)
{
	for (size_t i = 0; i < len; i++)
		b[i] = pat(i, len, dir);
}

/* Rank 0 -> 1, then 1 -> 0, @len bytes each way. */
static void pingpong(uint8_t *tx, uint8_t *rx, size_t len)
{
	MPI_Status st;
	int ok = 1, cnt = -1;

	if (rank == 0) {
		fill(tx, len, 0);
		MPI_Send(tx, (int)len, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
		memset(rx, 0, len);
		MPI_Recv(rx, (int)len, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		ok = cnt == (int)len && check_buf(rx, len, 1);
	} else if (rank == 1) {
		memset(rx, 0, len);
		MPI_Recv(rx, (int)len, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &st);
		MPI_Get_count(&st, MPI_BYTE, &cnt);
		ok = cnt == (int)len && check_buf(rx, len, 0);
		fill(tx, len, 1);
		MPI_Send(tx, (int)len, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
	}
	report(ok, "send/recv rank 0 <-> 1, %zu bytes each way", len);
}

/* Both directions at once, nonblocking. */
static void exchange(uint8_t *tx, uint8_t *rx, size_t len)
{
	MPI_Request rq[2];
	int peer = rank ^ 1, ok = 1;

	if (peer < nranks) {
		fill(tx, len, rank);
		memset(rx, 0, len);
		MPI_Irecv(rx, (int)len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[0]);
		MPI_Isend(tx, (int)len, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &rq[1]);
		MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
		ok = check_buf(rx, len, peer);
	}
	report(ok, "isend/irecv both ways at once, %zu bytes", len);
}

static void allreduce(size_t n)
{
	int64_t *li = calloc(n, sizeof(*li)), *lo = calloc(n, sizeof(*lo));
	float *fi = calloc(n, sizeof(*fi)), *fo = calloc(n, sizeof(*fo));
	int64_t want;
	int ok = 1;

	if (!li || !lo || !fi || !fo) {
		fprintf(stderr, "mpi_check: rank %d: out of memory\n", rank);
		MPI_Abort(MPI_COMM_WORLD, 2);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		li[i] = (int64_t)(i + 1) * (rank + 1) + ((int64_t)1 << 40);
		fi[i] = (float)((i % 1000) + rank);
	}
	MPI_Allreduce(li, lo, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	MPI_Allreduce(fi, fo, (int)n, MPI_FLOAT, MPI_MAX, MPI_COMM_WORLD);
	for (size_t i = 0; i < n && ok; i++) {
		want = (int64_t)(i + 1) * nranks * (nranks + 1) / 2 +
		       ((int64_t)nranks << 40);
		ok = lo[i] == want && fo[i] == (float)((i % 1000) + nranks - 1);
	}
	report(ok, "allreduce int64 sum and fp32 max, %zu elements", n);
	free(li);
	free(lo);
	free(fi);
	free(fo);
}

int main(int argc, char **argv)
{
	size_t maxb = argc > 1 ? strtoull(argv[1], NULL, 0) : 4 << 20;
	uint8_t *tx, *rx;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);
	if (maxb < 2 || maxb > (size_t)1 << 30)
		maxb = 4 << 20;
	tx = malloc(maxb);
	rx = malloc(maxb);
	if (!tx || !rx || nranks < 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_check: %s\n", nranks < 2 ?
				"needs 2 ranks or more" : "out of memory");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	if (rank == 0) {
		int plan = 6;	/* maxb - 1, exchange, 3 allreduce, bcast */

		for (size_t b = 1; b <= maxb; b *= 4)
			plan++;
		printf("TAP version 13\n1..%d\n", plan);
	}
	for (size_t b = 1; b <= maxb; b *= 4)
		pingpong(tx, rx, b);
	pingpong(tx, rx, maxb - 1);
	exchange(tx, rx, maxb);
	allreduce(1);
	allreduce(1000);
	allreduce(maxb / 8);
	if (rank == nranks - 1)
		fill(tx, maxb, 9);
	else
		memset(tx, 0, maxb);
	MPI_Bcast(tx, (int)maxb, MPI_BYTE, nranks - 1, MPI_COMM_WORLD);
	report(check_buf(tx, maxb, 9), "bcast from the last rank, %zu bytes",
	       maxb);
	if (rank == 0)
		printf("# mpi_check: %d ranks, %s\n", nranks,
		       failed ? "FAILED" : "every check passed");
	free(tx);
	free(rx);
	MPI_Finalize();
	return failed;
}
