// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only dma-buf importer for gaudi_nic.  Userspace writes a command to
 * /sys/kernel/debug/gaudi_nic_test/import and reads the result back from
 * the same open file:
 *
 *   import FD DEVICE [fill SEED] [maxseg BYTES]
 *	attach dma-buf FD from DEVICE the way ib_umem_dmabuf_get_pinned()
 *	does (dynamic, peer-to-peer), map it, check the segments, optionally
 *	write a pattern through the bus addresses, and hash the contents read
 *	back through them.  maxseg lowers DEVICE's max DMA segment size for
 *	the duration of the import (restored afterwards).
 *   import-nop2p FD DEVICE
 *	plain dma_buf_attach() + map (no P2P)
 *
 * DEVICE is a platform device name (gaudi_nic.N) or "foreign" (a platform
 * device of this module, which no gaudi_nic exporter may accept).  The
 * write() fails with the errno of the failing step.
 */
#include <linux/debugfs.h>
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/gaudi_nic/core.h>
#include "../../drivers/accel/gaudi_nic/sim/bus.h"

#define RESULT_LEN 256

static struct dentry *gnt_dir;
static struct platform_device *gnt_foreign;

struct gnt_result {
	char text[RESULT_LEN];
};

static void gnt_move_notify(struct dma_buf_attachment *attach)
{
	/* Pinned exporter: never called. */
}

static const struct dma_buf_attach_ops gnt_importer_ops = {
	.allow_peer2peer = true,
	.move_notify = gnt_move_notify,
};

static u64 gnt_fnv(u64 h, const u8 *p, size_t len)
{
	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct device *gnt_find_dev(const char *name)
{
	if (!strcmp(name, "foreign"))
		return get_device(&gnt_foreign->dev);
	return bus_find_device_by_name(&platform_bus_type, NULL, name);
}

static int gnt_walk(struct sg_table *sgt, struct device *dev, bool fill,
		    u32 seed, struct gnt_result *res)
{
	u64 hash = 0xcbf29ce484222325ULL, total = 0, lo = U64_MAX, hi = 0;
	unsigned int max_seg = dma_get_max_seg_size(dev), i, biggest = 0;
	struct scatterlist *sg;
	u8 *buf;
	int ret = 0;

	buf = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 bus = sg_dma_address(sg), len = sg_dma_len(sg), off;

		if (!len || len > max_seg || !PAGE_ALIGNED(bus) ||
		    !PAGE_ALIGNED(len)) {
			ret = -ERANGE;
			goto out;
		}
		lo = min(lo, bus);
		hi = max(hi, bus + len);
		biggest = max_t(unsigned int, biggest, len);
		for (off = 0; off < len; off += PAGE_SIZE) {
			if (fill) {
				size_t j;

				for (j = 0; j < PAGE_SIZE; j++)
					buf[j] = (u8)(seed + (total + off + j) * 131);
				ret = gnsim_bus_write(bus + off, buf, PAGE_SIZE);
				if (ret)
					goto out;
			}
			ret = gnsim_bus_read(bus + off, buf, PAGE_SIZE);
			if (ret)
				goto out;
			hash = gnt_fnv(hash, buf, PAGE_SIZE);
		}
		total += len;
	}
	snprintf(res->text, sizeof(res->text),
		 "nents=%u len=%llu maxseg=%u bus_lo=%#llx bus_hi=%#llx fnv=%#llx\n",
		 sgt->nents, total, biggest, lo, hi, hash);
out:
	kfree(buf);
	return ret;
}

