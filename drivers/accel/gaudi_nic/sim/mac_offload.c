// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated MAC's offloads and frame helpers: checksum insertion while
 * a frame is copied (gnsim_frame_copy(), the receive checksum with it),
 * TSO segmentation, and reading a frame gathered from pieces.  The MAC's
 * transmit and receive paths (mac.c), its fault injection (mac_fault.c)
 * and the uplinks (uplink.c) use them; see mac_priv.h.
 */
#include <linux/if_ether.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/tcp.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>
#include "mac_priv.h"

static __wsum gnsim_csum_word(__sum16 w)
{
	return (__force __wsum)(u32)(__force u16)w;
}

/*
 * The ones'-complement sum of @len bytes (as csum_partial() computes it).
 * Plain 64-bit additions of 32-bit words, the carries folded at the end:
 * no add-with-carry chain, which an emulated CPU runs slowly.
 */
static __wsum gnsim_csum(const u8 *p, unsigned int len)
{
	u64 sum = 0;

	for (; len >= 16; len -= 16, p += 16)
		sum += (u64)get_unaligned((const u32 *)p) +
		       get_unaligned((const u32 *)(p + 4)) +
		       get_unaligned((const u32 *)(p + 8)) +
		       get_unaligned((const u32 *)(p + 12));
	for (; len >= 4; len -= 4, p += 4)
		sum += get_unaligned((const u32 *)p);
	if (len >= 2) {
		sum += get_unaligned((const u16 *)p);
		p += 2;
		len -= 2;
	}
	if (len)	/* the first byte of a 16-bit word */
		sum += IS_ENABLED(CONFIG_CPU_BIG_ENDIAN) ? (u32)*p << 8 : *p;
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	return (__force __wsum)(u32)sum;
}

/* Copy @len bytes and return their ones'-complement sum. */
static __wsum gnsim_csum_copy(const u8 *src, u8 *dst, unsigned int len)
{
	memcpy(dst, src, len);
	return gnsim_csum(dst, len);
}

/*
 * Copy @f (f->len bytes) to @dst, insert its checksum if asked, and return
 * the ones'-complement sum of the result after the Ethernet header (the
 * receive checksum).  One pass over the data: from the checksum start on,
 * it is summed while copied.
 */
__wsum gnsim_frame_copy(const struct gnsim_frame *f, u8 *dst)
{
	unsigned int i, off = 0, start = ETH_HLEN, pre;
	__sum16 *field, old;
	__wsum sum = 0, c;

	if (f->icrc_insert) {
		/* a RoCE engine's frame: its bytes are seen */
		for (i = 0; i < f->nfrags; off += f->frag[i].len, i++)
			memcpy(dst + off, f->frag[i].p, f->frag[i].len);
		gnsim_roce_icrc_insert(dst, f->len);
		return gnsim_csum(dst + ETH_HLEN, f->len - ETH_HLEN);
	}
	if (f->csum_start >= ETH_HLEN)
		start = f->csum_start;
	for (i = 0; i < f->nfrags; off += f->frag[i].len, i++) {
		const u8 *p = f->frag[i].p;
		unsigned int l = f->frag[i].len;

		pre = off < start ? min(l, start - off) : 0;
		if (pre)
			memcpy(dst + off, p, pre);
		if (l > pre) {
			c = gnsim_csum_copy(p + pre, dst + off + pre, l - pre);
			sum = csum_block_add(sum, c, off + pre - start);
		}
	}
	if (f->csum_start >= 0) {
		if (f->csum_start != start)	/* odd frame: sum its way */
			sum = csum_partial(dst + f->csum_start,
					   f->len - f->csum_start, 0);
		field = (__sum16 *)(dst + f->csum_start + f->csum_offset);
		old = *field;
		*field = csum_fold(sum) ?: CSUM_MANGLED_0;
		if (f->csum_start != start || (f->csum_offset & 1))
			return csum_partial(dst + ETH_HLEN, f->len - ETH_HLEN, 0);
		sum = csum_add(csum_sub(sum, gnsim_csum_word(old)),
			       gnsim_csum_word(*field));
	}
	if (start > ETH_HLEN)
		sum = csum_block_add(csum_partial(dst + ETH_HLEN,
						  start - ETH_HLEN, 0),
				     sum, start - ETH_HLEN);
	return sum;
}

