/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated MAC's own structures, shared by mac.c (rings, cable, link,
 * the driver's ops), mac_offload.c (checksums, TSO), mac_fault.c (cable
 * fault injection) and uplink.c (cables that end in a netdev).  Nothing
 * outside these files includes this.
 */
#ifndef _GAUDI_NIC_SIM_MAC_PRIV_H
#define _GAUDI_NIC_SIM_MAC_PRIV_H

#include <linux/spinlock.h>
#include <net/checksum.h>
#include "mac.h"

struct gnsim_uplink;

/* A frame on the wire: gathered from host memory, checksum to insert. */
struct gnsim_frame {
	unsigned int nfrags;
	unsigned int len;
	int csum_start;			/* -1: none */
	unsigned int csum_offset;
	unsigned int mss;		/* TSO: 0 if none */
	unsigned int hdr_len;
	bool icrc_insert;		/* RoCE: ICRC to insert (port.h) */
	struct gnsim_mac_roce_frag frag[GN_MAC_MAX_FRAGS + 1];
};

struct gnsim_mac_txq {
	/* protects everything below */
	spinlock_t lock;
	struct gn_tx_desc *ring;
	u32 size;
	u32 head;
	u32 prod;
	bool held;		/* waiting for the peer's pause to end */
	struct gn_mac_stats st;
	struct gnsim_frame frame;	/* the frame being sent */
	/* TSO: next segment of that frame, its headers, the segment */
	unsigned int tso_next;
	u8 tso_tmpl[GN_TSO_MAX_HDR];
	u8 tso_hdr[GN_TSO_MAX_HDR];
	struct gnsim_frame seg;
};

struct gnsim_mac_rxq {
	/* protects everything below */
	spinlock_t lock;
	struct gn_rx_desc *ring;
	u32 size;
	u32 head;
	u32 tail;
	bool xoff;		/* we held the sender */
	struct gn_mac_stats st;
};

/*
 * Fault injection on the frames this port puts on its cable: fault k hits
 * one frame in @every[k] at random (1: every frame, 0: off).  Random, not
 * periodic: a go-back-N sender resending a window whose length is a
 * multiple of a fixed period would lose the same packet every time.
 *
 * Locking: @lock (taken with BH disabled) protects everything but @on.  It
 * nests inside a TX ring lock and is never held while a frame is delivered
 * to the peer.  @on is the hot path's only test when no fault is set:
 * true while any @every[] is non-zero or a frame is held, written under
 * @lock; @every[] is also read locklessly by gnsim_mac_get_fault().
 *
 * Lifetime of @held, the frame held back by REORDER (a kmalloc'ed copy of
 * @held_len bytes): whoever takes it out under @lock delivers or frees it.
 * A frame is only held for the current peer (checked under @lock), and is
 * taken out by the sender of the port's next frame (delivered after that
 * frame), by gnsim_mac_set_fault() turning REORDER off (delivered if the
 * cable is still up, else freed), by gnsim_mac_unlink() (freed), and finally
 * by gnsim_mac_free().  A frame freed undelivered counts in @dropped;
 * a held frame counts in @reordered once delivered.
 */
struct gnsim_mac_fault_state {
	spinlock_t lock;	/* see above */
	bool on;
	u32 every[GN_MAC_FAULTS];
	u8 *held;
	unsigned int held_len;
	u64 dropped;
	u64 duplicated;
	u64 reordered;
	u64 corrupted;
};

/*
 * RSS state: key, indirection table and the key's Toeplitz lookup tables
 * (one per nibble of hash input).  Replaced as a whole under RTNL; the
 * receive path reads it under RCU.
 */
#define GN_MAC_RSS_INPUT	36	/* IPv6 addresses and L4 ports */
struct gnsim_mac_rss {
	struct rcu_head rcu;
	u8 key[GN_MAC_RSS_KEY_SIZE];
	u8 indir[GN_MAC_RSS_INDIR_SIZE];
	u32 tbl[GN_MAC_RSS_INPUT * 2][16];
};

