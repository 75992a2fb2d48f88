// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: transmit.  Frame headers, the ICRC,
 * trains of zero-copy frames, loopback, the hand-over to the MAC.
 * Part of the data path described in roce_dp.c.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/if_ether.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <net/ip6_checksum.h>
#include "mac.h"

#include "roce_dp.h"

static bool gnsim_icrc_offload = true;
module_param_named(roce_icrc_offload, gnsim_icrc_offload, bool, 0644);
MODULE_PARM_DESC(roce_icrc_offload,
		 "RoCE engines leave the ICRC of their frames to the MAC, which computes it only where the bytes are seen (default: on; off: every ICRC computed and checked)");

static bool gnsim_tx_zerocopy = true;
module_param_named(roce_tx_zerocopy, gnsim_tx_zerocopy, bool, 0644);
MODULE_PARM_DESC(roce_tx_zerocopy,
		 "RoCE engines hand the MAC their payload where it lies in the memory regions instead of copying it into the frame (default: on; needs roce_icrc_offload)");

static unsigned int gnsim_tx_train = GN_RR_TRAIN_MAX;
module_param_named(roce_tx_train, gnsim_tx_train, uint, 0644);
MODULE_PARM_DESC(roce_tx_train,
		 "Frames a RoCE engine sends zero-copy go to the MAC in trains of up to this many (1 to 16, default 16; 1: one by one), which a receiving engine takes in one piece");

/*
 * The TX skb an engine is handing to the cable on this CPU (gnsim_tx_end),
 * which the receiving engine's hook takes instead of copying the frame.
 */
DEFINE_PER_CPU(struct sk_buff *, gnsim_rdp_handoff);

/* ----------------------------------------------------------- transmit */

/*
 * Offset of the transport payload in a TX frame of @qp for @op on @path
 * (&qp->path, or a datagram's AV), or a negative value if the path cannot
 * be used (no source GID).
 */
int gnsim_tx_hdr_len(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		     const struct gn_roce_av *path, u8 op)
{
	const struct gn_roce_gid_ctx *g;
	int l3;

	if (path->sgid_index >= GN_ROCE_MAX_GID)
		return -1;
	g = &r->ports[qp->ctx.port].gids[path->sgid_index];

	if (g->type == GN_ROCE_GID_V2_IPV4)
		l3 = sizeof(struct iphdr);
	else if (g->type == GN_ROCE_GID_V2_IPV6)
		l3 = sizeof(struct ipv6hdr);
	else
		return -1;
	return ETH_HLEN + l3 + sizeof(struct udphdr) + BTH_LEN +
	       op_ext_len(op);
}

/*
 * CRC-32 (IEEE, reflected, no inversion) for the ICRC: the engine's cost
 * per byte.  In the TCG guest of the tests the CPU has no PCLMULQDQ, so
 * the crypto API offers only crc32-generic (the library's slice-by-8).
 * Slice-by-16 over 16 KiB of tables, two 64-bit loads per 16 bytes, was
 * measured there at about 950 MB/s against 800 for the library (memcpy:
 * about 7 GB/s).  Larger tables (16-bit indices, 1 MiB) were ten times
 * slower (host cache misses), and computing the CRC while copying was
 * slower than copying, then computing.  An accelerated crypto driver
 * (crc32-pclmul on real CPUs) is used instead when there is one.  Both are
 * shared by all engines (set up for the first, freed after the last).
 */
#define GN_CRC_POLY	0xedb88320

static DEFINE_MUTEX(gnsim_crc_mutex);
static unsigned int gnsim_crc_users;	/* engines, under gnsim_crc_mutex */
/* gnsim_crc_tab[k][v]: CRC of byte v followed by k zero bytes */
static u32 (*gnsim_crc_tab)[256];
/* accelerated crc32 (not crc32-generic), or NULL */
static struct crypto_shash *gnsim_crc_tfm;

/* The CRC contribution of 8 bytes @v (little endian), tables @t[0..7]. */
static inline u32 gnsim_crc_step8(u32 (*t)[256], u64 v)
{
	return t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^
	       t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
	       t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^
	       t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
}

