// SPDX-License-Identifier: GPL-2.0
/*
 * What creating and destroying the engine's ring-backed objects (CQ, SRQ,
 * QP) share, in the order create takes the steps and destroy undoes them:
 *
 *   gib_robj_reserve()    charge the user context, take an object number
 *   (the caller offers its rings and fills the engine's context)
 *   gib_robj_publish()    CREATE_* in the engine, then the number's entry
 *                         in the table events are dispatched through
 *   ...
 *   gib_robj_unpublish()  erase the entry, DESTROY_* in the engine
 *   (the caller frees its rings)
 *   gib_robj_release()    the number and the charge go back
 *
 * The kinds differ only in the table below, as rxe's object pools differ
 * only in their rxe_type_info.
 */
#include <linux/stddef.h>

#include "gaudi_ib.h"

static const struct gib_robj_kind {
	enum gib_res res;
	u32 min, max;		/* the engine's object numbers */
	u32 create, destroy;	/* GN_ROCE_CMD_* */
	size_t ida, xa;		/* in struct gib_dev */
} gib_robj_kinds[] = {
	[GIB_ROBJ_CQ] = {
		.res = GIB_RES_CQ,
		.max = GN_ROCE_MAX_CQ - 1,
		.create = GN_ROCE_CMD_CREATE_CQ,
		.destroy = GN_ROCE_CMD_DESTROY_CQ,
		.ida = offsetof(struct gib_dev, cq_ida),
		.xa = offsetof(struct gib_dev, cqs),
	},
	[GIB_ROBJ_SRQ] = {
		.res = GIB_RES_SRQ,
		.max = GN_ROCE_MAX_SRQ - 1,
		.create = GN_ROCE_CMD_CREATE_SRQ,
		.destroy = GN_ROCE_CMD_DESTROY_SRQ,
		.ida = offsetof(struct gib_dev, srq_ida),
		.xa = offsetof(struct gib_dev, srqs),
	},
	[GIB_ROBJ_QP] = {
		.res = GIB_RES_QP,
		.min = GN_ROCE_MIN_QPN,
		.max = GN_ROCE_MAX_QP - 1,
		.create = GN_ROCE_CMD_CREATE_QP,
		.destroy = GN_ROCE_CMD_DESTROY_QP,
		.ida = offsetof(struct gib_dev, qp_ida),
		.xa = offsetof(struct gib_dev, qps),
	},
};

static struct ida *gib_robj_ida(struct gib_dev *dev, enum gib_robj_type t)
{
	return (void *)dev + gib_robj_kinds[t].ida;
}

static struct xarray *gib_robj_xa(struct gib_dev *dev, enum gib_robj_type t)
{
	return (void *)dev + gib_robj_kinds[t].xa;
}

/*
 * Charge @uc (NULL: a kernel object) for one object of type @t with
 * @ring_bytes of rings, and take its number: the number, -EDQUOT past a
 * limit of @uc (gib_charge()), -ENOSPC when the numbers are used up.
 */
int gib_robj_reserve(struct gib_dev *dev, enum gib_robj_type t,
		     struct gib_ucontext *uc, u64 ring_bytes)
{
	const struct gib_robj_kind *k = &gib_robj_kinds[t];
	int ret;

	ret = gib_charge(uc, k->res, ring_bytes);
	if (ret)
		return ret;
	ret = gib_id_alloc(gib_robj_ida(dev, t), uc, k->res, k->min, k->max,
			   GFP_KERNEL);
	if (ret < 0)
		gib_uncharge(uc, k->res, ring_bytes);
	return ret;
}

/* Undo gib_robj_reserve() (@uc and @ring_bytes as given to it). */
void gib_robj_release(struct gib_dev *dev, enum gib_robj_type t,
		      struct gib_ucontext *uc, u32 num, u64 ring_bytes)
{
	ida_free(gib_robj_ida(dev, t), num);
	gib_uncharge(uc, gib_robj_kinds[t].res, ring_bytes);
}

/*
 * Create object @num in the engine from its context @ctx, then make @obj
 * the target of its events.  On failure nothing of it is left in the
 * engine or the table.
 */
int gib_robj_publish(struct gib_dev *dev, enum gib_robj_type t, u32 num,
		     void *obj, const void *ctx, size_t ctx_len)
{
	const struct gib_robj_kind *k = &gib_robj_kinds[t];
	int ret;

	ret = gaudi_nic_roce_cmd(dev->gadev, k->create, num, ctx, ctx_len,
				 NULL, 0);
	if (ret)
		return ret;
	ret = xa_insert_irq(gib_robj_xa(dev, t), num, obj, GFP_KERNEL);
	if (ret)
		gaudi_nic_roce_cmd(dev->gadev, k->destroy, num, NULL, 0, NULL, 0);
	return ret;
}

/*
 * Undo gib_robj_publish(): once the entry is gone no event reaches the
 * object, and once DESTROY_* returns the engine is done with its rings.
 * Returns DESTROY_*'s result: -EBUSY for a CQ or an SRQ that QPs still
 * use, -ENODEV once the engine is disabled.
 */
int gib_robj_unpublish(struct gib_dev *dev, enum gib_robj_type t, u32 num)
{
	xa_erase_irq(gib_robj_xa(dev, t), num);
	return gaudi_nic_roce_cmd(dev->gadev, gib_robj_kinds[t].destroy, num,
				  NULL, 0, NULL, 0);
}
