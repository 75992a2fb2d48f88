// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic memory manager: HBM frame allocator, per-open contexts with
 * private handles and device virtual addresses, and the MEMORY and INFO
 * ioctls.
 *
 * Lifetimes: a context holds a reference on the DRM device; an allocation
 * is owned by a context and referenced by its handle, by each dma-buf that
 * exports it and by each CPU mapping (VMA) of it.  A dma-buf also holds a
 * reference on the context, so the context (and the device) outlive every
 * allocation.
 */
#include <linux/bitmap.h>
#include <linux/device.h>
#include <linux/fcntl.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_device.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <linux/gaudi_nic/hw.h>
#include <uapi/drm/gaudi_nic_accel.h>

#include "gn_internal.h"

int gn_mem_init(struct gaudi_nic_dev *gdev)
{
	struct gn_mem *mem;

	mem = kzalloc(sizeof(*mem), GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	mutex_init(&mem->lock);
	mutex_init(&mem->exp_lock);
	INIT_LIST_HEAD(&mem->exp_list);
	mutex_init(&mem->ctx_lock);
	INIT_LIST_HEAD(&mem->ctx_list);
	mutex_init(&mem->reset_lock);
	mem->nframes = gdev->hbm_size >> PAGE_SHIFT;
	mem->free_frames = mem->nframes;
	mem->bitmap = kvcalloc(BITS_TO_LONGS(mem->nframes), sizeof(long),
			       GFP_KERNEL);
	if (!mem->bitmap) {
		kfree(mem);
		return -ENOMEM;
	}
	gdev->mem = mem;
	return 0;
}

/* Runs when the DRM device is released: every allocation is gone. */
void gn_mem_fini(struct gaudi_nic_dev *gdev)
{
	struct gn_mem *mem = gdev->mem;

	if (!mem)
		return;
	WARN_ON(mem->free_frames != mem->nframes);
	WARN_ON(!list_empty(&mem->exp_list));
	WARN_ON(!list_empty(&mem->ctx_list));
	kvfree(mem->bitmap);
	mutex_destroy(&mem->reset_lock);
	mutex_destroy(&mem->ctx_lock);
	mutex_destroy(&mem->exp_lock);
	mutex_destroy(&mem->lock);
	kfree(mem);
	gdev->mem = NULL;
}

static int gn_mem_reserve(struct gn_mem *mem, struct gn_alloc *alloc,
			  unsigned long align_mask)
{
	unsigned long fpc = alloc->frames_per_chunk;
	unsigned long start = 0, i, f;
	int ret = 0;

	mutex_lock(&mem->lock);
	if (alloc->nchunks * fpc > mem->free_frames) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < alloc->nchunks; i++) {
		f = bitmap_find_next_zero_area(mem->bitmap, mem->nframes,
					       start, fpc, align_mask);
		if (f >= mem->nframes) {
			while (i--)
				bitmap_clear(mem->bitmap, alloc->chunks[i], fpc);
			ret = -ENOMEM;
			goto out;
		}
		bitmap_set(mem->bitmap, f, fpc);
		alloc->chunks[i] = f;
		start = f + fpc;
	}
	mem->free_frames -= alloc->nchunks * fpc;
out:
	mutex_unlock(&mem->lock);
	return ret;
}

static void gn_mem_unreserve(struct gn_mem *mem, struct gn_alloc *alloc,
			     unsigned long nchunks)
{
	unsigned long fpc = alloc->frames_per_chunk, i;

	mutex_lock(&mem->lock);
	for (i = 0; i < nchunks; i++)
		bitmap_clear(mem->bitmap, alloc->chunks[i], fpc);
	mem->free_frames += nchunks * fpc;
	mutex_unlock(&mem->lock);
}

unsigned long gn_alloc_frame(struct gn_alloc *alloc, u64 offset)
{
	u64 chunk_bytes = (u64)alloc->frames_per_chunk << PAGE_SHIFT;

	return alloc->chunks[div64_u64(offset, chunk_bytes)] +
	       ((offset % chunk_bytes) >> PAGE_SHIFT);
}

