// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib completion queues.
 *
 * A CQ is a ring the engine writes (struct gn_roce_cqe) and its consumer
 * reads.  User CQs are mapped into the process and polled there; kernel
 * CQs (udata NULL: the MAD layer's, rdma_cm's) live in kernel memory and
 * are polled by gib_poll_cq() under the CQ's lock.
 */
#include <linux/log2.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

int gib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct uverbs_attr_bundle *attrs)
{
	/* kernel CQs (ib_alloc_cq(), ib_create_cq()) come without attrs */
	struct ib_udata *udata = attrs && ibcq->uobject ?
				 &attrs->driver_udata : NULL;
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	struct gaudi_create_cq_resp resp = {};
	struct gn_roce_cq_ctx ctx = {};
	struct gib_pbl pbl = {};
	struct gib_ucontext *guc;
	u64 bytes;
	u32 log;
	int ret;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (!attr->cqe || attr->cqe > (1 << GN_ROCE_MAX_CQ_LOG))
		return -EINVAL;
	ret = gib_check_udata_in(udata) ?: gib_udata_uc(udata, &guc);
	if (ret)
		return ret;
	spin_lock_init(&cq->lock);
	mutex_init(&cq->resize);
	cq->cons = 0;
	/*
	 * The engine fills every slot of a CQ ring (it reports an overflow
	 * only when a CQE finds 2^log_size of them unconsumed), so a ring
	 * of 2^n CQEs serves a request for 2^n: ofi_rxm's default core CQ,
	 * (128 + 128) x 1024 peers = 2^18, takes 8 MiB, not 16.
	 */
	log = max_t(u32, order_base_2(attr->cqe), 1);
	cq->uc = guc;
	bytes = gib_ring_bytes(log, GN_ROCE_CQE_SIZE);
	ret = gib_robj_reserve(dev, GIB_ROBJ_CQ, guc, bytes);
	if (ret < 0)
		return ret;
	cq->cqn = ret;
	ret = gib_ring_offer(dev, guc, &cq->ring, log, GN_ROCE_CQE_SIZE, &pbl,
			     &ctx.ring, &resp.cq_mmap_key, &resp.cq_mmap_len);
	if (ret)
		goto err_release;
	ctx.log_size = log;
	ret = gib_robj_publish(dev, GIB_ROBJ_CQ, cq->cqn, cq, &ctx,
			       sizeof(ctx));
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err_ring;
	ibcq->cqe = 1 << log;
	if (!udata)
		return 0;
	resp.cqn = cq->cqn;
	resp.log_size = log;
	ret = gib_respond(udata, &resp, sizeof(resp));
	if (ret)
		goto err_unpublish;
	return 0;

err_unpublish:
	gib_robj_unpublish(dev, GIB_ROBJ_CQ, cq->cqn);
err_ring:
	gib_ring_free(dev, &cq->ring);
err_release:
	gib_robj_release(dev, GIB_ROBJ_CQ, guc, cq->cqn, bytes);
	return ret;
}

/*
 * ibv_resize_cq(): a new ring, to which the engine moves the CQEs not yet
 * consumed (RESIZE_CQ; -EINVAL if they do not fit), offered for mmap like
 * the first (gib_ring_replace()).  The provider polls the old ring up to
 * the call, under its CQ lock, and then maps the new one.  Kernel CQs are
 * not resized (EOPNOTSUPP).
 */
int gib_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	struct gaudi_resize_cq_resp resp = {};
	struct gn_roce_cq_ctx ctx = {};
	u32 log;
	int ret;

	if (!udata || !cq->uc)
		return -EOPNOTSUPP;
	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	if (cqe < 1 || cqe > (1 << GN_ROCE_MAX_CQ_LOG))
		return -EINVAL;
	log = max_t(u32, order_base_2(cqe), 1);
	/* the core lets resizes of one CQ run at once */
	mutex_lock(&cq->resize);
	ctx.log_size = log;
	ret = gib_ring_replace(dev, cq->uc, GIB_RES_CQ, &cq->ring, log,
			       GN_ROCE_CMD_RESIZE_CQ, cq->cqn, &ctx,
			       sizeof(ctx), &ctx.ring, &resp.cq_mmap_key,
			       &resp.cq_mmap_len);
	if (!ret) {
		ibcq->cqe = 1 << log;
		resp.log_size = log;
		/* a response lost here leaves the provider on the old ring */
		ret = gib_respond(udata, &resp, sizeof(resp));
	}
	mutex_unlock(&cq->resize);
	return ret;
}

