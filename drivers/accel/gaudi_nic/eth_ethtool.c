// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic Ethernet: ethtool operations.
 *
 * The emulated cable has no bit rate, so the link reports an unknown speed
 * and lane count (full duplex), rather than a made-up figure.
 *
 * Standard statistics groups: eth-mac (the IEEE 802.3 MAC counters the
 * emulated MAC keeps), rmon (size histograms) and pause.  There is no
 * eth-ctrl group: pause is signalled over the emulated cable without
 * MAC-control frames, and the MAC has no FCS to check.
 *
 * RSS: the MAC's Toeplitz key and 128-entry indirection table (one table:
 * no additional RSS contexts, no ntuple filters).  Unless the user set a
 * table, it spreads over the enabled channels and follows their count.
 *
 * Not reported, because the device has none of them: FEC (the emulated
 * cable has no PMA), link modes and autonegotiation (no PHY), interrupt
 * moderation (one interrupt per completion batch, NAPI).
 */
#include <linux/ethtool.h>
#include <linux/log2.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <linux/gaudi_nic/hw.h>
#include "eth.h"

static const char gn_eth_q_strings[][ETH_GSTRING_LEN] = {
	"rx%u_packets", "rx%u_bytes", "rx%u_dropped",
	"tx%u_packets", "tx%u_bytes", "tx%u_stops", "tx%u_wakes",
	"tx%u_dropped",
};

static const char gn_eth_mac_strings[][ETH_GSTRING_LEN] = {
	"mac_tx_frames", "mac_tx_no_carrier", "mac_tx_errors", "mac_tx_paused",
	"mac_rx_frames", "mac_rx_no_buffer", "mac_rx_too_long",
	"mac_rx_pause_sent", "roce_rx_frames", "roce_tx_frames", "roce_tx_trains",
	"mac_fault_dropped", "mac_fault_duplicated", "mac_fault_reordered",
	"mac_fault_corrupted", "mac_tx_uplink_dropped", "mac_rx_uplink_dropped",
};

static void gn_eth_get_drvinfo(struct net_device *ndev,
			       struct ethtool_drvinfo *info)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	strscpy(info->driver, GN_ETH_DRV_NAME, sizeof(info->driver));
	strscpy(info->fw_version, port->gadev->gdev->hw->fw_version,
		sizeof(info->fw_version));
	strscpy(info->bus_info, dev_name(port->dma_dev),
		sizeof(info->bus_info));
}

static int gn_eth_get_link_ksettings(struct net_device *ndev,
				     struct ethtool_link_ksettings *ks)
{
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.speed = SPEED_UNKNOWN;
	ks->base.duplex = DUPLEX_FULL;
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	ks->lanes = 0;
	return 0;
}

static void gn_eth_get_ringparam(struct net_device *ndev,
				 struct ethtool_ringparam *ring,
				 struct kernel_ethtool_ringparam *kring,
				 struct netlink_ext_ack *extack)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	ring->rx_max_pending = GN_RING_MAX;
	ring->tx_max_pending = GN_RING_MAX;
	ring->rx_pending = port->params.rx_size;
	ring->tx_pending = port->params.tx_size;
}

static int gn_eth_set_ringparam(struct net_device *ndev,
				struct ethtool_ringparam *ring,
				struct kernel_ethtool_ringparam *kring,
				struct netlink_ext_ack *extack)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_params p = port->params;

	if (ring->rx_pending < GN_RING_MIN || ring->tx_pending < GN_RING_MIN) {
		NL_SET_ERR_MSG_FMT_MOD(extack, "rings need at least %u descriptors",
				       GN_RING_MIN);
		return -EINVAL;
	}
	/* the hardware takes power-of-two ring sizes */
	p.rx_size = roundup_pow_of_two(ring->rx_pending);
	p.tx_size = roundup_pow_of_two(ring->tx_pending);
	if (p.rx_size > GN_RING_MAX || p.tx_size > GN_RING_MAX)
		return -EINVAL;
	if (p.rx_size == port->params.rx_size &&
	    p.tx_size == port->params.tx_size)
		return 0;
	return gn_eth_reconfigure(port, &p);
}