static int gnt_import(int fd, const char *devname, bool p2p, bool fill,
		      u32 seed, unsigned int maxseg, struct gnt_result *res)
{
	struct dma_buf_attachment *attach;
	unsigned int old_maxseg = 0;
	struct dma_buf *dmabuf;
	struct sg_table *sgt;
	struct device *dev;
	int ret;

	dev = gnt_find_dev(devname);
	if (!dev)
		return -ENODEV;
	if (maxseg) {
		if (!dev->dma_parms) {
			put_device(dev);
			return -EINVAL;
		}
		old_maxseg = dma_get_max_seg_size(dev);
		dma_set_max_seg_size(dev, maxseg);
	}
	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf)) {
		ret = PTR_ERR(dmabuf);
		goto out_dev;
	}
	if (p2p)
		attach = dma_buf_dynamic_attach(dmabuf, dev, &gnt_importer_ops,
						NULL);
	else
		attach = dma_buf_attach(dmabuf, dev);
	if (IS_ERR(attach)) {
		ret = PTR_ERR(attach);
		goto out_put;
	}
	if (p2p) {
		dma_resv_lock(dmabuf->resv, NULL);
		ret = dma_buf_pin(attach);
		dma_resv_unlock(dmabuf->resv);
		if (ret)
			goto out_detach;
	}
	sgt = dma_buf_map_attachment_unlocked(attach, DMA_BIDIRECTIONAL);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto out_unpin;
	}
	ret = gnt_walk(sgt, dev, fill, seed, res);
	dma_buf_unmap_attachment_unlocked(attach, sgt, DMA_BIDIRECTIONAL);
out_unpin:
	if (p2p) {
		dma_resv_lock(dmabuf->resv, NULL);
		dma_buf_unpin(attach);
		dma_resv_unlock(dmabuf->resv);
	}
out_detach:
	dma_buf_detach(dmabuf, attach);
out_put:
	dma_buf_put(dmabuf);
out_dev:
	if (maxseg)
		dma_set_max_seg_size(dev, old_maxseg);
	put_device(dev);
	return ret;
}

static int gnt_open(struct inode *inode, struct file *file)
{
	struct gnt_result *res = kzalloc(sizeof(*res), GFP_KERNEL);

	file->private_data = res;
	return res ? 0 : -ENOMEM;
}

static int gnt_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t gnt_write(struct file *file, const char __user *ubuf,
			 size_t count, loff_t *ppos)
{
	struct gnt_result *res = file->private_data;
	unsigned int seed = 0, maxseg = 0;
	char buf[128], *cur, *cmd, *dev, *tok;
	bool fill = false, p2p;
	int fd, ret;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	cur = strim(buf);
	cmd = strsep(&cur, " ");
	tok = strsep(&cur, " ");
	dev = strsep(&cur, " ");
	if (!tok || !dev || kstrtoint(tok, 10, &fd))
		return -EINVAL;
	if (!strcmp(cmd, "import"))
		p2p = true;
	else if (!strcmp(cmd, "import-nop2p"))
		p2p = false;
	else
		return -EINVAL;
	while ((tok = strsep(&cur, " "))) {
		char *val = strsep(&cur, " ");

		if (!val || !p2p)
			return -EINVAL;
		if (!strcmp(tok, "fill") && !kstrtouint(val, 0, &seed))
			fill = true;
		else if (strcmp(tok, "maxseg") || kstrtouint(val, 0, &maxseg) ||
			 !maxseg)
			return -EINVAL;
	}

	res->text[0] = '\0';
	ret = gnt_import(fd, dev, p2p, fill, seed, maxseg, res);
	return ret ? ret : count;
}

static ssize_t gnt_read(struct file *file, char __user *ubuf, size_t count,
			loff_t *ppos)
{
	struct gnt_result *res = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, res->text,
				       strlen(res->text));
}

static const struct file_operations gnt_fops = {
	.owner = THIS_MODULE,
	.open = gnt_open,
	.release = gnt_release,
	.write = gnt_write,
	.read = gnt_read,
	.llseek = default_llseek,
};

static int __init gnt_init(void)
{
	gnt_foreign = platform_device_register_simple("gn_test_foreign", -1,
						      NULL, 0);
	if (IS_ERR(gnt_foreign))
		return PTR_ERR(gnt_foreign);
	gnt_dir = debugfs_create_dir("gaudi_nic_test", NULL);
	debugfs_create_file("import", 0600, gnt_dir, NULL, &gnt_fops);
	return 0;
}

static void __exit gnt_exit(void)
{
	debugfs_remove_recursive(gnt_dir);
	platform_device_unregister(gnt_foreign);
}

module_init(gnt_init);
module_exit(gnt_exit);

MODULE_DESCRIPTION("gaudi_nic test-only dma-buf importer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(GAUDI_NIC);
MODULE_IMPORT_NS(GAUDI_NIC_SIM);
MODULE_IMPORT_NS(DMA_BUF);