int gib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	u32 log = cq->ring.log_size;
	int ret;

	ret = gib_robj_unpublish(dev, GIB_ROBJ_CQ, cq->cqn);
	/* The core destroys QPs first; the engine refuses only if busy. */
	WARN_ON_ONCE(ret && ret != -ENODEV);
	gib_ring_free(dev, &cq->ring);
	gib_robj_release(dev, GIB_ROBJ_CQ, cq->uc, cq->cqn,
			 gib_ring_bytes(log, GN_ROCE_CQE_SIZE));
	return 0;
}

static struct gn_roce_ring_hdr *gib_cq_hdr(struct gib_cq *cq)
{
	return cq->ring.buf;
}

static struct gn_roce_cqe *gib_cq_slot(struct gib_cq *cq, u32 idx)
{
	return cq->ring.buf + GN_ROCE_RING_HDR_SIZE +
	       (size_t)(idx & ((1U << cq->ring.log_size) - 1)) * cq->ring.stride;
}

/* CQEs the engine has written and the kernel consumer not yet taken. */
static u32 gib_cq_pending(struct gib_cq *cq)
{
	u32 prod;

	lockdep_assert_held(&cq->lock);
	/* pairs with the engine's write of prod after the CQEs */
	prod = le32_to_cpu(smp_load_acquire(&gib_cq_hdr(cq)->prod));
	/* never trust the engine to stay within the ring */
	return min(prod - cq->cons, 1U << cq->ring.log_size);
}

static enum ib_wc_opcode gib_wc_opcode(u8 op, bool *ok)
{
	*ok = true;
	switch (op) {
	case GN_ROCE_CQE_SEND:
		return IB_WC_SEND;
	case GN_ROCE_CQE_WRITE:
		return IB_WC_RDMA_WRITE;
	case GN_ROCE_CQE_READ:
		return IB_WC_RDMA_READ;
	case GN_ROCE_CQE_RECV:
		return IB_WC_RECV;
	case GN_ROCE_CQE_RECV_WRITE_IMM:
		return IB_WC_RECV_RDMA_WITH_IMM;
	case GN_ROCE_CQE_BIND_MW:
		return IB_WC_BIND_MW;
	case GN_ROCE_CQE_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case GN_ROCE_CQE_FLUSH:
		return IB_WC_FLUSH;
	default:
		*ok = false;
		return IB_WC_SEND;
	}
}

/*
 * Translate one CQE (a private copy) into @wc.  The CQE names the QP by
 * the engine's QP number (a GSI QP's is not 1); a QP destroyed since the
 * CQE was written is no longer in dev->qps and its CQEs are dropped.
 */
static bool gib_cqe_to_wc(struct gib_dev *dev, struct gib_cq *cq,
			  const struct gn_roce_cqe *cqe, struct ib_wc *wc)
{
	u32 qpn = le32_to_cpu(cqe->qpn);
	struct gib_qp *qp;
	bool op_ok;

	xa_lock(&dev->qps);
	qp = xa_load(&dev->qps, qpn);
	xa_unlock(&dev->qps);
	if (!qp)
		return false;

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = le64_to_cpu(cqe->wr_id);
	wc->qp = &qp->ibqp;
	wc->status = cqe->status <= IB_WC_GENERAL_ERR ? cqe->status :
						       IB_WC_GENERAL_ERR;
	wc->opcode = gib_wc_opcode(cqe->opcode, &op_ok);
	wc->vendor_err = le32_to_cpu(cqe->vendor_err);
	if (!op_ok && wc->status == IB_WC_SUCCESS) {
		ibdev_warn_ratelimited(&dev->ibdev,
				       "CQ %u: CQE with unknown opcode %u\n",
				       cq->cqn, cqe->opcode);
		wc->status = IB_WC_GENERAL_ERR;
	}
	wc->byte_len = le32_to_cpu(cqe->byte_len);
	if (cqe->flags & GN_ROCE_CQE_F_IMM) {
		wc->ex.imm_data = cqe->imm;
		wc->wc_flags |= IB_WC_WITH_IMM;
	}
	if (cqe->flags & GN_ROCE_CQE_F_INV) {
		wc->ex.invalidate_rkey = be32_to_cpu(cqe->imm);
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	}
	if (cqe->flags & GN_ROCE_CQE_F_GRH) {
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc->network_hdr_type = cqe->flags & GN_ROCE_CQE_F_IPV6 ?
				       RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
		wc->src_qp = le32_to_cpu(cqe->src_qp) & 0xffffff;
	}
	wc->pkey_index = 0;
	wc->port_num = qp->port;
	return true;
}

