// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib shared receive queues.
 *
 * An SRQ is a ring of receive WQEs (the RQ format) that the engine hands
 * out, in ring order, to the RC and UD QPs created on it
 * (GN_ROCE_QPF_SRQ: those have no RQ of their own).  User SRQs are mapped into the process, which
 * posts by writing the ring and publishing the producer index; no
 * doorbell is needed, so the kernel is not involved in posting.  Kernel
 * SRQs are posted to by gib_post_srq_recv() under @lock.
 *
 * The limit event: an SRQ armed with a non-zero limit (at creation or by
 * modify_srq(IB_SRQ_LIMIT)) gets GN_ROCE_EV_SRQ_LIMIT once fewer WQEs than
 * the limit are posted; the engine disarms it (limit 0) when it fires,
 * as the verbs specification asks.  gib_event() turns it into
 * IB_EVENT_SRQ_LIMIT_REACHED through dev->srqs.
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

static int gib_check_srq_attr(const struct ib_srq_attr *a)
{
	if (!a->max_wr || a->max_wr > (1U << GN_ROCE_MAX_WQ_LOG) ||
	    a->max_sge > GN_ROCE_MAX_SGE)
		return -EINVAL;
	/* the limit is a number of posted WQEs: at most the ring's size */
	if (a->srq_limit > a->max_wr)
		return -EINVAL;
	return 0;
}

int gib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibsrq->device);
	struct gib_srq *srq = to_gsrq(ibsrq);
	struct gaudi_create_srq_resp resp = {};
	struct gn_roce_srq_ctx ctx = {};
	struct gib_ucontext *uc;
	struct gib_pbl pbl = {};
	u64 bytes;
	u32 log;
	int ret;

	/* XRC and tag-matching SRQs are not offered */
	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	ret = gib_check_srq_attr(&init->attr);
	if (ret)
		return ret;
	ret = gib_check_udata_in(udata) ?: gib_udata_uc(udata, &uc);
	if (ret)
		return ret;

	/* the engine's rings have at least two slots */
	log = max(order_base_2(init->attr.max_wr), 1);
	spin_lock_init(&srq->lock);
	mutex_init(&srq->resize);
	srq->prod = 0;
	srq->max_sge = init->attr.max_sge;
	srq->uc = uc;
	bytes = gib_ring_bytes(log, GN_ROCE_WQE_SIZE);
	ret = gib_robj_reserve(dev, GIB_ROBJ_SRQ, uc, bytes);
	if (ret < 0)
		return ret == -ENOSPC ? -ENOMEM : ret;
	srq->srqn = ret;
	ret = gib_ring_offer(dev, uc, &srq->ring, log, GN_ROCE_WQE_SIZE, &pbl,
			     &ctx.ring, &resp.srq_mmap_key, &resp.srq_mmap_len);
	if (ret)
		goto err_release;
	ctx.pdn = cpu_to_le32(to_gpd(ibsrq->pd)->pdn);
	ctx.limit = cpu_to_le32(init->attr.srq_limit);
	ctx.log_size = log;
	ret = gib_robj_publish(dev, GIB_ROBJ_SRQ, srq->srqn, srq, &ctx,
			       sizeof(ctx));
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err_ring;
	if (udata) {
		resp.srqn = srq->srqn;
		resp.log_size = log;
		ret = gib_respond(udata, &resp, sizeof(resp));
		if (ret)
			goto err_unpublish;
	}
	init->attr.max_wr = 1U << log;
	init->attr.max_sge = srq->max_sge;
	return 0;

err_unpublish:
	gib_robj_unpublish(dev, GIB_ROBJ_SRQ, srq->srqn);
err_ring:
	gib_ring_free(dev, &srq->ring);
err_release:
	gib_robj_release(dev, GIB_ROBJ_SRQ, uc, srq->srqn, bytes);
	return ret;
}

/*
 * Resize (IB_SRQ_MAX_WR) a user SRQ to 2^log WQEs: a new ring, offered for
 * mmap before the engine moves the posted WQEs there (RESIZE_SRQ), so that
 * nothing fails after the move; its mmap key, length and producer index go
 * to the provider at @resp_addr.  The provider holds its SRQ lock, so it
 * posts nothing meanwhile.  Under srq->resize.
 */
static int gib_resize_srq(struct gib_dev *dev, struct gib_srq *srq, u32 log,
			  u64 resp_addr)
{
	struct gaudi_resize_srq_resp resp = {};
	struct gn_roce_srq_ctx ctx = {};
	int ret;

	lockdep_assert_held(&srq->resize);
	ctx.log_size = log;
	ret = gib_ring_replace(dev, srq->uc, GIB_RES_SRQ, &srq->ring, log,
			       GN_ROCE_CMD_RESIZE_SRQ, srq->srqn, &ctx,
			       sizeof(ctx), &ctx.ring, &resp.srq_mmap_key,
			       &resp.srq_mmap_len);
	if (ret)
		return ret;
	resp.log_size = log;
	/* the engine set it: the WQEs it moved */
	resp.prod = le32_to_cpu(((struct gn_roce_ring_hdr *)srq->ring.buf)->prod);
	if (copy_to_user(u64_to_user_ptr(resp_addr), &resp, sizeof(resp)))
		return -EFAULT;
	return 0;
}

