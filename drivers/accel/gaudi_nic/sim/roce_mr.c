// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCE engine's memory regions: the MR table's mailbox commands
 * (CREATE_MR, REREG_MR, REVOKE_MR, DESTROY_MR; roce_hw.h).  A context is
 * built off the table, with its page list translated (the engine's
 * address cache, holding the pages), and swapped in under dp_lock; the
 * data path looks MRs up within one dp_lock hold (gnsim_mr_get()), so a
 * context taken out of the table can be freed right after.
 */
#include <linux/slab.h>

#include "roce.h"

/* A new MR context from @c, not yet visible to the data path. */
static struct gnsim_rmr *gnsim_mr_build(struct gaudi_nic_roce *r, u32 index,
					const struct gn_roce_mr_ctx *c)
{
	u64 span = (u64)le32_to_cpu(c->offset) + le64_to_cpu(c->length);
	struct gnsim_rmr *mr;
	int ret;

	if (!index || index >= GN_ROCE_MAX_MR ||
	    le32_to_cpu(c->key) >> 8 != index ||
	    le32_to_cpu(c->offset) >= PAGE_SIZE ||
	    le32_to_cpu(c->access) & ~(GN_ROCE_MR_LOCAL_WRITE |
				      GN_ROCE_MR_REMOTE_WRITE |
				      GN_ROCE_MR_REMOTE_READ |
				      GN_ROCE_MR_MW_BIND |
				      GN_ROCE_MR_FLUSH_GLOBAL |
				      GN_ROCE_MR_FLUSH_PERSIST))
		return ERR_PTR(-EINVAL);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	ret = gnsim_rmem_load(r, &c->pages, &mr->mem);
	if (ret)
		goto err;
	ret = -EINVAL;
	if (span > ((u64)mr->mem.npages << PAGE_SHIFT))
		goto err_mem;
	mr->index = index;
	mr->key = le32_to_cpu(c->key);
	mr->pdn = le32_to_cpu(c->pdn);
	mr->access = le32_to_cpu(c->access);
	mr->iova = le64_to_cpu(c->iova);
	mr->length = le64_to_cpu(c->length);
	mr->offset = le32_to_cpu(c->offset);
	return mr;
err_mem:
	gnsim_rmem_free(&mr->mem);
err:
	kfree(mr);
	return ERR_PTR(ret);
}

static void gnsim_mr_free(struct gnsim_rmr *mr)
{
	gnsim_rmem_free(&mr->mem);
	kfree(mr);
}

int gnsim_cmd_create_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out)
{
	const struct gn_roce_mr_ctx *c = in;
	struct gnsim_rmr *mr;

	if (index < GN_ROCE_MAX_MR && r->mrs[index])
		return -EBUSY;
	mr = gnsim_mr_build(r, index, c);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	spin_lock_bh(&r->dp_lock);
	r->mrs[index] = mr;
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

/*
 * REREG_MR: replace the whole context of MR @index, whose key stays.
 * The data path sees either the old or the new context, never a mix.
 */
int gnsim_cmd_rereg_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
		       void *out)
{
	const struct gn_roce_mr_ctx *c = in;
	struct gnsim_rmr *mr, *old;
	int ret;

	mr = gnsim_mr_build(r, index, c);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	spin_lock_bh(&r->dp_lock);
	old = r->mrs[index];
	ret = !old ? -ENOENT : old->key != mr->key ? -EINVAL :
	      old->revoked ? -EACCES : old->mws ? -EBUSY : 0;
	if (!ret)
		r->mrs[index] = mr;
	spin_unlock_bh(&r->dp_lock);
	if (ret) {
		gnsim_mr_free(mr);
		return ret;
	}
	gnsim_mr_free(old);
	return 0;
}

/*
 * REVOKE_MR: the MR's memory is taken back.  Its context stays in the
 * table (index and keys held until DESTROY_MR) but fails every lookup, and
 * its pages go: the data path uses an MR only within one dp_lock hold, so
 * after the swap under the lock nothing reaches them.
 */
int gnsim_cmd_revoke_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out)
{
	struct gnsim_rmem mem = {};
	struct gnsim_rmr *mr;

	if (index >= GN_ROCE_MAX_MR)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	mr = r->mrs[index];
	if (mr && !mr->revoked) {
		mr->revoked = true;
		swap(mem, mr->mem);
	}
	spin_unlock_bh(&r->dp_lock);
	if (!mr)
		return -ENOENT;
	gnsim_rmem_free(&mem);
	return 0;
}

int gnsim_cmd_destroy_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out)
{
	struct gnsim_rmr *mr;

	if (index >= GN_ROCE_MAX_MR)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	mr = r->mrs[index];
	/* IBTA: deregistering an MR with windows bound to it fails (N6) */
	if (mr && mr->mws) {
		spin_unlock_bh(&r->dp_lock);
		return -EBUSY;
	}
	r->mrs[index] = NULL;
	spin_unlock_bh(&r->dp_lock);
	if (!mr)
		return -ENOENT;
	gnsim_mr_free(mr);
	return 0;
}
