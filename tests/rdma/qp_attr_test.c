// SPDX-License-Identifier: GPL-2.0
/*
 * qp_attr_test - what gaudi_ib accepts for rdma_cm and libfabric (issue
 * 14), between two gaudi devices in one process:
 *  - RC: RTS -> RTS with only optional attributes (libfabric sets
 *    IBV_QP_MIN_RNR_TIMER alone once connected), then a SEND still works;
 *    an attribute RTS -> RTS does not allow is refused;
 *  - MRs with IBV_ACCESS_REMOTE_ATOMIC (libfabric asks for it) while the
 *    device reports no atomics;
 *  - user UD QPs: limits, state changes with a Q_Key, query; datagrams
 *    with a GRH area, the source QP, immediate data, the QP's own Q_Key;
 *    a wrong Q_Key dropped and counted (qkey_viol_cntr); a datagram over
 *    the path MTU failing with a length error;
 *  - every QP type (RC, UD, each also on an SRQ) at exactly the limits
 *    the device reports, with a SEND that uses them all;
 *  - the send operations of each QP type (RC, UC, UD), as the verbs API
 *    sees them: which an extended QP can be created with, and which
 *    opcodes ibv_post_send() refuses as not the engine's (EOPNOTSUPP,
 *    out-of-range opcodes too) rather than as invalid here (EINVAL).
 * A kselftest (kselftest_harness.h): one test per area, each in its own
 * process with both devices opened anew; output KTAP.
 *
 * usage: qp_attr_test DEV_A GID_A DEV_B GID_B
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"

#define QKEY		0x11111111U
#define QKEY_USE_QP	0x80000000U	/* remote_qkey: the sender QP's own */
#define GRH		40
#define BUF		8192

/* One completion of @cq within @secs; false if none came. */
static bool wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	return tu_poll(cq, wc, secs) == 1;
}

/* The device, a CQ of 64 and an MR of BUF bytes (s->buf, s->mr). */
static int open_side(struct tu_side *s, const char *dev, int gid_index)
{
	if (tu_open(s, dev, gid_index, 64))
		return -1;
	s->buf = aligned_alloc(4096, BUF);
	if (!s->buf)
		return -1;
	memset(s->buf, 0, BUF);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF, TU_ACC_ALL);
	return s->mr ? 0 : -1;
}

static struct ibv_qp *make_qp(struct tu_side *s, enum ibv_qp_type type,
			      uint32_t send_sge, uint32_t inl)
{
	return tu_qp(s->pd, s->cq, type,
		     &(struct ibv_qp_cap){ .max_send_wr = 16, .max_recv_wr = 16,
					   .max_send_sge = send_sge,
					   .max_recv_sge = 1,
					   .max_inline_data = inl });
}

/* ------------------------------------------------------------- RC */

/* s->qp to RTS towards peer->qp: PSNs 0, no READ resources */
static int rc_connect(struct tu_side *s, struct tu_side *peer)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.max_rd_atomic = 0;
	p.max_dest_rd_atomic = 0;
	return tu_qp_connect(s->qp, s, peer, peer->qp->qp_num,
			     IBV_ACCESS_REMOTE_WRITE, &p);
}

static int post_recv(struct tu_side *s, uint64_t off, uint32_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = off, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(s->qp, &wr, &bad);
}