/* Bus address of byte @offset of @alloc. */
u64 gn_alloc_frame_bus(struct gn_alloc *alloc, u64 offset)
{
	return alloc->ctx->gdev->bus_base +
	       ((u64)gn_alloc_frame(alloc, offset) << PAGE_SHIFT) +
	       offset_in_page(offset);
}

void gn_alloc_get(struct gn_alloc *alloc)
{
	kref_get(&alloc->ref);
}

/* HBM backing, through the hardware's ops (frames are PAGE_SIZE). */
static int gn_hbm_populate(struct gaudi_nic_dev *gdev, unsigned long frame,
			   unsigned long n)
{
	return gdev->hw->ops->hbm_populate(gdev->hw, frame, n);
}

static void gn_hbm_discard(struct gaudi_nic_dev *gdev, unsigned long frame,
			   unsigned long n)
{
	gdev->hw->ops->hbm_discard(gdev->hw, frame, n);
}

/*
 * The frames of @alloc go back to the allocator, scrubbed: the next owner
 * of these frames starts from zeroes.
 */
static void gn_alloc_scrub(struct gn_alloc *alloc)
{
	struct gaudi_nic_dev *gdev = alloc->ctx->gdev;
	unsigned long i;

	for (i = 0; i < alloc->nchunks; i++)
		gn_hbm_discard(gdev, alloc->chunks[i], alloc->frames_per_chunk);
	gn_mem_unreserve(gdev->mem, alloc, alloc->nchunks);
}

static void gn_alloc_release(struct kref *ref)
{
	struct gn_alloc *alloc = container_of(ref, struct gn_alloc, ref);
	struct gn_ctx *ctx = alloc->ctx;
	struct gaudi_nic_dev *gdev = ctx->gdev;

	if (!alloc->reclaimed)
		gn_alloc_scrub(alloc);
	if (alloc->dummy)
		__free_page(alloc->dummy);
	atomic64_sub(alloc->size, &ctx->mem_total);
	atomic64_dec(&gdev->mem->allocs);
	kvfree(alloc);
}

void gn_alloc_put(struct gn_alloc *alloc)
{
	kref_put(&alloc->ref, gn_alloc_release);
}

/* ---------------------------------------------------------- contexts */

/*
 * A context (the file, then its dma-bufs) pins the module behind the
 * hardware ops: it is the last to call them (hbm_discard, release).
 */
static struct gn_ctx *gn_ctx_create(struct gaudi_nic_dev *gdev)
{
	struct gn_ctx *ctx;

	if (!try_module_get(gdev->hw->owner))
		return ERR_PTR(-ENODEV);
	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx) {
		module_put(gdev->hw->owner);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&ctx->ref);
	mutex_init(&ctx->lock);
	xa_init_flags(&ctx->handles, XA_FLAGS_ALLOC1);
	mt_init_flags(&ctx->va, MT_FLAGS_ALLOC_RANGE);
	drm_dev_get(&gdev->drm);
	ctx->gdev = gdev;
	atomic64_inc(&gdev->mem->contexts);
	return ctx;
}

int gn_ctx_open(struct gaudi_nic_dev *gdev, struct drm_file *file)
{
	struct gn_ctx *ctx = gn_ctx_create(gdev);
	struct gn_mem *mem = gdev->mem;

	if (IS_ERR(ctx))
		return PTR_ERR(ctx);
	mutex_lock(&mem->ctx_lock);
	list_add_tail(&ctx->node, &mem->ctx_list);
	mutex_unlock(&mem->ctx_lock);
	file->driver_priv = ctx;
	return 0;
}

/*
 * Lock @ctx for a call of its user (an ioctl, mmap, a fault): 0, or -EIO
 * (not locked) once a reset killed it.
 */
