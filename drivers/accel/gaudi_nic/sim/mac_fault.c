// SPDX-License-Identifier: GPL-2.0
/*
 * Cable fault injection of the emulated MAC, a test hook (sim/mac.h): the
 * faults a port's frames suffer on the cable (drop, duplicate, reorder,
 * corrupt), their knobs (debugfs gaudi_nic_sim/gaudi_nic.N/p<port>_fault_*)
 * and the held frame of REORDER.  See struct gnsim_mac_fault_state.
 */
#include <linux/debugfs.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/tcp.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include "mac_priv.h"

/*
 * The offset of the byte CORRUPT inverts in @f, or -1 if the frame does not
 * qualify: the last byte of an IPv4 (unfragmented) or IPv6 TCP or UDP
 * datagram, before the ICRC for RoCE v2; UDP only with a checksum.
 */
static int gnsim_fault_corrupt_off(const struct gnsim_frame *f)
{
	unsigned int n = min_t(unsigned int, f->len, 128), l3, l4, end;
	u8 h[128], ipproto;
	u16 proto;

	if (n < ETH_HLEN + 4)
		return -1;
	gnsim_frame_read(f, 0, h, n);
	l3 = gnsim_l3_off(h);
	proto = get_unaligned_be16(h + l3 - 2);
	if (proto == ETH_P_IP) {
		if (n < l3 + 20 || (h[l3] >> 4) != 4 ||
		    (get_unaligned_be16(h + l3 + 6) & 0x3fff))
			return -1;
		ipproto = h[l3 + 9];
		l4 = l3 + (h[l3] & 0xf) * 4;
		end = l3 + get_unaligned_be16(h + l3 + 2);
	} else if (proto == ETH_P_IPV6) {
		if (n < l3 + 40 || (h[l3] >> 4) != 6)
			return -1;
		ipproto = h[l3 + 6];
		l4 = l3 + 40;
		end = l4 + get_unaligned_be16(h + l3 + 4);
	} else {
		return -1;
	}
	if (end > f->len || n < l4 + 8)
		return -1;
	if (ipproto == IPPROTO_UDP) {
		if (get_unaligned_be16(h + l4 + 2) == GN_ROCE_UDP_PORT)
			end -= 4;	/* the ICRC */
		else if (!get_unaligned_be16(h + l4 + 6))
			return -1;	/* no checksum: nobody would notice */
	} else if (ipproto != IPPROTO_TCP) {
		return -1;
	}
	return end > l4 + 8 ? end - 1 : -1;
}

/*
 * Under fs->lock: the fault @f gets (-1: none); REORDER holds it here.
 * Each knob rolls its own dice, the first hit applies.
 */
static int gnsim_fault_pick(struct gn_mac *mac, struct gn_mac *peer,
			    const struct gnsim_frame *f, int *corrupt_off)
{
	struct gnsim_mac_fault_state *fs = &mac->fault;
	int k;

	lockdep_assert_held(&fs->lock);
	for (k = 0; k < GN_MAC_FAULTS; k++) {
		if (!fs->every[k] ||
		    (fs->every[k] > 1 && get_random_u32_below(fs->every[k])))
			continue;
		if (k == GN_MAC_FAULT_CORRUPT) {
			*corrupt_off = gnsim_fault_corrupt_off(f);
			if (*corrupt_off < 0)
				continue;
		} else if (k == GN_MAC_FAULT_REORDER) {
			/* one held frame at most, and only for this peer */
			if (fs->held || rcu_access_pointer(mac->peer) != peer)
				continue;
			fs->held = kmalloc(f->len, GFP_ATOMIC | __GFP_NOWARN);
			if (!fs->held)
				continue;
			gnsim_frame_copy(f, fs->held);
			fs->held_len = f->len;
		}
		return k;
	}
	return -1;
}

/* Deliver a frame copied to @buf (BH disabled, RCU). */
static int gnsim_fault_rx_copy(struct gn_mac *peer, const u8 *buf,
			       unsigned int len, bool may_hold)
{
	struct gnsim_frame c = {
		.nfrags = 1,
		.len = len,
		.csum_start = -1,
		.frag[0] = { .p = buf, .len = len },
	};

	return gnsim_mac_rx(peer, &c, may_hold);
}

/* gnsim_mac_wire() with a fault set (BH disabled, RCU, maybe a TX ring lock). */
noinline int gnsim_mac_fault_xmit(struct gn_mac *mac, struct gn_mac *peer,
				  const struct gnsim_frame *f, bool may_hold)
{
	struct gnsim_mac_fault_state *fs = &mac->fault;
	unsigned int rel_len = 0;
	int kind, off = -1, ret;
	u8 *buf, *rel = NULL;

	spin_lock(&fs->lock);
	kind = gnsim_fault_pick(mac, peer, f, &off);
	spin_unlock(&fs->lock);

	switch (kind) {
	case GN_MAC_FAULT_DROP:
	case GN_MAC_FAULT_REORDER:	/* held: delivered after the next one */
		ret = 0;
		break;
	case GN_MAC_FAULT_DUP:
		ret = gnsim_mac_rx(peer, f, may_hold);
		if (!ret)
			gnsim_mac_rx(peer, f, false);
		break;
	case GN_MAC_FAULT_CORRUPT:
		buf = kmalloc(f->len, GFP_ATOMIC | __GFP_NOWARN);
		if (!buf) {
			kind = -1;
			ret = gnsim_mac_rx(peer, f, may_hold);
			break;
		}
		gnsim_frame_copy(f, buf);	/* checksum inserted, then broken */
		buf[off] ^= 0xff;
		ret = gnsim_fault_rx_copy(peer, buf, f->len, may_hold);
		kfree(buf);
		break;
	default:
		ret = gnsim_mac_rx(peer, f, may_hold);
		break;
	}

	spin_lock(&fs->lock);
	/* -EAGAIN: paused, not sent (the resend rolls the dice again) */
	if (ret != -EAGAIN) {
		if (kind == GN_MAC_FAULT_DROP)
			fs->dropped++;
		else if (kind == GN_MAC_FAULT_DUP)
			fs->duplicated++;
		else if (kind == GN_MAC_FAULT_CORRUPT)
			fs->corrupted++;
		/* a frame held earlier goes after this one */
		if (kind != GN_MAC_FAULT_REORDER && fs->held &&
		    rcu_access_pointer(mac->peer) == peer) {
			rel = fs->held;
			rel_len = fs->held_len;
			fs->held = NULL;
			fs->reordered++;
		}
	}
	spin_unlock(&fs->lock);
	if (rel) {
		gnsim_fault_rx_copy(peer, rel, rel_len, false);
		kfree(rel);
	}
	return ret;
}

