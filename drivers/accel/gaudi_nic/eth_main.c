// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic Ethernet auxiliary driver: binds to gaudi_nic.eth.N and
 * registers one netdev per NIC port, named gn<N>p<port>.  This file is
 * the netdev's control: open/stop, MTU and ring reconfiguration, stats,
 * the MAC's callbacks, probe and remove.  The rings, channels and the
 * data path (NAPI, xmit) are in eth_txrx.c; ethtool in eth_ethtool.c.
 */
#include <linux/debugfs.h>
#include <linux/etherdevice.h>
#include <linux/jhash.h>
#include <linux/module.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <net/netdev_queues.h>
#include "eth.h"

/* --------------------------------------------------------------- config */

int gn_eth_reconfigure(struct gn_eth_port *port, const struct gn_eth_params *p)
{
	struct net_device *ndev = port->ndev;
	struct gn_eth_chset *old = port->chs, *chs;
	int ret;

	ASSERT_RTNL();
	if (!netif_running(ndev) || !old) {
		if (p->num_channels != port->params.num_channels) {
			ret = netif_set_real_num_queues(ndev, p->num_channels,
							p->num_channels);
			if (ret)
				return ret;
		}
		port->params = *p;
		return 0;
	}
	/* allocate first: on failure nothing has changed */
	chs = gn_eth_chset_alloc(port, p);
	if (IS_ERR(chs)) {
		netdev_err(ndev, "cannot allocate rings (%u channels, tx %u, rx %u, mtu %u): %pe\n",
			   p->num_channels, p->tx_size, p->rx_size, p->mtu, chs);
		return PTR_ERR(chs);
	}
	netif_tx_disable(ndev);
	gn_eth_chset_deactivate(port, old);
	if (p->num_channels != old->p.num_channels) {
		ret = netif_set_real_num_queues(ndev, p->num_channels,
						p->num_channels);
		if (ret) {
			gn_eth_chset_activate(port, old);
			netif_tx_wake_all_queues(ndev);
			gn_eth_chset_free(port, chs);
			return ret;
		}
	}
	gn_eth_chset_activate(port, chs);
	port->params = *p;
	netif_tx_wake_all_queues(ndev);
	gn_eth_chset_free(port, old);
	return 0;
}

static int gn_eth_open(struct net_device *ndev)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_chset *chs;

	chs = gn_eth_chset_alloc(port, &port->params);
	if (IS_ERR(chs))
		return PTR_ERR(chs);
	gn_eth_chset_activate(port, chs);
	netif_tx_start_all_queues(ndev);
	port->mac_ops->enable(port->mac, true);
	return 0;
}

static int gn_eth_stop(struct net_device *ndev)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_chset *chs = port->chs;

	port->mac_ops->enable(port->mac, false);
	netif_tx_disable(ndev);
	if (chs) {
		gn_eth_chset_deactivate(port, chs);
		gn_eth_chset_free(port, chs);
	}
	return 0;
}

static int gn_eth_change_mtu(struct net_device *ndev, int new_mtu)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_params p = port->params;
	int ret;

	p.mtu = new_mtu;
	ret = gn_eth_reconfigure(port, &p);
	if (ret)
		return ret;
	WRITE_ONCE(ndev->mtu, new_mtu);
	if (!netif_running(ndev))
		port->mac_ops->set_max_frame(port->mac, GN_MAC_FRAME_LEN(new_mtu));
	return 0;
}

void gn_eth_qstats_read(const struct gn_eth_qstats *qs,
			struct gn_eth_qstats_snap *s)
{
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&qs->txq.syncp);
		s->tx_stops = u64_stats_read(&qs->txq.stops);
		s->tx_dropped = u64_stats_read(&qs->txq.dropped);
	} while (u64_stats_fetch_retry(&qs->txq.syncp, start));
	do {
		start = u64_stats_fetch_begin(&qs->txc.syncp);
		s->tx_packets = u64_stats_read(&qs->txc.packets);
		s->tx_bytes = u64_stats_read(&qs->txc.bytes);
		s->tx_no_carrier = u64_stats_read(&qs->txc.no_carrier);
		s->tx_flushed = u64_stats_read(&qs->txc.flushed);
		s->tx_wakes = u64_stats_read(&qs->txc.wakes);
		s->tx_errors = u64_stats_read(&qs->txc.errors);
	} while (u64_stats_fetch_retry(&qs->txc.syncp, start));
	do {
		start = u64_stats_fetch_begin(&qs->rxq.syncp);
		s->rx_packets = u64_stats_read(&qs->rxq.packets);
		s->rx_bytes = u64_stats_read(&qs->rxq.bytes);
		s->rx_alloc_fail = u64_stats_read(&qs->rxq.alloc_fail);
		s->rx_flushed = u64_stats_read(&qs->rxq.flushed);
	} while (u64_stats_fetch_retry(&qs->rxq.syncp, start));
}

