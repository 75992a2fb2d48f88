// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic dma-buf exporter.  Scatter lists carry HBM bus addresses only
 * (no struct page): importers must be gaudi_nic devices, which reach
 * every HBM bus window, and must accept peer-to-peer memory.
 *
 * An export holds its allocation (FREE and UNMAP fail with -EBUSY while
 * it does) and a reference on the exporting context, until it is
 * released or revoked.  HBM never moves, so the exporter is dynamic only
 * to learn who holds it: every mapping pins (the core pins for a dynamic
 * importer, or for any importer when CONFIG_DMABUF_MOVE_NOTIFY is off),
 * and @pins counts them under the reservation lock.
 *
 * Revocation (gn_dmabuf_revoke_all(), when the device goes): under each
 * export's reservation lock, it is marked revoked (no new mapping or pin),
 * every importer is notified (dma_buf_move_notify()), and a revocable
 * importer (gaudi_ib's dma-buf MRs) stops using the memory and unpins
 * before its callback returns.  If no pin is left, the export lets go of
 * the allocation at once: the HBM is scrubbed and reused once its other
 * holders (the accel handle) are gone, while the dma-buf and its
 * attachments live on, mapping nothing.  An importer that keeps its pin
 * (one that can only pin) keeps the allocation: the frames stay its
 * until it detaches, never handed to a new owner (the ownership rule,
 * accel.md).
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>

#include "gn_internal.h"

/*
 * @alloc: NULL once revoked with no pin left; @revoked and @pins under the
 * dma-buf's reservation lock; @node in gn_mem.exp_list under exp_lock.
 */
struct gn_export {
	struct gn_ctx *ctx;
	struct gn_alloc *alloc;
	struct dma_buf *dmabuf;
	struct list_head node;
	u64 offset;
	u64 size;
	unsigned int pins;
	bool revoked;
};

static int gn_dmabuf_pin(struct dma_buf_attachment *attach)
{
	struct gn_export *exp = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (exp->revoked)
		return -ENODEV;
	exp->pins++;
	return 0;
}

static void gn_dmabuf_unpin(struct dma_buf_attachment *attach)
{
	struct gn_export *exp = attach->dmabuf->priv;

	dma_resv_assert_held(attach->dmabuf->resv);
	if (!WARN_ON(!exp->pins))
		exp->pins--;
}

static int gn_dmabuf_attach(struct dma_buf *dmabuf,
			    struct dma_buf_attachment *attach)
{
	/* Only our devices can reach the emulated HBM bus windows. */
	if (!gaudi_nic_is_device(attach->dev))
		return -EOPNOTSUPP;
	return 0;
}

static struct sg_table *gn_dmabuf_map(struct dma_buf_attachment *attach,
				      enum dma_data_direction dir)
{
	struct gn_export *exp = attach->dmabuf->priv;
	u64 max_seg, off, end = exp->offset + exp->size;
	u64 bus, seg_start = 0, seg_len = 0;
	struct scatterlist *sg;
	struct sg_table *sgt;
	unsigned int nents;
	int pass, ret;

	/* Bus addresses are not pages: the importer must accept P2P. */
	if (!attach->peer2peer)
		return ERR_PTR(-EPERM);
	dma_resv_assert_held(attach->dmabuf->resv);
	if (exp->revoked)
		return ERR_PTR(-ENODEV);

	max_seg = round_down(dma_get_max_seg_size(attach->dev), PAGE_SIZE);
	if (!max_seg)
		max_seg = PAGE_SIZE;

	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL_ACCOUNT);
	if (!sgt)
		return ERR_PTR(-ENOMEM);

	/* Pass 0 counts merged segments, pass 1 fills them in. */
	sg = NULL;
	nents = 0;
	for (pass = 0; pass < 2; pass++) {
		seg_len = 0;
		for (off = exp->offset; off < end; off += PAGE_SIZE) {
			bus = gn_alloc_frame_bus(exp->alloc, off);
			if (seg_len && bus == seg_start + seg_len &&
			    seg_len + PAGE_SIZE <= max_seg) {
				seg_len += PAGE_SIZE;
				continue;
			}
			if (seg_len && pass) {
				sg_set_page(sg, NULL, seg_len, 0);
				sg_dma_address(sg) = seg_start;
				sg_dma_len(sg) = seg_len;
				sg = sg_next(sg);
			}
			if (!pass)
				nents++;
			seg_start = bus;
			seg_len = PAGE_SIZE;
		}
		if (!pass) {
			ret = sg_alloc_table(sgt, nents, GFP_KERNEL_ACCOUNT);
			if (ret) {
				kfree(sgt);
				return ERR_PTR(ret);
			}
			sg = sgt->sgl;
		} else {
			sg_set_page(sg, NULL, seg_len, 0);
			sg_dma_address(sg) = seg_start;
			sg_dma_len(sg) = seg_len;
		}
	}
	return sgt;
}