static void gn_eth_get_channels(struct net_device *ndev,
				struct ethtool_channels *ch)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	ch->max_combined = GN_MAC_MAX_QUEUES;
	ch->combined_count = port->params.num_channels;
}

static int gn_eth_set_channels(struct net_device *ndev,
			       struct ethtool_channels *ch)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_params p = port->params;
	int ret;

	if (!ch->combined_count || ch->rx_count || ch->tx_count ||
	    ch->other_count)
		return -EINVAL;
	if (ch->combined_count == p.num_channels)
		return 0;
	p.num_channels = ch->combined_count;
	ret = gn_eth_reconfigure(port, &p);
	/* a table the user set stays (the core keeps it within the count) */
	if (!ret && !netif_is_rxfh_configured(ndev))
		ret = gn_eth_rss_default(port, p.num_channels);
	return ret;
}

/* The MAC's RSS table spread over @n channels (under RTNL). */
int gn_eth_rss_default(struct gn_eth_port *port, unsigned int n)
{
	u32 indir[GN_MAC_RSS_INDIR_SIZE];
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < GN_MAC_RSS_INDIR_SIZE; i++)
		indir[i] = ethtool_rxfh_indir_default(i, n);
	return port->mac_ops->set_rss(port->mac, NULL, indir);
}

static u32 gn_eth_get_rxfh_key_size(struct net_device *ndev)
{
	return GN_MAC_RSS_KEY_SIZE;
}

static u32 gn_eth_get_rxfh_indir_size(struct net_device *ndev)
{
	return GN_MAC_RSS_INDIR_SIZE;
}

static int gn_eth_get_rxfh(struct net_device *ndev,
			   struct ethtool_rxfh_param *rxfh)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	rxfh->hfunc = ETH_RSS_HASH_TOP;
	port->mac_ops->get_rss(port->mac, rxfh->key, rxfh->indir);
	return 0;
}

static int gn_eth_set_rxfh(struct net_device *ndev,
			   struct ethtool_rxfh_param *rxfh,
			   struct netlink_ext_ack *extack)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	if (rxfh->hfunc != ETH_RSS_HASH_NO_CHANGE &&
	    rxfh->hfunc != ETH_RSS_HASH_TOP) {
		NL_SET_ERR_MSG_MOD(extack, "the MAC hashes with Toeplitz only");
		return -EOPNOTSUPP;
	}
	if (rxfh->input_xfrm != RXH_XFRM_NO_CHANGE && rxfh->input_xfrm) {
		NL_SET_ERR_MSG_MOD(extack, "no input transformation");
		return -EOPNOTSUPP;
	}
	if (!rxfh->key && !rxfh->indir)
		return 0;
	return port->mac_ops->set_rss(port->mac, rxfh->key, rxfh->indir);
}

static int gn_eth_get_rxfh_fields(struct net_device *ndev,
				  struct ethtool_rxfh_fields *f)
{
	switch (f->flow_type) {
	case TCP_V4_FLOW:
	case UDP_V4_FLOW:
	case TCP_V6_FLOW:
	case UDP_V6_FLOW:
		f->data = RXH_IP_SRC | RXH_IP_DST | RXH_L4_B_0_1 | RXH_L4_B_2_3;
		return 0;
	case SCTP_V4_FLOW:
	case AH_ESP_V4_FLOW:
	case IPV4_FLOW:
	case SCTP_V6_FLOW:
	case AH_ESP_V6_FLOW:
	case IPV6_FLOW:
		f->data = RXH_IP_SRC | RXH_IP_DST;
		return 0;
	default:
		f->data = 0;
		return 0;
	}
}

static int gn_eth_get_rxnfc(struct net_device *ndev, struct ethtool_rxnfc *nfc,
			    u32 *rule_locs)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	if (nfc->cmd != ETHTOOL_GRXRINGS)
		return -EOPNOTSUPP;
	nfc->data = port->params.num_channels;
	return 0;
}