static void test_rc(struct __test_metadata *_metadata, struct tu_side *a, struct tu_side *b)
{
	struct ibv_qp_attr qa = {}, got;
	struct ibv_qp_init_attr gi;
	struct ibv_sge sg;
	struct ibv_send_wr wr = {}, *bad;
	struct ibv_wc wc;
	int ret;

	a->qp = make_qp(a, IBV_QPT_RC, 1, 0);
	b->qp = make_qp(b, IBV_QPT_RC, 1, 0);
	EXPECT_TRUE(a->qp && b->qp && !rc_connect(a, b) && !rc_connect(b, a))
	   TH_LOG("RC QPs connected (RTS)");
	if (!a->qp || !b->qp)
		return;

	qa.min_rnr_timer = 12;
	ret = ibv_modify_qp(a->qp, &qa, IBV_QP_MIN_RNR_TIMER);
	EXPECT_TRUE(ret == 0) TH_LOG("RC RTS -> RTS with only IBV_QP_MIN_RNR_TIMER (ret %d)",
	   ret);
	memset(&got, 0, sizeof(got));
	ret = ibv_query_qp(a->qp, &got, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER,
			   &gi);
	EXPECT_TRUE(!ret && got.qp_state == IBV_QPS_RTS && got.min_rnr_timer == 12)
	   TH_LOG("query: still RTS, min_rnr_timer 12 (ret %d state %d timer %u)",
	   ret, got.qp_state, got.min_rnr_timer);
	qa.qp_state = IBV_QPS_RTS;
	qa.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			     IBV_ACCESS_REMOTE_ATOMIC;
	ret = ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS |
			    IBV_QP_MIN_RNR_TIMER);
	EXPECT_TRUE(ret == 0) TH_LOG("RC RTS -> RTS with IBV_QP_STATE and access flags (ret %d)",
	   ret);
	qa.path_mtu = IBV_MTU_512;
	ret = ibv_modify_qp(a->qp, &qa, IBV_QP_PATH_MTU);
	EXPECT_TRUE(ret == EINVAL)
	   TH_LOG("RC RTS -> RTS with IBV_QP_PATH_MTU refused: EINVAL (ret %d)", ret);

	/* the QP still works */
	ret = post_recv(b, 0, 64);
	strcpy((char *)a->buf + 64, "after rts2rts");
	sg.addr = (uintptr_t)a->buf + 64;
	sg.length = 14;
	sg.lkey = a->mr->lkey;
	wr.wr_id = 7;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ret ?: ibv_post_send(a->qp, &wr, &bad);
	EXPECT_TRUE(!ret && wait_wc(a->cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	   wait_wc(b->cq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
	   !strcmp((char *)b->buf, "after rts2rts"))
	   TH_LOG("RC SEND after RTS -> RTS delivered");
	ibv_destroy_qp(a->qp);
	ibv_destroy_qp(b->qp);
	a->qp = b->qp = NULL;
}

/* ------------------------------------------------------------- MR */

static void test_mr(struct __test_metadata *_metadata, struct tu_side *a)
{
	struct ibv_device_attr da = {};
	struct ibv_mr *mr;

	EXPECT_TRUE(!ibv_query_device(a->ctx, &da) && da.atomic_cap == IBV_ATOMIC_NONE)
	   TH_LOG("device reports no atomics (atomic_cap %d)", da.atomic_cap);
	mr = ibv_reg_mr(a->pd, a->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	EXPECT_TRUE(mr != NULL) TH_LOG("MR with IBV_ACCESS_REMOTE_ATOMIC registered (%s)",
	   mr ? "ok" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
}

/* ------------------------------------------------------------- UD */

static int ud_up(struct tu_side *s, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(s->qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	return ibv_modify_qp(s->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static struct ibv_ah *ah_to(struct tu_side *s, struct tu_side *peer)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = peer->gid, .hop_limit = 64,
			 .sgid_index = s->gid_index },
	};

	return ibv_create_ah(s->pd, &aa);
}

static int ud_send(struct tu_side *s, struct ibv_ah *ah, uint32_t qpn,
		   uint32_t qkey, uint32_t len, bool imm, bool inl)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)s->buf + 4096, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = len, .sg_list = &sg, .num_sge = 1,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		.imm_data = htobe32(0x12345678),
		.wr.ud = { .ah = ah, .remote_qpn = qpn, .remote_qkey = qkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(s->qp, &wr, &bad);
}

static uint32_t qkey_viols(struct tu_side *s)
{
	struct ibv_port_attr pa;

	return ibv_query_port(s->ctx, 1, &pa) ? ~0U : pa.qkey_viol_cntr;
}

static void test_ud(struct __test_metadata *_metadata, struct tu_side *a, struct tu_side *b)
{
	struct ibv_qp_init_attr gi;
	struct ibv_qp_attr got, qa = {};
	struct ibv_ah *ah, *ah2;
	struct ibv_wc wc, rwc;
	struct ibv_qp *q;
	uint32_t viols;
	int ret;

	/* UD takes the limits of every type: 256-byte UD WQEs (issue 35) */
	/* UD is required (QP1, rdma_cm, UD clients): its absence fails */
	a->qp = make_qp(a, IBV_QPT_UD, 6, 192);
	ASSERT_NE(NULL, a->qp) TH_LOG("a UD QP with 6 send SGEs and 192 inline bytes: %s",
				       strerror(errno));
	q = make_qp(a, IBV_QPT_UD, 7, 0);
	EXPECT_TRUE(!q && errno == EINVAL) TH_LOG("UD QP with 7 send SGEs refused: EINVAL (%s)",
	   q ? "created" : strerror(errno));
	if (q)
		ibv_destroy_qp(q);
	q = make_qp(a, IBV_QPT_UD, 1, 193);
	EXPECT_TRUE(!q && errno == EINVAL)
	   TH_LOG("UD QP with 193 bytes inline refused: EINVAL (%s)",
	   q ? "created" : strerror(errno));
	if (q)
		ibv_destroy_qp(q);
	b->qp = make_qp(b, IBV_QPT_UD, 6, 192);
	EXPECT_TRUE(a->qp && b->qp) TH_LOG("UD QPs with 6 send SGEs, 192 bytes inline (%s)",
	   a->qp && b->qp ? "ok" : strerror(errno));
	if (!a->qp || !b->qp)
		return;
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 1;
	qa.qkey = QKEY;
	qa.ah_attr.is_global = 1;
	qa.ah_attr.port_num = 1;
	qa.ah_attr.grh.dgid = b->gid;
	qa.ah_attr.grh.sgid_index = a->gid_index;
	ret = ibv_modify_qp(a->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY | IBV_QP_AV);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("UD RESET -> INIT with an AV refused: EINVAL (ret %d)",
	   ret);
	EXPECT_TRUE(!ud_up(a, QKEY) && !ud_up(b, QKEY)) TH_LOG("UD QPs to RTS with Q_Key 0x%x",
	   QKEY);
	memset(&got, 0, sizeof(got));
	memset(&gi, 0, sizeof(gi));
	ret = ibv_query_qp(a->qp, &got, IBV_QP_STATE | IBV_QP_QKEY |
			   IBV_QP_PORT | IBV_QP_CAP, &gi);
	EXPECT_TRUE(!ret && got.qp_state == IBV_QPS_RTS && got.qkey == QKEY &&
	   got.port_num == 1 && gi.qp_type == IBV_QPT_UD &&
	   got.cap.max_send_sge == 6 && got.cap.max_inline_data == 192)
	   TH_LOG("UD query: RTS, qkey 0x%x, port %u, type %d, send SGEs %u, inline %u",
	   got.qkey, got.port_num, gi.qp_type, got.cap.max_send_sge,
	   got.cap.max_inline_data);

	ah = ah_to(a, b);
	EXPECT_TRUE(ah != NULL) TH_LOG("AH to %s's GID (%s)", ibv_get_device_name(b->ctx->device),
	   ah ? "ok" : strerror(errno));
	if (!ah)
		return;
	{
		struct ibv_ah_attr bad_aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = b->gid, .sgid_index = 15 },
		};

		ah2 = ibv_create_ah(a->pd, &bad_aa);
		EXPECT_TRUE(!ah2) TH_LOG("AH on GID index 15 (no such GID) refused (%s)",
		   ah2 ? "created" : strerror(errno));
		if (ah2)
			ibv_destroy_ah(ah2);
	}

	/* a datagram with immediate data, inline */
	memset(b->buf, 0, BUF);
	memset(a->buf + 4096, 0x5a, 64);
	ret = post_recv(b, 0, GRH + 1024);
	ret = ret ?: ud_send(a, ah, b->qp->qp_num, QKEY, 64, true, true);
	EXPECT_TRUE(!ret && wait_wc(a->cq, &wc, 10) && wc.status == IBV_WC_SUCCESS)
	   TH_LOG("UD SEND_WITH_IMM (inline) completes (ret %d status %d)", ret,
	   ret ? -1 : (int)wc.status);
	memset(&rwc, 0, sizeof(rwc));
	EXPECT_TRUE(wait_wc(b->cq, &rwc, 10) && rwc.status == IBV_WC_SUCCESS &&
	   rwc.opcode == IBV_WC_RECV && rwc.byte_len == GRH + 64 &&
	   (rwc.wc_flags & IBV_WC_GRH) && (rwc.wc_flags & IBV_WC_WITH_IMM) &&
	   be32toh(rwc.imm_data) == 0x12345678 &&
	   rwc.src_qp == a->qp->qp_num && b->buf[GRH] == 0x5a &&
	   b->buf[GRH + 63] == 0x5a && b->buf[GRH + 64] == 0)
	   TH_LOG("UD receive: status %d, %u bytes (GRH + 64), flags 0x%x, imm 0x%x, src_qp %u (want %u)",
	   rwc.status, rwc.byte_len, rwc.wc_flags, be32toh(rwc.imm_data),
	   rwc.src_qp, a->qp->qp_num);
	ah2 = ibv_create_ah_from_wc(b->pd, &rwc, (struct ibv_grh *)b->buf, 1);
	EXPECT_TRUE(ah2 != NULL) TH_LOG("ibv_create_ah_from_wc on the receive (%s)",
	   ah2 ? "ok" : strerror(errno));
	if (ah2) {
		/* answer through it, with the QP's own Q_Key */
		memset(a->buf, 0, GRH + 8);
		ret = 0;
		{
			struct ibv_sge sg = {
				.addr = (uintptr_t)a->buf, .length = GRH + 1024,
				.lkey = a->mr->lkey,
			};
			struct ibv_recv_wr rw = { .sg_list = &sg, .num_sge = 1 };
			struct ibv_recv_wr *rbad;

			ret = ibv_post_recv(a->qp, &rw, &rbad);
		}
		memset(b->buf + 4096, 0xa5, 8);
		ret = ret ?: ud_send(b, ah2, a->qp->qp_num, QKEY_USE_QP, 8,
				     false, false);
		EXPECT_TRUE(!ret && wait_wc(b->cq, &wc, 10) &&
		   wc.status == IBV_WC_SUCCESS && wait_wc(a->cq, &rwc, 10) &&
		   rwc.status == IBV_WC_SUCCESS && rwc.byte_len == GRH + 8 &&
		   a->buf[GRH] == 0xa5 && rwc.src_qp == b->qp->qp_num)
		   TH_LOG("answer through the AH from the WC, remote_qkey 'use the QP's own' (0x%x)",
		   QKEY_USE_QP);
		ibv_destroy_ah(ah2);
	}

	/* a wrong Q_Key: dropped and counted */
	viols = qkey_viols(b);
	ret = post_recv(b, 0, GRH + 1024);
	ret = ret ?: ud_send(a, ah, b->qp->qp_num, QKEY + 1, 16, false, false);
	EXPECT_TRUE(!ret && wait_wc(a->cq, &wc, 10) && wc.status == IBV_WC_SUCCESS)
	   TH_LOG("UD SEND with a wrong Q_Key completes at the sender");
	EXPECT_TRUE(!wait_wc(b->cq, &rwc, 1)) TH_LOG("... and is not received");
	EXPECT_TRUE(qkey_viols(b) == viols + 1) TH_LOG("... and counted: qkey_viol_cntr %u -> %u",
	   viols, qkey_viols(b));
	/* the posted receive takes the next good datagram */
	ret = ud_send(a, ah, b->qp->qp_num, QKEY, 16, false, false);
	EXPECT_TRUE(!ret && wait_wc(a->cq, &wc, 10) && wait_wc(b->cq, &rwc, 10) &&
	   rwc.status == IBV_WC_SUCCESS && rwc.byte_len == GRH + 16)
	   TH_LOG("the next datagram with the right Q_Key is received");

	/* larger than the path MTU (netdev MTU 1500: 1024) */
	ret = ud_send(a, ah, b->qp->qp_num, QKEY, 1025, false, false);
	EXPECT_TRUE(!ret && wait_wc(a->cq, &wc, 10) && wc.status == IBV_WC_LOC_LEN_ERR)
	   TH_LOG("UD SEND of 1025 bytes over a 1024-byte path MTU: IBV_WC_LOC_LEN_ERR (status %d)",
	   ret ? -1 : (int)wc.status);
	ibv_destroy_ah(ah);
}

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b;