struct gn_mac {
	struct device *dma_dev;
	unsigned int port;
	struct gnsim_mac_rss __rcu *rss;
	struct gn_mac __rcu *peer;
	/* or the uplink at the cable's far end (uplink.c), not both */
	struct gnsim_uplink __rcu *uplink;
	atomic64_t uplink_tx_dropped;
	atomic64_t uplink_rx_dropped;
	/* configuration: written under RTNL, read with READ_ONCE */
	bool enabled;
	bool link;
	bool roce_en;
	bool rx_pause;
	bool tx_pause;
	u32 max_frame;
	u32 nrxq;
	const struct gn_mac_client_ops *ops;
	void *ctx;
	gnsim_mac_roce_rx_t roce_fn;
	void *roce_ctx;
	bool roce_xoff;		/* our engine pauses the partner's RoCE TX */
	struct gnsim_mac_txq txq[GN_MAC_MAX_QUEUES];
	struct gnsim_mac_rxq rxq[GN_MAC_MAX_QUEUES];
	/* the RoCE engine's transmit path; protects roce_st */
	spinlock_t roce_lock;
	struct gn_mac_stats roce_st;
	struct gnsim_mac_fault_state fault;
	/* debugfs p<port>_fault_<kind> */
	struct gnsim_mac_fault_knob {
		struct gn_mac *mac;
		enum gnsim_mac_fault kind;
		struct dentry *dentry;
	} fault_knob[GN_MAC_FAULTS];
};

/* mac.c */
int gnsim_mac_rx(struct gn_mac *mac, const struct gnsim_frame *f, bool may_hold);
void gnsim_mac_update_link(struct gn_mac *mac);

/* mac_rss.c */
/*
 * Parse frame @f's headers as the MAC's RSS logic does; true if it has a
 * hash (@hash; then @q is its RX ring of @nq); @l4: the hash covers L4
 * ports; @roce: UDP to the RoCE v2 port.  RCU read side.
 */
bool gnsim_mac_classify(struct gn_mac *mac, const u8 *f, unsigned int len,
			unsigned int nq, u32 *hash, unsigned int *q,
			bool *l4, bool *roce);
struct gnsim_mac_rss *gnsim_mac_rss_alloc(const u8 *key, const u8 *indir);
int gnsim_mac_set_rss(struct gn_mac *mac, const u8 *key, const u32 *indir);
void gnsim_mac_get_rss(struct gn_mac *mac, u8 *key, u32 *indir);

/* mac_offload.c */
__wsum gnsim_frame_copy(const struct gnsim_frame *f, u8 *dst);
void gnsim_frame_read(const struct gnsim_frame *f, unsigned int off, u8 *dst,
		      unsigned int len);
unsigned int gnsim_l3_off(const u8 *hdr);
/* TSO frame @f (its headers copied to @hdr) is one the MAC can segment */
bool gnsim_tso_hdr_ok(const struct gnsim_frame *f, const u8 *hdr);
/* segment @k of @f into @seg, headers built in @hdr from @tmpl */
bool gnsim_tso_segment(const struct gnsim_frame *f, unsigned int k,
		       const u8 *tmpl, u8 *hdr, struct gnsim_frame *seg);

/* uplink.c: a cable ending in a netdev (struct gnsim_uplink is private) */
void gnsim_uplink_xmit(struct gn_mac *mac, struct gnsim_uplink *up,
		       const struct gnsim_frame *f);
bool gnsim_uplink_carrier(const struct gnsim_uplink *up);
void gnsim_uplink_check_mtu(const struct gnsim_uplink *up, u32 max_frame);
void gnsim_uplink_detach(struct gn_mac *mac);

/* mac_fault.c */
int gnsim_mac_fault_xmit(struct gn_mac *mac, struct gn_mac *peer,
			 const struct gnsim_frame *f, bool may_hold);
void gnsim_fault_flush(struct gn_mac *mac, bool deliver);
void gnsim_mac_fault_debugfs(struct gn_mac *mac, struct dentry *dir);

#endif /* _GAUDI_NIC_SIM_MAC_PRIV_H */
