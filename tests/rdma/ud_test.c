// SPDX-License-Identifier: GPL-2.0
/*
 * ud_test - user UD QPs on gaudi_N, two devices in one process: SEND and
 * SEND with immediate through address handles (IPv4 and IPv6 GIDs),
 * through SGEs and inline, 0 bytes and exactly one path MTU; the 40-byte
 * GRH area, IBV_WC_GRH, src_qp and sl (the RoCE packet type, as ConnectX
 * reports it) of receive completions; a reply through
 * ibv_create_ah_from_wc(); the same exchange between two QPs of one port
 * (loopback).  Bad input, a test each: a wrong Q_Key is dropped and
 * counted (qkey_violations), a send longer than the path MTU and a
 * receive buffer too small complete with IBV_WC_LOC_LEN_ERR, an AH on a
 * GID index that does not exist and UD limits beyond the device's are
 * refused, atomics and other opcodes the engine lacks give EOPNOTSUPP
 * without reaching the ring, QP types the device lacks give EOPNOTSUPP,
 * a non-zero driver input byte in a verbs command gives EINVAL, a UD WQE
 * written into the ring with the reserved byte of its address vector set
 * completes with IBV_WC_LOC_QP_OP_ERR.  Last, objects destroyed after
 * their context was closed (what pyverbs' garbage collection does) must
 * not crash the process.  The extended QP and CQ APIs on UD QPs are
 * ud_qpex_test.c.  A kselftest (kselftest_harness.h): each test in its
 * own process with both devices opened anew and, where it needs them,
 * fresh UD QPs (udutil.h); output KTAP.
 *
 * usage: ud_test DEV_A GID_A DEV_B GID_B   (GID_*: the IPv4 GID indexes;
 *        the IPv6 ones are found in the GID tables)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"
#include "ringutil.h"
#include "udutil.h"

/* the UD WQE stride in use (GAUDI_UD_WQE=128: the older 128-byte WQE) */
static size_t ud_stride = sizeof(struct gaudi_ud_wqe);

