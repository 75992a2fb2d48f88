// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: the data path.  Its parts, split by role
 * as rdma_rxe splits its transport:
 *   roce_dp.c    memory (MRs, SGEs, DMA addresses), completions, QP state
 *                (flush, error, reset);
 *   roce_tx.c    frame building, ICRC, zero-copy trains, loopback, MAC;
 *   roce_req.c   the RC requester;
 *   roce_resp.c  the RC responder (READ responses included);
 *   roce_rx.c    frame parsing and dispatch, the receive pipeline, the
 *                work item and timers;
 *   roce_ud.c    UD and GSI (QP1) datagrams;
 * roce_dp.h holds what they share.
 *
 * Requester: reads WQEs from the SQ ring, segments messages into packets
 * of the path MTU, keeps up to GN_RR_WINDOW packets in flight (go-back-N),
 * completes WQEs on ACKs and READ responses, retransmits from the oldest
 * unacknowledged PSN on a sequence NAK or a timeout (retry_cnt), waits and
 * retries on an RNR NAK (rnr_retry, 7 = forever).
 * Responder: checks PSNs (duplicates are re-acknowledged, a gap gets one
 * sequence NAK), places SEND data into RQ WQEs (RNR NAK when the RQ is
 * empty), checks rkey, bounds and access of RDMA WRITE/READ (remote access
 * NAK, no memory touched), answers READs, acknowledges coalesced: one ACK
 * per batch of received frames, per QP, when the requester asked for it.
 *
 * Frames are Ethernet II / IPv4 or IPv6 / UDP 4791 / BTH
 * [RETH|AETH|DETH|ImmDt] / payload / pad / ICRC, the ICRC computed as IBTA annex 17 says (what
 * rdma_rxe and Wireshark expect).  Everything runs under dp_lock.
 *
 * ICRC insertion offload (roce_icrc_offload, default on): the engine asks
 * the MAC to insert the ICRC (GN_MAC_ROCE_ICRC_INSERT, port.h) instead of
 * computing it.  A frame that reaches another engine unaltered comes with
 * GN_MAC_ROCE_ICRC_OK and is not checked: on silicon both CRCs are free,
 * and here they would cost more than the copies.  Any frame whose bytes
 * are seen (the Linux stack, rdma_rxe, a capture, fault injection) gets
 * its ICRC written first, and any frame without GN_MAC_ROCE_ICRC_OK is
 * checked, so corruption is still caught.  With the parameter off, every
 * frame is computed and checked here.
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

/* ------------------------------------------------------------ memory */

struct gn_roce_ring_hdr *gnsim_rring_hdr(struct gnsim_rring *ring)
{
	return page_address(ring->mem.pages[0]);
}

void *gnsim_rring_entry(struct gnsim_rring *ring, u32 idx)
{
	size_t off = GN_ROCE_RING_HDR_SIZE +
		     (size_t)(idx & (ring->size - 1)) * ring->stride;

	return page_address(ring->mem.pages[off >> PAGE_SHIFT]) +
	       (off & ~PAGE_MASK);
}

/*
 * Copy entry @idx of @ring to @dst (ring->stride bytes).  An entry larger
 * than the ring header (a 256-byte UD WQE) may cross a page of the ring,
 * whose pages need not be contiguous.
 */
void gnsim_rring_read(struct gnsim_rring *ring, u32 idx, void *dst)
{
	size_t off = GN_ROCE_RING_HDR_SIZE +
		     (size_t)(idx & (ring->size - 1)) * ring->stride;
	size_t left = ring->stride, n;

	while (left) {
		n = min_t(size_t, left, PAGE_SIZE - (off & ~PAGE_MASK));
		memcpy(dst, page_address(ring->mem.pages[off >> PAGE_SHIFT]) +
		       (off & ~PAGE_MASK), n);
		dst += n;
		off += n;
		left -= n;
	}
}

struct gnsim_rmr *gnsim_mr_get(struct gaudi_nic_roce *r, u32 key, u32 pdn)
{
	struct gnsim_rmr *mr;

	if ((key >> 8) >= GN_ROCE_MAX_MR)
		return NULL;
	mr = r->mrs[key >> 8];
	if (!mr || mr->revoked || mr->key != key || mr->pdn != pdn)
		return NULL;
	return mr;
}

bool gnsim_mr_covers(struct gnsim_rmr *mr, u64 va, u64 len)
{
	return va >= mr->iova && len <= mr->length &&
	       va - mr->iova <= mr->length - len;
}