/* ------------------------------------------------- the reported limits */

#define CAPS_PIECE	16	/* bytes per SGE */
#define CAPS_TX		2048	/* a's pieces, CAPS_STRIDE apart */
#define CAPS_RX		1024	/* b's pieces */
#define CAPS_STRIDE	128

/*
 * One QP type (on an SRQ at B if @srq) at exactly the limits the device
 * reports: A's and B's QPs with max_qp_wr WRs and max_sge SGEs each way
 * (B's SRQ with max_srq_wr and max_srq_sge), connected; then a SEND
 * gathered from max_sge pieces must land at B scattered over as many.
 */
static void test_caps1(struct __test_metadata *_metadata, struct tu_side *a,
		       struct tu_side *b, const struct ibv_device_attr *d,
		       enum ibv_qp_type type, bool srq)
{
	const char *what = type == IBV_QPT_UD ? (srq ? "UD on an SRQ" : "UD") :
						(srq ? "RC on an SRQ" : "RC");
	bool ud = type == IBV_QPT_UD;
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = d->max_srq_wr, .max_sge = d->max_srq_sge },
	};
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = d->max_qp_wr, .max_recv_wr = d->max_qp_wr,
			 .max_send_sge = d->max_sge, .max_recv_sge = d->max_sge },
	};
	int nrx = srq ? d->max_srq_sge : d->max_sge, i, ret = 0;
	struct ibv_sge tx[32], rx[32];
	uint32_t len = d->max_sge * CAPS_PIECE, off = 0;
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = tx, .num_sge = d->max_sge,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	}, *bad;
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = rx, .num_sge = nrx };
	struct ibv_recv_wr *rbad;
	struct ibv_srq *q = NULL;
	struct ibv_ah *ah = NULL;
	struct ibv_wc wc = {}, rwc = {};
	bool same = true;

	ASSERT_TRUE(d->max_sge <= 32 && nrx <= 32 && nrx >= d->max_sge)
		TH_LOG("%s: max_sge %d, max_srq_sge %d", what, d->max_sge,
		       d->max_srq_sge);
	if (srq) {
		q = ibv_create_srq(b->pd, &sa);
		EXPECT_TRUE(q != NULL)
			TH_LOG("%s: SRQ of max_srq_wr (%d) WRs and max_srq_sge (%d) SGEs (%s)",
			       what, d->max_srq_wr, d->max_srq_sge, strerror(errno));
		if (!q)
			return;
	}
	ia.send_cq = ia.recv_cq = a->cq;
	a->qp = ibv_create_qp(a->pd, &ia);
	ia.send_cq = ia.recv_cq = b->cq;
	ia.srq = q;
	if (q)
		ia.cap.max_recv_wr = ia.cap.max_recv_sge = 0;
	b->qp = ibv_create_qp(b->pd, &ia);
	EXPECT_TRUE(a->qp && b->qp)
		TH_LOG("%s: QPs of max_qp_wr (%d) WRs and max_sge (%d) SGEs each way (%s)",
		       what, d->max_qp_wr, d->max_sge, strerror(errno));
	if (!a->qp || !b->qp)
		goto out;
	if (ud) {
		ret = ud_up(a, QKEY) || ud_up(b, QKEY);
		ah = ret ? NULL : ah_to(a, b);
		ret = ret || !ah;
		wr.wr.ud.ah = ah;
		wr.wr.ud.remote_qpn = b->qp->qp_num;
		wr.wr.ud.remote_qkey = QKEY;
	} else {
		ret = rc_connect(a, b) || rc_connect(b, a);
	}
	EXPECT_EQ(0, ret) TH_LOG("%s: QPs to RTS", what);
	if (ret)
		goto out;
	memset(b->buf, 0, BUF);
	for (i = 0; i < d->max_sge; i++) {
		uint8_t *p = a->buf + CAPS_TX + i * CAPS_STRIDE;
		int j;

		for (j = 0; j < CAPS_PIECE; j++)
			p[j] = (uint8_t)((i * CAPS_PIECE + j) ^ 0xa5);
		tx[i] = (struct ibv_sge){ (uintptr_t)p, CAPS_PIECE, a->mr->lkey };
	}
	for (i = 0; i < nrx; i++) {
		uint32_t n = CAPS_PIECE + (ud && !i ? GRH : 0);

		rx[i] = (struct ibv_sge){ (uintptr_t)b->buf + CAPS_RX +
					  i * CAPS_STRIDE, n, b->mr->lkey };
	}
	ret = srq ? ibv_post_srq_recv(q, &rwr, &rbad) :
		    ibv_post_recv(b->qp, &rwr, &rbad);
	ret = ret ?: ibv_post_send(a->qp, &wr, &bad);
	EXPECT_EQ(0, ret) TH_LOG("%s: post a receive of %d SGEs and a SEND of %d (%s)",
				 what, nrx, d->max_sge, strerror(ret));
	if (ret)
		goto out;
	EXPECT_TRUE(wait_wc(a->cq, &wc, 10) && wc.status == IBV_WC_SUCCESS)
		TH_LOG("%s: the SEND of %d SGEs completes (%s)", what, d->max_sge,
		       ibv_wc_status_str(wc.status));
	/* the bytes in order over the receive's pieces, after the GRH area */
	for (i = 0; i < d->max_sge * CAPS_PIECE; i++, off++) {
		uint32_t piece = off / CAPS_PIECE;
		const uint8_t *at = b->buf + CAPS_RX + piece * CAPS_STRIDE +
				    (ud && !piece ? GRH : 0) + off % CAPS_PIECE;

		same = same && *at == (uint8_t)(i ^ 0xa5);
	}
	EXPECT_TRUE(wait_wc(b->cq, &rwc, 10) && rwc.status == IBV_WC_SUCCESS &&
		    rwc.byte_len == len + (ud ? GRH : 0) && same)
		TH_LOG("%s: B receives the %u bytes over %d SGEs (%s, %u bytes, %s)",
		       what, len, nrx, ibv_wc_status_str(rwc.status), rwc.byte_len,
		       same ? "in order" : "not as sent");
