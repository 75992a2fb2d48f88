// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: the RC responder.  PSN checks, SEND and
 * WRITE placement, READ responses in bursts, ACK coalescing.
 * Part of the data path described in roce_dp.c.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>
#include "mac.h"

#include "roce_dp.h"

/* ---------------------------------------------------------- responder */

static bool gnsim_resp_reads_owed(const struct gnsim_rqp *qp)
{
	return qp->rd_send != qp->rd_head;
}

/*
 * An ACK is owed.  While READ responses are still owed it waits for them:
 * an ACK of a later PSN must not overtake them (a requester takes it as
 * the implicit NAK of the READ).
 */
static void gnsim_resp_ack_later(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	if (gnsim_resp_reads_owed(qp)) {
		qp->ack_after_read = true;
		return;
	}
	if (list_empty(&qp->ack_node))
		list_add_tail(&qp->ack_node, &r->ack_list);
}

/*
 * May a NAK that does not end the connection (RNR, sequence error) go
 * now?  Not ahead of owed READ responses: the request is dropped instead
 * and the requester's timer retries it.
 */
static bool gnsim_resp_may_nak(struct gnsim_rport *pt, struct gnsim_rqp *qp)
{
	if (!gnsim_resp_reads_owed(qp))
		return true;
	pt->st.rx_drops++;
	return false;
}

static void gnsim_resp_fatal(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
			     struct gnsim_rqp *qp, u8 syndrome, u32 psn)
{
	u8 ev = syndrome == AETH_NAK_ACC ? GN_ROCE_EV_QP_ACC_ERR :
		syndrome == AETH_NAK_OP ? GN_ROCE_EV_QP_FATAL :
		GN_ROCE_EV_QP_REQ_ERR;

	if (syndrome == AETH_NAK_ACC)
		pt->st.rem_access_errs++;
	/* UC: the sender's faults drop the message, nothing is answered */
	if (qp->ctx.type == GN_ROCE_QPT_UC) {
		qp->in_send = false;
		qp->in_write = false;
		if (syndrome != AETH_NAK_OP) {
			pt->st.rx_drops++;
			return;
		}
		gnsim_rdp_to_error(r, qp);
		gnsim_roce_event(r, ev, qp->qpn);
		return;
	}
	gnsim_send_ack(r, qp, syndrome, psn);
	gnsim_rdp_to_error(r, qp);
	gnsim_roce_event(r, ev, qp->qpn);
}

/* rkey, PD, bounds and access of an RDMA request; NULL if refused. */
static struct gnsim_rmr *gnsim_resp_check(struct gaudi_nic_roce *r,
					  struct gnsim_rqp *qp, u32 rkey, u64 va,
					  u32 len, u32 mr_acc, u32 qp_acc)
{
	struct gnsim_rmr *mr;

	if (!(le32_to_cpu(qp->ctx.access) & qp_acc))
		return NULL;
	/* a memory window's key: its own access and range decide */
	if (gnsim_key_is_mw(rkey))
		return gnsim_mw_resolve(r, qp, rkey, va, len, mr_acc);
	mr = gnsim_mr_get(r, rkey, le32_to_cpu(qp->ctx.pdn));
	if (!mr || !(mr->access & mr_acc))
		return NULL;
	if (len && !gnsim_mr_covers(mr, va, len))
		return NULL;
	return mr;
}

/*
 * The checks of @len bytes of an RDMA WRITE or READ: gnsim_resp_check(),
 * except that zero bytes name no memory, so only the QP's access is
 * checked, not the R_Key and address (IBA C9-88, as rxe and ConnectX do:
 * UCX's rc_verbs flushes an endpoint with a zero-length RDMA WRITE to
 * R_Key 0).  *@mr is NULL then.  Returns false if refused.
 */
static bool gnsim_resp_rdma_check(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
				  u32 rkey, u64 va, u32 len, u32 mr_acc,
				  u32 qp_acc, struct gnsim_rmr **mr)
{
	if (!len) {
		*mr = NULL;
		return le32_to_cpu(qp->ctx.access) & qp_acc;
	}
	*mr = gnsim_resp_check(r, qp, rkey, va, len, mr_acc, qp_acc);
	return *mr;
}