static u32 gnsim_crc_tables(u32 crc, const u8 *p, u32 len)
{
	u32 (*t)[256] = gnsim_crc_tab;

	for (; len >= 16; len -= 16, p += 16) {
		u64 v0 = get_unaligned_le64(p) ^ crc, v1 = get_unaligned_le64(p + 8);

		crc = gnsim_crc_step8(t + 8, v0) ^ gnsim_crc_step8(t, v1);
	}
	while (len--)
		crc = (crc >> 8) ^ t[0][(crc ^ *p++) & 0xff];
	return crc;
}

/*
 * Frame skbs: a frame taken over by the receiving engine is built in an
 * skb of GN_RR_MAX_FRAME bytes, which comes back here when its last user
 * is done with it, sparing the allocator (and its zeroing) per frame.
 */
static struct sk_buff_head gnsim_skb_pool;
#define GN_SKB_POOL_MAX		512

struct sk_buff *gnsim_rdp_skb_alloc(void)
{
	struct sk_buff *skb = skb_dequeue(&gnsim_skb_pool);

	return skb ?: alloc_skb(GN_RR_MAX_FRAME, GFP_ATOMIC | __GFP_NOWARN);
}

void gnsim_rdp_skb_free(struct sk_buff *skb)
{
	if (!skb_unref(skb))
		return;
	/*
	 * skb_unref() returns true either with users still 1 (we were the
	 * only holder) or after taking it from 1 to 0 (the other holder
	 * dropped its reference at the same time): we own the skb in both
	 * cases.  Back to one user before anything else: a pooled skb starts
	 * again at one, and consume_skb() drops one more (from 0 it would
	 * underflow and leak the skb).
	 */
	refcount_set(&skb->users, 1);
	if (skb_is_nonlinear(skb) || skb_cloned(skb) ||
	    skb_headroom(skb) || skb_end_offset(skb) < GN_RR_MAX_FRAME ||
	    skb_queue_len_lockless(&gnsim_skb_pool) >= GN_SKB_POOL_MAX) {
		consume_skb(skb);
		return;
	}
	skb_trim(skb, 0);
	skb_queue_tail(&gnsim_skb_pool, skb);
}

/*
 * Reference skbs of the receive pipeline (gnsim_rdp_rx_ref_skb()): a head of
 * GN_RR_REF_HEAD bytes for the headers and page fragments for the payload.
 * The engine's thread puts them back here with their page references
 * dropped (gnsim_rdp_work()), so that the sender's CPU, which makes them,
 * does not allocate and the receiver's does not free one per frame.
 * Marked in cb[2]; the pool lock is taken with BH disabled.
 */
struct sk_buff_head gnsim_ref_pool;

/* Drop the page references of a processed reference skb; false if not one. */
bool gnsim_rdp_ref_reset(struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	unsigned int k;

	if (skb->cb[2] != GN_SKB_REF || skb_cloned(skb) ||
	    refcount_read(&skb->users) != 1)
		return false;
	for (k = 0; k < sh->nr_frags; k++)
		put_page(skb_frag_page(&sh->frags[k]));
	sh->nr_frags = 0;
	skb->data_len = 0;
	skb->len = 0;
	skb_reset_tail_pointer(skb);
	skb->truesize = SKB_TRUESIZE(skb_end_offset(skb));
	return true;
}

/*
 * State shared by the engines, made for the first one: the ICRC tables
 * (checked against the library) and the frame pools.
 */
void gnsim_rdp_get(void)
{
	static const u8 probe[] = "gaudi_nic ICRC table self-test 0123456789";
	struct crypto_shash *tfm;
	u32 (*t)[256], i, k;

	mutex_lock(&gnsim_crc_mutex);
	if (gnsim_crc_users++)
		goto out;
	skb_queue_head_init(&gnsim_skb_pool);
	skb_queue_head_init(&gnsim_ref_pool);
	/* crc32-pclmul when available; the tables otherwise */
	tfm = crypto_alloc_shash("crc32", 0, 0);
	if (!IS_ERR(tfm) && strcmp(crypto_shash_driver_name(tfm),
				   "crc32-generic"))
		gnsim_crc_tfm = tfm;
	else if (!IS_ERR(tfm))
		crypto_free_shash(tfm);
	/* without the tables, the CRC library does the work */
	t = kmalloc_array(16, sizeof(*t), GFP_KERNEL);
	if (!t)
		goto out;
	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? GN_CRC_POLY : 0);
		t[0][i] = c;
	}
	for (k = 1; k < 16; k++)
		for (i = 0; i < 256; i++)
			t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
	gnsim_crc_tab = t;
	if (gnsim_crc_tables(0x12345678, probe, sizeof(probe)) !=
	    crc32_le(0x12345678, probe, sizeof(probe))) {
		pr_err("gaudi_nic: ICRC tables are wrong; using the CRC library\n");
		gnsim_crc_tab = NULL;
		kfree(t);
	}
