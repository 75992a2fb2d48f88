// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic Ethernet: the rings, the channels and the data path.
 *
 * Each port runs a set of channels (ethtool -L combined); a channel is one
 * TX ring, one RX ring, one interrupt vector and one NAPI instance.  All
 * rings of a port live in a struct gn_eth_chset that is replaced as a
 * whole on MTU, ring-size or channel changes: the new set is allocated
 * first, the old one is stopped and freed only once the new one exists,
 * so a failed allocation leaves the port as it was (gn_eth_reconfigure()
 * in eth_main.c).
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/tcp.h>
#include <net/netdev_queues.h>
#include "eth.h"

static unsigned int gn_tx_free(const struct gn_eth_txring *tx)
{
	return tx->size - (tx->prod - READ_ONCE(tx->clean));
}

/* ---------------------------------------------------------------- rings */

static void gn_eth_tx_unmap(struct gn_eth_port *port, struct gn_eth_buf *b)
{
	if (b->page)
		dma_unmap_page(port->dma_dev, b->dma, b->len, DMA_TO_DEVICE);
	else
		dma_unmap_single(port->dma_dev, b->dma, b->len, DMA_TO_DEVICE);
}

static int gn_eth_tx_alloc(struct gn_eth_port *port, struct gn_eth_txring *tx,
			   unsigned int size)
{
	tx->size = size;
	tx->desc = dma_alloc_coherent(port->dma_dev, size * sizeof(*tx->desc),
				      &tx->desc_dma, GFP_KERNEL);
	if (!tx->desc)
		return -ENOMEM;
	tx->bufs = kvcalloc(size, sizeof(*tx->bufs), GFP_KERNEL);
	if (!tx->bufs)
		return -ENOMEM;
	return 0;
}

static void gn_eth_tx_free(struct gn_eth_port *port, struct gn_eth_txring *tx)
{
	kvfree(tx->bufs);
	if (tx->desc)
		dma_free_coherent(port->dma_dev, tx->size * sizeof(*tx->desc),
				  tx->desc, tx->desc_dma);
}

static int gn_eth_rx_post(struct gn_eth_port *port, struct gn_eth_rxring *rx,
			  unsigned int i, struct sk_buff *skb)
{
	struct gn_rx_desc *d = &rx->desc[i];
	dma_addr_t dma;

	dma = dma_map_single(port->dma_dev, skb->data, rx->buf_len,
			     DMA_FROM_DEVICE);
	if (dma_mapping_error(port->dma_dev, dma))
		return -ENOMEM;
	rx->bufs[i].skb = skb;
	rx->bufs[i].dma = dma;
	d->addr = cpu_to_le64(dma);
	d->buf_len = cpu_to_le16(rx->buf_len);
	d->len = 0;
	d->status = 0;
	return 0;
}

static int gn_eth_rx_alloc(struct gn_eth_port *port, struct gn_eth_rxring *rx,
			   unsigned int size, unsigned int buf_len)
{
	struct sk_buff *skb;
	unsigned int i;

	rx->size = size;
	rx->buf_len = buf_len;
	rx->desc = dma_alloc_coherent(port->dma_dev, size * sizeof(*rx->desc),
				      &rx->desc_dma, GFP_KERNEL);
	if (!rx->desc)
		return -ENOMEM;
	rx->bufs = kvcalloc(size, sizeof(*rx->bufs), GFP_KERNEL);
	if (!rx->bufs)
		return -ENOMEM;
	for (i = 0; i < size; i++) {
		skb = __netdev_alloc_skb_ip_align(port->ndev, buf_len,
						  GFP_KERNEL);
		if (!skb)
			return -ENOMEM;
		if (gn_eth_rx_post(port, rx, i, skb)) {
			kfree_skb(skb);
			return -ENOMEM;
		}
	}
	return 0;
}

static void gn_eth_rx_free(struct gn_eth_port *port, struct gn_eth_rxring *rx)
{
	unsigned int i;

	if (rx->bufs) {
		for (i = 0; i < rx->size; i++) {
			if (!rx->bufs[i].skb)
				continue;
			dma_unmap_single(port->dma_dev, rx->bufs[i].dma,
					 rx->buf_len, DMA_FROM_DEVICE);
			kfree_skb(rx->bufs[i].skb);
		}
		kvfree(rx->bufs);
	}
	if (rx->desc)
		dma_free_coherent(port->dma_dev, rx->size * sizeof(*rx->desc),
				  rx->desc, rx->desc_dma);
}

