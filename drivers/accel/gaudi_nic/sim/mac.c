// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated MAC of one gaudi_nic port.
 *
 * This is "hardware": it reads descriptor rings in host memory through
 * their DMA addresses, copies frames between the rings of two cabled ports,
 * writes completions back and raises interrupt vectors.  The driver sees
 * it through struct gaudi_nic_mac_ops (include/linux/gaudi_nic/port.h),
 * filled here as gnsim_mac_ops; the RoCE engine's wiring, the cables and
 * the test hooks are in sim/mac.h.
 *
 * Transmission is synchronous with the doorbell: the MAC consumes the
 * descriptors up to the new producer index at once and delivers each frame
 * into an RX ring of the peer (the cable has no latency and no rate).  A
 * frame is only held back by 802.3x pause (or by fault injection); every
 * frame that is not delivered is counted in exactly one drop counter (the
 * fault_* counters for injected faults).
 *
 * Locking: each TX ring and each RX ring has a spinlock (always taken with
 * BH disabled); the order is TX ring of the sender, then RX ring of the
 * receiver.  The peer pointer is RCU, written under RTNL; every path that
 * touches a peer or calls the client runs inside an RCU read-side section,
 * so gnsim_mac_quiesce() (synchronize_rcu) fences them.
 *
 * A cable may instead end in an uplink, a Linux netdev (uplink.c): frames
 * then leave through it, and what it receives comes in through
 * gnsim_mac_rx() from its receive path.  The uplink pointer is RCU too.
 *
 * Fault injection (gnsim_mac_set_fault(), sim/mac.h; in mac_fault.c) sits
 * between a sender and the cable; see struct gnsim_mac_fault_state.  The
 * receive-side scaling (the parser and the Toeplitz hash that pick an RX
 * ring) is in mac_rss.c, the checksum and TSO offloads in mac_offload.c.
 */
#include <linux/debugfs.h>
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/tcp.h>
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include "mac.h"
#include "mac_priv.h"

/* The DMA engine: host memory behind a DMA address of our device. */
static void *gnsim_mac_dma_virt(struct gn_mac *mac, u64 addr)
{
	return phys_to_virt(dma_to_phys(mac->dma_dev, addr));
}

static void gnsim_mac_irq(struct gn_mac *mac, unsigned int vector)
{
	const struct gn_mac_client_ops *ops = READ_ONCE(mac->ops);

	if (ops && READ_ONCE(mac->enabled))
		ops->irq(READ_ONCE(mac->ctx), vector);
}

static unsigned int gnsim_mac_hist_bucket(unsigned int len)
{
	static const unsigned int hi[GN_MAC_HIST - 1] = {
		64, 127, 255, 511, 1023, 1518,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(hi); i++)
		if (len <= hi[i])
			return i;
	return GN_MAC_HIST - 1;
}

/* The RoCE engine of @mac receives @f (BH disabled, RCU). */
static void gnsim_mac_roce_rx(struct gn_mac *mac, const struct gnsim_frame *f)
{
	gnsim_mac_roce_rx_t fn = READ_ONCE(mac->roce_fn);
	struct gnsim_mac_roce_frame one = { .nfrags = 1, .len = f->len };
	struct gnsim_mac_roce_frag piece;
	u8 *buf;

	if (!fn)
		return;
	/* an engine's frame, unaltered: in its pieces, nothing computed */
	if (f->icrc_insert) {
		one.frags = f->frag;
		one.nfrags = f->nfrags;
		fn(READ_ONCE(mac->roce_ctx), &one, 1, GN_MAC_ROCE_ICRC_OK);
		return;
	}
	if (f->nfrags == 1 && f->csum_start < 0) {
		one.frags = f->frag;
		fn(READ_ONCE(mac->roce_ctx), &one, 1, 0);
		return;
	}
	buf = kmalloc(f->len, GFP_ATOMIC | __GFP_NOWARN);
	if (!buf)
		return;	/* the engine's own retransmission recovers */
	gnsim_frame_copy(f, buf);
	piece.p = buf;
	piece.len = f->len;
	one.frags = &piece;
	fn(READ_ONCE(mac->roce_ctx), &one, 1, 0);
	kfree(buf);
}

