// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib queue pairs: creation, state changes, queries, posting.
 *
 * User QPs (RC, UC, UD) post into rings mapped into the process; the kernel
 * only rings their doorbells.  Kernel QPs are UD and GSI (QP1, one per
 * port, made by the MAD layer); their rings are in kernel memory and
 * gib_post_send()/gib_post_recv() fill them.  Kernel RC and UC QPs are not
 * offered: nothing here needs them (rdma_cm's RC QPs are user QPs, and
 * ib_cm itself only uses QP1), so they get -EOPNOTSUPP.
 */
#include <linux/log2.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

static u8 gib_hw_qp_type(enum ib_qp_type t)
{
	switch (t) {
	case IB_QPT_GSI:
		return GN_ROCE_QPT_GSI;
	case IB_QPT_UD:
		return GN_ROCE_QPT_UD;
	case IB_QPT_UC:
		return GN_ROCE_QPT_UC;
	default:
		return GN_ROCE_QPT_RC;
	}
}

static bool gib_qp_is_ud(const struct gib_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/*
 * The send WQE format of a new QP, from its type and its create_qp input
 * (struct gaudi_create_qp_cmd; an older provider sends none): @qp's send
 * limits, and the SQ's stride, returned.  RC and UC QPs, and UD QPs of
 * such a provider, have 128-byte WQEs; a UD QP holds the address vector
 * in them too, so fewer SGEs and less inline data.  Kernel UD and GSI
 * QPs, and user UD QPs created with GAUDI_QP_UD_WQE256, have 256-byte
 * struct gn_roce_ud_wqe and the device's limits, the ones query_device
 * reports.  Negative: an input this driver does not know.
 */
static int gib_qp_sq_format(struct gib_qp *qp, struct ib_udata *udata)
{
	bool ud = gib_qp_is_ud(qp);	/* the core set ibqp.qp_type */
	struct gaudi_create_qp_cmd cmd = {};
	int ret;

	qp->max_send_sge = GN_ROCE_MAX_SGE;
	qp->max_inline = GN_ROCE_MAX_INLINE;
	if (ud && !udata)
		cmd.flags = GAUDI_QP_UD_WQE256;
	if (udata && udata->inlen) {
		ret = ib_copy_from_udata(&cmd, udata,
					 min(sizeof(cmd), udata->inlen));
		if (ret)
			return ret;
		if ((udata->inlen > sizeof(cmd) &&
		     !ib_is_udata_cleared(udata, sizeof(cmd),
					  udata->inlen - sizeof(cmd))) ||
		    cmd.rsvd || cmd.flags & ~GAUDI_QP_UD_WQE256 ||
		    (cmd.flags && !ud))
			return -EINVAL;
	}
	if (!ud)
		return GN_ROCE_WQE_SIZE;
	if (cmd.flags & GAUDI_QP_UD_WQE256) {
		qp->max_inline = GN_ROCE_UD_WQE256_MAX_INLINE;
		return GN_ROCE_UD_WQE_SIZE;
	}
	qp->max_send_sge = GN_ROCE_UD_MAX_SGE;
	qp->max_inline = GN_ROCE_UD_MAX_INLINE;
	return GN_ROCE_WQE_SIZE;
}

/*
 * QP types, owners and creation attributes the device serves; @qp's send
 * limits are set (gib_qp_sq_format()).
 */
static int gib_check_qp_init(struct gib_dev *dev,
			     const struct ib_qp_init_attr *init, bool user,
			     const struct gib_qp *qp)
{
	const struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
		/* kernel RC and UC QPs: see the top of this file */
		if (!user)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_GSI:
		/* QP1 is the MAD layer's */
		if (user)
			return -EOPNOTSUPP;
		if (!init->port_num || init->port_num > dev->num_ports)
			return -EINVAL;
		break;
	case IB_QPT_UD:
		break;
	default:
		/* XRC, raw packet, SMI (no QP0 on RoCE), driver QPs */
		return -EOPNOTSUPP;
	}
	/*
	 * RC and UD QPs take their receives from an SRQ if given one (the
	 * engine serves both from one, roce_hw.h); not UC, and not QP1, whose
	 * receives are the MAD layer's
	 */
	if ((init->srq && init->qp_type != IB_QPT_RC &&
	     init->qp_type != IB_QPT_UD) || init->create_flags)
		return -EOPNOTSUPP;
	/* with an SRQ, the receive queue's capabilities are ignored */
	if (!cap->max_send_wr || (!init->srq && !cap->max_recv_wr) ||
	    cap->max_send_wr > (1 << GN_ROCE_MAX_WQ_LOG) ||
	    (!init->srq && cap->max_recv_wr > (1 << GN_ROCE_MAX_WQ_LOG)) ||
	    cap->max_send_sge > qp->max_send_sge ||
	    (!init->srq && cap->max_recv_sge > GN_ROCE_MAX_SGE) ||
	    cap->max_inline_data > qp->max_inline)
		return -EINVAL;
	return 0;
}