out:
	if (ah)
		ibv_destroy_ah(ah);
	if (a->qp)
		ibv_destroy_qp(a->qp);
	if (b->qp)
		ibv_destroy_qp(b->qp);
	a->qp = b->qp = NULL;
	if (q)
		ibv_destroy_srq(q);
}

/*
 * Every QP type at the limits ibv_query_device() reports (issue 35: UCX
 * creates its UD QPs with max_sge send SGEs, and the device had said 6
 * where UD takes 4): a consumer may create any type at those limits.
 */
static void test_caps(struct __test_metadata *_metadata, struct tu_side *a,
		      struct tu_side *b)
{
	struct ibv_device_attr d;

	ASSERT_EQ(0, ibv_query_device(a->ctx, &d)) TH_LOG("ibv_query_device");
	test_caps1(_metadata, a, b, &d, IBV_QPT_RC, false);
	test_caps1(_metadata, a, b, &d, IBV_QPT_RC, true);
	test_caps1(_metadata, a, b, &d, IBV_QPT_UD, false);
	test_caps1(_metadata, a, b, &d, IBV_QPT_UD, true);
}

/* ------------------------------------------------------ send ops */

/* The QP types of the send-operation rules. */
enum { ON_RC = 1, ON_UC = 2, ON_UD = 4, ON_ALL = 7 };