static void gn_dmabuf_unmap(struct dma_buf_attachment *attach,
			    struct sg_table *sgt, enum dma_data_direction dir)
{
	sg_free_table(sgt);
	kfree(sgt);
}

/* The export lets go of its allocation (released, or revoked unpinned). */
static void gn_export_drop(struct gn_export *exp)
{
	struct gn_ctx *ctx = exp->ctx;
	struct gn_mem *mem = ctx->gdev->mem;
	struct gn_alloc *alloc = exp->alloc;

	if (!alloc)
		return;
	exp->alloc = NULL;
	atomic_dec(&alloc->exports);
	atomic64_sub(exp->size, &ctx->mem_shared);
	atomic64_sub(exp->size, &mem->exported_bytes);
	atomic64_dec(&mem->exports);
	gn_alloc_put(alloc);
}

static void gn_dmabuf_release(struct dma_buf *dmabuf)
{
	struct gn_export *exp = dmabuf->priv;
	struct gn_ctx *ctx = exp->ctx;
	struct gn_mem *mem = ctx->gdev->mem;

	mutex_lock(&mem->exp_lock);
	list_del(&exp->node);
	mutex_unlock(&mem->exp_lock);
	gn_export_drop(exp);
	kfree(exp);
	gn_ctx_put(ctx);
}

static const struct dma_buf_ops gn_dmabuf_ops = {
	.attach = gn_dmabuf_attach,
	.pin = gn_dmabuf_pin,
	.unpin = gn_dmabuf_unpin,
	.map_dma_buf = gn_dmabuf_map,
	.unmap_dma_buf = gn_dmabuf_unmap,
	.release = gn_dmabuf_release,
};

/*
 * Revoke every export of @gdev's HBM (the device goes): see the top of
 * this file.  When it returns, no revocable importer can reach the
 * memory, and every export without a pin left has let go of it.
 * exp_lock keeps each listed export alive (its release takes the lock
 * first) and is taken outside the reservation locks.
 */
void gn_dmabuf_revoke_all(struct gaudi_nic_dev *gdev)
{
	struct gn_mem *mem = gdev->mem;
	struct gn_export *exp;
	unsigned int kept = 0;

	mutex_lock(&mem->exp_lock);
	list_for_each_entry(exp, &mem->exp_list, node) {
		struct dma_resv *resv = exp->dmabuf->resv;

		dma_resv_lock(resv, NULL);
		if (!exp->revoked) {
			exp->revoked = true;
			dma_buf_move_notify(exp->dmabuf);
			if (!exp->pins)
				gn_export_drop(exp);
			else
				kept++;
		}
		dma_resv_unlock(resv);
	}
	mutex_unlock(&mem->exp_lock);
	if (kept)
		dev_warn(gdev->drm.dev,
			 "%u revoked dma-buf(s) still pinned by an importer that cannot let go: their HBM stays theirs until they detach\n",
			 kept);
}

/*
 * Export [@offset, @offset + @size) of @alloc; the caller holds ctx->lock
 * and validated the range.  Returns the new fd or a negative errno.
 */
int gn_dmabuf_export(struct gn_ctx *ctx, struct gn_alloc *alloc, u64 offset,
		     u64 size, u32 fd_flags)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct gn_mem *mem = ctx->gdev->mem;
	struct gn_export *exp;
	struct dma_buf *dmabuf;
	int fd;

	lockdep_assert_held(&ctx->lock);
	exp = kzalloc(sizeof(*exp), GFP_KERNEL_ACCOUNT);
	if (!exp)
		return -ENOMEM;
	exp->ctx = ctx;
	exp->alloc = alloc;
	exp->offset = offset;
	exp->size = size;
	INIT_LIST_HEAD(&exp->node);

	info.ops = &gn_dmabuf_ops;
	info.size = size;
	info.flags = fd_flags;
	info.priv = exp;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		kfree(exp);
		return PTR_ERR(dmabuf);
	}
	/* From here on the dma-buf release undoes all of this. */
	exp->dmabuf = dmabuf;
	mutex_lock(&mem->exp_lock);
	list_add(&exp->node, &mem->exp_list);
	mutex_unlock(&mem->exp_lock);
	gn_ctx_get(ctx);
	gn_alloc_get(alloc);
	atomic_inc(&alloc->exports);
	atomic64_add(size, &ctx->mem_shared);
	atomic64_add(size, &mem->exported_bytes);
	atomic64_inc(&mem->exports);
	atomic64_inc(&mem->total_exports);

	fd = dma_buf_fd(dmabuf, fd_flags);
	if (fd < 0)
		dma_buf_put(dmabuf);
	return fd;
}
