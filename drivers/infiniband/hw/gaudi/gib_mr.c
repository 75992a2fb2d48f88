// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib memory regions and memory windows.  An MR is a context in the
 * engine's MR table plus the page list (struct gib_pbl) it copies; user
 * MRs pin pages with ib_umem, dma-buf MRs attach through
 * ib_umem_dmabuf_get_pinned_revocable_and_lock() (gib_mr_revoke()), DM
 * MRs (gib_dm.c) name HBM frames.  MWs share the key space (their
 * indices follow the MR ones) and are bound by work requests, not here.
 */
#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <rdma/ib_umem.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>

#include "gaudi_ib.h"

/* ------------------------------------------------------------------ MR */

/*
 * No MR maps all of memory: kernel PDs get the local DMA lkey instead
 * (IBK_LOCAL_DMA_LKEY), and nothing here registers remote-access DMA MRs.
 */
struct ib_mr *gib_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static u32 gib_mr_access(int acc)
{
	u32 a = 0;

	if (acc & IB_ACCESS_LOCAL_WRITE)
		a |= GN_ROCE_MR_LOCAL_WRITE;
	if (acc & IB_ACCESS_REMOTE_WRITE)
		a |= GN_ROCE_MR_REMOTE_WRITE;
	if (acc & IB_ACCESS_REMOTE_READ)
		a |= GN_ROCE_MR_REMOTE_READ;
	if (acc & IB_ACCESS_MW_BIND)
		a |= GN_ROCE_MR_MW_BIND;
	if (acc & IB_ACCESS_FLUSH_GLOBAL)
		a |= GN_ROCE_MR_FLUSH_GLOBAL;
	return a;
}

/*
 * The engine context's fields other than the page list: @length bytes at
 * @iova with @key and @access in @pdn, the first byte at @offset into the
 * first page.
 */
void gib_mr_ctx_fill(struct gn_roce_mr_ctx *ctx, u64 iova, u64 length,
		     u32 key, u32 pdn, int access, u32 offset)
{
	ctx->iova = cpu_to_le64(iova);
	ctx->length = cpu_to_le64(length);
	ctx->key = cpu_to_le32(key);
	ctx->pdn = cpu_to_le32(pdn);
	ctx->access = cpu_to_le32(gib_mr_access(access));
	ctx->offset = cpu_to_le32(offset);
}

/*
 * The engine context of an MR of @umem at @iova with @key in @pdn: @ctx,
 * whose page list @pbl the caller frees (gib_pbl_free()) after the
 * command.
 */
static int gib_mr_ctx(struct gib_dev *dev, struct ib_umem *umem, u64 iova,
		      u32 key, u32 pdn, int access, struct gib_pbl *pbl,
		      struct gn_roce_mr_ctx *ctx)
{
	struct ib_block_iter biter;
	u64 first, last;
	u32 n, i = 0;
	int ret;