/* The QP's responder resources (READs it may hold at once). */
static u32 gnsim_resp_rd_max(const struct gnsim_rqp *qp)
{
	return min_t(u32, qp->ctx.max_dest_rd_atomic, GN_ROCE_MAX_RD_ATOM);
}

/* Response @i of READ @rd, from @mr. */
static void gnsim_resp_read_pkt(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
				const struct gnsim_rread *rd, struct gnsim_rmr *mr,
				u32 i, int hl, u8 opcode)
{
	u64 off = (u64)i * qp->mtu;
	struct gnsim_pkt p = {
		.opcode = opcode,
		.psn = (rd->psn + i) & PSN_MASK,
		.dqpn = le32_to_cpu(qp->ctx.dest_qpn),
		.aeth = (u32)AETH_ACK << 24 | (rd->msn & PSN_MASK),
		.paylen = min_t(u64, qp->mtu, rd->len - off),
	};

	gnsim_tx_mem(r, qp, &p, hl, NULL, 0, mr, rd->va + off);
}

static u8 gnsim_resp_read_op(const struct gnsim_rread *rd, u32 i)
{
	if (rd->npkts == 1)
		return OP_READ_RESP_ONLY;
	return !i ? OP_READ_RESP_FIRST : i == rd->npkts - 1 ?
	       OP_READ_RESP_LAST : OP_READ_RESP_MIDDLE;
}

/*
 * Send the next burst of @qp's READ responses, oldest READ first: at most
 * GN_RR_READ_BURST packets and GN_RR_READ_BURST_BYTES.  Returns true if
 * responses are still owed.
 */
static bool gnsim_resp_read_burst(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	struct gnsim_rport *pt = &r->ports[qp->ctx.port];
	u32 pkts = 0, bytes = 0;

	while (gnsim_resp_reads_owed(qp) && pkts < GN_RR_READ_BURST &&
	       bytes < GN_RR_READ_BURST_BYTES) {
		struct gnsim_rread *rd =
			&qp->reads[qp->rd_send % GN_ROCE_MAX_RD_ATOM];
		u64 off = (u64)rd->next * qp->mtu;
		struct gnsim_rmr *mr;
		bool ok;

		if (rd->next >= rd->npkts) {
			qp->rd_send++;
			if ((s32)(qp->rd_send - qp->rd_first) > 0)
				qp->rd_first = qp->rd_send;
			continue;
		}
		/*
		 * The MR may have been deregistered since the request.  A
		 * FLUSH (no length) always names its MR; a READ of zero
		 * bytes none.
		 */
		if (rd->qp_acc == GN_ROCE_ACC_FLUSH) {
			mr = gnsim_resp_check(r, qp, rd->rkey, rd->va, 0,
					      rd->mr_acc, rd->qp_acc);
			ok = mr;
		} else {
			ok = gnsim_resp_rdma_check(r, qp, rd->rkey, rd->va + off,
						   rd->len - off, rd->mr_acc,
						   rd->qp_acc, &mr);
		}
		if (!ok) {
			gnsim_tx_train_flush(r);
			gnsim_resp_fatal(r, pt, qp, AETH_NAK_ACC,
					 (rd->psn + rd->next) & PSN_MASK);
			return false;
		}
		while (rd->next < rd->npkts && pkts < GN_RR_READ_BURST &&
		       bytes < GN_RR_READ_BURST_BYTES) {
			u8 op = gnsim_resp_read_op(rd, rd->next);
			int hl = gnsim_tx_hdr_len(r, qp, &qp->path, op);

			if (hl < 0) {
				/* no path: the requester's timer retries */
				rd->next = rd->npkts;
				break;
			}
			gnsim_resp_read_pkt(r, qp, rd, mr, rd->next, hl, op);
			rd->next++;
			pkts++;
			bytes += qp->mtu;
		}
	}
	gnsim_tx_train_flush(r);
	if (gnsim_resp_reads_owed(qp))
		return true;
	if (qp->ack_after_read) {
		qp->ack_after_read = false;
		gnsim_resp_ack_later(r, qp);
	}
	return false;
}

/*
 * @qp owes READ responses: it joins the READ list, which the work item
 * serves after the frames of its pass (READ requests are never taken in
 * a MAC's call chain), within that pass's cap.
 */