int gn_ctx_lock_live(struct gn_ctx *ctx)
{
	mutex_lock(&ctx->lock);
	if (!ctx->dead)
		return 0;
	mutex_unlock(&ctx->lock);
	return -EIO;
}

void gn_ctx_get(struct gn_ctx *ctx)
{
	kref_get(&ctx->ref);
}

static void gn_ctx_release(struct kref *ref)
{
	struct gn_ctx *ctx = container_of(ref, struct gn_ctx, ref);
	struct gaudi_nic_dev *gdev = ctx->gdev;
	struct module *owner = gdev->hw->owner;

	WARN_ON(atomic64_read(&ctx->mem_total));
	atomic64_dec(&gdev->mem->contexts);
	xa_destroy(&ctx->handles);
	mutex_destroy(&ctx->lock);
	kfree(ctx);
	drm_dev_put(&gdev->drm);
	module_put(owner);
}

void gn_ctx_put(struct gn_ctx *ctx)
{
	kref_put(&ctx->ref, gn_ctx_release);
}

static void gn_unmap_locked(struct gn_ctx *ctx, struct gn_mapping *m)
{
	lockdep_assert_held(&ctx->lock);
	mtree_erase(&ctx->va, m->range_start);
	m->alloc->mapping = NULL;
	kfree(m);
}

/*
 * Drop every handle and device VA mapping of @ctx; each handle's reference
 * goes to @list if given, with a reference on @ctx (the file may close
 * meanwhile, and the context must outlive its allocations), else is put.
 */
static void gn_ctx_drop_handles(struct gn_ctx *ctx, struct list_head *list)
{
	struct gn_alloc *alloc;
	unsigned long handle;

	lockdep_assert_held(&ctx->lock);
	xa_for_each(&ctx->handles, handle, alloc) {
		if (alloc->mapping)
			gn_unmap_locked(ctx, alloc->mapping);
		xa_erase(&ctx->handles, handle);
		alloc->handle = 0;
		if (list) {
			gn_ctx_get(ctx);
			list_add_tail(&alloc->reset_node, list);
		} else {
			gn_alloc_put(alloc);
		}
	}
}

/*
 * The file is closed: drop every handle and mapping.  Allocations that are
 * exported stay alive until their dma-bufs are released.
 */
void gn_ctx_close(struct drm_file *file)
{
	struct gn_ctx *ctx = file->driver_priv;
	struct gn_mem *mem = ctx->gdev->mem;

	mutex_lock(&mem->ctx_lock);
	list_del(&ctx->node);
	mutex_unlock(&mem->ctx_lock);
	mutex_lock(&ctx->lock);
	gn_ctx_drop_handles(ctx, NULL);
	mtree_destroy(&ctx->va);
	mutex_unlock(&ctx->lock);
	file->driver_priv = NULL;
	gn_ctx_put(ctx);
}

/*
 * Reset (devlink reload) or removal of the device, in this order:
 *  1. every open context dies: its handles and device VAs go, and each
 *     later call on it fails with -EIO (-ENODEV from the DRM core once
 *     the device is unplugged);
 *  2. every CPU mapping of the HBM is zapped (a later access maps a
 *     zeroed page of its own after a reset, SIGBUS after a removal:
 *     gn_drv.c);
 *  3. every dma-buf export is revoked (gn_dmabuf_revoke_all()): revocable
 *     importers have stopped using it when that returns;
 *  4. only then the frames of the dead contexts' allocations are scrubbed
 *     and given back, but for those an importer that can only pin still
 *     holds (the ownership rule: they stay its until it detaches).
 * The device then serves new opens from a full HBM.  HBM held by the other
 * functions (gaudi_nic_hbm_alloc()) is theirs to give back.
 */