/*
 * The MIB counters of a frame received without error, whether it went to an
 * RX ring (rx_frames) or to the RoCE engine (roce_rx_frames).
 */
static void gnsim_mac_count_rx(struct gn_mac_stats *st, const u8 *da,
			       unsigned int flen)
{
	st->rx_bytes += flen;
	if (is_multicast_ether_addr(da)) {
		if (is_broadcast_ether_addr(da))
			st->rx_bcast++;
		else
			st->rx_mcast++;
	}
	st->rx_hist[gnsim_mac_hist_bucket(flen + ETH_FCS_LEN)]++;
}

/*
 * Receive one frame from the cable.  Called with the sender's TX ring lock
 * held (BH disabled, RCU).  Returns -EAGAIN if the frame must stay in the
 * sender's ring (pause), 0 otherwise (delivered or counted as dropped).
 */
int gnsim_mac_rx(struct gn_mac *mac, const struct gnsim_frame *f,
		 bool may_hold)
{
	unsigned int len = f->len, flen = max_t(unsigned int, len, ETH_ZLEN);
	unsigned int q, nq = READ_ONCE(mac->nrxq);
	bool hashed, l4, roce;
	struct gnsim_mac_rxq *rxq;
	struct gn_rx_desc *d;
	const u8 *hdr = f->frag[0].p;
	u8 hbuf[128];
	u32 hash = 0;
	u16 status;
	__wsum csum;
	u8 *dst;

	/* the parser looks at the first 128 bytes */
	if (f->frag[0].len < min_t(unsigned int, len, sizeof(hbuf))) {
		unsigned int i, n = 0, c;

		for (i = 0; i < f->nfrags && n < sizeof(hbuf); i++) {
			c = min_t(unsigned int, f->frag[i].len, sizeof(hbuf) - n);
			memcpy(hbuf + n, f->frag[i].p, c);
			n += c;
		}
		hdr = hbuf;
	}
	hashed = gnsim_mac_classify(mac, hdr, min_t(unsigned int, len, sizeof(hbuf)),
				    nq, &hash, &q, &l4, &roce);
	rxq = &mac->rxq[q];

	if (roce && READ_ONCE(mac->roce_en)) {
		spin_lock(&rxq->lock);
		rxq->st.roce_rx_frames++;
		gnsim_mac_count_rx(&rxq->st, hdr, flen);
		spin_unlock(&rxq->lock);
		gnsim_mac_roce_rx(mac, f);
		return 0;
	}

	spin_lock(&rxq->lock);
	if (!rxq->ring || rxq->head == rxq->tail) {
		if (rxq->ring && may_hold && READ_ONCE(mac->tx_pause)) {
			if (!rxq->xoff)
				rxq->st.rx_pause_sent++;
			rxq->xoff = true;
			spin_unlock(&rxq->lock);
			return -EAGAIN;
		}
		rxq->st.rx_no_buffer++;
		spin_unlock(&rxq->lock);
		return 0;
	}
	d = &rxq->ring[rxq->head & (rxq->size - 1)];
	if (len > READ_ONCE(mac->max_frame) || flen > le16_to_cpu(d->buf_len)) {
		rxq->st.rx_too_long++;
		spin_unlock(&rxq->lock);
		return 0;
	}
	dst = gnsim_mac_dma_virt(mac, le64_to_cpu(d->addr));
	csum = gnsim_frame_copy(f, dst);
	if (len < flen)
		memset(dst + len, 0, flen - len);
	status = GN_DESC_DONE | GN_RXD_CSUM;
	if (hashed)
		status |= GN_RXD_HASH | (l4 ? GN_RXD_HASH_L4 : 0);
	d->csum = cpu_to_le32((__force u32)csum);
	d->len = cpu_to_le16(flen);
	d->hash = cpu_to_le32(hash);
	/* the frame and the fields before the status word */
	smp_wmb();
	WRITE_ONCE(d->status, cpu_to_le16(status));
	rxq->head++;
	rxq->st.rx_frames++;
	gnsim_mac_count_rx(&rxq->st, hdr, flen);
	spin_unlock(&rxq->lock);
	gnsim_mac_irq(mac, q);
	return 0;
}