out:
	mutex_unlock(&gnsim_crc_mutex);
}

void gnsim_rdp_put(void)
{
	mutex_lock(&gnsim_crc_mutex);
	if (!--gnsim_crc_users) {
		skb_queue_purge(&gnsim_skb_pool);
		skb_queue_purge(&gnsim_ref_pool);
		kfree(gnsim_crc_tab);
		gnsim_crc_tab = NULL;
		if (gnsim_crc_tfm)
			crypto_free_shash(gnsim_crc_tfm);
		gnsim_crc_tfm = NULL;
	}
	mutex_unlock(&gnsim_crc_mutex);
}

static u32 gnsim_crc(u32 crc, const void *p, u32 len)
{
	if (gnsim_crc_tfm) {
		SHASH_DESC_ON_STACK(d, gnsim_crc_tfm);

		d->tfm = gnsim_crc_tfm;
		*(u32 *)shash_desc_ctx(d) = crc;
		if (!crypto_shash_update(d, p, len))
			return *(u32 *)shash_desc_ctx(d);
	}
	if (gnsim_crc_tab)
		return gnsim_crc_tables(crc, p, len);
	return crc32_le(crc, p, len);
}

/* ICRC state (not inverted) after the masked L3, UDP and BTH headers. */
static u32 gnsim_icrc_hdr(const u8 *l3, bool v4)
{
	u8 ps[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + BTH_LEN];
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *uh;

	memcpy(ps, l3, l3len + sizeof(struct udphdr) + BTH_LEN);
	if (v4) {
		struct iphdr *ih = (struct iphdr *)ps;

		ih->tos = 0xff;
		ih->ttl = 0xff;
		ih->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *ih = (struct ipv6hdr *)ps;

		memset(ih->flow_lbl, 0xff, sizeof(ih->flow_lbl));
		ih->priority = 0xf;
		ih->hop_limit = 0xff;
	}
	uh = (struct udphdr *)(ps + l3len);
	uh->check = CSUM_MANGLED_0;
	ps[l3len + sizeof(struct udphdr) + 4] = 0xff;	/* BTH resv8a */
	/* seed: CRC of 0xffffffff over 8 bytes of 0xff (masked LRH) */
	return gnsim_crc(0xdebb20e3, ps, l3len + sizeof(struct udphdr) + BTH_LEN);
}

/* The ICRC of the packet at @bth (@tlen bytes from BTH to ICRC). */
u32 gnsim_icrc(const u8 *l3, bool v4, const u8 *bth, u32 tlen)
{
	u32 crc = gnsim_icrc_hdr(l3, v4);

	return ~gnsim_crc(crc, bth + BTH_LEN, tlen - BTH_LEN - ICRC_LEN);
}

/* Write the ICRC and, over IPv6, the UDP checksum (which covers it). */
static void gnsim_icrc_write(u8 *l3, bool v4, u8 *bth, u32 tlen)
{
	struct udphdr *uh = (struct udphdr *)bth - 1;
	u32 ulen = sizeof(*uh) + tlen;
	struct ipv6hdr *ih = (struct ipv6hdr *)l3;

	put_unaligned_le32(gnsim_icrc(l3, v4, bth, tlen), bth + tlen - ICRC_LEN);
	if (v4)
		return;
	uh->check = 0;
	uh->check = csum_ipv6_magic(&ih->saddr, &ih->daddr, ulen, IPPROTO_UDP,
				    csum_partial(uh, ulen, 0));
	if (!uh->check)
		uh->check = CSUM_MANGLED_0;
}

/*
 * The MAC's side of the ICRC insertion offload (mac.h): @f is a frame an
 * engine built (gnsim_tx_hdr), so only its lengths are checked.
 */
