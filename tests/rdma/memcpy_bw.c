// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw - the CPU references of tests/rdma/perftest.sh and
 * tests/rdma/gcoll_bench.sh: how fast one CPU of this machine copies
 * memory with the C library's memcpy(), for comparison with what the RDMA
 * engines move (each byte they move is copied once, by one CPU); with -a,
 * how fast it adds two fp32 arrays into a third (d[i] = a[i] + b[i], the
 * loop of libgcoll's fp32 sum, which GCC vectorises the same way), for
 * the ceiling of an all-reduce whose reduction and transfers share the
 * CPUs.  Runs over buffers of SIZE KiB each (touched first) for about
 * SECONDS seconds and prints the rate in MiB of output per second: 65536
 * KiB is more than any cache holds, 64 KiB stays in the nearest.  The
 * operands are small integers, exact in fp32, as gcoll-perf's are.
 *
 * usage: memcpy_bw [-a] [SIZE_KIB [SECONDS]]   (default 65536 KiB, 1 s)
 * output: "memcpy SIZE KiB: RATE MiB/s (N copies in T s)"
 *     or  "fp32 add SIZE KiB: RATE MiB/s (N adds in T s)"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static long arg(const char *s, long lo, long hi, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "memcpy_bw: %s must be %ld to %ld, not '%s'\n",
			what, lo, hi, s);
		exit(2);
	}
	return v;
}

/* d = a + b over @n floats: the shape of libgcoll's sum_f32 kernel */
static void add_f32(float *restrict d, const float *restrict a,
		    const float *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = a[i] + b[i];
}

int main(int argc, char **argv)
{
	int add = argc > 1 && !strcmp(argv[1], "-a");
	long kib = argc > 1 + add ? arg(argv[1 + add], 4, 4L << 20, "SIZE_KIB") : 65536;
	long secs = argc > 2 + add ? arg(argv[2 + add], 1, 60, "SECONDS") : 1;
	size_t len = (size_t)kib << 10, nf = len / sizeof(float);
	/* -a: a second source operand */
	char *src = malloc(len), *dst = malloc(len), *src2 = add ? malloc(len) : NULL;
	float *fa = (float *)src, *fb = (float *)src2, *fd = (float *)dst;
	double t0, t;
	long n = 0;

	if (argc > 3 + add || !src || !dst || (add && !src2)) {
		fprintf(stderr, argc > 3 + add ? "usage: memcpy_bw [-a] [SIZE_KIB [SECONDS]]\n" :
			"memcpy_bw: cannot allocate %d x %ld KiB\n", 2 + add, kib);
		return 2;
	}
	/* fault every page in before timing */
	memset(dst, 0, len);
	if (add) {
		for (size_t i = 0; i < nf; i++) {
			fa[i] = (float)(i & 1023);
			fb[i] = (float)(i % 7);
		}
	} else {
		memset(src, 0x5a, len);
	}
	t0 = now();
	do {
		if (add)
			add_f32(fd, fa, fb, nf);
		else
			memcpy(dst, src, len);
		/* the result is observable: the compiler keeps every pass */
		__asm__ volatile("" : : "r"(dst) : "memory");
		n++;
		t = now() - t0;
	} while (t < secs);
	if (add ? fd[nf - 1] != (float)((nf - 1) & 1023) + (float)((nf - 1) % 7) :
		  dst[len - 1] != 0x5a) {
		fprintf(stderr, "memcpy_bw: the %s is wrong\n", add ? "sum" : "copy");
		return 1;
	}
	printf("%s %ld KiB: %.0f MiB/s (%ld %s in %.2f s)\n", add ? "fp32 add" : "memcpy",
	       kib, (double)n * kib / 1024 / t, n, add ? "adds" : "copies", t);
	free(src);
	free(src2);
	free(dst);
	return 0;
}