static void gnsim_mac_count_tx(struct gn_mac_stats *st, const struct gnsim_frame *f)
{
	unsigned int len = max_t(unsigned int, f->len, ETH_ZLEN);
	const u8 *da = f->frag[0].p;

	st->tx_frames++;
	st->tx_bytes += len;
	if (f->frag[0].len >= ETH_ALEN && is_multicast_ether_addr(da)) {
		if (is_broadcast_ether_addr(da))
			st->tx_bcast++;
		else
			st->tx_mcast++;
	}
	st->tx_hist[gnsim_mac_hist_bucket(len + ETH_FCS_LEN)]++;
}

/*
 * Put @f on the cable: out through uplink @up if there is one, else to
 * @peer, with gnsim_mac_rx() unless a fault is set on @mac.  Same context
 * and return value as gnsim_mac_rx().
 */
static int gnsim_mac_wire(struct gn_mac *mac, struct gn_mac *peer,
			  struct gnsim_uplink *up, const struct gnsim_frame *f,
			  bool may_hold)
{
	if (up) {
		gnsim_uplink_xmit(mac, up, f);
		return 0;
	}
	if (likely(!READ_ONCE(mac->fault.on)))
		return gnsim_mac_rx(peer, f, may_hold);
	return gnsim_mac_fault_xmit(mac, peer, f, may_hold);
}

/*
 * Gather the frame starting at descriptor @head.  Returns the number of
 * descriptors it spans, 0 if its last descriptor is not posted yet, or a
 * negative count of descriptors to complete with GN_TXD_ERROR.
 */
static int gnsim_mac_tx_gather(struct gn_mac *mac, struct gnsim_mac_txq *txq,
			       struct gnsim_frame *f)
{
	u32 head = txq->head, avail = txq->prod - txq->head;
	const struct gn_tx_desc *d, *first;
	unsigned int n = 0;
	u16 flags;

	first = &txq->ring[head & (txq->size - 1)];
	f->len = 0;
	do {
		if (n == avail)
			return 0;
		if (n == GN_MAC_MAX_FRAGS)
			return -(int)n;
		d = &txq->ring[(head + n) & (txq->size - 1)];
		flags = le16_to_cpu(d->flags);
		f->frag[n].p = gnsim_mac_dma_virt(mac, le64_to_cpu(d->addr));
		f->frag[n].len = le16_to_cpu(d->len);
		f->len += f->frag[n].len;
		n++;
	} while (!(flags & GN_TXD_EOP));
	f->nfrags = n;
	f->csum_start = -1;
	f->mss = 0;
	flags = le16_to_cpu(first->flags);
	if (flags & GN_TXD_CSUM) {
		f->csum_start = le16_to_cpu(first->csum_start);
		f->csum_offset = le16_to_cpu(first->csum_offset);
		if (f->csum_start + f->csum_offset + 2 > f->len)
			return -(int)n;
	}
	if (f->len < ETH_HLEN || !f->frag[0].len)
		return -(int)n;
	if (flags & GN_TXD_TSO) {
		f->mss = le16_to_cpu(first->mss);
		f->hdr_len = le16_to_cpu(first->hdr_len);
		if (!(flags & GN_TXD_CSUM) || !f->mss ||
		    f->hdr_len > GN_TSO_MAX_HDR || f->hdr_len >= f->len ||
		    f->csum_start < ETH_HLEN + 20 ||
		    f->csum_start + sizeof(struct tcphdr) > f->hdr_len)
			return -(int)n;
		gnsim_frame_read(f, 0, txq->tso_tmpl, f->hdr_len);
		if (!gnsim_tso_hdr_ok(f, txq->tso_tmpl))
			return -(int)n;
	}
	return n;
}

