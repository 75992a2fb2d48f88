// SPDX-License-Identifier: GPL-2.0
/*
 * Uplinks: a port whose cable ends in a Linux network interface.
 *
 * link_device (sim/cable.c) with one end a gaudi_nic port and the other
 * any Ethernet netdev (a veth, a virtio-net, a physical NIC) makes that
 * netdev the far end of the port's cable, the way a bridge port or
 * macvlan's passthru mode takes a netdev:
 *  - every frame the port puts on its cable (its TX rings, TSO segments,
 *    the RoCE engine's frames) leaves through the uplink, its checksums
 *    and ICRC inserted, as a wire carries it;
 *  - every frame arriving on the uplink goes to the port, through an
 *    rx_handler, the uplink promiscuous and its LRO off; nothing reaches
 *    the uplink's own stack.  Aggregated (GRO) or locally built GSO frames
 *    are segmented, and checksums left to offload are completed, first:
 *    the port only ever sees what a wire could carry;
 *  - the port's carrier follows the uplink's (running, carrier on).
 *
 * Transmission is deferred.  The MAC copies the frame into an skb in its
 * own context (BH off, maybe a TX ring lock held) and a BH work item hands
 * the queue to dev_queue_xmit().  So the uplink's qdisc and driver locks
 * never nest inside the MAC's, nor inside the port netdev's transmit lock
 * (both netdevs are Ethernet: one lockdep class), and a frame never comes
 * back into the MAC in its sender's context.
 *
 * MTU: a frame whose payload exceeds the uplink's MTU is dropped here and
 * counted (tx_uplink_dropped), as the uplink would drop it; a port MTU
 * above the uplink's is reported when either changes.  Frames the uplink
 * itself drops (its qdisc, its driver) are counted by the uplink.
 *
 * What an uplink lacks: cable fault injection (tc netem on the uplink
 * does that, on the kernel's own path), 802.3x pause and the engines'
 * XOFF (they stay between ports on a direct cable) and trains (each frame
 * goes alone).
 *
 * Lifetime: struct gnsim_uplink is its netdev's rx_handler_data and its
 * MAC's ->uplink, both RCU, set and cleared under RTNL.  The cable ends
 * (gnsim_uplink_detach()) on unlink_device, on removal of the device, and
 * when the uplink unregisters or leaves its namespace (NETDEV_UNREGISTER).
 */
#include <linux/etherdevice.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/gso.h>
#include "mac_priv.h"

/* Frames waiting for dev_queue_xmit(), at most; more are dropped. */
#define GN_UPLINK_TXQ_MAX	4096

struct gnsim_uplink {
	struct net_device *dev;
	netdevice_tracker dev_tracker;
	struct gn_mac *mac;
	struct sk_buff_head txq;	/* for tx_work; its own lock */
	struct work_struct tx_work;	/* on system_bh_wq */
};

static rx_handler_result_t gnsim_uplink_rx(struct sk_buff **pskb);

static const char *gnsim_mac_name(const struct gn_mac *mac)
{
	return dev_name(mac->dma_dev);
}

/* Under RTNL: the uplink of @dev, or NULL if @dev is nobody's uplink. */
static struct gnsim_uplink *gnsim_uplink_of(const struct net_device *dev)
{
	ASSERT_RTNL();
	if (rcu_access_pointer(dev->rx_handler) != gnsim_uplink_rx)
		return NULL;
	return rtnl_dereference(dev->rx_handler_data);
}

struct gn_mac *gnsim_uplink_mac(const struct net_device *dev)
{
	struct gnsim_uplink *up = gnsim_uplink_of(dev);

	return up ? up->mac : NULL;
}

bool gnsim_uplink_carrier(const struct gnsim_uplink *up)
{
	ASSERT_RTNL();
	return netif_running(up->dev) && netif_carrier_ok(up->dev);
}