/* Copy @len bytes at offset @off of the payload of @p to @dst. */
static void gnsim_pay_read(const struct gnsim_pkt *p, u32 off, u8 *dst, u32 len)
{
	const struct gnsim_mac_roce_frag *fr = p->frags, *end = fr + p->nfrags;

	for (off += p->pay_off; len && fr < end; fr++) {
		u32 n;

		if (off >= fr->len) {
			off -= fr->len;
			continue;
		}
		n = min(len, fr->len - off);
		/* zero-copy: source and target may be one buffer */
		memmove(dst, fr->p + off, n);
		dst += n;
		len -= n;
		off = 0;
	}
}

/*
 * Transfer @n bytes at offset @in of page @pg (n <= PAGE_SIZE - in) to
 * or from @io.  Returns 0, or -E2BIG if GN_IO_FRAGS ran out of pieces (or
 * met a page without a permanent kernel mapping): the caller copies
 * instead.
 */
static int gnsim_page_io(struct page *pg, u32 in, u32 n, struct gnsim_io *io)
{
	struct gnsim_mac_roce_frag *fr;
	u8 *v;

	switch (io->kind) {
	case GN_IO_TO_BUF:
		memcpy_from_page(io->buf, pg, in, n);
		io->buf += n;
		break;
	case GN_IO_FROM_BUF:
		memcpy_to_page(pg, in, io->src, n);
		io->src += n;
		break;
	case GN_IO_FROM_PKT:
		v = kmap_local_page(pg);
		gnsim_pay_read(io->pkt, io->off, v + in, n);
		kunmap_local(v);
		io->off += n;
		break;
	case GN_IO_FRAGS:
		if (PageHighMem(pg))
			return -E2BIG;
		v = page_address(pg) + in;
		fr = io->nfrags ? &io->frags[io->nfrags - 1] : NULL;
		if (fr && fr->p + fr->len == v) {
			fr->len += n;	/* contiguous: one piece */
			break;
		}
		if (io->nfrags == io->max)
			return -E2BIG;
		io->frags[io->nfrags].p = v;
		io->frags[io->nfrags++].len = n;
		break;
	}
	return 0;
}

/*
 * Transfer @len bytes at @va of @mr (range already checked) to or from
 * @io.  @mr is NULL for zero bytes of an RDMA READ, which names no
 * memory (gnsim_resp_rdma_check()).  Returns 0 or -E2BIG (gnsim_page_io()).
 */
