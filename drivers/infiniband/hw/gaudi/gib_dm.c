// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib device memory (ibv_alloc_dm()): HBM of the device, allocated
 * through the core (gaudi_nic_hbm_alloc()), mapped into the process for
 * ibv_memcpy_to_dm() / ibv_memcpy_from_dm(), and registered as zero-based
 * MRs (ibv_reg_dm_mr()) whose page list is the HBM's bus addresses, as an
 * HBM dma-buf MR's is.
 *
 * Lifetimes: the HBM belongs to the DM's mmap entry.  ibv_free_dm()
 * removes the entry (no new mmap() finds it); the HBM goes back to the
 * core when the entry's last reference goes (gib_mmap_free()), after any
 * mmap() that found it earlier.  A mapping still in place after the free
 * keeps its pages, which the core has by then replaced in the HBM: the
 * next owner of those frames starts from zeroes and never shares a page
 * with the old mapping.  The core refuses ibv_free_dm() while an MR
 * uses the DM (usecnt), so no engine translation outlives the HBM.
 */
#include <linux/mm.h>
#include <linux/gaudi_nic/core.h>
#include <rdma/uverbs_ioctl.h>

#define UVERBS_MODULE_NAME gaudi_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>
#include <rdma/gaudi-abi.h>

#include "gaudi_ib.h"

/* The largest DM: at most this, and at most an eighth of the HBM. */
#define GIB_MAX_DM_SIZE	SZ_4M

u64 gib_max_dm_size(struct gib_dev *dev)
{
	return min_t(u64, GIB_MAX_DM_SIZE, dev->gadev->gdev->hbm_size / 8);
}

struct ib_dm *gib_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			   struct ib_dm_alloc_attr *attr,
			   struct uverbs_attr_bundle *attrs)
{
	struct gib_dev *dev = to_gdev(ibdev);
	struct gib_ucontext *uc = to_guc(ibuc);
	struct gib_mmap_entry *me;
	struct gaudi_nic_hbm *hbm;
	struct gib_dm *dm;
	int ret;

	/* HBM frames are page aligned: any alignment up to a page is met */
	if (!attr->length || attr->length > gib_max_dm_size(dev) ||
	    attr->alignment > PAGE_SHIFT || attr->flags)
		return ERR_PTR(-EINVAL);
	ret = gib_charge(uc, GIB_RES_DM, 0);
	if (ret)
		return ERR_PTR(ret);
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	me = kzalloc(sizeof(*me), GFP_KERNEL_ACCOUNT);
	if (!dm || !me) {
		ret = -ENOMEM;
		goto err_free;
	}
	hbm = gaudi_nic_hbm_alloc(dev->gadev->gdev, attr->length);
	if (IS_ERR(hbm)) {
		ret = PTR_ERR(hbm);
		goto err_free;
	}
	me->hbm = hbm;
	ret = rdma_user_mmap_entry_insert(ibuc, &me->rdma,
					  gaudi_nic_hbm_size(hbm));
	if (ret) {
		gaudi_nic_hbm_free(hbm);
		goto err_free;
	}
	dm->mmap = &me->rdma;
	dm->hbm = hbm;
	dm->uc = uc;
	return &dm->ibdm;

err_free:
	kfree(me);
	kfree(dm);
	gib_uncharge(uc, GIB_RES_DM, 0);
	return ERR_PTR(ret);
}

int gib_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs)
{
	struct gib_dm *dm = to_gdm(ibdm);

	/* the HBM goes with the entry's last reference (gib_mmap_free()) */
	rdma_user_mmap_entry_remove(dm->mmap);
	gib_uncharge(dm->uc, GIB_RES_DM, 0);
	kfree(dm);
	return 0;
}

/*
 * Map a DM's HBM pages into @vma.  Only shared mappings: a private one
 * would copy the pages on the first write and ibv_memcpy_to_dm() would
 * never reach the HBM.
 */
int gib_dm_map(struct vm_area_struct *vma, struct gaudi_nic_hbm *hbm)
{
	unsigned long addr;
	u64 off = 0;
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		struct page *page = gaudi_nic_hbm_page(hbm, off);

		if (!page)
			return -ENODEV;
		ret = vm_insert_page(vma, addr, page);
		put_page(page);
		if (ret)
			return ret;
		off += PAGE_SIZE;
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	return 0;
}

