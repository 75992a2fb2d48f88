// SPDX-License-Identifier: MIT
/* Host unit test: argument checks that need no device. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hlthunk.h"

static int n, fails;

static void check(int cond, const char *what)
{
	printf("%s %d - %s\n", cond ? "ok" : "not ok", ++n, what);
	fails += !cond;
}

int main(void)
{
	int fd, rc;

	fd = hlthunk_open(HLTHUNK_DEVICE_INVALID, NULL);
	check(fd == -EINVAL, "hlthunk_open rejects an unknown device type");
	rc = hlthunk_get_hw_ip_info(-1, NULL);
	check(rc == -1 && errno == EINVAL, "hlthunk_get_hw_ip_info(NULL)");
	check(hlthunk_device_memory_alloc(-1, 4096, 0, false, true) == 0 &&
	      errno == EOPNOTSUPP, "shared allocations are refused");
	check(hlthunk_device_memory_mmap(-1, 1, 0) == NULL && errno == EINVAL,
	      "zero-sized mmap refused");
	fd = hlthunk_open_by_index(4000);
	check(fd < 0, "no device gaudi_nic.4000");
	check(hlthunk_memory_unmap(-1, 0x1000) == -1 && errno == EBADF,
	      "bad fd gives -1/EBADF");
	check(hlthunk_device_mapped_memory_export_dmabuf_fd(-1, 0, 0, 0, 0) ==
	      -EBADF, "export returns a negative errno");
	{
		struct hlthunk_hbm_buf b;

		check(hlthunk_hbm_buf_create(-1, 4096, 0, NULL) == -1 && errno == EINVAL,
		      "hbm_buf_create(NULL) refused");
		check(hlthunk_hbm_buf_create(-1, 0, 0, &b) == -1 && errno == EINVAL,
		      "hbm_buf_create of 0 bytes refused");
		check(hlthunk_hbm_buf_create(-1, 4096, 1u << 7, &b) == -1 && errno == EINVAL,
		      "hbm_buf_create with an unknown flag refused");
		rc = hlthunk_hbm_buf_create(-1, 4096, HLTHUNK_HBM_CPU_MAP, &b);
		check(rc == -1 && errno == EBADF && b.step && !strcmp(b.step, "allocation") &&
		      b.dmabuf_fd == -1 && !b.handle && !b.cpu,
		      "hbm_buf_create on a bad fd fails at its allocation, nothing made");
		check(hlthunk_hbm_buf_destroy(&b) == 0, "destroying what was never made is a no-op");
		check(hlthunk_hbm_buf_destroy(NULL) == -1 && errno == EINVAL,
		      "hbm_buf_destroy(NULL) refused");
	}
	printf("1..%d\n", n);
	return fails ? 1 : 0;
}