/* ------------------------------------------------------------ data path */

static void gn_eth_tx_clean(struct gn_eth_channel *ch, int budget)
{
	struct gn_eth_port *port = ch->port;
	struct gn_eth_txring *tx = &ch->tx;
	unsigned int pkts = 0, bytes = 0, dropped = 0, dbytes = 0, nocarrier = 0;
	unsigned int segs = 0, wire = 0;
	u32 clean = tx->clean, prod = READ_ONCE(tx->prod);

	while (clean != prod) {
		unsigned int i = clean & (tx->size - 1);
		struct gn_eth_buf *b = &tx->bufs[i];
		u16 st = le16_to_cpu(READ_ONCE(tx->desc[i].status));

		if (!(st & GN_DESC_DONE))
			break;
		dma_rmb();
		gn_eth_tx_unmap(port, b);
		if (b->skb) {
			if (st & (GN_TXD_NO_CARRIER | GN_TXD_ERROR)) {
				dropped++;
				dbytes += b->bytes;
				nocarrier += !!(st & GN_TXD_NO_CARRIER);
			} else {
				pkts++;
				bytes += b->bytes;
				segs += b->segs;
				wire += b->wire_bytes;
			}
			napi_consume_skb(b->skb, budget);
			b->skb = NULL;
		}
		clean++;
	}
	if (clean == tx->clean)
		return;
	WRITE_ONCE(tx->clean, clean);
	u64_stats_update_begin(&ch->stats->txc.syncp);
	u64_stats_add(&ch->stats->txc.packets, segs);
	u64_stats_add(&ch->stats->txc.bytes, wire);
	u64_stats_add(&ch->stats->txc.no_carrier, nocarrier);
	u64_stats_add(&ch->stats->txc.errors, dropped - nocarrier);
	u64_stats_update_end(&ch->stats->txc.syncp);
	if (!netif_txq_completed_wake(ch->txq, pkts + dropped, bytes + dbytes,
				      gn_tx_free(tx), GN_TX_WAKE_THRESH)) {
		u64_stats_update_begin(&ch->stats->txc.syncp);
		u64_stats_inc(&ch->stats->txc.wakes);
		u64_stats_update_end(&ch->stats->txc.syncp);
	}
}

static int gn_eth_rx_poll(struct gn_eth_channel *ch, int budget)
{
	struct gn_eth_port *port = ch->port;
	struct net_device *ndev = port->ndev;
	struct gn_eth_rxring *rx = &ch->rx;
	unsigned int pkts = 0, bytes = 0, fails = 0;
	int done = 0;

	while (done < budget) {
		unsigned int i = rx->clean & (rx->size - 1);
		struct gn_rx_desc *d = &rx->desc[i];
		struct gn_eth_buf *b = &rx->bufs[i];
		struct sk_buff *skb, *nskb;
		unsigned int len;
		dma_addr_t dma;
		u16 st;

		st = le16_to_cpu(READ_ONCE(d->status));
		if (!(st & GN_DESC_DONE))
			break;
		dma_rmb();
		len = le16_to_cpu(d->len);
		skb = b->skb;
		dma = b->dma;
		nskb = napi_alloc_skb(&ch->napi, rx->buf_len);
		if (!nskb || gn_eth_rx_post(port, rx, i, nskb)) {
			/* no new buffer: drop the frame, keep the old one */
			if (nskb)
				napi_consume_skb(nskb, budget);
			fails++;
			d->len = 0;
			WRITE_ONCE(d->status, 0);
		} else {
			dma_unmap_single(port->dma_dev, dma, rx->buf_len,
					 DMA_FROM_DEVICE);
			skb_put(skb, len);
			skb->protocol = eth_type_trans(skb, ndev);
			if ((st & GN_RXD_HASH) && (ndev->features & NETIF_F_RXHASH))
				skb_set_hash(skb, le32_to_cpu(d->hash),
					     (st & GN_RXD_HASH_L4) ?
					     PKT_HASH_TYPE_L4 : PKT_HASH_TYPE_L3);
			if ((st & GN_RXD_CSUM) && (ndev->features & NETIF_F_RXCSUM)) {
				skb->ip_summed = CHECKSUM_COMPLETE;
				skb->csum = (__force __wsum)le32_to_cpu(d->csum);
			}
			skb_record_rx_queue(skb, ch->idx);
			pkts++;
			bytes += len;
			napi_gro_receive(&ch->napi, skb);
		}
		rx->clean++;
		done++;
	}
	if (!done)
		return 0;
	u64_stats_update_begin(&ch->stats->rxq.syncp);
	u64_stats_add(&ch->stats->rxq.packets, pkts);
	u64_stats_add(&ch->stats->rxq.bytes, bytes);
	u64_stats_add(&ch->stats->rxq.alloc_fail, fails);
	u64_stats_update_end(&ch->stats->rxq.syncp);
	dma_wmb();
	port->mac_ops->rx_doorbell(port->mac, ch->idx, rx->clean + rx->size);
	return done;
}

