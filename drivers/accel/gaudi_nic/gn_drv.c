// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic core driver: platform driver for the (emulated) device, DRM
 * accel node, CPU mappings of device memory, statistics.
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/sysfs.h>
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>
#include <linux/gaudi_nic/hw.h>
#include <uapi/drm/gaudi_nic_accel.h>

#include "gn_internal.h"
#include "eth.h"

/* ------------------------------------------------------ CPU mappings */

static void gn_vm_open(struct vm_area_struct *vma)
{
	struct gn_alloc *alloc = vma->vm_private_data;

	gn_alloc_get(alloc);
	atomic_inc(&alloc->mmaps);
	atomic64_inc(&alloc->ctx->gdev->mem->mmaps);
}

static void gn_vm_close(struct vm_area_struct *vma)
{
	struct gn_alloc *alloc = vma->vm_private_data;

	atomic64_dec(&alloc->ctx->gdev->mem->mmaps);
	atomic_dec(&alloc->mmaps);
	gn_alloc_put(alloc);
}

/*
 * A CPU mapping of memory a reset took back maps a zeroed page of its own
 * allocation instead, as TTM's drivers do after a hot unplug: a process
 * in the middle of a collective reads zeroes and gets its error from the
 * API (-EIO) rather than a SIGBUS, and its writes reach neither the HBM
 * nor anyone else.  The page goes with the allocation, after the last
 * VMA that can map it.
 */
static vm_fault_t gn_vm_fault_reset(struct vm_fault *vmf,
				    struct gn_alloc *alloc)
{
	struct page *page = READ_ONCE(alloc->dummy), *new;

	if (!page) {
		new = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!new)
			return VM_FAULT_OOM;
		page = cmpxchg(&alloc->dummy, NULL, new);
		if (page)
			__free_page(new);
		else
			page = new;
	}
	return vmf_insert_pfn(vmf->vma, vmf->address, page_to_pfn(page));
}

static vm_fault_t gn_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct gn_alloc *alloc = vma->vm_private_data;
	struct gaudi_nic_dev *gdev = alloc->ctx->gdev;
	unsigned long pgoff = vmf->pgoff - alloc->mmap_pgoff;
	struct page *page;
	vm_fault_t ret;
	int idx;

	/* A removed device has no BAR any more. */
	if (!drm_dev_enter(&gdev->drm, &idx))
		return VM_FAULT_SIGBUS;
	/*
	 * A reset took the frames back (gn_mem_reset() zaps after it marks
	 * the context dead, so a page inserted here before goes too).
	 */
	if (gn_ctx_lock_live(alloc->ctx)) {
		ret = gn_vm_fault_reset(vmf, alloc);
		goto out_dev;
	}
	if (pgoff >= alloc->size >> PAGE_SHIFT) {
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	page = gdev->hw->ops->hbm_get_page(gdev->hw,
					   gn_alloc_frame(alloc,
							  (u64)pgoff << PAGE_SHIFT));
	if (!page) {
		ret = VM_FAULT_SIGBUS;
		goto out;
	}
	/* The VMA's reference on the allocation keeps the frame populated. */
	ret = vmf_insert_pfn(vma, vmf->address, page_to_pfn(page));
	put_page(page);
out:
	mutex_unlock(&alloc->ctx->lock);
out_dev:
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct gn_vm_ops = {
	.open = gn_vm_open,
	.close = gn_vm_close,
	.fault = gn_vm_fault,
};

static int gn_mmap(struct file *filp, struct vm_area_struct *vma)
{
	struct drm_file *file = filp->private_data;
	struct gaudi_nic_dev *gdev = to_gaudi_nic_dev(file->minor->dev);
	unsigned long shift = GAUDI_NIC_MMAP_HANDLE_SHIFT - PAGE_SHIFT;
	struct gn_alloc *alloc;
	int idx, ret = 0;

	if (!drm_dev_enter(&gdev->drm, &idx))
		return -ENODEV;
	if (!(vma->vm_flags & VM_SHARED) ||
	    vma->vm_pgoff & ((1UL << shift) - 1)) {
		ret = -EINVAL;
		goto out;
	}
	alloc = gn_ctx_mmap_lookup(file->driver_priv, vma->vm_pgoff >> shift,
				   vma->vm_end - vma->vm_start);
	if (IS_ERR(alloc)) {
		ret = PTR_ERR(alloc);
		goto out;
	}
	vm_flags_set(vma, VM_PFNMAP | VM_IO | VM_DONTEXPAND | VM_DONTDUMP |
		     VM_DONTCOPY);
	vma->vm_private_data = alloc;
	vma->vm_ops = &gn_vm_ops;
out:
	drm_dev_exit(idx);
	return ret;
}

static const struct file_operations gn_fops = {
	.owner = THIS_MODULE,
	.open = accel_open,
	.release = drm_release,
	.unlocked_ioctl = drm_ioctl,
	.compat_ioctl = drm_compat_ioctl,
	.poll = drm_poll,
	.read = drm_read,
	.llseek = noop_llseek,
	.mmap = gn_mmap,
	.show_fdinfo = drm_show_fdinfo,
	.fop_flags = FOP_UNSIGNED_OFFSET,
};

/* ----------------------------------------------------------- DRM part */

static int gn_drm_open(struct drm_device *drm, struct drm_file *file)
{
	return gn_ctx_open(to_gaudi_nic_dev(drm), file);
}

static void gn_drm_postclose(struct drm_device *drm, struct drm_file *file)
{
	gn_ctx_close(file);
}

static void gn_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct gn_ctx *ctx = file->driver_priv;
	struct drm_memory_stats stats = {};
	u64 total = atomic64_read(&ctx->mem_total);

	stats.shared = atomic64_read(&ctx->mem_shared);
	stats.private = total > stats.shared ? total - stats.shared : 0;
	stats.resident = total;
	drm_print_memory_stats(p, &stats, DRM_GEM_OBJECT_RESIDENT, "hbm");
}