	first = ALIGN_DOWN(umem->address, PAGE_SIZE);
	last = ALIGN(umem->address + umem->length, PAGE_SIZE);
	if ((last - first) >> PAGE_SHIFT > GN_ROCE_MAX_PBL_PAGES)
		return -EINVAL;
	n = (last - first) >> PAGE_SHIFT;
	memset(ctx, 0, sizeof(*ctx));
	ret = gib_pbl_alloc(dev, pbl, n, &ctx->pages);
	if (ret)
		return ret;
	rdma_umem_for_each_dma_block(umem, &biter, PAGE_SIZE) {
		if (i == n)
			break;
		pbl->cpu[i++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
	}
	/* a umem shorter than its span: not a bad user pointer */
	if (i != n) {
		gib_pbl_free(dev, pbl);
		return -EINVAL;
	}
	gib_mr_ctx_fill(ctx, iova, umem->length, key, pdn, access,
			umem->address & ~PAGE_MASK);
	return 0;
}

/*
 * A new MR object of @length bytes at @iova, charged to the user context
 * @uc (NULL: none), with its index and keys; not yet in the engine.
 */
struct gib_mr *gib_mr_new(struct ib_pd *ibpd, struct gib_ucontext *uc,
			  int access, u64 length, u64 iova)
{
	struct gib_dev *dev = to_gdev(ibpd->device);
	struct gib_mr *mr;
	int ret;

	ret = gib_charge(uc, GIB_RES_MR, 0);
	if (ret)
		return ERR_PTR(ret);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	mr->uc = uc;
	ret = gib_id_alloc(&dev->mr_ida, uc, GIB_RES_MR, 1,
			   GN_ROCE_MAX_MR - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	mr->index = ret;
	mr->access = access;
	mr->ibmr.lkey = mr->index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->ibmr.length = length;
	mr->ibmr.iova = iova;
	mr->ibmr.page_size = PAGE_SIZE;
	/*
	 * Set here, not only by the core after registration: a dma-buf MR's
	 * revoke callback may run in between and needs its device.
	 */
	mr->ibmr.device = ibpd->device;
	return mr;

err_free:
	kfree(mr);
err_uncharge:
	gib_uncharge(uc, GIB_RES_MR, 0);
	return ERR_PTR(ret);
}

/* Give @ctx to the engine for @mr with @op, then free its page list @pbl. */
static int gib_mr_cmd(struct gib_dev *dev, u32 op, struct gib_mr *mr,
		      struct gn_roce_mr_ctx *ctx, struct gib_pbl *pbl)
{
	int ret;

	ret = gaudi_nic_roce_cmd(dev->gadev, op, mr->index, ctx, sizeof(*ctx),
				 NULL, 0);
	gib_pbl_free(dev, pbl);
	return ret;
}

/*
 * Give @mr's engine context @ctx to the engine (CREATE_MR), then free its
 * page list @pbl; on failure, undo gib_mr_new() too.
 */
int gib_mr_install(struct gib_dev *dev, struct gib_mr *mr,
		   struct gn_roce_mr_ctx *ctx, struct gib_pbl *pbl)
{
	int ret;

	ret = gib_mr_cmd(dev, GN_ROCE_CMD_CREATE_MR, mr, ctx, pbl);
	if (ret)
		gib_mr_undo(dev, mr);
	return ret;
}

/*
 * Program @mr as @umem at @iova in PD @pdn with @access: CREATE_MR for a
 * new one, REREG_MR for one the engine holds (@op).  Registration and
 * reregistration build the context and its page list the same way.
 */
static int gib_mr_program(struct gib_dev *dev, u32 op, struct gib_mr *mr,
			  struct ib_umem *umem, u64 iova, u32 pdn, int access)
{
	struct gn_roce_mr_ctx ctx;
	struct gib_pbl pbl = {};
	int ret;

	ret = gib_mr_ctx(dev, umem, iova, mr->ibmr.lkey, pdn, access, &pbl,
			 &ctx);
	return ret ?: gib_mr_cmd(dev, op, mr, &ctx, &pbl);
}

/* Undo gib_mr_new() for an MR the engine does not hold. */
void gib_mr_undo(struct gib_dev *dev, struct gib_mr *mr)
{
	ida_free(&dev->mr_ida, mr->index);
	gib_uncharge(mr->uc, GIB_RES_MR, 0);
	kfree(mr);
}

/*
 * An MR of @umem, charged to the user context @uc (NULL: none).  A
 * dma-buf @umem comes with its reservation lock held (@locked), which a
 * failure drops before releasing the umem.
 */
static struct ib_mr *gib_mr_create(struct ib_pd *ibpd, struct ib_umem *umem,
				   u64 iova, int access,
				   struct gib_ucontext *uc, bool locked)
{
	struct gib_dev *dev = to_gdev(ibpd->device);
	struct gib_mr *mr;
	int ret;

	/* user MRs only: gib_get_dma_mr() makes none */
	mr = gib_mr_new(ibpd, uc, access, umem->length, iova);
	if (IS_ERR(mr)) {
		ret = PTR_ERR(mr);
		goto err_umem;
	}
	mr->umem = umem;
	ret = gib_mr_program(dev, GN_ROCE_CMD_CREATE_MR, mr, umem, iova,
			     to_gpd(ibpd)->pdn, access);
	if (!ret)
		return &mr->ibmr;
	gib_mr_undo(dev, mr);
err_umem:
	if (locked)
		ib_umem_dmabuf_revoke_unlock(to_ib_umem_dmabuf(umem));
	ib_umem_release(umem);
	return ERR_PTR(ret);
}

static int gib_check_mr_len(struct gib_dev *dev, u64 len)
{
	if (!len)
		return -EINVAL;
	if (len > GIB_MAX_MR_SIZE) {
		ibdev_warn_ratelimited(&dev->ibdev,
				       "MR of %llu bytes refused: max_mr_size is %llu; register it in several MRs\n",
				       len, GIB_MAX_MR_SIZE);
		return -EINVAL;
	}
	return 0;
}

/*
 * IB_ACCESS_REMOTE_ATOMIC is accepted and ignored: atomic_cap is NONE, so
 * no atomic request ever reaches an MR, and libfabric's verbs provider
 * asks for it on every registration with remote write.
 */
#define GIB_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_FLUSH_GLOBAL | \
			 IB_ACCESS_RELAXED_ORDERING)

struct ib_mr *gib_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
			      u64 iova, int access, struct ib_udata *udata)
{
	struct ib_umem *umem;
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ERR_PTR(ret);
	if (access & ~GIB_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	ret = gib_check_mr_len(to_gdev(pd->device), len);
	if (ret)
		return ERR_PTR(ret);
	umem = ib_umem_get(pd->device, start, len, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	return gib_mr_create(pd, umem, iova, access,
			     rdma_udata_to_drv_context(udata,
						       struct gib_ucontext,
						       ibuc), false);
}

/*
 * May @access of a dma-buf MR write the buffer?  Only if its dma-buf was
 * opened for writing: an exporter hands out an O_RDONLY dma-buf to let
 * others read its memory, and a writable MR on it would let every peer
 * holding the rkey write there (as ib_umem_get() refuses writable access
 * to pages the process may only read).  The file checked is the one the
 * attachment holds, not a second lookup of the fd.
 */
static int gib_dmabuf_access_ok(struct ib_umem *umem, int access)
{
	struct ib_umem_dmabuf *ud = to_ib_umem_dmabuf(umem);

	if (ib_access_writable(access) &&
	    !(ud->attach->dmabuf->file->f_mode & FMODE_WRITE))
		return -EACCES;
	return 0;
}

/*
 * The exporter takes a dma-buf MR's memory back (a device reset or
 * removal revokes every export of its HBM): called once, under the
 * dma-buf's reservation lock, by the exporter's move_notify or by
 * ib_umem_release().  The engine drops the MR's translation before this
 * returns (REVOKE_MR), so nothing reaches the pages once the exporter
 * goes on; the MR keeps its keys until the user deregisters it, and every
 * access through them fails (a peer's with a remote access error).  A
 * revoked MR never maps again: an HBM dma-buf is revoked, not moved
 * (rdma.md).
 */
static void gib_mr_revoke(void *priv)
{
	struct gib_mr *mr = priv;
	struct gib_dev *dev = to_gdev(mr->ibmr.device);
	int ret;

	/* -ENOENT: deregistration destroyed it first (it releases the umem) */
	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_REVOKE_MR, mr->index,
				 NULL, 0, NULL, 0);
	if (ret && ret != -ENODEV && ret != -ENOENT)
		ibdev_warn(&dev->ibdev, "MR 0x%x: revoking its dma-buf failed (%d)\n",
			   mr->ibmr.lkey, ret);
}

/*
 * A dma-buf MR: a revocable pinned attachment (the memory stays put until
 * its exporter revokes it, gib_mr_revoke()).  The attachment comes back
 * with the reservation lock held, so the revoke callback is in place
 * before any revocation can run.
 */
struct ib_mr *gib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset, u64 len,
				     u64 iova, int fd, int access,
				     struct uverbs_attr_bundle *attrs)
{
	struct ib_umem_dmabuf *ud;
	struct ib_mr *ibmr;
	int ret;