static int gn_eth_poll(struct napi_struct *napi, int budget)
{
	struct gn_eth_channel *ch = container_of(napi, struct gn_eth_channel,
						 napi);
	int done;

	gn_eth_tx_clean(ch, budget);
	if (!budget)
		return 0;
	done = gn_eth_rx_poll(ch, budget);
	if (done < budget)
		napi_complete_done(napi, done);
	return done;
}

static void gn_eth_tx_drop(struct gn_eth_channel *ch, struct sk_buff *skb)
{
	struct gn_eth_txq_stats *st = &ch->port->qstats[ch->idx].txq;

	u64_stats_update_begin(&st->syncp);
	u64_stats_inc(&st->dropped);
	u64_stats_update_end(&st->syncp);
	dev_kfree_skb_any(skb);
}

/* Map @skb into descriptors from tx->prod on; returns the count or 0. */
static unsigned int gn_eth_tx_map(struct gn_eth_channel *ch,
				  struct sk_buff *skb)
{
	struct gn_eth_port *port = ch->port;
	struct gn_eth_txring *tx = &ch->tx;
	unsigned int nfrags = skb_shinfo(skb)->nr_frags;
	unsigned int n = 0, i, f, mask = tx->size - 1;
	struct gn_eth_buf *b;
	struct gn_tx_desc *d;
	dma_addr_t dma;

	if (skb_headlen(skb)) {
		dma = dma_map_single(port->dma_dev, skb->data, skb_headlen(skb),
				     DMA_TO_DEVICE);
		if (dma_mapping_error(port->dma_dev, dma))
			return 0;
		b = &tx->bufs[tx->prod & mask];
		*b = (struct gn_eth_buf){ .dma = dma, .len = skb_headlen(skb) };
		n++;
	}
	for (f = 0; f < nfrags; f++) {
		const skb_frag_t *frag = &skb_shinfo(skb)->frags[f];

		dma = skb_frag_dma_map(port->dma_dev, frag, 0,
				       skb_frag_size(frag), DMA_TO_DEVICE);
		if (dma_mapping_error(port->dma_dev, dma))
			goto err;
		b = &tx->bufs[(tx->prod + n) & mask];
		*b = (struct gn_eth_buf){
			.dma = dma, .len = skb_frag_size(frag), .page = true,
		};
		n++;
	}
	for (i = 0; i < n; i++) {
		b = &tx->bufs[(tx->prod + i) & mask];
		d = &tx->desc[(tx->prod + i) & mask];
		d->addr = cpu_to_le64(b->dma);
		d->len = cpu_to_le16(b->len);
		d->status = 0;
		d->flags = cpu_to_le16(i == n - 1 ? GN_TXD_EOP : 0);
	}
	d = &tx->desc[tx->prod & mask];
	if (skb->ip_summed == CHECKSUM_PARTIAL) {
		d->flags |= cpu_to_le16(GN_TXD_CSUM);
		d->csum_start = cpu_to_le16(skb_checksum_start_offset(skb));
		d->csum_offset = cpu_to_le16(skb->csum_offset);
	}
	if (skb_is_gso(skb)) {
		d->flags |= cpu_to_le16(GN_TXD_TSO);
		d->mss = cpu_to_le16(skb_shinfo(skb)->gso_size);
		d->hdr_len = cpu_to_le16(skb_tcp_all_headers(skb));
	}
	b = &tx->bufs[(tx->prod + n - 1) & mask];
	b->skb = skb;
	b->bytes = skb->len;
	b->segs = 1;
	b->wire_bytes = skb->len;
	if (skb_is_gso(skb)) {
		b->segs = skb_shinfo(skb)->gso_segs;
		b->wire_bytes += (b->segs - 1) * skb_tcp_all_headers(skb);
	}
	return n;

err:
	while (n--)
		gn_eth_tx_unmap(port, &tx->bufs[(tx->prod + n) & mask]);
	return 0;
}

