// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE engine's queue pairs: the CREATE_QP, MODIFY_QP,
 * QUERY_QP and DESTROY_QP mailbox commands, which load, change and drop
 * the QP contexts the data path (roce_dp.c) runs.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/workqueue.h>
#include "roce.h"

static void gnsim_qp_free(struct gnsim_rqp *qp)
{
	gnsim_rmem_free(&qp->sq.mem);
	gnsim_rmem_free(&qp->rq.mem);
	kvfree(qp->swqe);
	kfree(qp);
}

/* The path of a connected QP: the address vector of context @c. */
static void gnsim_qp_set_path(struct gnsim_rqp *qp, const struct gn_roce_qp_ctx *c)
{
	memcpy(qp->path.dmac, c->dmac, sizeof(qp->path.dmac));
	memcpy(qp->path.dgid, c->dgid, sizeof(qp->path.dgid));
	qp->path.sgid_index = c->sgid_index;
	qp->path.hop_limit = c->hop_limit;
	qp->path.traffic_class = c->traffic_class;
	qp->path.flow_label = c->flow_label;
}

int gnsim_cmd_create_qp(struct gaudi_nic_roce *r, u32 qpn, const void *in,
			void *out)
{
	const struct gn_roce_qp_ctx *c = in;
	u32 scqn = le32_to_cpu(c->sq_cqn), rcqn = le32_to_cpu(c->rq_cqn);
	struct gnsim_rqp *qp;
	int ret;

	if (qpn < GN_ROCE_MIN_QPN || qpn >= GN_ROCE_MAX_QP ||
	    le32_to_cpu(c->qpn) != qpn ||
	    (c->type != GN_ROCE_QPT_RC && c->type != GN_ROCE_QPT_UD &&
	     c->type != GN_ROCE_QPT_GSI && c->type != GN_ROCE_QPT_UC) ||
	    c->flags & ~(GN_ROCE_QPF_PRIV | GN_ROCE_QPF_SRQ |
			 GN_ROCE_QPF_UD_WQE256) || c->rsvd0 ||
	    ((c->flags & GN_ROCE_QPF_UD_WQE256) &&
	     c->type != GN_ROCE_QPT_UD && c->type != GN_ROCE_QPT_GSI) ||
	    c->rsvd1 || ((c->flags & GN_ROCE_QPF_SRQ) &&
			 (le32_to_cpu(c->srqn) >= GN_ROCE_MAX_SRQ ||
			  c->type == GN_ROCE_QPT_GSI)) ||
	    c->port >= r->num_ports ||
	    c->state != GN_ROCE_QPS_RESET ||
	    c->sq_log_size > GN_ROCE_MAX_WQ_LOG ||
	    c->rq_log_size > GN_ROCE_MAX_WQ_LOG ||
	    c->max_rd_atomic > GN_ROCE_MAX_RD_ATOM ||
	    c->max_dest_rd_atomic > GN_ROCE_MAX_RD_ATOM ||
	    scqn >= GN_ROCE_MAX_CQ || rcqn >= GN_ROCE_MAX_CQ)
		return -EINVAL;
	if (r->qps[qpn])
		return -EBUSY;
	qp = kzalloc(sizeof(*qp), GFP_KERNEL_ACCOUNT);
	if (!qp)
		return -ENOMEM;
	qp->ctx = *c;
	gnsim_qp_set_path(qp, c);
	if (c->type == GN_ROCE_QPT_GSI)
		qp->ctx.qkey = cpu_to_le32(GN_ROCE_GSI_QKEY);
	qp->qpn = qpn;
	qp->r = r;
	qp->state = GN_ROCE_QPS_RESET;
	qp->mtu = 1024;
	timer_setup(&qp->timer, gnsim_rdp_timer, 0);
	INIT_LIST_HEAD(&qp->ack_node);
	INIT_LIST_HEAD(&qp->read_node);
	ret = gnsim_rring_load(r, &c->sq, c->sq_log_size,
			       c->flags & GN_ROCE_QPF_UD_WQE256 ?
			       GN_ROCE_UD_WQE_SIZE : GN_ROCE_WQE_SIZE, &qp->sq);
	if (ret)
		goto err;
	if (!(c->flags & GN_ROCE_QPF_SRQ)) {
		ret = gnsim_rring_load(r, &c->rq, c->rq_log_size,
				       GN_ROCE_WQE_SIZE, &qp->rq);
		if (ret)
			goto err;
	}
	qp->swqe = kvcalloc(qp->sq.size, sizeof(*qp->swqe),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!qp->swqe) {
		ret = -ENOMEM;
		goto err;
	}
	spin_lock_bh(&r->dp_lock);
	qp->scq = r->cqs[scqn];
	qp->rcq = r->cqs[rcqn];
	if (c->flags & GN_ROCE_QPF_SRQ)
		qp->srq = r->srqs[le32_to_cpu(c->srqn)];
	if (!qp->scq || !qp->rcq ||
	    (!qp->srq && (c->flags & GN_ROCE_QPF_SRQ))) {
		spin_unlock_bh(&r->dp_lock);
		ret = -ENOENT;
		goto err;
	}
	if (c->type == GN_ROCE_QPT_GSI) {
		/* one QP1 per port */
		if (r->ports[c->port].gsi) {
			spin_unlock_bh(&r->dp_lock);
			ret = -EBUSY;
			goto err;
		}
		r->ports[c->port].gsi = qp;
	}
	qp->scq->users++;
	qp->rcq->users++;
	if (qp->srq)
		qp->srq->users++;
	gnsim_rdp_reset(r, qp);
	r->qps[qpn] = qp;
	spin_unlock_bh(&r->dp_lock);
	return 0;
err:
	gnsim_qp_free(qp);
	return ret;
}

