// SPDX-License-Identifier: MIT
/*
 * hl-thunk example: open a gaudi_nic device, allocate device memory, write
 * it through a CPU mapping, map it into the device address space and
 * export it as a dma-buf (what an RDMA NIC would register).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "hlthunk.h"

int main(int argc, char **argv)
{
	const char *busid = argc > 1 ? argv[1] : NULL;
	struct hlthunk_hw_ip_info hw;
	uint64_t size = 1 << 20, handle, va;
	int fd, dmabuf;
	char *cpu;

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

	handle = hlthunk_device_memory_alloc(fd, size, 0, false, false);
	if (!handle) {
		perror("hlthunk_device_memory_alloc");
		return 1;
	}
	cpu = hlthunk_device_memory_mmap(fd, handle, size);
	if (!cpu) {
		perror("hlthunk_device_memory_mmap");
		return 1;
	}
	strcpy(cpu, "hello from the host");

	va = hlthunk_device_memory_map(fd, handle, 0);
	if (!va) {
		perror("hlthunk_device_memory_map");
		return 1;
	}
	dmabuf = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0,
							       O_RDWR | O_CLOEXEC);
	if (dmabuf < 0) {
		fprintf(stderr, "export: %s\n", strerror(-dmabuf));
		return 1;
	}
	printf("handle %" PRIu64 " mapped at device VA %#" PRIx64
	       ", exported as dma-buf fd %d\n", handle, va, dmabuf);

	/* Tear down in order: dma-buf, device mapping, CPU mapping, memory. */
	close(dmabuf);
	if (hlthunk_memory_unmap(fd, va))
		perror("hlthunk_memory_unmap");
	hlthunk_device_memory_munmap(cpu, size);
	if (hlthunk_device_memory_free(fd, handle))
		perror("hlthunk_device_memory_free");
	hlthunk_close(fd);
	return 0;
}
