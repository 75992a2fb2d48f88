// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy_bw - the memcpy reference of tests/rdma/perftest.sh: how fast one
 * CPU of this machine copies memory with the C library's memcpy(), for
 * comparison with what the RDMA engines move (each byte they move is
 * copied once, by one CPU).  Copies one buffer of SIZE KiB into another
 * (both touched first) for about SECONDS seconds and prints the rate:
 * 65536 KiB is more than any cache holds, 64 KiB stays in the nearest.
 *
 * usage: memcpy_bw [SIZE_KIB [SECONDS]]   (default 65536 KiB, 1 s)
 * output: "memcpy SIZE KiB: RATE MiB/s (N copies in T s)"
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

int main(int argc, char **argv)
{
	long kib = argc > 1 ? arg(argv[1], 4, 4L << 20, "SIZE_KIB") : 65536;
	long secs = argc > 2 ? arg(argv[2], 1, 60, "SECONDS") : 1;
	size_t len = (size_t)kib << 10;
	char *src = malloc(len), *dst = malloc(len);
	double t0, t;
	long n = 0;

	if (argc > 3 || !src || !dst) {
		fprintf(stderr, argc > 3 ? "usage: memcpy_bw [SIZE_KIB [SECONDS]]\n" :
			"memcpy_bw: cannot allocate 2 x %ld KiB\n", kib);
		return 2;
	}
	/* fault every page in before timing */
	memset(src, 0x5a, len);
	memset(dst, 0, len);
	t0 = now();
	do {
		memcpy(dst, src, len);
		/* the copy is observable: the compiler keeps every one */
		__asm__ volatile("" : : "r"(dst) : "memory");
		n++;
		t = now() - t0;
	} while (t < secs);
	if (dst[len - 1] != 0x5a) {
		fprintf(stderr, "memcpy_bw: the copy is wrong\n");
		return 1;
	}
	printf("memcpy %ld KiB: %.0f MiB/s (%ld copies in %.2f s)\n", kib,
	       (double)n * kib / 1024 / t, n, t);
	free(src);
	free(dst);
	return 0;
}