/*
 * The engine's send operations per QP type, as the user sees them (the
 * provider keeps them in one table, gaudi_send_ops[]): the sends on every
 * type; WRITEs, MW binds and local invalidation on RC and UC; READ and
 * SEND_WITH_INV on RC (the UC transport has neither); FLUSH on RC through
 * the extended API only; no atomics.
 */
static const struct {
	enum ibv_wr_opcode op;
	uint64_t qpex;
	unsigned int on;	/* the types that have it */
	unsigned int known;	/* ibv_post_send() knows it there: EINVAL
				 * in RESET, not EOPNOTSUPP */
	const char *name;
} send_rule[] = {
	{ IBV_WR_SEND, IBV_QP_EX_WITH_SEND, ON_ALL, ON_ALL, "SEND" },
	{ IBV_WR_SEND_WITH_IMM, IBV_QP_EX_WITH_SEND_WITH_IMM, ON_ALL, ON_ALL,
	  "SEND_WITH_IMM" },
	{ IBV_WR_RDMA_WRITE, IBV_QP_EX_WITH_RDMA_WRITE, ON_RC | ON_UC,
	  ON_RC | ON_UC, "RDMA_WRITE" },
	{ IBV_WR_RDMA_WRITE_WITH_IMM, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
	  ON_RC | ON_UC, ON_RC | ON_UC, "RDMA_WRITE_WITH_IMM" },
	{ IBV_WR_RDMA_READ, IBV_QP_EX_WITH_RDMA_READ, ON_RC, ON_RC | ON_UC,
	  "RDMA_READ" },
	{ IBV_WR_ATOMIC_CMP_AND_SWP, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, 0, 0,
	  "ATOMIC_CMP_AND_SWP" },
	{ IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, 0,
	  0, "ATOMIC_FETCH_AND_ADD" },
	{ IBV_WR_LOCAL_INV, IBV_QP_EX_WITH_LOCAL_INV, ON_RC | ON_UC,
	  ON_RC | ON_UC, "LOCAL_INV" },
	{ IBV_WR_BIND_MW, IBV_QP_EX_WITH_BIND_MW, ON_RC | ON_UC, ON_RC | ON_UC,
	  "BIND_MW" },
	{ IBV_WR_SEND_WITH_INV, IBV_QP_EX_WITH_SEND_WITH_INV, ON_RC,
	  ON_RC | ON_UC, "SEND_WITH_INV" },
	{ IBV_WR_TSO, IBV_QP_EX_WITH_TSO, 0, 0, "TSO" },
	{ IBV_WR_FLUSH, IBV_QP_EX_WITH_FLUSH, ON_RC, 0, "FLUSH" },
	{ IBV_WR_ATOMIC_WRITE, IBV_QP_EX_WITH_ATOMIC_WRITE, 0, 0,
	  "ATOMIC_WRITE" },
	/* past the last opcode verbs defines */
	{ 16, 0, 0, 0, "opcode 16" },
	{ 255, 0, 0, 0, "opcode 255" },
};