/* The QP's software state, before the engine knows it. */
static void gib_qp_init_sw(struct gib_qp *qp,
			   const struct ib_qp_init_attr *init,
			   struct gib_ucontext *uc)
{
	mutex_init(&qp->mutex);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->sq_prod = 0;
	qp->rq_prod = 0;
	qp->state = IB_QPS_RESET;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->port = init->qp_type == IB_QPT_GSI ? init->port_num : 0;
	qp->uc = uc;
}

/*
 * The engine context of a new QP, in RESET; the ring page lists (and,
 * on an SRQ, the SRQ number) are already in @ctx.  Kernel QPs are
 * privileged: their SGEs may use the local DMA lkey.
 */
static void gib_qp_ctx_init(struct gib_qp *qp,
			    const struct ib_qp_init_attr *init, bool kernel,
			    u32 sq_log, u32 rq_log, struct gn_roce_qp_ctx *ctx)
{
	ctx->qpn = cpu_to_le32(qp->qpn);
	ctx->state = GN_ROCE_QPS_RESET;
	ctx->type = gib_hw_qp_type(init->qp_type);
	ctx->port = qp->port ? qp->port - 1 : 0;
	ctx->flags |= kernel ? GN_ROCE_QPF_PRIV : 0;
	ctx->sq_sig_all = qp->sig_all;
	ctx->pdn = cpu_to_le32(to_gpd(qp->ibqp.pd)->pdn);
	ctx->sq_cqn = cpu_to_le32(to_gcq(init->send_cq)->cqn);
	ctx->rq_cqn = cpu_to_le32(to_gcq(init->recv_cq)->cqn);
	ctx->sq_log_size = sq_log;
	ctx->rq_log_size = rq_log;
	ctx->path_mtu = IB_MTU_1024;
	if (init->qp_type == IB_QPT_GSI)
		ctx->qkey = cpu_to_le32(GN_ROCE_GSI_QKEY);
}

/*
 * Create a QP.  User QPs get their rings offered for mmap; kernel QPs
 * (udata NULL) keep them and are privileged in the engine
 * (GN_ROCE_QPF_PRIV: their SGEs may use the local DMA lkey).  A GSI QP
 * is the port's QP1: ibqp.qp_num is 1 while the engine knows it by the
 * QP number allocated here, which is what its CQEs carry.
 */
