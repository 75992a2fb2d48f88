// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE engine's shared receive queues: the CREATE_SRQ,
 * RESIZE_SRQ, ARM_SRQ, QUERY_SRQ and DESTROY_SRQ mailbox commands.  An
 * SRQ is a ring of receive WQEs that the engine takes from for every QP
 * created on it.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "roce.h"

int gnsim_cmd_create_srq(struct gaudi_nic_roce *r, u32 srqn, const void *in,
			 void *out)
{
	const struct gn_roce_srq_ctx *c = in;
	struct gnsim_rsrq *srq;
	int ret;

	if (srqn >= GN_ROCE_MAX_SRQ || !c->log_size ||
	    c->log_size > GN_ROCE_MAX_WQ_LOG ||
	    le32_to_cpu(c->limit) > BIT(c->log_size) ||
	    memchr_inv(c->rsvd, 0, sizeof(c->rsvd)))
		return -EINVAL;
	if (r->srqs[srqn])
		return -EBUSY;
	srq = kzalloc(sizeof(*srq), GFP_KERNEL_ACCOUNT);
	if (!srq)
		return -ENOMEM;
	srq->srqn = srqn;
	srq->pdn = le32_to_cpu(c->pdn);
	srq->limit = le32_to_cpu(c->limit);
	ret = gnsim_rring_load(r, &c->ring, c->log_size, GN_ROCE_WQE_SIZE,
			       &srq->ring);
	if (ret) {
		kfree(srq);
		return ret;
	}
	srq->cons = le32_to_cpu(READ_ONCE(gnsim_rring_hdr(&srq->ring)->prod));
	WRITE_ONCE(gnsim_rring_hdr(&srq->ring)->cons, cpu_to_le32(srq->cons));
	spin_lock_bh(&r->dp_lock);
	r->srqs[srqn] = srq;
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

int gnsim_cmd_destroy_srq(struct gaudi_nic_roce *r, u32 srqn, const void *in,
			  void *out)
{
	struct gnsim_rsrq *srq;

	if (srqn >= GN_ROCE_MAX_SRQ)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	srq = r->srqs[srqn];
	if (srq && srq->users) {
		spin_unlock_bh(&r->dp_lock);
		return -EBUSY;
	}
	r->srqs[srqn] = NULL;
	gnsim_roce_ev_drop(r, GN_ROCE_EV_SRQ_LIMIT, GN_ROCE_EV_SRQ_LIMIT, srqn);
	spin_unlock_bh(&r->dp_lock);
	if (!srq)
		return -ENOENT;
	flush_work(&r->ev_work);
	gnsim_rmem_free(&srq->ring.mem);
	kfree(srq);
	return 0;
}

int gnsim_cmd_resize_srq(struct gaudi_nic_roce *r, u32 srqn, const void *in,
			 void *out)
{
	const struct gn_roce_srq_ctx *c = in;
	struct gn_roce_ring_hdr *ohdr, *nhdr;
	struct gnsim_rring ring;
	struct gnsim_rsrq *srq;
	u32 prod, n, i;
	int ret;

	if (srqn >= GN_ROCE_MAX_SRQ || !c->log_size ||
	    c->log_size > GN_ROCE_MAX_WQ_LOG || c->pdn || c->limit ||
	    memchr_inv(c->rsvd, 0, sizeof(c->rsvd)))
		return -EINVAL;
	ret = gnsim_rring_load(r, &c->ring, c->log_size, GN_ROCE_WQE_SIZE, &ring);
	if (ret)
		return ret;
	nhdr = gnsim_rring_hdr(&ring);
	spin_lock_bh(&r->dp_lock);
	srq = r->srqs[srqn];
	if (!srq) {
		ret = -ENOENT;
		goto out;
	}
	ohdr = gnsim_rring_hdr(&srq->ring);
	prod = le32_to_cpu(READ_ONCE(ohdr->prod));
	n = prod - srq->cons;
	if (n > srq->ring.size || n > ring.size) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++)
		memcpy(gnsim_rring_entry(&ring, i),
		       gnsim_rring_entry(&srq->ring, srq->cons + i),
		       GN_ROCE_WQE_SIZE);
	WRITE_ONCE(nhdr->cons, 0);
	WRITE_ONCE(nhdr->prod, cpu_to_le32(n));
	swap(srq->ring, ring);
	srq->cons = 0;
out:
	spin_unlock_bh(&r->dp_lock);
	gnsim_rmem_free(&ring.mem);
	return ret;
}

int gnsim_cmd_arm_srq(struct gaudi_nic_roce *r, u32 srqn, const void *in,
		      void *out)
{
	const __le32 *limit = in;
	struct gnsim_rsrq *srq;
	int ret = 0;

	if (srqn >= GN_ROCE_MAX_SRQ)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	srq = r->srqs[srqn];
	if (!srq)
		ret = -ENOENT;
	else if (le32_to_cpu(*limit) > srq->ring.size)
		ret = -EINVAL;
	else
		srq->limit = le32_to_cpu(*limit);
	spin_unlock_bh(&r->dp_lock);
	return ret;
}

int gnsim_cmd_query_srq(struct gaudi_nic_roce *r, u32 srqn, const void *in,
			void *out)
{
	struct gn_roce_srq_ctx *c = out;
	struct gnsim_rsrq *srq;

	if (srqn >= GN_ROCE_MAX_SRQ)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	spin_lock_bh(&r->dp_lock);
	srq = r->srqs[srqn];
	if (srq) {
		c->pdn = cpu_to_le32(srq->pdn);
		c->limit = cpu_to_le32(srq->limit);
		c->log_size = ilog2(srq->ring.size);
	}
	spin_unlock_bh(&r->dp_lock);
	return srq ? 0 : -ENOENT;
}
