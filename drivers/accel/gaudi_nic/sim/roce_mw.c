// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: memory windows (type 1 and type 2B).
 *
 * A window is a remote key onto a range of an MR, bound and unbound by
 * work requests (BIND_MW, LOCAL_INV, a received SEND with invalidate)
 * rather than by commands, so that binding is ordered with the QP's other
 * work.  The responder resolves an MW rkey to the window's MR
 * (gnsim_mw_resolve()); the MR's own rkey and access do not matter there,
 * only the window's.  A type 2 window is usable only through the QP it was
 * bound on.  Everything runs under dp_lock, except the commands, which
 * take it.
 */
#include "roce_dp.h"

/*
 * Unbind @mw.  Its MR counts the windows bound to it (gnsim_rmr.mws), and
 * refuses DESTROY_MR and REREG_MR while any is (N6 of the November
 * review: a window outlived its MR, and with the MR's index reused and a
 * 1 in 256 tag match, its old rkey reached a new buffer).
 */
static void gnsim_mw_unbind(struct gaudi_nic_roce *r, struct gnsim_rmw *mw)
{
	struct gnsim_rmr *mr;

	if (!mw->bound)
		return;
	mr = gnsim_mr_get(r, mw->mr_key, mw->pdn);
	if (!WARN_ON_ONCE(!mr || !mr->mws))
		mr->mws--;
	mw->bound = false;
}

static struct gnsim_rmw *gnsim_mw_of(struct gaudi_nic_roce *r, u32 key)
{
	u32 idx = key >> 8;

	if (idx < GN_ROCE_MAX_MR || idx - GN_ROCE_MAX_MR >= GN_ROCE_MAX_MW)
		return NULL;
	return &r->mws[idx - GN_ROCE_MAX_MR];
}

bool gnsim_key_is_mw(u32 key)
{
	return (key >> 8) >= GN_ROCE_MAX_MR;
}

int gnsim_cmd_create_mw(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out)
{
	const struct gn_roce_mw_ctx *c = in;
	u32 key = le32_to_cpu(c->key);
	struct gnsim_rmw *mw;
	int ret = 0;

	if (index >= GN_ROCE_MAX_MW || key >> 8 != GN_ROCE_MAX_MR + index ||
	    (c->type != 1 && c->type != 2) ||
	    memchr_inv(c->rsvd, 0, sizeof(c->rsvd)))
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	mw = &r->mws[index];
	if (mw->used) {
		ret = -EBUSY;
	} else {
		memset(mw, 0, sizeof(*mw));
		mw->used = true;
		mw->type = c->type;
		mw->key = key;
		mw->pdn = le32_to_cpu(c->pdn);
	}
	spin_unlock_bh(&r->dp_lock);
	return ret;
}

int gnsim_cmd_destroy_mw(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out)
{
	int ret = 0;

	if (index >= GN_ROCE_MAX_MW)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	if (r->mws[index].used) {
		gnsim_mw_unbind(r, &r->mws[index]);
		memset(&r->mws[index], 0, sizeof(r->mws[index]));
	} else {
		ret = -ENOENT;
	}
	spin_unlock_bh(&r->dp_lock);
	return ret;
}

/* QP @qpn goes away: the type 2 windows bound through it are unbound. */
void gnsim_mw_qp_gone(struct gaudi_nic_roce *r, u32 qpn)
{
	u32 i;

	lockdep_assert_held(&r->dp_lock);
	for (i = 0; i < GN_ROCE_MAX_MW; i++) {
		struct gnsim_rmw *mw = &r->mws[i];

		if (mw->used && mw->bound && mw->type == 2 && mw->qpn == qpn)
			gnsim_mw_unbind(r, mw);
	}
}

/*
 * The MR behind window @key for a request on @qp: bound, same PD, the
 * QP's own for type 2, granting @acc over @va .. @va + @len, and its MR
 * still the one it was bound to.  NULL if any of it fails.
 */
