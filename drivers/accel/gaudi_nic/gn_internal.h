/* SPDX-License-Identifier: GPL-2.0 */
/* gaudi_nic core: private structures of the accel part of the driver. */
#ifndef _GAUDI_NIC_INTERNAL_H
#define _GAUDI_NIC_INTERNAL_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <linux/gaudi_nic/core.h>

struct drm_file;
struct dma_buf;
struct platform_driver;

#define GN_DRV_MAJOR		1
#define GN_DRV_MINOR		0
#define GN_DRV_PATCH		0
#define GN_DRV_VERSION		((GN_DRV_MAJOR << 16) | (GN_DRV_MINOR << 8) | \
				 GN_DRV_PATCH)

#define GN_MAX_PAGE_SIZE	SZ_2M
/* Device virtual addresses of each context. */
#define GN_VA_BASE		0x1000000000000ULL
#define GN_VA_SIZE		0x100000000000ULL
#define GN_MAX_HANDLE		0x7fffffff

/* Memory manager of one device. */
struct gn_mem {
	/* protects bitmap and free_frames */
	struct mutex lock;
	unsigned long *bitmap;
	unsigned long nframes;
	unsigned long free_frames;
	/* statistics (sysfs) */
	atomic64_t allocs;		/* live allocations */
	atomic64_t exports;		/* live dma-bufs */
	atomic64_t exported_bytes;
	atomic64_t mmaps;		/* live CPU mapping VMAs */
	atomic64_t contexts;		/* live contexts */
	atomic64_t total_allocs;	/* since creation */
	atomic64_t total_exports;
	/* live exports (struct gn_export), for revocation (gn_dmabuf.c) */
	struct mutex exp_lock;
	struct list_head exp_list;
	/* the contexts of open files (gn_ctx.node), for a reset */
	struct mutex ctx_lock;
	struct list_head ctx_list;
	/* one reset (devlink reload, removal) at a time */
	struct mutex reset_lock;
	/* MiB one context may hold, 0: no quota (devlink param; READ_ONCE) */
	u32 quota_mb;
};

/* Per-open context: private handles and device address space. */
struct gn_ctx {
	struct kref ref;
	struct gaudi_nic_dev *gdev;	/* holds a drm_dev reference */
	/* protects handles, va, and the state of this context's allocations */
	struct mutex lock;
	struct xarray handles;		/* handle -> struct gn_alloc */
	struct maple_tree va;		/* device VA -> struct gn_mapping */
	u32 client_id;
	/* killed by a reset: every call fails with -EIO; under lock */
	bool dead;
	struct list_head node;		/* in gn_mem.ctx_list, if a file's */
	/* bytes of live allocations, against mem->quota_mb (gn_mem.c) */
	atomic64_t mem_total;
	atomic64_t mem_shared;		/* bytes exported as dma-buf */
};

/* One device memory allocation. */
struct gn_alloc {
	struct kref ref;
	struct gn_ctx *ctx;		/* owner; outlives the allocation */
	u64 size;
	u64 page_size;
	u32 handle;			/* 0 once freed */
	unsigned long mmap_pgoff;	/* CPU mapping offset, in pages */
	bool contiguous;
	/* frames given back by a reset while the struct lives on (VMAs) */
	bool reclaimed;
	/* what the VMAs map after a reset (gn_drv.c), freed with the struct */
	struct page *dummy;
	struct list_head reset_node;	/* gn_mem_reset()'s own list */
	struct gn_mapping *mapping;	/* device VA mapping, under ctx->lock */
	atomic_t exports;		/* live dma-bufs */
	atomic_t mmaps;			/* live CPU VMAs */
	unsigned long frames_per_chunk;
	unsigned long nchunks;
	unsigned long chunks[];		/* first frame of each chunk */
};

struct gn_mapping {
	u64 va;
	u64 range_start;
	u64 range_len;
	struct gn_alloc *alloc;
};

/* gn_mem.c */
int gn_mem_init(struct gaudi_nic_dev *gdev);
void gn_mem_fini(struct gaudi_nic_dev *gdev);
int gn_ctx_open(struct gaudi_nic_dev *gdev, struct drm_file *file);
void gn_ctx_close(struct drm_file *file);
void gn_ctx_get(struct gn_ctx *ctx);
void gn_ctx_put(struct gn_ctx *ctx);
void gn_alloc_get(struct gn_alloc *alloc);
void gn_alloc_put(struct gn_alloc *alloc);
u64 gn_alloc_frame_bus(struct gn_alloc *alloc, u64 offset);
unsigned long gn_alloc_frame(struct gn_alloc *alloc, u64 offset);
int gn_ioctl_info(struct drm_device *drm, void *data, struct drm_file *file);
int gn_ioctl_memory(struct drm_device *drm, void *data, struct drm_file *file);
struct gn_alloc *gn_ctx_mmap_lookup(struct gn_ctx *ctx, u64 handle, u64 len);
void gn_mem_reset(struct gaudi_nic_dev *gdev);
int gn_ctx_lock_live(struct gn_ctx *ctx);

/* gn_drv.c: true if @dev is a gaudi_nic platform device bound to us */
bool gaudi_nic_is_device(struct device *dev);

/* gn_dmabuf.c */
int gn_dmabuf_export(struct gn_ctx *ctx, struct gn_alloc *alloc, u64 offset,
		     u64 size, u32 fd_flags);
void gn_dmabuf_revoke_all(struct gaudi_nic_dev *gdev);

#endif /* _GAUDI_NIC_INTERNAL_H */