void gnsim_roce_icrc_insert(u8 *f, unsigned int len)
{
	bool v4 = get_unaligned_be16(f + 12) == ETH_P_IP;
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *uh = (struct udphdr *)(f + ETH_HLEN + l3len);
	u32 ulen;

	if (len < ETH_HLEN + l3len + sizeof(*uh))
		return;
	ulen = ntohs(uh->len);
	if (ulen < sizeof(*uh) + BTH_LEN + ICRC_LEN ||
	    ulen > len - ETH_HLEN - l3len)
		return;
	gnsim_icrc_write(f + ETH_HLEN, v4, (u8 *)(uh + 1), ulen - sizeof(*uh));
}

/* Where @qp's frame @p goes: the datagram's AV (UD), else the QP's path. */
static const struct gn_roce_av *gnsim_tx_path(const struct gnsim_rqp *qp,
					      const struct gnsim_pkt *p)
{
	return p->av ? p->av : &qp->path;
}

/*
 * Write the headers of the frame for @p (p->paylen set) into r->frame, to
 * gnsim_tx_path() (gnsim_tx_hdr_len() found it usable); the payload goes to
 * tf->payload.
 */
static void gnsim_tx_hdr(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			 const struct gnsim_pkt *p, struct gnsim_txf *tf)
{
	const struct gn_roce_av *path = gnsim_tx_path(qp, p);
	struct gnsim_rport *pt = &r->ports[qp->ctx.port];
	const struct gn_roce_gid_ctx *g = &pt->gids[path->sgid_index];
	bool v4 = g->type == GN_ROCE_GID_V2_IPV4;
	u32 l3len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	u8 *f = r->frame, *l3 = f + ETH_HLEN, *x;
	u32 pad = (-p->paylen) & 3, tlen, ulen, flen;
	struct ethhdr *eh = (struct ethhdr *)f;
	struct udphdr *uh = (struct udphdr *)(l3 + l3len);
	u8 *bth = (u8 *)(uh + 1);
	u32 ext = op_ext_len(p->opcode);

	tlen = BTH_LEN + ext + p->paylen + pad + ICRC_LEN;
	ulen = sizeof(*uh) + tlen;
	flen = ETH_HLEN + l3len + ulen;

	ether_addr_copy(eh->h_dest, path->dmac);
	ether_addr_copy(eh->h_source, pt->mac_addr);
	eh->h_proto = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	if (v4) {
		struct iphdr *ih = (struct iphdr *)l3;

		ih->version = 4;
		ih->ihl = 5;
		ih->tos = path->traffic_class;
		ih->tot_len = htons(l3len + ulen);
		ih->id = 0;
		ih->frag_off = htons(IP_DF);
		ih->ttl = path->hop_limit ? path->hop_limit : 64;
		ih->protocol = IPPROTO_UDP;
		memcpy(&ih->saddr, g->gid + 12, 4);
		memcpy(&ih->daddr, path->dgid + 12, 4);
		ih->check = 0;
		ih->check = ip_fast_csum(ih, ih->ihl);
	} else {
		struct ipv6hdr *ih = (struct ipv6hdr *)l3;
		u32 fl = le32_to_cpu(path->flow_label);

		ip6_flow_hdr(ih, path->traffic_class, htonl(fl & 0xfffff));
		ih->payload_len = htons(ulen);
		ih->nexthdr = IPPROTO_UDP;
		ih->hop_limit = path->hop_limit ? path->hop_limit : 64;
		memcpy(&ih->saddr, g->gid, 16);
		memcpy(&ih->daddr, path->dgid, 16);
	}
	uh->source = htons(0xc000 | (qp->qpn & 0x3fff));
	uh->dest = htons(GN_ROCE_UDP_PORT);
	uh->len = htons(ulen);
	uh->check = 0;

	bth[0] = p->opcode | (p->uc ? OP_UC : 0);
	bth[1] = p->se | BTH_MIG | (pad << 4);
	put_unaligned_be16(0xffff, bth + 2);
	put_unaligned_be32(p->dqpn & PSN_MASK, bth + 4);
	put_unaligned_be32((p->psn & PSN_MASK) | (p->ackreq ? BTH_ACKREQ : 0),
			   bth + 8);
	x = bth + BTH_LEN;
	/* FLUSH: FETH before RETH (IBA A19, as rxe) */
	if (p->opcode == OP_FLUSH) {
		put_unaligned_be32(p->feth, x);
		x += FETH_LEN;
	}
	if (op_has_reth(p->opcode)) {
		put_unaligned_be64(p->va, x);
		put_unaligned_be32(p->rkey, x + 8);
		put_unaligned_be32(p->dmalen, x + 12);
		x += RETH_LEN;
	}
	if (op_has_aeth(p->opcode)) {
		put_unaligned_be32(p->aeth, x);
		x += AETH_LEN;
	}
	if (op_is_ud(p->opcode)) {
		put_unaligned_be32(p->qkey, x);
		put_unaligned_be32(p->sqpn & PSN_MASK, x + 4);
		x += DETH_LEN;
	}
	if (op_has_imm(p->opcode)) {
		memcpy(x, &p->imm, IMM_LEN);
		x += IMM_LEN;
	}
	if (op_has_ieth(p->opcode)) {
		put_unaligned_be32(p->rkey, x);
		x += IETH_LEN;
	}
	tf->v4 = v4;
	tf->bth = bth;
	tf->payload = x;
	tf->paylen = p->paylen;
	tf->tlen = tlen;
	tf->flen = flen;
}