/*
 * Remove the CQEs of QP @qpn, destroyed, from kernel CQ @ibcq (N8 of the
 * November review): QP numbers are reused lowest-first, and a kernel
 * consumer's wr_id is often a pointer (struct ib_cqe), so a CQE left
 * behind would reach the next QP of that number as a use-after-free.
 * The engine has stopped writing CQEs of the QP; it may still append
 * those of others past the snapshot of prod, so the CQEs kept move
 * towards prod within the snapshot and cons advances by those removed
 * (as mlx4 and mlx5 clean their CQs).  User CQs are the provider's.
 */
void gib_cq_clean(struct ib_cq *ibcq, u32 qpn)
{
	struct gib_cq *cq = to_gcq(ibcq);
	unsigned long flags;
	u32 n, i, freed = 0;

	if (ibcq->uobject)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	n = gib_cq_pending(cq);
	for (i = n; i-- > 0;) {
		const struct gn_roce_cqe *c = gib_cq_slot(cq, cq->cons + i);

		if (le32_to_cpu(c->qpn) == qpn)
			freed++;
		else if (freed)
			memcpy(gib_cq_slot(cq, cq->cons + i + freed), c,
			       sizeof(*c));
	}
	if (freed) {
		cq->cons += freed;
		/* the moves are done before the engine may reuse the slots */
		smp_store_release(&gib_cq_hdr(cq)->cons, cpu_to_le32(cq->cons));
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}

/*
 * Kernel CQs only: user CQs are polled by the provider.  Each CQE is
 * copied once out of the ring (the engine owns the slot until cons moves
 * past it), then cons is published (release) so the engine may reuse
 * the slots.
 */
int gib_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc)
{
	struct gib_dev *dev = to_gdev(ibcq->device);
	struct gib_cq *cq = to_gcq(ibcq);
	struct gn_roce_cqe cqe;
	unsigned long flags;
	u32 avail, taken;
	int done = 0;

	if (ibcq->uobject)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	avail = gib_cq_pending(cq);
	for (taken = 0; taken < avail && done < n; taken++) {
		memcpy(&cqe, gib_cq_slot(cq, cq->cons + taken), sizeof(cqe));
		if (gib_cqe_to_wc(dev, cq, &cqe, &wc[done]))
			done++;
	}
	if (taken) {
		cq->cons += taken;
		/* our copies are taken before the engine may reuse the slots */
		smp_store_release(&gib_cq_hdr(cq)->cons, cpu_to_le32(cq->cons));
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return done;
}

/*
 * Arm the CQ: the engine raises one completion event for the next CQE it
 * writes.  CQEs already in the ring raise none, so with
 * IB_CQ_REPORT_MISSED_EVENTS a kernel consumer learns (return 1) that it
 * must poll again; user CQs cannot ask for that (uverbs never does).
 */
int gib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags f)
{
	struct gib_cq *cq = to_gcq(ibcq);
	u32 type = (f & IB_CQ_SOLICITED_MASK) == IB_CQ_SOLICITED ?
		   GN_ROCE_DB_CQ_ARM_SOL : GN_ROCE_DB_CQ_ARM;
	unsigned long flags;
	int missed = 0;

	gaudi_nic_roce_doorbell(to_gdev(ibcq->device)->gadev,
				GN_ROCE_DB(type, cq->cqn));
	if (!ibcq->uobject && (f & IB_CQ_REPORT_MISSED_EVENTS)) {
		/* the arm is ordered before the read of prod */
		smp_mb();
		spin_lock_irqsave(&cq->lock, flags);
		missed = gib_cq_pending(cq) ? 1 : 0;
		spin_unlock_irqrestore(&cq->lock, flags);
	}
	return missed;
}
