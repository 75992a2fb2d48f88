// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: receive.  Frame parsing and dispatch,
 * the receive pipeline, the work item and the timers.
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

static unsigned int gnsim_rx_queue_max = 16384;
module_param_named(roce_rx_queue_max, gnsim_rx_queue_max, uint, 0644);
MODULE_PARM_DESC(roce_rx_queue_max,
		 "A RoCE engine's receive queue holds at most this many buffers (default 16384; a train of frames takes one); what does not fit is dropped and counted in rx_dropped, and the sender recovers");

static bool gnsim_rx_pipeline = true;
module_param_named(roce_rx_pipeline, gnsim_rx_pipeline, bool, 0644);
MODULE_PARM_DESC(roce_rx_pipeline,
		 "A RoCE engine queues large frames sent zero-copy for its own thread, by reference to the sender's memory, so that sender and receiver run on two CPUs (default: on; off: received in the sender's context when idle)");

/* ------------------------------------------------------------ receive */

/*
 * An RC packet belongs to its connection: it arrived on the QP's port,
 * from the QP's remote GID, addressed to the QP's source GID.  Anything
 * else (a datagram from another host, or from a socket bound to another
 * local address) is not the peer's and is dropped before the QP sees it.
 */
static bool gnsim_rdp_addr_ok(const struct gnsim_rport *pt, const struct gnsim_rqp *qp,
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

		/* a removed GID (type 0, all zeros) matches nothing (N5) */
		return g->type == GN_ROCE_GID_V2_IPV6 &&
		       !memcmp(&ih->saddr, qp->ctx.dgid, 16) &&
		       !memcmp(&ih->daddr, g->gid, 16);
	}
}

/* The extension headers at @x (after the BTH) into @p; what follows them. */
static const u8 *gnsim_rdp_rx_ext(struct gnsim_pkt *p, const u8 *x)
{
	/* FLUSH: FETH before RETH (IBA A19, as rxe) */
	if (p->opcode == OP_FLUSH) {
		p->feth = get_unaligned_be32(x);
		x += FETH_LEN;
	}
	if (op_has_reth(p->opcode)) {
		p->va = get_unaligned_be64(x);
		p->rkey = get_unaligned_be32(x + 8);
		p->dmalen = get_unaligned_be32(x + 12);
		x += RETH_LEN;
	}
	if (op_has_aeth(p->opcode)) {
		p->aeth = get_unaligned_be32(x);
		x += AETH_LEN;
	}
	if (op_is_ud(p->opcode)) {
		p->qkey = get_unaligned_be32(x);
		p->sqpn = get_unaligned_be32(x + 4) & PSN_MASK;
		x += DETH_LEN;
	}
	if (op_has_imm(p->opcode)) {
		memcpy(&p->imm, x, IMM_LEN);
		x += IMM_LEN;
	}
	if (op_has_ieth(p->opcode)) {
		p->rkey = get_unaligned_be32(x);
		x += IETH_LEN;
	}
	return x;
}

/*
 * Process one received frame: @flen bytes in @nfrags pieces (port.h), the
 * headers in the first piece.
 */
static void gnsim_rdp_rx_one(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
			     const struct gnsim_mac_roce_frag *frags,
			     unsigned int nfrags, unsigned int flen, u32 flags)
{
	const u8 *f = frags[0].p, *l3 = f + ETH_HLEN, *bth, *x;
	const struct ethhdr *eh = (const struct ethhdr *)f;
	unsigned int hlen = frags[0].len;	/* bytes of @f */
	u32 l3len, ulen, tlen, ext, pad, dqpn;
	const struct udphdr *uh;
	struct gnsim_pkt p = {};
	struct gnsim_rqp *qp;
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
		if (gnsim_icrc(l3, v4, bth, tlen) !=
		    get_unaligned_le32(bth + tlen - ICRC_LEN)) {
			pt->st.icrc_errs++;
			goto drop;
		}
	}
	p.opcode = bth[0];
	/* UC: the RC SEND and WRITE operations */
	if ((p.opcode & 0xe0) == OP_UC && (p.opcode & 0x1f) <= OP_WRITE_ONLY_IMM) {
		p.uc = true;
		p.opcode &= 0x1f;
	}
	/* no atomics */
	if (p.opcode > OP_ACK && !op_is_ud(p.opcode) &&
	    !op_has_ieth(p.opcode) && p.opcode != OP_FLUSH)
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
	x = gnsim_rdp_rx_ext(&p, bth + BTH_LEN);
	p.frags = frags;
	p.nfrags = nfrags;
	p.pay_off = x - f;
	p.paylen = tlen - BTH_LEN - ext - pad - ICRC_LEN;
	if (p.paylen > 4096)
		goto drop;

	p.dqpn = dqpn;
	if (op_is_ud(p.opcode)) {
		gnsim_ud_rx(r, pt, l3, v4, &p, flen);
		return;
	}
	qp = dqpn < GN_ROCE_MAX_QP ? r->qps[dqpn] : NULL;
	if (!qp || qp->ctx.type != (p.uc ? GN_ROCE_QPT_UC : GN_ROCE_QPT_RC) ||
	    !gnsim_rdp_addr_ok(pt, qp, l3, v4))
		goto drop;
	pt->st.rx_pkts++;
	pt->st.rx_bytes += flen;
	if (p.opcode >= OP_READ_RESP_FIRST && p.opcode <= OP_ACK)
		gnsim_req_rx(r, pt, qp, &p);
	else
		gnsim_resp_rx(r, pt, qp, &p);
	return;