/* Copy @len bytes at offset @off of frame @f to @dst. */
void gnsim_frame_read(const struct gnsim_frame *f, unsigned int off, u8 *dst,
		      unsigned int len)
{
	unsigned int i, c;

	for (i = 0; i < f->nfrags && len; i++) {
		if (off >= f->frag[i].len) {
			off -= f->frag[i].len;
			continue;
		}
		c = min(len, f->frag[i].len - off);
		memcpy(dst, f->frag[i].p + off, c);
		dst += c;
		len -= c;
		off = 0;
	}
}

/* The L3 header offset of @hdr (one optional VLAN tag). */
unsigned int gnsim_l3_off(const u8 *hdr)
{
	return get_unaligned_be16(hdr + 12) == ETH_P_8021Q ? VLAN_ETH_HLEN :
							       ETH_HLEN;
}

/* TSO headers the MAC can segment: IPv4 or IPv6, then TCP at csum_start. */
bool gnsim_tso_hdr_ok(const struct gnsim_frame *f, const u8 *hdr)
{
	unsigned int l3 = gnsim_l3_off(hdr);
	u16 proto = get_unaligned_be16(hdr + l3 - 2);

	if (proto == ETH_P_IP)
		return (hdr[l3] >> 4) == 4 && hdr[l3 + 9] == IPPROTO_TCP &&
		       l3 + (hdr[l3] & 0xf) * 4 == f->csum_start;
	if (proto == ETH_P_IPV6)
		return (hdr[l3] >> 4) == 6 && hdr[l3 + 6] == IPPROTO_TCP &&
		       l3 + sizeof(struct ipv6hdr) == f->csum_start;
	return false;
}

/*
 * Segment @k of the TSO frame @f into @seg, headers built in @hdr from the
 * template @tmpl.  Returns false once past the last segment.
 */
bool gnsim_tso_segment(const struct gnsim_frame *f, unsigned int k,
		       const u8 *tmpl, u8 *hdr, struct gnsim_frame *seg)
{
	unsigned int l3 = gnsim_l3_off(tmpl), l4 = f->csum_start, hl = f->hdr_len;
	unsigned int po = hl + k * f->mss, plen, tcplen, i, off, c;
	struct tcphdr *th;

	if (po >= f->len)
		return false;
	plen = min(f->mss, f->len - po);
	tcplen = hl - l4 + plen;
	memcpy(hdr, tmpl, hl);
	th = (struct tcphdr *)(hdr + l4);
	th->seq = htonl(ntohl(th->seq) + k * f->mss);
	if (po + plen < f->len) {
		th->fin = 0;
		th->psh = 0;
	}
	if (k)
		th->cwr = 0;
	if ((hdr[l3] >> 4) == 4) {
		struct iphdr *iph = (struct iphdr *)(hdr + l3);

		iph->tot_len = htons(hl - l3 + plen);
		iph->id = htons(ntohs(iph->id) + k);
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
		th->check = ~csum_tcpudp_magic(iph->saddr, iph->daddr, tcplen,
					       IPPROTO_TCP, 0);
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)(hdr + l3);

		ip6h->payload_len = htons(hl - l3 - sizeof(*ip6h) + plen);
		th->check = ~csum_ipv6_magic(&ip6h->saddr, &ip6h->daddr, tcplen,
					     IPPROTO_TCP, 0);
	}
	seg->frag[0].p = hdr;
	seg->frag[0].len = hl;
	seg->nfrags = 1;
	/* the payload: bytes [po, po + plen) of the frame */
	for (i = 0, off = 0; i < f->nfrags && plen; off += f->frag[i].len, i++) {
		if (po >= off + f->frag[i].len)
			continue;
		c = min(plen, off + f->frag[i].len - po);
		seg->frag[seg->nfrags].p = f->frag[i].p + (po - off);
		seg->frag[seg->nfrags].len = c;
		seg->nfrags++;
		po += c;
		plen -= c;
	}
	seg->len = tcplen + l4;
	seg->csum_start = l4;
	seg->csum_offset = f->csum_offset;
	seg->mss = 0;
	return true;
}