static const struct drm_ioctl_desc gn_ioctls[] = {
	DRM_IOCTL_DEF_DRV(GAUDI_NIC_INFO, gn_ioctl_info, 0),
	DRM_IOCTL_DEF_DRV(GAUDI_NIC_MEMORY, gn_ioctl_memory, 0),
};

static const struct drm_driver gn_drm_driver = {
	.driver_features = DRIVER_COMPUTE_ACCEL,
	.open = gn_drm_open,
	.postclose = gn_drm_postclose,
	.show_fdinfo = gn_show_fdinfo,
	.ioctls = gn_ioctls,
	.num_ioctls = ARRAY_SIZE(gn_ioctls),
	.fops = &gn_fops,
	.name = GAUDI_NIC_DRV_NAME,
	.desc = "Gaudi-class accelerator with on-die RoCE NIC (emulated)",
	.date = "20260101",
	.major = GN_DRV_MAJOR,
	.minor = GN_DRV_MINOR,
	.patchlevel = GN_DRV_PATCH,
};

/* ----------------------------------------------------- sysfs statistics */

#define GN_MEM_ATTR(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	struct gaudi_nic_dev *gdev = dev_get_drvdata(dev);		\
	struct gn_mem *mem __maybe_unused = gdev->mem;			\
									\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(_expr));	\
}									\
static DEVICE_ATTR_RO(_name)

GN_MEM_ATTR(hbm_size, gdev->hbm_size);
GN_MEM_ATTR(hbm_free, (u64)READ_ONCE(mem->free_frames) << PAGE_SHIFT);
GN_MEM_ATTR(hbm_used, (u64)(mem->nframes - READ_ONCE(mem->free_frames))
		      << PAGE_SHIFT);
GN_MEM_ATTR(mem_allocs, atomic64_read(&mem->allocs));
GN_MEM_ATTR(mem_exports, atomic64_read(&mem->exports));
GN_MEM_ATTR(mem_exported_bytes, atomic64_read(&mem->exported_bytes));
GN_MEM_ATTR(mem_mmaps, atomic64_read(&mem->mmaps));
GN_MEM_ATTR(mem_contexts, atomic64_read(&mem->contexts));
GN_MEM_ATTR(mem_total_allocs, atomic64_read(&mem->total_allocs));
GN_MEM_ATTR(mem_total_exports, atomic64_read(&mem->total_exports));
GN_MEM_ATTR(num_ports, gdev->num_ports);
GN_MEM_ATTR(bus_base, gdev->bus_base);

static ssize_t serial_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct gaudi_nic_dev *gdev = dev_get_drvdata(dev);

	return sysfs_emit(buf, "%s\n", gdev->serial);
}
static DEVICE_ATTR_RO(serial);

static struct attribute *gn_dev_attrs[] = {
	&dev_attr_hbm_size.attr,
	&dev_attr_hbm_free.attr,
	&dev_attr_hbm_used.attr,
	&dev_attr_mem_allocs.attr,
	&dev_attr_mem_exports.attr,
	&dev_attr_mem_exported_bytes.attr,
	&dev_attr_mem_mmaps.attr,
	&dev_attr_mem_contexts.attr,
	&dev_attr_mem_total_allocs.attr,
	&dev_attr_mem_total_exports.attr,
	&dev_attr_num_ports.attr,
	&dev_attr_bus_base.attr,
	&dev_attr_serial.attr,
	NULL,
};

static const struct attribute_group gn_dev_group = {
	.name = "gaudi_nic",
	.attrs = gn_dev_attrs,
};