void gn_mem_reset(struct gaudi_nic_dev *gdev)
{
	struct gn_mem *mem = gdev->mem;
	struct gn_alloc *alloc, *tmp;
	struct drm_file *file;
	struct gn_ctx *ctx;
	LIST_HEAD(dead);

	mutex_lock(&mem->reset_lock);
	mutex_lock(&mem->ctx_lock);
	list_for_each_entry(ctx, &mem->ctx_list, node) {
		mutex_lock(&ctx->lock);
		WRITE_ONCE(ctx->dead, true);
		gn_ctx_drop_handles(ctx, &dead);
		mutex_unlock(&ctx->lock);
	}
	mutex_unlock(&mem->ctx_lock);

	/* a fault that raced with the above inserted its page before it */
	mutex_lock(&gdev->drm.filelist_mutex);
	list_for_each_entry(file, &gdev->drm.filelist, lhead)
		if (file->filp)
			unmap_mapping_range(file->filp->f_mapping, 0, 0, 1);
	mutex_unlock(&gdev->drm.filelist_mutex);

	gn_dmabuf_revoke_all(gdev);

	list_for_each_entry_safe(alloc, tmp, &dead, reset_node) {
		ctx = alloc->ctx;
		list_del(&alloc->reset_node);
		if (!atomic_read(&alloc->exports)) {
			gn_alloc_scrub(alloc);
			alloc->reclaimed = true;
		}
		gn_alloc_put(alloc);
		/* maybe the context's last reference, never the DRM device's */
		gn_ctx_put(ctx);
	}
	mutex_unlock(&mem->reset_lock);
}

/* ------------------------------------------------------------- ioctls */

int gn_ioctl_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct gaudi_nic_dev *gdev = to_gaudi_nic_dev(drm);
	struct drm_gaudi_nic_info *args = data;
	struct gaudi_nic_info_device info = {};
	struct gn_ctx *ctx = file->driver_priv;
	u32 size;

	if (READ_ONCE(ctx->dead))
		return -EIO;
	if (args->reserved[0] || args->reserved[1])
		return -EINVAL;
	if (args->op != GAUDI_NIC_INFO_DEVICE || !args->return_size)
		return -EINVAL;

	info.device_id = gdev->id;
	info.num_ports = gdev->num_ports;
	info.hbm_size = gdev->hbm_size;
	info.hbm_free = (u64)READ_ONCE(gdev->mem->free_frames) << PAGE_SHIFT;
	info.page_size = PAGE_SIZE;
	info.max_page_size = GN_MAX_PAGE_SIZE;
	info.device_va_base = GN_VA_BASE;
	info.device_va_size = GN_VA_SIZE;
	info.driver_version = GN_DRV_VERSION;
	strscpy(info.serial, gdev->serial, sizeof(info.serial));

	size = min_t(u32, args->return_size, sizeof(info));
	if (copy_to_user(u64_to_user_ptr(args->return_pointer), &info, size))
		return -EFAULT;
	return 0;
}

/* The bytes of @args->in past @used must be zero. */
static bool gn_in_tail_zero(struct drm_gaudi_nic_memory *args, size_t used)
{
	return !memchr_inv((u8 *)&args->in + used, 0, sizeof(args->in) - used);
}

/*
 * Charge @size bytes to @ctx against the device's quota (the devlink
 * param max_hbm_mb_per_ctx, checked at each allocation, so a new value
 * applies to the next one), counting its allocations that are still
 * exported after a free or a close: 0, or -EDQUOT (and one rate-limited
 * line in the log) if the context would pass its quota.
 */
static int gn_ctx_charge(struct gn_ctx *ctx, u64 size)
{
	u64 quota = (u64)READ_ONCE(ctx->gdev->mem->quota_mb) << 20;
	s64 held = atomic64_read(&ctx->mem_total);

	do {
		if (quota && (size > quota || held > quota - size)) {
			dev_warn_ratelimited(ctx->gdev->drm.dev,
					     "%s[%d]: HBM allocation of %llu bytes refused: the context holds %lld, its quota is %llu MiB; raise it with: devlink dev param set platform/%s name max_hbm_mb_per_ctx value MIB cmode runtime (0: no quota)\n",
					     current->comm,
					     task_tgid_nr(current), size, held,
					     quota >> 20,
					     dev_name(ctx->gdev->drm.dev));
			return -EDQUOT;
		}
	} while (!atomic64_try_cmpxchg(&ctx->mem_total, &held, held + size));
	return 0;
}