/* Consume the TX descriptors of ring @q up to the producer index. */
static void gnsim_mac_tx_process(struct gn_mac *mac, unsigned int q)
{
	struct gnsim_mac_txq *txq = &mac->txq[q];
	struct gnsim_frame *f = &txq->frame;
	unsigned int i, done = 0;
	struct gnsim_uplink *up;
	struct gn_mac *peer;
	bool link, hold;
	u16 status;
	int n;

	rcu_read_lock();
	local_bh_disable();
	spin_lock(&txq->lock);
	txq->held = false;
	if (!txq->ring)
		goto out;
	peer = rcu_dereference(mac->peer);
	up = rcu_dereference(mac->uplink);
	link = READ_ONCE(mac->link) && (peer || up);
	/* 802.3x pause is between two ports: an uplink never holds */
	hold = READ_ONCE(mac->rx_pause) && peer;
	while (txq->head != txq->prod) {
		n = gnsim_mac_tx_gather(mac, txq, f);
		if (!n)
			break;
		status = GN_DESC_DONE;
		if (n < 0) {
			n = -n;
			txq->st.tx_errors++;
			status |= GN_TXD_ERROR;
		} else if (!link) {
			txq->st.tx_no_carrier++;
			status |= GN_TXD_NO_CARRIER;
		} else if (f->mss) {
			unsigned int k = txq->tso_next;

			while (gnsim_tso_segment(f, k, txq->tso_tmpl,
						 txq->tso_hdr, &txq->seg)) {
				if (gnsim_mac_wire(mac, peer, up, &txq->seg,
						   hold) == -EAGAIN)
					break;
				gnsim_mac_count_tx(&txq->st, &txq->seg);
				k++;
			}
			if (k * f->mss + f->hdr_len < f->len) {
				txq->tso_next = k;
				txq->held = true;
				txq->st.tx_paused++;
				break;
			}
			txq->tso_next = 0;
		} else {
			if (gnsim_mac_wire(mac, peer, up, f, hold) == -EAGAIN) {
				txq->held = true;
				txq->st.tx_paused++;
				break;
			}
			gnsim_mac_count_tx(&txq->st, f);
		}
		txq->tso_next = 0;
		/* status last: the driver reads it before anything else */
		smp_wmb();
		for (i = 0; i < n; i++)
			WRITE_ONCE(txq->ring[(txq->head + i) & (txq->size - 1)].status,
				   cpu_to_le16(status));
		txq->head += n;
		done++;
	}
out:
	spin_unlock(&txq->lock);
	if (done)
		gnsim_mac_irq(mac, q);
	local_bh_enable();
	rcu_read_unlock();
}

/*
 * A train of RoCE engine frames of one flow to @mac, whose RoCE engine
 * takes it in one call, as gnsim_mac_rx() would deliver each frame (BH
 * disabled, RCU).  The first frame's headers, in its first piece, stand
 * for all.  Returns false if the train is not for @mac's engine: the
 * caller sends the frames one by one.
 */
static bool gnsim_mac_roce_rx_train(struct gn_mac *mac,
				    const struct gnsim_mac_roce_frame *fr,
				    unsigned int n)
{
	unsigned int i, q, nq = READ_ONCE(mac->nrxq);
	bool l4, roce;
	struct gnsim_mac_rxq *rxq;
	gnsim_mac_roce_rx_t fn;
	u32 hash = 0;

	gnsim_mac_classify(mac, fr[0].frags[0].p, fr[0].frags[0].len, nq, &hash,
			   &q, &l4, &roce);
	if (!roce || !READ_ONCE(mac->roce_en))
		return false;
	rxq = &mac->rxq[q];
	spin_lock(&rxq->lock);
	rxq->st.roce_rx_frames += n;
	for (i = 0; i < n; i++)
		gnsim_mac_count_rx(&rxq->st, fr[i].frags[0].p,
				   max_t(unsigned int, fr[i].len, ETH_ZLEN));
	spin_unlock(&rxq->lock);
	fn = READ_ONCE(mac->roce_fn);
	if (fn)
		fn(READ_ONCE(mac->roce_ctx), fr, n, GN_MAC_ROCE_ICRC_OK);
	return true;
}