/* Report a port MTU (as @max_frame) above the uplink's. */
void gnsim_uplink_check_mtu(const struct gnsim_uplink *up, u32 max_frame)
{
	if (max_frame > GN_MAC_FRAME_LEN(READ_ONCE(up->dev->mtu)))
		pr_warn("gaudi_nic: %s port %u: MTU %u is above the MTU %u of its uplink %s: longer frames are dropped (mac_tx_uplink_dropped); give both the same MTU\n",
			gnsim_mac_name(up->mac), up->mac->port,
			max_frame - GN_MAC_FRAME_LEN(0),
			READ_ONCE(up->dev->mtu), up->dev->name);
}

static void gnsim_uplink_tx_work(struct work_struct *work)
{
	struct gnsim_uplink *up = container_of(work, struct gnsim_uplink, tx_work);
	struct sk_buff_head q;
	struct sk_buff *skb;

	__skb_queue_head_init(&q);
	spin_lock_bh(&up->txq.lock);
	skb_queue_splice_init(&up->txq, &q);
	spin_unlock_bh(&up->txq.lock);
	/* what the uplink drops, it counts (qdisc, tx_dropped) */
	while ((skb = __skb_dequeue(&q)))
		dev_queue_xmit(skb);
}

/* The MAC puts @f on the cable: out through @up (BH disabled, RCU). */
void gnsim_uplink_xmit(struct gn_mac *mac, struct gnsim_uplink *up,
		       const struct gnsim_frame *f)
{
	struct net_device *dev = up->dev;
	struct sk_buff *skb;
	unsigned int l3;

	if (skb_queue_len_lockless(&up->txq) >= GN_UPLINK_TXQ_MAX)
		goto drop;
	skb = __netdev_alloc_skb(dev, max_t(unsigned int, f->len, ETH_ZLEN),
				 GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		goto drop;
	gnsim_frame_copy(f, skb_put(skb, f->len));
	l3 = gnsim_l3_off(skb->data);
	if (f->len > l3 && f->len - l3 > READ_ONCE(dev->mtu)) {
		net_warn_ratelimited("gaudi_nic: %s port %u: a frame of %u bytes is above the MTU %u of uplink %s: dropped\n",
				     gnsim_mac_name(mac), mac->port, f->len,
				     READ_ONCE(dev->mtu), dev->name);
		kfree_skb(skb);
		goto drop;
	}
	if (f->len < ETH_ZLEN)
		skb_put_zero(skb, ETH_ZLEN - f->len);
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, l3);
	skb->protocol = eth_hdr(skb)->h_proto;
	skb->dev = dev;
	skb_queue_tail(&up->txq, skb);
	queue_work(system_bh_wq, &up->tx_work);
	return;
drop:
	atomic64_inc(&mac->uplink_tx_dropped);
}

/* One frame from the uplink into the port (softirq, RCU); consumes @skb. */
static void gnsim_uplink_rx_one(struct gn_mac *mac, struct sk_buff *skb)
{
	struct gnsim_frame f = { .nfrags = 1, .csum_start = -1 };

	if (skb->ip_summed == CHECKSUM_PARTIAL && skb_checksum_help(skb))
		goto drop;
	if (skb_linearize(skb) || skb->len < ETH_HLEN || !READ_ONCE(mac->link))
		goto drop;
	f.len = skb->len;
	f.frag[0].p = skb->data;
	f.frag[0].len = skb->len;
	gnsim_mac_rx(mac, &f, false);
	consume_skb(skb);
	return;
drop:
	atomic64_inc(&mac->uplink_rx_dropped);
	kfree_skb(skb);
}

static rx_handler_result_t gnsim_uplink_rx(struct sk_buff **pskb)
{
	struct sk_buff *skb = *pskb, *segs, *next;
	struct gnsim_uplink *up;
	struct gn_mac *mac;

	if (unlikely(skb->pkt_type == PACKET_LOOPBACK))
		return RX_HANDLER_PASS;
	up = rcu_dereference(skb->dev->rx_handler_data);
	mac = up->mac;
	skb = skb_share_check(skb, GFP_ATOMIC);
	if (!skb)
		goto drop;
	/* the frame as it was on the wire: from its Ethernet header */
	skb_push_rcsum(skb, skb->data - skb_mac_header(skb));
	if (skb_vlan_tag_present(skb)) {
		skb = __vlan_hwaccel_push_inside(skb);
		if (!skb)
			goto drop;
	}
	if (!skb_is_gso(skb)) {
		gnsim_uplink_rx_one(mac, skb);
		return RX_HANDLER_CONSUMED;
	}
	segs = skb_gso_segment(skb, 0);
	if (IS_ERR_OR_NULL(segs)) {
		kfree_skb(skb);
		goto drop;
	}
	consume_skb(skb);
	skb_list_walk_safe(segs, skb, next) {
		skb_mark_not_on_list(skb);
		gnsim_uplink_rx_one(mac, skb);
	}
	return RX_HANDLER_CONSUMED;
drop:
	atomic64_inc(&mac->uplink_rx_dropped);
	return RX_HANDLER_CONSUMED;
}

