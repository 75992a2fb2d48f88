// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: the RC requester.  Segmentation, the
 * go-back-N window, ACK/NAK and READ response handling, retries.
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

/* ---------------------------------------------------------- requester */

static unsigned long gnsim_usecs_to_jiffies_min(u64 us)
{
	unsigned long j = usecs_to_jiffies(min_t(u64, us, 60 * USEC_PER_SEC));

	/* TCG guests are slow: never time out faster than 10 ms. */
	return max(j, msecs_to_jiffies(10));
}

static void gnsim_req_arm_timer(struct gnsim_rqp *qp)
{
	if (!qp->ctx.timeout || qp->una == qp->npsn)
		return;
	/* 4.096 us << timeout */
	mod_timer(&qp->timer, jiffies +
		  gnsim_usecs_to_jiffies_min((4096ULL << qp->ctx.timeout) / 1000));
	qp->timer_on = true;
}

/*
 * Validate the WQE at sq_next, already copied to @sw->wqe (the only copy
 * the engine uses from now on), and record how it goes on the wire.
 */
static void gnsim_req_start(struct gnsim_rqp *qp, struct gnsim_rswqe *sw)
{
	const struct gn_roce_wqe *w = &sw->wqe;
	u32 len = gnsim_wqe_len(w);

	sw->wr_id = le64_to_cpu(w->wr_id);
	sw->opcode = w->opcode;
	sw->flags = w->flags;
	sw->len = len;
	sw->rcvd = 0;
	sw->bad = 0;
	sw->first_psn = qp->npsn;
	switch (w->opcode) {
	case GN_ROCE_WQE_SEND:
	case GN_ROCE_WQE_SEND_IMM:
	case GN_ROCE_WQE_WRITE:
	case GN_ROCE_WQE_WRITE_IMM:
		break;
	case GN_ROCE_WQE_SEND_INV:
		/* invalidation is for reliable connections */
		if (qp->ctx.type == GN_ROCE_QPT_UC)
			sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
		break;
	case GN_ROCE_WQE_BIND_MW:
	case GN_ROCE_WQE_LOCAL_INV:
		if (w->num_sge || (w->flags & GN_ROCE_WQE_F_INLINE))
			sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
		break;
	case GN_ROCE_WQE_READ:
		if ((w->flags & GN_ROCE_WQE_F_INLINE) ||
		    qp->ctx.type == GN_ROCE_QPT_UC)
			sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
		break;
	case GN_ROCE_WQE_FLUSH:
		/* nothing local: its data is the responder's */
		if (w->num_sge || (w->flags & GN_ROCE_WQE_F_INLINE) ||
		    qp->ctx.type == GN_ROCE_QPT_UC ||
		    (w->flush.type != GN_ROCE_FLUSH_GLOBAL &&
		     w->flush.type != GN_ROCE_FLUSH_PERSISTENT) ||
		    w->flush.level > GN_ROCE_FLUSH_MR ||
		    memchr_inv(w->flush.rsvd, 0, sizeof(w->flush.rsvd)))
			sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
		break;
	default:
		sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
	}
	if (w->num_sge > GN_ROCE_MAX_SGE ||
	    ((w->flags & GN_ROCE_WQE_F_INLINE) && len > GN_ROCE_MAX_INLINE))
		sw->bad = GN_ROCE_CQE_LOC_QP_OP_ERR;
	if (len > GN_ROCE_MAX_MSG)
		sw->bad = GN_ROCE_CQE_LOC_LEN_ERR;
	sw->npkts = len ? DIV_ROUND_UP(len, qp->mtu) : 1;
	/* local operations take no PSN (gnsim_req_send() runs them) */
	if (gnsim_wqe_is_local(w->opcode))
		sw->npkts = 0;
	qp->sq_next++;
}