struct gnsim_rmr *gnsim_mw_resolve(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
				   u32 key, u64 va, u64 len, u32 acc)
{
	struct gnsim_rmw *mw = gnsim_mw_of(r, key);
	struct gnsim_rmr *mr;

	lockdep_assert_held(&r->dp_lock);
	if (!mw || !mw->used || !mw->bound || mw->key != key ||
	    mw->pdn != le32_to_cpu(qp->ctx.pdn) ||
	    (mw->type == 2 && mw->qpn != qp->qpn) || !(mw->access & acc))
		return NULL;
	if (len && (va < mw->va || len > mw->length ||
		    va - mw->va > mw->length - len))
		return NULL;
	mr = gnsim_mr_get(r, mw->mr_key, mw->pdn);
	if (!mr || (len && !gnsim_mr_covers(mr, va, len)))
		return NULL;
	return mr;
}

/* BIND_MW on @qp (RC); 0 or a CQE status. */
static int gnsim_mw_bind(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			 const struct gn_roce_wqe *w)
{
	u32 key = le32_to_cpu(w->rkey), pdn = le32_to_cpu(qp->ctx.pdn);
	u32 acc = le32_to_cpu(w->bind.access);
	u64 va = le64_to_cpu(w->bind.addr);
	u64 len = le64_to_cpu(w->bind.length);
	struct gnsim_rmw *mw = gnsim_mw_of(r, key);
	struct gnsim_rmr *mr;

	if (!mw || !mw->used || mw->pdn != pdn ||
	    acc & ~(GN_ROCE_MR_REMOTE_WRITE | GN_ROCE_MR_REMOTE_READ))
		return GN_ROCE_CQE_MW_BIND_ERR;
	if (mw->type == 2 && (mw->bound || !len))
		return GN_ROCE_CQE_MW_BIND_ERR;
	if (!len) {			/* type 1: unbind */
		gnsim_mw_unbind(r, mw);
		mw->key = key;
		return 0;
	}
	mr = gnsim_mr_get(r, le32_to_cpu(w->bind.mr_lkey), pdn);
	if (!mr || !(mr->access & GN_ROCE_MR_MW_BIND) ||
	    !gnsim_mr_covers(mr, va, len) ||
	    ((acc & GN_ROCE_MR_REMOTE_WRITE) &&
	     !(mr->access & GN_ROCE_MR_LOCAL_WRITE)))
		return GN_ROCE_CQE_MW_BIND_ERR;
	/* a type 1 window bound elsewhere moves */
	gnsim_mw_unbind(r, mw);
	mr->mws++;
	mw->key = key;
	mw->mr_key = mr->key;
	mw->va = va;
	mw->length = len;
	mw->access = acc;
	mw->qpn = qp->qpn;
	mw->bound = true;
	return 0;
}

/* Unbind the type 2 window @key of PD @pdn (@qpn: only if bound there). */
static bool gnsim_mw_invalidate(struct gaudi_nic_roce *r, u32 key, u32 pdn,
				const u32 *qpn)
{
	struct gnsim_rmw *mw = gnsim_mw_of(r, key);

	if (!mw || !mw->used || mw->type != 2 || !mw->bound ||
	    mw->key != key || mw->pdn != pdn || (qpn && mw->qpn != *qpn))
		return false;
	gnsim_mw_unbind(r, mw);
	return true;
}

bool gnsim_mw_remote_inv(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u32 key)
{
	lockdep_assert_held(&r->dp_lock);
	return gnsim_mw_invalidate(r, key, le32_to_cpu(qp->ctx.pdn), &qp->qpn);
}

/* A local work request (BIND_MW, LOCAL_INV) at its turn: 0 or a status. */
int gnsim_mw_local_op(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		      const struct gn_roce_wqe *w)
{
	lockdep_assert_held(&r->dp_lock);
	if (w->opcode == GN_ROCE_WQE_BIND_MW)
		return gnsim_mw_bind(r, qp, w);
	return gnsim_mw_invalidate(r, le32_to_cpu(w->rkey),
				le32_to_cpu(qp->ctx.pdn), NULL) ?
	       0 : GN_ROCE_CQE_LOC_QP_OP_ERR;
}
