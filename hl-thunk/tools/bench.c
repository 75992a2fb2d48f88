// SPDX-License-Identifier: MIT
/*
 * hlthunk-bench: alloc + map + export + close + unmap + free cycles per
 * second.  Not a test: prints a number.  It makes the single calls, not
 * hlthunk_hbm_buf_create(): those calls are what it times, without a CPU
 * mapping.
 *   hlthunk-bench [SECONDS [SIZE_BYTES [BUSID]]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hlthunk.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5.0;
	unsigned long long size = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
	const char *busid = argc > 3 ? argv[3] : NULL;
	unsigned long long cycles = 0;
	double start, elapsed;
	int fd;

	fd = hlthunk_open(HLTHUNK_DEVICE_DONT_CARE, busid);
	if (fd < 0) {
		fprintf(stderr, "hlthunk_open: %s\n", strerror(-fd));
		return 1;
	}
	start = now();
	do {
		for (int i = 0; i < 64; i++) {
			uint64_t h, va;
			int d;

			h = hlthunk_device_memory_alloc(fd, size, 0, false, false);
			va = h ? hlthunk_device_memory_map(fd, h, 0) : 0;
			d = va ? hlthunk_device_mapped_memory_export_dmabuf_fd(
					fd, va, size, 0, O_RDWR | O_CLOEXEC) : -1;
			if (d < 0) {
				perror("cycle");
				return 1;
			}
			close(d);
			if (hlthunk_memory_unmap(fd, va) ||
			    hlthunk_device_memory_free(fd, h)) {
				perror("cycle teardown");
				return 1;
			}
			cycles++;
		}
		elapsed = now() - start;
	} while (elapsed < secs);
	printf("hlthunk-bench: %llu cycles of alloc+map+export+close+unmap+free "
	       "(%llu bytes) in %.2f s: %.0f cycles/s\n", cycles, size, elapsed,
	       cycles / elapsed);
	hlthunk_close(fd);
	return 0;
}