int gib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);
	struct gaudi_create_qp_resp resp = {};
	struct gn_roce_qp_ctx ctx = {};
	struct gib_pbl sq_pbl = {}, rq_pbl = {};
	struct ib_qp_cap *cap = &init->cap;
	struct gib_ucontext *uc;
	u32 sq_log, rq_log, stride;
	int ret;

	ret = gib_qp_sq_format(qp, udata);
	if (ret < 0)
		return ret;
	stride = ret;
	ret = gib_check_qp_init(dev, init, !!udata, qp);
	if (ret)
		return ret;
	ret = gib_udata_uc(udata, &uc);
	if (ret)
		return ret;

	sq_log = order_base_2(cap->max_send_wr);
	/* a QP on an SRQ has no RQ: qp->rq stays empty (log_size 0, no buf) */
	rq_log = init->srq ? 0 : order_base_2(cap->max_recv_wr);
	gib_qp_init_sw(qp, init, uc);
	qp->ring_bytes = gib_ring_bytes(sq_log, stride) +
			 (init->srq ? 0 : gib_ring_bytes(rq_log,
							 GN_ROCE_WQE_SIZE));
	ret = gib_robj_reserve(dev, GIB_ROBJ_QP, qp->uc, qp->ring_bytes);
	if (ret < 0)
		return ret;
	qp->qpn = ret;
	ibqp->qp_num = init->qp_type == IB_QPT_GSI ? GN_ROCE_GSI_QPN : qp->qpn;
	ret = gib_ring_offer(dev, uc, &qp->sq, sq_log, stride, &sq_pbl,
			     &ctx.sq, &resp.sq_mmap_key, &resp.sq_mmap_len);
	if (ret)
		goto err_release;
	if (init->srq) {
		/* no RQ on an SRQ: rq_mmap_len 0 */
		ctx.flags |= GN_ROCE_QPF_SRQ;
		ctx.srqn = cpu_to_le32(to_gsrq(init->srq)->srqn);
	} else {
		ret = gib_ring_offer(dev, uc, &qp->rq, rq_log,
				     GN_ROCE_WQE_SIZE, &rq_pbl, &ctx.rq,
				     &resp.rq_mmap_key, &resp.rq_mmap_len);
		if (ret)
			goto err_pbl;
	}

	gib_qp_ctx_init(qp, init, !udata, sq_log, rq_log, &ctx);
	if (stride == GN_ROCE_UD_WQE_SIZE)
		ctx.flags |= GN_ROCE_QPF_UD_WQE256;
	ret = gib_robj_publish(dev, GIB_ROBJ_QP, qp->qpn, qp, &ctx,
			       sizeof(ctx));
	gib_pbl_free(dev, &rq_pbl);
	gib_pbl_free(dev, &sq_pbl);
	if (ret)
		goto err_rq;
	if (udata) {
		resp.qpn = qp->qpn;
		resp.sq_log_size = sq_log;
		resp.rq_log_size = rq_log;
		resp.sq_wqe_size = stride;
		ret = gib_respond(udata, &resp, sizeof(resp));
		if (ret)
			goto err_unpublish;
	}

	cap->max_send_wr = 1 << sq_log;
	cap->max_recv_wr = init->srq ? 0 : 1 << rq_log;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_recv_sge = init->srq ? 0 : GN_ROCE_MAX_SGE;
	cap->max_inline_data = qp->max_inline;
	return 0;

err_unpublish:
	gib_robj_unpublish(dev, GIB_ROBJ_QP, qp->qpn);
	goto err_rq;
err_pbl:
	gib_pbl_free(dev, &sq_pbl);
err_rq:
	gib_ring_free(dev, &qp->rq);
	gib_ring_free(dev, &qp->sq);
err_release:
	gib_robj_release(dev, GIB_ROBJ_QP, qp->uc, qp->qpn, qp->ring_bytes);
	return ret;
}

#define GIB_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/*
 * Check a RoCE v2 address vector and encode it for the engine.  The core
 * has already looked up the source GID (sgid_attr, referenced) and, for
 * user QPs and AHs, resolved the destination MAC and hop limit through
 * the IP stack of the GID's netdev.
 */
