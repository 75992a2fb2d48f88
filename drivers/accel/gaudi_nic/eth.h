/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic Ethernet: the NIC core (MACs, devlink, auxiliary device) and
 * the Ethernet auxiliary driver (one netdev per port).
 */
#ifndef _GAUDI_NIC_ETH_H
#define _GAUDI_NIC_ETH_H

#include <linux/auxiliary_bus.h>
#include <linux/netdevice.h>
#include <linux/u64_stats_sync.h>
#include <net/devlink.h>
#include <linux/gaudi_nic/core.h>
#include <linux/gaudi_nic/port.h>

#define GN_ETH_DRV_NAME		"gaudi_nic"
/* TX ring: room for the largest frame, and when to wake the queue */
#define GN_TX_MAX_DESC		min_t(unsigned int, MAX_SKB_FRAGS + 1, \
				      GN_MAC_MAX_FRAGS)
#define GN_TX_WAKE_THRESH	32

/* ------------------------------------------------------------ NIC core */

struct gn_nic;

/* the ports of a device, for the Ethernet driver */
unsigned int gn_nic_num_ports(struct gn_nic *nic);
struct gn_mac *gn_nic_port_mac(struct gn_nic *nic, unsigned int port);
const struct gaudi_nic_mac_ops *gn_nic_mac_ops(struct gn_nic *nic);
struct devlink *gn_nic_devlink(struct gn_nic *nic);

enum {
	GN_NIC_ADEV_ETH,
	GN_NIC_ADEV_RDMA,
	GN_NIC_ADEVS
};

struct gn_nic {
	struct gaudi_nic_dev *gdev;
	struct devlink *devlink;
	struct auxiliary_device *adevs[GN_NIC_ADEVS];
	struct gaudi_nic_roce *roce;	/* NULL: no RoCE engine */
	/* the Ethernet driver's netdev of each port, under RTNL */
	struct net_device *netdevs[GAUDI_NIC_MAX_PORTS];
	bool roce_enabled;		/* devlink param enable_roce */
	const struct gaudi_nic_mac_ops *mac_ops;
	unsigned int num_ports;
	struct gn_mac *macs[];
};

/* Called by the core driver (gn_drv.c): the NIC core (nic.c), ... */
int gn_nic_init(struct gaudi_nic_dev *gdev);
/* ... and the Ethernet auxiliary driver (eth_main.c) */
int gn_eth_register(void);
void gn_eth_unregister(void);

/* devlink.c */
int gn_devlink_init(struct gn_nic *nic);
void gn_devlink_fini(struct gn_nic *nic);
/* nic.c: the auxiliary devices, under the devlink instance lock */
void gn_nic_funcs_del(struct gn_nic *nic);
int gn_nic_funcs_add(struct gn_nic *nic);

/* --------------------------------------------------------- eth driver */

/* Per-queue software counters; each group has a single writer. */
struct gn_eth_txq_stats {
	struct u64_stats_sync syncp;	/* xmit path (queue lock) */
	u64_stats_t stops;
	u64_stats_t dropped;		/* no ring or DMA mapping failed */
};

struct gn_eth_txc_stats {
	struct u64_stats_sync syncp;	/* completion (NAPI) */
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t no_carrier;
	u64_stats_t flushed;		/* never sent: ring torn down */
	u64_stats_t errors;		/* MAC refused the descriptors */
	u64_stats_t wakes;
};

struct gn_eth_rxq_stats {
	struct u64_stats_sync syncp;	/* NAPI */
	u64_stats_t packets;
	u64_stats_t bytes;
	u64_stats_t alloc_fail;		/* dropped: no buffer to refill */
	u64_stats_t flushed;		/* dropped: ring torn down */
};

struct gn_eth_qstats {
	struct gn_eth_txq_stats txq;
	struct gn_eth_txc_stats txc;
	struct gn_eth_rxq_stats rxq;
};