drop:
	pt->st.rx_drops++;
}

/* Send what was deferred while processing in a MAC's call chain. */
static void gnsim_rdp_flush_tx(struct gaudi_nic_roce *r)
{
	struct sk_buff *skb;
	unsigned long qpn;

	while ((skb = skb_dequeue(&r->txq))) {
		u32 port = skb->cb[0];

		if (port < r->num_ports)
			gnsim_rdp_xmit1(&r->ports[port], skb->data, skb->len,
					skb->cb[1]);
		consume_skb(skb);
	}
	/* the ACKs go now: the timer waiting for them need not wake us */
	if (!list_empty(&r->ack_list))
		hrtimer_try_to_cancel(&r->ack_timer);
	while (!list_empty(&r->ack_list)) {
		struct gnsim_rqp *qp = list_first_entry(&r->ack_list,
						     struct gnsim_rqp, ack_node);

		list_del_init(&qp->ack_node);
		gnsim_send_ack(r, qp, AETH_ACK, (qp->epsn - 1) & PSN_MASK);
	}
	for_each_set_bit(qpn, r->resend, GN_ROCE_MAX_QP) {
		if (test_and_clear_bit(qpn, r->resend) && r->qps[qpn])
			gnsim_req_send(r, r->qps[qpn]);
	}
}