static uint16_t csum16(const uint8_t *p, size_t n)
{
	uint32_t s = 0;
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

/*
 * The GRH area of a UD receive: the IPv6 header, or 20 zero bytes and
 * the IPv4 header (with a valid checksum: libibverbs tells the two
 * apart by it), UDP, from @sgid to @dgid.  UCX's ud_verbs (1.19 on)
 * tells them apart by byte 0 (0x6? is IPv6) and takes an IPv4
 * destination from bytes 36..39.  NULL if right, else what is wrong.
 */
static const char *grh_wrong(const uint8_t *g, const union ibv_gid *sgid,
			     const union ibv_gid *dgid)
{
	static const uint8_t zero[20];

	if (tu_gid_is_v4(sgid)) {
		const uint8_t *ip = g + 20;

		if (g[0] >> 4 == 6)
			return "IPv4: byte 0 reads as IPv6 (0x6?)";
		if (memcmp(g, zero, sizeof(zero)))
			return "IPv4: bytes 0-19 not zero";
		if (ip[0] != 0x45)
			return "IPv4: version/IHL not 0x45";
		if (ip[9] != 17)
			return "IPv4: protocol not UDP";
		if (csum16(ip, 20))
			return "IPv4: bad header checksum";
		if (memcmp(ip + 12, &sgid->raw[12], 4))
			return "IPv4: wrong source address";
		if (memcmp(ip + 16, &dgid->raw[12], 4))
			return "IPv4: wrong destination address";
		return NULL;
	}
	if (g[0] >> 4 != 6)
		return "IPv6: version not 6";
	if (g[6] != 17)
		return "IPv6: next header not UDP";
	if (memcmp(g + 8, sgid->raw, 16))
		return "IPv6: wrong source address";
	if (memcmp(g + 24, dgid->raw, 16))
		return "IPv6: wrong destination address";
	return NULL;
}

/*
 * One UD message @s -> @r through @ah (from GID @sgid to @dgid), checked
 * end to end; its receive completion in *@rwc.  true if all is right.
 */
static bool xfer(struct __test_metadata *_metadata, const char *tag, struct uqp *s, struct uqp *r,
		 struct ibv_ah *ah, const union ibv_gid *sgid,
		 const union ibv_gid *dgid, enum ibv_wr_opcode op,
		 uint32_t len, enum how how, struct ibv_wc *rwc)
{
	bool imm = op == IBV_WR_SEND_WITH_IMM;
	uint32_t immv = 0xc0de0000U | len;
	uint8_t *rx = r->d->buf + RX_OFF;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc swc = {}, wc = {};
	const char *g;
	bool sent;
	int ret;

	fill(s->d->buf + TX_OFF, len, len + how);
	ret = post_rx(r, GRH + r->d->mtu, 0x77);
	if (!ret)
		ret = post_ud(s, ah, r->qp->qp_num, QKEY, op, len, how, immv,
			      0x55, &bad);
	EXPECT_EQ(0, ret) TH_LOG("%s: %s of %u bytes via %s: post: %s", tag,
				 imm ? "SEND_WITH_IMM" : "SEND", len, how_name(how),
				 strerror(ret));
	if (ret)
		return false;
	sent = !wait_wc(s->scq, &swc, 10) && swc.status == IBV_WC_SUCCESS &&
	       swc.wr_id == 0x55 && swc.opcode == IBV_WC_SEND &&
	       !(swc.wc_flags & IBV_WC_GRH);
	EXPECT_TRUE(sent)
		TH_LOG("%s: %s of %u bytes via %s: send completion (status %s, wr_id %#llx, opcode %d, flags %#x)",
		       tag, imm ? "SEND_WITH_IMM" : "SEND", len, how_name(how),
		       ibv_wc_status_str(swc.status),
		       (unsigned long long)swc.wr_id, swc.opcode, swc.wc_flags);
	if (!sent)
		return false;
	ret = wait_wc(r->rcq, &wc, 10);
	EXPECT_EQ(0, ret) TH_LOG("%s: %s of %u bytes via %s: a receive completion",
				 tag, imm ? "SEND_WITH_IMM" : "SEND", len, how_name(how));
	if (ret)
		return false;
	*rwc = wc;
	g = grh_wrong(rx, sgid, dgid);
	EXPECT_TRUE(wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x77 &&
	   wc.opcode == IBV_WC_RECV && wc.byte_len == GRH + len &&
	   (wc.wc_flags & IBV_WC_GRH) &&
	   !!(wc.wc_flags & IBV_WC_WITH_IMM) == imm &&
	   (!imm || ntohl(wc.imm_data) == immv) &&
	   wc.src_qp == s->qp->qp_num && wc.qp_num == r->qp->qp_num &&
	   wc.slid == 0 && wc.sl == roce_sl(sgid) && wc.pkey_index == 0 &&
	   !memcmp(rx + GRH, s->d->buf + TX_OFF, len) &&
	   rx[GRH + len] == 0xaa && !g)
	   TH_LOG("%s: %s of %u bytes via %s (status %s, byte_len %u, flags %#x, src_qp %#x, sl %#x, imm %#x%s%s)",
	   tag, imm ? "SEND_WITH_IMM" : "SEND", len, how_name(how),
	   ibv_wc_status_str(wc.status), wc.byte_len, wc.wc_flags, wc.src_qp,
	   wc.sl, ntohl(wc.imm_data), g ? ", GRH: " : "", g ? g : "");
	return true;
}

/* ---------------------------------------------------------------- tests */

TEST_F_TIMEOUT(ud, caps, 120)
{
	struct ibv_qp_init_attr qia;
	struct ibv_device_attr da;
	struct ibv_qp_attr qa;
	struct uqp u;
	int ret;

	ret = ibv_query_device(A.ctx, &da);
	EXPECT_TRUE(!ret && da.atomic_cap == IBV_ATOMIC_NONE)
	   TH_LOG("%s reports atomic_cap NONE (%d)", A.name, ret ? -1 : (int)da.atomic_cap);
	ret = ud_create(&u, &A, ud_max_sge, ud_max_inline);
	EXPECT_TRUE(!ret) TH_LOG("UD QP with %d send SGEs and %d bytes inline: %s", ud_max_sge,
	   ud_max_inline, ret ? strerror(errno) : "created");
	if (!ret) {
		EXPECT_TRUE(u.cap.max_send_sge == ud_max_sge &&
		   u.cap.max_inline_data == ud_max_inline)
		   TH_LOG("create_qp reports the UD limits (%u SGEs, %u inline)",
		   u.cap.max_send_sge, u.cap.max_inline_data);
		ret = ibv_query_qp(u.qp, &qa, IBV_QP_CAP, &qia);
		EXPECT_TRUE(!ret && qia.qp_type == IBV_QPT_UD &&
		   qa.cap.max_send_sge <= ud_max_sge &&
		   qa.cap.max_inline_data <= ud_max_inline)
		   TH_LOG("query_qp: type UD, %u send SGEs, %u inline (%s)",
		   qa.cap.max_send_sge, qa.cap.max_inline_data,
		   ret ? strerror(ret) : "ok");
	}
	ud_destroy(&u);
	ret = ud_create(&u, &A, ud_max_sge + 1, 0);
	EXPECT_TRUE(ret && errno == EINVAL) TH_LOG("UD QP with %d send SGEs refused: %s",
	   ud_max_sge + 1, ret ? strerror(errno) : "created");
	ud_destroy(&u);
	ret = ud_create(&u, &A, 1, ud_max_inline + 1);
	EXPECT_TRUE(ret && errno == EINVAL) TH_LOG("UD QP with %d bytes inline refused: %s",
	   ud_max_inline + 1, ret ? strerror(errno) : "created");
	ud_destroy(&u);
}

/* The exchanges between @s and @r over one address family. */
static void test_exchange(struct __test_metadata *_metadata, const char *fam, struct uqp *s, struct uqp *r,
			  const union ibv_gid *sgid, int sgid_index,
			  const union ibv_gid *dgid)
{
	struct ibv_ah *ah, *back = NULL;
	struct ibv_wc wc, wc2;
	char tag[64];
	const char *g;
	int ret;

	snprintf(tag, sizeof(tag), "%s %s->%s", fam, s->d->name, r->d->name);
	ah = mk_ah(s->d, dgid, sgid_index);
	EXPECT_TRUE(ah != NULL) TH_LOG("%s: AH (sgid index %d): %s", tag, sgid_index,
	   ah ? "created" : strerror(errno));
	if (!ah)
		return;
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND, 0, VIA_SGE, &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND_WITH_IMM, 0, VIA_SGE, &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND, 100, VIA_SGE, &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND_WITH_IMM, 1000, VIA_MAXSGE,
	     &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND, ud_max_inline, VIA_INLINE,
	     &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND_WITH_IMM, 7, VIA_INLINE,
	     &wc);
	xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND, s->d->mtu, VIA_SGE, &wc);
	if (!xfer(_metadata, tag, s, r, ah, sgid, dgid, IBV_WR_SEND_WITH_IMM, s->d->mtu,
		  VIA_MAXSGE, &wc))
		goto out;

	/* the reply goes to where the last message came from */
	errno = 0;
	back = ibv_create_ah_from_wc(r->d->pd, &wc,
				     (struct ibv_grh *)(r->d->buf + RX_OFF), 1);
	EXPECT_TRUE(back != NULL) TH_LOG("%s: ibv_create_ah_from_wc: %s", tag,
	   back ? "created" : strerror(errno));
	if (!back)
		goto out;
	ret = post_rx(s, GRH + 64, 0x99);
	fill(r->d->buf + TX_OFF, 32, 5);
	if (!ret)
		ret = post_ud(r, back, wc.src_qp, QKEY, IBV_WR_SEND_WITH_IMM, 32,
			      VIA_SGE, 0xbeef, 0x98, &(struct ibv_send_wr *){0});
	ASSERT_EQ(0, ret) TH_LOG("%s: post the reply through the AH from the WC: %s", tag,
				 strerror(ret));
	ASSERT_EQ(0, wait_wc(r->scq, &wc2, 10))
		TH_LOG("%s: the reply's send completion", tag);
	ASSERT_EQ(IBV_WC_SUCCESS, wc2.status)
		TH_LOG("%s: the reply's send completion: %s", tag,
		       ibv_wc_status_str(wc2.status));
	ASSERT_EQ(0, wait_wc(s->rcq, &wc2, 10))
		TH_LOG("%s: the reply's receive completion", tag);
	g = grh_wrong(s->d->buf + RX_OFF, dgid, sgid);
	EXPECT_TRUE(wc2.status == IBV_WC_SUCCESS && wc2.src_qp == r->qp->qp_num &&
	   wc2.byte_len == GRH + 32 && (wc2.wc_flags & IBV_WC_GRH) &&
	   ntohl(wc2.imm_data) == 0xbeef &&
	   !memcmp(s->d->buf + RX_OFF + GRH, r->d->buf + TX_OFF, 32) && !g)
	   TH_LOG("%s: reply through the AH from the WC arrives (status %s, src_qp %#x%s%s)",
	   tag, ibv_wc_status_str(wc2.status), wc2.src_qp, g ? ", GRH: " : "",
	   g ? g : "");
