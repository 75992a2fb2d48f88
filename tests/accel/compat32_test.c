// SPDX-License-Identifier: GPL-2.0
/*
 * The accel uAPI from a 32-bit (i386) process: drm_compat_ioctl passes our
 * ioctls through unchanged, so the structs must have the same layout.
 * Raw ioctls only (no libdrm); built static with gcc -m32 in the VM test
 * (tests/accel/compat32.sh), against the kernel's kselftest_harness.h.
 * A kselftest: the fixture opens the accel node; INFO, ALLOC with a CPU
 * mapping, MAP with a dma-buf export, and the reserved-field check are one
 * test each, each in its own process.  Output: KTAP.
 *   compat32 [/dev/accel/accelN]
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

#include "kselftest_harness.h"

#define SZ (1u << 20)

static const char *node = "/dev/accel/accel0";

FIXTURE(compat32) {
	int fd;
	uint64_t handle;	/* what the test allocated, freed at teardown */
	uint64_t va;		/* what it mapped, unmapped at teardown */
};

FIXTURE_SETUP(compat32)
{
	self->fd = -1;
	self->handle = 0;
	self->va = 0;
	ASSERT_EQ(4, sizeof(long))
		TH_LOG("not an i386 build: compile with gcc -m32");
	self->fd = open(node, O_RDWR);
	ASSERT_LE(0, self->fd)
		TH_LOG("open %s: %s", node, strerror(errno));
}

FIXTURE_TEARDOWN(compat32)
{
	struct drm_gaudi_nic_memory m;

	if (self->va) {
		memset(&m, 0, sizeof(m));
		m.op = GAUDI_NIC_MEM_UNMAP;
		m.in.unmap.device_virt_addr = self->va;
		ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m);
	}
	if (self->handle) {
		memset(&m, 0, sizeof(m));
		m.op = GAUDI_NIC_MEM_FREE;
		m.in.free.handle = self->handle;
		ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m);
	}
	if (self->fd >= 0)
		close(self->fd);
}

/* ALLOC @size bytes: the handle, or 0 (errno set) */
static uint64_t mem_alloc(int fd, uint64_t size)
{
	struct drm_gaudi_nic_memory m;

	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_ALLOC;
	m.in.alloc.size = size;
	if (ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m))
		return 0;
	return m.out.handle;
}

/* MAP @handle: the device VA, or 0 (errno set) */
static uint64_t mem_map(int fd, uint64_t handle)
{
	struct drm_gaudi_nic_memory m;

	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_MAP;
	m.in.map.handle = handle;
	if (ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m))
		return 0;
	return m.out.device_virt_addr;
}

/* INFO's 64-bit fields and the serial string arrive intact */
TEST_F(compat32, info)
{
	struct gaudi_nic_info_device info;
	struct drm_gaudi_nic_info ia;

	memset(&ia, 0, sizeof(ia));
	memset(&info, 0, sizeof(info));
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = sizeof(info);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia))
		TH_LOG("INFO through compat_ioctl: %s", strerror(errno));
	EXPECT_EQ(64ULL << 20, info.hbm_size);
	EXPECT_EQ(4096, info.page_size);
	EXPECT_EQ(2, info.num_ports);
	EXPECT_EQ(0, strncmp(info.serial, "GNSIM", 5))
		TH_LOG("serial \"%.*s\"", (int)sizeof(info.serial), info.serial);
	EXPECT_NE(0, info.device_va_base);
}

/* ALLOC, and the memory written and read through the CPU mapping */
TEST_F(compat32, alloc_mmap)
{
	uint8_t *p;

	self->handle = mem_alloc(self->fd, SZ);
	ASSERT_NE(0, self->handle)
		TH_LOG("ALLOC of %u bytes: %s", SZ, strerror(errno));
	p = mmap(NULL, SZ, PROT_READ | PROT_WRITE, MAP_SHARED, self->fd,
		 (off_t)(self->handle << GAUDI_NIC_MMAP_HANDLE_SHIFT));
	/* not ASSERT_NE(MAP_FAILED, p): its report casts a pointer to intmax_t */
	ASSERT_TRUE(p != MAP_FAILED)
		TH_LOG("mmap of the handle: %s", strerror(errno));
	memset(p, 0xab, SZ);
	EXPECT_EQ(0xab, p[12345]);
	EXPECT_EQ(0xab, p[SZ - 1]);
	EXPECT_EQ(0, munmap(p, SZ));
}