int gnsim_cmd_destroy_qp(struct gaudi_nic_roce *r, u32 qpn, const void *in,
			 void *out)
{
	struct gnsim_rqp *qp;

	if (qpn >= GN_ROCE_MAX_QP)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	qp = r->qps[qpn];
	r->qps[qpn] = NULL;
	gnsim_roce_ev_drop(r, GN_ROCE_EV_QP_FATAL, GN_ROCE_EV_QP_LAST_WQE, qpn);
	gnsim_roce_db_drop(r, GN_ROCE_DB_SQ, GN_ROCE_DB_RQ, qpn);
	if (qp) {
		gnsim_mw_qp_gone(r, qpn);
		if (r->ports[qp->ctx.port].gsi == qp)
			r->ports[qp->ctx.port].gsi = NULL;
		gnsim_rdp_ack_now(r, qp);
		gnsim_rdp_detach(r, qp);
		qp->scq->users--;
		qp->rcq->users--;
		if (qp->srq)
			qp->srq->users--;
	}
	spin_unlock_bh(&r->dp_lock);
	if (!qp)
		return -ENOENT;
	/* The timer may re-arm itself only under dp_lock via the table. */
	timer_shutdown_sync(&qp->timer);
	flush_work(&r->ev_work);
	gnsim_qp_free(qp);
	return 0;
}

static const u32 gnsim_mtu_bytes[] = { 0, 256, 512, 1024, 2048, 4096 };