int gnsim_mr_io(struct gnsim_rmr *mr, u64 va, u32 len, struct gnsim_io *io)
{
	u64 off;
	int ret;

	if (!len)
		return 0;
	off = va - mr->iova + mr->offset;

	while (len) {
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		ret = gnsim_page_io(mr->mem.pages[off >> PAGE_SHIFT], in, n, io);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Transfer @len bytes at DMA address @addr (GN_ROCE_LOCAL_DMA_LKEY, only
 * for privileged QPs) to or from @io.  Returns 0, -E2BIG (gnsim_page_io())
 * or GN_ROCE_CQE_LOC_PROT_ERR if the address is not memory.
 */
static int gnsim_dma_io(struct gaudi_nic_roce *r, u64 addr, u32 len,
			struct gnsim_io *io)
{
	int ret;

	while (len) {
		phys_addr_t pa = dma_to_phys(r->dma_dev, addr);
		u32 in = offset_in_page(pa);
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		if (!pfn_valid(PHYS_PFN(pa)))
			return GN_ROCE_CQE_LOC_PROT_ERR;
		ret = gnsim_page_io(pfn_to_page(PHYS_PFN(pa)), in, n, io);
		if (ret)
			return ret;
		addr += n;
		len -= n;
	}
	return 0;
}

/*
 * Transfer @len bytes at message offset @off of the SGEs of @w to or from
 * @io (to the SGEs for GN_IO_FROM_PKT).  The SGEs' MRs must be in
 * protection domain @pdn: the QP's for its send WQEs, the one the receive
 * WQE was taken in for receives (qp->rwqe_pdn).  Returns 0, a CQE status,
 * or -E2BIG (gnsim_mr_io).
 */
int gnsim_sge_io(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u32 pdn,
		 const struct gn_roce_wqe *w, u32 off, u32 len, struct gnsim_io *io)
{
	bool to_mem = io->kind == GN_IO_FROM_PKT || io->kind == GN_IO_FROM_BUF;
	bool priv = qp->ctx.flags & GN_ROCE_QPF_PRIV;
	unsigned int i, nsge = min_t(u32, w->num_sge, GN_ROCE_MAX_SGE);
	int ret;

	for (i = 0; i < nsge && len; i++) {
		const struct gn_roce_sge *s = &w->sge[i];
		u32 slen = le32_to_cpu(s->length);
		u64 addr = le64_to_cpu(s->addr);
		struct gnsim_rmr *mr;
		u32 n;

		if (off >= slen) {
			off -= slen;
			continue;
		}
		n = min(len, slen - off);
		if (le32_to_cpu(s->lkey) == GN_ROCE_LOCAL_DMA_LKEY) {
			if (!priv)
				return GN_ROCE_CQE_LOC_PROT_ERR;
			ret = gnsim_dma_io(r, addr + off, n, io);
			if (ret)
				return ret;
			len -= n;
			off = 0;
			continue;
		}
		mr = gnsim_mr_get(r, le32_to_cpu(s->lkey), pdn);
		if (!mr || !gnsim_mr_covers(mr, addr + off, n) ||
		    (to_mem && !(mr->access & GN_ROCE_MR_LOCAL_WRITE)))
			return GN_ROCE_CQE_LOC_PROT_ERR;
		ret = gnsim_mr_io(mr, addr + off, n, io);
		if (ret)
			return ret;
		len -= n;
		off = 0;
	}
	return len ? GN_ROCE_CQE_LOC_LEN_ERR : 0;
}

u32 gnsim_wqe_len(const struct gn_roce_wqe *w)
{
	unsigned int i, nsge = min_t(u32, w->num_sge, GN_ROCE_MAX_SGE);
	u64 len = 0;

	if (w->flags & GN_ROCE_WQE_F_INLINE)
		return le32_to_cpu(w->inline_len);
	for (i = 0; i < nsge; i++)
		len += le32_to_cpu(w->sge[i].length);
	return min_t(u64, len, U32_MAX);
}

/* ---------------------------------------------------------- completion */

void gnsim_cq_push(struct gaudi_nic_roce *r, struct gnsim_rcq *cq,
		   const struct gn_roce_cqe *cqe, bool solicited)
{
	struct gn_roce_ring_hdr *hdr = gnsim_rring_hdr(&cq->ring);
	u32 cons = le32_to_cpu(READ_ONCE(hdr->cons));

	if (cq->prod - cons >= cq->ring.size) {
		if (!cq->overflow)
			gnsim_roce_event(r, GN_ROCE_EV_CQ_ERR, cq->cqn);
		cq->overflow = true;
		return;
	}
	memcpy(gnsim_rring_entry(&cq->ring, cq->prod), cqe, sizeof(*cqe));
	cq->prod++;
	/* the entry before the index */
	smp_wmb();
	WRITE_ONCE(hdr->prod, cpu_to_le32(cq->prod));
	if (cq->armed == GN_ROCE_DB_CQ_ARM ||
	    (cq->armed == GN_ROCE_DB_CQ_ARM_SOL && solicited)) {
		cq->armed = 0;
		gnsim_roce_event(r, GN_ROCE_EV_COMP, cq->cqn);
	}
}

void gnsim_cqe(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, struct gnsim_rcq *cq,
	       u64 wr_id, u8 opcode, u8 status, u32 len, bool has_imm,
	       __be32 imm, bool solicited)
{
	struct gn_roce_cqe c = {
		.wr_id = cpu_to_le64(wr_id),
		.byte_len = cpu_to_le32(len),
		.imm = imm,
		.qpn = cpu_to_le32(qp->qpn),
		.opcode = opcode,
		.status = status,
		.flags = has_imm ? GN_ROCE_CQE_F_IMM : 0,
	};

	gnsim_cq_push(r, cq, &c, solicited || status);
}

/* The receive completion of a SEND with invalidate: the key it unbound. */
void gnsim_cqe_inv(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u64 wr_id,
		   u32 len, u32 rkey, bool solicited)
{
	struct gn_roce_cqe c = {
		.wr_id = cpu_to_le64(wr_id),
		.byte_len = cpu_to_le32(len),
		.imm = cpu_to_be32(rkey),
		.qpn = cpu_to_le32(qp->qpn),
		.opcode = GN_ROCE_CQE_RECV,
		.flags = GN_ROCE_CQE_F_INV,
	};

	gnsim_cq_push(r, qp->rcq, &c, solicited);
}

u8 gnsim_sq_cqe_op(u8 wqe_op)
{
	switch (wqe_op) {
	case GN_ROCE_WQE_FLUSH:
		return GN_ROCE_CQE_FLUSH;
	case GN_ROCE_WQE_BIND_MW:
		return GN_ROCE_CQE_BIND_MW;
	case GN_ROCE_WQE_LOCAL_INV:
		return GN_ROCE_CQE_LOCAL_INV;
	case GN_ROCE_WQE_WRITE:
	case GN_ROCE_WQE_WRITE_IMM:
		return GN_ROCE_CQE_WRITE;
	case GN_ROCE_WQE_READ:
		return GN_ROCE_CQE_READ;
	default:
		return GN_ROCE_CQE_SEND;
	}
}

void gnsim_sq_set_cons(struct gnsim_rqp *qp)
{
	WRITE_ONCE(gnsim_rring_hdr(&qp->sq)->cons, cpu_to_le32(qp->sq_tail));
}

void gnsim_rq_set_cons(struct gnsim_rqp *qp)
{
	if (!qp->srq)
		WRITE_ONCE(gnsim_rring_hdr(&qp->rq)->cons,
			   cpu_to_le32(qp->rq_cons));
}

/*
 * The receive WQE taken by gnsim_resp_take_rwqe() is done with: its slot is
 * free (an SRQ's was freed when it was taken).
 */
void gnsim_rq_consume(struct gnsim_rqp *qp)
{
	if (qp->srq)
		return;
	qp->rq_cons++;
	gnsim_rq_set_cons(qp);
}

/*
 * Send WQEs posted on @qp's SQ and not completed, or -1 if the producer
 * index lies: more than the ring holds, or behind a WQE the engine has
 * already started (an honest producer only moves forward).  A lying
 * producer moves the QP to ERR.  Every loop over the SQ is bounded by
 * sq_tail + posted, so this is what keeps them within the ring.
 */
int gnsim_sq_posted(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	int posted = gnsim_wq_posted(&qp->sq, qp->sq_tail);

	if (posted >= 0 && (u32)posted < qp->sq_next - qp->sq_tail)
		posted = -1;
	if (posted < 0) {
		gnsim_rdp_to_error(r, qp);
		gnsim_roce_event(r, GN_ROCE_EV_QP_FATAL, qp->qpn);
	}
	return posted;
}

/* Is a receive WQE posted for @qp (on its RQ or SRQ)? */
bool gnsim_rq_has_wqe(struct gnsim_rqp *qp)
{
	if (qp->srq)
		return gnsim_wq_posted(&qp->srq->ring, qp->srq->cons) > 0;
	return gnsim_wq_posted(&qp->rq, qp->rq_cons) > 0;
}

/* Posted WQEs of a work queue: 0..size, or -1 if the producer lies. */
int gnsim_wq_posted(struct gnsim_rring *ring, u32 cons)
{
	u32 prod = le32_to_cpu(READ_ONCE(gnsim_rring_hdr(ring)->prod));
	u32 n = prod - cons;

	/* entries after the index */
	smp_rmb();
	return n > ring->size ? -1 : n;
}

void gnsim_qp_stop_timer(struct gnsim_rqp *qp)
{
	if (qp->timer_on)
		timer_delete(&qp->timer);
	qp->timer_on = false;
}

/*
 * Flush everything posted; the QP is in ERR.  What the engine started is
 * flushed even if the producer index has since moved back over it (or
 * lies otherwise): each started WQE completes, from the engine's copy.
 */
void gnsim_qp_flush(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	u32 mask = qp->sq.size - 1;
	int n;

	n = gnsim_wq_posted(&qp->sq, qp->sq_tail);
	n = max_t(int, n, qp->sq_next - qp->sq_tail);
	while (n-- > 0) {
		const struct gnsim_rswqe *sw = &qp->swqe[qp->sq_tail & mask];
		const struct gn_roce_wqe *w = gnsim_rring_entry(&qp->sq,
								qp->sq_tail);
		bool started = (s32)(qp->sq_next - qp->sq_tail) > 0;
		u64 wr_id;
		u8 op;

		/* a started WQE: the engine's copy; else the ring, once */
		if (started) {
			wr_id = sw->wr_id;
			op = gnsim_sq_cqe_op(sw->opcode);
		} else {
			wr_id = le64_to_cpu(READ_ONCE(w->wr_id));
			op = gnsim_sq_cqe_op(READ_ONCE(w->opcode));
		}
		qp->sq_tail++;
		gnsim_sq_set_cons(qp);
		gnsim_cqe(r, qp, qp->scq, wr_id, op, GN_ROCE_CQE_WR_FLUSH_ERR, 0,
			  false, 0, false);
	}
	qp->sq_head = qp->sq_tail;
	qp->sq_next = qp->sq_tail;
	qp->sq_pkt = 0;
	qp->reads_out = 0;

	if (qp->srq) {
		/* the SRQ's WQEs stay for its other QPs; only a held one */
		if (qp->in_send)
			gnsim_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id),
				  GN_ROCE_CQE_RECV, GN_ROCE_CQE_WR_FLUSH_ERR, 0,
				  false, 0, false);
		qp->in_send = false;
		return;
	}
	n = gnsim_wq_posted(&qp->rq, qp->rq_cons);
	while (n-- > 0) {
		const struct gn_roce_wqe *w = gnsim_rring_entry(&qp->rq,
								qp->rq_cons);
		u64 wr_id = le64_to_cpu(READ_ONCE(w->wr_id));

		qp->rq_cons++;
		gnsim_rq_set_cons(qp);
		gnsim_cqe(r, qp, qp->rcq, wr_id, GN_ROCE_CQE_RECV,
			  GN_ROCE_CQE_WR_FLUSH_ERR, 0, false, 0, false);
	}
	qp->in_send = false;
}

