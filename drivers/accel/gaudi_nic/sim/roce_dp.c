// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: RC data path.
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
 * Frames are Ethernet II / IPv4 or IPv6 / UDP 4791 / BTH [RETH|AETH|ImmDt]
 * / payload / pad / ICRC, the ICRC computed as IBTA annex 17 says (what
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
#include <linux/gaudi_nic/port.h>

#include "mac.h"
#include "roce_dp.h"

static bool gn_icrc_offload = true;
module_param_named(roce_icrc_offload, gn_icrc_offload, bool, 0644);
MODULE_PARM_DESC(roce_icrc_offload,
		 "RoCE engines leave the ICRC of their frames to the MAC, which computes it only where the bytes are seen (default: on; off: every ICRC computed and checked)");

static bool gn_tx_zerocopy = true;
module_param_named(roce_tx_zerocopy, gn_tx_zerocopy, bool, 0644);
MODULE_PARM_DESC(roce_tx_zerocopy,
		 "RoCE engines hand the MAC their payload where it lies in the memory regions instead of copying it into the frame (default: on; needs roce_icrc_offload)");

static unsigned int gn_tx_train = GN_RR_TRAIN_MAX;
module_param_named(roce_tx_train, gn_tx_train, uint, 0644);
MODULE_PARM_DESC(roce_tx_train,
		 "Frames a RoCE engine sends zero-copy go to the MAC in trains of up to this many (1 to 16, default 16; 1: one by one), which a receiving engine takes in one piece");

static unsigned int gn_rx_queue_max = 16384;
module_param_named(roce_rx_queue_max, gn_rx_queue_max, uint, 0644);
MODULE_PARM_DESC(roce_rx_queue_max,
		 "A RoCE engine's receive queue holds at most this many buffers (default 16384; a train of frames takes one); what does not fit is dropped and counted in rx_dropped, and the sender recovers");

static bool gn_rx_pipeline = true;
module_param_named(roce_rx_pipeline, gn_rx_pipeline, bool, 0644);
MODULE_PARM_DESC(roce_rx_pipeline,
		 "A RoCE engine queues large frames sent zero-copy for its own thread, by reference to the sender's memory, so that sender and receiver run on two CPUs (default: on; off: received in the sender's context when idle)");

/*
 * The TX skb an engine is handing to the cable on this CPU (gn_tx_end),
 * which the receiving engine's hook takes instead of copying the frame.
 */
static DEFINE_PER_CPU(struct sk_buff *, gn_rdp_handoff);
/* Smaller frames (ACKs, READ requests) are cheaper to copy. */
#define GN_RR_HANDOFF_MIN	512
/*
 * Frames the receive pipeline queues by reference: smaller ones (an 8 B
 * ping-pong) are faster processed at once than handed to another CPU.
 */
#define GN_RR_PIPELINE_MIN	1024
/*
 * A frame in a reference skb (gn_rdp_rx_ref_skb()): this record, then its
 * headers (@hlen bytes, padded to 8), in the head; its @npieces payload
 * pieces are the next page fragments.
 */
struct gn_rr_rec {
	u16 hlen;
	u16 npieces;
	u32 flen;
};

#define GN_RR_REC_SIZE(hlen)	(sizeof(struct gn_rr_rec) + ALIGN(hlen, 8))
#define GN_RR_REF_HEAD		(GN_RR_TRAIN_MAX * GN_RR_REC_SIZE(GN_RR_HDR_MAX))

/* ------------------------------------------------------------ memory */

struct gn_roce_ring_hdr *gn_rring_hdr(struct gn_rring *ring)
{
	return page_address(ring->mem.pages[0]);
}

void *gn_rring_entry(struct gn_rring *ring, u32 idx)
{
	size_t off = GN_ROCE_RING_HDR_SIZE +
		     (size_t)(idx & (ring->size - 1)) * ring->stride;

	return page_address(ring->mem.pages[off >> PAGE_SHIFT]) +
	       (off & ~PAGE_MASK);
}

static struct gn_rmr *gn_mr_get(struct gaudi_nic_roce *r, u32 key, u32 pdn)
{
	struct gn_rmr *mr;

	if ((key >> 8) >= GN_ROCE_MAX_MR)
		return NULL;
	mr = r->mrs[key >> 8];
	if (!mr || mr->key != key || mr->pdn != pdn)
		return NULL;
	return mr;
}

static bool gn_mr_covers(struct gn_rmr *mr, u64 va, u64 len)
{
	return va >= mr->iova && len <= mr->length &&
	       va - mr->iova <= mr->length - len;
}

/* Copy @len bytes at offset @off of the payload of @p to @dst. */
static void gn_pay_read(const struct gn_pkt *p, u32 off, u8 *dst, u32 len)
{
	const struct gn_mac_roce_frag *fr = p->frags, *end = fr + p->nfrags;

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
static int gn_page_io(struct page *pg, u32 in, u32 n, struct gn_io *io)
{
	struct gn_mac_roce_frag *fr;
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
		gn_pay_read(io->pkt, io->off, v + in, n);
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
 * @io.  Returns 0 or -E2BIG (gn_page_io()).
 */
static int gn_mr_io(struct gn_rmr *mr, u64 va, u32 len, struct gn_io *io)
{
	u64 off = va - mr->iova + mr->offset;
	int ret;

	while (len) {
		u32 in = off & ~PAGE_MASK;
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		ret = gn_page_io(mr->mem.pages[off >> PAGE_SHIFT], in, n, io);
		if (ret)
			return ret;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Transfer @len bytes at DMA address @addr (GN_ROCE_LOCAL_DMA_LKEY, only
 * for privileged QPs) to or from @io.  Returns 0, -E2BIG (gn_page_io())
 * or GN_ROCE_CQE_LOC_PROT_ERR if the address is not memory.
 */
static int gn_dma_io(struct gaudi_nic_roce *r, u64 addr, u32 len,
		     struct gn_io *io)
{
	int ret;

	while (len) {
		phys_addr_t pa = dma_to_phys(r->dma_dev, addr);
		u32 in = offset_in_page(pa);
		u32 n = min_t(u32, len, PAGE_SIZE - in);

		if (!pfn_valid(PHYS_PFN(pa)))
			return GN_ROCE_CQE_LOC_PROT_ERR;
		ret = gn_page_io(pfn_to_page(PHYS_PFN(pa)), in, n, io);
		if (ret)
			return ret;
		addr += n;
		len -= n;
	}
	return 0;
}

/*
 * Transfer @len bytes at message offset @off of the SGEs of @w to or from
 * @io (to the SGEs for GN_IO_FROM_PKT).  Returns 0, a CQE status, or
 * -E2BIG (gn_mr_io).
 */
int gn_sge_io(struct gaudi_nic_roce *r, struct gn_rqp *qp,
	      const struct gn_roce_wqe *w, u32 off, u32 len, struct gn_io *io)
{
	bool to_mem = io->kind == GN_IO_FROM_PKT || io->kind == GN_IO_FROM_BUF;
	bool priv = qp->ctx.flags & GN_ROCE_QPF_PRIV;
	u32 pdn = le32_to_cpu(qp->ctx.pdn);
	unsigned int i, nsge = min_t(u32, w->num_sge, GN_ROCE_MAX_SGE);
	int ret;

	for (i = 0; i < nsge && len; i++) {
		const struct gn_roce_sge *s = &w->sge[i];
		u32 slen = le32_to_cpu(s->length);
		u64 addr = le64_to_cpu(s->addr);
		struct gn_rmr *mr;
		u32 n;

		if (off >= slen) {
			off -= slen;
			continue;
		}
		n = min(len, slen - off);
		if (le32_to_cpu(s->lkey) == GN_ROCE_LOCAL_DMA_LKEY) {
			if (!priv)
				return GN_ROCE_CQE_LOC_PROT_ERR;
			ret = gn_dma_io(r, addr + off, n, io);
			if (ret)
				return ret;
			len -= n;
			off = 0;
			continue;
		}
		mr = gn_mr_get(r, le32_to_cpu(s->lkey), pdn);
		if (!mr || !gn_mr_covers(mr, addr + off, n) ||
		    (to_mem && !(mr->access & GN_ROCE_MR_LOCAL_WRITE)))
			return GN_ROCE_CQE_LOC_PROT_ERR;
		ret = gn_mr_io(mr, addr + off, n, io);
		if (ret)
			return ret;
		len -= n;
		off = 0;
	}
	return len ? GN_ROCE_CQE_LOC_LEN_ERR : 0;
}

static u32 gn_wqe_len(const struct gn_roce_wqe *w)
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

void gn_cq_push(struct gaudi_nic_roce *r, struct gn_rcq *cq,
		const struct gn_roce_cqe *cqe, bool solicited)
{
	struct gn_roce_ring_hdr *hdr = gn_rring_hdr(&cq->ring);
	u32 cons = le32_to_cpu(READ_ONCE(hdr->cons));

	if (cq->prod - cons >= cq->ring.size) {
		if (!cq->overflow)
			gn_roce_event(r, GN_ROCE_EV_CQ_ERR, cq->cqn);
		cq->overflow = true;
		return;
	}
	memcpy(gn_rring_entry(&cq->ring, cq->prod), cqe, sizeof(*cqe));
	cq->prod++;
	/* the entry before the index */
	smp_wmb();
	WRITE_ONCE(hdr->prod, cpu_to_le32(cq->prod));
	if (cq->armed == GN_ROCE_DB_CQ_ARM ||
	    (cq->armed == GN_ROCE_DB_CQ_ARM_SOL && solicited)) {
		cq->armed = 0;
		gn_roce_event(r, GN_ROCE_EV_COMP, cq->cqn);
	}
}

void gn_cqe(struct gaudi_nic_roce *r, struct gn_rqp *qp, struct gn_rcq *cq,
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

	gn_cq_push(r, cq, &c, solicited || status);
}

static u8 gn_sq_cqe_op(u8 wqe_op)
{
	switch (wqe_op) {
	case GN_ROCE_WQE_WRITE:
	case GN_ROCE_WQE_WRITE_IMM:
		return GN_ROCE_CQE_WRITE;
	case GN_ROCE_WQE_READ:
		return GN_ROCE_CQE_READ;
	default:
		return GN_ROCE_CQE_SEND;
	}
}

void gn_sq_set_cons(struct gn_rqp *qp)
{
	WRITE_ONCE(gn_rring_hdr(&qp->sq)->cons, cpu_to_le32(qp->sq_tail));
}

void gn_rq_set_cons(struct gn_rqp *qp)
{
	WRITE_ONCE(gn_rring_hdr(&qp->rq)->cons, cpu_to_le32(qp->rq_cons));
}

/* Posted WQEs of a work queue: 0..size, or -1 if the producer lies. */
int gn_wq_posted(struct gn_rring *ring, u32 cons)
{
	u32 prod = le32_to_cpu(READ_ONCE(gn_rring_hdr(ring)->prod));
	u32 n = prod - cons;

	/* entries after the index */
	smp_rmb();
	return n > ring->size ? -1 : n;
}

static void gn_qp_stop_timer(struct gn_rqp *qp)
{
	if (qp->timer_on)
		timer_delete(&qp->timer);
	qp->timer_on = false;
}

/* Flush everything posted; the QP is in ERR. */
static void gn_qp_flush(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	u32 mask = qp->sq.size - 1;
	int n;

	n = gn_wq_posted(&qp->sq, qp->sq_tail);
	while (n-- > 0) {
		const struct gn_rswqe *sw = &qp->swqe[qp->sq_tail & mask];
		const struct gn_roce_wqe *w = gn_rring_entry(&qp->sq,
							     qp->sq_tail);
		bool started = (s32)(qp->sq_next - qp->sq_tail) > 0;
		u64 wr_id;
		u8 op;

		/* a started WQE: the engine's copy; else the ring, once */
		if (started) {
			wr_id = sw->wr_id;
			op = gn_sq_cqe_op(sw->opcode);
		} else {
			wr_id = le64_to_cpu(READ_ONCE(w->wr_id));
			op = gn_sq_cqe_op(READ_ONCE(w->opcode));
		}
		qp->sq_tail++;
		gn_sq_set_cons(qp);
		gn_cqe(r, qp, qp->scq, wr_id, op, GN_ROCE_CQE_WR_FLUSH_ERR, 0,
		       false, 0, false);
	}
	qp->sq_head = qp->sq_tail;
	qp->sq_next = qp->sq_tail;
	qp->sq_pkt = 0;
	qp->reads_out = 0;

	n = gn_wq_posted(&qp->rq, qp->rq_cons);
	while (n-- > 0) {
		const struct gn_roce_wqe *w = gn_rring_entry(&qp->rq,
							     qp->rq_cons);
		u64 wr_id = le64_to_cpu(READ_ONCE(w->wr_id));

		qp->rq_cons++;
		gn_rq_set_cons(qp);
		gn_cqe(r, qp, qp->rcq, wr_id, GN_ROCE_CQE_RECV,
		       GN_ROCE_CQE_WR_FLUSH_ERR, 0, false, 0, false);
	}
	qp->in_send = false;
}

void gn_rdp_to_error(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	qp->state = GN_ROCE_QPS_ERR;
	gn_qp_stop_timer(qp);
	qp->rnr_wait = false;
	qp->in_write = false;
	list_del_init(&qp->ack_node);
	gn_rdp_detach(r, qp);
	gn_qp_flush(r, qp);
}

/* @qp owes no READ response any more (error, reset, destroy). */
void gn_rdp_detach(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	lockdep_assert_held(&r->dp_lock);
	list_del_init(&qp->read_node);
	qp->rd_send = qp->rd_head;
	qp->ack_after_read = false;
}

void gn_rdp_reset(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	gn_qp_stop_timer(qp);
	list_del_init(&qp->ack_node);
	gn_rdp_detach(r, qp);
	qp->rd_head = 0;
	qp->rd_send = 0;
	qp->state = GN_ROCE_QPS_RESET;
	/* The rings are emptied: whatever was posted is dropped. */
	qp->sq_tail = le32_to_cpu(READ_ONCE(gn_rring_hdr(&qp->sq)->prod));
	qp->sq_head = qp->sq_tail;
	qp->sq_next = qp->sq_tail;
	qp->sq_pkt = 0;
	qp->rq_cons = le32_to_cpu(READ_ONCE(gn_rring_hdr(&qp->rq)->prod));
	gn_sq_set_cons(qp);
	gn_rq_set_cons(qp);
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
void gn_req_fail(struct gaudi_nic_roce *r, struct gn_rqp *qp, u8 status)
{
	struct gn_rswqe *sw = &qp->swqe[qp->sq_tail & (qp->sq.size - 1)];

	qp->sq_tail++;
	gn_sq_set_cons(qp);
	gn_cqe(r, qp, qp->scq, sw->wr_id, gn_sq_cqe_op(sw->opcode), status,
	       0, false, 0, false);
	gn_rdp_to_error(r, qp);
	gn_roce_event(r, GN_ROCE_EV_QP_FATAL, qp->qpn);
}

/* ----------------------------------------------------------- transmit */

/*
 * Offset of the transport payload in the TX frame for @qp's path, or a
 * negative value if the path cannot be used (no source GID).
 */
int gn_tx_hdr_len(struct gaudi_nic_roce *r, struct gn_rqp *qp, u8 op)
{
	const struct gn_roce_gid_ctx *g =
		&r->ports[qp->ctx.port].gids[qp->ctx.sgid_index];
	int l3;

	if (g->type == GN_ROCE_GID_V2_IPV4)
		l3 = sizeof(struct iphdr);
	else if (g->type == GN_ROCE_GID_V2_IPV6)
		l3 = sizeof(struct ipv6hdr);
	else
		return -1;
	return ETH_HLEN + l3 + sizeof(struct udphdr) + BTH_LEN +
	       op_ext_len(op);
}

/*
 * CRC-32 (IEEE, reflected, no inversion) for the ICRC: the engine's cost
 * per byte.  In the TCG guest of the tests the CPU has no PCLMULQDQ, so
 * the crypto API offers only crc32-generic (the library's slice-by-8).
 * Slice-by-16 over 16 KiB of tables, two 64-bit loads per 16 bytes, was
 * measured there at about 950 MB/s against 800 for the library (memcpy:
 * about 7 GB/s).  Larger tables (16-bit indices, 1 MiB) were ten times
 * slower (host cache misses), and computing the CRC while copying was
 * slower than copying, then computing.  An accelerated crypto driver
 * (crc32-pclmul on real CPUs) is used instead when there is one.  Both are
 * shared by all engines (set up for the first, freed after the last).
 */
#define GN_CRC_POLY	0xedb88320

static DEFINE_MUTEX(gn_crc_mutex);
static unsigned int gn_crc_users;	/* engines, under gn_crc_mutex */
/* gn_crc_tab[k][v]: CRC of byte v followed by k zero bytes */
static u32 (*gn_crc_tab)[256];
/* accelerated crc32 (not crc32-generic), or NULL */
static struct crypto_shash *gn_crc_tfm;

/* The CRC contribution of 8 bytes @v (little endian), tables @t[0..7]. */
static inline u32 gn_crc_step8(u32 (*t)[256], u64 v)
{
	return t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^
	       t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
	       t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^
	       t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
}

static u32 gn_crc_tables(u32 crc, const u8 *p, u32 len)
{
	u32 (*t)[256] = gn_crc_tab;

	for (; len >= 16; len -= 16, p += 16) {
		u64 v0 = get_unaligned_le64(p) ^ crc, v1 = get_unaligned_le64(p + 8);

		crc = gn_crc_step8(t + 8, v0) ^ gn_crc_step8(t, v1);
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

/*
 * Frame skbs: a frame taken over by the receiving engine is built in an
 * skb of GN_RR_MAX_FRAME bytes, which comes back here when its last user
 * is done with it, sparing the allocator (and its zeroing) per frame.
 */
static struct sk_buff_head gn_skb_pool;
#define GN_SKB_POOL_MAX		512

static struct sk_buff *gn_rdp_skb_alloc(void)
{
	struct sk_buff *skb = skb_dequeue(&gn_skb_pool);

	return skb ?: alloc_skb(GN_RR_MAX_FRAME, GFP_ATOMIC | __GFP_NOWARN);
}

static void gn_rdp_skb_free(struct sk_buff *skb)
{
	if (!skb_unref(skb))
		return;
	if (skb_is_nonlinear(skb) || skb_cloned(skb) ||
	    skb_headroom(skb) || skb_end_offset(skb) < GN_RR_MAX_FRAME ||
	    skb_queue_len_lockless(&gn_skb_pool) >= GN_SKB_POOL_MAX) {
		consume_skb(skb);
		return;
	}
	/*
	 * skb_unref() returns true either with users still 1 (we were the
	 * only holder) or after taking it from 1 to 0 (the other holder
	 * dropped its reference at the same time): we own the skb in both
	 * cases, and a pooled skb must start again at one user.
	 */
	refcount_set(&skb->users, 1);
	skb_trim(skb, 0);
	skb_queue_tail(&gn_skb_pool, skb);
}

/*
 * Reference skbs of the receive pipeline (gn_rdp_rx_ref_skb()): a head of
 * GN_RR_REF_HEAD bytes for the headers and page fragments for the payload.
 * The engine's thread puts them back here with their page references
 * dropped (gn_rdp_work()), so that the sender's CPU, which makes them,
 * does not allocate and the receiver's does not free one per frame.
 * Marked in cb[2]; the pool lock is taken with BH disabled.
 */
static struct sk_buff_head gn_ref_pool;
#define GN_REF_POOL_MAX		512
#define GN_SKB_REF		1

/* Drop the page references of a processed reference skb; false if not one. */
static bool gn_rdp_ref_reset(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int k;

	if (skb->cb[2] != GN_SKB_REF || skb_cloned(skb) ||
	    refcount_read(&skb->users) != 1)
		return false;
	for (k = 0; k < sh->nr_frags; k++)
		put_page(skb_frag_page(&sh->frags[k]));
	sh->nr_frags = 0;
	skb->data_len = 0;
	skb->len = 0;
	skb_reset_tail_pointer(skb);
	skb->truesize = SKB_TRUESIZE(skb_end_offset(skb));
	return true;
}

/*
 * State shared by the engines, made for the first one: the ICRC tables
 * (checked against the library) and the frame pools.
 */
void gn_rdp_get(void)
{
	static const u8 probe[] = "gaudi_nic ICRC table self-test 0123456789";
	struct crypto_shash *tfm;
	u32 (*t)[256], i, k;

	mutex_lock(&gn_crc_mutex);
	if (gn_crc_users++)
		goto out;
	skb_queue_head_init(&gn_skb_pool);
	skb_queue_head_init(&gn_ref_pool);
	/* crc32-pclmul when available; the tables otherwise */
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (!IS_ERR(tfm) && strcmp(crypto_shash_driver_name(tfm),
				   "crc32-generic"))
		gn_crc_tfm = tfm;
	else if (!IS_ERR(tfm))
		crypto_free_shash(tfm);
	/* without the tables, the CRC library does the work */
	t = kmalloc_array(16, sizeof(*t), GFP_KERNEL);
	if (!t)
		goto out;
	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? GN_CRC_POLY : 0);
		t[0][i] = c;
	}
	for (k = 1; k < 16; k++)
		for (i = 0; i < 256; i++)
			t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
	gn_crc_tab = t;
	if (gn_crc_tables(0x12345678, probe, sizeof(probe)) !=
	    crc32_le(0x12345678, probe, sizeof(probe))) {
		pr_err("gaudi_nic: ICRC tables are wrong; using the CRC library\n");
		gn_crc_tab = NULL;
		kfree(t);
	}
out:
	mutex_unlock(&gn_crc_mutex);
}

void gn_rdp_put(void)
{
	mutex_lock(&gn_crc_mutex);
	if (!--gn_crc_users) {
		skb_queue_purge(&gn_skb_pool);
		skb_queue_purge(&gn_ref_pool);
		kfree(gn_crc_tab);
		gn_crc_tab = NULL;
		if (gn_crc_tfm)
			crypto_free_shash(gn_crc_tfm);
		gn_crc_tfm = NULL;
	}
	mutex_unlock(&gn_crc_mutex);
}

static u32 gn_crc(u32 crc, const void *p, u32 len)
{
	if (gn_crc_tfm) {
		SHASH_DESC_ON_STACK(d, gn_crc_tfm);

		d->tfm = gn_crc_tfm;
		*(u32 *)shash_desc_ctx(d) = crc;
		if (!crypto_shash_update(d, p, len))
			return *(u32 *)shash_desc_ctx(d);
	}
	if (gn_crc_tab)
		return gn_crc_tables(crc, p, len);
	return crc32_le(crc, p, len);
}

/* ICRC state (not inverted) after the masked L3, UDP and BTH headers. */
static u32 gn_icrc_hdr(const u8 *l3, bool v4)
{
	u8 ps[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + BTH_LEN];
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *uh;

	memcpy(ps, l3, l3len + sizeof(struct udphdr) + BTH_LEN);
	if (v4) {
		struct iphdr *ih = (struct iphdr *)ps;

		ih->tos = 0xff;
		ih->ttl = 0xff;
		ih->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *ih = (struct ipv6hdr *)ps;

		memset(ih->flow_lbl, 0xff, sizeof(ih->flow_lbl));
		ih->priority = 0xf;
		ih->hop_limit = 0xff;
	}
	uh = (struct udphdr *)(ps + l3len);
	uh->check = CSUM_MANGLED_0;
	ps[l3len + sizeof(struct udphdr) + 4] = 0xff;	/* BTH resv8a */
	/* seed: CRC of 0xffffffff over 8 bytes of 0xff (masked LRH) */
	return gn_crc(0xdebb20e3, ps, l3len + sizeof(struct udphdr) + BTH_LEN);
}

/* The ICRC of the packet at @bth (@tlen bytes from BTH to ICRC). */
static u32 gn_icrc(const u8 *l3, bool v4, const u8 *bth, u32 tlen)
{
	u32 crc = gn_icrc_hdr(l3, v4);

	return ~gn_crc(crc, bth + BTH_LEN, tlen - BTH_LEN - ICRC_LEN);
}

/* Write the ICRC and, over IPv6, the UDP checksum (which covers it). */
static void gn_icrc_write(u8 *l3, bool v4, u8 *bth, u32 tlen)
{
	struct udphdr *uh = (struct udphdr *)bth - 1;
	u32 ulen = sizeof(*uh) + tlen;
	struct ipv6hdr *ih = (struct ipv6hdr *)l3;

	put_unaligned_le32(gn_icrc(l3, v4, bth, tlen), bth + tlen - ICRC_LEN);
	if (v4)
		return;
	uh->check = 0;
	uh->check = csum_ipv6_magic(&ih->saddr, &ih->daddr, ulen, IPPROTO_UDP,
				    csum_partial(uh, ulen, 0));
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

/*
 * The MAC's side of the ICRC insertion offload (mac.h): @f is a frame an
 * engine built (gn_tx_hdr), so only its lengths are checked.
 */
void gn_roce_icrc_insert(u8 *f, unsigned int len)
{
	bool v4 = get_unaligned_be16(f + 12) == ETH_P_IP;
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *uh = (struct udphdr *)(f + ETH_HLEN + l3len);
	u32 ulen;

	if (len < ETH_HLEN + l3len + sizeof(*uh))
		return;
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) + BTH_LEN + ICRC_LEN ||
	    ulen > len - ETH_HLEN - l3len)
		return;
	gn_icrc_write(f + ETH_HLEN, v4, (u8 *)(uh + 1), ulen - sizeof(*uh));
}

/*
 * Write the headers of the frame for @p (p->paylen set) into r->frame; the
 * payload goes to tf->payload.
 */
static void gn_tx_hdr(struct gaudi_nic_roce *r, struct gn_rqp *qp,
		      const struct gn_pkt *p, struct gn_txf *tf)
{
	struct gn_rport *pt = &r->ports[qp->ctx.port];
	const struct gn_roce_gid_ctx *g = &pt->gids[qp->ctx.sgid_index];
	bool v4 = g->type == GN_ROCE_GID_V2_IPV4;
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	u8 *f = r->frame, *l3 = f + ETH_HLEN, *x;
	u32 pad = (-p->paylen) & 3, tlen, ulen, flen;
	struct ethhdr *eh = (struct ethhdr *)f;
	struct udphdr *uh = (struct udphdr *)(l3 + l3len);
	u8 *bth = (u8 *)(uh + 1);
	u32 ext = op_ext_len(p->opcode);

	tlen = BTH_LEN + ext + p->paylen + pad + ICRC_LEN;
	ulen = sizeof(*uh) + tlen;
	flen = ETH_HLEN + l3len + ulen;

	ether_addr_copy(eh->h_dest, qp->ctx.dmac);
	ether_addr_copy(eh->h_source, pt->mac_addr);
	eh->h_proto = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	if (v4) {
		struct iphdr *ih = (struct iphdr *)l3;

		ih->version = 4;
		ih->ihl = 5;
		ih->tos = qp->ctx.traffic_class;
		ih->tot_len = htons(l3len + ulen);
		ih->id = 0;
		ih->frag_off = htons(IP_DF);
		ih->ttl = qp->ctx.hop_limit ? qp->ctx.hop_limit : 64;
		ih->protocol = IPPROTO_UDP;
		memcpy(&ih->saddr, g->gid + 12, 4);
		memcpy(&ih->daddr, qp->ctx.dgid + 12, 4);
		ih->check = 0;
		ih->check = ip_fast_csum(ih, ih->ihl);
	} else {
		struct ipv6hdr *ih = (struct ipv6hdr *)l3;
		u32 fl = le32_to_cpu(qp->ctx.flow_label);

		ip6_flow_hdr(ih, qp->ctx.traffic_class, htonl(fl & 0xfffff));
		ih->payload_len = htons(ulen);
		ih->nexthdr = IPPROTO_UDP;
		ih->hop_limit = qp->ctx.hop_limit ? qp->ctx.hop_limit : 64;
		memcpy(&ih->saddr, g->gid, 16);
		memcpy(&ih->daddr, qp->ctx.dgid, 16);
	}
	uh->source = htons(0xc000 | (qp->qpn & 0x3fff));
	uh->dest = htons(GN_ROCE_UDP_PORT);
	uh->len = htons(ulen);
	uh->check = 0;

	bth[0] = p->opcode;
	bth[1] = p->se | BTH_MIG | (pad << 4);
	put_unaligned_be16(0xffff, bth + 2);
	put_unaligned_be32(p->dqpn & PSN_MASK, bth + 4);
	put_unaligned_be32((p->psn & PSN_MASK) | (p->ackreq ? BTH_ACKREQ : 0),
			   bth + 8);
	x = bth + BTH_LEN;
	if (op_has_reth(p->opcode)) {
		put_unaligned_be64(p->va, x);
		put_unaligned_be32(p->rkey, x + 8);
		put_unaligned_be32(p->dmalen, x + 12);
		x += RETH_LEN;
	}
	if (op_has_aeth(p->opcode)) {
		put_unaligned_be32(p->aeth, x);
		x += AETH_LEN;
	}
	if (op_is_ud(p->opcode)) {
		put_unaligned_be32(p->qkey, x);
		put_unaligned_be32(p->sqpn & PSN_MASK, x + 4);
		x += DETH_LEN;
	}
	if (op_has_imm(p->opcode)) {
		memcpy(x, &p->imm, IMM_LEN);
		x += IMM_LEN;
	}
	tf->v4 = v4;
	tf->bth = bth;
	tf->payload = x;
	tf->paylen = p->paylen;
	tf->tlen = tlen;
	tf->flen = flen;
}

/*
 * Zero-copy transmit: may the payload of @qp's next frame be handed to
 * the MAC where it lies (gn_tx_end)?  Only with the ICRC left to the MAC
 * (the engine never reads the payload), and not in a MAC's call chain
 * (deferred frames are copied into a queue anyway).
 */
static bool gn_tx_zc_ok(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	/* a UD send completes once sent: its data must be copied by then */
	return qp->ctx.type == GN_ROCE_QPT_RC &&
	       READ_ONCE(gn_tx_zerocopy) && READ_ONCE(gn_icrc_offload) &&
	       !r->rx_inline && r->ports[qp->ctx.port].mac;
}

static unsigned int gn_tx_train_len(void)
{
	return clamp_t(unsigned int, READ_ONCE(gn_tx_train), 1,
		       GN_RR_TRAIN_MAX);
}

static bool gn_rdp_is_loop(const struct gn_rport *pt,
			   const struct gn_mac_roce_frame *fr)
{
	return ether_addr_equal(fr->frags[0].p, pt->mac_addr);
}

/*
 * Hand @n frames to port @pt's MAC, except those addressed to the port's
 * own MAC address: the engine receives them itself (loopback, as rxe and
 * mlx5 do), through the same receive path as frames from the cable; the
 * frame never leaves the chip, so an ICRC left to the MAC is good.
 */
static void gn_rdp_xmit(struct gn_rport *pt,
			const struct gn_mac_roce_frame *fr, unsigned int n,
			u32 flags)
{
	unsigned int i, j;

	for (i = 0; i < n; i = j) {
		bool loop = gn_rdp_is_loop(pt, &fr[i]);

		for (j = i + 1; j < n && gn_rdp_is_loop(pt, &fr[j]) == loop;)
			j++;
		if (loop) {
			pt->st.loopback_pkts += j - i;
			gn_rdp_rx(pt, &fr[i], j - i,
				  flags & GN_MAC_ROCE_ICRC_INSERT ?
				  GN_MAC_ROCE_ICRC_OK : 0);
		} else if (pt->mac) {
			gn_mac_roce_xmit_train(pt->mac, &fr[i], j - i, flags);
		}
	}
}

/* gn_rdp_xmit() of one frame in one piece. */
static void gn_rdp_xmit1(struct gn_rport *pt, const u8 *f, u32 len,
			 u32 flags)
{
	struct gn_mac_roce_frag piece = { .p = f, .len = len };
	struct gn_mac_roce_frame fr = { .frags = &piece, .nfrags = 1,
					.len = len };

	gn_rdp_xmit(pt, &fr, 1, flags);
}

/* Send the train gathered so far (under dp_lock). */
void gn_tx_train_flush(struct gaudi_nic_roce *r)
{
	struct gn_rtrain *t = r->train;

	if (!t->n)
		return;
	gn_rdp_xmit(&r->ports[t->port], t->fr, t->n, GN_MAC_ROCE_ICRC_INSERT);
	t->n = 0;
}

/*
 * The pieces for the next frame of @qp's train: a frame sent zero-copy
 * joins the train (gn_tx_end()), which goes to the MAC when full, before
 * any other frame, and at the end of gn_req_send() and gn_resp_read(), so
 * that it is empty whenever dp_lock is released.
 */
static struct gn_mac_roce_frag *gn_tx_train_slot(struct gaudi_nic_roce *r,
						 struct gn_rqp *qp)
{
	struct gn_rtrain *t = r->train;

	if (t->n && (t->qpn != qp->qpn || t->port != qp->ctx.port))
		gn_tx_train_flush(r);
	return t->pieces[t->n];
}

/*
 * Finish the frame of gn_tx_hdr() and send it on @qp's path.  Its payload
 * is either in place after the headers (@pay NULL), or in @pay[1] to
 * @pay[npay] (gn_tx_zc_ok()), @pay being gn_tx_train_slot(): then the
 * headers are copied to the train and go in @pay[0], the pad and ICRC in
 * @pay[npay + 1], and the frame joins the train, which the MAC gathers.
 * A large frame built in place is in an skb that the receiving engine may
 * take over (see gn_rdp_rx_frame).
 */
static void gn_tx_end(struct gaudi_nic_roce *r, struct gn_rqp *qp,
		      const struct gn_txf *tf, struct gn_mac_roce_frag *pay,
		      unsigned int npay)
{
	struct gn_rport *pt = &r->ports[qp->ctx.port];
	u8 *f = r->frame, *x = tf->payload + tf->paylen;
	u32 pad = (-tf->paylen) & 3, flags = 0;
	struct sk_buff *skb, *prev;

	if (pay) {
		struct gn_rtrain *t = r->train;
		u8 *hdr = t->hdr[t->n];

		pt->st.tx_pkts++;
		pt->st.tx_bytes += tf->flen;
		memcpy(hdr, f, tf->payload - f);
		pay[0].p = hdr;
		pay[0].len = tf->payload - f;
		/*
		 * pad and ICRC field (the MAC fills it where it is seen): zeros
		 * in the zero page, which a receiver knows
		 */
		pay[npay + 1].p = page_address(ZERO_PAGE(0));
		pay[npay + 1].len = pad + ICRC_LEN;
		t->fr[t->n].frags = pay;
		t->fr[t->n].nfrags = npay + 2;
		t->fr[t->n].len = tf->flen;
		t->port = qp->ctx.port;
		t->qpn = qp->qpn;
		if (++t->n >= gn_tx_train_len())
			gn_tx_train_flush(r);
		return;
	}
	gn_tx_train_flush(r);	/* what was gathered goes first */
	memset(x, 0, pad + ICRC_LEN);
	if (READ_ONCE(gn_icrc_offload))
		flags = GN_MAC_ROCE_ICRC_INSERT;
	else
		gn_icrc_write(f + ETH_HLEN, tf->v4, tf->bth, tf->tlen);
	pt->st.tx_pkts++;
	pt->st.tx_bytes += tf->flen;
	if (!pt->mac && !ether_addr_equal(f, pt->mac_addr))
		return;
	if (r->rx_inline) {
		/* in a MAC's call chain: the work item sends it */
		skb = alloc_skb(tf->flen, GFP_ATOMIC | __GFP_NOWARN);
		if (!skb)
			return;	/* lost on the wire; the peer recovers */
		skb_put_data(skb, f, tf->flen);
		skb->cb[0] = pt->port;
		skb->cb[1] = flags;
		skb_queue_tail(&r->txq, skb);
		return;
	}
	skb = r->txskb;
	if (skb && tf->flen >= GN_RR_HANDOFF_MIN) {
		/* dp_lock (BH off) keeps us on this CPU; the cable is synchronous */
		prev = this_cpu_read(gn_rdp_handoff);
		this_cpu_write(gn_rdp_handoff, skb);
		gn_rdp_xmit1(pt, f, tf->flen, flags);
		if (this_cpu_read(gn_rdp_handoff) != skb) {
			/* taken: the receiver holds its own reference */
			gn_rdp_skb_free(skb);
			r->txskb = NULL;
		}
		this_cpu_write(gn_rdp_handoff, prev);
	} else {
		gn_rdp_xmit1(pt, f, tf->flen, flags);
	}
	if (!r->txskb) {
		r->txskb = gn_rdp_skb_alloc();
		r->frame = r->txskb ? r->txskb->data : r->frame_buf;
	}
}

/*
 * Finish the frame whose payload (p->paylen bytes) is already in place
 * and send it on @qp's path.
 */
void gn_tx(struct gaudi_nic_roce *r, struct gn_rqp *qp,
	   const struct gn_pkt *p)
{
	struct gn_txf tf;

	gn_tx_hdr(r, qp, p, &tf);
	gn_tx_end(r, qp, &tf, NULL, 0);
}

/* Transfer @len bytes of a payload source (gn_tx_mem()) to or from @io. */
static int gn_tx_src_io(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			const struct gn_roce_wqe *w, u32 off, struct gn_rmr *mr,
			u64 va, u32 len, struct gn_io *io)
{
	return w ? gn_sge_io(r, qp, w, off, len, io) : gn_mr_io(mr, va, len, io);
}

/*
 * Send @p, whose payload (p->paylen bytes) is in memory: at message offset
 * @off of the SGEs of @w, or at @va of @mr if @w is NULL.  The payload is
 * handed to the MAC where it lies if it can be (gn_tx_zc_ok()), else
 * copied after the headers (@hl bytes).  Returns 0 or a CQE status (an
 * SGE the QP may not read: nothing is sent).
 */
int gn_tx_mem(struct gaudi_nic_roce *r, struct gn_rqp *qp,
	      const struct gn_pkt *p, int hl, const struct gn_roce_wqe *w,
	      u32 off, struct gn_rmr *mr, u64 va)
{
	struct gn_mac_roce_frag *fr;
	struct gn_io io;
	struct gn_txf tf;
	int ret;

	if (p->paylen && gn_tx_zc_ok(r, qp)) {
		fr = gn_tx_train_slot(r, qp);
		io = (struct gn_io){ .kind = GN_IO_FRAGS, .frags = fr + 1,
				     .max = GN_MAC_ROCE_MAX_FRAGS - 2 };
		ret = gn_tx_src_io(r, qp, w, off, mr, va, p->paylen, &io);
		if (!ret) {
			gn_tx_hdr(r, qp, p, &tf);
			gn_tx_end(r, qp, &tf, fr, io.nfrags);
			return 0;
		}
		if (ret != -E2BIG)
			return ret;
	}
	io = (struct gn_io){ .kind = GN_IO_TO_BUF, .buf = r->frame + hl };
	ret = gn_tx_src_io(r, qp, w, off, mr, va, p->paylen, &io);
	if (ret)
		return ret;
	gn_tx(r, qp, p);
	return 0;
}

/* A packet without payload (ACK/NAK, READ request). */
static void gn_tx_hdr_only(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			   struct gn_pkt *p)
{
	if (gn_tx_hdr_len(r, qp, p->opcode) < 0)
		return;
	p->paylen = 0;
	gn_tx(r, qp, p);
}

static void gn_send_ack(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			u8 syndrome, u32 psn)
{
	struct gn_pkt p = {
		.opcode = OP_ACK,
		.psn = psn,
		.dqpn = le32_to_cpu(qp->ctx.dest_qpn),
		.aeth = (u32)syndrome << 24 | (qp->msn & PSN_MASK),
	};

	gn_tx_hdr_only(r, qp, &p);
}

/*
 * A mailbox command is about to take @qp out of service (destroy, or a
 * move to RESET or ERR): send the ACK it still owes first.  Its receive
 * completions may already be visible, and the application may destroy
 * the QP before the work item's batch ends; without this the requester
 * would retransmit into a QP that is gone until its retries run out.
 * Under dp_lock, in a command (never in a MAC's call chain).
 */
void gn_rdp_ack_now(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	if (list_empty(&qp->ack_node))
		return;
	list_del_init(&qp->ack_node);
	gn_send_ack(r, qp, AETH_ACK, (qp->epsn - 1) & PSN_MASK);
}

/* ---------------------------------------------------------- requester */

static unsigned long gn_usecs_to_jiffies_min(u64 us)
{
	unsigned long j = usecs_to_jiffies(min_t(u64, us, 60 * USEC_PER_SEC));

	/* TCG guests are slow: never time out faster than 10 ms. */
	return max(j, msecs_to_jiffies(10));
}

static void gn_req_arm_timer(struct gn_rqp *qp)
{
	if (!qp->ctx.timeout || qp->una == qp->npsn)
		return;
	/* 4.096 us << timeout */
	mod_timer(&qp->timer, jiffies +
		  gn_usecs_to_jiffies_min((4096ULL << qp->ctx.timeout) / 1000));
	qp->timer_on = true;
}

/*
 * Validate the WQE at sq_next, already copied to @sw->wqe (the only copy
 * the engine uses from now on), and record how it goes on the wire.
 */
static void gn_req_start(struct gn_rqp *qp, struct gn_rswqe *sw)
{
	const struct gn_roce_wqe *w = &sw->wqe;
	u32 len = gn_wqe_len(w);

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
	case GN_ROCE_WQE_READ:
		if (w->flags & GN_ROCE_WQE_F_INLINE)
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
	qp->sq_next++;
}

/* Send packet @i of the WQE at sq_head. Returns 0 or a CQE status. */
static int gn_req_packet(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			 struct gn_rswqe *sw, u32 i)
{
	const struct gn_roce_wqe *w = &sw->wqe;
	bool first = i == 0, last = i == sw->npkts - 1;
	u32 off = i * qp->mtu;
	struct gn_pkt p = {
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
		gn_tx_hdr_only(r, qp, &p);
		return 0;
	case GN_ROCE_WQE_SEND:
	case GN_ROCE_WQE_SEND_IMM:
		if (first && last)
			p.opcode = OP_SEND_ONLY;
		else
			p.opcode = first ? OP_SEND_FIRST :
				   last ? OP_SEND_LAST : OP_SEND_MIDDLE;
		if (last && sw->opcode == GN_ROCE_WQE_SEND_IMM)
			p.opcode++;	/* _LAST_IMM / _ONLY_IMM */
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
	hl = gn_tx_hdr_len(r, qp, p.opcode);
	if (hl < 0)
		return 0;	/* no path: the timeout will tell */
	p.paylen = last ? sw->len - off : qp->mtu;
	if (!(sw->flags & GN_ROCE_WQE_F_INLINE))
		return gn_tx_mem(r, qp, &p, hl, w, off, NULL, 0);
	/* sw->len <= GN_ROCE_MAX_INLINE (gn_req_start()) */
	memcpy(r->frame + hl, w->inline_data + off, p.paylen);
	gn_tx(r, qp, &p);
	return 0;
}

static bool gn_req_sq_has_read(struct gn_rqp *qp)
{
	return qp->reads_out > 0;
}

/* Put new (or rewound) packets on the wire, within the window. */
static void gn_req_send(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	u32 mask = qp->sq.size - 1;
	int posted;

	if (qp->ctx.type != GN_ROCE_QPT_RC) {
		gn_ud_send(r, qp);
		return;
	}
	if (qp->state != GN_ROCE_QPS_RTS || qp->rnr_wait)
		return;
	posted = gn_wq_posted(&qp->sq, qp->sq_tail);
	if (posted < 0) {
		gn_rdp_to_error(r, qp);
		gn_roce_event(r, GN_ROCE_EV_QP_FATAL, qp->qpn);
		return;
	}
	if (r->rx_inline && qp->sq_head != qp->sq_tail + posted) {
		/* in a MAC's call chain: the work item sends */
		set_bit(qp->qpn, r->resend);
		return;
	}
	while (qp->sq_head != qp->sq_tail + posted) {
		struct gn_rswqe *sw = &qp->swqe[qp->sq_head & mask];
		u32 max_rd = max_t(u32, qp->ctx.max_rd_atomic, 1);
		int ret;

		if (psn_diff(qp->npsn, qp->una) >= GN_RR_WINDOW)
			break;
		if (qp->sq_head == qp->sq_next) {
			/*
			 * The one read of this WQE from the ring: the slot of
			 * @sw is free (sq_next - sq_tail < size).
			 */
			memcpy(&sw->wqe, gn_rring_entry(&qp->sq, qp->sq_head),
			       sizeof(sw->wqe));
			if ((sw->wqe.flags & GN_ROCE_WQE_F_FENCE) &&
			    gn_req_sq_has_read(qp))
				break;
			if (sw->wqe.opcode == GN_ROCE_WQE_READ &&
			    qp->reads_out >= max_rd)
				break;
			gn_req_start(qp, sw);
			if (sw->opcode == GN_ROCE_WQE_READ && !sw->bad)
				qp->reads_out++;
		}
		if (sw->bad) {
			/* Completes in order, once everything before it did. */
			if (qp->sq_tail == qp->sq_head)
				gn_req_fail(r, qp, sw->bad);
			break;
		}
		if (sw->opcode == GN_ROCE_WQE_READ) {
			if (qp->sq_pkt < sw->npkts)
				gn_req_packet(r, qp, sw, qp->sq_pkt);
			qp->sq_pkt = sw->npkts;
		} else {
			while (qp->sq_pkt < sw->npkts &&
			       psn_diff(qp->npsn, qp->una) < GN_RR_WINDOW) {
				ret = gn_req_packet(r, qp, sw, qp->sq_pkt);
				if (ret) {
					/* a local error: report it in order */
					sw->bad = ret;
					if (qp->sq_tail == qp->sq_head)
						gn_req_fail(r, qp, ret);
					goto out;
				}
				qp->sq_pkt++;
				qp->npsn = (sw->first_psn + qp->sq_pkt) &
					   PSN_MASK;
			}
			if (qp->sq_pkt < sw->npkts)
				break;
		}
		qp->npsn = (sw->first_psn + sw->npkts) & PSN_MASK;
		qp->sq_head++;
		qp->sq_pkt = 0;
	}
out:
	gn_tx_train_flush(r);
	if (qp->state == GN_ROCE_QPS_RTS && !qp->timer_on)
		gn_req_arm_timer(qp);
}

/* Go back to the oldest unacknowledged PSN. */
static void gn_req_rewind(struct gn_rqp *qp)
{
	u32 idx, mask = qp->sq.size - 1;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gn_rswqe *sw = &qp->swqe[idx & mask];
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
static void gn_req_progress(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			    bool kick)
{
	u32 idx, mask = qp->sq.size - 1;
	u32 una = qp->acked;
	bool moved = false;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gn_rswqe *sw = &qp->swqe[idx & mask];

		if (sw->opcode == GN_ROCE_WQE_READ && !sw->bad &&
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
		struct gn_rswqe *sw = &qp->swqe[qp->sq_tail & mask];
		u32 end = (sw->first_psn + sw->npkts) & PSN_MASK;

		if (sw->bad) {
			gn_req_fail(r, qp, sw->bad);
			return;
		}
		if (qp->sq_tail == qp->sq_head || psn_diff(qp->una, end) < 0)
			break;
		if (sw->opcode == GN_ROCE_WQE_READ)
			qp->reads_out--;
		/* the slot is free before the consumer sees the CQE */
		qp->sq_tail++;
		gn_sq_set_cons(qp);
		if ((sw->flags & GN_ROCE_WQE_F_SIGNALED) || qp->ctx.sq_sig_all)
			gn_cqe(r, qp, qp->scq, sw->wr_id,
			       gn_sq_cqe_op(sw->opcode), GN_ROCE_CQE_OK,
			       sw->len, false, 0, false);
	}
	if (moved) {
		qp->retry_left = qp->ctx.retry_cnt;
		if (!qp->rnr_wait)
			gn_qp_stop_timer(qp);
	}
	if (kick)
		gn_req_send(r, qp);
}

/* The requester's WQE that PSN @psn belongs to, or NULL. */
static struct gn_rswqe *gn_req_find(struct gn_rqp *qp, u32 psn)
{
	u32 idx, mask = qp->sq.size - 1;

	for (idx = qp->sq_tail; idx != qp->sq_next; idx++) {
		struct gn_rswqe *sw = &qp->swqe[idx & mask];
		s32 d = psn_diff(psn, sw->first_psn);

		if (d >= 0 && d < sw->npkts)
			return sw;
	}
	return NULL;
}

static const u32 gn_rnr_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* ACK: everything before @psn + 1 arrived. */
static void gn_req_acked(struct gn_rqp *qp, u32 psn)
{
	u32 next = (psn + 1) & PSN_MASK;

	/* beyond npsn (late, after a rewind): the retransmission re-ACKs */
	if (psn_diff(next, qp->acked) > 0 && psn_diff(next, qp->npsn) <= 0)
		qp->acked = next;
}

static void gn_req_rx(struct gaudi_nic_roce *r, struct gn_rport *pt,
		      struct gn_rqp *qp, const struct gn_pkt *p)
{
	u8 syn = p->aeth >> 24;
	struct gn_rswqe *sw;
	int ret;

	if (qp->state != GN_ROCE_QPS_RTS)
		return;
	if (p->opcode == OP_ACK) {
		if ((syn & 0x60) == 0x00) {		/* ACK */
			gn_req_acked(qp, p->psn);
			gn_req_progress(r, qp, true);
			return;
		}
		/* NAKs name the PSN that was not accepted */
		gn_req_acked(qp, (p->psn - 1) & PSN_MASK);
		if ((syn & 0x60) == 0x20) {		/* RNR NAK */
			pt->st.rnr_naks_rx++;
			qp->rnr_wait = true;
			gn_req_progress(r, qp, false);
			if (qp->state != GN_ROCE_QPS_RTS)
				return;
			if (!qp->rnr_left) {
				gn_req_fail(r, qp,
					    GN_ROCE_CQE_RNR_RETRY_EXC_ERR);
				return;
			}
			if (qp->ctx.rnr_retry != 7)
				qp->rnr_left--;
			mod_timer(&qp->timer, jiffies +
				  gn_usecs_to_jiffies_min(gn_rnr_us[syn & 31]));
			qp->timer_on = true;
			return;
		}
		gn_req_progress(r, qp, false);
		if (qp->state != GN_ROCE_QPS_RTS)
			return;
		if (syn == AETH_NAK_SEQ) {
			pt->st.seq_naks_rx++;
			pt->st.retransmits++;
			gn_req_rewind(qp);
			gn_req_send(r, qp);
			return;
		}
		/* fatal NAKs: the WQE at the NAKed PSN fails */
		gn_req_fail(r, qp, syn == AETH_NAK_ACC ?
			    GN_ROCE_CQE_REM_ACCESS_ERR :
			    syn == AETH_NAK_INV ? GN_ROCE_CQE_REM_INV_REQ_ERR :
			    GN_ROCE_CQE_REM_OP_ERR);
		return;
	}

	/* READ responses, accepted in order only */
	sw = gn_req_find(qp, p->psn);
	if (!sw || sw->opcode != GN_ROCE_WQE_READ ||
	    psn_diff(p->psn, (sw->first_psn + sw->rcvd) & PSN_MASK)) {
		pt->st.out_of_seq++;
		return;
	}
	{
		u32 off = sw->rcvd * qp->mtu;
		u32 want = min(qp->mtu, sw->len - min(sw->len, off));
		struct gn_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };

		if (p->paylen != want) {
			pt->st.rx_drops++;
			return;
		}
		/* the SGEs as validated when the READ started */
		ret = gn_sge_io(r, qp, &sw->wqe, off, p->paylen, &io);
		if (ret) {
			sw->bad = ret;
			gn_req_progress(r, qp, false);
			return;
		}
		sw->rcvd++;
		if (psn_diff((p->psn + 1) & PSN_MASK, qp->acked) > 0)
			qp->acked = (p->psn + 1) & PSN_MASK;
		gn_req_progress(r, qp, true);
	}
}

/* ---------------------------------------------------------- responder */

static bool gn_resp_reads_owed(const struct gn_rqp *qp)
{
	return qp->rd_send != qp->rd_head;
}

/*
 * An ACK is owed.  While READ responses are still owed it waits for them:
 * an ACK of a later PSN must not overtake them (a requester takes it as
 * the implicit NAK of the READ).
 */
static void gn_resp_ack_later(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	if (gn_resp_reads_owed(qp)) {
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
static bool gn_resp_may_nak(struct gn_rport *pt, struct gn_rqp *qp)
{
	if (!gn_resp_reads_owed(qp))
		return true;
	pt->st.rx_drops++;
	return false;
}

static void gn_resp_fatal(struct gaudi_nic_roce *r, struct gn_rport *pt,
			  struct gn_rqp *qp, u8 syndrome, u32 psn)
{
	u8 ev = syndrome == AETH_NAK_ACC ? GN_ROCE_EV_QP_ACC_ERR :
		GN_ROCE_EV_QP_REQ_ERR;

	if (syndrome == AETH_NAK_ACC)
		pt->st.rem_access_errs++;
	gn_send_ack(r, qp, syndrome, psn);
	gn_rdp_to_error(r, qp);
	gn_roce_event(r, ev, qp->qpn);
}

/* rkey, PD, bounds and access of an RDMA request; NULL if refused. */
static struct gn_rmr *gn_resp_check(struct gaudi_nic_roce *r,
				    struct gn_rqp *qp, u32 rkey, u64 va,
				    u32 len, u32 mr_acc, u32 qp_acc)
{
	struct gn_rmr *mr;

	if (!(le32_to_cpu(qp->ctx.access) & qp_acc))
		return NULL;
	mr = gn_mr_get(r, rkey, le32_to_cpu(qp->ctx.pdn));
	if (!mr || !(mr->access & mr_acc))
		return NULL;
	if (len && !gn_mr_covers(mr, va, len))
		return NULL;
	return mr;
}

/* The QP's responder resources (READs it may hold at once). */
static u32 gn_resp_rd_max(const struct gn_rqp *qp)
{
	return min_t(u32, qp->ctx.max_dest_rd_atomic, GN_ROCE_MAX_RD_ATOM);
}

/* Response @i of READ @rd, from @mr. */
static void gn_resp_read_pkt(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			     const struct gn_rread *rd, struct gn_rmr *mr,
			     u32 i, int hl, u8 opcode)
{
	u64 off = (u64)i * qp->mtu;
	struct gn_pkt p = {
		.opcode = opcode,
		.psn = (rd->psn + i) & PSN_MASK,
		.dqpn = le32_to_cpu(qp->ctx.dest_qpn),
		.aeth = (u32)AETH_ACK << 24 | (rd->msn & PSN_MASK),
		.paylen = min_t(u64, qp->mtu, rd->len - off),
	};

	gn_tx_mem(r, qp, &p, hl, NULL, 0, mr, rd->va + off);
}

static u8 gn_resp_read_op(const struct gn_rread *rd, u32 i)
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
static bool gn_resp_read_burst(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	struct gn_rport *pt = &r->ports[qp->ctx.port];
	u32 pkts = 0, bytes = 0;

	while (gn_resp_reads_owed(qp) && pkts < GN_RR_READ_BURST &&
	       bytes < GN_RR_READ_BURST_BYTES) {
		struct gn_rread *rd =
			&qp->reads[qp->rd_send % GN_ROCE_MAX_RD_ATOM];
		u64 off = (u64)rd->next * qp->mtu;
		struct gn_rmr *mr;

		if (rd->next >= rd->npkts) {
			qp->rd_send++;
			continue;
		}
		/* the MR may have been deregistered since the request */
		mr = gn_resp_check(r, qp, rd->rkey, rd->va + off,
				   rd->len - off, GN_ROCE_MR_REMOTE_READ,
				   GN_ROCE_ACC_REMOTE_READ);
		if (!mr) {
			gn_tx_train_flush(r);
			gn_resp_fatal(r, pt, qp, AETH_NAK_ACC,
				      (rd->psn + rd->next) & PSN_MASK);
			return false;
		}
		while (rd->next < rd->npkts && pkts < GN_RR_READ_BURST &&
		       bytes < GN_RR_READ_BURST_BYTES) {
			u8 op = gn_resp_read_op(rd, rd->next);
			int hl = gn_tx_hdr_len(r, qp, op);

			if (hl < 0) {
				/* no path: the requester's timer retries */
				rd->next = rd->npkts;
				break;
			}
			gn_resp_read_pkt(r, qp, rd, mr, rd->next, hl, op);
			rd->next++;
			pkts++;
			bytes += qp->mtu;
		}
	}
	gn_tx_train_flush(r);
	if (gn_resp_reads_owed(qp))
		return true;
	if (qp->ack_after_read) {
		qp->ack_after_read = false;
		gn_resp_ack_later(r, qp);
	}
	return false;
}

/* @qp owes READ responses: send the first burst now, the rest later. */
static void gn_resp_read_start(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	if (gn_resp_read_burst(r, qp) && list_empty(&qp->read_node))
		list_add_tail(&qp->read_node, &r->read_list);
}

/*
 * One burst for every QP that owes READ responses and whose link partner
 * does not pause it.  Returns true if responses are still owed; @paused
 * tells whether a pause held any back.
 */
static bool gn_rdp_reads_run(struct gaudi_nic_roce *r, bool *paused)
{
	struct gn_rqp *qp, *tmp;

	*paused = false;
	list_for_each_entry_safe(qp, tmp, &r->read_list, read_node) {
		struct gn_mac *mac = r->ports[qp->ctx.port].mac;

		if (mac && gn_mac_roce_tx_paused(mac)) {
			*paused = true;
			continue;
		}
		if (!gn_resp_read_burst(r, qp))
			list_del_init(&qp->read_node);
	}
	/* the next run starts with another QP */
	if (!list_empty(&r->read_list))
		list_rotate_left(&r->read_list);
	return !list_empty(&r->read_list);
}

/*
 * A duplicate READ request: the requester lost responses.  Only a READ
 * still held in the responder resources is replayed, and only from the
 * requested PSN to its end; a request that does not match what is held
 * (address, length, key) is dropped, as is one for a READ no longer held.
 */
static void gn_resp_read_dup(struct gaudi_nic_roce *r, struct gn_rport *pt,
			     struct gn_rqp *qp, const struct gn_pkt *p)
{
	u32 held = min(qp->rd_head, gn_resp_rd_max(qp)), k;

	for (k = 1; k <= held; k++) {
		u32 j = qp->rd_head - k;
		struct gn_rread *rd = &qp->reads[j % GN_ROCE_MAX_RD_ATOM];
		s32 d = psn_diff(p->psn, rd->psn);
		u64 off = (u64)d * qp->mtu;

		if (d < 0 || d >= rd->npkts)
			continue;
		if (p->rkey != rd->rkey || p->va != rd->va + off ||
		    p->dmalen != rd->len - min_t(u64, rd->len, off))
			break;
		rd->next = d;
		/* what the requester lost goes out first, in PSN order */
		if ((s32)(j - qp->rd_send) < 0)
			qp->rd_send = j;
		gn_resp_read_start(r, qp);
		return;
	}
	pt->st.rx_drops++;
}

/* Take the next receive WQE; false if the RQ is empty. */
bool gn_resp_take_rwqe(struct gn_rqp *qp)
{
	int n = gn_wq_posted(&qp->rq, qp->rq_cons);

	if (n <= 0)
		return false;
	memcpy(&qp->rwqe, gn_rring_entry(&qp->rq, qp->rq_cons),
	       sizeof(qp->rwqe));
	qp->recv_off = 0;
	return true;
}

static void gn_resp_recv_done(struct gaudi_nic_roce *r, struct gn_rqp *qp,
			      u8 opcode, u32 len, bool imm, __be32 immdt,
			      bool se)
{
	qp->rq_cons++;
	gn_rq_set_cons(qp);
	gn_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id), opcode,
	       GN_ROCE_CQE_OK, len, imm, immdt, se);
}

static void gn_resp_rx(struct gaudi_nic_roce *r, struct gn_rport *pt,
		       struct gn_rqp *qp, const struct gn_pkt *p)
{
	u8 op = p->opcode;
	s32 d;

	if (qp->state != GN_ROCE_QPS_RTR && qp->state != GN_ROCE_QPS_RTS)
		return;
	d = psn_diff(p->psn, qp->epsn);
	if (d < 0) {				/* duplicate */
		pt->st.dup_reqs++;
		if (op == OP_READ_REQ) {
			gn_resp_read_dup(r, pt, qp, p);
			return;
		}
		gn_resp_ack_later(r, qp);
		return;
	}
	if (d > 0) {				/* gap */
		pt->st.out_of_seq++;
		if (!qp->nak_sent && gn_resp_may_nak(pt, qp)) {
			qp->nak_sent = true;
			gn_send_ack(r, qp, AETH_NAK_SEQ, qp->epsn);
		}
		return;
	}
	qp->nak_sent = false;

	switch (op) {
	case OP_SEND_FIRST:
	case OP_SEND_ONLY:
	case OP_SEND_ONLY_IMM:
		if (qp->in_send || qp->in_write)
			goto inv;
		if (!gn_resp_take_rwqe(qp)) {
			if (!gn_resp_may_nak(pt, qp))
				return;
			pt->st.rnr_naks_tx++;
			gn_send_ack(r, qp, AETH_RNR(qp->ctx.min_rnr_timer),
				    p->psn);
			return;
		}
		qp->in_send = true;
		fallthrough;
	case OP_SEND_MIDDLE:
	case OP_SEND_LAST:
	case OP_SEND_LAST_IMM: {
		int ret;

		if (!qp->in_send)
			goto inv;
		if ((op == OP_SEND_FIRST || op == OP_SEND_MIDDLE) &&
		    p->paylen != qp->mtu)
			goto inv;
		if (qp->rwqe.num_sge > GN_ROCE_MAX_SGE) {
			ret = GN_ROCE_CQE_LOC_QP_OP_ERR;
		} else {
			struct gn_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };

			ret = gn_sge_io(r, qp, &qp->rwqe, qp->recv_off,
					p->paylen, &io);
		}
		if (ret) {
			qp->rq_cons++;
			gn_rq_set_cons(qp);
			gn_cqe(r, qp, qp->rcq, le64_to_cpu(qp->rwqe.wr_id),
			       GN_ROCE_CQE_RECV, ret, 0, false, 0, false);
			qp->in_send = false;
			gn_resp_fatal(r, pt, qp, AETH_NAK_INV, p->psn);
			return;
		}
		qp->recv_off += p->paylen;
		if (op == OP_SEND_LAST || op == OP_SEND_LAST_IMM ||
		    op == OP_SEND_ONLY || op == OP_SEND_ONLY_IMM) {
			qp->in_send = false;
			qp->msn++;
			gn_resp_recv_done(r, qp, GN_ROCE_CQE_RECV,
					  qp->recv_off, op_has_imm(op), p->imm,
					  p->se);
		}
		break;
	}
	case OP_WRITE_FIRST:
	case OP_WRITE_ONLY:
	case OP_WRITE_ONLY_IMM:
		if (qp->in_send || qp->in_write)
			goto inv;
		if (op == OP_WRITE_ONLY_IMM && !gn_wq_posted(&qp->rq,
							     qp->rq_cons)) {
			if (!gn_resp_may_nak(pt, qp))
				return;
			pt->st.rnr_naks_tx++;
			gn_send_ack(r, qp, AETH_RNR(qp->ctx.min_rnr_timer),
				    p->psn);
			return;
		}
		if (!gn_resp_check(r, qp, p->rkey, p->va, p->dmalen,
				   GN_ROCE_MR_REMOTE_WRITE,
				   GN_ROCE_ACC_REMOTE_WRITE)) {
			gn_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
			return;
		}
		qp->in_write = true;
		qp->wr_va = p->va;
		qp->wr_rkey = p->rkey;
		qp->wr_left = p->dmalen;
		qp->wr_len = p->dmalen;
		fallthrough;
	case OP_WRITE_MIDDLE:
	case OP_WRITE_LAST:
	case OP_WRITE_LAST_IMM: {
		bool last = op != OP_WRITE_FIRST && op != OP_WRITE_MIDDLE;
		struct gn_rmr *mr;

		if (!qp->in_write)
			goto inv;
		if ((!last && p->paylen != qp->mtu) || p->paylen > qp->wr_left ||
		    (last && p->paylen != qp->wr_left))
			goto inv;
		if (op == OP_WRITE_LAST_IMM &&
		    !gn_wq_posted(&qp->rq, qp->rq_cons)) {
			if (!gn_resp_may_nak(pt, qp))
				return;
			pt->st.rnr_naks_tx++;
			gn_send_ack(r, qp, AETH_RNR(qp->ctx.min_rnr_timer),
				    p->psn);
			return;
		}
		/* the MR may have been deregistered since the first packet */
		mr = gn_resp_check(r, qp, qp->wr_rkey, qp->wr_va, p->paylen,
				   GN_ROCE_MR_REMOTE_WRITE,
				   GN_ROCE_ACC_REMOTE_WRITE);
		if (!mr) {
			qp->in_write = false;
			gn_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
			return;
		}
		if (p->paylen) {
			struct gn_io io = { .kind = GN_IO_FROM_PKT, .pkt = p };

			gn_mr_io(mr, qp->wr_va, p->paylen, &io);
		}
		qp->wr_va += p->paylen;
		qp->wr_left -= p->paylen;
		if (last) {
			qp->in_write = false;
			qp->msn++;
			if (op_has_imm(op) && gn_resp_take_rwqe(qp))
				gn_resp_recv_done(r, qp,
						  GN_ROCE_CQE_RECV_WRITE_IMM,
						  qp->wr_len, true, p->imm,
						  p->se);
		}
		break;
	}
	case OP_READ_REQ: {
		struct gn_rread *rd;

		if (qp->in_send || qp->in_write)
			goto inv;
		/*
		 * Responder resources: none (max_dest_rd_atomic 0), or all
		 * still sending, means the requester exceeds what it was
		 * given: an invalid request (rxe answers it the same way).
		 */
		if (qp->rd_head - qp->rd_send >= gn_resp_rd_max(qp))
			goto inv;
		if (!gn_resp_check(r, qp, p->rkey, p->va, p->dmalen,
				   GN_ROCE_MR_REMOTE_READ,
				   GN_ROCE_ACC_REMOTE_READ)) {
			gn_resp_fatal(r, pt, qp, AETH_NAK_ACC, p->psn);
			return;
		}
		qp->msn++;
		rd = &qp->reads[qp->rd_head % GN_ROCE_MAX_RD_ATOM];
		rd->psn = p->psn;
		rd->npkts = p->dmalen ?
			    DIV_ROUND_UP_ULL((u64)p->dmalen, qp->mtu) : 1;
		rd->next = 0;
		rd->msn = qp->msn;
		rd->rkey = p->rkey;
		rd->len = p->dmalen;
		rd->va = p->va;
		qp->rd_head++;
		qp->epsn = (qp->epsn + rd->npkts) & PSN_MASK;
		gn_resp_read_start(r, qp);
		return;
	}
	default:
		goto inv;
	}
	qp->epsn = (qp->epsn + 1) & PSN_MASK;
	if (p->ackreq)
		gn_resp_ack_later(r, qp);
	return;
inv:
	qp->in_send = false;
	qp->in_write = false;
	gn_resp_fatal(r, pt, qp, AETH_NAK_INV, p->psn);
}

/* ------------------------------------------------------------ receive */

/*
 * An RC packet belongs to its connection: it arrived on the QP's port,
 * from the QP's remote GID, addressed to the QP's source GID.  Anything
 * else (a datagram from another host, or from a socket bound to another
 * local address) is not the peer's and is dropped before the QP sees it.
 */
static bool gn_rdp_addr_ok(const struct gn_rport *pt, const struct gn_rqp *qp,
			   const u8 *l3, bool v4)
{
	const struct gn_roce_gid_ctx *g;

	if (qp->ctx.port != pt->port || qp->ctx.sgid_index >= GN_ROCE_MAX_GID)
		return false;
	g = &pt->gids[qp->ctx.sgid_index];
	if (v4) {
		const struct iphdr *ih = (const struct iphdr *)l3;

		return g->type == GN_ROCE_GID_V2_IPV4 &&
		       !memcmp(&ih->saddr, qp->ctx.dgid + 12, 4) &&
		       !memcmp(&ih->daddr, g->gid + 12, 4);
	} else {
		const struct ipv6hdr *ih = (const struct ipv6hdr *)l3;

		return g->type != GN_ROCE_GID_V2_IPV4 &&
		       !memcmp(&ih->saddr, qp->ctx.dgid, 16) &&
		       !memcmp(&ih->daddr, g->gid, 16);
	}
}

/*
 * Process one received frame: @flen bytes in @nfrags pieces (port.h), the
 * headers in the first piece.
 */
static void gn_rdp_rx_one(struct gaudi_nic_roce *r, struct gn_rport *pt,
			  const struct gn_mac_roce_frag *frags,
			  unsigned int nfrags, unsigned int flen, u32 flags)
{
	const u8 *f = frags[0].p, *l3 = f + ETH_HLEN, *bth, *x;
	const struct ethhdr *eh = (const struct ethhdr *)f;
	unsigned int hlen = frags[0].len;	/* bytes of @f */
	u32 l3len, ulen, tlen, ext, pad, dqpn;
	const struct udphdr *uh;
	struct gn_pkt p = {};
	struct gn_rqp *qp;
	bool v4;

	if (hlen < ETH_HLEN)
		goto drop;
	if (eh->h_proto == htons(ETH_P_IP)) {
		const struct iphdr *ih = (const struct iphdr *)l3;

		v4 = true;
		l3len = sizeof(*ih);
		if (hlen < ETH_HLEN + l3len || ih->ihl != 5 ||
		    ih->protocol != IPPROTO_UDP ||
		    ntohs(ih->tot_len) > flen - ETH_HLEN ||
		    ntohs(ih->tot_len) < l3len + sizeof(*uh))
			goto drop;
		ulen = ntohs(ih->tot_len) - l3len;
	} else if (eh->h_proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ih = (const struct ipv6hdr *)l3;

		v4 = false;
		l3len = sizeof(*ih);
		if (hlen < ETH_HLEN + l3len || ih->nexthdr != IPPROTO_UDP ||
		    ntohs(ih->payload_len) > flen - ETH_HLEN - l3len)
			goto drop;
		ulen = ntohs(ih->payload_len);
	} else {
		goto drop;
	}
	uh = (const struct udphdr *)(l3 + l3len);
	bth = (const u8 *)(uh + 1);
	if (hlen < bth + BTH_LEN - f ||
	    ulen < sizeof(*uh) + BTH_LEN + ICRC_LEN || ntohs(uh->len) != ulen ||
	    uh->dest != htons(GN_ROCE_UDP_PORT))
		goto drop;
	tlen = ulen - sizeof(*uh);
	if (!(flags & GN_MAC_ROCE_ICRC_OK)) {
		/* only an engine's unaltered frame comes in pieces */
		if (nfrags != 1)
			goto drop;
		if (gn_icrc(l3, v4, bth, tlen) !=
		    get_unaligned_le32(bth + tlen - ICRC_LEN)) {
			pt->st.icrc_errs++;
			goto drop;
		}
	}
	p.opcode = bth[0];
	if (p.opcode > OP_ACK && !op_is_ud(p.opcode))	/* no atomics */
		goto drop;
	p.se = bth[1] & BTH_SE;
	pad = (bth[1] >> 4) & 3;
	dqpn = get_unaligned_be32(bth + 4) & PSN_MASK;
	p.psn = get_unaligned_be32(bth + 8) & PSN_MASK;
	p.ackreq = get_unaligned_be32(bth + 8) & BTH_ACKREQ;
	ext = op_ext_len(p.opcode);
	if (tlen < BTH_LEN + ext + pad + ICRC_LEN ||
	    hlen < bth + BTH_LEN + ext - f)
		goto drop;
	x = bth + BTH_LEN;
	if (op_has_reth(p.opcode)) {
		p.va = get_unaligned_be64(x);
		p.rkey = get_unaligned_be32(x + 8);
		p.dmalen = get_unaligned_be32(x + 12);
		x += RETH_LEN;
	}
	if (op_has_aeth(p.opcode)) {
		p.aeth = get_unaligned_be32(x);
		x += AETH_LEN;
	}
	if (op_is_ud(p.opcode)) {
		p.qkey = get_unaligned_be32(x);
		p.sqpn = get_unaligned_be32(x + 4) & PSN_MASK;
		x += DETH_LEN;
	}
	if (op_has_imm(p.opcode)) {
		memcpy(&p.imm, x, IMM_LEN);
		x += IMM_LEN;
	}
	p.frags = frags;
	p.nfrags = nfrags;
	p.pay_off = x - f;
	p.paylen = tlen - BTH_LEN - ext - pad - ICRC_LEN;
	if (p.paylen > 4096)
		goto drop;

	p.dqpn = dqpn;
	if (op_is_ud(p.opcode)) {
		gn_ud_rx(r, pt, l3, v4, &p, flen);
		return;
	}
	qp = dqpn < GN_ROCE_MAX_QP ? r->qps[dqpn] : NULL;
	if (!qp || qp->ctx.type != GN_ROCE_QPT_RC ||
	    !gn_rdp_addr_ok(pt, qp, l3, v4))
		goto drop;
	pt->st.rx_pkts++;
	pt->st.rx_bytes += flen;
	if (p.opcode >= OP_READ_RESP_FIRST)
		gn_req_rx(r, pt, qp, &p);
	else
		gn_resp_rx(r, pt, qp, &p);
	return;
drop:
	pt->st.rx_drops++;
}

/* Send what was deferred while processing in a MAC's call chain. */
static void gn_rdp_flush_tx(struct gaudi_nic_roce *r)
{
	struct sk_buff *skb;
	unsigned long qpn;

	while ((skb = skb_dequeue(&r->txq))) {
		u32 port = skb->cb[0];

		if (port < r->num_ports)
			gn_rdp_xmit1(&r->ports[port], skb->data, skb->len,
				     skb->cb[1]);
		consume_skb(skb);
	}
	/* the ACKs go now: the timer waiting for them need not wake us */
	if (!list_empty(&r->ack_list))
		hrtimer_try_to_cancel(&r->ack_timer);
	while (!list_empty(&r->ack_list)) {
		struct gn_rqp *qp = list_first_entry(&r->ack_list,
						     struct gn_rqp, ack_node);

		list_del_init(&qp->ack_node);
		gn_send_ack(r, qp, AETH_ACK, (qp->epsn - 1) & PSN_MASK);
	}
	for_each_set_bit(qpn, r->resend, GN_ROCE_MAX_QP) {
		if (test_and_clear_bit(qpn, r->resend) && r->qps[qpn])
			gn_req_send(r, r->qps[qpn]);
	}
}

/* BTH opcode of a RoCE v2 frame, or -1. */
static int gn_rdp_peek_op(const u8 *f, unsigned int len)
{
	unsigned int off;

	if (len < ETH_HLEN)
		return -1;
	if (get_unaligned_be16(f + 12) == ETH_P_IP)
		off = ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr);
	else
		off = ETH_HLEN + sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	return len > off ? f[off] : -1;
}

/*
 * Process a frame right here, in the MAC's call chain, if the engine is
 * idle (dp_lock free) and nothing is queued before it: the data and the
 * CQE are in place before the sender's doorbell returns, without waking
 * the work item (under TCG a wake-up costs more than a 4 KiB copy).
 * Everything the engine would transmit meanwhile is deferred (rx_inline),
 * so the cable never recurses from one engine into another.  If only
 * ACKs are owed, the work item is not woken at once: the next SQ doorbell
 * of this engine sends them (in a ping-pong, with the answer), else the
 * ACK timer after GN_RR_ACK_DELAY_US.  READ requests (whose responses are
 * large) go through the work item.  Returns false if the frame was not
 * taken.
 */
static bool gn_rdp_rx_inline(struct gn_rport *pt,
			     const struct gn_mac_roce_frag *frags,
			     unsigned int nfrags, unsigned int len, u32 flags)
{
	struct gaudi_nic_roce *r = pt->r;
	bool kick;

	if (gn_rdp_peek_op(frags[0].p, frags[0].len) == OP_READ_REQ)
		return false;
	if (!spin_trylock(&r->dp_lock))
		return false;
	if (!r->enabled || !skb_queue_empty(&r->rxq)) {
		spin_unlock(&r->dp_lock);
		return false;
	}
	r->rx_inline = true;
	gn_rdp_rx_one(r, pt, frags, nfrags, len, flags);
	r->rx_inline = false;
	kick = !skb_queue_empty(&r->txq) ||
	       !bitmap_empty(r->resend, GN_ROCE_MAX_QP);
	if (!kick && !list_empty(&r->ack_list) &&
	    !hrtimer_is_queued(&r->ack_timer))
		hrtimer_start(&r->ack_timer,
			      ns_to_ktime(GN_RR_ACK_DELAY_US * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	spin_unlock(&r->dp_lock);
	if (kick)
		gn_rdp_kick(r);
	return true;
}

/* Page fragments that @len bytes at @p take. */
static unsigned int gn_rdp_pages(const u8 *p, unsigned int len)
{
	return len ? DIV_ROUND_UP(offset_in_page(p) + len, PAGE_SIZE) : 0;
}

/*
 * Receive pipeline: frames sent zero-copy are queued as an skb holding
 * their headers (copied, each after a struct gn_rr_rec) and references to
 * the pages of their payloads (the sender's memory regions), so that this
 * engine's thread copies the payloads into the targets on its own CPU
 * while the sender goes on.  The pad and ICRC piece (zeros in the zero
 * page, never read: GN_MAC_ROCE_ICRC_OK) is left out.  The page
 * references keep the memory alive if the MR goes away first; the
 * sender's WQE completes only once the data is placed (the ACK comes
 * after).  Packs as many of the @n frames (a train) as one skb holds into
 * *@out and returns how many, or 0 if the first does not fit (the caller
 * takes the other paths).
 */
static unsigned int gn_rdp_rx_ref_skb(const struct gn_mac_roce_frame *fr,
				      unsigned int n, struct sk_buff **out)
{
	const u8 *zero = page_address(ZERO_PAGE(0));
	struct sk_buff *skb;
	unsigned int i, j, k = 0;

	spin_lock(&gn_ref_pool.lock);
	skb = __skb_dequeue(&gn_ref_pool);
	spin_unlock(&gn_ref_pool.lock);
	if (!skb) {
		skb = alloc_skb(GN_RR_REF_HEAD, GFP_ATOMIC | __GFP_NOWARN);
		if (!skb)
			return 0;
		skb->cb[2] = GN_SKB_REF;
	}
	for (i = 0; i < n; i++) {
		unsigned int hlen = fr[i].frags[0].len, np = 0, last;
		struct gn_rr_rec *rec;

		/* only an engine's frame comes in pieces, all in lowmem */
		if (fr[i].nfrags < 2 || hlen > GN_RR_HDR_MAX ||
		    fr[i].len > GN_RR_MAX_FRAME + 64 ||
		    skb_tailroom(skb) < GN_RR_REC_SIZE(hlen))
			break;
		last = fr[i].nfrags;
		if (fr[i].frags[last - 1].p == zero)
			last--;
		for (j = 1; j < last; j++)
			np += gn_rdp_pages(fr[i].frags[j].p, fr[i].frags[j].len);
		if (k + np > MAX_SKB_FRAGS)
			break;
		rec = skb_put(skb, GN_RR_REC_SIZE(hlen));
		rec->hlen = hlen;
		rec->npieces = np;
		rec->flen = fr[i].len;
		memcpy(rec + 1, fr[i].frags[0].p, hlen);
		for (j = 1; j < last; j++) {
			const u8 *p = fr[i].frags[j].p;
			unsigned int left = fr[i].frags[j].len;

			while (left) {
				unsigned int off = offset_in_page(p);
				unsigned int c = min_t(unsigned int, left,
						       PAGE_SIZE - off);
				/* lowmem pieces only (gn_mr_io, gn_tx_end) */
				struct page *pg = virt_to_page(p);

				get_page(pg);
				skb_add_rx_frag(skb, k++, pg, off, c, c);
				p += c;
				left -= c;
			}
		}
	}
	if (!i) {
		spin_lock(&gn_ref_pool.lock);
		__skb_queue_head(&gn_ref_pool, skb);
		spin_unlock(&gn_ref_pool.lock);
		return 0;
	}
	*out = skb;
	return i;
}

/*
 * Queue @skb (@nframes frames from port @pt, @flags) for the work item,
 * unless the queue is full (roce_rx_queue_max): then the frames are
 * dropped, as a NIC out of receive buffers drops, and counted.
 */
static void gn_rdp_rx_queue(struct gn_rport *pt, struct sk_buff *skb,
			    unsigned int nframes, u32 flags)
{
	struct gaudi_nic_roce *r = pt->r;
	bool first;

	skb->cb[0] = pt->port;
	skb->cb[1] = flags;
	spin_lock(&r->rxq.lock);
	if (skb_queue_len(&r->rxq) >= READ_ONCE(gn_rx_queue_max)) {
		pt->rxq_drops += nframes;
		spin_unlock(&r->rxq.lock);
		kfree_skb(skb);
		return;
	}
	first = skb_queue_empty(&r->rxq);
	__skb_queue_tail(&r->rxq, skb);
	if (!pt->xoff && skb_queue_len(&r->rxq) >= GN_RR_XOFF && pt->mac) {
		pt->xoff = true;
		gn_mac_roce_set_xoff(pt->mac, true);
	}
	spin_unlock(&r->rxq.lock);
	/* the work item drains the queue until empty: one kick per burst */
	if (first)
		gn_rdp_kick(r);
}

/*
 * One frame that the receive pipeline does not take: processed here if
 * the engine is idle (gn_rdp_rx_inline()), else queued: a frame built by
 * an engine in gn_tx_end() in one piece on this CPU is taken over by
 * reference (its sender drops its own after the cable returns), any
 * other (from the netdev path, a copy made by the cable) is copied.
 */
static void gn_rdp_rx_frame(struct gn_rport *pt,
			    const struct gn_mac_roce_frame *fr, u32 flags)
{
	unsigned int i, len = fr->len;
	struct sk_buff *skb;

	if (gn_rdp_rx_inline(pt, fr->frags, fr->nfrags, len, flags))
		return;
	skb = this_cpu_read(gn_rdp_handoff);
	if (skb && fr->nfrags == 1 && skb->data == fr->frags[0].p &&
	    !skb->len && len <= skb_tailroom(skb)) {
		this_cpu_write(gn_rdp_handoff, NULL);
		skb_get(skb);
		skb_put(skb, len);
	} else {
		skb = len < GN_RR_HANDOFF_MIN ?
		      alloc_skb(len, GFP_ATOMIC | __GFP_NOWARN) :
		      gn_rdp_skb_alloc();
		if (!skb)
			return;
		for (i = 0; i < fr->nfrags; i++)
			skb_put_data(skb, fr->frags[i].p, fr->frags[i].len);
	}
	gn_rdp_rx_queue(pt, skb, 1, flags);
}

/*
 * MAC hook (port.h): BH disabled, RCU; the frames are only valid during
 * the call.  Frames sent zero-copy go to the receive pipeline
 * (gn_rdp_rx_ref_skb()), a train of them in as few skbs as hold it;
 * a single one only if large: a small one is faster processed at once.
 */
void gn_rdp_rx(void *ctx, const struct gn_mac_roce_frame *frames,
	       unsigned int n, u32 flags)
{
	struct gn_rport *pt = ctx;
	bool pipe = READ_ONCE(gn_rx_pipeline);
	struct sk_buff *skb;
	unsigned int i = 0, k;

	while (i < n) {
		const struct gn_mac_roce_frame *fr = &frames[i];

		if (fr->len > GN_RR_MAX_FRAME + 64) {
			i++;
			continue;
		}
		if (pipe && fr->nfrags > 1 &&
		    (n > 1 || fr->len >= GN_RR_PIPELINE_MIN)) {
			k = gn_rdp_rx_ref_skb(fr, n - i, &skb);
			if (k) {
				gn_rdp_rx_queue(pt, skb, k, flags);
				i += k;
				continue;
			}
		}
		gn_rdp_rx_frame(pt, fr, flags);
		i++;
	}
}

/* Timer: hand the QP to the work item. */
void gn_rdp_timer(struct timer_list *t)
{
	struct gn_rqp *qp = from_timer(qp, t, timer);

	set_bit(qp->qpn, qp->r->kick);
	gn_rdp_kick(qp->r);
}

static void gn_rdp_timeout(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	struct gn_rport *pt = &r->ports[qp->ctx.port];

	if (!qp->timer_on || timer_pending(&qp->timer))
		return;
	qp->timer_on = false;
	if (qp->state != GN_ROCE_QPS_RTS)
		return;
	if (qp->rnr_wait) {
		qp->rnr_wait = false;
		pt->st.retransmits++;
		gn_req_rewind(qp);
		gn_req_send(r, qp);
		return;
	}
	if (qp->una == qp->npsn) {
		/* nothing in flight: just continue */
		gn_req_send(r, qp);
		return;
	}
	pt->st.timeouts++;
	if (!qp->retry_left) {
		gn_req_fail(r, qp, GN_ROCE_CQE_RETRY_EXC_ERR);
		return;
	}
	qp->retry_left--;
	pt->st.retransmits++;
	gn_req_rewind(qp);
	gn_req_send(r, qp);
}

void gn_rdp_kick(struct gaudi_nic_roce *r)
{
	kthread_queue_work(r->kworker, &r->work);
}

/* The link partner paused READ responses a while ago: look again. */
enum hrtimer_restart gn_rdp_read_timer(struct hrtimer *t)
{
	struct gaudi_nic_roce *r = container_of(t, struct gaudi_nic_roce,
						read_timer);

	gn_rdp_kick(r);
	return HRTIMER_NORESTART;
}

/* The receive queue has room again: lift the XOFF of every port. */
static void gn_rdp_xon(struct gaudi_nic_roce *r)
{
	unsigned int i;

	lockdep_assert_held(&r->rxq.lock);
	if (skb_queue_len(&r->rxq) > GN_RR_XON)
		return;
	for (i = 0; i < r->num_ports; i++) {
		struct gn_rport *pt = &r->ports[i];

		if (pt->xoff) {
			pt->xoff = false;
			if (pt->mac)
				gn_mac_roce_set_xoff(pt->mac, false);
		}
	}
}

/* Drop every received frame not processed yet (engine off or reset). */
void gn_rdp_rx_purge(struct gaudi_nic_roce *r)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&r->rxq.lock);
	skb_queue_splice_init(&r->rxq, &q);
	gn_rdp_xon(r);
	spin_unlock_bh(&r->rxq.lock);
	__skb_queue_purge(&q);
}

/* The ACKs deferred by inline receives are still owed: send them. */
enum hrtimer_restart gn_rdp_ack_timer(struct hrtimer *t)
{
	struct gaudi_nic_roce *r = container_of(t, struct gaudi_nic_roce,
						ack_timer);

	gn_rdp_kick(r);
	return HRTIMER_NORESTART;
}

/*
 * The engine is disabled (r->enabled false: nothing starts the timer or
 * queues the work item any more): wait until neither runs.
 */
void gn_rdp_stop(struct gaudi_nic_roce *r)
{
	/* a run under way may still arm a timer ... */
	kthread_cancel_work_sync(&r->work);
	hrtimer_cancel(&r->ack_timer);
	hrtimer_cancel(&r->read_timer);
	/* ... which may have queued the work again: it sees the engine off */
	kthread_cancel_work_sync(&r->work);
}

/*
 * Process the frames of a queued skb: one frame in its data, or those of
 * a reference skb (gn_rdp_rx_ref_skb()).
 */
static void gn_rdp_rx_skb(struct gaudi_nic_roce *r, struct gn_rport *pt,
			  struct sk_buff *skb)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	struct gn_mac_roce_frag fr[MAX_SKB_FRAGS + 1];
	unsigned int off = 0, k = 0, j;

	if (skb->cb[2] != GN_SKB_REF) {
		fr[0].p = skb->data;
		fr[0].len = skb_headlen(skb);
		gn_rdp_rx_one(r, pt, fr, 1, skb->len, skb->cb[1]);
		return;
	}
	while (off + sizeof(struct gn_rr_rec) <= skb_headlen(skb)) {
		const struct gn_rr_rec *rec = (void *)(skb->data + off);

		if (k + rec->npieces > sh->nr_frags)
			break;	/* cannot happen: the records fill the skb */
		fr[0].p = rec + 1;
		fr[0].len = rec->hlen;
		for (j = 0; j < rec->npieces; j++, k++) {
			fr[j + 1].p = skb_frag_address(&sh->frags[k]);
			fr[j + 1].len = skb_frag_size(&sh->frags[k]);
		}
		gn_rdp_rx_one(r, pt, fr, rec->npieces + 1, rec->flen,
			      skb->cb[1]);
		off += GN_RR_REC_SIZE(rec->hlen);
	}
}

void gn_rdp_work(struct kthread_work *work)
{
	struct gaudi_nic_roce *r = container_of(work, struct gaudi_nic_roce,
						work);
	struct sk_buff_head q, done, ref;
	bool reads, paused;
	struct sk_buff *skb;
	unsigned long qpn;
	int budget = 256;

	__skb_queue_head_init(&q);
	__skb_queue_head_init(&done);
	__skb_queue_head_init(&ref);
	spin_lock_bh(&r->dp_lock);
	if (!r->enabled) {
		spin_unlock_bh(&r->dp_lock);
		gn_rdp_rx_purge(r);
		skb_queue_purge(&r->txq);
		return;
	}
	/* one batch, taken under one acquisition of the queue's lock */
	spin_lock(&r->rxq.lock);
	while (budget-- > 0 && (skb = __skb_dequeue(&r->rxq)))
		__skb_queue_tail(&q, skb);
	gn_rdp_xon(r);
	spin_unlock(&r->rxq.lock);
	while ((skb = __skb_dequeue(&q))) {
		u32 port = skb->cb[0];

		if (port < r->num_ports)
			gn_rdp_rx_skb(r, &r->ports[port], skb);
		__skb_queue_tail(&done, skb);
	}
	/*
	 * Timers after the frames: an ACK that arrived while this thread
	 * was held back stops the timer instead of a go-back-N.
	 */
	for_each_set_bit(qpn, r->kick, GN_ROCE_MAX_QP) {
		if (test_and_clear_bit(qpn, r->kick) && r->qps[qpn])
			gn_rdp_timeout(r, r->qps[qpn]);
	}
	/* READ responses: a burst each, the lock released between bursts */
	reads = gn_rdp_reads_run(r, &paused);
	gn_rdp_flush_tx(r);
	spin_unlock_bh(&r->dp_lock);
	if (reads && paused)
		hrtimer_start(&r->read_timer, ns_to_ktime(GN_RR_PAUSE_US * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	else if (reads)
		gn_rdp_kick(r);
	while ((skb = __skb_dequeue(&done))) {
		if (gn_rdp_ref_reset(skb))
			__skb_queue_tail(&ref, skb);
		else
			gn_rdp_skb_free(skb);
	}
	if (!skb_queue_empty(&ref)) {
		spin_lock_bh(&gn_ref_pool.lock);
		if (skb_queue_len(&gn_ref_pool) < GN_REF_POOL_MAX)
			skb_queue_splice_tail_init(&ref, &gn_ref_pool);
		spin_unlock_bh(&gn_ref_pool.lock);
		__skb_queue_purge(&ref);
	}
	if (!skb_queue_empty(&r->rxq))
		gn_rdp_kick(r);
}

void gn_rdp_sq_doorbell(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	/* what an inline receive deferred goes first (ACKs, NAKs) */
	gn_rdp_flush_tx(r);
	if (qp->state == GN_ROCE_QPS_ERR)
		gn_qp_flush(r, qp);
	else
		gn_req_send(r, qp);
}

void gn_rdp_rq_doorbell(struct gaudi_nic_roce *r, struct gn_rqp *qp)
{
	if (qp->state == GN_ROCE_QPS_ERR)
		gn_qp_flush(r, qp);
}