int gnsim_mac_roce_xmit_train(struct gn_mac *mac,
			      const struct gnsim_mac_roce_frame *frames,
			      unsigned int n, u32 flags)
{
	struct gnsim_frame f = {
		.csum_start = -1,
		.icrc_insert = flags & GN_MAC_ROCE_ICRC_INSERT,
	};
	bool train = n > 1 && f.icrc_insert;
	struct gnsim_uplink *up;
	struct gn_mac *peer;
	unsigned int i, k;
	int ret = 0;

	BUILD_BUG_ON(ARRAY_SIZE(f.frag) < GN_MAC_ROCE_MAX_FRAGS);
	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		const struct gnsim_mac_roce_frame *fr = &frames[i];
		unsigned int len = 0;

		if (!fr->nfrags || fr->nfrags > GN_MAC_ROCE_MAX_FRAGS ||
		    fr->frags[0].len < ETH_HLEN)
			return -EINVAL;
		for (k = 0; k < fr->nfrags; k++)
			len += fr->frags[k].len;
		if (len != fr->len)
			return -EINVAL;
	}
	rcu_read_lock();
	local_bh_disable();
	peer = rcu_dereference(mac->peer);
	up = rcu_dereference(mac->uplink);
	if (!READ_ONCE(mac->link) || (!peer && !up)) {
		ret = -ENOLINK;
	} else if (train && peer && !READ_ONCE(mac->fault.on) &&
		   gnsim_mac_roce_rx_train(peer, frames, n)) {
		/* whole, to the peer's engine */
	} else {
		/*
		 * Not under roce_lock: the peer's RoCE handler runs in this
		 * context (it must defer its own transmissions).
		 */
		train = false;
		for (i = 0; i < n; i++) {
			f.nfrags = frames[i].nfrags;
			f.len = frames[i].len;
			memcpy(f.frag, frames[i].frags,
			       f.nfrags * sizeof(f.frag[0]));
			gnsim_mac_wire(mac, peer, up, &f, false);
		}
	}
	spin_lock(&mac->roce_lock);
	if (ret) {
		mac->roce_st.tx_no_carrier += n;
	} else {
		mac->roce_st.roce_tx_frames += n;
		mac->roce_st.roce_tx_trains += train;
		for (i = 0; i < n; i++) {
			f.frag[0] = frames[i].frags[0];
			f.len = frames[i].len;
			gnsim_mac_count_tx(&mac->roce_st, &f);
		}
	}
	spin_unlock(&mac->roce_lock);
	local_bh_enable();
	rcu_read_unlock();
	return ret;
}

int gnsim_mac_roce_xmitv(struct gn_mac *mac, const struct gnsim_mac_roce_frag *frags,
			 unsigned int nfrags, u32 flags)
{
	struct gnsim_mac_roce_frame fr = { .frags = frags, .nfrags = nfrags };
	unsigned int i;

	for (i = 0; i < nfrags && nfrags <= GN_MAC_ROCE_MAX_FRAGS; i++)
		fr.len += frags[i].len;
	return gnsim_mac_roce_xmit_train(mac, &fr, 1, flags);
}

/* Retry every TX ring (pause released, link lost, config changed). */
static void gnsim_mac_tx_kick(struct gn_mac *mac)
{
	unsigned int q;

	for (q = 0; q < GN_MAC_MAX_QUEUES; q++)
		if (READ_ONCE(mac->txq[q].ring))
			gnsim_mac_tx_process(mac, q);
}

static void gnsim_mac_tx_doorbell(struct gn_mac *mac, unsigned int q,
				  u32 prod)
{
	struct gnsim_mac_txq *txq = &mac->txq[q];

	spin_lock_bh(&txq->lock);
	txq->prod = prod;
	spin_unlock_bh(&txq->lock);
	gnsim_mac_tx_process(mac, q);
}

static void gnsim_mac_rx_doorbell(struct gn_mac *mac, unsigned int q,
				  u32 tail)
{
	struct gnsim_mac_rxq *rxq = &mac->rxq[q];
	struct gn_mac *peer;
	bool xoff;

	rcu_read_lock();
	spin_lock_bh(&rxq->lock);
	rxq->tail = tail;
	xoff = rxq->xoff;
	rxq->xoff = false;
	spin_unlock_bh(&rxq->lock);
	if (xoff) {
		/* XON: the sender may go on */
		peer = rcu_dereference(mac->peer);
		if (peer)
			gnsim_mac_tx_kick(peer);
	}
	rcu_read_unlock();
}