/*
 * A populated (zeroed) allocation of @size bytes for @ctx, in chunks of
 * @page_size (one chunk if @contig); the caller checked the sizes.
 */
static struct gn_alloc *gn_alloc_create(struct gn_ctx *ctx, u64 size,
					u64 page_size, bool contig)
{
	struct gaudi_nic_dev *gdev = ctx->gdev;
	unsigned long nchunks, fpc, i;
	struct gn_alloc *alloc;
	int ret;

	if (size > gdev->hbm_size)
		return ERR_PTR(-ENOMEM);
	ret = gn_ctx_charge(ctx, size);
	if (ret)
		return ERR_PTR(ret);
	nchunks = contig ? 1 : size / page_size;
	fpc = contig ? size >> PAGE_SHIFT : page_size >> PAGE_SHIFT;
	alloc = kvzalloc(struct_size(alloc, chunks, nchunks),
			 GFP_KERNEL_ACCOUNT);
	if (!alloc) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	kref_init(&alloc->ref);
	alloc->ctx = ctx;
	alloc->size = size;
	alloc->page_size = page_size;
	alloc->contiguous = contig;
	alloc->nchunks = nchunks;
	alloc->frames_per_chunk = fpc;

	ret = gn_mem_reserve(gdev->mem, alloc, (page_size >> PAGE_SHIFT) - 1);
	if (ret)
		goto err_free;
	for (i = 0; i < nchunks; i++) {
		ret = gn_hbm_populate(gdev, alloc->chunks[i], fpc);
		if (ret) {
			while (i--)
				gn_hbm_discard(gdev, alloc->chunks[i], fpc);
			goto err_unreserve;
		}
	}
	atomic64_inc(&gdev->mem->allocs);
	atomic64_inc(&gdev->mem->total_allocs);
	return alloc;

err_unreserve:
	gn_mem_unreserve(gdev->mem, alloc, nchunks);
err_free:
	kvfree(alloc);
err_uncharge:
	atomic64_sub(size, &ctx->mem_total);
	return ERR_PTR(ret);
}

static int gn_mem_alloc(struct gn_ctx *ctx, struct drm_gaudi_nic_memory *args)
{
	u64 size = args->in.alloc.size;
	u64 page_size = args->in.alloc.page_size;
	struct gn_alloc *alloc;
	u32 handle;
	int ret;

	if (args->flags & ~GAUDI_NIC_MEM_CONTIGUOUS ||
	    !gn_in_tail_zero(args, sizeof(args->in.alloc)))
		return -EINVAL;
	if (!page_size)
		page_size = PAGE_SIZE;
	if (!is_power_of_2(page_size) || page_size < PAGE_SIZE ||
	    page_size > GN_MAX_PAGE_SIZE)
		return -EINVAL;
	if (!size || !IS_ALIGNED(size, page_size))
		return -EINVAL;
	alloc = gn_alloc_create(ctx, size, page_size,
				args->flags & GAUDI_NIC_MEM_CONTIGUOUS);
	if (IS_ERR(alloc))
		return PTR_ERR(alloc);

	ret = gn_ctx_lock_live(ctx);
	if (ret) {
		gn_alloc_put(alloc);
		return ret;
	}
	ret = xa_alloc(&ctx->handles, &handle, alloc,
		       XA_LIMIT(1, GN_MAX_HANDLE), GFP_KERNEL_ACCOUNT);
	if (!ret) {
		alloc->handle = handle;
		alloc->mmap_pgoff = (unsigned long)handle <<
			(GAUDI_NIC_MMAP_HANDLE_SHIFT - PAGE_SHIFT);
	}
	mutex_unlock(&ctx->lock);
	if (ret) {
		gn_alloc_put(alloc);
		return ret == -EBUSY ? -ENOSPC : ret;
	}
	memset(&args->out, 0, sizeof(args->out));
	args->out.handle = handle;
	return 0;
}

