// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib completion queues: creation, destruction, arming.
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"
int gib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			 struct uverbs_attr_bundle *attrs)
{
	struct ib_udata *udata = &attrs->driver_udata;
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	struct gaudi_create_cq_resp resp = {};
	struct gn_roce_cq_ctx ctx = {};
	struct gib_pbl pbl = {};
	struct gib_ucontext *guc;
	u32 log;
	int ret;

	if (!ibcq->uobject)
		return -EOPNOTSUPP;
	if (attr->flags || !attr->cqe || attr->cqe >= (1 << GN_ROCE_MAX_CQ_LOG))
		return -EINVAL;
	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	guc = rdma_udata_to_drv_context(udata, struct gib_ucontext, ibuc);
	if (!guc)
		return -EINVAL;
	/* One slot is never filled: size > cqe. */
	log = order_base_2(attr->cqe + 1);
	ret = ida_alloc_range(&dev->cq_ida, 0, GN_ROCE_MAX_CQ - 1, GFP_KERNEL);
	if (ret < 0)
		return ret;
	cq->cqn = ret;
	ret = gib_ring_alloc(dev, &cq->ring, log, GN_ROCE_CQE_SIZE);
	if (ret)
		goto err_ida;
	ret = gib_ring_pbl(dev, &cq->ring, &pbl, &ctx.ring);
	if (ret)
		goto err_ring;
	ctx.log_size = log;
	ret = gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_CREATE_CQ, cq->cqn, &ctx,
				 sizeof(ctx), NULL, 0);
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err_ring;
	ret = xa_insert_irq(&dev->cqs, cq->cqn, cq, GFP_KERNEL);
	if (ret)
		goto err_destroy;
	ret = gib_ring_mmap(&guc->ibuc, &cq->ring, &resp.cq_mmap_key,
			    &resp.cq_mmap_len);
	if (ret)
		goto err_erase;
	resp.cqn = cq->cqn;
	resp.log_size = log;
	ret = gib_respond(udata, &resp, sizeof(resp));
	if (ret)
		goto err_erase;
	ibcq->cqe = (1 << log) - 1;
	return 0;

err_erase:
	xa_erase_irq(&dev->cqs, cq->cqn);
err_destroy:
	gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_DESTROY_CQ, cq->cqn, NULL, 0,
			   NULL, 0);
err_ring:
	gib_ring_free(dev, &cq->ring);
err_ida:
	ida_free(&dev->cq_ida, cq->cqn);
	return ret;
}

int gib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	int ret;

	xa_erase_irq(&dev->cqs, cq->cqn);
	ret = gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_DESTROY_CQ, cq->cqn,
				 NULL, 0, NULL, 0);
	/* The core destroys QPs first; the engine refuses only if busy. */
	WARN_ON_ONCE(ret && ret != -ENODEV);
	gib_ring_free(dev, &cq->ring);
	ida_free(&dev->cq_ida, cq->cqn);
	return 0;
}

int gib_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	return -EOPNOTSUPP;
}

int gib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags f)
{
	struct gib_cq *cq = to_gcq(ibcq);
	u32 type = (f & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		   GN_ROCE_DB_CQ_ARM_SOL : GN_ROCE_DB_CQ_ARM;

	gaudi_nic_roce_doorbell(to_gdev(ibcq->device)->hw,
				GN_ROCE_DB(type, cq->cqn));
	return 0;
}