static void gnsim_resp_read_start(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	if (list_empty(&qp->read_node))
		list_add_tail(&qp->read_node, &r->read_list);
}

/*
 * One burst each for the QPs that owe READ responses and whose link
 * partner does not pause them, at most GN_RR_READ_PASS in a pass; the
 * next pass starts where this one stopped.  Returns true if responses are
 * still owed; @paused tells whether a pause held any back.
 */
bool gnsim_rdp_reads_run(struct gaudi_nic_roce *r, bool *paused)
{
	struct gnsim_rqp *qp, *tmp, *next = NULL;
	unsigned int bursts = 0;

	*paused = false;
	list_for_each_entry_safe(qp, tmp, &r->read_list, read_node) {
		struct gn_mac *mac = r->ports[qp->ctx.port].mac;

		if (bursts == GN_RR_READ_PASS) {
			next = qp;
			r->ports[qp->ctx.port].st.read_yields++;
			break;
		}
		if (mac && gnsim_mac_roce_tx_paused(mac)) {
			*paused = true;
			continue;
		}
		bursts++;
		if (!gnsim_resp_read_burst(r, qp))
			list_del_init(&qp->read_node);
	}
	/* the next run starts with another QP */
	if (next)
		list_rotate_to_front(&next->read_node, &r->read_list);
	else if (!list_empty(&r->read_list))
		list_rotate_left(&r->read_list);
	return !list_empty(&r->read_list);
}

/*
 * Room for a new READ (or FLUSH) in the responder resources: fewer than
 * max_dest_rd_atomic READs not yet answered once.  A duplicate moves
 * rd_send back but not rd_first (N5 of the November review: a forged
 * duplicate from the peer's address used to make the next real READ an
 * invalid request, which tore the connection down).  The slot the new
 * READ takes may hold the oldest one a replay is still sending: the
 * requester cannot still want that one if it sends a new one past its
 * limit, so the replay of it ends.
 */
static bool gnsim_resp_rd_room(struct gnsim_rqp *qp)
{
	if (qp->rd_head - qp->rd_first >= gnsim_resp_rd_max(qp))
		return false;
	if (qp->rd_head - qp->rd_send >= GN_ROCE_MAX_RD_ATOM)
		qp->rd_send = qp->rd_head - GN_ROCE_MAX_RD_ATOM + 1;
	return true;
}

/*
 * A duplicate READ request: the requester lost responses.  Only a READ
 * still held in the responder resources is replayed, and only from the
 * requested PSN to its end; a request that does not match what is held
 * (address, length, key) is dropped, as is one for a READ no longer held.
 */
static void gnsim_resp_read_dup(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
				struct gnsim_rqp *qp, const struct gnsim_pkt *p)
{
	u32 held = min(qp->rd_head, gnsim_resp_rd_max(qp)), k;

	for (k = 1; k <= held; k++) {
		u32 j = qp->rd_head - k;
		struct gnsim_rread *rd = &qp->reads[j % GN_ROCE_MAX_RD_ATOM];
		s32 d = psn_diff(p->psn, rd->psn);
		u64 off = (u64)d * qp->mtu;
		bool flush = rd->qp_acc == GN_ROCE_ACC_FLUSH;
		bool req_flush = p->opcode == OP_FLUSH;

		if (d < 0 || d >= rd->npkts)
			continue;
		/* a FLUSH held answers a duplicate FLUSH (it has no length) */
		if (p->rkey != rd->rkey || p->va != rd->va + off ||
		    flush != req_flush ||
		    (!flush && p->dmalen != rd->len - min_t(u64, rd->len, off)))
			break;
		rd->next = d;
		/* what the requester lost goes out first, in PSN order */
		if ((s32)(j - qp->rd_send) < 0)
			qp->rd_send = j;
		gnsim_resp_read_start(r, qp);
		return;
	}
	pt->st.rx_drops++;
}

/*
 * Take the next receive WQE into qp->rwqe (the one read of it) and the
 * protection domain of its SGEs into qp->rwqe_pdn; false if none is
 * posted.  An SRQ's WQE is consumed at once (its other QPs must not take
 * it too), and may raise the SRQ's limit event.
 */
