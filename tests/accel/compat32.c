// SPDX-License-Identifier: GPL-2.0
/*
 * The accel uAPI from a 32-bit (i386) process: drm_compat_ioctl passes our
 * ioctls through unchanged, so the structs must have the same layout.
 * Raw ioctls only (no libdrm); built static with gcc -m32 in the VM test.
 *   compat32 /dev/accel/accelN
 */
#define _FILE_OFFSET_BITS 64
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <drm/gaudi_nic_accel.h>

static int n, fails;

static void ok(int cond, const char *what)
{
	printf("%s %d - i386: %s\n", cond ? "ok" : "not ok", ++n, what);
	fails += !cond;
}

int main(int argc, char **argv)
{
	struct gaudi_nic_info_device info;
	struct drm_gaudi_nic_info ia;
	struct drm_gaudi_nic_memory m;
	uint64_t h, va;
	uint8_t *p;
	int fd, d;

	fd = open(argc > 1 ? argv[1] : "/dev/accel/accel0", O_RDWR);
	ok(fd >= 0 && sizeof(long) == 4, "32-bit process opened the accel node");
	if (fd < 0)
		return 1;
	memset(&ia, 0, sizeof(ia));
	memset(&info, 0, sizeof(info));
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = sizeof(info);
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) &&
	   info.hbm_size == 64ULL << 20 && info.page_size == 4096 &&
	   info.num_ports == 2 && !strncmp(info.serial, "GNSIM", 5),
	   "INFO through compat_ioctl");

	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_ALLOC;
	m.in.alloc.size = 1 << 20;
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m) && m.out.handle, "ALLOC");
	h = m.out.handle;
	p = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)(h << GAUDI_NIC_MMAP_HANDLE_SHIFT));
	ok(p != MAP_FAILED, "mmap");
	if (p != MAP_FAILED) {
		memset(p, 0xab, 1 << 20);
		ok(p[12345] == 0xab, "write and read through the CPU mapping");
		munmap(p, 1 << 20);
	}
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_MAP;
	m.in.map.handle = h;
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m) &&
	   m.out.device_virt_addr >= info.device_va_base, "MAP returns a 64-bit VA");
	va = m.out.device_virt_addr;
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD;
	m.in.export_dmabuf_fd.device_virt_addr = va;
	m.in.export_dmabuf_fd.size = 1 << 20;
	m.in.export_dmabuf_fd.fd_flags = O_RDWR | O_CLOEXEC;
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m), "EXPORT_DMABUF_FD");
	d = (int)m.out.export_dmabuf_fd.fd;
	ok(lseek(d, 0, SEEK_END) == 1 << 20, "dma-buf has the exported size");
	m.reserved[1] = 1;
	ok(ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m) && errno == EINVAL,
	   "reserved field checked in compat mode");
	close(d);
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_UNMAP;
	m.in.unmap.device_virt_addr = va;
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m), "UNMAP");
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_FREE;
	m.in.free.handle = h;
	ok(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m), "FREE");
	close(fd);
	printf("1..%d\n", n);
	return fails ? 1 : 0;
}
