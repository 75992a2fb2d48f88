/* SPDX-License-Identifier: MIT */
/*
 * vs_mpi: gcoll_allreduce against MPI_Allreduce (fp32 sum) in one process
 * tree, interleaved.  Launched by mpirun; every rank runs both libraries on
 * the same buffers.  For each size the two are timed in alternating samples
 * (gcoll, MPI, MPI, gcoll, gcoll, ...), so a swing of the machine's load
 * hits both, and each sample is the mean time of enough iterations to last
 * about -t milliseconds, the slowest rank's.
 *
 *   vs_mpi [-b minbytes] [-e maxbytes] [-r samples] [-t sample_ms] [-W warmup_s] [-c]
 *          [-B VAR=VALUE[,VAR=VALUE...]]
 *
 * -B compares gcoll with gcoll instead of MPI: the second library becomes
 * a communicator split off after setting the given GCOLL_* variables (a
 * split reads the environment again), for A/B tests of tunables under the
 * same load.  Split communicators have no shared-memory fast path.
 *
 * Rank 0 prints one line per size: median time and relative interquartile
 * range of each, the speedup (MPI median / gcoll median; > 1: gcoll is
 * faster), how many of the paired samples gcoll won, the verdict of a
 * two-sided sign test at 5 % ("faster", "slower", or "noise"), gcoll's
 * busbw and that busbw as a fraction of this machine's memcpy and fp32
 * sum-reduction bandwidth (measured once at the start, one core).
 * See Documentation/collectives.md, "Benchmark".
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gcoll.h"

#define MAXS 64

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static size_t parse_size(const char *s)
{
	char *e;
	double v = strtod(s, &e);

	if (*e == 'K' || *e == 'k')
		v *= 1024;
	else if (*e == 'M' || *e == 'm')
		v *= 1024 * 1024;
	else if (*e == 'G' || *e == 'g')
		v *= 1024.0 * 1024 * 1024;
	return (size_t)v;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* quantile q of sorted v[0..n) (linear interpolation) */
static double quant(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? v[i] + (v[i + 1] - v[i]) * (pos - i) : v[n - 1];
}

/* two-sided sign test: P(a split at least as uneven as k of n | p = 1/2) */
static double sign_p(int k, int n)
{
	int lo = k < n - k ? k : n - k;
	double p = 0, c = 1;

	for (int i = 0; i <= n; i++) {
		if (i <= lo)
			p += c;
		c = c * (n - i) / (i + 1);
	}
	p = 2 * p / pow(2, n);
	return p > 1 ? 1 : p;
}

static void __attribute__((optimize("O3"))) add_f32(float *restrict d, const float *restrict a,
						    const float *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = a[i] + b[i];
}

/* This machine's limits on one core, GB/s of output: memcpy, and
 * d = a + b in fp32 (what a reduction step does), on buffers larger than
 * the caches; best of 5. */
static void limits(size_t bytes, double *cpy, double *red)
{
	float *a = malloc(bytes), *b = malloc(bytes), *d = malloc(bytes);
	size_t n = bytes / sizeof(float);

	*cpy = *red = 0;
	if (!a || !b || !d)
		goto out;
	memset(a, 1, bytes);
	memset(b, 1, bytes);
	memset(d, 0, bytes);
	for (int r = 0; r < 5; r++) {
		double t0 = now(), t;

		memcpy(d, a, bytes);
		t = now() - t0;
		if (bytes / t / 1e9 > *cpy)
			*cpy = bytes / t / 1e9;
		t0 = now();
		add_f32(d, a, b, n);
		t = now() - t0;
		if (bytes / t / 1e9 > *red)
			*red = bytes / t / 1e9;
	}
out:
	free(a);
	free(b);
	free(d);
}

static gcoll_comm_t gc, gcb;   /* gcb: -B's communicator */
static float *sb, *rb;