bool gnsim_resp_take_rwqe(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	struct gnsim_rsrq *srq = qp->srq;
	int n;

	qp->recv_off = 0;
	if (!srq) {
		n = gnsim_wq_posted(&qp->rq, qp->rq_cons);
		if (n <= 0)
			return false;
		memcpy(&qp->rwqe, gnsim_rring_entry(&qp->rq, qp->rq_cons),
		       sizeof(qp->rwqe));
		qp->rwqe_pdn = le32_to_cpu(qp->ctx.pdn);
		return true;
	}
	n = gnsim_wq_posted(&srq->ring, srq->cons);
	if (n <= 0)
		return false;
	memcpy(&qp->rwqe, gnsim_rring_entry(&srq->ring, srq->cons),
	       sizeof(qp->rwqe));
	/* receive WQEs of an SRQ are in the SRQ's protection domain */
	qp->rwqe_pdn = srq->pdn;
	srq->cons++;
	WRITE_ONCE(gnsim_rring_hdr(&srq->ring)->cons, cpu_to_le32(srq->cons));
	if (srq->limit && n - 1 < srq->limit) {
		srq->limit = 0;
		gnsim_roce_event(r, GN_ROCE_EV_SRQ_LIMIT, srq->srqn);
	}
	return true;
}

static void gnsim_resp_recv_done(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
				 u8 opcode, u32 len, bool imm, __be32 immdt,
				 bool se)
{
	gnsim_rq_consume(qp);
	gnsim_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id), opcode,
		  GN_ROCE_CQE_OK, len, imm, immdt, se);
}

/*
 * What a receive step leaves to gnsim_resp_rx(): the packet was taken (the
 * expected PSN advances, acknowledged if asked), nothing more is to be
 * done (a NAK was sent or the packet is ignored), or it is an invalid
 * request (NAK, QP to ERR).
 */
enum gnsim_resp_res { GN_RESP_TAKEN, GN_RESP_STOP, GN_RESP_INVALID };

/* The RQ is empty: an RNR NAK for @p, if NAKs may go now. */
static enum gnsim_resp_res gnsim_resp_rnr(struct gaudi_nic_roce *r,
					  struct gnsim_rport *pt, struct gnsim_rqp *qp,
					  const struct gnsim_pkt *p)
{
	/* UC: no receive WQE, the message is dropped */
	if (p->uc) {
		pt->st.rx_drops++;
		return GN_RESP_STOP;
	}
	if (gnsim_resp_may_nak(pt, qp)) {
		pt->st.rnr_naks_tx++;
		gnsim_send_ack(r, qp, AETH_RNR(qp->ctx.min_rnr_timer), p->psn);
	}
	return GN_RESP_STOP;
}

