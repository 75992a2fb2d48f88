/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic NIC ports: the hardware interface of one MAC, as the
 * Ethernet driver programs it.  What the NIC core and the Ethernet driver
 * share beyond it is theirs (drivers/accel/gaudi_nic/eth.h).
 *
 * Each port has up to GN_MAC_MAX_QUEUES transmit and receive rings of
 * descriptors in host memory (DMA addresses, 64-bit).  The driver posts
 * work by writing descriptors and ringing a doorbell with its free-running
 * producer index; the MAC writes a status word (GN_DESC_DONE) back into
 * each descriptor it consumed and raises the interrupt vector of the ring
 * (vector N serves TX ring N and RX ring N).  Ring sizes are powers of two.
 *
 * Receive: the driver keeps RX descriptors posted (buffer address and
 * length); the MAC fills them in order and writes back length, status and
 * the RSS hash of the flow.  The MAC has no address filter (it delivers
 * every frame); it picks the RX ring by RSS: the Toeplitz hash (40-byte
 * key) of the IPv4/IPv6 addresses and TCP/UDP ports, whose low 7 bits
 * index a 128-entry indirection table of RX rings (->set_rss).
 *
 * Transmit: a frame is gathered from up to GN_MAC_MAX_FRAGS descriptors,
 * the last one flagged GN_TXD_EOP.  With GN_TXD_CSUM on the first one, the
 * MAC computes the ones'-complement checksum from csum_start to the end of
 * the frame and stores it at csum_start + csum_offset (the generic
 * NETIF_F_HW_CSUM model).  With GN_TXD_TSO too, the frame is a TCP
 * segment train (IPv4 or IPv6, optional VLAN tag): the MAC cuts the payload
 * after hdr_len bytes of headers into mss-sized segments, each with a copy
 * of the headers (IPv4 total length, ID + n and header checksum, IPv6
 * payload length, TCP sequence number, FIN/PSH only on the last segment,
 * CWR only on the first) and its own TCP checksum.  The MAC writes the
 * status of every descriptor of a frame; frames it could not send are
 * completed with GN_TXD_NO_CARRIER (no link) or GN_TXD_ERROR (malformed).
 *
 * Receive checksum: the MAC stores in @csum the ones'-complement sum of the
 * frame after the 14-byte Ethernet header (GN_RXD_CSUM), which is what the
 * stack calls CHECKSUM_COMPLETE.
 *
 * Flow control: with 802.3x pause enabled on both ends (tx_pause on the
 * receiver, rx_pause on the sender), a receiver out of RX descriptors
 * holds the sender's transmit ring instead of dropping; posting RX
 * descriptors resumes it.  Without pause such frames are dropped and
 * counted (rx_no_buffer).
 *
 * RoCE steering: with RoCE enabled on the port (->set_roce), frames to
 * UDP port 4791 (RoCE v2) go to the port's RoCE engine instead of an RX
 * ring.  How engine and MAC are wired on the die is the hardware's
 * business (the emulator's in sim/mac.h), not the driver's.
 *
 * The driver reaches a MAC only through struct gaudi_nic_mac_ops, the
 * table the hardware implementation fills (the emulator's: gnsim_mac_ops);
 * a MAC is an opaque struct gn_mac.
 *
 * Locking: configuration calls (bind, enable, ring setup, link) run under
 * RTNL; doorbells may be rung from any context with BH disabled.
 */
#ifndef _LINUX_GAUDI_NIC_PORT_H
#define _LINUX_GAUDI_NIC_PORT_H

#include <linux/bits.h>
#include <linux/types.h>

struct gn_mac;
struct device;

#define GN_MAC_MAX_QUEUES	8
#define GN_RING_MIN		64
#define GN_RING_MAX		4096
#define GN_RING_DEFAULT		512
#define GN_MTU_MIN		68
#define GN_MTU_MAX		9216
#define GN_MAC_MAX_FRAGS	32	/* TX descriptors per frame */
/* Largest frame the MAC accepts for an MTU (header, one VLAN tag). */
#define GN_MAC_FRAME_LEN(mtu)	((mtu) + 18)
#define GN_ROCE_UDP_PORT	4791

/* Status word bits, written by the MAC. */
#define GN_DESC_DONE		BIT(0)
#define GN_TXD_NO_CARRIER	BIT(1)
#define GN_TXD_ERROR		BIT(2)
#define GN_RXD_HASH		BIT(1)	/* @hash is valid */
#define GN_RXD_HASH_L4		BIT(2)	/* hash covers L4 ports */
#define GN_RXD_CSUM		BIT(3)	/* @csum is valid */

/* TX descriptor flags, written by the driver. */
#define GN_TXD_EOP		BIT(0)	/* last descriptor of the frame */
#define GN_TXD_CSUM		BIT(1)	/* first descriptor: insert checksum */
#define GN_TXD_TSO		BIT(2)	/* first descriptor: segment (TCP) */
#define GN_TSO_MAX_HDR		256

struct gn_tx_desc {
	__le64 addr;
	__le16 len;
	__le16 status;		/* MAC */
	__le16 flags;		/* GN_TXD_EOP, GN_TXD_CSUM */
	__le16 csum_start;	/* from the start of the frame */
	__le16 csum_offset;	/* from csum_start */
	__le16 mss;		/* GN_TXD_TSO: payload bytes per segment */
	__le16 hdr_len;		/* GN_TXD_TSO: bytes of headers */
	__le16 rsvd;
};

struct gn_rx_desc {
	__le64 addr;
	__le16 buf_len;		/* driver */
	__le16 len;		/* MAC */
	__le16 status;		/* MAC */
	__le16 rsvd;
	__le32 hash;		/* MAC */
	__le32 csum;		/* MAC */
};

/* RMON size buckets of the MAC counters (frame length incl. FCS). */
#define GN_MAC_HIST		7

/* MAC counters (the MIB of the port). */
struct gn_mac_stats {
	u64 tx_frames;		/* sent, the RoCE engine's frames included */
	u64 tx_bytes;
	u64 tx_mcast;
	u64 tx_bcast;
	u64 tx_no_carrier;	/* dropped: no link */
	u64 tx_errors;		/* dropped: malformed descriptors */
	u64 tx_paused;		/* times held by the peer's pause */
	u64 rx_frames;		/* delivered to an RX ring */
	/* rx_bytes, rx_mcast, rx_bcast, rx_hist: rx_frames + roce_rx_frames */
	u64 rx_bytes;
	u64 rx_mcast;
	u64 rx_bcast;
	u64 rx_no_buffer;	/* dropped: no RX descriptor posted */
	u64 rx_too_long;	/* dropped: frame longer than buffer/MTU */
	u64 rx_pause_sent;	/* pause (XOFF) signalled to the sender */
	u64 roce_rx_frames;	/* steered to the RoCE engine */
	u64 roce_tx_frames;	/* sent by the RoCE engine */
	u64 roce_tx_trains;	/* trains taken whole by the peer's engine */
	/* cable fault injection (an emulator test hook), frames this port sent */
	u64 fault_dropped;	/* lost on the cable */
	u64 fault_duplicated;	/* delivered twice */
	u64 fault_reordered;	/* delivered after the frame that followed */
	u64 fault_corrupted;	/* delivered with one byte flipped */
	/* a cable ending in an uplink netdev (an emulator feature) */
	u64 tx_uplink_dropped;	/* not handed to it: above its MTU, no memory */
	u64 rx_uplink_dropped;	/* from it, not taken: port down, no memory */
	u64 tx_hist[GN_MAC_HIST];
	u64 rx_hist[GN_MAC_HIST];
};

struct gn_mac_client_ops {
	/* interrupt of vector @vector (any context, BH disabled) */
	void (*irq)(void *ctx, unsigned int vector);
	/* carrier changed (under RTNL) */
	void (*link_change)(void *ctx, bool up);
};

#define GN_MAC_RSS_KEY_SIZE	40
#define GN_MAC_RSS_INDIR_SIZE	128

/**
 * struct gaudi_nic_mac_ops - the MAC of a port, as the driver programs it
 * @bind: attach the driver's interrupt and link callbacks (under RTNL)
 * @unbind: detach them; no callback runs once it returns (under RTNL)
 * @enable: bring the port up or down; the link is up when both ends of
 *	the cable are enabled (under RTNL)
 * @cabled: a cable is plugged in, the cage's cable-detect pin (under RTNL)
 * @set_max_frame: largest frame accepted, GN_MAC_FRAME_LEN(mtu)
 * @set_rx_queues: RX rings that RSS spreads over (1 .. GN_MAC_MAX_QUEUES)
 * @tx_ring_set: program (or with @size 0 clear) TX ring @q
 * @rx_ring_set: program (or with @size 0 clear) RX ring @q
 * @quiesce: wait until no descriptor of a cleared ring is touched
 * @tx_doorbell: new producer index of TX ring @q (any context, BH off)
 * @rx_doorbell: new tail of RX ring @q (any context, BH off)
 * @set_rss: replace the key and/or the indirection table (NULL: keep),
 *	under RTNL.  The swap is atomic for the receive path: each frame
 *	sees either the old or the new state.  At reset the key is random
 *	and every entry points at ring 0; an entry beyond the enabled rings
 *	(@set_rx_queues) wraps around them.  -EINVAL for an entry beyond
 *	GN_MAC_MAX_QUEUES.
 * @get_rss: read key and indirection table back
 * @set_pause: 802.3x pause, receive and transmit (under RTNL)
 * @get_pause: read it back
 * @get_stats: the MAC counters
 * @set_roce: steer RoCE v2 frames to the port's RoCE engine
 *
 * Silicon would be a second implementation of this table.
 */
struct gaudi_nic_mac_ops {
	void (*bind)(struct gn_mac *mac, const struct gn_mac_client_ops *ops,
		     void *ctx);
	void (*unbind)(struct gn_mac *mac);
	void (*enable)(struct gn_mac *mac, bool enable);
	bool (*cabled)(struct gn_mac *mac);
	void (*set_max_frame)(struct gn_mac *mac, unsigned int len);
	void (*set_rx_queues)(struct gn_mac *mac, unsigned int n);
	int (*tx_ring_set)(struct gn_mac *mac, unsigned int q, dma_addr_t base,
			   unsigned int size);
	int (*rx_ring_set)(struct gn_mac *mac, unsigned int q, dma_addr_t base,
			   unsigned int size);
	void (*quiesce)(struct gn_mac *mac);
	void (*tx_doorbell)(struct gn_mac *mac, unsigned int q, u32 prod);
	void (*rx_doorbell)(struct gn_mac *mac, unsigned int q, u32 tail);
	int (*set_rss)(struct gn_mac *mac, const u8 *key, const u32 *indir);
	void (*get_rss)(struct gn_mac *mac, u8 *key, u32 *indir);
	void (*set_pause)(struct gn_mac *mac, bool rx_pause, bool tx_pause);
	void (*get_pause)(struct gn_mac *mac, bool *rx_pause, bool *tx_pause);
	void (*get_stats)(struct gn_mac *mac, struct gn_mac_stats *stats);
	void (*set_roce)(struct gn_mac *mac, bool enable);
};

#endif /* _LINUX_GAUDI_NIC_PORT_H */