static int run_g(size_t count, int iters)
{
	for (int i = 0; i < iters; i++) {
		gcoll_result_t rc = gcoll_allreduce(sb, rb, count, GCOLL_FLOAT32, GCOLL_SUM, gc, NULL);

		if (rc) {
			fprintf(stderr, "gcoll_allreduce of %zu floats: %s (%s)\n", count,
				gcoll_get_error_string(rc), gcoll_get_last_error());
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	return 0;
}

static void run_m(size_t count, int iters)
{
	if (gcb) {
		gcoll_comm_t a = gc;

		gc = gcb;
		run_g(count, iters);
		gc = a;
		return;
	}
	for (int i = 0; i < iters; i++)
		MPI_Allreduce(sb, rb, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* one sample: the slowest rank's mean time per iteration, in seconds */
static double sample(int lib, size_t count, int iters)
{
	double t0, t, tmax;

	MPI_Barrier(MPI_COMM_WORLD);
	t0 = now();
	if (lib)
		run_m(count, iters);
	else
		run_g(count, iters);
	t = (now() - t0) / iters;
	MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return tmax;
}

/* both results right for inputs rank-dependent small integers */
static long long check(int rank, int n, size_t count)
{
	long long bad = 0, all = 0;

	for (int lib = 0; lib < 2; lib++) {
		for (size_t i = 0; i < count; i++)
			sb[i] = (float)((i + (size_t)rank * 3) % 5);
		memset(rb, 0, count * sizeof(float));
		if (lib)
			run_m(count, 1);
		else
			run_g(count, 1);
		for (size_t i = 0; i < count; i++) {
			float want = 0;

			for (int r = 0; r < n; r++)
				want += (float)((i + (size_t)r * 3) % 5);
			bad += rb[i] != want;
		}
	}
	memset(sb, 0, count * sizeof(float));
	MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
	return all;
}

int main(int argc, char **argv)
{
	size_t minb = 8, maxb = 64u << 20;
	int reps = 11, opt, rank, n, docheck = 0;
	double sample_ms = 5, warm_s = 0.5;
	double cpy = 0, red = 0;
	gcoll_unique_id id;
	const char *prov = "?";
	int rails = 0, dmab = 0, rxd = 0, fails = 0;
	char *bvars = NULL;

	MPI_Init(&argc, &argv);
	while ((opt = getopt(argc, argv, "b:e:r:t:W:cB:")) != -1) {
		switch (opt) {
		case 'b': minb = parse_size(optarg); break;
		case 'e': maxb = parse_size(optarg); break;
		case 'r': reps = atoi(optarg); break;
		case 't': sample_ms = atof(optarg); break;
		case 'W': warm_s = atof(optarg); break;
		case 'c': docheck = 1; break;
		case 'B': bvars = optarg; break;
		default:
			fprintf(stderr, "usage: %s [-b minbytes] [-e maxbytes] [-r samples] "
				"[-t sample_ms] [-W warmup_s] [-c (check results)]\n"
				"          [-B VAR=VALUE[,...] (gcoll against gcoll with these)]\n", argv[0]);
			MPI_Abort(MPI_COMM_WORLD, 2);
		}
	}
	if (minb < 4 || maxb < minb || reps < 1 || reps > MAXS || sample_ms <= 0 ||
	    maxb / 4 > 0x7fffffff) {
		fprintf(stderr, "vs_mpi: bad option value (4 <= minbytes <= maxbytes < 8 GiB, "
			"1 <= samples <= %d, sample_ms > 0)\n", MAXS);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (rank == 0 && gcoll_get_unique_id(&id)) {
		fprintf(stderr, "gcoll_get_unique_id: %s\n", gcoll_get_last_error());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (gcoll_comm_init_rank(&gc, n, id, rank)) {
		fprintf(stderr, "rank %d: gcoll_comm_init_rank: %s\n", rank, gcoll_get_last_error());
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	gcoll_comm_transport_info(gc, &prov, &rails, &dmab, &rxd);
	if (bvars) {
		char *copy = strdup(bvars), *save = NULL;

		for (char *v = strtok_r(copy, ",", &save); v; v = strtok_r(NULL, ",", &save))
			if (putenv(strdup(v)))
				MPI_Abort(MPI_COMM_WORLD, 1);
		free(copy);
		if (gcoll_comm_split(gc, 0, rank, &gcb)) {
			fprintf(stderr, "rank %d: gcoll_comm_split: %s\n", rank, gcoll_get_last_error());
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	sb = aligned_alloc(4096, (maxb + 4095) & ~(size_t)4095);
	rb = aligned_alloc(4096, (maxb + 4095) & ~(size_t)4095);
	if (!sb || !rb)
		MPI_Abort(MPI_COMM_WORLD, 1);
	memset(sb, 0, maxb);
	memset(rb, 0, maxb);

	/* the machine's limits, on rank 0 while the others wait */
	if (rank == 0)
		limits(64u << 20, &cpy, &red);
	MPI_Barrier(MPI_COMM_WORLD);

	/* Warm-up before the first timed size: the first operations of a
	 * communicator pay for connection setup, the shared-memory regions'
	 * first touch and registrations, and the ranks start out of step
	 * (rank 0 measured the limits above).  Run both libraries at the
	 * first size for -W seconds (0.5) of rank 0's clock.
	 * The "first size is slow" of the old tables was one operation per
	 * scheduler tick (MPI: 4.0 ms, gcoll: 2.0 ms, with a spread of 1 %):
	 * a rank waiting for a peer whose core another busy process holds.
	 * One such process is the other rank: mpirun's daemon forks the
	 * ranks on its own CPU and the load balancer takes a while to move
	 * one away.  So with no more ranks than CPUs, go on (up to 10 s)
	 * until every rank runs on a CPU of its own.  (Other load on the
	 * machine can still cause it.) */
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		double start = now();
		int go = 1, *cpus = calloc((size_t)n, sizeof(int));

		if (!cpus)
			MPI_Abort(MPI_COMM_WORLD, 1);
		while (go) {
			int cpu = sched_getcpu();
			bool apart = true;

			run_g(minb / 4, 200);
			run_m(minb / 4, 200);
			MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
			for (int i = 0; i < n && n <= ncpu; i++)
				for (int j = 0; j < i; j++)
					apart = apart && cpus[i] != cpus[j];
			go = rank == 0 && (now() - start < warm_s || (!apart && now() - start < 10));
			MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
		}
		free(cpus);
		warm_s = now() - start;
	}

	if (rank == 0) {
		char ver[MPI_MAX_LIBRARY_VERSION_STRING];
		int len;

		MPI_Get_library_version(ver, &len);
		ver[strcspn(ver, ",\n")] = 0;
		if (bvars)
			snprintf(ver, sizeof(ver), "gcoll with %s (column mpi)", bvars);
		printf("# allreduce fp32 sum, %d ranks on %ld cores: gcoll (provider %s) vs %s\n", n,
		       sysconf(_SC_NPROCESSORS_ONLN), prov, ver);
		printf("# %d interleaved samples per size of ~%.0f ms each after %.1f s of warm-up; "
		       "limits of one core: memcpy %.2f GB/s, fp32 a+b %.2f GB/s\n", reps, sample_ms,
		       warm_s, cpy, red);
		printf("# %9s %10s %5s %10s %5s %7s %5s %7s %8s %5s %5s %4s\n", "size", "gcoll", "iqr",
		       "mpi", "iqr", "speedup", "wins", "verdict", "busbw", "/cpy", "/red", "ok");
		printf("# %9s %10s %5s %10s %5s %7s %5s %7s %8s %5s %5s %4s\n", "(B)", "(us)", "(%)",
		       "(us)", "(%)", "mpi/gc", "", "", "(GB/s)", "(%)", "(%)", "");
		fflush(stdout);
	}
	for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
		size_t count = bytes / sizeof(float);
		double tg[MAXS], tm[MAXS], sg[MAXS], sm[MAXS], est, t0, t;
		int iters, wins = 0, warm = bytes <= (64u << 10) ? 20 : 2;
		long long bad = 0;

		/* warm this size up, then size the samples from the slower */
		run_g(count, warm);
		run_m(count, warm);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = now();
		run_g(count, warm);
		run_m(count, warm);
		t = (now() - t0) / (2 * warm);
		MPI_Allreduce(&t, &est, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		iters = (int)(sample_ms * 1e-3 / est);
		iters = iters < 1 ? 1 : iters > 20000 ? 20000 : iters;
		if (docheck)
			bad = check(rank, n, count);
		for (int r = 0; r < reps; r++) {
			/* alternate which goes first: g m, m g, g m, ... */
			int first = r & 1;

			for (int k = 0; k < 2; k++) {
				int lib = first ^ k;
				double s = sample(lib, count, iters);

				(lib ? tm : tg)[r] = s;
			}
			wins += tg[r] < tm[r];
		}
		if (rank == 0) {
			double mg, mm, p, f = 2.0 * (n - 1) / n, bus;
			const char *verdict;

			memcpy(sg, tg, sizeof(double) * reps);
			memcpy(sm, tm, sizeof(double) * reps);
			qsort(sg, reps, sizeof(double), cmpd);
			qsort(sm, reps, sizeof(double), cmpd);
			mg = quant(sg, reps, 0.5);
			mm = quant(sm, reps, 0.5);
			p = sign_p(wins, reps);
			verdict = p >= 0.05 ? "noise" : wins * 2 > reps ? "faster" : "slower";
			bus = (double)bytes / mg / 1e9 * f;
			printf("  %9zu %10.2f %5.0f %10.2f %5.0f %7.2f %2d/%-2d %7s %8.3f %5.1f %5.1f %4s\n",
			       bytes, mg * 1e6, (quant(sg, reps, .75) - quant(sg, reps, .25)) / mg * 100,
			       mm * 1e6, (quant(sm, reps, .75) - quant(sm, reps, .25)) / mm * 100, mm / mg,
			       wins, reps, verdict, bus, cpy > 0 ? bus / cpy * 100 : 0,
			       red > 0 ? bus / red * 100 : 0, docheck ? (bad ? "BAD" : "yes") : "-");
			fflush(stdout);
		}
		fails += bad != 0;
	}
	if (gcb)
		gcoll_comm_destroy(gcb);
	gcoll_comm_destroy(gc);
	free(sb);
	free(rb);
	MPI_Finalize();
	return fails ? 1 : 0;
}
