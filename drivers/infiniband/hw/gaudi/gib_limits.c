// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib per-context limits.
 *
 * The device's id spaces (QPs, CQs, SRQs, MRs, PDs, AHs) are shared by
 * every process; without a limit one process can take all of them.  Each
 * user context (struct gib_ucontext, one per open of the uverbs device)
 * counts the objects it created and the bytes of the rings it owns, and a
 * creation that would pass the limit fails with -EDQUOT.  Kernel objects
 * (the MAD layer's, rdma_cm's) are not counted.  The limits are the
 * device's, devlink params the core keeps (max_<kind>_per_ctx, runtime;
 * gaudi_nic's devlink.c): a new value applies to the next creation
 * (objects that already exist stay).  0 means no limit.
 *
 * The defaults are an eighth of each id space (N2 of the November review:
 * they were half of it, the whole of it for windows, so one or two
 * contexts took everything).  The lowest numbers of each space are kept
 * for kernel consumers (gib_kernel_reserve): user contexts together can
 * exhaust only the rest, so QP1, rdma_cm's AHs and kernel ULPs still get
 * theirs.
 *
 * A process can open the device several times: the rdma cgroup's
 * hca_handle and hca_object limits (charged by the RDMA core for every
 * uverbs object) bound how many contexts and objects it has.
 */
#include <linux/platform_device.h>
#include <linux/sched.h>

#include "gaudi_ib.h"

/* Each kind of object as the log names it, and its devlink param. */
static const struct {
	const char *what;
	const char *param;
} gib_res_info[GIB_RES_MAX + 1] = {
	[GIB_RES_PD] = { "PDs", "max_pd_per_ctx" },
	[GIB_RES_CQ] = { "CQs", "max_cq_per_ctx" },
	[GIB_RES_QP] = { "QPs", "max_qp_per_ctx" },
	[GIB_RES_SRQ] = { "SRQs", "max_srq_per_ctx" },
	[GIB_RES_MR] = { "MRs", "max_mr_per_ctx" },
	[GIB_RES_AH] = { "AHs", "max_ah_per_ctx" },
	[GIB_RES_MW] = { "MWs", "max_mw_per_ctx" },
	[GIB_RES_DM] = { "DMs", "max_dm_per_ctx" },
	[GIB_RES_MAX] = { "bytes of rings", "max_ring_mb_per_ctx" },
};

/*
 * Numbers at the bottom of each id space only kernel objects take: QP1 of
 * every port, the MAD layer's and rdma_cm's CQs, PDs and AHs, kernel ULPs.
 * No kernel MRs (gib_get_dma_mr() makes none) or windows are made.
 */
static const u32 gib_kernel_reserve[GIB_RES_MAX] = {
	[GIB_RES_PD] = 64,
	[GIB_RES_CQ] = 64,
	[GIB_RES_QP] = 64,
	[GIB_RES_SRQ] = 16,
	[GIB_RES_AH] = 1024,
};

/*
 * A number for a new object of type @res from @ida, in @min .. @max; a
 * user object's (@uc set) above the kernel's reserve.  -ENOSPC when the
 * space is full.
 */
int gib_id_alloc(struct ida *ida, struct gib_ucontext *uc, enum gib_res res,
		 u32 min, u32 max, gfp_t gfp)
{
	if (uc)
		min += gib_kernel_reserve[res];
	if (min > max)
		return -ENOSPC;
	return ida_alloc_range(ida, min, max, gfp);
}

void gib_limits_init(struct gib_ucontext *uc)
{
	spin_lock_init(&uc->lim_lock);
	memset(uc->count, 0, sizeof(uc->count));
	uc->ring_bytes = 0;
}

/*
 * Why one more object of type @res with @bytes of rings does not fit in
 * @uc, as the index of the limit it passes (GIB_RES_MAX: the ring bytes),
 * or -1 if it fits.
 */
static int gib_over_limit(struct gib_ucontext *uc, enum gib_res res,
			  u64 bytes, u32 max, u64 max_bytes)
{
	lockdep_assert_held(&uc->lim_lock);
	if (max && uc->count[res] >= max)
		return res;
	if (max_bytes && (bytes > max_bytes ||
			  uc->ring_bytes > max_bytes - bytes))
		return GIB_RES_MAX;
	return -1;
}

/*
 * Charge one object of type @res and @bytes of its rings to the user
 * context @uc (NULL, a kernel object: nothing to charge).  Returns 0, or
 * -EDQUOT with one (rate-limited) line in the log that names the limit.
 */
int gib_charge(struct gib_ucontext *uc, enum gib_res res, u64 bytes)
{
	struct gaudi_nic_dev *gdev;
	u64 max_bytes, held;
	u32 max;
	int over;

	if (!uc)
		return 0;
	gdev = to_gdev(uc->ibuc.device)->gadev->gdev;
	max = READ_ONCE(gdev->ctx_max[res]);
	max_bytes = (u64)READ_ONCE(gdev->ctx_max[GAUDI_NIC_CTX_RING_MB]) << 20;
	spin_lock(&uc->lim_lock);
	over = gib_over_limit(uc, res, bytes, max, max_bytes);
	if (over < 0) {
		uc->count[res]++;
		uc->ring_bytes += bytes;
	}
	held = uc->ring_bytes;
	spin_unlock(&uc->lim_lock);
	if (over < 0)
		return 0;
	if (over == GIB_RES_MAX)
		ibdev_warn_ratelimited(uc->ibuc.device,
				       "%s[%d]: a context with %llu bytes of rings asked for %llu more, past its limit of %llu MiB; raise it with: devlink dev param set platform/%s name %s value MIB cmode runtime (0: no limit)\n",
				       current->comm, task_tgid_nr(current),
				       held, bytes, max_bytes >> 20,
				       dev_name(&gdev->pdev->dev),
				       gib_res_info[over].param);
	else
		ibdev_warn_ratelimited(uc->ibuc.device,
				       "%s[%d]: a context is at its limit of %u %s; raise it with: devlink dev param set platform/%s name %s value N cmode runtime (0: no limit)\n",
				       current->comm, task_tgid_nr(current),
				       max, gib_res_info[over].what,
				       dev_name(&gdev->pdev->dev),
				       gib_res_info[over].param);
	return -EDQUOT;
}

/* Give back what gib_charge() took. */
void gib_uncharge(struct gib_ucontext *uc, enum gib_res res, u64 bytes)
{
	if (!uc)
		return;
	spin_lock(&uc->lim_lock);
	if (!WARN_ON_ONCE(!uc->count[res] || uc->ring_bytes < bytes)) {
		uc->count[res]--;
		uc->ring_bytes -= bytes;
	}
	spin_unlock(&uc->lim_lock);
}