netdev_tx_t gn_eth_xmit(struct sk_buff *skb, struct net_device *ndev)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_chset *chs = READ_ONCE(port->chs);
	unsigned int q = skb_get_queue_mapping(skb);
	struct gn_eth_channel *ch;
	struct gn_eth_txring *tx;
	unsigned int n, len;
	bool ring;

	if (unlikely(!chs || q >= chs->p.num_channels)) {
		struct gn_eth_txq_stats *st = &port->qstats[q % GN_MAC_MAX_QUEUES].txq;

		u64_stats_update_begin(&st->syncp);
		u64_stats_inc(&st->dropped);
		u64_stats_update_end(&st->syncp);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	ch = &chs->ch[q];
	tx = &ch->tx;
	if (skb_shinfo(skb)->nr_frags + 1 > GN_TX_MAX_DESC &&
	    skb_linearize(skb)) {
		gn_eth_tx_drop(ch, skb);
		return NETDEV_TX_OK;
	}
	if (unlikely(gn_tx_free(tx) < skb_shinfo(skb)->nr_frags + 1)) {
		netif_tx_stop_queue(ch->txq);
		return NETDEV_TX_BUSY;
	}
	len = skb->len;
	n = gn_eth_tx_map(ch, skb);
	if (unlikely(!n)) {
		gn_eth_tx_drop(ch, skb);
		return NETDEV_TX_OK;
	}
	WRITE_ONCE(tx->prod, tx->prod + n);
	skb_tx_timestamp(skb);

	ring = __netdev_tx_sent_queue(ch->txq, len, netdev_xmit_more());
	if (!netif_txq_maybe_stop(ch->txq, gn_tx_free(tx), GN_TX_MAX_DESC,
				  GN_TX_WAKE_THRESH)) {
		u64_stats_update_begin(&ch->stats->txq.syncp);
		u64_stats_inc(&ch->stats->txq.stops);
		u64_stats_update_end(&ch->stats->txq.syncp);
		ring = true;
	}
	if (ring) {
		dma_wmb();
		port->mac_ops->tx_doorbell(port->mac, q, tx->prod);
	}
	return NETDEV_TX_OK;
}

/* --------------------------------------------------------- channel sets */

void gn_eth_chset_free(struct gn_eth_port *port, struct gn_eth_chset *chs)
{
	unsigned int i;

	if (!chs)
		return;
	for (i = 0; i < chs->p.num_channels; i++) {
		struct gn_eth_channel *ch = &chs->ch[i];

		if (chs->napi_added)
			netif_napi_del(&ch->napi);
		gn_eth_tx_free(port, &ch->tx);
		gn_eth_rx_free(port, &ch->rx);
	}
	kfree(chs);
}

struct gn_eth_chset *gn_eth_chset_alloc(struct gn_eth_port *port,
					const struct gn_eth_params *p)
{
	struct gn_eth_chset *chs;
	unsigned int i;
	int ret;

	if (READ_ONCE(port->fail_alloc)) {
		WRITE_ONCE(port->fail_alloc, port->fail_alloc - 1);
		return ERR_PTR(-ENOMEM);
	}
	chs = kzalloc(struct_size(chs, ch, p->num_channels), GFP_KERNEL);
	if (!chs)
		return ERR_PTR(-ENOMEM);
	chs->p = *p;
	for (i = 0; i < p->num_channels; i++) {
		struct gn_eth_channel *ch = &chs->ch[i];

		ch->port = port;
		ch->idx = i;
		ch->stats = &port->qstats[i];
		ch->txq = netdev_get_tx_queue(port->ndev, i);
		ret = gn_eth_tx_alloc(port, &ch->tx, p->tx_size);
		if (!ret)
			ret = gn_eth_rx_alloc(port, &ch->rx, p->rx_size,
					      GN_MAC_FRAME_LEN(p->mtu));
		if (ret) {
			gn_eth_chset_free(port, chs);
			return ERR_PTR(ret);
		}
	}
	for (i = 0; i < p->num_channels; i++)
		netif_napi_add(port->ndev, &chs->ch[i].napi, gn_eth_poll);
	chs->napi_added = true;
	return chs;
}