int gib_av_from_attr(struct gib_dev *dev, const struct rdma_ah_attr *ah,
		     struct gn_roce_av *av)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid;
	bool v4;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	sgid = grh->sgid_attr;
	if (!sgid || sgid->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP ||
	    grh->sgid_index >= GN_ROCE_MAX_GID)
		return -EINVAL;
	if (rdma_ah_get_port_num(ah) &&
	    rdma_ah_get_port_num(ah) > dev->num_ports)
		return -EINVAL;
	/* Both ends of a RoCE v2 path use the same IP version. */
	v4 = ipv6_addr_v4mapped((struct in6_addr *)sgid->gid.raw);
	if (ipv6_addr_v4mapped((struct in6_addr *)grh->dgid.raw) != v4)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->port = rdma_ah_get_port_num(ah) ? rdma_ah_get_port_num(ah) - 1 : 0;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = cpu_to_le32(grh->flow_label);
	memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->network = v4 ? GN_ROCE_GID_V2_IPV4 : GN_ROCE_GID_V2_IPV6;
	memcpy(av->dgid, grh->dgid.raw, sizeof(av->dgid));
	return 0;
}

static int gib_fill_av(struct gib_dev *dev, struct gib_qp *qp,
		       struct rdma_ah_attr *ah, struct gn_roce_qp_ctx *c)
{
	struct gn_roce_av av;
	int ret;

	ret = gib_av_from_attr(dev, ah, &av);
	if (ret)
		return ret;
	memcpy(c->dgid, av.dgid, sizeof(c->dgid));
	memcpy(c->dmac, av.dmac, ETH_ALEN);
	c->sgid_index = av.sgid_index;
	c->hop_limit = av.hop_limit;
	c->traffic_class = av.traffic_class;
	c->flow_label = av.flow_label;
	return 0;
}

/* The engine may have moved the QP to ERR (or SQE) by itself. */
static int gib_qp_sync_state(struct gib_dev *dev, struct gib_qp *qp,
			     struct gn_roce_qp_ctx *c)
{
	int ret;

	lockdep_assert_held(&qp->mutex);
	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_QUERY_QP, qp->qpn, NULL,
				 0, c, sizeof(*c));
	if (!ret)
		WRITE_ONCE(qp->state, min_t(u32, c->state, IB_QPS_ERR));
	return ret;
}

/*
 * The state table is the IBTA one for the QP's real type: for UD and GSI
 * it admits no path attributes (AV, MTU, timeouts...) and requires the
 * Q_Key (GSI QPs always keep GN_ROCE_GSI_QKEY).  Without IB_QP_STATE the
 * QP stays where it is, e.g. RTS -> RTS with just IB_QP_MIN_RNR_TIMER, as
 * libfabric does once connected.
 */
/*
 * The states a modify goes from and to (@cur, @next), checked against
 * the QP's actual state and the IBTA table.  *@same_state: the engine
 * already is where the caller asks to go (below), so no state is sent.
 */
static int gib_qp_transition(struct gib_dev *dev, struct gib_qp *qp,
			     const struct ib_qp_attr *attr, int mask,
			     enum ib_qp_state *cur, enum ib_qp_state *next,
			     bool *same_state)
{
	struct gn_roce_qp_ctx now;
	int ret;

	lockdep_assert_held(&qp->mutex);
	*same_state = false;
	*cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	*next = (mask & IB_QP_STATE) ? attr->qp_state : *cur;
	if (*cur > IB_QPS_ERR || *next > IB_QPS_ERR)
		return -EINVAL;
	if ((mask & IB_QP_CUR_STATE) && *cur != qp->state) {
		ret = gib_qp_sync_state(dev, qp, &now);
		if (ret)
			return ret;
	}
	if ((mask & IB_QP_CUR_STATE) && *cur != qp->state) {
		/*
		 * The MAD layer answers a failed send with SQE -> RTS; the
		 * engine may have kept a UD QP in RTS: nothing to change.
		 */
		if (gib_qp_is_ud(qp) && *cur == IB_QPS_SQE &&
		    qp->state == IB_QPS_RTS && *next == IB_QPS_RTS)
			*same_state = true;
		else if (!(qp->state == IB_QPS_SQE && *cur == IB_QPS_RTS))
			return -EINVAL;
	}
	if (!ib_modify_qp_is_ok(*cur, *next, qp->ibqp.qp_type, mask))
		return -EINVAL;
	/* SQ drain (SQD) is not implemented by the engine. */
	if (*next == IB_QPS_SQD)
		return -EOPNOTSUPP;
	return 0;
}