/*
 * IB_SRQ_LIMIT arms the limit event (0 disarms it).  IB_SRQ_MAX_WR
 * resizes a user SRQ (struct gaudi_modify_srq_cmd); kernel SRQs are not
 * resized (EOPNOTSUPP).
 */
int gib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibsrq->device);
	struct gib_srq *srq = to_gsrq(ibsrq);
	struct gaudi_modify_srq_cmd cmd = {};
	__le32 limit;
	u32 log;
	int ret = 0;

	if (mask & ~(IB_SRQ_LIMIT | IB_SRQ_MAX_WR))
		return -EOPNOTSUPP;
	if (udata && udata->inlen) {
		if (udata->inlen > sizeof(cmd) &&
		    !ib_is_udata_cleared(udata, sizeof(cmd),
					 udata->inlen - sizeof(cmd)))
			return -EINVAL;
		ret = ib_copy_from_udata(&cmd, udata,
					 min(udata->inlen, sizeof(cmd)));
		if (ret)
			return ret;
	}
	if (!(mask & IB_SRQ_MAX_WR) && cmd.resp_addr)
		return -EINVAL;
	if (mask & IB_SRQ_MAX_WR) {
		if (!srq->uc)
			return -EOPNOTSUPP;
		if (!cmd.resp_addr || !attr->max_wr ||
		    attr->max_wr > (1U << GN_ROCE_MAX_WQ_LOG))
			return -EINVAL;
	}
	/* the core lets modifies of one SRQ run at once */
	mutex_lock(&srq->resize);
	if (mask & IB_SRQ_MAX_WR) {
		log = max(order_base_2(attr->max_wr), 1);
		ret = gib_resize_srq(dev, srq, log, cmd.resp_addr);
	}
	if (!ret && (mask & IB_SRQ_LIMIT)) {
		limit = cpu_to_le32(attr->srq_limit);
		ret = attr->srq_limit > (1U << srq->ring.log_size) ? -EINVAL :
		      gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_ARM_SRQ,
					 srq->srqn, &limit, sizeof(limit),
					 NULL, 0);
	}
	mutex_unlock(&srq->resize);
	return ret;
}

int gib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct gib_dev *dev = to_gdev(ibsrq->device);
	struct gib_srq *srq = to_gsrq(ibsrq);
	struct gn_roce_srq_ctx ctx;
	int ret;

	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_QUERY_SRQ, srq->srqn,
				 NULL, 0, &ctx, sizeof(ctx));
	if (ret)
		return ret;
	mutex_lock(&srq->resize);
	attr->max_wr = 1U << srq->ring.log_size;
	mutex_unlock(&srq->resize);
	attr->max_sge = srq->max_sge;
	/* 0 once the event fired: the engine disarms it */
	attr->srq_limit = le32_to_cpu(ctx.limit);
	return 0;
}

/* The core refuses (-EBUSY) while QPs use the SRQ, so none does here. */
int gib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibsrq->device);
	struct gib_srq *srq = to_gsrq(ibsrq);
	u32 log = srq->ring.log_size;
	int ret;

	/* no limit event reaches the SRQ after this */
	ret = gib_robj_unpublish(dev, GIB_ROBJ_SRQ, srq->srqn);
	WARN_ON_ONCE(ret && ret != -ENODEV);
	gib_ring_free(dev, &srq->ring);
	gib_robj_release(dev, GIB_ROBJ_SRQ, srq->uc, srq->srqn,
			 gib_ring_bytes(log, GN_ROCE_WQE_SIZE));
	return 0;
}

/*
 * Kernel SRQs: gib_kring_post() writes each WQE whole into its slot, then
 * publishes the producer index (release); the engine looks at it when a
 * message arrives, so no doorbell is rung.  User SRQs post through their mapped
 * ring and never get here (the core does not offer the post_srq_recv
 * write command to user space).
 */
int gib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad)
{
	struct gib_srq *srq = to_gsrq(ibsrq);
	const void *b;
	u32 posted;
	int ret;

	if (ibsrq->uobject) {
		*bad = wr;
		return -EOPNOTSUPP;
	}
	ret = gib_kring_post(&srq->ring, &srq->lock, &srq->prod,
			     &gib_recv_wr_ops, &srq->max_sge, wr, &b, &posted);
	if (ret)
		*bad = b;
	return ret;
}
