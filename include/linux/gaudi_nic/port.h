/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic NIC ports: the hardware interface of one emulated MAC, as the
 * Ethernet driver (and later the RDMA driver) programs it.
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
 * index a 128-entry indirection table of RX rings (gn_mac_set_rss()).
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
 * RoCE steering: when RoCE is enabled on the port, frames to UDP port
 * 4791 (RoCE v2) go to the port's RoCE engine instead of an RX ring.  The
 * engine calls the handler installed with gn_mac_set_roce_handler(); with
 * none installed it only counts the frames (roce_rx_frames).  The engine
 * transmits with gn_mac_roce_xmitv(), beside the TX rings, a frame
 * gathered from pieces of memory (headers, then payload where it lies in
 * the engine's memory regions: the engine's DMA read), or frames of one
 * flow back to back with gn_mac_roce_xmit_train().
 *
 * Locking: configuration calls (bind, enable, ring setup, link) run under
 * RTNL; doorbells may be rung from any context with BH disabled.
 */
#ifndef _LINUX_GAUDI_NIC_PORT_H
#define _LINUX_GAUDI_NIC_PORT_H

#include <linux/auxiliary_bus.h>
#include <linux/bits.h>
#include <linux/types.h>

struct gaudi_nic_dev;
struct gn_nic;
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
	/* cable fault injection (gn_mac_set_fault()), frames this port sent */
	u64 fault_dropped;	/* lost on the cable */
	u64 fault_duplicated;	/* delivered twice */
	u64 fault_reordered;	/* delivered after the frame that followed */
	u64 fault_corrupted;	/* delivered with one byte flipped */
	u64 tx_hist[GN_MAC_HIST];
	u64 rx_hist[GN_MAC_HIST];
};

struct gn_mac_client_ops {
	/* interrupt of vector @vector (any context, BH disabled) */
	void (*irq)(void *ctx, unsigned int vector);
	/* carrier changed (under RTNL) */
	void (*link_change)(void *ctx, bool up);
};

/* A piece of a RoCE frame, between a RoCE engine and the MAC. */
struct gn_mac_roce_frag {
	const void *p;
	unsigned int len;
};

/* Pieces of one RoCE frame, at most. */
#define GN_MAC_ROCE_MAX_FRAGS	16

/* A RoCE frame: @len bytes in @nfrags pieces, the headers in the first. */
struct gn_mac_roce_frame {
	const struct gn_mac_roce_frag *frags;
	unsigned int nfrags;
	unsigned int len;
};

/*
 * RoCE engine hook: called for steered frames (BH disabled, RCU read
 * side, in the sender's transmit context with its TX ring lock held): one
 * frame, or @n frames of one flow that an engine sent as a train
 * (gn_mac_roce_xmit_train()) and that arrive unaltered, in their order.
 * The frames are only valid during the call.  A frame that an engine sent
 * in pieces and that arrives unaltered comes in the same pieces; any
 * other frame comes in one piece.  The handler must not transmit
 * synchronously: it queues what it would send and returns.
 * @flags: GN_MAC_ROCE_ICRC_OK if the frames are, unaltered, ones that an
 * engine sent with GN_MAC_ROCE_ICRC_INSERT: their ICRC fields were never
 * written, and the frames are to be taken as having a good ICRC.
 */
typedef void (*gn_mac_roce_rx_t)(void *ctx,
				 const struct gn_mac_roce_frame *frames,
				 unsigned int n, u32 flags);
#define GN_MAC_ROCE_ICRC_OK	BIT(0)

/* One auxiliary device of the NIC (gaudi_nic.eth.N, gaudi_nic.rdma.N). */
struct gaudi_nic_adev {
	struct auxiliary_device adev;
	struct gaudi_nic_dev *gdev;
	struct gn_nic *nic;
};

static inline struct gaudi_nic_adev *
to_gaudi_nic_adev(struct auxiliary_device *adev)
{
	return container_of(adev, struct gaudi_nic_adev, adev);
}

/* NIC core: the ports of a device. */
unsigned int gn_nic_num_ports(struct gn_nic *nic);
struct gn_mac *gn_nic_port_mac(struct gn_nic *nic, unsigned int port);
struct devlink *gn_nic_devlink(struct gn_nic *nic);

/* The MAC (hardware interface). */
void gn_mac_bind(struct gn_mac *mac, const struct gn_mac_client_ops *ops,
		 void *ctx);
void gn_mac_unbind(struct gn_mac *mac);
void gn_mac_enable(struct gn_mac *mac, bool enable);
bool gn_mac_link_up(struct gn_mac *mac);
bool gn_mac_cabled(struct gn_mac *mac);	/* a cable is plugged in (RTNL) */
void gn_mac_set_max_frame(struct gn_mac *mac, unsigned int len);
void gn_mac_set_rx_queues(struct gn_mac *mac, unsigned int n);
int gn_mac_tx_ring_set(struct gn_mac *mac, unsigned int q, dma_addr_t base,
		       unsigned int size);
int gn_mac_rx_ring_set(struct gn_mac *mac, unsigned int q, dma_addr_t base,
		       unsigned int size);
void gn_mac_quiesce(struct gn_mac *mac);
void gn_mac_tx_doorbell(struct gn_mac *mac, unsigned int q, u32 prod);
void gn_mac_rx_doorbell(struct gn_mac *mac, unsigned int q, u32 tail);
/*
 * RSS (under RTNL): replace the key and/or the indirection table (NULL:
 * keep), read them back.  The swap is atomic for the receive path: each
 * frame sees either the old or the new state.  At reset the key is random
 * and every entry points at ring 0; an entry beyond the enabled rings
 * (gn_mac_set_rx_queues()) wraps around them.  -EINVAL for an entry
 * beyond GN_MAC_MAX_QUEUES.
 */