void gnsim_rdp_to_error(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	qp->state = GN_ROCE_QPS_ERR;
	gnsim_qp_stop_timer(qp);
	qp->rnr_wait = false;
	qp->in_write = false;
	list_del_init(&qp->ack_node);
	gnsim_rdp_detach(r, qp);
	gnsim_qp_flush(r, qp);
	/* IBTA: the QP takes nothing more from its SRQ */
	if (qp->srq)
		gnsim_roce_event(r, GN_ROCE_EV_QP_LAST_WQE, qp->qpn);
}

/* @qp owes no READ response any more (error, reset, destroy). */
void gnsim_rdp_detach(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	lockdep_assert_held(&r->dp_lock);
	list_del_init(&qp->read_node);
	qp->rd_send = qp->rd_head;
	qp->rd_first = qp->rd_head;
	qp->ack_after_read = false;
}

void gnsim_rdp_reset(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	gnsim_qp_stop_timer(qp);
	list_del_init(&qp->ack_node);
	gnsim_rdp_detach(r, qp);
	qp->rd_head = 0;
	qp->rd_send = 0;
	qp->rd_first = 0;
	qp->state = GN_ROCE_QPS_RESET;
	/* The rings are emptied: whatever was posted is dropped. */
	qp->sq_tail = le32_to_cpu(READ_ONCE(gnsim_rring_hdr(&qp->sq)->prod));
	qp->sq_head = qp->sq_tail;
	qp->sq_next = qp->sq_tail;
	qp->sq_pkt = 0;
	if (!qp->srq)
		qp->rq_cons = le32_to_cpu(READ_ONCE(gnsim_rring_hdr(&qp->rq)->prod));
	gnsim_sq_set_cons(qp);
	gnsim_rq_set_cons(qp);
	qp->npsn = 0;
	qp->una = 0;
	qp->acked = 0;
	qp->reads_out = 0;
	qp->epsn = 0;
	qp->msn = 0;
	qp->rnr_wait = false;
	qp->nak_sent = false;
	qp->in_send = false;
	qp->in_write = false;
	qp->retry_left = qp->ctx.retry_cnt;
	qp->rnr_left = qp->ctx.rnr_retry;
}

/* Complete the SQ WQE at sq_tail with an error; the QP goes to ERR. */
void gnsim_req_fail(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u8 status)
{
	struct gnsim_rswqe *sw = &qp->swqe[qp->sq_tail & (qp->sq.size - 1)];

	qp->sq_tail++;
	gnsim_sq_set_cons(qp);
	gnsim_cqe(r, qp, qp->scq, sw->wr_id, gnsim_sq_cqe_op(sw->opcode), status,
		  0, false, 0, false);
	gnsim_rdp_to_error(r, qp);
	gnsim_roce_event(r, GN_ROCE_EV_QP_FATAL, qp->qpn);
}
