// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: UD and GSI (QP1) data path.
 *
 * Send: every WQE of a UD or GSI send queue is one datagram of at most
 * one path MTU (the port's active MTU), to the address vector, QPN and
 * Q_Key the WQE carries.  Nothing is acknowledged: a WQE completes as
 * soon as its frame is built (its data copied, never sent by reference),
 * and an invalid one completes with an error that moves the QP to ERR,
 * as on the RC path.
 *
 * Receive: a UD frame (BTH opcode SEND_ONLY or SEND_ONLY_IMM of the UD
 * transport, with a DETH) for QPN 1 goes to the port's GSI QP, any other
 * to the UD QP of that number on that port, if the frame is addressed to
 * one of the port's GIDs and its Q_Key is the QP's (QP1: the well-known
 * GN_ROCE_GSI_QKEY).  Anything else is dropped and counted (a wrong Q_Key
 * as a Q_Key violation).  The receive buffer gets the 40-byte GRH area,
 * then the payload.  Without a posted receive the datagram is dropped (UD
 * has no RNR).  A buffer too small completes with LOC_LEN_ERR and the QP
 * goes on, so that a peer cannot stop a QP by what it sends; on QP1 such
 * a datagram is dropped without consuming the buffer, so that a peer
 * cannot exhaust the MAD layer's receives either (it does not repost
 * buffers that complete in error).
 */
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>

#include "roce_dp.h"

/*
 * Largest message of a datagram on port @pt: the port's active MTU, as
 * gaudi_ib reports it (iboe_get_mtu() of the netdev MTU, at least 1024).
 */
static u32 gnsim_ud_mtu(const struct gnsim_rport *pt)
{
	/* what the core reserves: GRH, UDP, BTH, XRC and atomic ETHs, ICRC */
	u32 room = pt->mtu > 96 ? pt->mtu - 96 : 0;

	if (room >= 4096)
		return 4096;
	if (room >= 2048)
		return 2048;
	return 1024;
}

/*
 * Build and send the datagram of @sw, whose WQE the engine copied to
 * r->ud_wqe; 0 or a CQE status.  It reads only that copy, never the
 * ring.  A QP without GN_ROCE_QPF_UD_WQE256 has 128-byte WQEs, the first
 * half of the format, and their smaller limits.  Not inlined: a test
 * holds the posting thread here while another rewrites the WQE in the
 * ring (tests/rdma/rewrite_test.c).
 */
static noinline int gnsim_ud_send_one(struct gaudi_nic_roce *r,
				      struct gnsim_rport *pt, struct gnsim_rqp *qp,
				      struct gnsim_rswqe *sw)
{
	const struct gn_roce_ud_wqe *w = &r->ud_wqe;
	const struct gn_roce_av *av = &w->av;
	bool inl = w->flags & GN_ROCE_WQE_F_INLINE;
	bool big = qp->sq.stride == GN_ROCE_UD_WQE_SIZE;
	const struct gn_roce_gid_ctx *g;
	struct gn_roce_wqe sg;	/* the SGEs where gnsim_sge_io() wants them */
	u32 qkey = le32_to_cpu(w->qkey), len, i;
	struct gnsim_pkt p = {};
	u64 sum = 0;
	int hl;

	if ((w->opcode != GN_ROCE_WQE_SEND &&
	     w->opcode != GN_ROCE_WQE_SEND_IMM) ||
	    w->num_sge > (big ? GN_ROCE_MAX_SGE : GN_ROCE_UD_MAX_SGE) ||
	    av->sgid_index >= GN_ROCE_MAX_GID || av->rsvd)
		return GN_ROCE_CQE_LOC_QP_OP_ERR;
	g = &pt->gids[av->sgid_index];
	if (!g->type || g->type != av->network)
		return GN_ROCE_CQE_LOC_QP_OP_ERR;
	if (inl) {
		len = le32_to_cpu(w->inline_len);
		if (len > (big ? GN_ROCE_UD_WQE256_MAX_INLINE :
				 GN_ROCE_UD_MAX_INLINE))
			return GN_ROCE_CQE_LOC_QP_OP_ERR;
	} else {
		sg.num_sge = w->num_sge;
		for (i = 0; i < w->num_sge; i++) {
			sg.sge[i] = w->sge[i];
			sum += le32_to_cpu(sg.sge[i].length);
		}
		if (sum > U32_MAX)
			return GN_ROCE_CQE_LOC_LEN_ERR;
		len = sum;
	}
	if (len > gnsim_ud_mtu(pt))
		return GN_ROCE_CQE_LOC_LEN_ERR;
	sw->len = len;