/*
 * Zero-copy transmit: may the payload of @qp's next frame be handed to
 * the MAC where it lies (gnsim_tx_end)?  Only with the ICRC left to the MAC
 * (the engine never reads the payload), and not in a MAC's call chain
 * (deferred frames are copied into a queue anyway).
 */
static bool gnsim_tx_zc_ok(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	/* a UD send completes once sent: its data must be copied by then */
	return qp->ctx.type == GN_ROCE_QPT_RC &&
	       READ_ONCE(gnsim_tx_zerocopy) && READ_ONCE(gnsim_icrc_offload) &&
	       !r->rx_inline && r->ports[qp->ctx.port].mac;
}

static unsigned int gnsim_tx_train_len(void)
{
	return clamp_t(unsigned int, READ_ONCE(gnsim_tx_train), 1,
		       GN_RR_TRAIN_MAX);
}

static bool gnsim_rdp_is_loop(const struct gnsim_rport *pt,
			      const struct gnsim_mac_roce_frame *fr)
{
	return ether_addr_equal(fr->frags[0].p, pt->mac_addr);
}

/*
 * Hand @n frames to port @pt's MAC, except those addressed to the port's
 * own MAC address: the engine receives them itself (loopback, as rxe and
 * mlx5 do), through the same receive path as frames from the cable; the
 * frame never leaves the chip, so an ICRC left to the MAC is good.
 */
static void gnsim_rdp_xmit(struct gnsim_rport *pt,
			   const struct gnsim_mac_roce_frame *fr, unsigned int n,
			   u32 flags)
{
	unsigned int i, j;

	for (i = 0; i < n; i = j) {
		bool loop = gnsim_rdp_is_loop(pt, &fr[i]);

		for (j = i + 1; j < n && gnsim_rdp_is_loop(pt, &fr[j]) == loop;)
			j++;
		if (loop) {
			pt->st.loopback_pkts += j - i;
			gnsim_rdp_rx(pt, &fr[i], j - i,
				     flags & GN_MAC_ROCE_ICRC_INSERT ?
				     GN_MAC_ROCE_ICRC_OK : 0);
		} else if (pt->mac) {
			gnsim_mac_roce_xmit_train(pt->mac, &fr[i], j - i, flags);
		}
	}
}

/* gnsim_rdp_xmit() of one frame in one piece. */
void gnsim_rdp_xmit1(struct gnsim_rport *pt, const u8 *f, u32 len, u32 flags)
{
	struct gnsim_mac_roce_frag piece = { .p = f, .len = len };
	struct gnsim_mac_roce_frame fr = { .frags = &piece, .nfrags = 1,
					.len = len };

	gnsim_rdp_xmit(pt, &fr, 1, flags);
}

/* Send the train gathered so far (under dp_lock). */
void gnsim_tx_train_flush(struct gaudi_nic_roce *r)
{
	struct gnsim_rtrain *t = r->train;

	lockdep_assert_held(&r->dp_lock);
	if (!t->n)
		return;
	gnsim_rdp_xmit(&r->ports[t->port], t->fr, t->n, GN_MAC_ROCE_ICRC_INSERT);
	t->n = 0;
}