/*
 * MAP's 64-bit device VA reaches the 32-bit process intact; the export of
 * the mapped range is a dma-buf of its size; UNMAP and FREE.
 */
TEST_F(compat32, map_export)
{
	struct gaudi_nic_info_device info;
	struct drm_gaudi_nic_info ia;
	struct drm_gaudi_nic_memory m;
	int d;

	memset(&ia, 0, sizeof(ia));
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = sizeof(info);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia));
	self->handle = mem_alloc(self->fd, SZ);
	ASSERT_NE(0, self->handle)
		TH_LOG("ALLOC: %s", strerror(errno));
	self->va = mem_map(self->fd, self->handle);
	ASSERT_NE(0, self->va)
		TH_LOG("MAP: %s", strerror(errno));
	EXPECT_LE(info.device_va_base, self->va)
		TH_LOG("MAP returns a 64-bit VA: 0x%llx, base 0x%llx",
		       (unsigned long long)self->va,
		       (unsigned long long)info.device_va_base);

	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD;
	m.in.export_dmabuf_fd.device_virt_addr = self->va;
	m.in.export_dmabuf_fd.size = SZ;
	m.in.export_dmabuf_fd.fd_flags = O_RDWR | O_CLOEXEC;
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m))
		TH_LOG("EXPORT_DMABUF_FD: %s", strerror(errno));
	d = (int)m.out.export_dmabuf_fd.fd;
	EXPECT_EQ((off_t)SZ, lseek(d, 0, SEEK_END))
		TH_LOG("the dma-buf has the exported size");
	close(d);

	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_UNMAP;
	m.in.unmap.device_virt_addr = self->va;
	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m))
		TH_LOG("UNMAP: %s", strerror(errno));
	self->va = 0;
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_FREE;
	m.in.free.handle = self->handle;
	EXPECT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m))
		TH_LOG("FREE: %s", strerror(errno));
	self->handle = 0;
}

/* a non-zero reserved field is refused in compat mode too */
TEST_F(compat32, reserved)
{
	struct drm_gaudi_nic_memory m;
	int ret;

	self->handle = mem_alloc(self->fd, SZ);
	ASSERT_NE(0, self->handle)
		TH_LOG("ALLOC: %s", strerror(errno));
	self->va = mem_map(self->fd, self->handle);
	ASSERT_NE(0, self->va)
		TH_LOG("MAP: %s", strerror(errno));
	memset(&m, 0, sizeof(m));
	m.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD;
	m.in.export_dmabuf_fd.device_virt_addr = self->va;
	m.in.export_dmabuf_fd.size = SZ;
	m.in.export_dmabuf_fd.fd_flags = O_RDWR | O_CLOEXEC;
	m.reserved[1] = 1;
	ret = ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_MEMORY, &m);
	EXPECT_EQ(-1, ret)
		TH_LOG("EXPORT_DMABUF_FD with reserved[1] = 1 succeeded");
	if (!ret)
		close((int)m.out.export_dmabuf_fd.fd);
	else
		EXPECT_EQ(EINVAL, errno);
}

int main(int argc, char **argv)
{
	char *hargv[] = { argv[0], NULL };

	if (argc > 2 || (argc == 2 && argv[1][0] != '/')) {
		fprintf(stderr, "usage: %s [/dev/accel/accelN]\n", argv[0]);
		return 2;
	}
	if (argc == 2)
		node = argv[1];
	return test_harness_run(1, hargv);
}
