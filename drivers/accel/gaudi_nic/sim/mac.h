/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated MACs and cables: the emulator's side of the MAC.  The
 * driver-facing interface is include/linux/gaudi_nic/port.h (struct
 * gaudi_nic_mac_ops, filled here as gnsim_mac_ops); this header holds what
 * the driver never sees: the on-die wiring between the RoCE engine and the
 * MAC, the cables and the test hooks (cable fault injection).
 */
#ifndef _GAUDI_NIC_SIM_MAC_H
#define _GAUDI_NIC_SIM_MAC_H

#include <linux/gaudi_nic/port.h>

struct net_device;
struct device_driver;
struct dentry;

extern const struct gaudi_nic_mac_ops gnsim_mac_ops;

/*
 * A MAC for port @port of the device that does DMA as @dma_dev; its fault
 * injection knobs go in @debugfs (none if NULL or an error).
 */
struct gn_mac *gnsim_mac_alloc(struct device *dma_dev, unsigned int port,
			       struct dentry *debugfs);
void gnsim_mac_free(struct gn_mac *mac);

/*
 * Cables (under RTNL): between two ports, or from a port to an uplink, any
 * Ethernet netdev (sim/uplink.c).  A port has one cable at most;
 * gnsim_mac_unlink() ends either kind.
 */
int gnsim_mac_link(struct gn_mac *a, struct gn_mac *b);
int gnsim_mac_uplink(struct gn_mac *mac, struct net_device *dev);
int gnsim_mac_unlink(struct gn_mac *mac);
bool gnsim_mac_linked(struct gn_mac *mac);
/* @dev can be an uplink: an Ethernet interface, not loopback. */
bool gnsim_uplink_ok(const struct net_device *dev);
/* The port whose uplink @dev is, or NULL. */
struct gn_mac *gnsim_uplink_mac(const struct net_device *dev);
/* The netdev notifier that ends a cable when its uplink goes. */
int gnsim_uplink_init(void);
void gnsim_uplink_exit(void);

/*
 * RoCE steering: when RoCE is enabled on the port, frames to UDP port
 * 4791 (RoCE v2) go to the port's RoCE engine instead of an RX ring.  The
 * engine calls the handler installed with gnsim_mac_set_roce_handler(); with
 * none installed it only counts the frames (roce_rx_frames).  The engine
 * transmits with gnsim_mac_roce_xmitv(), beside the TX rings, a frame
 * gathered from pieces of memory (headers, then payload where it lies in
 * the engine's memory regions: the engine's DMA read), or frames of one
 * flow back to back with gnsim_mac_roce_xmit_train().
 */

/* A piece of a RoCE frame, between a RoCE engine and the MAC. */
struct gnsim_mac_roce_frag {
	const void *p;
	unsigned int len;
};

/* Pieces of one RoCE frame, at most. */
#define GN_MAC_ROCE_MAX_FRAGS	16

/* A RoCE frame: @len bytes in @nfrags pieces, the headers in the first. */
struct gnsim_mac_roce_frame {
	const struct gnsim_mac_roce_frag *frags;
	unsigned int nfrags;
	unsigned int len;
};

/*
 * RoCE engine hook: called for steered frames (BH disabled, RCU read
 * side, in the sender's transmit context with its TX ring lock held): one
 * frame, or @n frames of one flow that an engine sent as a train
 * (gnsim_mac_roce_xmit_train()) and that arrive unaltered, in their order.
 * The frames are only valid during the call.  A frame that an engine sent
 * in pieces and that arrives unaltered comes in the same pieces; any
 * other frame comes in one piece.  The handler must not transmit
 * synchronously: it queues what it would send and returns.
 * @flags: GN_MAC_ROCE_ICRC_OK if the frames are, unaltered, ones that an
 * engine sent with GN_MAC_ROCE_ICRC_INSERT: their ICRC fields were never
 * written, and the frames are to be taken as having a good ICRC.
 */
typedef void (*gnsim_mac_roce_rx_t)(void *ctx,
				 const struct gnsim_mac_roce_frame *frames,
				 unsigned int n, u32 flags);
#define GN_MAC_ROCE_ICRC_OK	BIT(0)

void gnsim_mac_set_roce_handler(struct gn_mac *mac, gnsim_mac_roce_rx_t fn,
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
int gnsim_mac_roce_xmitv(struct gn_mac *mac, const struct gnsim_mac_roce_frag *frags,
			 unsigned int nfrags, u32 flags);

/*
 * Link-level flow control of RoCE traffic, as PFC on the RoCE priority: a
 * receiving engine whose queue fills asserts XOFF on its own MAC
 * (gnsim_mac_roce_set_xoff(), any context) and lifts it when the queue has
 * drained; the engine at the other end of the cable sees it with
 * gnsim_mac_roce_tx_paused() and holds back what it may delay (READ
 * responses).  Frames sent anyway are still delivered.
 */
void gnsim_mac_roce_set_xoff(struct gn_mac *mac, bool xoff);
bool gnsim_mac_roce_tx_paused(struct gn_mac *mac);

/*
 * A train: @n frames of one flow (one QP: the same addresses and UDP
 * ports), each as for gnsim_mac_roce_xmitv(), sent back to back, the way an
 * engine posts a chain of descriptors with one doorbell.  Where the train
 * meets another RoCE engine unaltered (no fault injection on the cable),
 * that engine receives it in one call, and the MAC classifies it once
 * (roce_tx_trains counts such trains); anywhere else the frames go one by
 * one, exactly as sent one by one.  @len of each frame is checked against
 * its pieces.  Returns 0, -ENOLINK or -EINVAL (nothing sent) as
 * gnsim_mac_roce_xmitv().
 */
int gnsim_mac_roce_xmit_train(struct gn_mac *mac,
			      const struct gnsim_mac_roce_frame *frames,
			      unsigned int n, u32 flags);

/* gnsim_mac_roce_xmitv() of a frame in one piece. */
static inline int gnsim_mac_roce_xmit(struct gn_mac *mac, const void *frame,
				      unsigned int len, u32 flags)
{
	struct gnsim_mac_roce_frag f = { .p = frame, .len = len };

	return gnsim_mac_roce_xmitv(mac, &f, 1, flags);
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
enum gnsim_mac_fault {
	GN_MAC_FAULT_DROP,
	GN_MAC_FAULT_DUP,
	GN_MAC_FAULT_REORDER,
	GN_MAC_FAULT_CORRUPT,
	GN_MAC_FAULTS
};

int gnsim_mac_set_fault(struct gn_mac *mac, enum gnsim_mac_fault kind, u32 every);
u32 gnsim_mac_get_fault(struct gn_mac *mac, enum gnsim_mac_fault kind);

/*
 * sim/roce_dp.c: write the ICRC (and, over IPv6, the UDP checksum) of a
 * RoCE v2 frame sent with GN_MAC_ROCE_ICRC_INSERT, once its bytes are seen.
 */
void gnsim_roce_icrc_insert(u8 *frame, unsigned int len);

/* sim/cable.c: sysfs link_device / unlink_device (driver attributes). */
extern struct driver_attribute driver_attr_link_device;
extern struct driver_attribute driver_attr_unlink_device;

#endif /* _GAUDI_NIC_SIM_MAC_H */