/*
 * Remote atomics and persistent flushes are accepted and inert: the
 * engine parses no atomic opcode, and no MR has persistent flush access,
 * so such a request fails whatever the QP allows.  (pyverbs' extended RC
 * QPs ask for them all.)  Global flushes are served (GN_ROCE_ACC_FLUSH).
 */
static int gib_qp_access_to_hw(int flags, __le32 *access)
{
	u32 a = 0;

	if (flags & ~(GIB_QP_ACCESS | IB_ACCESS_REMOTE_ATOMIC |
		      IB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_FLUSH_PERSISTENT))
		return -EINVAL;
	if (flags & IB_ACCESS_REMOTE_WRITE)
		a |= GN_ROCE_ACC_REMOTE_WRITE;
	if (flags & IB_ACCESS_REMOTE_READ)
		a |= GN_ROCE_ACC_REMOTE_READ;
	if (flags & IB_ACCESS_FLUSH_GLOBAL)
		a |= GN_ROCE_ACC_FLUSH;
	*access = cpu_to_le32(a);
	return 0;
}

/* Retry, timer and read-atomic attributes, for gib_qp_attr_to_hw(). */
static int gib_qp_timers_to_hw(const struct ib_qp_attr *attr, int mask,
			       struct gn_roce_qp_ctx *c, u32 *hw)
{
	if (mask & IB_QP_TIMEOUT) {
		if (attr->timeout > 31)
			return -EINVAL;
		c->timeout = attr->timeout;
		*hw |= GN_ROCE_QPC_TIMEOUT;
	}
	if (mask & IB_QP_RETRY_CNT) {
		if (attr->retry_cnt > 7)
			return -EINVAL;
		c->retry_cnt = attr->retry_cnt;
		*hw |= GN_ROCE_QPC_RETRY;
	}
	if (mask & IB_QP_RNR_RETRY) {
		if (attr->rnr_retry > 7)
			return -EINVAL;
		c->rnr_retry = attr->rnr_retry;
		*hw |= GN_ROCE_QPC_RNR_RETRY;
	}
	if (mask & IB_QP_MIN_RNR_TIMER) {
		if (attr->min_rnr_timer > 31)
			return -EINVAL;
		c->min_rnr_timer = attr->min_rnr_timer;
		*hw |= GN_ROCE_QPC_MIN_RNR;
	}
	if (mask & IB_QP_MAX_QP_RD_ATOMIC) {
		if (attr->max_rd_atomic > GN_ROCE_MAX_RD_ATOM)
			return -EINVAL;
		c->max_rd_atomic = attr->max_rd_atomic;
		*hw |= GN_ROCE_QPC_RD_ATOMIC;
	}
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC) {
		if (attr->max_dest_rd_atomic > GN_ROCE_MAX_RD_ATOM)
			return -EINVAL;
		c->max_dest_rd_atomic = attr->max_dest_rd_atomic;
		*hw |= GN_ROCE_QPC_DEST_RD_AT;
	}
	return 0;
}

/*
 * The path and transport attributes of a modify, checked and encoded
 * into the engine's context @c; returns the GN_ROCE_QPC_* mask of what
 * is set in *@hw.
 */
static int gib_qp_attr_to_hw(struct gib_dev *dev, struct gib_qp *qp,
			     struct ib_qp_attr *attr, int mask,
			     struct gn_roce_qp_ctx *c, u32 *hw)
{
	int ret;