	p.opcode = w->opcode == GN_ROCE_WQE_SEND_IMM ? OP_UD_SEND_ONLY_IMM :
						       OP_UD_SEND_ONLY;
	if (w->flags & GN_ROCE_WQE_F_SOLICITED)
		p.se = BTH_SE;
	p.psn = qp->npsn;
	qp->npsn = (qp->npsn + 1) & PSN_MASK;
	p.dqpn = le32_to_cpu(w->dest_qpn) & PSN_MASK;
	p.qkey = qkey & GN_ROCE_QKEY_USE_QP ? le32_to_cpu(qp->ctx.qkey) : qkey;
	p.sqpn = qp->ctx.type == GN_ROCE_QPT_GSI ? GN_ROCE_GSI_QPN : qp->qpn;
	p.imm = w->imm;
	p.paylen = len;
	/* the datagram goes to its own address, not through the QP's path */
	p.av = av;
	hl = gnsim_tx_hdr_len(r, qp, av, p.opcode);
	if (hl < 0)
		return GN_ROCE_CQE_LOC_QP_OP_ERR;
	if (!inl)
		return gnsim_tx_mem(r, qp, &p, hl, &sg, 0, NULL, 0);
	memcpy(r->frame + hl, w->inline_data, len);
	gnsim_tx(r, qp, &p);
	return 0;
}

/*
 * Send what is posted on the SQ of UD or GSI QP @qp.  Each WQE is copied
 * out of the ring once, into r->ud_wqe, and only that copy is used; its
 * slot's gnsim_rswqe keeps what a completion or a flush needs.
 */
void gnsim_ud_send(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	struct gnsim_rport *pt = &r->ports[qp->ctx.port];
	unsigned int budget = GN_RR_SQ_BUDGET;
	u32 mask = qp->sq.size - 1;
	int posted, status;

	lockdep_assert_held(&r->dp_lock);
	if (qp->state != GN_ROCE_QPS_RTS)
		return;
	posted = gnsim_sq_posted(r, qp);
	if (posted < 0)
		return;
	if (posted && r->rx_inline) {
		/* in a MAC's call chain: the work item sends */
		set_bit(qp->qpn, r->resend);
		return;
	}
	while (posted-- > 0) {
		struct gnsim_rswqe *sw = &qp->swqe[qp->sq_tail & mask];

		if (!budget--) {
			gnsim_rdp_sq_defer(r, qp);
			break;
		}
		gnsim_rring_read(&qp->sq, qp->sq_tail, &r->ud_wqe);
		sw->wr_id = le64_to_cpu(r->ud_wqe.wr_id);
		sw->opcode = r->ud_wqe.opcode;
		sw->flags = r->ud_wqe.flags;
		sw->len = 0;
		/* started: a flush takes wr_id from the copy */
		qp->sq_head = qp->sq_tail + 1;
		qp->sq_next = qp->sq_head;
		status = gnsim_ud_send_one(r, pt, qp, sw);
		if (status) {
			gnsim_req_fail(r, qp, status);
			return;
		}
		qp->sq_tail++;
		gnsim_sq_set_cons(qp);
		if ((sw->flags & GN_ROCE_WQE_F_SIGNALED) || qp->ctx.sq_sig_all)
			gnsim_cqe(r, qp, qp->scq, sw->wr_id, GN_ROCE_CQE_SEND,
				  GN_ROCE_CQE_OK, sw->len, false, 0, false);
	}
	gnsim_tx_train_flush(r);
}

/* The QP that a datagram for QPN @dqpn on port @pt goes to, or NULL. */
static struct gnsim_rqp *gnsim_ud_qp(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
				     u32 dqpn)
{
	struct gnsim_rqp *qp;

	if (dqpn == GN_ROCE_GSI_QPN)
		return pt->gsi;
	if (dqpn < GN_ROCE_MIN_QPN || dqpn >= GN_ROCE_MAX_QP)
		return NULL;
	qp = r->qps[dqpn];
	if (!qp || qp->ctx.type != GN_ROCE_QPT_UD || qp->ctx.port != pt->port)
		return NULL;
	return qp;
}

