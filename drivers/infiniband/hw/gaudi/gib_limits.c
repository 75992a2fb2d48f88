// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib per-context limits.
 *
 * The device's id spaces (QPs, CQs, SRQs, MRs, PDs, AHs) are shared by
 * every process; without a limit one process can take all of them.  Each
 * user context (struct gib_ucontext, one per open of the uverbs device)
 * counts the objects it created and the bytes of the rings it owns, and a
 * creation that would pass the limit fails with -EDQUOT.  Kernel objects
 * (the MAD layer's, rdma_cm's) are not counted.  The limits are module
 * parameters, writable at run time; a new value applies to the next
 * creation (objects that already exist stay).  0 means no limit.
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
#include <linux/module.h>
#include <linux/sched.h>

#include "gaudi_ib.h"

static unsigned int gib_max_pd = 8192;
module_param_named(max_pd_per_ctx, gib_max_pd, uint, 0644);
MODULE_PARM_DESC(max_pd_per_ctx,
		 "PDs one user context may hold (default 8192, 0: no limit)");

static unsigned int gib_max_cq = 128;
module_param_named(max_cq_per_ctx, gib_max_cq, uint, 0644);
MODULE_PARM_DESC(max_cq_per_ctx,
		 "CQs one user context may hold (default 128, 0: no limit)");

static unsigned int gib_max_qp = 128;
module_param_named(max_qp_per_ctx, gib_max_qp, uint, 0644);
MODULE_PARM_DESC(max_qp_per_ctx,
		 "QPs one user context may hold (default 128, 0: no limit)");

static unsigned int gib_max_srq = 128;
module_param_named(max_srq_per_ctx, gib_max_srq, uint, 0644);
MODULE_PARM_DESC(max_srq_per_ctx,
		 "SRQs one user context may hold (default 128, 0: no limit)");

static unsigned int gib_max_mr = 1024;
module_param_named(max_mr_per_ctx, gib_max_mr, uint, 0644);
MODULE_PARM_DESC(max_mr_per_ctx,
		 "MRs one user context may hold (default 1024, 0: no limit)");

static unsigned int gib_max_ah = 8192;
module_param_named(max_ah_per_ctx, gib_max_ah, uint, 0644);
MODULE_PARM_DESC(max_ah_per_ctx,
		 "AHs one user context may hold (default 8192, 0: no limit)");

static unsigned int gib_max_mw = 512;
module_param_named(max_mw_per_ctx, gib_max_mw, uint, 0644);
MODULE_PARM_DESC(max_mw_per_ctx,
		 "memory windows one user context may hold (default 512, 0: no limit)");

static unsigned int gib_max_dm = 64;
module_param_named(max_dm_per_ctx, gib_max_dm, uint, 0644);
MODULE_PARM_DESC(max_dm_per_ctx,
		 "device memory allocations (ibv_alloc_dm) one user context may hold (default 64, 0: no limit)");

static unsigned int gib_max_ring_mb = 1024;
module_param_named(max_ring_mb_per_ctx, gib_max_ring_mb, uint, 0644);
MODULE_PARM_DESC(max_ring_mb_per_ctx,
		 "MiB of QP/CQ/SRQ rings one user context may hold (default 1024, 0: no limit)");

static const struct {
	const char *what;
	const char *param;
	unsigned int *max;
} gib_res_info[GIB_RES_MAX] = {
	[GIB_RES_PD] = { "PDs", "max_pd_per_ctx", &gib_max_pd },
	[GIB_RES_CQ] = { "CQs", "max_cq_per_ctx", &gib_max_cq },
	[GIB_RES_QP] = { "QPs", "max_qp_per_ctx", &gib_max_qp },
	[GIB_RES_SRQ] = { "SRQs", "max_srq_per_ctx", &gib_max_srq },
	[GIB_RES_MR] = { "MRs", "max_mr_per_ctx", &gib_max_mr },
	[GIB_RES_AH] = { "AHs", "max_ah_per_ctx", &gib_max_ah },
	[GIB_RES_MW] = { "MWs", "max_mw_per_ctx", &gib_max_mw },
	[GIB_RES_DM] = { "DMs", "max_dm_per_ctx", &gib_max_dm },
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
			  u64 bytes, u64 max_bytes)
{
	unsigned int max = READ_ONCE(*gib_res_info[res].max);

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
	u64 max_bytes = (u64)READ_ONCE(gib_max_ring_mb) << 20;
	u64 held = 0;
	int over;

	if (!uc)
		return 0;
	spin_lock(&uc->lim_lock);
	over = gib_over_limit(uc, res, bytes, max_bytes);
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
				       "%s[%d]: a context with %llu bytes of rings asked for %llu more, past its limit of %llu MiB; raise /sys/module/gaudi_ib/parameters/max_ring_mb_per_ctx\n",
				       current->comm, task_tgid_nr(current),
				       held, bytes, max_bytes >> 20);
	else
		ibdev_warn_ratelimited(uc->ibuc.device,
				       "%s[%d]: a context is at its limit of %u %s; raise /sys/module/gaudi_ib/parameters/%s\n",
				       current->comm, task_tgid_nr(current),
				       READ_ONCE(*gib_res_info[over].max),
				       gib_res_info[over].what,
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