static int gnsim_mac_tx_ring_set(struct gn_mac *mac, unsigned int q,
				 dma_addr_t base, unsigned int size)
{
	struct gnsim_mac_txq *txq;

	if (q >= GN_MAC_MAX_QUEUES ||
	    (size && (!is_power_of_2(size) || size > GN_RING_MAX)))
		return -EINVAL;
	txq = &mac->txq[q];
	spin_lock_bh(&txq->lock);
	WRITE_ONCE(txq->ring, size ? gnsim_mac_dma_virt(mac, base) : NULL);
	txq->size = size;
	txq->head = 0;
	txq->prod = 0;
	txq->held = false;
	txq->tso_next = 0;
	spin_unlock_bh(&txq->lock);
	return 0;
}

static int gnsim_mac_rx_ring_set(struct gn_mac *mac, unsigned int q,
				 dma_addr_t base, unsigned int size)
{
	struct gnsim_mac_rxq *rxq;
	struct gn_mac *peer;

	if (q >= GN_MAC_MAX_QUEUES ||
	    (size && (!is_power_of_2(size) || size > GN_RING_MAX)))
		return -EINVAL;
	rxq = &mac->rxq[q];
	spin_lock_bh(&rxq->lock);
	rxq->ring = size ? gnsim_mac_dma_virt(mac, base) : NULL;
	rxq->size = size;
	rxq->head = 0;
	rxq->tail = 0;
	rxq->xoff = false;
	spin_unlock_bh(&rxq->lock);
	/* a sender held by the old ring must not wait forever */
	rcu_read_lock();
	peer = rcu_dereference(mac->peer);
	if (peer)
		gnsim_mac_tx_kick(peer);
	rcu_read_unlock();
	return 0;
}

/* After this returns, no DMA or interrupt from before the call is running. */
static void gnsim_mac_quiesce(struct gn_mac *mac)
{
	synchronize_rcu();
}

static void gnsim_mac_set_rx_queues(struct gn_mac *mac, unsigned int n)
{
	WRITE_ONCE(mac->nrxq, clamp_t(unsigned int, n, 1, GN_MAC_MAX_QUEUES));
}

static void gnsim_mac_set_max_frame(struct gn_mac *mac, unsigned int len)
{
	struct gnsim_uplink *up;

	WRITE_ONCE(mac->max_frame, len);
	rcu_read_lock();
	up = rcu_dereference(mac->uplink);
	if (up)
		gnsim_uplink_check_mtu(up, len);
	rcu_read_unlock();
}

/* ----------------------------------------------------------- link state */

void gnsim_mac_update_link(struct gn_mac *mac)
{
	struct gn_mac *peer = rtnl_dereference(mac->peer);
	struct gnsim_uplink *uplink = rtnl_dereference(mac->uplink);
	bool up = mac->enabled && (peer ? peer->enabled :
				   uplink && gnsim_uplink_carrier(uplink));

	if (up == mac->link)
		return;
	WRITE_ONCE(mac->link, up);
	if (!up)
		gnsim_mac_tx_kick(mac);	/* held frames: no carrier now */
	if (mac->ops && mac->ops->link_change)
		mac->ops->link_change(mac->ctx, up);
}

static void gnsim_mac_enable(struct gn_mac *mac, bool enable)
{
	struct gn_mac *peer;

	ASSERT_RTNL();
	WRITE_ONCE(mac->enabled, enable);
	gnsim_mac_update_link(mac);
	peer = rtnl_dereference(mac->peer);
	if (peer)
		gnsim_mac_update_link(peer);
}

/* The cable-detect pin of the port's cage: a cable (to a port or an uplink). */
bool gnsim_mac_linked(struct gn_mac *mac)
{
	ASSERT_RTNL();
	return rtnl_dereference(mac->peer) || rtnl_dereference(mac->uplink);
}

int gnsim_mac_link(struct gn_mac *a, struct gn_mac *b)
{
	ASSERT_RTNL();
	if (a == b)
		return -EINVAL;
	if (gnsim_mac_linked(a) || gnsim_mac_linked(b))
		return -EBUSY;
	rcu_assign_pointer(a->peer, b);
	rcu_assign_pointer(b->peer, a);
	gnsim_mac_update_link(a);
	gnsim_mac_update_link(b);
	return 0;
}