/* A packet of a SEND: its payload goes to the receive WQE. */
static enum gnsim_resp_res gnsim_resp_send(struct gaudi_nic_roce *r,
					   struct gnsim_rport *pt, struct gnsim_rqp *qp,
					   const struct gnsim_pkt *p)
{
	struct gnsim_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };
	u8 op = p->opcode;
	int ret;

	if (op == OP_SEND_FIRST || op == OP_SEND_ONLY ||
	    op == OP_SEND_ONLY_IMM || op == OP_SEND_ONLY_INV) {
		if (qp->in_send || qp->in_write)
			return GN_RESP_INVALID;
		if (!gnsim_resp_take_rwqe(r, qp))
			return gnsim_resp_rnr(r, pt, qp, p);
		qp->in_send = true;
	}
	if (!qp->in_send)
		return GN_RESP_INVALID;
	if ((op == OP_SEND_FIRST || op == OP_SEND_MIDDLE) &&
	    p->paylen != qp->mtu)
		return GN_RESP_INVALID;
	if (qp->rwqe.num_sge > GN_ROCE_MAX_SGE)
		ret = GN_ROCE_CQE_LOC_QP_OP_ERR;
	else
		ret = gnsim_sge_io(r, qp, qp->rwqe_pdn, &qp->rwqe, qp->recv_off,
				   p->paylen, &io);
	if (ret) {
		gnsim_rq_consume(qp);
		gnsim_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id),
			  GN_ROCE_CQE_RECV, ret, 0, false, 0, false);
		qp->in_send = false;
		/*
		 * A receive buffer too short is the sender's invalid
		 * request; a receive WQE the responder cannot use (bad lkey,
		 * PD or bounds) its own remote operational error (IBTA
		 * 9.7.5.2.4, as rxe answers a malformed WQE).
		 */
		gnsim_resp_fatal(r, pt, qp, ret == GN_ROCE_CQE_LOC_LEN_ERR ?
			      AETH_NAK_INV : AETH_NAK_OP, p->psn);
		return GN_RESP_STOP;
	}
	qp->recv_off += p->paylen;
	if (op_has_ieth(op)) {
		/* SEND with invalidate: a type 2 MW bound to this QP */
		qp->in_send = false;
		if (!gnsim_mw_remote_inv(r, qp, p->rkey)) {
			gnsim_rq_consume(qp);
			gnsim_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id),
				  GN_ROCE_CQE_RECV, GN_ROCE_CQE_LOC_PROT_ERR, 0,
				  false, 0, false);
			gnsim_resp_fatal(r, pt, qp, AETH_NAK_OP, p->psn);
			return GN_RESP_STOP;
		}
		qp->msn++;
		gnsim_rq_consume(qp);
		gnsim_cqe_inv(r, qp, le64_to_cpu(qp->rwqe.wr_id), qp->recv_off,
			      p->rkey, p->se);
	} else if (op == OP_SEND_LAST || op == OP_SEND_LAST_IMM ||
		   op == OP_SEND_ONLY || op == OP_SEND_ONLY_IMM) {
		qp->in_send = false;
		qp->msn++;
		gnsim_resp_recv_done(r, qp, GN_ROCE_CQE_RECV, qp->recv_off,
				     op_has_imm(op), p->imm, p->se);
	}
	return GN_RESP_TAKEN;
}

/* The first packet of an RDMA WRITE: rkey, bounds and access. */
static enum gnsim_resp_res gnsim_resp_write_start(struct gaudi_nic_roce *r,
						  struct gnsim_rport *pt,
						  struct gnsim_rqp *qp,
						  const struct gnsim_pkt *p)
{
	struct gnsim_rmr *mr;

	if (qp->in_send || qp->in_write)
		return GN_RESP_INVALID;
	if (p->opcode == OP_WRITE_ONLY_IMM && !gnsim_rq_has_wqe(qp))
		return gnsim_resp_rnr(r, pt, qp, p);
	if (!gnsim_resp_rdma_check(r, qp, p->rkey, p->va, p->dmalen,
				   GN_ROCE_MR_REMOTE_WRITE,
				   GN_ROCE_ACC_REMOTE_WRITE, &mr)) {
		gnsim_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
		return GN_RESP_STOP;
	}
	qp->in_write = true;
	qp->wr_va = p->va;
	qp->wr_rkey = p->rkey;
	qp->wr_left = p->dmalen;
	qp->wr_len = p->dmalen;
	return GN_RESP_TAKEN;
}

/* A packet of an RDMA WRITE: its payload goes to the target MR. */
static enum gnsim_resp_res gnsim_resp_write(struct gaudi_nic_roce *r,
					    struct gnsim_rport *pt, struct gnsim_rqp *qp,
					    const struct gnsim_pkt *p)
{
	u8 op = p->opcode;
	bool last = op != OP_WRITE_FIRST && op != OP_WRITE_MIDDLE;
	enum gnsim_resp_res res;
	struct gnsim_rmr *mr;

	if (op == OP_WRITE_FIRST || op == OP_WRITE_ONLY ||
	    op == OP_WRITE_ONLY_IMM) {
		res = gnsim_resp_write_start(r, pt, qp, p);
		if (res != GN_RESP_TAKEN)
			return res;
	}
	if (!qp->in_write)
		return GN_RESP_INVALID;
	if ((!last && p->paylen != qp->mtu) || p->paylen > qp->wr_left ||
	    (last && p->paylen != qp->wr_left))
		return GN_RESP_INVALID;
	if (op == OP_WRITE_LAST_IMM && !gnsim_rq_has_wqe(qp))
		return gnsim_resp_rnr(r, pt, qp, p);
	/* the MR may have been deregistered since the first packet */
	if (!gnsim_resp_rdma_check(r, qp, qp->wr_rkey, qp->wr_va, p->paylen,
				   GN_ROCE_MR_REMOTE_WRITE,
				   GN_ROCE_ACC_REMOTE_WRITE, &mr)) {
		qp->in_write = false;
		gnsim_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
		return GN_RESP_STOP;
	}
	if (p->paylen) {
		struct gnsim_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };

		gnsim_mr_io(mr, qp->wr_va, p->paylen, &io);
	}
	qp->wr_va += p->paylen;
	qp->wr_left -= p->paylen;
	if (last) {
		qp->in_write = false;
		qp->msn++;
		if (op_has_imm(op) && gnsim_resp_take_rwqe(r, qp))
			gnsim_resp_recv_done(r, qp, GN_ROCE_CQE_RECV_WRITE_IMM,
					     qp->wr_len, true, p->imm, p->se);
	}
	return GN_RESP_TAKEN;
}

