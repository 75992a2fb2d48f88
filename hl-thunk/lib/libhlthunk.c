// SPDX-License-Identifier: MIT
/* hl-thunk for gaudi_nic. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <xf86drm.h>
#include <drm/gaudi_nic_accel.h>

#include "hlthunk.h"

#define GN_DRIVER_NAME "gaudi_nic"
#define ACCEL_CLASS "/sys/class/accel"

/* drmIoctl() restarts on EINTR and EAGAIN. */
static int gn_ioctl(int fd, unsigned long request, void *arg)
{
	return drmIoctl(fd, request, arg);
}

static bool gn_is_ours(int fd)
{
	drmVersionPtr v = drmGetVersion(fd);
	bool ours;

	if (!v)
		return false;
	ours = v->name && !strcmp(v->name, GN_DRIVER_NAME);
	drmFreeVersion(v);
	return ours;
}

/* The bus id (platform device name) of /sys/class/accel/@minor. */
static int gn_busid_of(const char *minor, char *busid, size_t len)
{
	char link[PATH_MAX], target[PATH_MAX];
	const char *base;
	ssize_t n;

	snprintf(link, sizeof(link), ACCEL_CLASS "/%s/device", minor);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = '\0';
	base = strrchr(target, '/');
	base = base ? base + 1 : target;
	if ((size_t)snprintf(busid, len, "%s", base) >= len)
		return -ENAMETOOLONG;
	return 0;
}

hlthunk_public int hlthunk_open(enum hlthunk_device_name device_name,
				const char *busid)
{
	char path[PATH_MAX], id[256];
	struct dirent **list;
	int fd, i, n, ret = -ENODEV, found = -1;

	if (device_name != HLTHUNK_DEVICE_GAUDI_NIC &&
	    device_name != HLTHUNK_DEVICE_DONT_CARE)
		return -EINVAL;

	/* accel0, accel1, ..., accel10: the first device is the lowest minor */
	n = scandir(ACCEL_CLASS, &list, NULL, versionsort);
	if (n < 0) {
		errno = ENODEV;
		return -ENODEV;
	}
	for (i = 0; i < n && found < 0; i++) {
		struct dirent *de = list[i];

		if (strncmp(de->d_name, "accel", 5))
			continue;
		if (gn_busid_of(de->d_name, id, sizeof(id)))
			continue;
		if (busid && strcmp(busid, id))
			continue;
		if (!busid && strncmp(id, GN_DRIVER_NAME ".", strlen(GN_DRIVER_NAME) + 1))
			continue;
		snprintf(path, sizeof(path), "/dev/accel/%s", de->d_name);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			continue;
		}
		if (!gn_is_ours(fd)) {
			close(fd);
			continue;
		}
		found = fd;
	}
	for (i = 0; i < n; i++)
		free(list[i]);
	free(list);
	if (found >= 0)
		return found;
	errno = -ret;
	return ret;
}

hlthunk_public int hlthunk_open_by_index(uint32_t index)
{
	char busid[64];

	snprintf(busid, sizeof(busid), GN_DRIVER_NAME ".%u", index);
	return hlthunk_open(HLTHUNK_DEVICE_GAUDI_NIC, busid);
}

hlthunk_public int hlthunk_close(int fd)
{
	return close(fd);
}

hlthunk_public enum hlthunk_device_name hlthunk_get_device_name_from_fd(int fd)
{
	return gn_is_ours(fd) ? HLTHUNK_DEVICE_GAUDI_NIC :
				HLTHUNK_DEVICE_INVALID;
}

hlthunk_public int hlthunk_get_hw_ip_info(int fd,
					  struct hlthunk_hw_ip_info *hw_ip)
{
	struct gaudi_nic_info_device dev;
	struct drm_gaudi_nic_info args;

	if (!hw_ip) {
		errno = EINVAL;
		return -1;
	}
	memset(&args, 0, sizeof(args));
	memset(&dev, 0, sizeof(dev));
	args.op = GAUDI_NIC_INFO_DEVICE;
	args.return_pointer = (uintptr_t)&dev;
	args.return_size = sizeof(dev);
	if (gn_ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &args))
		return -1;

	memset(hw_ip, 0, sizeof(*hw_ip));
	hw_ip->dram_base_address = dev.device_va_base;
	hw_ip->dram_size = dev.hbm_size;
	hw_ip->dram_page_size = dev.page_size;
	hw_ip->device_mem_alloc_default_page_size = dev.page_size;
	hw_ip->device_id = dev.device_id;
	hw_ip->module_id = dev.device_id;
	hw_ip->dram_enabled = 1;
	hw_ip->dram_free = dev.hbm_free;
	hw_ip->dram_max_page_size = dev.max_page_size;
	hw_ip->device_va_size = dev.device_va_size;
	hw_ip->num_nic_ports = dev.num_ports;
	hw_ip->driver_version = dev.driver_version;
	memcpy(hw_ip->serial, dev.serial, sizeof(hw_ip->serial));
	hw_ip->serial[sizeof(hw_ip->serial) - 1] = '\0';
	return 0;
}

static int gn_memory(int fd, struct drm_gaudi_nic_memory *args)
{
	return gn_ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, args);
}

