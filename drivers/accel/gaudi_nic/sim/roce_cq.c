// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE engine's completion queues: the CREATE_CQ, RESIZE_CQ
 * and DESTROY_CQ mailbox commands.  A CQ is a ring in host memory that
 * the engine writes CQEs into (roce_dp.c) and the driver consumes.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>
#include "roce.h"

int gnsim_cmd_create_cq(struct gaudi_nic_roce *r, u32 cqn, const void *in,
			void *out)
{
	const struct gn_roce_cq_ctx *c = in;
	struct gnsim_rcq *cq;
	int ret;

	if (cqn >= GN_ROCE_MAX_CQ || !c->log_size ||
	    c->log_size > GN_ROCE_MAX_CQ_LOG || memchr_inv(c->rsvd, 0,
							   sizeof(c->rsvd)))
		return -EINVAL;
	if (r->cqs[cqn])
		return -EBUSY;
	cq = kzalloc(sizeof(*cq), GFP_KERNEL_ACCOUNT);
	if (!cq)
		return -ENOMEM;
	cq->cqn = cqn;
	ret = gnsim_rring_load(r, &c->ring, c->log_size, GN_ROCE_CQE_SIZE,
			       &cq->ring);
	if (ret) {
		kfree(cq);
		return ret;
	}
	cq->prod = le32_to_cpu(READ_ONCE(gnsim_rring_hdr(&cq->ring)->prod));
	spin_lock_bh(&r->dp_lock);
	r->cqs[cqn] = cq;
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

int gnsim_cmd_resize_cq(struct gaudi_nic_roce *r, u32 cqn, const void *in,
			void *out)
{
	const struct gn_roce_cq_ctx *c = in;
	struct gn_roce_ring_hdr *ohdr, *nhdr;
	struct gnsim_rring ring;
	struct gnsim_rcq *cq;
	u32 cons, n, i;
	int ret;

	if (cqn >= GN_ROCE_MAX_CQ || !c->log_size ||
	    c->log_size > GN_ROCE_MAX_CQ_LOG ||
	    memchr_inv(c->rsvd, 0, sizeof(c->rsvd)))
		return -EINVAL;
	ret = gnsim_rring_load(r, &c->ring, c->log_size, GN_ROCE_CQE_SIZE, &ring);
	if (ret)
		return ret;
	nhdr = gnsim_rring_hdr(&ring);
	spin_lock_bh(&r->dp_lock);
	cq = r->cqs[cqn];
	if (!cq) {
		ret = -ENOENT;
		goto out;
	}
	ohdr = gnsim_rring_hdr(&cq->ring);
	cons = le32_to_cpu(READ_ONCE(ohdr->cons));
	n = cq->prod - cons;
	/* a consumer index past prod or a ring behind: nothing sane to move */
	if (n > cq->ring.size || n > ring.size) {
		ret = -EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++)
		memcpy(gnsim_rring_entry(&ring, i),
		       gnsim_rring_entry(&cq->ring, cons + i), GN_ROCE_CQE_SIZE);
	WRITE_ONCE(nhdr->cons, 0);
	/* the entries before the index */
	smp_wmb();
	WRITE_ONCE(nhdr->prod, cpu_to_le32(n));
	swap(cq->ring, ring);
	cq->prod = n;
	cq->overflow = false;
out:
	spin_unlock_bh(&r->dp_lock);
	/* the old ring, or the new one if refused */
	gnsim_rmem_free(&ring.mem);
	return ret;
}

static void gnsim_cq_free(struct gnsim_rcq *cq)
{
	gnsim_rmem_free(&cq->ring.mem);
	kfree(cq);
}

int gnsim_cmd_destroy_cq(struct gaudi_nic_roce *r, u32 cqn, const void *in,
			 void *out)
{
	struct gnsim_rcq *cq;

	if (cqn >= GN_ROCE_MAX_CQ)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	cq = r->cqs[cqn];
	if (cq && cq->users) {
		spin_unlock_bh(&r->dp_lock);
		return -EBUSY;
	}
	r->cqs[cqn] = NULL;
	gnsim_roce_ev_drop(r, GN_ROCE_EV_COMP, GN_ROCE_EV_CQ_ERR, cqn);
	gnsim_roce_db_drop(r, GN_ROCE_DB_CQ_ARM, GN_ROCE_DB_CQ_ARM_SOL, cqn);
	spin_unlock_bh(&r->dp_lock);
	if (!cq)
		return -ENOENT;
	/* a delivery under way ends before the number can be reused */
	flush_work(&r->ev_work);
	gnsim_cq_free(cq);
	return 0;
}