/*
 * For each QP type and operation: an extended QP enabled for it alone
 * can be created exactly when the type has it (else EOPNOTSUPP); and a
 * work request with it, posted to a QP in RESET, is EOPNOTSUPP when the
 * engine does not take it through ibv_post_send() on that type, and
 * otherwise EINVAL (a READ on UC is invalid there, and any other is so
 * in RESET): the opcode is judged before the state.  Nothing is posted.
 */
static void test_send_ops(struct __test_metadata *_metadata, struct tu_side *a)
{
	static const struct { enum ibv_qp_type type; unsigned int bit; const char *name; }
	types[] = { { IBV_QPT_RC, ON_RC, "RC" }, { IBV_QPT_UC, ON_UC, "UC" },
		    { IBV_QPT_UD, ON_UD, "UD" } };
	unsigned int t, i, rules = 0, wrong = 0;

	for (t = 0; t < ARRAY_SIZE(types); t++) {
		struct ibv_qp *q = make_qp(a, types[t].type, 1, 0);

		ASSERT_NE(NULL, q) TH_LOG("a %s QP: %s", types[t].name, strerror(errno));
		for (i = 0; i < ARRAY_SIZE(send_rule); i++) {
			bool has = send_rule[i].on & types[t].bit;
			bool known = send_rule[i].known & types[t].bit;
			struct ibv_send_wr wr = { .opcode = send_rule[i].op }, *bad = NULL;
			int ret = ibv_post_send(q, &wr, &bad);

			rules++;
			if (ret != (known ? EINVAL : EOPNOTSUPP) || bad != &wr) {
				wrong++;
				TH_LOG("%s: ibv_post_send(%s) in RESET gave %s, not %s",
				       types[t].name, send_rule[i].name, strerror(ret),
				       strerror(known ? EINVAL : EOPNOTSUPP));
			}
			if (!send_rule[i].qpex)
				continue;

			struct ibv_qp_init_attr_ex ia = {
				.send_cq = a->cq, .recv_cq = a->cq,
				.cap = { .max_send_wr = 4, .max_recv_wr = 4,
					 .max_send_sge = 1, .max_recv_sge = 1 },
				.qp_type = types[t].type,
				.comp_mask = IBV_QP_INIT_ATTR_PD |
					     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
				.pd = a->pd, .send_ops_flags = send_rule[i].qpex,
			};
			struct ibv_qp *x;

			errno = 0;
			x = ibv_create_qp_ex(a->ctx, &ia);
			rules++;
			if (!!x != has || (!x && errno != EOPNOTSUPP)) {
				wrong++;
				TH_LOG("%s: an extended QP with only %s: %s, expected %s",
				       types[t].name, send_rule[i].name,
				       x ? "created" : strerror(errno),
				       has ? "created" : "EOPNOTSUPP");
			}
			if (x)
				ibv_destroy_qp(x);
		}
		ibv_destroy_qp(q);
	}
	EXPECT_EQ(0U, wrong)
		TH_LOG("%u of %u send-operation rules broken on RC, UC and UD", wrong, rules);
}