/* Send packet @i of the WQE at sq_head. Returns 0 or a CQE status. */
static int gnsim_req_packet(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			    struct gnsim_rswqe *sw, u32 i)
{
	const struct gn_roce_wqe *w = &sw->wqe;
	bool first = i == 0, last = i == sw->npkts - 1;
	u32 off = i * qp->mtu;
	struct gnsim_pkt p = {
		.psn = sw->first_psn + i,
		.dqpn = le32_to_cpu(qp->ctx.dest_qpn),
		.imm = w->imm,
		.rkey = le32_to_cpu(w->rkey),
		.va = le64_to_cpu(w->remote_addr),
		.dmalen = sw->len,
	};
	int hl;

	switch (sw->opcode) {
	case GN_ROCE_WQE_READ:
		p.opcode = OP_READ_REQ;
		p.va += off;
		p.dmalen = sw->len - min(sw->len, off);
		p.ackreq = true;
		gnsim_tx_hdr_only(r, qp, &p);
		return 0;
	case GN_ROCE_WQE_FLUSH:
		p.opcode = OP_FLUSH;
		p.dmalen = min_t(u64, le64_to_cpu(w->flush.length), U32_MAX);
		p.feth = (u32)w->flush.level << 4 | w->flush.type;
		p.ackreq = true;
		gnsim_tx_hdr_only(r, qp, &p);
		return 0;
	case GN_ROCE_WQE_SEND:
	case GN_ROCE_WQE_SEND_IMM:
	case GN_ROCE_WQE_SEND_INV:
		if (first && last)
			p.opcode = OP_SEND_ONLY;
		else
			p.opcode = first ? OP_SEND_FIRST :
				   last ? OP_SEND_LAST : OP_SEND_MIDDLE;
		if (last && sw->opcode == GN_ROCE_WQE_SEND_IMM)
			p.opcode++;	/* _LAST_IMM / _ONLY_IMM */
		if (last && sw->opcode == GN_ROCE_WQE_SEND_INV)
			p.opcode = first ? OP_SEND_ONLY_INV : OP_SEND_LAST_INV;
		if (last && (sw->flags & GN_ROCE_WQE_F_SOLICITED))
			p.se = BTH_SE;
		break;
	default:
		if (first && last)
			p.opcode = OP_WRITE_ONLY;
		else
			p.opcode = first ? OP_WRITE_FIRST :
				   last ? OP_WRITE_LAST : OP_WRITE_MIDDLE;
		if (last && sw->opcode == GN_ROCE_WQE_WRITE_IMM)
			p.opcode++;
		break;
	}
	p.ackreq = last || !((i + 1) % GN_RR_ACK_EVERY) ||
		   psn_diff(p.psn + 1, qp->una) >= GN_RR_WINDOW;
	/* UC: nothing is acknowledged */
	if (qp->ctx.type == GN_ROCE_QPT_UC) {
		p.uc = true;
		p.ackreq = false;
	}
	hl = gnsim_tx_hdr_len(r, qp, &qp->path, p.opcode);
	if (hl < 0)
		return 0;	/* no path: the timeout will tell */
	p.paylen = last ? sw->len - off : qp->mtu;
	if (!(sw->flags & GN_ROCE_WQE_F_INLINE))
		return gnsim_tx_mem(r, qp, &p, hl, w, off, NULL, 0);
	/* sw->len <= GN_ROCE_MAX_INLINE (gnsim_req_start()) */
	memcpy(r->frame + hl, w->inline_data + off, p.paylen);
	gnsim_tx(r, qp, &p);
	return 0;
}

static bool gnsim_req_sq_has_read(struct gnsim_rqp *qp)
{
	return qp->reads_out > 0;
}

static void gnsim_req_progress(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			       bool kick);