static bool gn_alloc_busy(struct gn_alloc *alloc)
{
	return atomic_read(&alloc->exports) || atomic_read(&alloc->mmaps);
}

static int gn_mem_free(struct gn_ctx *ctx, struct drm_gaudi_nic_memory *args)
{
	u64 handle = args->in.free.handle;
	struct gn_alloc *alloc;
	int ret = 0;

	if (args->flags || !gn_in_tail_zero(args, sizeof(args->in.free)))
		return -EINVAL;
	if (!handle || handle > GN_MAX_HANDLE)
		return -ENOENT;

	ret = gn_ctx_lock_live(ctx);
	if (ret)
		return ret;
	alloc = xa_load(&ctx->handles, handle);
	if (!alloc)
		ret = -ENOENT;
	else if (alloc->mapping || gn_alloc_busy(alloc))
		ret = -EBUSY;
	else
		xa_erase(&ctx->handles, handle);
	if (!ret)
		alloc->handle = 0;
	mutex_unlock(&ctx->lock);
	if (!ret)
		gn_alloc_put(alloc);
	return ret;
}

static int gn_mem_map(struct gn_ctx *ctx, struct drm_gaudi_nic_memory *args)
{
	u64 handle = args->in.map.handle, hint = args->in.map.hint_addr;
	unsigned long start;
	struct gn_mapping *m;
	struct gn_alloc *alloc;
	u64 len;
	int ret;

	if (args->flags || !gn_in_tail_zero(args, sizeof(args->in.map)))
		return -EINVAL;
	if (!IS_ALIGNED(hint, PAGE_SIZE))
		return -EINVAL;
	if (!handle || handle > GN_MAX_HANDLE)
		return -ENOENT;

	m = kzalloc(sizeof(*m), GFP_KERNEL_ACCOUNT);
	if (!m)
		return -ENOMEM;

	ret = gn_ctx_lock_live(ctx);
	if (ret) {
		kfree(m);
		return ret;
	}
	alloc = xa_load(&ctx->handles, handle);
	if (!alloc) {
		ret = -ENOENT;
		goto err_unlock;
	}
	if (alloc->mapping) {
		ret = -EBUSY;
		goto err_unlock;
	}
	m->alloc = alloc;

	ret = -EBUSY;
	/* The hint is honoured when it is free and suitably aligned. */
	if (hint && IS_ALIGNED(hint, alloc->page_size) && hint >= GN_VA_BASE &&
	    hint - GN_VA_BASE < GN_VA_SIZE &&
	    alloc->size <= GN_VA_SIZE - (hint - GN_VA_BASE)) {
		ret = mtree_insert_range(&ctx->va, hint, hint + alloc->size - 1,
					 m, GFP_KERNEL_ACCOUNT);
		if (!ret) {
			m->va = hint;
			m->range_start = hint;
			m->range_len = alloc->size;
		}
	}
	if (ret) {
		len = alloc->size + alloc->page_size - PAGE_SIZE;
		ret = mtree_alloc_range(&ctx->va, &start, m, len, GN_VA_BASE,
					GN_VA_BASE + GN_VA_SIZE - 1,
					GFP_KERNEL_ACCOUNT);
		if (ret) {
			ret = ret == -EBUSY ? -ENOSPC : ret;
			goto err_unlock;
		}
		m->range_start = start;
		m->range_len = len;
		m->va = round_up((u64)start, alloc->page_size);
	}
	alloc->mapping = m;
	memset(&args->out, 0, sizeof(args->out));
	args->out.device_virt_addr = m->va;
	mutex_unlock(&ctx->lock);
	return 0;

err_unlock:
	mutex_unlock(&ctx->lock);
	kfree(m);
	return ret;
}