bool gnsim_uplink_ok(const struct net_device *dev)
{
	return dev->type == ARPHRD_ETHER && dev->addr_len == ETH_ALEN &&
	       !(dev->flags & IFF_LOOPBACK);
}

int gnsim_mac_uplink(struct gn_mac *mac, struct net_device *dev)
{
	struct gnsim_uplink *up;
	int ret;

	ASSERT_RTNL();
	if (rtnl_dereference(mac->peer) || rtnl_dereference(mac->uplink))
		return -EBUSY;
	if (!gnsim_uplink_ok(dev))
		return -EINVAL;
	up = kzalloc(sizeof(*up), GFP_KERNEL);
	if (!up)
		return -ENOMEM;
	up->dev = dev;
	up->mac = mac;
	skb_queue_head_init(&up->txq);
	INIT_WORK(&up->tx_work, gnsim_uplink_tx_work);
	ret = dev_set_promiscuity(dev, 1);
	if (ret)
		goto err_free;
	ret = netdev_rx_handler_register(dev, gnsim_uplink_rx, up);
	if (ret) {
		pr_err("gaudi_nic: link_device: %s already has a receive handler (a bridge or bond port, or another port's uplink)\n",
		       dev->name);
		goto err_promisc;
	}
	dev_disable_lro(dev);
	netdev_hold(dev, &up->dev_tracker, GFP_KERNEL);
	rcu_assign_pointer(mac->uplink, up);
	gnsim_mac_update_link(mac);
	gnsim_uplink_check_mtu(up, READ_ONCE(mac->max_frame));
	return 0;

err_promisc:
	dev_set_promiscuity(dev, -1);
err_free:
	kfree(up);
	return ret;
}

void gnsim_uplink_detach(struct gn_mac *mac)
{
	struct gnsim_uplink *up = rtnl_dereference(mac->uplink);

	ASSERT_RTNL();
	if (!up)
		return;
	RCU_INIT_POINTER(mac->uplink, NULL);
	/* waits for readers: no sender or receiver sees @up afterwards */
	netdev_rx_handler_unregister(up->dev);
	cancel_work_sync(&up->tx_work);
	skb_queue_purge(&up->txq);
	dev_set_promiscuity(up->dev, -1);
	netdev_put(up->dev, &up->dev_tracker);
	kfree(up);
	gnsim_mac_update_link(mac);
}

static int gnsim_uplink_event(struct notifier_block *nb, unsigned long event,
			      void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct gnsim_uplink *up = gnsim_uplink_of(dev);

	if (!up)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_UNREGISTER:	/* also: leaving its namespace */
		pr_info("gaudi_nic: %s port %u: uplink %s unregistered or left its namespace: cable ended\n",
			gnsim_mac_name(up->mac), up->mac->port, dev->name);
		gnsim_uplink_detach(up->mac);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		gnsim_mac_update_link(up->mac);
		break;
	case NETDEV_CHANGEMTU:
		gnsim_uplink_check_mtu(up, READ_ONCE(up->mac->max_frame));
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block gnsim_uplink_nb = {
	.notifier_call = gnsim_uplink_event,
};

int gnsim_uplink_init(void)
{
	return register_netdevice_notifier(&gnsim_uplink_nb);
}

void gnsim_uplink_exit(void)
{
	unregister_netdevice_notifier(&gnsim_uplink_nb);
}
