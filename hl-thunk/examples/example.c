// SPDX-License-Identifier: MIT
/*
 * hl-thunk example: open a gaudi_nic device, allocate device memory, write
 * it through a CPU mapping, map it into the device address space and
 * export it as a dma-buf (what an RDMA NIC would register).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hlthunk.h"

int main(int argc, char **argv)
{
	const char *busid = argc > 1 ? argv[1] : NULL;
	struct hlthunk_hw_ip_info hw;
	struct hlthunk_hbm_buf buf;
	uint64_t size = 1 << 20;
	int fd;

	fd = hlthunk_open(HLTHUNK_DEVICE_DONT_CARE, busid);
	if (fd < 0) {
		fprintf(stderr, "hlthunk_open: %s\n", strerror(-fd));
		return 1;
	}
	if (hlthunk_get_hw_ip_info(fd, &hw)) {
		perror("hlthunk_get_hw_ip_info");
		return 1;
	}
	printf("device %u serial %s: %" PRIu64 " MiB HBM (%" PRIu64
	       " MiB free), %u NIC ports\n", hw.device_id, hw.serial,
	       hw.dram_size >> 20, hw.dram_free >> 20, hw.num_nic_ports);

	/*
	 * One call allocates the memory, maps it into the device address
	 * space, exports it as a dma-buf and maps it for the CPU; on failure
	 * it undoes what it made and names the step (hlthunk(3) shows the
	 * single calls it makes).
	 */
	if (hlthunk_hbm_buf_create(fd, size, HLTHUNK_HBM_CPU_MAP, &buf)) {
		fprintf(stderr, "HBM buffer: %s failed: %s\n", buf.step, strerror(errno));
		return 1;
	}
	strcpy(buf.cpu, "hello from the host");
	printf("handle %" PRIu64 " mapped at device VA %#" PRIx64
	       ", exported as dma-buf fd %d\n", buf.handle, buf.device_va, buf.dmabuf_fd);

	/* Undone in reverse: CPU mapping, dma-buf, device mapping, memory. */
	if (hlthunk_hbm_buf_destroy(&buf))
		perror("hlthunk_hbm_buf_destroy");
	hlthunk_close(fd);
	return 0;
}