int gnsim_mac_unlink(struct gn_mac *mac)
{
	struct gn_mac *peer;

	ASSERT_RTNL();
	if (rtnl_dereference(mac->uplink)) {
		gnsim_uplink_detach(mac);
		return 0;
	}
	peer = rtnl_dereference(mac->peer);
	if (!peer)
		return -ENOENT;
	RCU_INIT_POINTER(mac->peer, NULL);
	RCU_INIT_POINTER(peer->peer, NULL);
	/* no frame is held for the wrong peer: the cable is gone */
	gnsim_fault_flush(mac, false);
	gnsim_fault_flush(peer, false);
	gnsim_mac_update_link(mac);
	gnsim_mac_update_link(peer);
	return 0;
}

/* ---------------------------------------------------------------- misc */

static void gnsim_mac_set_pause(struct gn_mac *mac, bool rx_pause,
				bool tx_pause)
{
	struct gn_mac *peer;

	ASSERT_RTNL();
	WRITE_ONCE(mac->rx_pause, rx_pause);
	WRITE_ONCE(mac->tx_pause, tx_pause);
	/* frames held under the old setting: resend or drop them now */
	gnsim_mac_tx_kick(mac);
	peer = rtnl_dereference(mac->peer);
	if (peer)
		gnsim_mac_tx_kick(peer);
}

static void gnsim_mac_get_pause(struct gn_mac *mac, bool *rx_pause,
				bool *tx_pause)
{
	*rx_pause = READ_ONCE(mac->rx_pause);
	*tx_pause = READ_ONCE(mac->tx_pause);
}

static void gnsim_mac_stats_add(struct gn_mac_stats *sum,
				const struct gn_mac_stats *st)
{
	const u64 *s = (const u64 *)st;
	u64 *d = (u64 *)sum;
	unsigned int i;

	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		d[i] += s[i];
}

static void gnsim_mac_get_stats(struct gn_mac *mac, struct gn_mac_stats *stats)
{
	unsigned int q;

	memset(stats, 0, sizeof(*stats));
	for (q = 0; q < GN_MAC_MAX_QUEUES; q++) {
		spin_lock_bh(&mac->txq[q].lock);
		gnsim_mac_stats_add(stats, &mac->txq[q].st);
		spin_unlock_bh(&mac->txq[q].lock);
		spin_lock_bh(&mac->rxq[q].lock);
		gnsim_mac_stats_add(stats, &mac->rxq[q].st);
		spin_unlock_bh(&mac->rxq[q].lock);
	}
	spin_lock_bh(&mac->roce_lock);
	gnsim_mac_stats_add(stats, &mac->roce_st);
	spin_unlock_bh(&mac->roce_lock);
	spin_lock_bh(&mac->fault.lock);
	stats->fault_dropped = mac->fault.dropped;
	stats->fault_duplicated = mac->fault.duplicated;
	stats->fault_reordered = mac->fault.reordered;
	stats->fault_corrupted = mac->fault.corrupted;
	spin_unlock_bh(&mac->fault.lock);
	stats->tx_uplink_dropped = atomic64_read(&mac->uplink_tx_dropped);
	stats->rx_uplink_dropped = atomic64_read(&mac->uplink_rx_dropped);
}

static void gnsim_mac_set_roce(struct gn_mac *mac, bool enable)
{
	WRITE_ONCE(mac->roce_en, enable);
}

/*
 * Install (fn != NULL) or remove the RoCE engine's receive handler.  On
 * removal, no call of the old handler is running when this returns.
 */
void gnsim_mac_set_roce_handler(struct gn_mac *mac, gnsim_mac_roce_rx_t fn,
				void *ctx)
{
	if (fn) {
		WRITE_ONCE(mac->roce_ctx, ctx);
		/* the context before the handler that uses it */
		smp_wmb();
		WRITE_ONCE(mac->roce_fn, fn);
	} else {
		WRITE_ONCE(mac->roce_fn, NULL);
		synchronize_rcu();
		WRITE_ONCE(mac->roce_ctx, NULL);
	}
}

void gnsim_mac_roce_set_xoff(struct gn_mac *mac, bool xoff)
{
	WRITE_ONCE(mac->roce_xoff, xoff);
}

