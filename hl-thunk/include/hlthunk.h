/* SPDX-License-Identifier: MIT */
/*
 * hl-thunk for gaudi_nic: a thin library over the gaudi_nic accel uAPI
 * (include/uapi/drm/gaudi_nic_accel.h).  The functions that share a name
 * with the public hl-thunk library keep its signatures and its return
 * conventions:
 *   - hlthunk_open(): fd, or a negative errno;
 *   - hlthunk_close(), hlthunk_get_hw_ip_info(), hlthunk_device_memory_free(),
 *     hlthunk_memory_unmap(): 0, or -1 with errno set;
 *   - hlthunk_device_memory_alloc() (handle) and hlthunk_device_memory_map()
 *     (device VA): 0 on failure, errno set;
 *   - hlthunk_device_mapped_memory_export_dmabuf_fd(): fd, or a negative
 *     errno.
 * Once the device was reset (devlink dev reload), every call on an fd
 * opened before fails with EIO: open the device again (hlthunk(3)).
 */
#ifndef HLTHUNK_H
#define HLTHUNK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define hlthunk_public __attribute__((visibility("default")))

#define HLTHUNK_SERIAL_LEN 32

enum hlthunk_device_name {
	HLTHUNK_DEVICE_GAUDI_NIC = 16,
	HLTHUNK_DEVICE_INVALID,
	HLTHUNK_DEVICE_DONT_CARE,
	HLTHUNK_DEVICE_MAX
};

struct hlthunk_hw_ip_info {
	uint64_t sram_base_address;	/* no SRAM: 0 */
	uint64_t dram_base_address;	/* start of the device VA range */
	uint64_t dram_size;		/* HBM bytes */
	uint64_t sram_size;		/* 0 */
	uint64_t dram_page_size;	/* device page size */
	uint64_t device_mem_alloc_default_page_size;
	uint32_t device_id;		/* N of gaudi_nic.N */
	uint32_t module_id;		/* same as device_id */
	uint8_t dram_enabled;		/* 1 */
	uint8_t pad[7];
	/* gaudi_nic extensions */
	uint64_t dram_free;		/* HBM bytes nobody allocated */
	uint64_t dram_max_page_size;
	uint64_t device_va_size;
	uint32_t num_nic_ports;
	uint32_t driver_version;	/* (major << 16) | (minor << 8) | patch */
	char serial[HLTHUNK_SERIAL_LEN];
};

/* Open the first gaudi_nic device (@busid NULL) or the one whose bus id
 * (platform device name, e.g. "gaudi_nic.1") is @busid.
 */
hlthunk_public int hlthunk_open(enum hlthunk_device_name device_name,
				const char *busid);
/* Open gaudi_nic.@index. */
hlthunk_public int hlthunk_open_by_index(uint32_t index);
hlthunk_public int hlthunk_close(int fd);

hlthunk_public enum hlthunk_device_name hlthunk_get_device_name_from_fd(int fd);
hlthunk_public int hlthunk_get_hw_ip_info(int fd,
					  struct hlthunk_hw_ip_info *hw_ip);

hlthunk_public uint64_t hlthunk_device_memory_alloc(int fd, uint64_t size,
						    uint64_t page_size,
						    bool contiguous,
						    bool shared);
hlthunk_public int hlthunk_device_memory_free(int fd, uint64_t handle);
hlthunk_public uint64_t hlthunk_device_memory_map(int fd, uint64_t handle,
						  uint64_t hint_addr);
hlthunk_public int hlthunk_memory_unmap(int fd, uint64_t device_virt_addr);
hlthunk_public int
hlthunk_device_mapped_memory_export_dmabuf_fd(int fd, uint64_t device_addr,
					      uint64_t size, uint64_t offset,
					      uint32_t flags);

/* CPU mapping of allocation @handle (like a BAR): @size bytes from its
 * start.  Returns the address, or NULL with errno set.  Unmap with
 * hlthunk_device_memory_munmap() (or munmap()).
 */
hlthunk_public void *hlthunk_device_memory_mmap(int fd, uint64_t handle,
						uint64_t size);
hlthunk_public int hlthunk_device_memory_munmap(void *addr, uint64_t size);

/*
 * gaudi_nic extension: an HBM buffer the usual way, in one call.  It is
 * allocated, mapped at a device VA, exported as a dma-buf (O_RDWR |
 * O_CLOEXEC) and, with HLTHUNK_HBM_CPU_MAP, mapped for the CPU.
 * hlthunk_hbm_buf_create() returns 0, or -1 with errno set, @buf->step
 * naming the step that failed, and nothing left behind.
 * hlthunk_hbm_buf_destroy() undoes what was made, in reverse order. It
 * returns 0, or -1 with errno set if a step failed; every step is still
 * tried, and @buf is cleared either way.  It takes a buffer that create
 * filled (made or failed) or HLTHUNK_HBM_BUF_INIT, not a zeroed one (fd 0
 * is a file).
 */
#define HLTHUNK_HBM_CONTIGUOUS	(1u << 0)	/* physically contiguous */
#define HLTHUNK_HBM_CPU_MAP	(1u << 1)	/* map it for the CPU too */

struct hlthunk_hbm_buf {
	int fd;			/* the device it was made on */
	int dmabuf_fd;		/* the export, or -1 */
	uint64_t handle;	/* the allocation */
	uint64_t device_va;	/* where the device sees it */
	uint64_t size;
	void *cpu;		/* its CPU mapping, or NULL */
	const char *step;	/* after a failure: "allocation", "device
				 * mapping", "dma-buf export" or "CPU mapping" */
};

#define HLTHUNK_HBM_BUF_INIT ((struct hlthunk_hbm_buf){ .fd = -1, .dmabuf_fd = -1 })

hlthunk_public int hlthunk_hbm_buf_create(int fd, uint64_t size, uint32_t flags,
					  struct hlthunk_hbm_buf *buf);
hlthunk_public int hlthunk_hbm_buf_destroy(struct hlthunk_hbm_buf *buf);

#ifdef __cplusplus
}
#endif

#endif /* HLTHUNK_H */