int gnsim_cmd_modify_qp(struct gaudi_nic_roce *r, u32 qpn, const void *in,
			void *out)
{
	const struct gn_roce_modify_qp *m = in;
	u32 mask = le32_to_cpu(m->mask);
	const struct gn_roce_qp_ctx *c = &m->ctx;
	struct gnsim_rqp *qp;
	int ret = 0;

	if (qpn >= GN_ROCE_MAX_QP || m->rsvd)
		return -EINVAL;
	if ((mask & GN_ROCE_QPC_STATE) && c->state > GN_ROCE_QPS_ERR)
		return -EINVAL;
	if ((mask & GN_ROCE_QPC_PATH_MTU) &&
	    (c->path_mtu < 1 || c->path_mtu >= ARRAY_SIZE(gnsim_mtu_bytes)))
		return -EINVAL;
	if ((mask & GN_ROCE_QPC_PORT) && c->port >= r->num_ports)
		return -EINVAL;
	if ((mask & GN_ROCE_QPC_AV) && c->sgid_index >= GN_ROCE_MAX_GID)
		return -EINVAL;
	if (((mask & GN_ROCE_QPC_RD_ATOMIC) &&
	     c->max_rd_atomic > GN_ROCE_MAX_RD_ATOM) ||
	    ((mask & GN_ROCE_QPC_DEST_RD_AT) &&
	     c->max_dest_rd_atomic > GN_ROCE_MAX_RD_ATOM))
		return -EINVAL;

	spin_lock_bh(&r->dp_lock);
	qp = r->qps[qpn];
	if (!qp) {
		ret = -ENOENT;
		goto out;
	}
	/* QP1 is its port's for life */
	if ((mask & GN_ROCE_QPC_PORT) && qp->ctx.type == GN_ROCE_QPT_GSI &&
	    c->port != qp->ctx.port) {
		ret = -EINVAL;
		goto out;
	}
	if (mask & GN_ROCE_QPC_ACCESS)
		qp->ctx.access = c->access;
	if (mask & GN_ROCE_QPC_PORT)
		qp->ctx.port = c->port;
	if ((mask & GN_ROCE_QPC_QKEY) && qp->ctx.type == GN_ROCE_QPT_UD)
		qp->ctx.qkey = c->qkey;
	if (mask & GN_ROCE_QPC_PATH_MTU)
		qp->ctx.path_mtu = c->path_mtu;
	if (mask & GN_ROCE_QPC_DEST_QPN)
		qp->ctx.dest_qpn = c->dest_qpn;
	if (mask & GN_ROCE_QPC_RQ_PSN)
		qp->ctx.rq_psn = c->rq_psn;
	if (mask & GN_ROCE_QPC_SQ_PSN)
		qp->ctx.sq_psn = c->sq_psn;
	if (mask & GN_ROCE_QPC_TIMEOUT)
		qp->ctx.timeout = c->timeout;
	if (mask & GN_ROCE_QPC_RETRY)
		qp->ctx.retry_cnt = c->retry_cnt;
	if (mask & GN_ROCE_QPC_RNR_RETRY)
		qp->ctx.rnr_retry = c->rnr_retry;
	if (mask & GN_ROCE_QPC_MIN_RNR)
		qp->ctx.min_rnr_timer = c->min_rnr_timer;
	if (mask & GN_ROCE_QPC_RD_ATOMIC)
		qp->ctx.max_rd_atomic = c->max_rd_atomic;
	if (mask & GN_ROCE_QPC_DEST_RD_AT)
		qp->ctx.max_dest_rd_atomic = c->max_dest_rd_atomic;
	if (mask & GN_ROCE_QPC_AV) {
		memcpy(qp->ctx.dmac, c->dmac, sizeof(c->dmac));
		memcpy(qp->ctx.dgid, c->dgid, sizeof(c->dgid));
		qp->ctx.sgid_index = c->sgid_index;
		qp->ctx.hop_limit = c->hop_limit;
		qp->ctx.traffic_class = c->traffic_class;
		qp->ctx.flow_label = c->flow_label;
		gnsim_qp_set_path(qp, c);
	}
	if (mask & GN_ROCE_QPC_PATH_MTU)
		qp->mtu = gnsim_mtu_bytes[qp->ctx.path_mtu];
	if (mask & GN_ROCE_QPC_RQ_PSN)
		qp->epsn = le32_to_cpu(c->rq_psn) & 0xffffff;
	if (mask & GN_ROCE_QPC_SQ_PSN) {
		qp->npsn = le32_to_cpu(c->sq_psn) & 0xffffff;
		qp->una = qp->npsn;
		qp->acked = qp->npsn;
	}
	if (mask & GN_ROCE_QPC_RETRY)
		qp->retry_left = qp->ctx.retry_cnt;
	if (mask & GN_ROCE_QPC_RNR_RETRY)
		qp->rnr_left = qp->ctx.rnr_retry;
	if (mask & GN_ROCE_QPC_STATE && c->state != qp->state) {
		if (c->state == GN_ROCE_QPS_RESET) {
			gnsim_rdp_ack_now(r, qp);
			gnsim_rdp_reset(r, qp);
		} else if (c->state == GN_ROCE_QPS_ERR) {
			gnsim_rdp_ack_now(r, qp);
			gnsim_rdp_to_error(r, qp);
		} else {
			qp->state = c->state;
			if (qp->state == GN_ROCE_QPS_RTS)
				gnsim_rdp_sq_doorbell(r, qp);
		}
	}
out:
	spin_unlock_bh(&r->dp_lock);
	return ret;
}

int gnsim_cmd_query_qp(struct gaudi_nic_roce *r, u32 qpn, const void *in,
		       void *out)
{
	struct gn_roce_qp_ctx *c = out;
	struct gnsim_rqp *qp;

	if (qpn >= GN_ROCE_MAX_QP)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	qp = r->qps[qpn];
	if (qp) {
		*c = qp->ctx;
		c->state = qp->state;
		c->sq_psn = cpu_to_le32(qp->npsn);
		c->rq_psn = cpu_to_le32(qp->epsn);
	}
	spin_unlock_bh(&r->dp_lock);
	return qp ? 0 : -ENOENT;
}