bool gnsim_mac_roce_tx_paused(struct gn_mac *mac)
{
	struct gn_mac *peer;
	bool paused;

	rcu_read_lock();
	peer = rcu_dereference(mac->peer);
	paused = peer && READ_ONCE(peer->roce_xoff);
	rcu_read_unlock();
	return paused;
}

static void gnsim_mac_bind(struct gn_mac *mac,
			   const struct gn_mac_client_ops *ops, void *ctx)
{
	ASSERT_RTNL();
	WRITE_ONCE(mac->ctx, ctx);
	WRITE_ONCE(mac->ops, ops);
}

/* The driver lets go of the port: its cable faults end with it. */
static void gnsim_mac_unbind(struct gn_mac *mac)
{
	unsigned int k;

	ASSERT_RTNL();
	for (k = 0; k < GN_MAC_FAULTS; k++)
		gnsim_mac_set_fault(mac, k, 0);
	WRITE_ONCE(mac->ops, NULL);
	synchronize_rcu();
	WRITE_ONCE(mac->ctx, NULL);
}

const struct gaudi_nic_mac_ops gnsim_mac_ops = {
	.bind = gnsim_mac_bind,
	.unbind = gnsim_mac_unbind,
	.enable = gnsim_mac_enable,
	.cabled = gnsim_mac_linked,
	.set_max_frame = gnsim_mac_set_max_frame,
	.set_rx_queues = gnsim_mac_set_rx_queues,
	.tx_ring_set = gnsim_mac_tx_ring_set,
	.rx_ring_set = gnsim_mac_rx_ring_set,
	.quiesce = gnsim_mac_quiesce,
	.tx_doorbell = gnsim_mac_tx_doorbell,
	.rx_doorbell = gnsim_mac_rx_doorbell,
	.set_rss = gnsim_mac_set_rss,
	.get_rss = gnsim_mac_get_rss,
	.set_pause = gnsim_mac_set_pause,
	.get_pause = gnsim_mac_get_pause,
	.get_stats = gnsim_mac_get_stats,
	.set_roce = gnsim_mac_set_roce,
};

struct gn_mac *gnsim_mac_alloc(struct device *dma_dev, unsigned int port,
			       struct dentry *debugfs)
{
	u8 key[GN_MAC_RSS_KEY_SIZE], indir[GN_MAC_RSS_INDIR_SIZE] = {};
	struct gnsim_mac_rss *rss;
	struct gn_mac *mac;
	unsigned int q;

	mac = kzalloc(sizeof(*mac), GFP_KERNEL);
	if (!mac)
		return NULL;
	mac->dma_dev = dma_dev;
	mac->port = port;
	/* reset state: a random key, every entry on ring 0 */
	get_random_bytes(key, sizeof(key));
	rss = gnsim_mac_rss_alloc(key, indir);
	if (!rss) {
		kfree(mac);
		return NULL;
	}
	RCU_INIT_POINTER(mac->rss, rss);
	mac->roce_en = true;
	mac->max_frame = GN_MAC_FRAME_LEN(ETH_DATA_LEN);
	mac->nrxq = 1;
	spin_lock_init(&mac->roce_lock);
	spin_lock_init(&mac->fault.lock);
	for (q = 0; q < GN_MAC_MAX_QUEUES; q++) {
		spin_lock_init(&mac->txq[q].lock);
		spin_lock_init(&mac->rxq[q].lock);
	}
	gnsim_mac_fault_debugfs(mac, debugfs);
	return mac;
}

void gnsim_mac_free(struct gn_mac *mac)
{
	unsigned int k;

	if (!mac)
		return;
	/* the knobs first: no write can set a fault from here on */
	for (k = 0; k < GN_MAC_FAULTS; k++)
		debugfs_remove(mac->fault_knob[k].dentry);
	rtnl_lock();
	gnsim_mac_unlink(mac);
	rtnl_unlock();
	synchronize_rcu();
	/* unlinked: no sender can hold a frame any more (see the struct) */
	kfree(mac->fault.held);
	kfree(rcu_dereference_protected(mac->rss, true));
	kfree(mac);
}