/* Under fs->lock: the fault path is needed while a knob is set or a frame held. */
static void gnsim_fault_update_on(struct gnsim_mac_fault_state *fs)
{
	bool on = fs->held;
	unsigned int k;

	lockdep_assert_held(&fs->lock);
	for (k = 0; k < GN_MAC_FAULTS; k++)
		on |= fs->every[k] != 0;
	WRITE_ONCE(fs->on, on);
}

/*
 * Take the held frame out and deliver it to the current peer if the link
 * is up (@deliver), else free it (counted as dropped).
 */
void gnsim_fault_flush(struct gn_mac *mac, bool deliver)
{
	struct gnsim_mac_fault_state *fs = &mac->fault;
	struct gn_mac *peer;
	unsigned int len;
	u8 *held;

	rcu_read_lock();
	local_bh_disable();
	spin_lock(&fs->lock);
	held = fs->held;
	len = fs->held_len;
	fs->held = NULL;
	gnsim_fault_update_on(fs);
	peer = rcu_dereference(mac->peer);
	deliver = deliver && held && peer && READ_ONCE(mac->link);
	if (deliver)
		fs->reordered++;
	else if (held)
		fs->dropped++;
	spin_unlock(&fs->lock);
	if (deliver)
		gnsim_fault_rx_copy(peer, held, len, false);
	local_bh_enable();
	rcu_read_unlock();
	kfree(held);
}

int gnsim_mac_set_fault(struct gn_mac *mac, enum gnsim_mac_fault kind, u32 every)
{
	struct gnsim_mac_fault_state *fs = &mac->fault;

	if ((unsigned int)kind >= GN_MAC_FAULTS)
		return -EINVAL;
	spin_lock_bh(&fs->lock);
	WRITE_ONCE(fs->every[kind], every);
	gnsim_fault_update_on(fs);
	spin_unlock_bh(&fs->lock);
	/* REORDER off: nothing is held any more, out with the held frame */
	if (kind == GN_MAC_FAULT_REORDER && !every)
		gnsim_fault_flush(mac, true);
	return 0;
}

u32 gnsim_mac_get_fault(struct gn_mac *mac, enum gnsim_mac_fault kind)
{
	if ((unsigned int)kind >= GN_MAC_FAULTS)
		return 0;
	return READ_ONCE(mac->fault.every[kind]);
}

/* ------------------------------------------------- fault knobs (debugfs) */

static int gnsim_mac_fault_knob_get(void *data, u64 *val)
{
	struct gnsim_mac_fault_knob *knob = data;

	*val = gnsim_mac_get_fault(knob->mac, knob->kind);
	return 0;
}

static int gnsim_mac_fault_knob_set(void *data, u64 val)
{
	struct gnsim_mac_fault_knob *knob = data;

	if (val > U32_MAX) {
		dev_err(knob->mac->dma_dev,
			"port %u: fault injection: %llu is out of range (one frame in N, N <= %u, 0 = off)\n",
			knob->mac->port, val, U32_MAX);
		return -EINVAL;
	}
	return gnsim_mac_set_fault(knob->mac, knob->kind, val);
}
DEFINE_DEBUGFS_ATTRIBUTE(gnsim_mac_fault_fops, gnsim_mac_fault_knob_get,
			 gnsim_mac_fault_knob_set, "%llu\n");

/*
 * Cable faults on the frames the port transmits, p<port>_fault_<kind> in
 * the device's debugfs directory: one frame in N (at random, 1 = every
 * frame, 0 = off) is dropped, duplicated, reordered or corrupted; counted
 * in the MAC counters fault_* (ethtool -S mac_fault_*).
 */
void gnsim_mac_fault_debugfs(struct gn_mac *mac, struct dentry *dir)
{
	static const char * const kinds[GN_MAC_FAULTS] = {
		[GN_MAC_FAULT_DROP] = "drop",
		[GN_MAC_FAULT_DUP] = "dup",
		[GN_MAC_FAULT_REORDER] = "reorder",
		[GN_MAC_FAULT_CORRUPT] = "corrupt",
	};
	char name[32];
	unsigned int k;

	if (IS_ERR_OR_NULL(dir))
		return;
	for (k = 0; k < GN_MAC_FAULTS; k++) {
		mac->fault_knob[k].mac = mac;
		mac->fault_knob[k].kind = k;
		snprintf(name, sizeof(name), "p%u_fault_%s", mac->port,
			 kinds[k]);
		mac->fault_knob[k].dentry =
			debugfs_create_file_unsafe(name, 0600, dir,
						   &mac->fault_knob[k],
						   &gnsim_mac_fault_fops);
	}
}
