/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * gaudi_nic accelerator uAPI: /dev/accel/accelN.
 *
 * Rules (Documentation/accel-uapi.md): fixed-width types, user pointers as
 * __u64, 64-bit fields __aligned_u64, every struct a multiple of 8 bytes
 * with explicit padding.  Every reserved or pad field, every flag bit
 * without a meaning and every input byte an operation does not use must be
 * zero, otherwise the ioctl fails with -EINVAL.
 */
#ifndef _UAPI_DRM_GAUDI_NIC_ACCEL_H
#define _UAPI_DRM_GAUDI_NIC_ACCEL_H

#include <drm/drm.h>

#if defined(__cplusplus)
extern "C" {
#endif

#define DRM_GAUDI_NIC_INFO		0x00
#define DRM_GAUDI_NIC_MEMORY		0x01

/* ---------------------------------------------------------------- INFO */

/* struct drm_gaudi_nic_info.op */
#define GAUDI_NIC_INFO_DEVICE		0	/* struct gaudi_nic_info_device */

/**
 * struct drm_gaudi_nic_info - query information (DRM_IOCTL_GAUDI_NIC_INFO)
 * @return_pointer: user pointer to the output structure of @op
 * @return_size: size of that buffer in bytes; the kernel writes
 *	min(@return_size, its own size of the structure) bytes
 * @op: GAUDI_NIC_INFO_*
 * @reserved: must be zero
 */
struct drm_gaudi_nic_info {
	__aligned_u64 return_pointer;
	__u32 return_size;
	__u32 op;
	__aligned_u64 reserved[2];
};

#define GAUDI_NIC_SERIAL_LEN		32

/**
 * struct gaudi_nic_info_device - output of GAUDI_NIC_INFO_DEVICE
 * @device_id: index N of the device (platform device gaudi_nic.N)
 * @num_ports: number of NIC ports on the device
 * @hbm_size: device memory (HBM) size in bytes
 * @hbm_free: HBM not allocated by anyone, in bytes
 * @page_size: smallest device page: allocation granule, alignment of
 *	sizes, addresses and offsets; also the CPU mapping granule
 * @max_page_size: largest page size GAUDI_NIC_MEM_ALLOC accepts
 * @device_va_base: start of the device virtual address range of a context
 * @device_va_size: size of that range
 * @driver_version: (major << 16) | (minor << 8) | patch
 * @pad: zero
 * @serial: NUL-terminated serial number
 * @reserved: zero
 */
struct gaudi_nic_info_device {
	__u32 device_id;
	__u32 num_ports;
	__aligned_u64 hbm_size;
	__aligned_u64 hbm_free;
	__aligned_u64 page_size;
	__aligned_u64 max_page_size;
	__aligned_u64 device_va_base;
	__aligned_u64 device_va_size;
	__u32 driver_version;
	__u32 pad;
	char serial[GAUDI_NIC_SERIAL_LEN];
	__aligned_u64 reserved[4];
};

/* -------------------------------------------------------------- MEMORY */

/* struct drm_gaudi_nic_memory.op */
#define GAUDI_NIC_MEM_ALLOC		0
#define GAUDI_NIC_MEM_FREE		1
#define GAUDI_NIC_MEM_MAP		2
#define GAUDI_NIC_MEM_UNMAP		3
#define GAUDI_NIC_MEM_EXPORT_DMABUF_FD	4

/* struct drm_gaudi_nic_memory.flags, GAUDI_NIC_MEM_ALLOC only */
#define GAUDI_NIC_MEM_CONTIGUOUS	(1U << 0)

/*
 * CPU mapping of an allocation: mmap() the accel fd, MAP_SHARED, at offset
 * handle << GAUDI_NIC_MMAP_HANDLE_SHIFT, length at most the allocation size.
 */
#define GAUDI_NIC_MMAP_HANDLE_SHIFT	16

struct gaudi_nic_mem_in_alloc {
	__aligned_u64 size;		/* bytes, multiple of page_size */
	__aligned_u64 page_size;	/* 0: the device page size */
};

struct gaudi_nic_mem_in_free {
	__aligned_u64 handle;
};

struct gaudi_nic_mem_in_map {
	__aligned_u64 handle;
	__aligned_u64 hint_addr;	/* 0 or a page-aligned wish */
};

struct gaudi_nic_mem_in_unmap {
	__aligned_u64 device_virt_addr;
};

struct gaudi_nic_mem_in_export_dmabuf_fd {
	__aligned_u64 device_virt_addr;	/* start of a mapping */
	__aligned_u64 size;		/* bytes exported */
	__aligned_u64 offset;		/* into the mapping */
	__u32 fd_flags;			/* O_CLOEXEC and an access mode */
	__u32 pad;
};

struct gaudi_nic_mem_out_export_dmabuf_fd {
	__u32 fd;
	__u32 pad;
};

/**
 * struct drm_gaudi_nic_memory - device memory (DRM_IOCTL_GAUDI_NIC_MEMORY)
 * @op: GAUDI_NIC_MEM_*
 * @flags: GAUDI_NIC_MEM_CONTIGUOUS for ALLOC; zero otherwise
 * @in: input of @op; the bytes @op does not use must be zero
 * @out: output of @op (ignored on input)
 * @reserved: must be zero
 */
struct drm_gaudi_nic_memory {
	__u32 op;
	__u32 flags;
	union {
		struct gaudi_nic_mem_in_alloc alloc;
		struct gaudi_nic_mem_in_free free;
		struct gaudi_nic_mem_in_map map;
		struct gaudi_nic_mem_in_unmap unmap;
		struct gaudi_nic_mem_in_export_dmabuf_fd export_dmabuf_fd;
		__aligned_u64 raw[4];
	} in;
	union {
		__aligned_u64 handle;			/* ALLOC */
		__aligned_u64 device_virt_addr;		/* MAP */
		struct gaudi_nic_mem_out_export_dmabuf_fd export_dmabuf_fd;
		__aligned_u64 raw[2];
	} out;
	__aligned_u64 reserved[2];
};

#define DRM_IOCTL_GAUDI_NIC_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_GAUDI_NIC_INFO, struct drm_gaudi_nic_info)
#define DRM_IOCTL_GAUDI_NIC_MEMORY \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_GAUDI_NIC_MEMORY, struct drm_gaudi_nic_memory)

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_DRM_GAUDI_NIC_ACCEL_H */