static void gn_eth_get_stats64(struct net_device *ndev,
			       struct rtnl_link_stats64 *stats)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_qstats_snap s;
	struct gn_mac_stats ms;
	unsigned int q;

	for (q = 0; q < GN_MAC_MAX_QUEUES; q++) {
		gn_eth_qstats_read(&port->qstats[q], &s);
		stats->tx_packets += s.tx_packets;
		stats->tx_bytes += s.tx_bytes;
		stats->tx_dropped += s.tx_dropped + s.tx_flushed +
				     s.tx_no_carrier + s.tx_errors;
		stats->tx_errors += s.tx_errors;
		stats->tx_carrier_errors += s.tx_no_carrier;
		stats->rx_packets += s.rx_packets;
		stats->rx_bytes += s.rx_bytes;
		stats->rx_dropped += s.rx_alloc_fail + s.rx_flushed;
	}
	port->mac_ops->get_stats(port->mac, &ms);
	stats->rx_missed_errors = ms.rx_no_buffer;
	stats->rx_length_errors = ms.rx_too_long;
	stats->rx_errors = ms.rx_too_long;
	stats->multicast = ms.rx_mcast + ms.rx_bcast;
}

/*
 * Queue statistics (netdev-genl qstats).  The counters of a queue live
 * in the port, not in its rings, so they survive reconfiguration; the
 * queues not enabled now are the base.
 */
static void gn_eth_get_queue_stats_rx(struct net_device *ndev, int idx,
				      struct netdev_queue_stats_rx *rx)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_qstats_snap s;

	gn_eth_qstats_read(&port->qstats[idx], &s);
	rx->packets = s.rx_packets;
	rx->bytes = s.rx_bytes;
	rx->alloc_fail = s.rx_alloc_fail;
}

static void gn_eth_get_queue_stats_tx(struct net_device *ndev, int idx,
				      struct netdev_queue_stats_tx *tx)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_qstats_snap s;

	gn_eth_qstats_read(&port->qstats[idx], &s);
	tx->packets = s.tx_packets;
	tx->bytes = s.tx_bytes;
	tx->stop = s.tx_stops;
	tx->wake = s.tx_wakes;
}

static void gn_eth_get_base_stats(struct net_device *ndev,
				  struct netdev_queue_stats_rx *rx,
				  struct netdev_queue_stats_tx *tx)
{
	struct gn_eth_port *port = netdev_priv(ndev);
	struct gn_eth_qstats_snap s;
	unsigned int q;

	rx->packets = 0;
	rx->bytes = 0;
	rx->alloc_fail = 0;
	tx->packets = 0;
	tx->bytes = 0;
	tx->stop = 0;
	tx->wake = 0;
	for (q = ndev->real_num_rx_queues; q < GN_MAC_MAX_QUEUES; q++) {
		gn_eth_qstats_read(&port->qstats[q], &s);
		rx->packets += s.rx_packets;
		rx->bytes += s.rx_bytes;
		rx->alloc_fail += s.rx_alloc_fail;
		tx->packets += s.tx_packets;
		tx->bytes += s.tx_bytes;
		tx->stop += s.tx_stops;
		tx->wake += s.tx_wakes;
	}
}

static const struct netdev_stat_ops gn_eth_stat_ops = {
	.get_queue_stats_rx	= gn_eth_get_queue_stats_rx,
	.get_queue_stats_tx	= gn_eth_get_queue_stats_tx,
	.get_base_stats		= gn_eth_get_base_stats,
};

static const struct net_device_ops gn_eth_netdev_ops = {
	.ndo_open		= gn_eth_open,
	.ndo_stop		= gn_eth_stop,
	.ndo_start_xmit		= gn_eth_xmit,
	.ndo_change_mtu		= gn_eth_change_mtu,
	.ndo_get_stats64	= gn_eth_get_stats64,
	.ndo_set_mac_address	= eth_mac_addr,
	.ndo_validate_addr	= eth_validate_addr,
};

/* ------------------------------------------------------ MAC callbacks */

static void gn_eth_irq(void *ctx, unsigned int vector)
{
	struct gn_eth_port *port = ctx;
	struct gn_eth_chset *chs = READ_ONCE(port->chs);

	if (chs && vector < chs->p.num_channels)
		napi_schedule(&chs->ch[vector].napi);
}

static void gn_eth_link_change(void *ctx, bool up)
{
	struct gn_eth_port *port = ctx;

	if (up) {
		netif_carrier_on(port->ndev);
		netdev_info(port->ndev, "link up\n");
	} else {
		netif_carrier_off(port->ndev);
		netdev_info(port->ndev, "link down\n");
	}
}