/* A consistent copy of one queue's counters. */
struct gn_eth_qstats_snap {
	u64 tx_packets;
	u64 tx_bytes;
	u64 tx_stops;
	u64 tx_wakes;
	u64 tx_dropped;
	u64 tx_no_carrier;
	u64 tx_flushed;
	u64 tx_errors;
	u64 rx_packets;
	u64 rx_bytes;
	u64 rx_alloc_fail;
	u64 rx_flushed;
};

struct gn_eth_buf {
	struct sk_buff *skb;		/* TX: on the frame's last descriptor */
	dma_addr_t dma;
	unsigned int len;		/* mapped length */
	unsigned int bytes;		/* TX, last descriptor: skb->len */
	unsigned int segs;		/* ... frames on the wire (TSO) */
	unsigned int wire_bytes;	/* ... and their bytes */
	bool page;			/* TX: a fragment (dma_map_page) */
};

struct gn_eth_txring {
	struct gn_tx_desc *desc;
	dma_addr_t desc_dma;
	struct gn_eth_buf *bufs;
	u32 size;
	u32 prod;			/* next descriptor to fill */
	u32 clean;			/* next descriptor to complete */
};

struct gn_eth_rxring {
	struct gn_rx_desc *desc;
	dma_addr_t desc_dma;
	struct gn_eth_buf *bufs;
	u32 size;
	u32 clean;			/* next descriptor the MAC fills */
	unsigned int buf_len;
};

struct gn_eth_port;

struct gn_eth_channel {
	struct gn_eth_port *port;
	unsigned int idx;
	struct napi_struct napi;
	struct netdev_queue *txq;
	struct gn_eth_txring tx;
	struct gn_eth_rxring rx;
	struct gn_eth_qstats *stats;
};

/* The rings of a running port; replaced as a whole on reconfiguration. */
struct gn_eth_params {
	unsigned int num_channels;
	unsigned int tx_size;
	unsigned int rx_size;
	unsigned int mtu;
};

struct gn_eth_chset {
	struct gn_eth_params p;
	bool napi_added;
	bool active;
	struct gn_eth_channel ch[];
};

struct gn_eth_port {
	struct net_device *ndev;
	struct gaudi_nic_adev *gadev;
	struct device *dma_dev;
	struct gn_mac *mac;
	const struct gaudi_nic_mac_ops *mac_ops;
	unsigned int idx;
	struct devlink_port dl_port;
	bool dl_port_registered;
	/* under RTNL */
	struct gn_eth_params params;
	struct gn_eth_chset *chs;	/* while the netdev is up */
	struct gn_eth_qstats qstats[GN_MAC_MAX_QUEUES];
	/* fault injection (debugfs): ring allocations to fail */
	u32 fail_alloc;
};

struct gn_eth_dev {
	struct gaudi_nic_adev *gadev;
	struct dentry *debugfs;
	unsigned int num_ports;
	struct gn_eth_port *ports[];
};

extern const struct ethtool_ops gn_eth_ethtool_ops;

void gn_nic_set_netdev(struct gn_nic *nic, unsigned int port,
		       struct net_device *ndev);
void gn_eth_qstats_read(const struct gn_eth_qstats *qs,
			struct gn_eth_qstats_snap *s);
int gn_eth_reconfigure(struct gn_eth_port *port,
		       const struct gn_eth_params *p);
int gn_eth_rss_default(struct gn_eth_port *port, unsigned int n);

/* eth_txrx.c: channel sets (switched under RTNL) and the transmit path */
struct gn_eth_chset *gn_eth_chset_alloc(struct gn_eth_port *port,
					const struct gn_eth_params *p);
void gn_eth_chset_free(struct gn_eth_port *port, struct gn_eth_chset *chs);
void gn_eth_chset_activate(struct gn_eth_port *port, struct gn_eth_chset *chs);
void gn_eth_chset_deactivate(struct gn_eth_port *port,
			     struct gn_eth_chset *chs);
netdev_tx_t gn_eth_xmit(struct sk_buff *skb, struct net_device *ndev);

#endif /* _GAUDI_NIC_ETH_H */