/* Under RTNL, TX stopped: hand the rings to the MAC and start. */
void gn_eth_chset_activate(struct gn_eth_port *port, struct gn_eth_chset *chs)
{
	unsigned int i, n = chs->p.num_channels;

	ASSERT_RTNL();
	for (i = 0; i < n; i++) {
		struct gn_eth_channel *ch = &chs->ch[i];

		port->mac_ops->tx_ring_set(port->mac, i, ch->tx.desc_dma, ch->tx.size);
		port->mac_ops->rx_ring_set(port->mac, i, ch->rx.desc_dma, ch->rx.size);
		napi_enable(&ch->napi);
	}
	port->mac_ops->set_rx_queues(port->mac, n);
	port->mac_ops->set_max_frame(port->mac, GN_MAC_FRAME_LEN(chs->p.mtu));
	WRITE_ONCE(port->chs, chs);
	/* post every RX buffer */
	dma_wmb();
	for (i = 0; i < n; i++)
		port->mac_ops->rx_doorbell(port->mac, i,
				   chs->ch[i].rx.clean + chs->ch[i].rx.size);
	chs->active = true;
}

/*
 * Under RTNL, TX disabled: take the rings back from the MAC.  Frames the
 * MAC completed but NAPI did not see yet are accounted here; frames never
 * sent or never passed up are counted as flushed.  The set is left idle
 * and can be activated again.
 */
void gn_eth_chset_deactivate(struct gn_eth_port *port, struct gn_eth_chset *chs)
{
	unsigned int i, n = chs->p.num_channels;

	ASSERT_RTNL();
	for (i = 0; i < n; i++) {
		port->mac_ops->tx_ring_set(port->mac, i, 0, 0);
		port->mac_ops->rx_ring_set(port->mac, i, 0, 0);
	}
	port->mac_ops->quiesce(port->mac);
	for (i = 0; i < n; i++)
		napi_disable(&chs->ch[i].napi);
	WRITE_ONCE(port->chs, NULL);

	for (i = 0; i < n; i++) {
		struct gn_eth_channel *ch = &chs->ch[i];
		struct gn_eth_txring *tx = &ch->tx;
		struct gn_eth_rxring *rx = &ch->rx;
		u64 pkts = 0, bytes = 0, nocarrier = 0, flushed = 0;
		u64 rx_flushed = 0, errors = 0;
		unsigned int j;

		for (; tx->clean != tx->prod; tx->clean++) {
			unsigned int k = tx->clean & (tx->size - 1);
			struct gn_eth_buf *b = &tx->bufs[k];
			u16 st = le16_to_cpu(tx->desc[k].status);

			gn_eth_tx_unmap(port, b);
			if (!b->skb)
				continue;
			if (!(st & GN_DESC_DONE)) {
				flushed++;
			} else if (st & GN_TXD_NO_CARRIER) {
				nocarrier++;
			} else if (st & GN_TXD_ERROR) {
				errors++;
			} else {
				pkts += b->segs;
				bytes += b->wire_bytes;
			}
			dev_kfree_skb_any(b->skb);
			b->skb = NULL;
		}
		tx->clean = 0;
		tx->prod = 0;
		netdev_tx_reset_queue(ch->txq);

		for (j = 0; j < rx->size; j++) {
			if (le16_to_cpu(rx->desc[j].status) & GN_DESC_DONE)
				rx_flushed++;
			rx->desc[j].status = 0;
		}
		rx->clean = 0;

		u64_stats_update_begin(&ch->stats->txc.syncp);
		u64_stats_add(&ch->stats->txc.packets, pkts);
		u64_stats_add(&ch->stats->txc.bytes, bytes);
		u64_stats_add(&ch->stats->txc.no_carrier, nocarrier);
		u64_stats_add(&ch->stats->txc.flushed, flushed);
		u64_stats_add(&ch->stats->txc.errors, errors);
		u64_stats_update_end(&ch->stats->txc.syncp);
		u64_stats_update_begin(&ch->stats->rxq.syncp);
		u64_stats_add(&ch->stats->rxq.flushed, rx_flushed);
		u64_stats_update_end(&ch->stats->rxq.syncp);
	}
	chs->active = false;
}