static const struct gn_mac_client_ops gn_eth_mac_ops = {
	.irq = gn_eth_irq,
	.link_change = gn_eth_link_change,
};

/* --------------------------------------------------------- probe/remove */

/* Locally administered, stable: 02:<hash of the serial>:<port>. */
static void gn_eth_port_mac_addr(struct gaudi_nic_dev *gdev, unsigned int idx,
				 u8 *addr)
{
	u32 h = gaudi_nic_serial_hash(gdev);

	addr[0] = 0x02;
	addr[1] = h >> 24;
	addr[2] = h >> 16;
	addr[3] = h >> 8;
	addr[4] = h;
	addr[5] = idx;
}

static void gn_eth_port_destroy(struct gn_eth_port *port)
{
	struct net_device *ndev = port->ndev;

	rtnl_lock();
	/* notifiers of the unregistration still find the port's netdev */
	if (ndev->reg_state == NETREG_REGISTERED)
		unregister_netdevice(ndev);
	gn_nic_set_netdev(port->gadev->gdev->nic, port->idx, NULL);
	port->mac_ops->unbind(port->mac);
	rtnl_unlock();	/* completes the unregistration */
	if (port->dl_port_registered)
		devl_port_unregister(&port->dl_port);
	free_netdev(ndev);
}

static struct gn_eth_port *gn_eth_port_create(struct gaudi_nic_adev *gadev,
					      unsigned int idx)
{
	struct gaudi_nic_dev *gdev = gadev->gdev;
	struct gn_nic *nic = gdev->nic;
	struct devlink_port_attrs attrs = {};
	struct gn_eth_port *port;
	struct net_device *ndev;
	char name[IFNAMSIZ];
	u8 rss_key[GN_MAC_RSS_KEY_SIZE];
	u8 addr[ETH_ALEN];
	unsigned int q;
	int ret;

	snprintf(name, sizeof(name), "gn%up%u", gdev->id, idx);
	ndev = alloc_netdev_mqs(sizeof(*port), name, NET_NAME_PREDICTABLE,
				ether_setup, GN_MAC_MAX_QUEUES,
				GN_MAC_MAX_QUEUES);
	if (!ndev)
		return ERR_PTR(-ENOMEM);
	port = netdev_priv(ndev);
	port->ndev = ndev;
	port->gadev = gadev;
	port->idx = idx;
	port->dma_dev = &gdev->pdev->dev;
	port->mac = gn_nic_port_mac(nic, idx);
	port->mac_ops = gn_nic_mac_ops(nic);
	for (q = 0; q < GN_MAC_MAX_QUEUES; q++) {
		u64_stats_init(&port->qstats[q].txq.syncp);
		u64_stats_init(&port->qstats[q].txc.syncp);
		u64_stats_init(&port->qstats[q].rxq.syncp);
	}
	port->params.num_channels = min_t(unsigned int, GN_MAC_MAX_QUEUES,
					  netif_get_num_default_rss_queues());
	port->params.tx_size = GN_RING_DEFAULT;
	port->params.rx_size = GN_RING_DEFAULT;
	port->params.mtu = ETH_DATA_LEN;

	SET_NETDEV_DEV(ndev, &gadev->adev.dev);
	/* where a reload with netns moved the instance (init_net at first) */
	dev_net_set(ndev, devlink_net(gn_nic_devlink(nic)));
	/* which port of the device, as the device model tells it */
	ndev->dev_port = idx;
	ndev->netdev_ops = &gn_eth_netdev_ops;
	ndev->ethtool_ops = &gn_eth_ethtool_ops;
	ndev->stat_ops = &gn_eth_stat_ops;
	ndev->min_mtu = GN_MTU_MIN;
	ndev->max_mtu = GN_MTU_MAX;
	/*
	 * What the MAC does: gather (SG), checksum insertion (HW_CSUM), TCP
	 * segmentation (TSO, TSO6), the receive checksum (RXCSUM,
	 * CHECKSUM_COMPLETE) and an RSS hash.
	 */
	ndev->hw_features = NETIF_F_SG | NETIF_F_HW_CSUM | NETIF_F_TSO |
			    NETIF_F_TSO6 | NETIF_F_RXCSUM | NETIF_F_RXHASH;
	ndev->features = ndev->hw_features | NETIF_F_HIGHDMA;
	/* descriptor lengths are 16 bits */
	netif_set_tso_max_size(ndev, U16_MAX);
	/*
	 * The MAC filters no unicast address, so a new one takes effect at
	 * once, up or down; gaudi_ib follows it (NETDEV_CHANGEADDR).
	 */
	ndev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	gn_eth_port_mac_addr(gdev, idx, addr);
	eth_hw_addr_set(ndev, addr);
	ret = netif_set_real_num_queues(ndev, port->params.num_channels,
					port->params.num_channels);
	if (ret)
		goto err_free;

	attrs.flavour = DEVLINK_PORT_FLAVOUR_PHYSICAL;
	attrs.phys.port_number = idx;
	devlink_port_attrs_set(&port->dl_port, &attrs);
	ret = devl_port_register(gn_nic_devlink(nic), &port->dl_port,
				 idx);
	if (ret)
		goto err_free;
	port->dl_port_registered = true;
	SET_NETDEV_DEVLINK_PORT(ndev, &port->dl_port);

	netif_carrier_off(ndev);
	rtnl_lock();
	/* RSS: the system's key, the table spread over the channels */
	netdev_rss_key_fill(rss_key, sizeof(rss_key));
	ret = port->mac_ops->set_rss(port->mac, rss_key, NULL);
	if (!ret)
		ret = gn_eth_rss_default(port, port->params.num_channels);
	if (!ret)
		port->mac_ops->bind(port->mac, &gn_eth_mac_ops, port);
	rtnl_unlock();
	if (ret)
		goto err_free;
	/*
	 * The port map and the registration change together under RTNL: a
	 * NETDEV_REGISTER notifier (gaudi_ib's) already finds the port.
	 */
	rtnl_lock();
	gn_nic_set_netdev(nic, idx, ndev);
	ret = register_netdevice(ndev);
	if (ret)
		gn_nic_set_netdev(nic, idx, NULL);
	rtnl_unlock();
	if (ret) {
		dev_err(&gadev->adev.dev, "cannot register %s: %d\n", name,
			ret);
		gn_eth_port_destroy(port);
		return ERR_PTR(ret);
	}
	return port;

err_free:
	if (port->dl_port_registered)
		devl_port_unregister(&port->dl_port);
	free_netdev(ndev);
	return ERR_PTR(ret);
}