	ret = gib_check_udata_in(&attrs->driver_udata);
	if (ret)
		return ERR_PTR(ret);
	if (access & ~GIB_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	ret = gib_check_mr_len(to_gdev(pd->device), len);
	if (ret)
		return ERR_PTR(ret);
	ud = ib_umem_dmabuf_get_pinned_revocable_and_lock(pd->device, offset,
							  len, fd, access);
	if (IS_ERR(ud))
		return ERR_CAST(ud);
	ret = gib_dmabuf_access_ok(&ud->umem, access);
	if (ret) {
		ib_umem_dmabuf_revoke_unlock(ud);
		ib_umem_release(&ud->umem);
		return ERR_PTR(ret);
	}
	ibmr = gib_mr_create(pd, &ud->umem, iova, access,
			     to_guc(attrs->context), true);
	if (IS_ERR(ibmr))
		return ibmr;	/* gib_mr_create() released the umem */
	ib_umem_dmabuf_set_revoke_locked(ud, gib_mr_revoke, to_gmr(ibmr));
	ib_umem_dmabuf_revoke_unlock(ud);
	return ibmr;
}

/*
 * Re-registration in place (ibv_rereg_mr()): a new translation
 * (IB_MR_REREG_TRANS), PD or access for the same MR, whose keys stay, so
 * that peers holding the rkey keep using it.  The engine swaps the whole
 * context at once (REREG_MR); on failure the MR is left as it was.
 * Memory is pinned anew for a new translation, or when the new access
 * needs the pages writable and they were pinned read-only.  A dma-buf MR
 * keeps its buffer: a new translation for it is EOPNOTSUPP.  Changing
 * IB_ACCESS_REMOTE_ATOMIC is EOPNOTSUPP too: the device has no atomics
 * (atomic_cap NONE), registration accepts the flag only because
 * libfabric always asks for it, and a change of it could only be
 * observed through atomic operations.  With a memory window bound to
 * the MR the engine refuses (-EBUSY), as it refuses deregistration.
 */
struct ib_mr *gib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				u64 len, u64 iova, int access,
				struct ib_pd *pd, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmr->device);
	struct gib_mr *mr = to_gmr(ibmr);
	struct ib_umem *umem = mr->umem;
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ERR_PTR(ret);
	/* a DM MR has no umem; the core refuses to rereg it (ibmr->dm) */
	if (!umem)
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD | IB_MR_REREG_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;
	if (access & ~GIB_MR_ACCESS ||
	    (access ^ mr->access) & IB_ACCESS_REMOTE_ATOMIC)
		return ERR_PTR(-EOPNOTSUPP);
	if (umem->is_dmabuf) {
		ret = gib_dmabuf_access_ok(umem, access);
		if (ret)
			return ERR_PTR(ret);
	}
	if (flags & IB_MR_REREG_TRANS) {
		if (umem->is_dmabuf)
			return ERR_PTR(-EOPNOTSUPP);
		ret = gib_check_mr_len(dev, len);
		if (ret)
			return ERR_PTR(ret);
	} else {
		start = umem->address;
		len = umem->length;
		iova = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS ||
	    (!umem->is_dmabuf && !umem->writable && ib_access_writable(access))) {
		umem = ib_umem_get(ibmr->device, start, len, access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
	}
	/*
	 * A dma-buf MR's pages are read under its reservation lock, so that
	 * a revocation cannot pass between the read and the engine; a
	 * revoked one has none left to give (-EACCES).
	 */
	if (umem->is_dmabuf) {
		ib_umem_dmabuf_revoke_lock(to_ib_umem_dmabuf(umem));
		ret = to_ib_umem_dmabuf(umem)->revoked ? -EACCES : 0;
	}
	if (!ret)
		ret = gib_mr_program(dev, GN_ROCE_CMD_REREG_MR, mr, umem, iova,
				     to_gpd(pd)->pdn, access);
	if (umem->is_dmabuf)
		ib_umem_dmabuf_revoke_unlock(to_ib_umem_dmabuf(umem));
	if (ret)
		goto err;
	if (umem != mr->umem) {
		ib_umem_release(mr->umem);
		mr->umem = umem;
	}
	mr->access = access;
	ibmr->length = umem->length;
	ibmr->iova = iova;
	/* the core moves ibmr->pd and its use counts */
	return NULL;
err:
	if (umem != mr->umem)
		ib_umem_release(umem);
	return ERR_PTR(ret);
}