out:
	if (back) {
		EXPECT_TRUE(ibv_destroy_ah(back) == 0) TH_LOG("%s: destroy the reply AH", tag);
	}
	EXPECT_TRUE(ibv_destroy_ah(ah) == 0) TH_LOG("%s: destroy the AH", tag);
}

/*
 * Bad input, one rule a test; a and b are the pair UD_PAIR_UP() makes,
 * fresh in each test's process.
 */

/* A wrong Q_Key: dropped and counted; the next message arrives. */
TEST_F_TIMEOUT(ud, bad_qkey_dropped, 120)
{
	struct uqp *s = &self->a, *r = &self->b;
	struct ibv_send_wr *bad = NULL;
	long long before, after;
	struct ibv_wc wc = {};
	struct ibv_ah *ah;
	int ret;

	UD_PAIR_AH(ah);
	before = tu_hw_counter(r->d->name, "qkey_violations");
	ret = post_rx(r, GRH + 256, 0x41);
	fill(s->d->buf + TX_OFF, 64, 1);
	if (!ret)
		ret = post_ud(s, ah, r->qp->qp_num, BAD_QKEY, IBV_WR_SEND_WITH_IMM,
			      64, VIA_SGE, 1, 0x42, &bad);
	EXPECT_TRUE(!ret && !wait_wc(s->scq, &wc, 10) && wc.status == IBV_WC_SUCCESS)
		TH_LOG("send with a wrong Q_Key completes at the sender (UD: %s)",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	EXPECT_TRUE(wait_wc(r->rcq, &wc, 1)) TH_LOG("the message with the wrong Q_Key is dropped");
	ret = post_ud(s, ah, r->qp->qp_num, QKEY, IBV_WR_SEND_WITH_IMM, 64,
		      VIA_SGE, 2, 0x43, &bad);
	wc.imm_data = 0;
	EXPECT_TRUE(!ret && !wait_wc(s->scq, &wc, 10) && !wait_wc(r->rcq, &wc, 10) &&
		    wc.status == IBV_WC_SUCCESS && ntohl(wc.imm_data) == 2)
		TH_LOG("the next message, with the right Q_Key, is the one received (imm %u)",
		       ntohl(wc.imm_data));
	after = tu_hw_counter(r->d->name, "qkey_violations");
	EXPECT_TRUE(before >= 0 && after == before + 1)
		TH_LOG("%s qkey_violations counts it (%lld -> %lld)", r->d->name,
		       before, after);
	ibv_destroy_ah(ah);
}

/* The high bit of remote_qkey: the sending QP's own Q_Key (equal here). */
TEST_F_TIMEOUT(ud, qkey_from_qp, 120)
{
	struct uqp *s = &self->a, *r = &self->b;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc = {};
	struct ibv_ah *ah;
	int ret;

	UD_PAIR_AH(ah);
	fill(s->d->buf + TX_OFF, 64, 1);
	ret = post_rx(r, GRH + 256, 0x44);
	if (!ret)
		ret = post_ud(s, ah, r->qp->qp_num, QKEY_USE_QP | BAD_QKEY,
			      IBV_WR_SEND, 64, VIA_SGE, 0, 0x45, &bad);
	EXPECT_TRUE(!ret && !wait_wc(s->scq, &wc, 10) && !wait_wc(r->rcq, &wc, 10) &&
		    wc.status == IBV_WC_SUCCESS && wc.byte_len == GRH + 64)
		TH_LOG("remote_qkey %#x uses the sending QP's own Q_Key (%s)",
		       QKEY_USE_QP | BAD_QKEY,
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	ibv_destroy_ah(ah);
}

/* Longer than the path MTU: a local length error, nothing received. */
TEST_F_TIMEOUT(ud, over_path_mtu, 120)
{
	struct uqp *s = &self->a, *r = &self->b;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc = {};
	struct ibv_ah *ah;
	int ret;

	UD_PAIR_AH(ah);
	ret = post_rx(r, GRH + r->d->mtu + 64, 0x46);
	if (!ret)
		ret = post_ud(s, ah, r->qp->qp_num, QKEY, IBV_WR_SEND,
			      s->d->mtu + 1, VIA_SGE, 0, 0x47, &bad);
	EXPECT_TRUE(!ret && !wait_wc(s->scq, &wc, 10) &&
		    wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 0x47)
		TH_LOG("UD send of path MTU + 1 = %u bytes completes with IBV_WC_LOC_LEN_ERR (%s)",
		       s->d->mtu + 1,
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	EXPECT_TRUE(wait_wc(r->rcq, &wc, 1)) TH_LOG("and nothing is received");
	ibv_destroy_ah(ah);
}

/* A receive buffer smaller than GRH + payload: a length error there. */
TEST_F_TIMEOUT(ud, recv_too_small, 120)
{
	struct uqp *s = &self->a, *r = &self->b;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc = {};
	struct ibv_ah *ah;
	int ret;

	UD_PAIR_AH(ah);
	ret = post_rx(r, GRH + 10, 0x48);
	if (!ret)
		ret = post_ud(s, ah, r->qp->qp_num, QKEY, IBV_WR_SEND, 100,
			      VIA_SGE, 0, 0x49, &bad);
	EXPECT_TRUE(!ret && !wait_wc(s->scq, &wc, 10))
		TH_LOG("send of 100 bytes to a 50-byte receive buffer (%s)",
		       ret ? strerror(ret) : "completed");
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!wait_wc(r->rcq, &wc, 10) &&
		    wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 0x48)
		TH_LOG("the receive completes with IBV_WC_LOC_LEN_ERR (%s)",
		       ibv_wc_status_str(wc.status));
	ibv_destroy_ah(ah);
}

/* More inline data than the UD limit in one work request: refused at post. */
TEST_F_TIMEOUT(ud, inline_over_limit, 120)
{
	struct uqp *s = &self->a, *r = &self->b;
	struct ibv_send_wr *bad = NULL;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	int ret;

	UD_PAIR_AH(ah);
	ret = post_ud(s, ah, r->qp->qp_num, QKEY, IBV_WR_SEND,
		      ud_max_inline + 1, VIA_INLINE, 0, 0x4a, &bad);
	EXPECT_TRUE(ret == EINVAL && bad)
		TH_LOG("inline UD send of %u bytes refused (%s)",
		       ud_max_inline + 1, strerror(ret));
	EXPECT_TRUE(wait_wc(s->scq, &wc, 0.3)) TH_LOG("and nothing was posted");
	ibv_destroy_ah(ah);
}

/* An AH on a GID index that does not exist: refused. */
TEST_F_TIMEOUT(ud, ah_no_gid, 120)
{
	struct ibv_ah *ah;
	int empty;

	empty = tu_find_empty_gid(A.ctx);
	ASSERT_TRUE(empty >= 0) TH_LOG("%s has an empty GID table entry", A.name);
	ah = mk_ah(&A, &B.gid4, empty);
	EXPECT_TRUE(!ah) TH_LOG("AH on sgid index %d (no such GID) refused: %s",
				empty, ah ? "created" : strerror(errno));
	if (ah)
		ibv_destroy_ah(ah);
}
/* Opcodes the engine lacks: EOPNOTSUPP, *bad_wr, nothing posted. */
static void test_opcodes(struct __test_metadata *_metadata, struct uqp *s, struct uqp *r)
{
	static const struct { enum ibv_wr_opcode op; const char *name; } ops[] = {
		{ IBV_WR_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },
		{ IBV_WR_RDMA_WRITE, "RDMA_WRITE" },
		{ IBV_WR_RDMA_READ, "RDMA_READ" },
		{ IBV_WR_LOCAL_INV, "LOCAL_INV" },
		{ IBV_WR_SEND_WITH_INV, "SEND_WITH_INV" },
	};
	struct ibv_qp_init_attr ia = {
		.send_cq = s->scq, .recv_cq = s->rcq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge sg = { .addr = (uintptr_t)s->d->buf + TX_OFF,
			      .length = 8, .lkey = s->d->mr->lkey };
	struct ibv_send_wr wr[2], *bad;
	struct ibv_qp *rc;
	struct ibv_wc wc;
	struct ibv_ah *ah;
	unsigned int i;
	int ret, n;

	ah = mk_ah(s->d, &r->d->gid4, s->d->gid4_index);
	ASSERT_NE(NULL, ah) TH_LOG("AH for the opcode tests: %s", strerror(errno));
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		memset(wr, 0, sizeof(wr));
		wr[0].wr_id = 0x60 + i;
		wr[0].opcode = ops[i].op;
		wr[0].sg_list = &sg;
		wr[0].num_sge = 1;
		wr[0].send_flags = IBV_SEND_SIGNALED;
		wr[0].wr.ud.ah = ah;
		wr[0].wr.ud.remote_qpn = r->qp->qp_num;
		wr[0].wr.ud.remote_qkey = QKEY;
		bad = NULL;
		ret = ibv_post_send(s->qp, wr, &bad);
		EXPECT_TRUE(ret == EOPNOTSUPP && bad == wr)
		   TH_LOG("UD QP: %s refused with EOPNOTSUPP (%s)", ops[i].name,
		   strerror(ret));
	}
	/* a good SEND, then an atomic: the first goes, the second not */
	post_rx(r, GRH + 64, 0x70);
	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x71;
	wr[0].opcode = IBV_WR_SEND;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.ud.ah = ah;
	wr[0].wr.ud.remote_qpn = r->qp->qp_num;
	wr[0].wr.ud.remote_qkey = QKEY;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].next = NULL;
	wr[1].wr_id = 0x72;
	wr[1].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	bad = NULL;
	ret = ibv_post_send(s->qp, wr, &bad);
	EXPECT_TRUE(ret == EOPNOTSUPP && bad == &wr[1])
	   TH_LOG("SEND then FETCH_AND_ADD: EOPNOTSUPP at the second (%s)",
	   strerror(ret));
	/* the SEND's completion (10 s: a loaded TCG guest), then any other */
	n = 0;
	for (double secs = 10; !wait_wc(s->scq, &wc, secs); secs = 1) {
		n++;
		if (wc.wr_id != 0x71 || wc.status != IBV_WC_SUCCESS)
			n += 100;
	}
	EXPECT_TRUE(n == 1 && !wait_wc(r->rcq, &wc, 5) && wc.wr_id == 0x70)
	   TH_LOG("only the SEND reached the ring (%d send completions)", n);

	rc = ibv_create_qp(s->d->pd, &ia);
	EXPECT_TRUE(rc != NULL) TH_LOG("RC QP for the opcode tests: %s",
	   rc ? "created" : strerror(errno));
	if (rc) {
		for (i = 0; i < 2; i++) {
			memset(wr, 0, sizeof(wr));
			wr[0].opcode = ops[i].op;
			wr[0].sg_list = &sg;
			wr[0].num_sge = 1;
			wr[0].wr.atomic.rkey = 1;
			wr[0].wr.atomic.remote_addr = 8;
			bad = NULL;
			ret = ibv_post_send(rc, wr, &bad);
			EXPECT_TRUE(ret == EOPNOTSUPP && bad == wr)
			   TH_LOG("RC QP: %s refused with EOPNOTSUPP (%s)",
			   ops[i].name, strerror(ret));
		}
		/* memory windows exist (mw_test.c): a bind needs its MW */
		wr[0].opcode = IBV_WR_BIND_MW;
		bad = NULL;
		ret = ibv_post_send(rc, wr, &bad);
		EXPECT_TRUE(ret == EINVAL && bad == wr)
		   TH_LOG("RC QP: BIND_MW without an MW refused with EINVAL (%s)",
			  strerror(ret));
		ibv_destroy_qp(rc);
	}
	ibv_destroy_ah(ah);
}

/* Features the device lacks: EOPNOTSUPP, never EINVAL, never a crash. */
TEST_F_TIMEOUT(ud, unsupported, 120)
{
	static const struct { enum ibv_qp_type t; const char *name; } types[] = {
		{ IBV_QPT_RAW_PACKET, "RAW_PACKET" },
		{ IBV_QPT_XRC_SEND, "XRC_SEND" },
	};
	struct ibv_xrcd_init_attr xa = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1, .oflags = O_CREAT,
	};
	struct ibv_cq *cq = ibv_create_cq(A.ctx, 8, NULL, NULL, 0);
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_xrcd *xrcd;
	struct ibv_qp *qp;
	unsigned int i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ia.qp_type = types[i].t;
		errno = 0;
		qp = ibv_create_qp(A.pd, &ia);
		EXPECT_TRUE(!qp && errno == EOPNOTSUPP) TH_LOG("%s QP: EOPNOTSUPP (%s)",
		   types[i].name, qp ? "created" : strerror(errno));
		if (qp)
			ibv_destroy_qp(qp);
	}
	errno = 0;
	xrcd = ibv_open_xrcd(A.ctx, &xa);
	EXPECT_TRUE(!xrcd && errno == EOPNOTSUPP) TH_LOG("XRC domain: EOPNOTSUPP (%s)",
	   xrcd ? "opened" : strerror(errno));
	if (xrcd)
		ibv_close_xrcd(xrcd);
	ibv_destroy_cq(cq);
}