static int gn_eth_get_coalesce(struct net_device *ndev,
			       struct ethtool_coalesce *ec,
			       struct kernel_ethtool_coalesce *kec,
			       struct netlink_ext_ack *extack)
{
	/* no moderation: the counters are read live (stats-block-usecs 0) */
	return 0;
}

static int gn_eth_get_link_ext_state(struct net_device *ndev,
				     struct ethtool_link_ext_state_info *info)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	if (port->mac_ops->cabled(port->mac))
		return -ENODATA;
	info->link_ext_state = ETHTOOL_LINK_EXT_STATE_NO_CABLE;
	return 0;
}

static void gn_eth_get_pauseparam(struct net_device *ndev,
				  struct ethtool_pauseparam *pp)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	bool rx, tx;

	port->mac_ops->get_pause(port->mac, &rx, &tx);
	pp->autoneg = AUTONEG_DISABLE;
	pp->rx_pause = rx;
	pp->tx_pause = tx;
}

static int gn_eth_set_pauseparam(struct net_device *ndev,
				 struct ethtool_pauseparam *pp)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	if (pp->autoneg)
		return -EOPNOTSUPP;
	port->mac_ops->set_pause(port->mac, pp->rx_pause, pp->tx_pause);
	return 0;
}

static void gn_eth_get_pause_stats(struct net_device *ndev,
				   struct ethtool_pause_stats *ps)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_mac_stats ms;

	port->mac_ops->get_stats(port->mac, &ms);
	ps->tx_pause_frames = ms.rx_pause_sent;
	ps->rx_pause_frames = ms.tx_paused;
}

static int gn_eth_get_sset_count(struct net_device *ndev, int sset)
{
	struct gn_eth_port *port = netdev_priv(ndev);

	if (sset != ETH_SS_STATS)
		return -EOPNOTSUPP;
	return port->params.num_channels * ARRAY_SIZE(gn_eth_q_strings) +
	       ARRAY_SIZE(gn_eth_mac_strings);
}

static void gn_eth_get_strings(struct net_device *ndev, u32 sset, u8 *data)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	unsigned int q, i;

	if (sset != ETH_SS_STATS)
		return;
	for (q = 0; q < port->params.num_channels; q++)
		for (i = 0; i < ARRAY_SIZE(gn_eth_q_strings); i++)
			ethtool_sprintf(&data, gn_eth_q_strings[i], q);
	for (i = 0; i < ARRAY_SIZE(gn_eth_mac_strings); i++)
		ethtool_puts(&data, gn_eth_mac_strings[i]);
}

static void gn_eth_get_ethtool_stats(struct net_device *ndev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_qstats_snap s;
	struct gn_mac_stats ms;
	unsigned int q;

	for (q = 0; q < port->params.num_channels; q++) {
		gn_eth_qstats_read(&port->qstats[q], &s);
		*data++ = s.rx_packets;
		*data++ = s.rx_bytes;
		*data++ = s.rx_alloc_fail + s.rx_flushed;
		*data++ = s.tx_packets;
		*data++ = s.tx_bytes;
		*data++ = s.tx_stops;
		*data++ = s.tx_wakes;
		*data++ = s.tx_dropped + s.tx_flushed + s.tx_no_carrier +
			  s.tx_errors;
	}
	port->mac_ops->get_stats(port->mac, &ms);
	*data++ = ms.tx_frames;
	*data++ = ms.tx_no_carrier;
	*data++ = ms.tx_errors;
	*data++ = ms.tx_paused;
	*data++ = ms.rx_frames;
	*data++ = ms.rx_no_buffer;
	*data++ = ms.rx_too_long;
	*data++ = ms.rx_pause_sent;
	*data++ = ms.roce_rx_frames;
	*data++ = ms.roce_tx_frames;
	*data++ = ms.roce_tx_trains;
	*data++ = ms.fault_dropped;
	*data++ = ms.fault_duplicated;
	*data++ = ms.fault_reordered;
	*data++ = ms.fault_corrupted;
	*data++ = ms.tx_uplink_dropped;
	*data++ = ms.rx_uplink_dropped;
}