/*
 * Deregistration fails with -EBUSY while memory windows are bound to the
 * MR (IBTA; the engine refuses).  When a process ends, uverbs retries the
 * MRs that failed after the other objects, its windows, are gone.
 */
int gib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmr->device);
	struct gib_mr *mr = to_gmr(ibmr);
	int ret;

	/* After this the engine holds no translation of the pages. */
	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_DESTROY_MR, mr->index,
				 NULL, 0, NULL, 0);
	if (ret == -EBUSY)
		return ret;
	ib_umem_release(mr->umem);
	ida_free(&dev->mr_ida, mr->index);
	gib_uncharge(mr->uc, GIB_RES_MR, 0);
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------ MW */

int gib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmw->device);
	struct gib_mw *mw = container_of(ibmw, struct gib_mw, ibmw);
	struct gib_ucontext *uc = rdma_udata_to_drv_context(udata,
							    struct gib_ucontext,
							    ibuc);
	struct gn_roce_mw_ctx ctx = {};
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	ret = gib_charge(uc, GIB_RES_MW, 0);
	if (ret)
		return ret;
	ret = gib_id_alloc(&dev->mw_ida, uc, GIB_RES_MW, 0,
			   GN_ROCE_MAX_MW - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_uncharge;
	mw->index = ret;
	mw->uc = uc;
	ibmw->rkey = (GN_ROCE_MAX_MR + mw->index) << 8 |
		     (get_random_u32() & 0xff);
	ctx.key = cpu_to_le32(ibmw->rkey);
	ctx.pdn = cpu_to_le32(to_gpd(ibmw->pd)->pdn);
	ctx.type = ibmw->type == IB_MW_TYPE_1 ? 1 : 2;
	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_CREATE_MW, mw->index,
				 &ctx, sizeof(ctx), NULL, 0);
	if (ret)
		goto err_ida;
	return 0;

err_ida:
	ida_free(&dev->mw_ida, mw->index);
err_uncharge:
	gib_uncharge(uc, GIB_RES_MW, 0);
	return ret;
}

/* After DESTROY_MW no request can use the window's key. */
int gib_dealloc_mw(struct ib_mw *ibmw)
{
	struct gib_dev *dev = to_gdev(ibmw->device);
	struct gib_mw *mw = container_of(ibmw, struct gib_mw, ibmw);

	gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_DESTROY_MW, mw->index, NULL, 0,
			   NULL, 0);
	ida_free(&dev->mw_ida, mw->index);
	gib_uncharge(mw->uc, GIB_RES_MW, 0);
	return 0;
}