static const struct attribute_group *gn_dev_groups[] = {
	&gn_dev_group,
	NULL,
};

/* ------------------------------------------------------ platform driver */

/* Last reference on the DRM device: the driver lets go of the hardware. */
static void gn_drm_release_action(struct drm_device *drm, void *data)
{
	struct gaudi_nic_dev *gdev = to_gaudi_nic_dev(drm);
	struct gaudi_nic_hw *hw = gdev->hw;

	gn_mem_fini(gdev);
	hw->ops->release(hw);
}

static int gn_probe(struct platform_device *pdev)
{
	struct gaudi_nic_hw *hw = gaudi_nic_hw_of(&pdev->dev);
	struct gaudi_nic_dev *gdev;
	int ret;

	if (!hw || !hw->ops || !hw->mac_ops || !hw->asic_id ||
	    !hw->asic_rev || !hw->fw_version)
		return -ENODEV;
	if (hw->num_ports > GAUDI_NIC_MAX_PORTS)
		return dev_err_probe(&pdev->dev, -EINVAL,
				     "the device has %u ports, this driver takes at most %u\n",
				     hw->num_ports, GAUDI_NIC_MAX_PORTS);
	/* An earlier instance may still be draining (live dma-bufs). */
	ret = hw->ops->claim(hw);
	if (ret)
		return ret;

	ret = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (ret)
		goto err_unclaim;
	dma_set_max_seg_size(&pdev->dev, UINT_MAX);

	gdev = devm_drm_dev_alloc(&pdev->dev, &gn_drm_driver,
				  struct gaudi_nic_dev, drm);
	if (IS_ERR(gdev)) {
		ret = PTR_ERR(gdev);
		goto err_unclaim;
	}
	gdev->hw = hw;
	gdev->pdev = pdev;
	gdev->id = hw->id;
	gdev->num_ports = hw->num_ports;
	gdev->hbm_size = hw->hbm_size;
	gdev->bus_base = hw->bus_base;
	strscpy(gdev->serial, hw->serial, sizeof(gdev->serial));
	ret = drmm_add_action_or_reset(&gdev->drm, gn_drm_release_action,
				       NULL);
	if (ret)
		return ret;

	ret = gn_mem_init(gdev);
	if (ret)
		return ret;
	ret = gn_nic_init(gdev);
	if (ret)
		return ret;
	platform_set_drvdata(pdev, gdev);

	ret = drm_dev_register(&gdev->drm, 0);
	if (ret)
		return ret;
	dev_info(&pdev->dev, "%s: %llu MiB HBM, %u ports, bus window %#llx\n",
		 gdev->serial, gdev->hbm_size >> 20, gdev->num_ports,
		 gdev->bus_base);
	return 0;

err_unclaim:
	hw->ops->release(hw);
	return ret;
}

/*
 * The device goes away (gaudi_nic_sim's del_device or unload, this
 * module's unload): no new ioctls or faults (drm_dev_unplug waits for
 * those in flight; later calls get -ENODEV), then what a reset does
 * (gn_mem_reset()): CPU mappings zapped (later accesses get SIGBUS),
 * every dma-buf of its HBM revoked (revocable importers stop at once;
 * gn_dmabuf.c), the frames scrubbed and given back but for those an
 * importer that can only pin holds until it detaches.
 */
static void gn_remove(struct platform_device *pdev)
{
	struct gaudi_nic_dev *gdev = platform_get_drvdata(pdev);

	drm_dev_unplug(&gdev->drm);
	gn_mem_reset(gdev);
}

static struct platform_driver gn_platform_driver = {
	.driver = {
		.name = GAUDI_NIC_HW_NAME,
		.dev_groups = gn_dev_groups,
		.suppress_bind_attrs = true,
	},
	.probe = gn_probe,
	.remove = gn_remove,
};

bool gaudi_nic_is_device(struct device *dev)
{
	return dev && dev->driver == &gn_platform_driver.driver;
}

/*
 * A plain platform driver: the hardware (gaudi_nic_sim.ko for the
 * emulated ASIC) registers the gaudi_nic.N devices, before or after this
 * module loads, with their struct gaudi_nic_hw as platform data.
 */
static int __init gn_init(void)
{
	int ret;

	ret = gn_eth_register();
	if (ret)
		return ret;
	ret = platform_driver_register(&gn_platform_driver);
	if (ret)
		gn_eth_unregister();
	return ret;
}

static void __exit gn_exit(void)
{
	platform_driver_unregister(&gn_platform_driver);
	gn_eth_unregister();
}

module_init(gn_init);
module_exit(gn_exit);

MODULE_DESCRIPTION("gaudi_nic accelerator core driver");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(DMA_BUF);