/*
 * A verbs command whose driver input (udata) is not zero: refused with
 * EINVAL.  ALLOC_PD through the write() ABI of the command file, with 8
 * bytes of driver input; all zero, the same command works.
 */
static int raw_alloc_pd(struct ibv_context *ctx, uint64_t drv, uint32_t *h)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_alloc_pd cmd;
		uint64_t drv;
	} __attribute__((packed)) c = {};
	struct {
		struct ib_uverbs_alloc_pd_resp resp;
		uint64_t drv;
	} r = {};

	c.hdr.command = IB_USER_VERBS_CMD_ALLOC_PD;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(r) / 4;
	c.cmd.response = (uintptr_t)&r;
	c.drv = drv;
	if (write(ctx->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return errno;
	*h = r.resp.pd_handle;
	return 0;
}

static int raw_dealloc_pd(struct ibv_context *ctx, uint32_t h)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_dealloc_pd cmd;
	} __attribute__((packed)) c = {};

	c.hdr.command = IB_USER_VERBS_CMD_DEALLOC_PD;
	c.hdr.in_words = sizeof(c) / 4;
	c.cmd.pd_handle = h;
	if (write(ctx->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return errno;
	return 0;
}

TEST_F_TIMEOUT(ud, reserved, 120)
{
	uint32_t h = 0;
	int ret;

	ret = raw_alloc_pd(A.ctx, 0, &h);
	EXPECT_TRUE(!ret) TH_LOG("ALLOC_PD with 8 zero bytes of driver input: %s",
	   ret ? strerror(ret) : "allocated");
	if (!ret) {
		EXPECT_TRUE(raw_dealloc_pd(A.ctx, h) == 0) TH_LOG("and DEALLOC_PD");
	}
	ret = raw_alloc_pd(A.ctx, 1ULL << 40, &h);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("ALLOC_PD with a non-zero driver input byte: EINVAL (%s)",
	   ret ? strerror(ret) : "allocated");
	if (!ret)
		raw_dealloc_pd(A.ctx, h);
}

/*
 * Objects destroyed after their context was closed, as pyverbs' garbage
 * collector does when a test fails half-way: no crash (under ASan, no
 * use after free), each destroy returns 0.
 */
TEST_F_TIMEOUT(ud, close_first, 120)
{
	struct ibv_comp_channel *ch;
	struct ibv_context *ctx;
	struct ibv_ah *ah;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	static uint8_t mem[4096];
	int r[6];

	ctx = open_device_by_name(A.name);
	ASSERT_NE(NULL, ctx) TH_LOG("open %s again: %s", A.name, strerror(errno));
	pd = ibv_alloc_pd(ctx);
	ch = ibv_create_comp_channel(ctx);
	cq = ch ? ibv_create_cq(ctx, 8, NULL, ch, 0) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	qp = pd && cq ? ibv_create_qp(pd, &ia) : NULL;
	mr = pd ? ibv_reg_mr(pd, mem, sizeof(mem), IBV_ACCESS_LOCAL_WRITE) : NULL;
	ah = pd ? mk_ah(&(struct dev){ .pd = pd }, &B.gid4, A.gid4_index) : NULL;
	ASSERT_TRUE(pd && ch && cq && qp && mr && ah)
		TH_LOG("PD, channel, CQ, QP, MR and AH on a second context: %s",
		       strerror(errno));
	ASSERT_EQ(0, ibv_req_notify_cq(cq, 0)) TH_LOG("arm the second context's CQ");
	EXPECT_TRUE(ibv_close_device(ctx) == 0)
	   TH_LOG("close the context with a PD, CQ, QP, MR and AH open");
	r[0] = ibv_destroy_qp(qp);
	r[1] = ibv_destroy_ah(ah);
	r[2] = ibv_dereg_mr(mr);
	r[3] = ibv_destroy_cq(cq);
	r[4] = ibv_dealloc_pd(pd);
	r[5] = ibv_destroy_comp_channel(ch);
	EXPECT_TRUE(!r[0] && !r[1] && !r[2] && !r[3] && !r[4] && !r[5])
	   TH_LOG("then destroying them returns 0 (QP %d, AH %d, MR %d, CQ %d, PD %d, channel %d)",
	   r[0], r[1], r[2], r[3], r[4], r[5]);
}

TEST_F_TIMEOUT(ud, exchange_ipv4, 120)
{
	UD_PAIR_UP();
	test_exchange(_metadata, "IPv4", &self->a, &self->b, &A.gid4,
		      A.gid4_index, &B.gid4);
	test_exchange(_metadata, "IPv4", &self->b, &self->a, &B.gid4,
		      B.gid4_index, &A.gid4);
}

TEST_F_TIMEOUT(ud, exchange_ipv6, 120)
{
	UD_PAIR_UP();
	ASSERT_TRUE(A.gid6_index >= 0 && B.gid6_index >= 0)
		TH_LOG("both devices have a global IPv6 GID (%d, %d)",
		       A.gid6_index, B.gid6_index);
	test_exchange(_metadata, "IPv6", &self->a, &self->b, &A.gid6,
		      A.gid6_index, &B.gid6);
}

TEST_F_TIMEOUT(ud, opcodes, 120)
{
	UD_PAIR_UP();
	test_opcodes(_metadata, &self->a, &self->b);
}

/*
 * The reserved byte of a UD send's address vector (gaudi_av.rsvd), which
 * the provider leaves zero: a WQE written into the ring with it set
 * completes with IBV_WC_LOC_QP_OP_ERR and sends nothing.  The same WQE
 * with it zero, posted the same way first, is delivered.
 */
TEST_F_TIMEOUT(ud, av_reserved, 120)
{
	struct ibv_send_wr *bad = NULL;
	struct gaudi_ring_hdr *hdr = NULL;
	struct gaudi_ud_wqe *w;
	struct ibv_wc wc = {};
	struct ibv_ah *ah;
	uintptr_t map[2];
	uint32_t dqpn;
	int i, ret;

	UD_PAIR_UP();
	dqpn = self->b.qp->qp_num;
	ah = mk_ah(&A, &B.gid4, A.gid4_index);
	ASSERT_TRUE(ah != NULL) TH_LOG("AH %s -> %s: %s", A.name, B.name, strerror(errno));
	fill(A.buf + TX_OFF, 64, 5);
	ret = post_rx(&self->b, GRH + 256, 0x70);
	if (!ret)
		ret = post_ud(&self->a, ah, dqpn, QKEY, IBV_WR_SEND, 64, VIA_SGE,
			      0, 0x71, &bad);
	ASSERT_TRUE(!ret && !wait_wc(self->a.scq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
		    !wait_wc(self->b.rcq, &wc, 10) && wc.status == IBV_WC_SUCCESS)
		TH_LOG("a UD send through the provider (%s)",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	/* a UD WQE starts as a gaudi_wqe does (gaudi-abi.h) */
	w = (struct gaudi_ud_wqe *)ring_find_wqe(0x71, GAUDI_WQE_SEND, map);
	hdr = w ? (struct gaudi_ring_hdr *)map[0] : NULL;
	ASSERT_TRUE(w && w->dest_qpn == dqpn &&
		    (uint8_t *)w == (uint8_t *)hdr + GAUDI_RING_HDR_SIZE &&
		    __atomic_load_n(&hdr->prod, __ATOMIC_ACQUIRE) == 1)
		TH_LOG("its WQE is the first of an mmap'd SQ ring (%s)",
		       w ? "elsewhere" : "not found");
	/* slot 1 (rsvd 0) then slot 2 (rsvd 1): copies of it */
	for (i = 1; i <= 2; i++) {
		uint8_t rsvd = i - 1;
		struct gaudi_ud_wqe *wi = (void *)((uint8_t *)w + i * ud_stride);

		memcpy(wi, w, ud_stride);
		wi->wr_id = 0x71 + i;
		wi->av.rsvd = rsvd;
		ret = post_rx(&self->b, GRH + 256, 0x80 + i);
		__atomic_store_n(&hdr->prod, 1 + i, __ATOMIC_RELEASE);
		if (!ret)
			ret = tu_raw_doorbell(self->a.qp, ah);
		memset(&wc, 0, sizeof(wc));
		ret = ret ? ret : wait_wc(self->a.scq, &wc, 10);
		if (!rsvd) {
			EXPECT_TRUE(!ret && wc.wr_id == 0x72 && wc.status == IBV_WC_SUCCESS &&
				    !wait_wc(self->b.rcq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
				    wc.wr_id == 0x81)
				TH_LOG("the WQE copied into the ring, AV rsvd 0, is delivered (%s)",
				       ret ? "no completion" : ibv_wc_status_str(wc.status));
		} else {
			EXPECT_TRUE(!ret && wc.wr_id == 0x73 &&
				    wc.status == IBV_WC_LOC_QP_OP_ERR)
				TH_LOG("AV rsvd %u: IBV_WC_LOC_QP_OP_ERR (%s)", rsvd,
				       ret ? "no completion" : ibv_wc_status_str(wc.status));
			EXPECT_TRUE(wait_wc(self->b.rcq, &wc, 1))
				TH_LOG("and nothing is received");
		}
	}
	ibv_destroy_ah(ah);
}

/* two QPs of one port */
TEST_F_TIMEOUT(ud, loopback, 120)
{
	ASSERT_EQ(0, ud_up(_metadata, &self->a, &A, "exchange"));
	ASSERT_EQ(0, ud_up(_metadata, &self->a2, &A, "loopback"));
	test_exchange(_metadata, "IPv4 loopback", &self->a, &self->a2, &A.gid4,
		      A.gid4_index, &A.gid4);
	if (A.gid6_index >= 0)
		test_exchange(_metadata, "IPv6 loopback", &self->a2, &self->a,
			      &A.gid6, A.gid6_index, &A.gid6);
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };
	bool wqe128;
	int ret;

	ret = ud_args(argc, argv, &wqe128);
	if (ret)
		return ret;
	if (wqe128)
		ud_stride = GAUDI_WQE_SIZE;
	return test_harness_run(1, run);
}