/* Put new (or rewound) packets on the wire, within the window. */
void gnsim_req_send(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	u32 mask = qp->sq.size - 1;
	unsigned int budget = GN_RR_SQ_BUDGET;
	bool local = false, uc;
	int posted;

	if (qp->ctx.type == GN_ROCE_QPT_UD || qp->ctx.type == GN_ROCE_QPT_GSI) {
		gnsim_ud_send(r, qp);
		return;
	}
	uc = qp->ctx.type == GN_ROCE_QPT_UC;
	if (qp->state != GN_ROCE_QPS_RTS || qp->rnr_wait)
		return;
	posted = gnsim_sq_posted(r, qp);
	if (posted < 0)
		return;
	if (r->rx_inline && qp->sq_head != qp->sq_tail + posted) {
		/* in a MAC's call chain: the work item sends */
		set_bit(qp->qpn, r->resend);
		return;
	}
	while (qp->sq_head != qp->sq_tail + posted) {
		struct gnsim_rswqe *sw = &qp->swqe[qp->sq_head & mask];
		u32 max_rd = max_t(u32, qp->ctx.max_rd_atomic, 1);
		int ret;

		if (psn_diff(qp->npsn, qp->una) >= GN_RR_WINDOW)
			break;
		if (qp->sq_head == qp->sq_next) {
			if (!budget--) {
				gnsim_rdp_sq_defer(r, qp);
				break;
			}
			/*
			 * The one read of this WQE from the ring: the slot of
			 * @sw is free (sq_next - sq_tail < size).
			 */
			memcpy(&sw->wqe, gnsim_rring_entry(&qp->sq, qp->sq_head),
			       sizeof(sw->wqe));
			if ((sw->wqe.flags & GN_ROCE_WQE_F_FENCE) &&
			    gnsim_req_sq_has_read(qp))
				break;
			if (gnsim_wqe_is_read(sw->wqe.opcode) &&
			    qp->reads_out >= max_rd)
				break;
			gnsim_req_start(qp, sw);
			if (gnsim_wqe_is_read(sw->opcode) && !sw->bad)
				qp->reads_out++;
			/* BIND_MW, LOCAL_INV: done now, completed in order */
			if (gnsim_wqe_is_local(sw->opcode) && !sw->bad) {
				sw->bad = gnsim_mw_local_op(r, qp, &sw->wqe);
				local = true;
			}
		}
		if (sw->bad) {
			/* Completes in order, once everything before it did. */
			if (qp->sq_tail == qp->sq_head)
				gnsim_req_fail(r, qp, sw->bad);
			break;
		}
		if (gnsim_wqe_is_read(sw->opcode)) {
			if (qp->sq_pkt < sw->npkts)
				gnsim_req_packet(r, qp, sw, qp->sq_pkt);
			qp->sq_pkt = sw->npkts;
		} else {
			while (qp->sq_pkt < sw->npkts &&
			       psn_diff(qp->npsn, qp->una) < GN_RR_WINDOW) {
				ret = gnsim_req_packet(r, qp, sw, qp->sq_pkt);
				if (ret) {
					/* a local error: report it in order */
					sw->bad = ret;
					if (qp->sq_tail == qp->sq_head)
						gnsim_req_fail(r, qp, ret);
					goto out;
				}
				qp->sq_pkt++;
				qp->npsn = (sw->first_psn + qp->sq_pkt) &
					   PSN_MASK;
				/* UC: a packet sent is a packet done */
				if (uc) {
					qp->acked = qp->npsn;
					qp->una = qp->npsn;
				}
			}
			if (qp->sq_pkt < sw->npkts)
				break;
		}
		qp->npsn = (sw->first_psn + sw->npkts) & PSN_MASK;
		qp->sq_head++;
		qp->sq_pkt = 0;
	}
out:
	gnsim_tx_train_flush(r);
	if (qp->state == GN_ROCE_QPS_RTS && !qp->timer_on)
		gnsim_req_arm_timer(qp);
	/* no ACK may come for a local operation with nothing before it */
	if ((local || uc) && qp->state == GN_ROCE_QPS_RTS)
		gnsim_req_progress(r, qp, false);
}

/* Go back to the oldest unacknowledged PSN. */
void gnsim_req_rewind(struct gnsim_rqp *qp)
{
	u32 idx, mask = qp->sq.size - 1;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gnsim_rswqe *sw = &qp->swqe[idx & mask];
		s32 d = psn_diff(qp->una, sw->first_psn);

		if (d >= 0 && d < sw->npkts) {
			qp->sq_head = idx;
			qp->sq_pkt = d;
			qp->npsn = qp->una;
			return;
		}
	}
	qp->sq_head = qp->sq_next;
	qp->sq_pkt = 0;
}

/*
 * Move una up to what was acknowledged, never past a READ whose
 * responses have not all arrived, complete the finished WQEs in order,
 * and (if @kick) send what the window now allows.
 */
static void gnsim_req_progress(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			       bool kick)
{
	u32 idx, mask = qp->sq.size - 1;
	u32 una = qp->acked;
	bool moved = false;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gnsim_rswqe *sw = &qp->swqe[idx & mask];

		if (gnsim_wqe_is_read(sw->opcode) && !sw->bad &&
		    sw->rcvd < sw->npkts) {
			u32 pos = (sw->first_psn + sw->rcvd) & PSN_MASK;

			if (psn_diff(una, pos) > 0)
				una = pos;
			break;
		}
	}
	if (psn_diff(una, qp->una) > 0) {
		qp->una = una;
		moved = true;
	}
	while (qp->sq_tail != qp->sq_next) {
		struct gnsim_rswqe *sw = &qp->swqe[qp->sq_tail & mask];
		u32 end = (sw->first_psn + sw->npkts) & PSN_MASK;

		if (sw->bad) {
			gnsim_req_fail(r, qp, sw->bad);
			return;
		}
		if (qp->sq_tail == qp->sq_head || psn_diff(qp->una, end) < 0)
			break;
		if (gnsim_wqe_is_read(sw->opcode))
			qp->reads_out--;
		/* the slot is free before the consumer sees the CQE */
		qp->sq_tail++;
		gnsim_sq_set_cons(qp);
		if ((sw->flags & GN_ROCE_WQE_F_SIGNALED) || qp->ctx.sq_sig_all)
			gnsim_cqe(r, qp, qp->scq, sw->wr_id,
				  gnsim_sq_cqe_op(sw->opcode), GN_ROCE_CQE_OK,
				  sw->len, false, 0, false);
	}
	if (moved) {
		qp->retry_left = qp->ctx.retry_cnt;
		if (!qp->rnr_wait)
			gnsim_qp_stop_timer(qp);
	}
	if (kick)
		gnsim_req_send(r, qp);
}