static void gn_eth_get_eth_mac_stats(struct net_device *ndev,
				     struct ethtool_eth_mac_stats *mac)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_mac_stats ms;

	/* one MAC per port, no pMAC: only the aggregate source */
	if (mac->src != ETHTOOL_MAC_STATS_SRC_AGGREGATE)
		return;
	port->mac_ops->get_stats(port->mac, &ms);
	mac->FramesTransmittedOK = ms.tx_frames;
	mac->OctetsTransmittedOK = ms.tx_bytes;
	mac->MulticastFramesXmittedOK = ms.tx_mcast;
	mac->BroadcastFramesXmittedOK = ms.tx_bcast;
	mac->FramesLostDueToIntMACXmitError = ms.tx_errors;
	/* frames for the RoCE engine are received by the MAC too */
	mac->FramesReceivedOK = ms.rx_frames + ms.roce_rx_frames;
	mac->OctetsReceivedOK = ms.rx_bytes;
	mac->MulticastFramesReceivedOK = ms.rx_mcast;
	mac->BroadcastFramesReceivedOK = ms.rx_bcast;
	mac->FramesLostDueToIntMACRcvError = ms.rx_no_buffer;
	mac->FrameTooLongErrors = ms.rx_too_long;
}

static const struct ethtool_rmon_hist_range gn_eth_rmon_ranges[] = {
	{    0,   64 },
	{   65,  127 },
	{  128,  255 },
	{  256,  511 },
	{  512, 1023 },
	{ 1024, 1518 },
	{ 1519, GN_MAC_FRAME_LEN(GN_MTU_MAX) + ETH_FCS_LEN },
	{}
};

static void gn_eth_get_rmon_stats(struct net_device *ndev,
				  struct ethtool_rmon_stats *rmon,
				  const struct ethtool_rmon_hist_range **ranges)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_mac_stats ms;
	unsigned int i;

	port->mac_ops->get_stats(port->mac, &ms);
	rmon->oversize_pkts = ms.rx_too_long;
	for (i = 0; i < GN_MAC_HIST; i++) {
		rmon->hist[i] = ms.rx_hist[i];
		rmon->hist_tx[i] = ms.tx_hist[i];
	}
	*ranges = gn_eth_rmon_ranges;
}

const struct ethtool_ops gn_eth_ethtool_ops = {
	.get_drvinfo		= gn_eth_get_drvinfo,
	.get_link_ksettings	= gn_eth_get_link_ksettings,
	.get_link		= ethtool_op_get_link,
	.get_link_ext_state	= gn_eth_get_link_ext_state,
	.get_coalesce		= gn_eth_get_coalesce,
	.get_rxnfc		= gn_eth_get_rxnfc,
	.get_rxfh_key_size	= gn_eth_get_rxfh_key_size,
	.get_rxfh_indir_size	= gn_eth_get_rxfh_indir_size,
	.get_rxfh		= gn_eth_get_rxfh,
	.set_rxfh		= gn_eth_set_rxfh,
	.get_rxfh_fields	= gn_eth_get_rxfh_fields,
	.get_ringparam		= gn_eth_get_ringparam,
	.set_ringparam		= gn_eth_set_ringparam,
	.get_channels		= gn_eth_get_channels,
	.set_channels		= gn_eth_set_channels,
	.get_pauseparam		= gn_eth_get_pauseparam,
	.set_pauseparam		= gn_eth_set_pauseparam,
	.get_pause_stats	= gn_eth_get_pause_stats,
	.get_eth_mac_stats	= gn_eth_get_eth_mac_stats,
	.get_sset_count		= gn_eth_get_sset_count,
	.get_strings		= gn_eth_get_strings,
	.get_ethtool_stats	= gn_eth_get_ethtool_stats,
	.get_rmon_stats		= gn_eth_get_rmon_stats,
};