	if (mask & IB_QP_PORT) {
		if (!attr->port_num || attr->port_num > dev->num_ports)
			return -EINVAL;
		c->port = attr->port_num - 1;
		*hw |= GN_ROCE_QPC_PORT;
	}
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if (mask & IB_QP_QKEY) {
		c->qkey = cpu_to_le32(qp->ibqp.qp_type == IB_QPT_GSI ?
				      GN_ROCE_GSI_QKEY : attr->qkey);
		*hw |= GN_ROCE_QPC_QKEY;
	}
	if (mask & IB_QP_ACCESS_FLAGS) {
		ret = gib_qp_access_to_hw(attr->qp_access_flags, &c->access);
		if (ret)
			return ret;
		*hw |= GN_ROCE_QPC_ACCESS;
	}
	if (mask & IB_QP_PATH_MTU) {
		if (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096)
			return -EINVAL;
		c->path_mtu = attr->path_mtu;
		*hw |= GN_ROCE_QPC_PATH_MTU;
	}
	if (mask & IB_QP_AV) {
		ret = gib_fill_av(dev, qp, &attr->ah_attr, c);
		if (ret)
			return ret;
		*hw |= GN_ROCE_QPC_AV;
	}
	if (mask & IB_QP_DEST_QPN) {
		if (attr->dest_qp_num > 0xffffff)
			return -EINVAL;
		c->dest_qpn = cpu_to_le32(attr->dest_qp_num);
		*hw |= GN_ROCE_QPC_DEST_QPN;
	}
	if (mask & IB_QP_RQ_PSN) {
		c->rq_psn = cpu_to_le32(attr->rq_psn & 0xffffff);
		*hw |= GN_ROCE_QPC_RQ_PSN;
	}
	if (mask & IB_QP_SQ_PSN) {
		c->sq_psn = cpu_to_le32(attr->sq_psn & 0xffffff);
		*hw |= GN_ROCE_QPC_SQ_PSN;
	}
	return gib_qp_timers_to_hw(attr, mask, c, hw);
}

/* Remember what a successful modify set, for query_qp. */
static void gib_qp_remember(struct gib_qp *qp, const struct ib_qp_attr *attr,
			    int mask, const struct gn_roce_qp_ctx *c,
			    enum ib_qp_state next)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->mutex);
	if (mask & IB_QP_AV) {
		rdma_destroy_ah_attr(&a->ah_attr);
		rdma_copy_ah_attr(&a->ah_attr, &attr->ah_attr);
	}
	if (mask & IB_QP_PORT)
		qp->port = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = le32_to_cpu(c->qkey);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU)
		a->path_mtu = attr->path_mtu;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (next == IB_QPS_RESET) {
		rdma_destroy_ah_attr(&a->ah_attr);
		memset(a, 0, sizeof(*a));
	}
	WRITE_ONCE(qp->state, next);
}

/*
 * The state table is the IBTA one for the QP's real type: for UD and GSI
 * it admits no path attributes (AV, MTU, timeouts...) and requires the
 * Q_Key (GSI QPs always keep GN_ROCE_GSI_QKEY).  Without IB_QP_STATE the
 * QP stays where it is, e.g. RTS -> RTS with just IB_QP_MIN_RNR_TIMER, as
 * libfabric does once connected.
 */
int gib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);
	struct gn_roce_modify_qp m = {};
	enum ib_qp_state cur, next;
	bool same_state;
	u32 hw = 0;
	int ret;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;

	mutex_lock(&qp->mutex);
	ret = gib_qp_transition(dev, qp, attr, mask, &cur, &next, &same_state);
	if (ret)
		goto out;
	ret = gib_qp_attr_to_hw(dev, qp, attr, mask, &m.ctx, &hw);
	if (ret)
		goto out;
	if ((mask & IB_QP_STATE) && !same_state) {
		m.ctx.state = next;
		hw |= GN_ROCE_QPC_STATE;
	}
	m.mask = cpu_to_le32(hw);
	ret = gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_MODIFY_QP, qp->qpn, &m,
				 sizeof(m), NULL, 0);
	if (!ret)
		gib_qp_remember(qp, attr, mask, &m.ctx, next);
out:
	mutex_unlock(&qp->mutex);
	return ret;
}