/* Is the frame at @l3 addressed to one of port @pt's GIDs? */
static bool gnsim_ud_to_port(const struct gnsim_rport *pt, const u8 *l3, bool v4)
{
	const struct iphdr *ih4 = (const struct iphdr *)l3;
	const struct ipv6hdr *ih6 = (const struct ipv6hdr *)l3;
	unsigned int i;

	for (i = 0; i < GN_ROCE_MAX_GID; i++) {
		const struct gn_roce_gid_ctx *g = &pt->gids[i];

		if (v4 && g->type == GN_ROCE_GID_V2_IPV4 &&
		    !memcmp(&ih4->daddr, g->gid + 12, 4))
			return true;
		if (!v4 && g->type == GN_ROCE_GID_V2_IPV6 &&
		    !memcmp(&ih6->daddr, g->gid, 16))
			return true;
	}
	return false;
}

/* Bytes the receive WQE just taken can hold. */
static u64 gnsim_ud_rwqe_room(const struct gnsim_rqp *qp)
{
	unsigned int i, n = min_t(u32, qp->rwqe.num_sge, GN_ROCE_MAX_SGE);
	u64 room = 0;

	for (i = 0; i < n; i++)
		room += le32_to_cpu(qp->rwqe.sge[i].length);
	return room;
}

/*
 * Receive datagram @p (@flen bytes, network header at @l3) on port @pt.
 * The headers are in the frame's first piece (gnsim_rdp_rx_one()).
 */
void gnsim_ud_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt, const u8 *l3,
		 bool v4, const struct gnsim_pkt *p, u32 flen)
{
	struct gnsim_rqp *qp = gnsim_ud_qp(r, pt, p->dqpn);
	struct gnsim_io io = { .kind = GN_IO_FROM_BUF };
	u8 grh[GN_ROCE_GRH_SIZE] = {};
	struct gn_roce_cqe c = {};
	u32 want;
	int ret;

	lockdep_assert_held(&r->dp_lock);
	if (!qp || !gnsim_ud_to_port(pt, l3, v4) ||
	    (qp->state != GN_ROCE_QPS_RTR && qp->state != GN_ROCE_QPS_RTS) ||
	    p->paylen > gnsim_ud_mtu(pt))
		goto drop;
	want = qp->ctx.type == GN_ROCE_QPT_GSI ? GN_ROCE_GSI_QKEY :
						 le32_to_cpu(qp->ctx.qkey);
	if (p->qkey != want) {
		pt->st.qkey_viols++;
		goto drop;
	}
	if (!gnsim_resp_take_rwqe(r, qp))
		goto drop;
	if (qp->ctx.type == GN_ROCE_QPT_GSI &&
	    gnsim_ud_rwqe_room(qp) < GN_ROCE_GRH_SIZE + p->paylen)
		goto drop;		/* the buffer stays posted */

	/* union rdma_network_hdr: IPv4 in the last 20 bytes */
	if (v4)
		memcpy(grh + 20, l3, sizeof(struct iphdr));
	else
		memcpy(grh, l3, sizeof(struct ipv6hdr));
	io.src = grh;
	ret = gnsim_sge_io(r, qp, qp->rwqe_pdn, &qp->rwqe, 0, GN_ROCE_GRH_SIZE,
			   &io);
	if (!ret) {
		io = (struct gnsim_io){ .kind = GN_IO_FROM_PKT, .pkt = p };
		ret = gnsim_sge_io(r, qp, qp->rwqe_pdn, &qp->rwqe,
				   GN_ROCE_GRH_SIZE, p->paylen, &io);
	}
	gnsim_rq_consume(qp);
	c.wr_id = qp->rwqe.wr_id;
	c.byte_len = cpu_to_le32(ret ? 0 : GN_ROCE_GRH_SIZE + p->paylen);
	c.imm = p->imm;
	c.qpn = cpu_to_le32(qp->qpn);
	c.opcode = GN_ROCE_CQE_RECV;
	c.status = ret;
	c.flags = GN_ROCE_CQE_F_GRH | (v4 ? 0 : GN_ROCE_CQE_F_IPV6) |
		  (op_has_imm(p->opcode) ? GN_ROCE_CQE_F_IMM : 0);
	c.src_qp = cpu_to_le32(p->sqpn);
	gnsim_cq_push(r, qp->rcq, &c, p->se || ret);
	pt->st.rx_pkts++;
	pt->st.rx_bytes += flen;
	return;
drop:
	pt->st.rx_drops++;
}