#define GN_MAC_RSS_KEY_SIZE	40
#define GN_MAC_RSS_INDIR_SIZE	128
int gn_mac_set_rss(struct gn_mac *mac, const u8 *key, const u32 *indir);
void gn_mac_get_rss(struct gn_mac *mac, u8 *key, u32 *indir);
void gn_mac_set_pause(struct gn_mac *mac, bool rx_pause, bool tx_pause);
void gn_mac_get_pause(struct gn_mac *mac, bool *rx_pause, bool *tx_pause);
void gn_mac_get_stats(struct gn_mac *mac, struct gn_mac_stats *stats);
void gn_mac_set_roce(struct gn_mac *mac, bool enable);
void gn_mac_set_roce_handler(struct gn_mac *mac, gn_mac_roce_rx_t fn,
			     void *ctx);
/*
 * The RoCE engine sends a complete Ethernet frame (any context) gathered
 * from @nfrags pieces (at most GN_MAC_ROCE_MAX_FRAGS), the first holding
 * at least the Ethernet header.  The pieces need only stay valid during
 * the call: the cable delivers synchronously, and whoever keeps a frame
 * (a receiving engine's queue, fault injection) copies it.  Returns
 * 0 if it went on the wire (the peer may still drop it, counted there),
 * -ENOLINK without carrier (counted as tx_no_carrier), -EINVAL if
 * malformed (too many pieces, shorter than an Ethernet header).
 *
 * ICRC insertion (@flags GN_MAC_ROCE_ICRC_INSERT): the frame is a RoCE v2
 * frame whose ICRC (and, over IPv6, UDP checksum) the MAC inserts, like a
 * checksum offload.  Where the frame meets another RoCE engine unaltered,
 * nothing needs the bytes: it is delivered with GN_MAC_ROCE_ICRC_OK and
 * the fields are never computed.  Wherever its bytes are seen otherwise
 * (an RX ring, a copy held or corrupted by fault injection), the MAC
 * writes them first, so every frame that can be observed is exact.
 */
#define GN_MAC_ROCE_ICRC_INSERT	BIT(0)
int gn_mac_roce_xmitv(struct gn_mac *mac, const struct gn_mac_roce_frag *frags,
		      unsigned int nfrags, u32 flags);

/*
 * Link-level flow control of RoCE traffic, as PFC on the RoCE priority: a
 * receiving engine whose queue fills asserts XOFF on its own MAC
 * (gn_mac_roce_set_xoff(), any context) and lifts it when the queue has
 * drained; the engine at the other end of the cable sees it with
 * gn_mac_roce_tx_paused() and holds back what it may delay (READ
 * responses).  Frames sent anyway are still delivered.
 */
void gn_mac_roce_set_xoff(struct gn_mac *mac, bool xoff);
bool gn_mac_roce_tx_paused(struct gn_mac *mac);

/*
 * A train: @n frames of one flow (one QP: the same addresses and UDP
 * ports), each as for gn_mac_roce_xmitv(), sent back to back, the way an
 * engine posts a chain of descriptors with one doorbell.  Where the train
 * meets another RoCE engine unaltered (no fault injection on the cable),
 * that engine receives it in one call, and the MAC classifies it once
 * (roce_tx_trains counts such trains); anywhere else the frames go one by
 * one, exactly as sent one by one.  @len of each frame is checked against
 * its pieces.  Returns 0, -ENOLINK or -EINVAL (nothing sent) as
 * gn_mac_roce_xmitv().
 */
int gn_mac_roce_xmit_train(struct gn_mac *mac,
			   const struct gn_mac_roce_frame *frames,
			   unsigned int n, u32 flags);

/* gn_mac_roce_xmitv() of a frame in one piece. */
static inline int gn_mac_roce_xmit(struct gn_mac *mac, const void *frame,
				   unsigned int len, u32 flags)
{
	struct gn_mac_roce_frag f = { .p = frame, .len = len };

	return gn_mac_roce_xmitv(mac, &f, 1, flags);
}

/*
 * Cable fault injection, a test hook: one frame in @every (at random; 1:
 * every frame; 0: off) of the frames the port puts on its cable (TX rings,
 * TSO segments and the RoCE engine's frames alike) suffers fault @kind.
 * At most one fault per frame, the first that hits in this order:
 *  DROP     the frame is lost.
 *  DUP      the frame is delivered twice.
 *  REORDER  the frame is held back and delivered right after the port's
 *           next frame (one frame at most is held; freed, counted as
 *           dropped, if the cable is unlinked first).
 *  CORRUPT  the last byte of the IPv4/IPv6 TCP or UDP datagram before the
 *           RoCE ICRC (payload if any, else the last header byte) is
 *           inverted after the checksum was inserted; only TCP, RoCE v2 and
 *           checksummed UDP frames qualify (the receiver's checksum or
 *           ICRC check sees every such corruption); other frames pass.
 * Each applied fault is counted in the port's fault_* MAC counters.
 * Returns -EINVAL for an unknown @kind.  Process context.
 */
enum gn_mac_fault {
	GN_MAC_FAULT_DROP,
	GN_MAC_FAULT_DUP,
	GN_MAC_FAULT_REORDER,
	GN_MAC_FAULT_CORRUPT,
	GN_MAC_FAULTS
};

int gn_mac_set_fault(struct gn_mac *mac, enum gn_mac_fault kind, u32 every);
u32 gn_mac_get_fault(struct gn_mac *mac, enum gn_mac_fault kind);

#endif /* _LINUX_GAUDI_NIC_PORT_H */
