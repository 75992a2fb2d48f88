// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated MAC's receive-side scaling: the header parser that picks a
 * frame's RX ring, the Toeplitz hash (Microsoft RSS) over precomputed
 * per-nibble tables, and the RSS state (key and indirection table) that
 * the driver replaces as a whole under RTNL (struct gnsim_mac_rss,
 * mac_priv.h).  The receive paths of mac.c call gnsim_mac_classify()
 * under RCU.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/in.h>
#include <linux/rtnetlink.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include "mac.h"
#include "mac_priv.h"

/* The 32 key bits starting at bit @bit, for input bit @bit of Toeplitz. */
static u32 gnsim_mac_rss_window(const u8 *key, unsigned int bit)
{
	u64 v = (u64)get_unaligned_be32(key + bit / 8) << 8 | key[bit / 8 + 4];

	return v >> (8 - bit % 8);
}

/* Precompute the Toeplitz hash of every nibble value at every position. */
static void gnsim_mac_rss_tables(struct gnsim_mac_rss *rss)
{
	unsigned int n, v, b;

	for (n = 0; n < GN_MAC_RSS_INPUT * 2; n++)
		for (v = 0; v < 16; v++) {
			u32 h = 0;

			for (b = 0; b < 4; b++)
				if (v & (8 >> b))
					h ^= gnsim_mac_rss_window(rss->key, n * 4 + b);
			rss->tbl[n][v] = h;
		}
}

/* The Toeplitz hash of @len bytes of hash input (Microsoft RSS). */
static u32 gnsim_mac_toeplitz(const struct gnsim_mac_rss *rss, const u8 *in,
			      unsigned int len)
{
	unsigned int i;
	u32 h = 0;

	for (i = 0; i < len; i++)
		h ^= rss->tbl[2 * i][in[i] >> 4] ^ rss->tbl[2 * i + 1][in[i] & 15];
	return h;
}

/*
 * Parse the headers the way the RSS and steering logic of the MAC does:
 * Ethernet (one optional VLAN tag), IPv4 or IPv6 (no extension headers),
 * TCP or UDP.  The hash is the Toeplitz hash of the source and
 * destination addresses, then the source and destination ports for TCP
 * and UDP (not for fragments).  Returns true if @hash was computed; then
 * @q is the RX ring of the hash's indirection table entry (of @nq rings).
 * RCU read side.
 */
bool gnsim_mac_classify(struct gn_mac *mac, const u8 *f, unsigned int len,
			unsigned int nq, u32 *hash, unsigned int *q,
			bool *l4, bool *roce)
{
	unsigned int off = ETH_HLEN, l4off, alen;
	const struct gnsim_mac_rss *rss;
	u8 in[GN_MAC_RSS_INPUT];
	u16 proto;
	u8 ipproto;

	*l4 = false;
	*roce = false;
	*q = 0;
	if (len < ETH_HLEN)
		return false;
	proto = get_unaligned_be16(f + 12);
	if (proto == ETH_P_8021Q && len >= VLAN_ETH_HLEN) {
		proto = get_unaligned_be16(f + 16);
		off = VLAN_ETH_HLEN;
	}
	if (proto == ETH_P_IP) {
		unsigned int ihl;

		if (len < off + 20 || (f[off] >> 4) != 4)
			return false;
		ihl = (f[off] & 0xf) * 4;
		if (ihl < 20)
			return false;
		ipproto = f[off + 9];
		l4off = off + ihl;
		/* fragments: no ports */
		if (get_unaligned_be16(f + off + 6) & 0x3fff)
			ipproto = 0;
		alen = 8;
		memcpy(in, f + off + 12, alen);
	} else if (proto == ETH_P_IPV6) {
		if (len < off + 40 || (f[off] >> 4) != 6)
			return false;
		ipproto = f[off + 6];
		l4off = off + 40;
		alen = 32;
		memcpy(in, f + off + 8, alen);
	} else {
		return false;
	}
	if ((ipproto == IPPROTO_TCP || ipproto == IPPROTO_UDP) &&
	    len >= l4off + 4) {
		memcpy(in + alen, f + l4off, 4);
		alen += 4;
		*l4 = true;
	}
	rss = rcu_dereference(mac->rss);
	*hash = gnsim_mac_toeplitz(rss, in, alen);
	/* an entry beyond the enabled rings wraps around them */
	*q = rss->indir[*hash % GN_MAC_RSS_INDIR_SIZE] % nq;
	if (*l4 && ipproto == IPPROTO_UDP &&
	    get_unaligned_be16(f + l4off + 2) == GN_ROCE_UDP_PORT)
		*roce = true;
	return true;
}

struct gnsim_mac_rss *gnsim_mac_rss_alloc(const u8 *key, const u8 *indir)
{
	struct gnsim_mac_rss *rss = kmalloc(sizeof(*rss), GFP_KERNEL);

	if (!rss)
		return NULL;
	memcpy(rss->key, key, GN_MAC_RSS_KEY_SIZE);
	memcpy(rss->indir, indir, GN_MAC_RSS_INDIR_SIZE);
	gnsim_mac_rss_tables(rss);
	return rss;
}

int gnsim_mac_set_rss(struct gn_mac *mac, const u8 *key, const u32 *indir)
{
	struct gnsim_mac_rss *old = rtnl_dereference(mac->rss), *rss;
	u8 tbl[GN_MAC_RSS_INDIR_SIZE];
	unsigned int i;

	ASSERT_RTNL();
	for (i = 0; i < GN_MAC_RSS_INDIR_SIZE; i++) {
		if (indir && indir[i] >= GN_MAC_MAX_QUEUES)
			return -EINVAL;
		tbl[i] = indir ? indir[i] : old->indir[i];
	}
	rss = gnsim_mac_rss_alloc(key ?: old->key, tbl);
	if (!rss)
		return -ENOMEM;
	/* frames in flight finish with the old state: the swap is hitless */
	rcu_assign_pointer(mac->rss, rss);
	kfree_rcu(old, rcu);
	return 0;
}

void gnsim_mac_get_rss(struct gn_mac *mac, u8 *key, u32 *indir)
{
	const struct gnsim_mac_rss *rss = rtnl_dereference(mac->rss);
	unsigned int i;

	ASSERT_RTNL();
	if (key)
		memcpy(key, rss->key, GN_MAC_RSS_KEY_SIZE);
	if (indir)
		for (i = 0; i < GN_MAC_RSS_INDIR_SIZE; i++)
			indir[i] = rss->indir[i];
}