/*
 * An RDMA READ request: one of the QP's responder resources, answered
 * in bursts by the work item (gnsim_rdp_reads_run()).  Advances the expected
 * PSN by the number of responses itself.
 */
static enum gnsim_resp_res gnsim_resp_read_req(struct gaudi_nic_roce *r,
					       struct gnsim_rport *pt,
					       struct gnsim_rqp *qp,
					       const struct gnsim_pkt *p)
{
	struct gnsim_rread *rd;
	struct gnsim_rmr *mr;

	if (qp->in_send || qp->in_write)
		return GN_RESP_INVALID;
	/*
	 * Responder resources: none (max_dest_rd_atomic 0), or all still
	 * to be answered, means the requester exceeds what it was given: an
	 * invalid request (rxe answers it the same way).  Replays of
	 * duplicates do not count (gnsim_resp_rd_room()).
	 */
	if (!gnsim_resp_rd_room(qp))
		return GN_RESP_INVALID;
	if (!gnsim_resp_rdma_check(r, qp, p->rkey, p->va, p->dmalen,
				   GN_ROCE_MR_REMOTE_READ, GN_ROCE_ACC_REMOTE_READ,
				   &mr)) {
		gnsim_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
		return GN_RESP_STOP;
	}
	qp->msn++;
	rd = &qp->reads[qp->rd_head % GN_ROCE_MAX_RD_ATOM];
	rd->psn = p->psn;
	rd->npkts = p->dmalen ? DIV_ROUND_UP_ULL((u64)p->dmalen, qp->mtu) : 1;
	rd->next = 0;
	rd->msn = qp->msn;
	rd->rkey = p->rkey;
	rd->len = p->dmalen;
	rd->va = p->va;
	rd->mr_acc = GN_ROCE_MR_REMOTE_READ;
	rd->qp_acc = GN_ROCE_ACC_REMOTE_READ;
	qp->rd_head++;
	qp->epsn = (qp->epsn + rd->npkts) & PSN_MASK;
	gnsim_resp_read_start(r, qp);
	return GN_RESP_STOP;
}

/*
 * An RDMA FLUSH: the placement type's access on the QP and MR, and the
 * range unless the whole MR is asked for.  Writes are placed in memory
 * when they arrive, so nothing is pending: the answer is a READ response
 * without data, ordered behind the READs held as one of them.
 */