int gib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);
	struct gn_roce_qp_ctx c;
	int ret;

	mutex_lock(&qp->mutex);
	ret = gib_qp_sync_state(dev, qp, &c);
	if (ret)
		goto out;
	*attr = qp->attr;
	/* callers (uverbs, nldev) take no GID reference: report the index */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->port_num = qp->port;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_psn = le32_to_cpu(c.sq_psn);
	attr->rq_psn = le32_to_cpu(c.rq_psn);
	attr->cap.max_send_wr = 1 << qp->sq.log_size;
	attr->cap.max_recv_wr = ibqp->srq ? 0 : 1 << qp->rq.log_size;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_recv_sge = ibqp->srq ? 0 : GN_ROCE_MAX_SGE;
	attr->cap.max_inline_data = qp->max_inline;
	attr->sq_draining = 0;
	memset(init, 0, sizeof(*init));
	init->qp_type = ibqp->qp_type;
	init->port_num = qp->port;
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
out:
	mutex_unlock(&qp->mutex);
	return ret;
}

int gib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);

	gib_robj_unpublish(dev, GIB_ROBJ_QP, qp->qpn);
	/* the engine writes no more CQEs of it: drop those left (kernel CQs) */
	gib_cq_clean(ibqp->send_cq, qp->qpn);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		gib_cq_clean(ibqp->recv_cq, qp->qpn);
	gib_ring_free(dev, &qp->sq);
	gib_ring_free(dev, &qp->rq);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	gib_robj_release(dev, GIB_ROBJ_QP, qp->uc, qp->qpn, qp->ring_bytes);
	return 0;
}

/*
 * Inline data of a kernel UD send: the SGE addresses are kernel virtual
 * addresses (as in every kernel driver that offers IB_SEND_INLINE).
 */
static int gib_fill_ud_inline(struct gn_roce_ud_wqe *w,
			      const struct ib_send_wr *wr)
{
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sg = &wr->sg_list[i];

		if (sg->length > GN_ROCE_UD_WQE256_MAX_INLINE - len)
			return -EINVAL;
		memcpy(w->inline_data + len, (void *)(uintptr_t)sg->addr,
		       sg->length);
		len += sg->length;
	}
	w->inline_len = cpu_to_le32(len);
	w->flags |= GN_ROCE_WQE_F_INLINE;
	return 0;
}

/*
 * One kernel UD/GSI send work request @v of QP @priv as a WQE: kernel UD
 * and GSI QPs have 256-byte send WQEs (gib_qp_sq_format()).
 */
static int gib_build_ud_send(void *priv, const void *v, union gib_wqe *u)
{
	const struct ib_send_wr *wr = v;
	const struct ib_ud_wr *ud = ud_wr(wr);
	struct gn_roce_ud_wqe *w = &u->ud;
	struct gib_qp *qp = priv;
	int i;

	memset(w, 0, sizeof(*w));
	w->wr_id = cpu_to_le64(wr->wr_id);
	switch (wr->opcode) {
	case IB_WR_SEND:
		w->opcode = GN_ROCE_WQE_SEND;
		break;
	case IB_WR_SEND_WITH_IMM:
		w->opcode = GN_ROCE_WQE_SEND_IMM;
		w->imm = wr->ex.imm_data;
		break;
	default:
		/* UD has sends only */
		return -EINVAL;
	}
	if (wr->num_sge < 0 || wr->num_sge > qp->max_send_sge || !ud->ah ||
	    ud->remote_qpn > 0xffffff)
		return -EINVAL;
	if ((wr->send_flags & IB_SEND_SIGNALED) || qp->sig_all)
		w->flags |= GN_ROCE_WQE_F_SIGNALED;
	if (wr->send_flags & IB_SEND_SOLICITED)
		w->flags |= GN_ROCE_WQE_F_SOLICITED;
	/* the engine takes the QP's own Q_Key for GN_ROCE_QKEY_USE_QP */
	w->qkey = cpu_to_le32(ud->remote_qkey);
	w->dest_qpn = cpu_to_le32(ud->remote_qpn);
	w->av = to_gah(ud->ah)->av;
	if (wr->send_flags & IB_SEND_INLINE)
		return gib_fill_ud_inline(w, wr);
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		w->sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		w->sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	w->num_sge = wr->num_sge;
	return 0;
}