/* The mapping that starts at @va, or NULL. */
static struct gn_mapping *gn_mapping_find(struct gn_ctx *ctx, u64 va)
{
	struct gn_mapping *m;

	lockdep_assert_held(&ctx->lock);
	if (va < GN_VA_BASE || va - GN_VA_BASE >= GN_VA_SIZE)
		return NULL;
	m = mtree_load(&ctx->va, va);
	return m && m->va == va ? m : NULL;
}

static int gn_mem_unmap(struct gn_ctx *ctx, struct drm_gaudi_nic_memory *args)
{
	u64 va = args->in.unmap.device_virt_addr;
	struct gn_mapping *m;
	int ret = 0;

	if (args->flags || !gn_in_tail_zero(args, sizeof(args->in.unmap)))
		return -EINVAL;
	if (!IS_ALIGNED(va, PAGE_SIZE))
		return -EINVAL;

	ret = gn_ctx_lock_live(ctx);
	if (ret)
		return ret;
	m = gn_mapping_find(ctx, va);
	if (!m)
		ret = -ENOENT;
	else if (atomic_read(&m->alloc->exports))
		ret = -EBUSY;
	else
		gn_unmap_locked(ctx, m);
	mutex_unlock(&ctx->lock);
	return ret;
}

static int gn_mem_export(struct gn_ctx *ctx, struct drm_gaudi_nic_memory *args)
{
	struct gaudi_nic_mem_in_export_dmabuf_fd *in = &args->in.export_dmabuf_fd;
	u32 fd_flags = in->fd_flags;
	struct gn_mapping *m;
	u64 end;
	int ret;

	if (args->flags || in->pad ||
	    !gn_in_tail_zero(args, sizeof(*in)))
		return -EINVAL;
	if (fd_flags & ~(O_CLOEXEC | O_ACCMODE) ||
	    (fd_flags & O_ACCMODE) == O_ACCMODE)
		return -EINVAL;
	if (!in->size || !IS_ALIGNED(in->device_virt_addr, PAGE_SIZE) ||
	    !IS_ALIGNED(in->size, PAGE_SIZE) ||
	    !IS_ALIGNED(in->offset, PAGE_SIZE))
		return -EINVAL;
	if (check_add_overflow(in->offset, in->size, &end))
		return -EINVAL;

	ret = gn_ctx_lock_live(ctx);
	if (ret)
		return ret;
	m = gn_mapping_find(ctx, in->device_virt_addr);
	if (!m) {
		ret = -ENOENT;
		goto out;
	}
	if (end > m->alloc->size) {
		ret = -EINVAL;
		goto out;
	}
	ret = gn_dmabuf_export(ctx, m->alloc, in->offset, in->size, fd_flags);
	if (ret >= 0) {
		memset(&args->out, 0, sizeof(args->out));
		args->out.export_dmabuf_fd.fd = ret;
		ret = 0;
	}
out:
	mutex_unlock(&ctx->lock);
	return ret;
}

int gn_ioctl_memory(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_gaudi_nic_memory *args = data;
	struct gn_ctx *ctx = file->driver_priv;

	if (READ_ONCE(ctx->dead))
		return -EIO;
	if (args->reserved[0] || args->reserved[1])
		return -EINVAL;

	switch (args->op) {
	case GAUDI_NIC_MEM_ALLOC:
		return gn_mem_alloc(ctx, args);
	case GAUDI_NIC_MEM_FREE:
		return gn_mem_free(ctx, args);
	case GAUDI_NIC_MEM_MAP:
		return gn_mem_map(ctx, args);
	case GAUDI_NIC_MEM_UNMAP:
		return gn_mem_unmap(ctx, args);
	case GAUDI_NIC_MEM_EXPORT_DMABUF_FD:
		return gn_mem_export(ctx, args);
	default:
		return -EINVAL;
	}
}

/* A new CPU mapping of @handle, @len bytes; counts as a user of it. */
struct gn_alloc *gn_ctx_mmap_lookup(struct gn_ctx *ctx, u64 handle, u64 len)
{
	struct gn_alloc *alloc;