/*
 * The pieces for the next frame of @qp's train: a frame sent zero-copy
 * joins the train (gnsim_tx_end()), which goes to the MAC when full, before
 * any other frame, and at the end of gnsim_req_send() and gnsim_resp_read(), so
 * that it is empty whenever dp_lock is released.
 */
static struct gnsim_mac_roce_frag *gnsim_tx_train_slot(struct gaudi_nic_roce *r,
						       struct gnsim_rqp *qp)
{
	struct gnsim_rtrain *t = r->train;

	if (t->n && (t->qpn != qp->qpn || t->port != qp->ctx.port))
		gnsim_tx_train_flush(r);
	return t->pieces[t->n];
}

/*
 * Finish the frame of gnsim_tx_hdr() and send it on @qp's path.  Its payload
 * is either in place after the headers (@pay NULL), or in @pay[1] to
 * @pay[npay] (gnsim_tx_zc_ok()), @pay being gnsim_tx_train_slot(): then the
 * headers are copied to the train and go in @pay[0], the pad and ICRC in
 * @pay[npay + 1], and the frame joins the train, which the MAC gathers.
 * A large frame built in place is in an skb that the receiving engine may
 * take over (see gnsim_rdp_rx_frame).
 */
static void gnsim_tx_end(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			 const struct gnsim_txf *tf, struct gnsim_mac_roce_frag *pay,
			 unsigned int npay)
{
	struct gnsim_rport *pt = &r->ports[qp->ctx.port];
	u8 *f = r->frame, *x = tf->payload + tf->paylen;
	u32 pad = (-tf->paylen) & 3, flags = 0;
	struct sk_buff *skb, *prev;

	if (pay) {
		struct gnsim_rtrain *t = r->train;
		u8 *hdr = t->hdr[t->n];

		pt->st.tx_pkts++;
		pt->st.tx_bytes += tf->flen;
		memcpy(hdr, f, tf->payload - f);
		pay[0].p = hdr;
		pay[0].len = tf->payload - f;
		/*
		 * pad and ICRC field (the MAC fills it where it is seen): zeros
		 * in the zero page, which a receiver knows
		 */
		pay[npay + 1].p = page_address(ZERO_PAGE(0));
		pay[npay + 1].len = pad + ICRC_LEN;
		t->fr[t->n].frags = pay;
		t->fr[t->n].nfrags = npay + 2;
		t->fr[t->n].len = tf->flen;
		t->port = qp->ctx.port;
		t->qpn = qp->qpn;
		if (++t->n >= gnsim_tx_train_len())
			gnsim_tx_train_flush(r);
		return;
	}
	gnsim_tx_train_flush(r);	/* what was gathered goes first */
	memset(x, 0, pad + ICRC_LEN);
	if (READ_ONCE(gnsim_icrc_offload))
		flags = GN_MAC_ROCE_ICRC_INSERT;
	else
		gnsim_icrc_write(f + ETH_HLEN, tf->v4, tf->bth, tf->tlen);
	pt->st.tx_pkts++;
	pt->st.tx_bytes += tf->flen;
	if (!pt->mac && !ether_addr_equal(f, pt->mac_addr))
		return;
	if (r->rx_inline) {
		/* in a MAC's call chain: the work item sends it */
		skb = alloc_skb(tf->flen, GFP_ATOMIC | __GFP_NOWARN);
		if (!skb)
			return;	/* lost on the wire; the peer recovers */
		skb_put_data(skb, f, tf->flen);
		skb->cb[0] = pt->port;
		skb->cb[1] = flags;
		skb_queue_tail(&r->txq, skb);
		return;
	}
	skb = r->txskb;
	if (skb && tf->flen >= GN_RR_HANDOFF_MIN) {
		/* dp_lock (BH off) keeps us on this CPU; the cable is synchronous */
		prev = this_cpu_read(gnsim_rdp_handoff);
		this_cpu_write(gnsim_rdp_handoff, skb);
		gnsim_rdp_xmit1(pt, f, tf->flen, flags);
		if (this_cpu_read(gnsim_rdp_handoff) != skb) {
			/* taken: the receiver holds its own reference */
			gnsim_rdp_skb_free(skb);
			r->txskb = NULL;
		}
		this_cpu_write(gnsim_rdp_handoff, prev);
	} else {
		gnsim_rdp_xmit1(pt, f, tf->flen, flags);
	}
	if (!r->txskb) {
		r->txskb = gnsim_rdp_skb_alloc();
		r->frame = r->txskb ? r->txskb->data : r->frame_buf;
	}
}