static const void *gib_send_wr_next(const void *wr)
{
	return ((const struct ib_send_wr *)wr)->next;
}

static const struct gib_wr_ops gib_send_wr_ops = {
	.build = gib_build_ud_send,
	.next = gib_send_wr_next,
};

/*
 * One receive work request @v as a WQE of a kernel RQ or SRQ whose WQEs
 * take at most *@priv SGEs.
 */
static int gib_build_recv(void *priv, const void *v, union gib_wqe *u)
{
	const struct ib_recv_wr *wr = v;
	struct gn_roce_wqe *w = &u->wqe;
	u32 max_sge = *(const u32 *)priv;
	int i;

	if (wr->num_sge < 0 || wr->num_sge > max_sge)
		return -EINVAL;
	memset(w, 0, sizeof(*w));
	w->wr_id = cpu_to_le64(wr->wr_id);
	w->opcode = GN_ROCE_WQE_RECV;
	w->num_sge = wr->num_sge;
	for (i = 0; i < wr->num_sge; i++) {
		w->sge[i].addr = cpu_to_le64(wr->sg_list[i].addr);
		w->sge[i].length = cpu_to_le32(wr->sg_list[i].length);
		w->sge[i].lkey = cpu_to_le32(wr->sg_list[i].lkey);
	}
	return 0;
}

static const void *gib_recv_wr_next(const void *wr)
{
	return ((const struct ib_recv_wr *)wr)->next;
}

const struct gib_wr_ops gib_recv_wr_ops = {
	.build = gib_build_recv,
	.next = gib_recv_wr_next,
};

/*
 * User QPs post into their mapped rings; the (empty) post_send command is
 * the doorbell.  Kernel QPs (UD, GSI) are posted to here
 * (gib_kring_post()), and one doorbell tells the engine about the whole
 * list.  A send needs RTS (or a later state: SQE and ERR flush), as in
 * rxe.
 */
int gib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);
	const void *b;
	u32 posted;
	int ret;

	if (ibqp->uobject) {
		gaudi_nic_roce_doorbell(dev->gadev,
					GN_ROCE_DB(GN_ROCE_DB_SQ, qp->qpn));
		return 0;
	}
	if (READ_ONCE(qp->state) < IB_QPS_RTS) {
		*bad = wr;
		return -EINVAL;
	}
	ret = gib_kring_post(&qp->sq, &qp->sq_lock, &qp->sq_prod,
			     &gib_send_wr_ops, qp, wr, &b, &posted);
	if (ret)
		*bad = b;
	/* outside the lock */
	if (posted)
		gaudi_nic_roce_doorbell(dev->gadev,
					GN_ROCE_DB(GN_ROCE_DB_SQ, qp->qpn));
	return ret;
}

/*
 * Receive work requests.  User QPs fill their mapped RQ; the doorbell
 * only matters in the error state (the engine flushes what is posted).
 * Kernel QPs are posted to here, in any state but RESET.
 */
int gib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad)
{
	struct gib_dev *dev = to_gdev(ibqp->device);
	struct gib_qp *qp = to_gqp(ibqp);
	u32 max_sge = GN_ROCE_MAX_SGE, posted;
	const void *b;
	int ret;

	if (ibqp->uobject) {
		gaudi_nic_roce_doorbell(dev->gadev,
					GN_ROCE_DB(GN_ROCE_DB_RQ, qp->qpn));
		return 0;
	}
	/* receives of a QP on an SRQ are posted to the SRQ */
	if (READ_ONCE(qp->state) == IB_QPS_RESET || ibqp->srq) {
		*bad = wr;
		return -EINVAL;
	}
	ret = gib_kring_post(&qp->rq, &qp->rq_lock, &qp->rq_prod,
			     &gib_recv_wr_ops, &max_sge, wr, &b, &posted);
	if (ret)
		*bad = b;
	if (posted)
		gaudi_nic_roce_doorbell(dev->gadev,
					GN_ROCE_DB(GN_ROCE_DB_RQ, qp->qpn));
	return ret;
}