/* Every test opens both devices anew, in its own process. */
FIXTURE(qp_attr) {
	struct tu_side a, b;
};

FIXTURE_SETUP(qp_attr)
{
	ASSERT_EQ(0, open_side(&self->a, dev_a, gid_a))
		TH_LOG("open %s (GID index %d): %s", dev_a, gid_a, strerror(errno));
	ASSERT_EQ(0, open_side(&self->b, dev_b, gid_b))
		TH_LOG("open %s (GID index %d): %s", dev_b, gid_b, strerror(errno));
}

FIXTURE_TEARDOWN(qp_attr)
{
}

TEST_F_TIMEOUT(qp_attr, rc, 120)
{
	test_rc(_metadata, &self->a, &self->b);
}

TEST_F_TIMEOUT(qp_attr, mr, 120)
{
	test_mr(_metadata, &self->a);
}

TEST_F_TIMEOUT(qp_attr, ud, 120)
{
	test_ud(_metadata, &self->a, &self->b);
}

TEST_F_TIMEOUT(qp_attr, caps, 120)
{
	test_caps(_metadata, &self->a, &self->b);
}

TEST_F_TIMEOUT(qp_attr, send_ops, 120)
{
	test_send_ops(_metadata, &self->a);
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	return test_harness_run(1, run);
}