/*
 * Finish the frame whose payload (p->paylen bytes) is already in place
 * and send it on @qp's path.
 */
void gnsim_tx(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
	      const struct gnsim_pkt *p)
{
	struct gnsim_txf tf;

	gnsim_tx_hdr(r, qp, p, &tf);
	gnsim_tx_end(r, qp, &tf, NULL, 0);
}

/* Transfer @len bytes of a payload source (gnsim_tx_mem()) to or from @io. */
static int gnsim_tx_src_io(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
			   const struct gn_roce_wqe *w, u32 off, struct gnsim_rmr *mr,
			   u64 va, u32 len, struct gnsim_io *io)
{
	/* the payload of a send WQE: in the QP's protection domain */
	return w ? gnsim_sge_io(r, qp, le32_to_cpu(qp->ctx.pdn), w, off, len, io) :
		   gnsim_mr_io(mr, va, len, io);
}

/*
 * Send @p, whose payload (p->paylen bytes) is in memory: at message offset
 * @off of the SGEs of @w, or at @va of @mr if @w is NULL.  The payload is
 * handed to the MAC where it lies if it can be (gnsim_tx_zc_ok()), else
 * copied after the headers (@hl bytes).  Returns 0 or a CQE status (an
 * SGE the QP may not read: nothing is sent).
 */
int gnsim_tx_mem(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		 const struct gnsim_pkt *p, int hl, const struct gn_roce_wqe *w,
		 u32 off, struct gnsim_rmr *mr, u64 va)
{
	struct gnsim_mac_roce_frag *fr;
	struct gnsim_io io;
	struct gnsim_txf tf;
	int ret;

	if (p->paylen && gnsim_tx_zc_ok(r, qp)) {
		fr = gnsim_tx_train_slot(r, qp);
		io = (struct gnsim_io){ .kind = GN_IO_FRAGS, .frags = fr + 1,
				     .max = GN_MAC_ROCE_MAX_FRAGS - 2 };
		ret = gnsim_tx_src_io(r, qp, w, off, mr, va, p->paylen, &io);
		if (!ret) {
			gnsim_tx_hdr(r, qp, p, &tf);
			gnsim_tx_end(r, qp, &tf, fr, io.nfrags);
			return 0;
		}
		if (ret != -E2BIG)
			return ret;
	}
	io = (struct gnsim_io){ .kind = GN_IO_TO_BUF, .buf = r->frame + hl };
	ret = gnsim_tx_src_io(r, qp, w, off, mr, va, p->paylen, &io);
	if (ret)
		return ret;
	gnsim_tx(r, qp, p);
	return 0;
}

/* A packet without payload (ACK/NAK, READ request). */
void gnsim_tx_hdr_only(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		       struct gnsim_pkt *p)
{
	if (gnsim_tx_hdr_len(r, qp, gnsim_tx_path(qp, p), p->opcode) < 0)
		return;
	p->paylen = 0;
	gnsim_tx(r, qp, p);
}

void gnsim_send_ack(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u8 syndrome,
		    u32 psn)
{
	struct gnsim_pkt p = {
		.opcode = OP_ACK,
		.psn = psn,
		.dqpn = le32_to_cpu(qp->ctx.dest_qpn),
		.aeth = (u32)syndrome << 24 | (qp->msn & PSN_MASK),
	};

	gnsim_tx_hdr_only(r, qp, &p);
}

/*
 * A mailbox command is about to take @qp out of service (destroy, or a
 * move to RESET or ERR): send the ACK it still owes first.  Its receive
 * completions may already be visible, and the application may destroy
 * the QP before the work item's batch ends; without this the requester
 * would retransmit into a QP that is gone until its retries run out.
 * Under dp_lock, in a command (never in a MAC's call chain).
 */
void gnsim_rdp_ack_now(struct gaudi_nic_roce *r, struct gnsim_rqp *qp)
{
	lockdep_assert_held(&r->dp_lock);
	if (list_empty(&qp->ack_node))
		return;
	list_del_init(&qp->ack_node);
	gnsim_send_ack(r, qp, AETH_ACK, (qp->epsn - 1) & PSN_MASK);
}