hlthunk_public uint64_t hlthunk_device_memory_alloc(int fd, uint64_t size,
						    uint64_t page_size,
						    bool contiguous,
						    bool shared)
{
	struct drm_gaudi_nic_memory args;

	if (shared) {
		/* No memory shared between contexts on this device. */
		errno = EOPNOTSUPP;
		return 0;
	}
	memset(&args, 0, sizeof(args));
	args.op = GAUDI_NIC_MEM_ALLOC;
	args.flags = contiguous ? GAUDI_NIC_MEM_CONTIGUOUS : 0;
	args.in.alloc.size = size;
	args.in.alloc.page_size = page_size;
	if (gn_memory(fd, &args))
		return 0;
	return args.out.handle;
}

hlthunk_public int hlthunk_device_memory_free(int fd, uint64_t handle)
{
	struct drm_gaudi_nic_memory args;

	memset(&args, 0, sizeof(args));
	args.op = GAUDI_NIC_MEM_FREE;
	args.in.free.handle = handle;
	return gn_memory(fd, &args);
}

hlthunk_public uint64_t hlthunk_device_memory_map(int fd, uint64_t handle,
						  uint64_t hint_addr)
{
	struct drm_gaudi_nic_memory args;

	memset(&args, 0, sizeof(args));
	args.op = GAUDI_NIC_MEM_MAP;
	args.in.map.handle = handle;
	args.in.map.hint_addr = hint_addr;
	if (gn_memory(fd, &args))
		return 0;
	return args.out.device_virt_addr;
}

hlthunk_public int hlthunk_memory_unmap(int fd, uint64_t device_virt_addr)
{
	struct drm_gaudi_nic_memory args;

	memset(&args, 0, sizeof(args));
	args.op = GAUDI_NIC_MEM_UNMAP;
	args.in.unmap.device_virt_addr = device_virt_addr;
	return gn_memory(fd, &args);
}

hlthunk_public int
hlthunk_device_mapped_memory_export_dmabuf_fd(int fd, uint64_t device_addr,
					      uint64_t size, uint64_t offset,
					      uint32_t flags)
{
	struct drm_gaudi_nic_memory args;

	memset(&args, 0, sizeof(args));
	args.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD;
	args.in.export_dmabuf_fd.device_virt_addr = device_addr;
	args.in.export_dmabuf_fd.size = size;
	args.in.export_dmabuf_fd.offset = offset;
	args.in.export_dmabuf_fd.fd_flags = flags;
	if (gn_memory(fd, &args))
		return -errno;
	return (int)args.out.export_dmabuf_fd.fd;
}

hlthunk_public void *hlthunk_device_memory_mmap(int fd, uint64_t handle,
						uint64_t size)
{
	void *p;

	if (!size || handle > (UINT64_MAX >> GAUDI_NIC_MMAP_HANDLE_SHIFT) ||
	    size > SIZE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)(handle << GAUDI_NIC_MMAP_HANDLE_SHIFT));
	return p == MAP_FAILED ? NULL : p;
}

hlthunk_public int hlthunk_device_memory_munmap(void *addr, uint64_t size)
{
	return munmap(addr, (size_t)size);
}

hlthunk_public int hlthunk_hbm_buf_destroy(struct hlthunk_hbm_buf *buf)
{
	int err = 0;

	if (!buf) {
		errno = EINVAL;
		return -1;
	}
	if (buf->cpu && hlthunk_device_memory_munmap(buf->cpu, buf->size))
		err = err ?: errno;
	if (buf->dmabuf_fd >= 0 && close(buf->dmabuf_fd))
		err = err ?: errno;
	if (buf->device_va && hlthunk_memory_unmap(buf->fd, buf->device_va))
		err = err ?: errno;
	if (buf->handle && hlthunk_device_memory_free(buf->fd, buf->handle))
		err = err ?: errno;
	*buf = HLTHUNK_HBM_BUF_INIT;
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

hlthunk_public int hlthunk_hbm_buf_create(int fd, uint64_t size, uint32_t flags,
					  struct hlthunk_hbm_buf *buf)
{
	const char *step;
	int ret, err;

	if (!buf || !size || (flags & ~(HLTHUNK_HBM_CONTIGUOUS | HLTHUNK_HBM_CPU_MAP))) {
		errno = EINVAL;
		return -1;
	}
	*buf = HLTHUNK_HBM_BUF_INIT;
	buf->fd = fd;
	buf->size = size;
	buf->step = "allocation";
	buf->handle = hlthunk_device_memory_alloc(fd, size, 0,
						  flags & HLTHUNK_HBM_CONTIGUOUS, false);
	if (!buf->handle)
		goto fail;
	buf->step = "device mapping";
	buf->device_va = hlthunk_device_memory_map(fd, buf->handle, 0);
	if (!buf->device_va)
		goto fail;
	buf->step = "dma-buf export";
	ret = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, buf->device_va, size, 0,
							    O_RDWR | O_CLOEXEC);
	if (ret < 0)
		goto fail;
	buf->dmabuf_fd = ret;
	if (flags & HLTHUNK_HBM_CPU_MAP) {
		buf->step = "CPU mapping";
		buf->cpu = hlthunk_device_memory_mmap(fd, buf->handle, size);
		if (!buf->cpu)
			goto fail;
	}
	buf->step = NULL;
	return 0;
fail:
	err = errno;
	step = buf->step;
	hlthunk_hbm_buf_destroy(buf);
	buf->step = step;
	errno = err;
	return -1;
}