/* Only what an HBM DM MR can do: no atomics (atomic_cap is NONE). */
#define GIB_DM_MR_ACCESS	(IB_ZERO_BASED | IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ)

/*
 * A zero-based MR of bytes [@attr->offset, + @attr->length) of the DM
 * (the core checked that range against the DM's length; it may be empty):
 * its page list is the bus addresses of the HBM frames it covers.
 */
struct ib_mr *gib_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			    struct ib_dm_mr_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct gib_dev *dev = to_gdev(ibpd->device);
	struct gib_dm *dm = to_gdm(ibdm);
	u64 first = ALIGN_DOWN(attr->offset, PAGE_SIZE);
	u64 last = ALIGN(attr->offset + attr->length, PAGE_SIZE);
	struct gn_roce_mr_ctx ctx = {};
	struct gib_pbl pbl = {};
	struct gib_mr *mr;
	u32 i, n;
	int ret;

	/*
	 * Atomic access is refused, not ignored as for user MRs: no client
	 * asks for it on DM MRs out of habit, and an MR that says it takes
	 * atomics should.
	 */
	if (attr->access_flags & ~GIB_DM_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	mr = gib_mr_new(ibpd, dm->uc, attr->access_flags, attr->length, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	/*
	 * An MR of 0 bytes (mlx5 takes them) still names a page: its own,
	 * or the DM's last one when it sits at the DM's page-aligned end.
	 */
	if (first >= gaudi_nic_hbm_size(dm->hbm))
		first -= PAGE_SIZE;
	n = max_t(u32, (last - first) >> PAGE_SHIFT, 1);
	ret = gib_pbl_alloc(dev, &pbl, n, &ctx.pages);
	if (ret) {
		gib_mr_undo(dev, mr);
		return ERR_PTR(ret);
	}
	for (i = 0; i < n; i++)
		pbl.cpu[i] = cpu_to_le64(gaudi_nic_hbm_bus(dm->hbm, first +
							   ((u64)i << PAGE_SHIFT)));
	gib_mr_ctx_fill(&ctx, 0, attr->length, mr->ibmr.lkey, to_gpd(ibpd)->pdn,
			attr->access_flags, attr->offset & ~PAGE_MASK);
	ret = gib_mr_install(dev, mr, &ctx, &pbl);
	return ret ? ERR_PTR(ret) : &mr->ibmr;
}

/*
 * GAUDI_IB_METHOD_DM_QUERY: where to mmap a DM and how long it is, for
 * the provider after ibv_alloc_dm() and for ibv_import_dm() in another
 * context of the same file.
 */
static int
UVERBS_HANDLER(GAUDI_IB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ibdm = uverbs_attr_get_obj(attrs,
						 GAUDI_IB_ATTR_QUERY_DM_HANDLE);
	struct gib_dm *dm = to_gdm(ibdm);
	u64 off = rdma_user_mmap_get_offset(dm->mmap);
	u64 len = ibdm->length;
	int ret;

	ret = uverbs_copy_to(attrs, GAUDI_IB_ATTR_QUERY_DM_MMAP_OFFSET, &off,
			     sizeof(off));
	if (ret)
		return ret;
	return uverbs_copy_to(attrs, GAUDI_IB_ATTR_QUERY_DM_LENGTH, &len,
			      sizeof(len));
}

DECLARE_UVERBS_NAMED_METHOD(GAUDI_IB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(GAUDI_IB_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(GAUDI_IB_ATTR_QUERY_DM_MMAP_OFFSET,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(GAUDI_IB_ATTR_QUERY_DM_LENGTH,
						UVERBS_ATTR_TYPE(u64),
						UA_MANDATORY));

DECLARE_UVERBS_GLOBAL_METHODS(UVERBS_OBJECT_DM,
			      &UVERBS_METHOD(GAUDI_IB_METHOD_DM_QUERY));

static const struct uapi_definition gib_uapi_def_list[] = {
	UAPI_DEF_CHAIN_OBJ_TREE_NAMED(UVERBS_OBJECT_DM),
	{},
};

const struct uapi_definition *const gib_uapi_defs = gib_uapi_def_list;