/* The requester's WQE that PSN @psn belongs to, or NULL. */
static struct gnsim_rswqe *gnsim_req_find(struct gnsim_rqp *qp, u32 psn)
{
	u32 idx, mask = qp->sq.size - 1;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gnsim_rswqe *sw = &qp->swqe[idx & mask];
		s32 d = psn_diff(psn, sw->first_psn);

		if (d >= 0 && d < sw->npkts)
			return sw;
	}
	return NULL;
}

static const u32 gnsim_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* ACK: everything before @psn + 1 arrived. */
static void gnsim_req_acked(struct gnsim_rqp *qp, u32 psn)
{
	u32 next = (psn + 1) & PSN_MASK;

	/* beyond npsn (late, after a rewind): the retransmission re-ACKs */
	if (psn_diff(next, qp->acked) > 0 && psn_diff(next, qp->npsn) <= 0)
		qp->acked = next;
}

void gnsim_req_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
		  struct gnsim_rqp *qp, const struct gnsim_pkt *p)
{
	u8 syn = p->aeth >> 24;
	struct gnsim_rswqe *sw;
	int ret;

	if (qp->state != GN_ROCE_QPS_RTS)
		return;
	if (p->opcode == OP_ACK) {
		if ((syn & 0x60) == 0x00) {		/* ACK */
			gnsim_req_acked(qp, p->psn);
			gnsim_req_progress(r, qp, true);
			return;
		}
		/* NAKs name the PSN that was not accepted */
		gnsim_req_acked(qp, (p->psn - 1) & PSN_MASK);
		if ((syn & 0x60) == 0x20) {		/* RNR NAK */
			pt->st.rnr_naks_rx++;
			qp->rnr_wait = true;
			gnsim_req_progress(r, qp, false);
			if (qp->state != GN_ROCE_QPS_RTS)
				return;
			if (!qp->rnr_left) {
				gnsim_req_fail(r, qp,
					       GN_ROCE_CQE_RNR_RETRY_EXC_ERR);
				return;
			}
			if (qp->ctx.rnr_retry != 7)
				qp->rnr_left--;
			mod_timer(&qp->timer, jiffies +
				  gnsim_usecs_to_jiffies_min(gnsim_rnr_us[syn & 31]));
			qp->timer_on = true;
			return;
		}
		gnsim_req_progress(r, qp, false);
		if (qp->state != GN_ROCE_QPS_RTS)
			return;
		if (syn == AETH_NAK_SEQ) {
			pt->st.seq_naks_rx++;
			pt->st.retransmits++;
			gnsim_req_rewind(qp);
			gnsim_req_send(r, qp);
			return;
		}
		/* fatal NAKs: the WQE at the NAKed PSN fails */
		gnsim_req_fail(r, qp, syn == AETH_NAK_ACC ?
			       GN_ROCE_CQE_REM_ACCESS_ERR :
			       syn == AETH_NAK_INV ? GN_ROCE_CQE_REM_INV_REQ_ERR :
			       GN_ROCE_CQE_REM_OP_ERR);
		return;
	}

	/* READ responses, accepted in order only */
	sw = gnsim_req_find(qp, p->psn);
	if (!sw || !gnsim_wqe_is_read(sw->opcode) ||
	    psn_diff(p->psn, (sw->first_psn + sw->rcvd) & PSN_MASK)) {
		pt->st.out_of_seq++;
		return;
	}
	{
		u32 off = sw->rcvd * qp->mtu;
		u32 want = min(qp->mtu, sw->len - min(sw->len, off));
		struct gnsim_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };

		if (p->paylen != want) {
			pt->st.rx_drops++;
			return;
		}
		/* the SGEs as validated when the READ started */
		ret = gnsim_sge_io(r, qp, le32_to_cpu(qp->ctx.pdn), &sw->wqe, off,
				   p->paylen, &io);
		if (ret) {
			sw->bad = ret;
			gnsim_req_progress(r, qp, false);
			return;
		}
		sw->rcvd++;
		if (psn_diff((p->psn + 1) & PSN_MASK, qp->acked) > 0)
			qp->acked = (p->psn + 1) & PSN_MASK;
		gnsim_req_progress(r, qp, true);
	}
}