	if (!handle || handle > GN_MAX_HANDLE)
		return ERR_PTR(-ENOENT);
	if (gn_ctx_lock_live(ctx))
		return ERR_PTR(-EIO);
	alloc = xa_load(&ctx->handles, handle);
	if (!alloc) {
		alloc = ERR_PTR(-ENOENT);
	} else if (len > alloc->size) {
		alloc = ERR_PTR(-EINVAL);
	} else {
		gn_alloc_get(alloc);
		atomic_inc(&alloc->mmaps);
		atomic64_inc(&ctx->gdev->mem->mmaps);
	}
	mutex_unlock(&ctx->lock);
	return alloc;
}

/* ------------------------------------------- HBM for the other functions */

/*
 * HBM the device's other functions hold (the RDMA driver's device memory,
 * ibv_alloc_dm()): an allocation of a context of its own, with no file,
 * handle or device VA.  That context holds the DRM device and the module
 * behind the hardware ops, so the frames are given back (and scrubbed)
 * through those ops whenever the holder lets go, even after the device
 * was removed.
 */
struct gaudi_nic_hbm {
	struct gn_ctx *ctx;
	struct gn_alloc *alloc;
};

struct gaudi_nic_hbm *gaudi_nic_hbm_alloc(struct gaudi_nic_dev *gdev,
					  u64 size)
{
	struct gaudi_nic_hbm *hbm;
	struct gn_alloc *alloc;
	struct gn_ctx *ctx;
	int idx;

	if (!size || size > gdev->hbm_size)
		return ERR_PTR(-EINVAL);
	hbm = kzalloc(sizeof(*hbm), GFP_KERNEL_ACCOUNT);
	if (!hbm)
		return ERR_PTR(-ENOMEM);
	if (!drm_dev_enter(&gdev->drm, &idx)) {
		kfree(hbm);
		return ERR_PTR(-ENODEV);
	}
	ctx = gn_ctx_create(gdev);
	if (IS_ERR(ctx)) {
		alloc = ERR_CAST(ctx);
		goto out;
	}
	alloc = gn_alloc_create(ctx, PAGE_ALIGN(size), PAGE_SIZE, false);
	if (IS_ERR(alloc)) {
		gn_ctx_put(ctx);
		goto out;
	}
	hbm->ctx = ctx;
	hbm->alloc = alloc;
out:
	drm_dev_exit(idx);
	if (IS_ERR(alloc)) {
		kfree(hbm);
		return ERR_CAST(alloc);
	}
	return hbm;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_hbm_alloc, GAUDI_NIC);

void gaudi_nic_hbm_free(struct gaudi_nic_hbm *hbm)
{
	if (!hbm)
		return;
	gn_alloc_put(hbm->alloc);
	gn_ctx_put(hbm->ctx);
	kfree(hbm);
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_hbm_free, GAUDI_NIC);

u64 gaudi_nic_hbm_size(const struct gaudi_nic_hbm *hbm)
{
	return hbm->alloc->size;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_hbm_size, GAUDI_NIC);

u64 gaudi_nic_hbm_bus(const struct gaudi_nic_hbm *hbm, u64 offset)
{
	return gn_alloc_frame_bus(hbm->alloc, offset);
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_hbm_bus, GAUDI_NIC);

struct page *gaudi_nic_hbm_page(const struct gaudi_nic_hbm *hbm, u64 offset)
{
	struct gaudi_nic_dev *gdev = hbm->ctx->gdev;
	struct page *page = NULL;
	int idx;

	if (offset >= hbm->alloc->size || !drm_dev_enter(&gdev->drm, &idx))
		return NULL;
	page = gdev->hw->ops->hbm_get_page(gdev->hw,
					   gn_alloc_frame(hbm->alloc, offset));
	drm_dev_exit(idx);
	return page;
}
EXPORT_SYMBOL_NS_GPL(gaudi_nic_hbm_page, GAUDI_NIC);