static enum gnsim_resp_res gnsim_resp_flush(struct gaudi_nic_roce *r,
					    struct gnsim_rport *pt, struct gnsim_rqp *qp,
					    const struct gnsim_pkt *p)
{
	u32 type = p->feth & 0xf, level = (p->feth >> 4) & 0x3;
	u32 acc = type == GN_ROCE_FLUSH_GLOBAL ? GN_ROCE_MR_FLUSH_GLOBAL :
		  type == GN_ROCE_FLUSH_PERSISTENT ? GN_ROCE_MR_FLUSH_PERSIST : 0;
	struct gnsim_rread *rd;

	if (qp->in_send || qp->in_write || !acc ||
	    level > GN_ROCE_FLUSH_MR)
		return GN_RESP_INVALID;
	if (!gnsim_resp_rd_room(qp))
		return GN_RESP_INVALID;
	if (!gnsim_resp_check(r, qp, p->rkey, p->va,
			      level == GN_ROCE_FLUSH_MR ? 0 : p->dmalen, acc,
			      GN_ROCE_ACC_FLUSH)) {
		gnsim_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
		return GN_RESP_STOP;
	}
	qp->msn++;
	rd = &qp->reads[qp->rd_head % GN_ROCE_MAX_RD_ATOM];
	rd->psn = p->psn;
	rd->npkts = 1;
	rd->next = 0;
	rd->msn = qp->msn;
	rd->rkey = p->rkey;
	rd->len = 0;
	rd->va = p->va;
	rd->mr_acc = acc;
	rd->qp_acc = GN_ROCE_ACC_FLUSH;
	qp->rd_head++;
	qp->epsn = (qp->epsn + 1) & PSN_MASK;
	gnsim_resp_read_start(r, qp);
	return GN_RESP_STOP;
}

/*
 * Is @p the packet the responder expects?  Duplicates are re-acknowledged
 * (a duplicate READ replayed), a gap gets one sequence NAK.
 */
static bool gnsim_resp_psn_ok(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
			      struct gnsim_rqp *qp, const struct gnsim_pkt *p)
{
	s32 d = psn_diff(p->psn, qp->epsn);

	/*
	 * UC: packets were lost.  The message they belonged to is dropped
	 * (its receive WQE serves the next one) and the sequence goes on
	 * from this packet, which counts only if it starts a message.
	 */
	if (p->uc) {
		if (d) {
			pt->st.out_of_seq++;
			qp->in_send = false;
			qp->in_write = false;
			qp->epsn = p->psn;
		}
		return true;
	}
	if (d < 0) {				/* duplicate */
		pt->st.dup_reqs++;
		if (p->opcode == OP_READ_REQ || p->opcode == OP_FLUSH)
			gnsim_resp_read_dup(r, pt, qp, p);
		else
			gnsim_resp_ack_later(r, qp);
		return false;
	}
	if (d > 0) {				/* gap */
		pt->st.out_of_seq++;
		if (!qp->nak_sent && gnsim_resp_may_nak(pt, qp)) {
			qp->nak_sent = true;
			gnsim_send_ack(r, qp, AETH_NAK_SEQ, qp->epsn);
		}
		return false;
	}
	qp->nak_sent = false;
	return true;
}

/* A request packet for RC QP @qp: check its PSN, then take it. */
void gnsim_resp_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
		   struct gnsim_rqp *qp, const struct gnsim_pkt *p)
{
	enum gnsim_resp_res res;

	if (qp->state != GN_ROCE_QPS_RTR && qp->state != GN_ROCE_QPS_RTS)
		return;
	if (!gnsim_resp_psn_ok(r, pt, qp, p))
		return;
	switch (p->opcode) {
	case OP_SEND_FIRST ... OP_SEND_ONLY_IMM:
	case OP_SEND_LAST_INV:
	case OP_SEND_ONLY_INV:
		res = gnsim_resp_send(r, pt, qp, p);
		break;
	case OP_WRITE_FIRST ... OP_WRITE_ONLY_IMM:
		res = gnsim_resp_write(r, pt, qp, p);
		break;
	case OP_READ_REQ:
		res = gnsim_resp_read_req(r, pt, qp, p);
		break;
	case OP_FLUSH:
		res = gnsim_resp_flush(r, pt, qp, p);
		break;
	default:
		res = GN_RESP_INVALID;
		break;
	}
	if (p->uc) {
		/* taken or dropped, the sequence moves on; never an answer */
		qp->epsn = (qp->epsn + 1) & PSN_MASK;
		if (res == GN_RESP_INVALID) {
			qp->in_send = false;
			qp->in_write = false;
			pt->st.rx_drops++;
		}
	} else if (res == GN_RESP_TAKEN) {
		qp->epsn = (qp->epsn + 1) & PSN_MASK;
		if (p->ackreq)
			gnsim_resp_ack_later(r, qp);
	} else if (res == GN_RESP_INVALID) {
		qp->in_send = false;
		qp->in_write = false;
		gnsim_resp_fatal(r, pt, qp, AETH_NAK_INV, p->psn);
	}
}