/* BTH opcode of a RoCE v2 frame, or -1. */
static int gnsim_rdp_peek_op(const u8 *f, unsigned int len)
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
static bool gnsim_rdp_rx_inline(struct gnsim_rport *pt,
				const struct gnsim_mac_roce_frag *frags,
				unsigned int nfrags, unsigned int len, u32 flags)
{
	struct gaudi_nic_roce *r = pt->r;
	bool kick;

	if (gnsim_rdp_peek_op(frags[0].p, frags[0].len) == OP_READ_REQ)
		return false;
	if (!spin_trylock(&r->dp_lock))
		return false;
	if (!r->enabled || !skb_queue_empty(&r->rxq)) {
		spin_unlock(&r->dp_lock);
		return false;
	}
	r->rx_inline = true;
	gnsim_rdp_rx_one(r, pt, frags, nfrags, len, flags);
	r->rx_inline = false;
	/* a FLUSH taken here owes its response from the READ list */
	kick = !skb_queue_empty(&r->txq) || !list_empty(&r->read_list) ||
	       !bitmap_empty(r->resend, GN_ROCE_MAX_QP);
	if (!kick && !list_empty(&r->ack_list) &&
	    !hrtimer_is_queued(&r->ack_timer))
		hrtimer_start(&r->ack_timer,
			      ns_to_ktime(GN_RR_ACK_DELAY_US * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	spin_unlock(&r->dp_lock);
	if (kick)
		gnsim_rdp_kick(r);
	return true;
}

/* Page fragments that @len bytes at @p take. */
static unsigned int gnsim_rdp_pages(const u8 *p, unsigned int len)
{
	return len ? DIV_ROUND_UP(offset_in_page(p) + len, PAGE_SIZE) : 0;
}

/*
 * Receive pipeline: frames sent zero-copy are queued as an skb holding
 * their headers (copied, each after a struct gnsim_rr_rec) and references to
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
static unsigned int gnsim_rdp_rx_ref_skb(const struct gnsim_mac_roce_frame *fr,
					 unsigned int n, struct sk_buff **out)
{
	const u8 *zero = page_address(ZERO_PAGE(0));
	struct sk_buff *skb;
	unsigned int i, j, k = 0;

	spin_lock(&gnsim_ref_pool.lock);
	skb = __skb_dequeue(&gnsim_ref_pool);
	spin_unlock(&gnsim_ref_pool.lock);
	if (!skb) {
		skb = alloc_skb(GN_RR_REF_HEAD, GFP_ATOMIC | __GFP_NOWARN);
		if (!skb)
			return 0;
		skb->cb[2] = GN_SKB_REF;
	}
	for (i = 0; i < n; i++) {
		unsigned int hlen = fr[i].frags[0].len, np = 0, last;
		struct gnsim_rr_rec *rec;

		/* only an engine's frame comes in pieces, all in lowmem */
		if (fr[i].nfrags < 2 || hlen > GN_RR_HDR_MAX ||
		    fr[i].len > GN_RR_MAX_FRAME + 64 ||
		    skb_tailroom(skb) < GN_RR_REC_SIZE(hlen))
			break;
		last = fr[i].nfrags;
		if (fr[i].frags[last - 1].p == zero)
			last--;
		for (j = 1; j < last; j++)
			np += gnsim_rdp_pages(fr[i].frags[j].p, fr[i].frags[j].len);
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
				/* lowmem pieces only (gnsim_mr_io, gnsim_tx_end) */
				struct page *pg = virt_to_page(p);

				get_page(pg);
				skb_add_rx_frag(skb, k++, pg, off, c, c);
				p += c;
				left -= c;
			}
		}
	}
	if (!i) {
		spin_lock(&gnsim_ref_pool.lock);
		__skb_queue_head(&gnsim_ref_pool, skb);
		spin_unlock(&gnsim_ref_pool.lock);
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
static void gnsim_rdp_rx_queue(struct gnsim_rport *pt, struct sk_buff *skb,
			       unsigned int nframes, u32 flags)
{
	struct gaudi_nic_roce *r = pt->r;
	bool first;

	skb->cb[0] = pt->port;
	skb->cb[1] = flags;
	spin_lock(&r->rxq.lock);
	if (skb_queue_len(&r->rxq) >= READ_ONCE(gnsim_rx_queue_max)) {
		pt->rxq_drops += nframes;
		spin_unlock(&r->rxq.lock);
		kfree_skb(skb);
		return;
	}
	first = skb_queue_empty(&r->rxq);
	__skb_queue_tail(&r->rxq, skb);
	if (!pt->xoff && skb_queue_len(&r->rxq) >= GN_RR_XOFF && pt->mac) {
		pt->xoff = true;
		gnsim_mac_roce_set_xoff(pt->mac, true);
	}
	spin_unlock(&r->rxq.lock);
	/* the work item drains the queue until empty: one kick per burst */
	if (first)
		gnsim_rdp_kick(r);
}

/*
 * One frame that the receive pipeline does not take: processed here if
 * the engine is idle (gnsim_rdp_rx_inline()), else queued: a frame built by
 * an engine in gnsim_tx_end() in one piece on this CPU is taken over by
 * reference (its sender drops its own after the cable returns), any
 * other (from the netdev path, a copy made by the cable) is copied.
 */
static void gnsim_rdp_rx_frame(struct gnsim_rport *pt,
			       const struct gnsim_mac_roce_frame *fr, u32 flags)
{
	unsigned int i, len = fr->len;
	struct sk_buff *skb;

	if (gnsim_rdp_rx_inline(pt, fr->frags, fr->nfrags, len, flags))
		return;
	skb = this_cpu_read(gnsim_rdp_handoff);
	if (skb && fr->nfrags == 1 && skb->data == fr->frags[0].p &&
	    !skb->len && len <= skb_tailroom(skb)) {
		this_cpu_write(gnsim_rdp_handoff, NULL);
		skb_get(skb);
		skb_put(skb, len);
	} else {
		skb = len < GN_RR_HANDOFF_MIN ?
		      alloc_skb(len, GFP_ATOMIC | __GFP_NOWARN) :
		      gnsim_rdp_skb_alloc();
		if (!skb)
			return;
		for (i = 0; i < fr->nfrags; i++)
			skb_put_data(skb, fr->frags[i].p, fr->frags[i].len);
	}
	gnsim_rdp_rx_queue(pt, skb, 1, flags);
}

/*
 * MAC hook (port.h): BH disabled, RCU; the frames are only valid during
 * the call.  Frames sent zero-copy go to the receive pipeline
 * (gnsim_rdp_rx_ref_skb()), a train of them in as few skbs as hold it;
 * a single one only if large: a small one is faster processed at once.
 */
void gnsim_rdp_rx(void *ctx, const struct gnsim_mac_roce_frame *frames,
		  unsigned int n, u32 flags)
{
	struct gnsim_rport *pt = ctx;
	bool pipe = READ_ONCE(gnsim_rx_pipeline);
	struct sk_buff *skb;
	unsigned int i = 0, k;

	while (i < n) {
		const struct gnsim_mac_roce_frame *fr = &frames[i];

		if (fr->len > GN_RR_MAX_FRAME + 64) {
			i++;
			continue;
		}
		if (pipe && fr->nfrags > 1 &&
		    (n > 1 || fr->len >= GN_RR_PIPELINE_MIN)) {
			k = gnsim_rdp_rx_ref_skb(fr, n - i, &skb);
			if (k) {
				gnsim_rdp_rx_queue(pt, skb, k, flags);
				i += k;
				continue;
			}
		}
		gnsim_rdp_rx_frame(pt, fr, flags);
		i++;
	}
}

/* Timer: hand the QP to the work item. */
void gnsim_rdp_timer(struct timer_list *t)
{
	struct gnsim_rqp *qp = from_timer(qp, t, timer);

	set_bit(qp->qpn, qp->r->kick);
	gnsim_rdp_kick(qp->r);
}

static void gnsim_rdp_timeout(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	struct gnsim_rport *pt = &r->ports[qp->ctx.port];

	if (!qp->timer_on || timer_pending(&qp->timer))
		return;
	qp->timer_on = false;
	if (qp->state != GN_ROCE_QPS_RTS)
		return;
	if (qp->rnr_wait) {
		qp->rnr_wait = false;
		pt->st.retransmits++;
		gnsim_req_rewind(qp);
		gnsim_req_send(r, qp);
		return;
	}
	if (qp->una == qp->npsn) {
		/* nothing in flight: just continue */
		gnsim_req_send(r, qp);
		return;
	}
	pt->st.timeouts++;
	if (!qp->retry_left) {
		gnsim_req_fail(r, qp, GN_ROCE_CQE_RETRY_EXC_ERR);
		return;
	}
	qp->retry_left--;
	pt->st.retransmits++;
	gnsim_req_rewind(qp);
	gnsim_req_send(r, qp);
}

void gnsim_rdp_kick(struct gaudi_nic_roce *r)
{
	kthread_queue_work(r->kworker, &r->work);
}

/*
 * @qp has more posted on its SQ than one doorbell (or one turn of the
 * work item) may start: the work item goes on with it in its next pass.
 */
void gnsim_rdp_sq_defer(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	lockdep_assert_held(&r->dp_lock);
	set_bit(qp->qpn, r->resend);
	r->ports[qp->ctx.port].st.sq_deferrals++;
	gnsim_rdp_kick(r);
}

/* The link partner paused READ responses a while ago: look again. */
enum hrtimer_restart gnsim_rdp_read_timer(struct hrtimer *t)
{
	struct gaudi_nic_roce *r = container_of(t, struct gaudi_nic_roce,
						read_timer);

	gnsim_rdp_kick(r);
	return HRTIMER_NORESTART;
}

/* The receive queue has room again: lift the XOFF of every port. */
static void gnsim_rdp_xon(struct gaudi_nic_roce *r)
{
	unsigned int i;

	lockdep_assert_held(&r->rxq.lock);
	if (skb_queue_len(&r->rxq) > GN_RR_XON)
		return;
	for (i = 0; i < r->num_ports; i++) {
		struct gnsim_rport *pt = &r->ports[i];

		if (pt->xoff) {
			pt->xoff = false;
			if (pt->mac)
				gnsim_mac_roce_set_xoff(pt->mac, false);
		}
	}
}

/* Drop every received frame not processed yet (engine off or reset). */
void gnsim_rdp_rx_purge(struct gaudi_nic_roce *r)
{
	struct sk_buff_head q;

	__skb_queue_head_init(&q);
	spin_lock_bh(&r->rxq.lock);
	skb_queue_splice_init(&r->rxq, &q);
	gnsim_rdp_xon(r);
	spin_unlock_bh(&r->rxq.lock);
	__skb_queue_purge(&q);
}

/* The ACKs deferred by inline receives are still owed: send them. */
enum hrtimer_restart gnsim_rdp_ack_timer(struct hrtimer *t)
{
	struct gaudi_nic_roce *r = container_of(t, struct gaudi_nic_roce,
						ack_timer);

	gnsim_rdp_kick(r);
	return HRTIMER_NORESTART;
}

/*
 * The engine is disabled (r->enabled false: nothing starts the timer or
 * queues the work item any more): wait until neither runs.
 */
void gnsim_rdp_stop(struct gaudi_nic_roce *r)
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
 * a reference skb (gnsim_rdp_rx_ref_skb()).
 */
static void gnsim_rdp_rx_skb(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
			     struct sk_buff *skb)
{
	const struct skb_shared_info *sh = skb_shinfo(skb);
	struct gnsim_mac_roce_frag fr[MAX_SKB_FRAGS + 1];
	unsigned int off = 0, k = 0, j;

	if (skb->cb[2] != GN_SKB_REF) {
		fr[0].p = skb->data;
		fr[0].len = skb_headlen(skb);
		gnsim_rdp_rx_one(r, pt, fr, 1, skb->len, skb->cb[1]);
		return;
	}
	while (off + sizeof(struct gnsim_rr_rec) <= skb_headlen(skb)) {
		const struct gnsim_rr_rec *rec = (void *)(skb->data + off);

		if (k + rec->npieces > sh->nr_frags)
			break;	/* cannot happen: the records fill the skb */
		fr[0].p = rec + 1;
		fr[0].len = rec->hlen;
		for (j = 0; j < rec->npieces; j++, k++) {
			fr[j + 1].p = skb_frag_address(&sh->frags[k]);
			fr[j + 1].len = skb_frag_size(&sh->frags[k]);
		}
		gnsim_rdp_rx_one(r, pt, fr, rec->npieces + 1, rec->flen,
				 skb->cb[1]);
		off += GN_RR_REC_SIZE(rec->hlen);
	}
}

void gnsim_rdp_work(struct kthread_work *work)
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
		gnsim_rdp_rx_purge(r);
		skb_queue_purge(&r->txq);
		return;
	}
	gnsim_roce_db_late(r);
	/* one batch, taken under one acquisition of the queue's lock */
	spin_lock(&r->rxq.lock);
	while (budget-- > 0 && (skb = __skb_dequeue(&r->rxq)))
		__skb_queue_tail(&q, skb);
	gnsim_rdp_xon(r);
	spin_unlock(&r->rxq.lock);
	while ((skb = __skb_dequeue(&q))) {
		u32 port = skb->cb[0];

		if (port < r->num_ports)
			gnsim_rdp_rx_skb(r, &r->ports[port], skb);
		__skb_queue_tail(&done, skb);
	}
	/*
	 * Timers after the frames: an ACK that arrived while this thread
	 * was held back stops the timer instead of a go-back-N.
	 */
	for_each_set_bit(qpn, r->kick, GN_ROCE_MAX_QP) {
		if (test_and_clear_bit(qpn, r->kick) && r->qps[qpn])
			gnsim_rdp_timeout(r, r->qps[qpn]);
	}
	/* READ responses: a burst each, the lock released between bursts */
	reads = gnsim_rdp_reads_run(r, &paused);
	gnsim_rdp_flush_tx(r);
	spin_unlock_bh(&r->dp_lock);
	if (reads && paused)
		hrtimer_start(&r->read_timer, ns_to_ktime(GN_RR_PAUSE_US * NSEC_PER_USEC),
			      HRTIMER_MODE_REL);
	else if (reads)
		gnsim_rdp_kick(r);
	while ((skb = __skb_dequeue(&done))) {
		if (gnsim_rdp_ref_reset(skb))
			__skb_queue_tail(&ref, skb);
		else
			gnsim_rdp_skb_free(skb);
	}
	if (!skb_queue_empty(&ref)) {
		spin_lock_bh(&gnsim_ref_pool.lock);
		if (skb_queue_len(&gnsim_ref_pool) < GN_REF_POOL_MAX)
			skb_queue_splice_tail_init(&ref, &gnsim_ref_pool);
		spin_unlock_bh(&gnsim_ref_pool.lock);
		__skb_queue_purge(&ref);
	}
	if (!skb_queue_empty(&r->rxq))
		gnsim_rdp_kick(r);
}

void gnsim_rdp_sq_doorbell(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	/* what an inline receive deferred goes first (ACKs, NAKs) */
	gnsim_rdp_flush_tx(r);
	if (qp->state == GN_ROCE_QPS_ERR)
		gnsim_qp_flush(r, qp);
	else
		gnsim_req_send(r, qp);
}

void gnsim_rdp_rq_doorbell(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	if (qp->state == GN_ROCE_QPS_ERR)
		gnsim_qp_flush(r, qp);
}