static void gn_eth_remove(struct auxiliary_device *adev)
{
	struct gn_eth_dev *edev = auxiliary_get_drvdata(adev);
	unsigned int i;

	debugfs_remove_recursive(edev->debugfs);
	for (i = edev->num_ports; i-- > 0;)
		if (edev->ports[i])
			gn_eth_port_destroy(edev->ports[i]);
	kfree(edev);
}

static int gn_eth_probe(struct auxiliary_device *adev,
			const struct auxiliary_device_id *id)
{
	struct gaudi_nic_adev *gadev = to_gaudi_nic_adev(adev);
	unsigned int i, n = gn_nic_num_ports(gadev->gdev->nic);
	struct gn_eth_dev *edev;
	struct gn_eth_port *port;

	edev = kzalloc(struct_size(edev, ports, n), GFP_KERNEL);
	if (!edev)
		return -ENOMEM;
	edev->gadev = gadev;
	edev->num_ports = n;
	auxiliary_set_drvdata(adev, edev);
	for (i = 0; i < n; i++) {
		port = gn_eth_port_create(gadev, i);
		if (IS_ERR(port)) {
			gn_eth_remove(adev);
			return PTR_ERR(port);
		}
		edev->ports[i] = port;
	}
	/*
	 * Fault injection: /sys/kernel/debug/gaudi_nic.eth.N/p<port>_fail_alloc
	 * makes that many of the port's next ring allocations fail (MTU, ring
	 * and channel changes must then leave the port as it was).
	 */
	edev->debugfs = debugfs_create_dir(dev_name(&adev->dev), NULL);
	for (i = 0; i < n; i++) {
		char name[32];

		snprintf(name, sizeof(name), "p%u_fail_alloc", i);
		debugfs_create_u32(name, 0600, edev->debugfs,
				   &edev->ports[i]->fail_alloc);
	}
	return 0;
}

static const struct auxiliary_device_id gn_eth_id_table[] = {
	{ .name = GAUDI_NIC_DRV_NAME ".eth" },
	{}
};
MODULE_DEVICE_TABLE(auxiliary, gn_eth_id_table);

/*
 * Probe and remove run under the devlink instance lock (the NIC core adds
 * and deletes the device under it), which the devlink port calls need:
 * no bind or unbind through sysfs, which would not hold it.
 */
static struct auxiliary_driver gn_eth_driver = {
	.name = "eth",
	.driver = {
		.suppress_bind_attrs = true,
	},
	.probe = gn_eth_probe,
	.remove = gn_eth_remove,
	.id_table = gn_eth_id_table,
};

int gn_eth_register(void)
{
	return auxiliary_driver_register(&gn_eth_driver);
}

void gn_eth_unregister(void)
{
	auxiliary_driver_unregister(&gn_eth_driver);
}
