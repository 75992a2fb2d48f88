// SPDX-License-Identifier: GPL-2.0
/*
 * srq_test - shared receive queues on gaudi_N, two devices in one process:
 * device limits; RC QPs of device B on one SRQ receiving SENDs from four
 * QPs of device A, in SRQ order, with the data intact; a SEND longer than
 * the posted SRQ buffer completes with IBV_WC_LOC_LEN_ERR; the limit event
 * (armed by ibv_modify_srq(IBV_SRQ_LIMIT), raised once fewer WQEs than the
 * limit are posted, disarmed afterwards); ring full and too many SGEs;
 * UD QPs on an SRQ (datagrams with their GRH area, in SRQ order, a
 * datagram longer than the SRQ buffer: IBV_WC_LOC_LEN_ERR).
 * Bad input: max_wr, max_sge and srq_limit beyond the device's or the
 * SRQ's, resizing (EOPNOTSUPP), SRQ types the device lacks (EOPNOTSUPP),
 * ibv_post_recv on a QP that has no RQ, destroying an SRQ a QP uses
 * (EBUSY), a non-zero driver input byte in CREATE_SRQ (EINVAL).  Last, a
 * context closed with an SRQ and its QPs open.  A kselftest
 * (kselftest_harness.h): one test per area, each in its own process with
 * both devices opened anew; output KTAP.
 *
 * usage: srq_test DEV_A GID_A DEV_B GID_B
 *        srq_test --exit-live DEV GID   (create an SRQ, QPs on it and an
 *        armed limit, print "ready" and exit without destroying anything)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"

#define BUF_SIZE	(64 * 1024)
#define NQP		4
#define MSG		512
#define RX_OFF		(32 * 1024)

/* each side's buffer (buf, mr) is BUF_SIZE, registered for local writes */
static struct tu_side A, B;

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b;

/* One completion of @cq within 10 s: 0, or -1 (none, or polling failed). */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return tu_poll(cq, wc, 10) == 1 ? 0 : -1;
}

/* tu_open() with a CQ of 256, and the side's buffer: 0 or an errno */
static int open_dev(struct tu_side *d, const char *name, int gid_index)
{
	int ret = tu_open(d, name, gid_index, 256);

	if (ret)
		return ret;
	d->name = name;
	d->buf = aligned_alloc(4096, BUF_SIZE);
	if (!d->buf)
		return ENOMEM;
	d->mr = ibv_reg_mr(d->pd, d->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	return d->mr ? 0 : errno ?: ENOMEM;
}

static struct ibv_srq *mk_srq(struct tu_side *d, uint32_t max_wr,
			      uint32_t max_sge, uint32_t limit)
{
	struct ibv_srq_init_attr sa = {
		.attr = { .max_wr = max_wr, .max_sge = max_sge,
			  .srq_limit = limit },
	};

	errno = 0;
	return ibv_create_srq(d->pd, &sa);
}

/* An RC QP of @d; on @srq if not NULL. */
static struct ibv_qp *mk_qp(struct tu_side *d, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = d->cq, .recv_cq = d->cq, .srq = srq,
		.cap = { .max_send_wr = 32, .max_recv_wr = srq ? 0 : 32,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
		.qp_type = IBV_QPT_RC,
	};

	errno = 0;
	return ibv_create_qp(d->pd, &ia);
}

/* RESET -> RTS towards QP @dqpn of @peer: PSNs 7, one READ each way */
static int to_rts(struct tu_side *d, struct ibv_qp *qp, struct tu_side *peer,
		  uint32_t dqpn)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.psn = 7;
	p.max_rd_atomic = 1;
	p.max_dest_rd_atomic = 1;
	return tu_qp_connect(qp, d, peer, dqpn, IBV_ACCESS_LOCAL_WRITE, &p);
}

/* @n connected pairs: qa[i] on A (own RQ) <-> qb[i] on B's @srq. */
static int connect_qps(struct ibv_qp **qa, struct ibv_qp **qb, int n,
		   struct ibv_srq *srq)
{
	int i;

	for (i = 0; i < n; i++) {
		qa[i] = mk_qp(&A, NULL);
		qb[i] = mk_qp(&B, srq);
		if (!qa[i] || !qb[i])
			return -1;
		if (to_rts(&A, qa[i], &B, qb[i]->qp_num) ||
		    to_rts(&B, qb[i], &A, qa[i]->qp_num))
			return -1;
	}
	return 0;
}

static void destroy_qps(struct ibv_qp **q, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (q[i])
			ibv_destroy_qp(q[i]);
}

static int srq_post(struct ibv_srq *srq, uint64_t id, uint32_t off,
		    uint32_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)B.buf + off, .length = len,
		.lkey = B.mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

static int send_msg(struct ibv_qp *qp, uint64_t id, uint32_t off,
		    uint32_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)A.buf + off, .length = len,
		.lkey = A.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/*
 * An SRQ event within @ms, its type in *type (acknowledged): 0 or -1.
 * QP events (IBV_EVENT_QP_LAST_WQE_REACHED of the QPs that went to the
 * error state in test_len_err) are acknowledged and passed over.
 */
static int async_event(struct ibv_context *ctx, int ms,
		       enum ibv_event_type *type, void **elem)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	double end = tu_now() + ms / 1e3;
	int left;

	while ((left = (int)((end - tu_now()) * 1e3)) >= 0) {
		if (poll(&p, 1, left) != 1 || ibv_get_async_event(ctx, &ev))
			return -1;
		*type = ev.event_type;
		*elem = ev.element.srq;
		ibv_ack_async_event(&ev);
		if (*type == IBV_EVENT_SRQ_LIMIT_REACHED ||
		    *type == IBV_EVENT_SRQ_ERR)
			return 0;
		printf("# passed over async event %s\n",
		       ibv_event_type_str(*type));
	}
	return -1;
}

/* Every test opens both devices anew, in its own process. */
FIXTURE(srq) {};

FIXTURE_SETUP(srq)
{
	ASSERT_EQ(0, open_dev(&A, dev_a, gid_a))
		TH_LOG("open %s (GID index %d): %s", dev_a, gid_a, strerror(errno));
	ASSERT_EQ(0, open_dev(&B, dev_b, gid_b))
		TH_LOG("open %s (GID index %d): %s", dev_b, gid_b, strerror(errno));
}

FIXTURE_TEARDOWN(srq)
{
}

TEST_F_TIMEOUT(srq, caps, 120)
{
	struct ibv_device_attr da;

	ASSERT_EQ(0, ibv_query_device(B.ctx, &da)) TH_LOG("query_device of %s", B.name);
	EXPECT_TRUE(da.max_srq == 1024 && da.max_srq_wr == 16384 && da.max_srq_sge == 6)
	   TH_LOG("device: max_srq %d, max_srq_wr %d, max_srq_sge %d (1024, 16384, 6)",
	   da.max_srq, da.max_srq_wr, da.max_srq_sge);
}

TEST_F_TIMEOUT(srq, bad_input, 120)
{
	struct ibv_srq_init_attr_ex sx = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = B.pd, .cq = B.cq,
		.tm_cap = { .max_num_tags = 16, .max_ops = 16 },
	};
	struct ibv_srq_attr at = {};
	struct ibv_srq *srq;
	int ret;

	srq = mk_srq(&B, 16385, 1, 0);
	EXPECT_TRUE(!srq && errno == EINVAL) TH_LOG("max_wr 16385 (device: 16384): EINVAL (%s)",
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	srq = mk_srq(&B, 0, 1, 0);
	EXPECT_TRUE(!srq && errno == EINVAL) TH_LOG("max_wr 0: EINVAL (%s)",
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	srq = mk_srq(&B, 16, 7, 0);
	EXPECT_TRUE(!srq && errno == EINVAL) TH_LOG("max_sge 7 (device: 6): EINVAL (%s)",
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	srq = mk_srq(&B, 16, 1, 17);
	EXPECT_TRUE(!srq && errno == EINVAL) TH_LOG("srq_limit 17 > max_wr 16: EINVAL (%s)",
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);
	errno = 0;
	srq = ibv_create_srq_ex(B.ctx, &sx);
	EXPECT_TRUE(!srq && errno == EOPNOTSUPP) TH_LOG("tag-matching SRQ: EOPNOTSUPP (%s)",
	   srq ? "created" : strerror(errno));
	if (srq)
		ibv_destroy_srq(srq);

	srq = mk_srq(&B, 1, 1, 1);
	ret = srq ? ibv_query_srq(srq, &at) : errno;
	EXPECT_TRUE(!ret && at.max_wr >= 1 && at.srq_limit == 1)
	   TH_LOG("SRQ of 1 WR, limit 1: max_wr %u, srq_limit %u (%s)", at.max_wr,
	   at.srq_limit, strerror(ret));
	if (srq)
		ibv_destroy_srq(srq);

	srq = mk_srq(&B, 5, 2, 0);
	ASSERT_NE(NULL, srq) TH_LOG("SRQ of 5 WRs, 2 SGEs: %s", strerror(errno));
	ret = ibv_query_srq(srq, &at);
	EXPECT_TRUE(!ret && at.max_wr == 8 && at.max_sge == 2 && at.srq_limit == 0)
	   TH_LOG("query: max_wr %u (asked 5, the ring has 8), max_sge %u, srq_limit %u (%s)",
	   at.max_wr, at.max_sge, at.srq_limit, strerror(ret));
	/* resizing is mw_test's (tests/rdma/mw_test.c); a size past the limit */
	at.max_wr = 1 << 20;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("resize (IBV_SRQ_MAX_WR) past max_srq_wr: EINVAL (%s)",
	   strerror(ret));
	at.srq_limit = 9;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("srq_limit 9 > max_wr 8: EINVAL (%s)", strerror(ret));
	at.srq_limit = 3;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	memset(&at, 0, sizeof(at));
	if (!ret)
		ret = ibv_query_srq(srq, &at);
	EXPECT_TRUE(!ret && at.srq_limit == 3) TH_LOG("arm srq_limit 3, query shows %u (%s)",
	   at.srq_limit, strerror(ret));

	/* posting: too many SGEs, then the ring full */
	{
		struct ibv_sge sg[3] = {
			{ (uintptr_t)B.buf, 8, B.mr->lkey },
			{ (uintptr_t)B.buf + 8, 8, B.mr->lkey },
			{ (uintptr_t)B.buf + 16, 8, B.mr->lkey },
		};
		struct ibv_recv_wr wr[10], *bad = NULL;
		int i;

		memset(wr, 0, sizeof(wr));
		wr[0].sg_list = sg;
		wr[0].num_sge = 3;
		ret = ibv_post_srq_recv(srq, wr, &bad);
		EXPECT_TRUE(ret == EINVAL && bad == wr)
		   TH_LOG("3 SGEs on an SRQ of 2: EINVAL, bad_wr the first (%s)",
		   strerror(ret));
		for (i = 0; i < 10; i++) {
			wr[i].wr_id = i;
			wr[i].sg_list = sg;
			wr[i].num_sge = 2;
			wr[i].next = i < 9 ? &wr[i + 1] : NULL;
		}
		bad = NULL;
		ret = ibv_post_srq_recv(srq, wr, &bad);
		EXPECT_TRUE(ret == ENOMEM && bad == &wr[8])
		   TH_LOG("10 WRs into 8 slots: ENOMEM, bad_wr the 9th (%s, bad_wr %ld)",
		   strerror(ret), bad ? (long)(bad - wr) : -1L);
	}
	ret = ibv_destroy_srq(srq);
	EXPECT_TRUE(ret == 0) TH_LOG("destroy the SRQ with 8 WQEs posted (%s)", strerror(ret));
}

/* CREATE_SRQ through the write() ABI with 8 bytes of driver input. */
static int raw_create_srq(struct ibv_context *ctx, struct ibv_pd *pd,
			  uint64_t drv, uint32_t *h)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_create_srq cmd;
		uint64_t drv;
	} __attribute__((packed)) c = {};
	struct {
		struct ib_uverbs_create_srq_resp resp;
		uint64_t drv[3];
	} r = {};

	c.hdr.command = IB_USER_VERBS_CMD_CREATE_SRQ;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(r) / 4;
	c.cmd.response = (uintptr_t)&r;
	c.cmd.pd_handle = pd->handle;
	c.cmd.max_wr = 16;
	c.cmd.max_sge = 1;
	c.drv = drv;
	if (write(ctx->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return errno;
	*h = r.resp.srq_handle;
	return 0;
}

static int raw_destroy_srq(struct ibv_context *ctx, uint32_t h)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_destroy_srq cmd;
	} __attribute__((packed)) c = {};
	struct ib_uverbs_destroy_srq_resp r;

	c.hdr.command = IB_USER_VERBS_CMD_DESTROY_SRQ;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(r) / 4;
	c.cmd.response = (uintptr_t)&r;
	c.cmd.srq_handle = h;
	if (write(ctx->cmd_fd, &c, sizeof(c)) != (ssize_t)sizeof(c))
		return errno;
	return 0;
}

TEST_F_TIMEOUT(srq, reserved, 120)
{
	uint32_t h = 0;
	int ret;

	ret = raw_create_srq(B.ctx, B.pd, 0, &h);
	EXPECT_TRUE(!ret) TH_LOG("CREATE_SRQ with 8 zero bytes of driver input: %s",
	   ret ? strerror(ret) : "created");
	if (!ret) {
		EXPECT_TRUE(raw_destroy_srq(B.ctx, h) == 0) TH_LOG("and DESTROY_SRQ");
	}
	ret = raw_create_srq(B.ctx, B.pd, 1ULL << 40, &h);
	EXPECT_TRUE(ret == EINVAL)
	   TH_LOG("CREATE_SRQ with a non-zero driver input byte: EINVAL (%s)",
	   ret ? strerror(ret) : "created");
	if (!ret)
		raw_destroy_srq(B.ctx, h);
}

/*
 * Four QPs of B on one SRQ: each of A's QPs sends two messages; B's
 * receives take the SRQ's WQEs in ring order, whichever QP they came to.
 */
TEST_F_TIMEOUT(srq, data_path, 120)
{
	struct ibv_qp *qa[NQP] = {}, *qb[NQP] = {};
	struct ibv_recv_wr rwr = {}, *rbad;
	bool seen[2 * NQP] = {}, order = true, data = true, qpn = true;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	int i, ret, got = 0, sent = 0;
	uint64_t next = 0;

	srq = mk_srq(&B, 64, 1, 0);
	ASSERT_NE(NULL, srq) TH_LOG("SRQ of 64 WRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_qps(qa, qb, NQP, srq))
		TH_LOG("%d RC QPs of %s on one SRQ, connected to %s: %s",
		       NQP, B.name, A.name, strerror(errno));
	TH_LOG("%d RC QPs of %s on one SRQ, connected to %s", NQP, B.name, A.name);
	ret = ibv_post_recv(qb[0], &rwr, &rbad);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("ibv_post_recv on a QP on an SRQ: EINVAL (%s)",
	   strerror(ret));
	ret = ibv_destroy_srq(srq);
	EXPECT_TRUE(ret == EBUSY) TH_LOG("destroy the SRQ while QPs use it: EBUSY (%s)",
	   strerror(ret));
	if (!ret) {
		srq = NULL;
		goto out;
	}
	for (i = 0; i < 2 * NQP; i++)
		if (srq_post(srq, i, RX_OFF + i * MSG, MSG))
			break;
	EXPECT_TRUE(i == 2 * NQP) TH_LOG("post %d receives to the SRQ", 2 * NQP);
	for (i = 0; i < 2 * NQP; i++) {
		memset(A.buf + i * MSG, 0x40 + i, MSG);
		if (send_msg(qa[i % NQP], 100 + i, i * MSG, MSG))
			break;
		sent++;
	}
	EXPECT_TRUE(sent == 2 * NQP) TH_LOG("%d SENDs, two from each of A's QPs", sent);
	/* A's send completions and B's receive completions: B.cq only B's */
	for (i = 0; i < sent; i++) {
		if (wait_wc(A.cq, &wc) || wc.status != IBV_WC_SUCCESS)
			break;
	}
	EXPECT_TRUE(i == sent) TH_LOG("%d send completions on %s (%s)", i, A.name,
	   i < sent ? ibv_wc_status_str(wc.status) : "success");
	while (got < sent && !wait_wc(B.cq, &wc)) {
		int q;

		got++;
		ASSERT_TRUE(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
			    wc.byte_len == MSG && wc.wr_id < 2 * NQP)
			TH_LOG("receive %d: status %s, opcode %d, %u bytes, wr_id %lu",
			       got, ibv_wc_status_str(wc.status), wc.opcode,
			       wc.byte_len, (unsigned long)wc.wr_id);
		/* ring order: the n-th message received took WQE n */
		if (wc.wr_id != next++)
			order = false;
		seen[wc.wr_id] = true;
		for (q = 0; q < NQP && qb[q]->qp_num != wc.qp_num; q++)
			;
		if (q == NQP)
			qpn = false;
		/* the byte pattern of whichever message landed there */
		{
			uint8_t *p = B.buf + RX_OFF + wc.wr_id * MSG;
			int k;

			for (k = 1; k < MSG; k++)
				if (p[k] != p[0] || p[0] < 0x40 ||
				    p[0] >= 0x40 + 2 * NQP)
					data = false;
		}
	}
	EXPECT_TRUE(got == sent) TH_LOG("%d receive completions on %s", got, B.name);
	EXPECT_TRUE(order) TH_LOG("the receives took the SRQ's WQEs in ring order");
	EXPECT_TRUE(qpn) TH_LOG("each completion names one of the SRQ's QPs");
	EXPECT_TRUE(data) TH_LOG("the data arrived intact");
	for (i = 0; i < got; i++)
		if (!seen[i])
			break;
	EXPECT_TRUE(i == got) TH_LOG("every posted WQE was used once");
out:
	destroy_qps(qa, NQP);
	destroy_qps(qb, NQP);
	if (srq) {
		EXPECT_TRUE(ibv_destroy_srq(srq) == 0)
		   TH_LOG("destroy the SRQ once its QPs are gone");
	}
}

/* A SEND longer than the SRQ buffer: IBV_WC_LOC_LEN_ERR on B. */
TEST_F_TIMEOUT(srq, len_err, 120)
{
	struct ibv_qp *qa[1] = {}, *qb[1] = {};
	struct ibv_srq *srq;
	struct ibv_wc wc = {}, swc = {};
	int r, s;

	srq = mk_srq(&B, 16, 1, 0);
	ASSERT_NE(NULL, srq) TH_LOG("SRQ of 16 WRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_qps(qa, qb, 1, srq))
		TH_LOG("a QP on the SRQ, connected: %s", strerror(errno));
	ASSERT_EQ(0, srq_post(srq, 77, RX_OFF, 64)) TH_LOG("post a 64-byte SRQ receive");
	ASSERT_EQ(0, send_msg(qa[0], 78, 0, 256)) TH_LOG("post a 256-byte SEND");
	r = wait_wc(B.cq, &wc);
	EXPECT_TRUE(!r && wc.status == IBV_WC_LOC_LEN_ERR && wc.wr_id == 77 &&
	   wc.qp_num == qb[0]->qp_num)
	   TH_LOG("256-byte SEND into a 64-byte SRQ buffer: IBV_WC_LOC_LEN_ERR on %s (%s, wr_id %lu)",
	   B.name, r ? "no completion" : ibv_wc_status_str(wc.status),
	   (unsigned long)wc.wr_id);
	s = wait_wc(A.cq, &swc);
	EXPECT_TRUE(!s && swc.status != IBV_WC_SUCCESS)
	   TH_LOG("and the sender's SEND fails (%s)",
	   s ? "no completion" : ibv_wc_status_str(swc.status));
	destroy_qps(qa, 1);
	destroy_qps(qb, 1);
	if (srq)
		ibv_destroy_srq(srq);
	/* the error flushes may have left completions behind */
	while (ibv_poll_cq(A.cq, 1, &wc) > 0 || ibv_poll_cq(B.cq, 1, &wc) > 0)
		;
}

/*
 * The limit event: 8 WQEs posted, limit 4.  Four messages leave 4 posted
 * (not fewer than the limit): no event.  One more leaves 3: the event,
 * once; the limit reads 0 afterwards and further receives raise nothing.
 */
TEST_F_TIMEOUT(srq, limit, 120)
{
	struct ibv_qp *qa[1] = {}, *qb[1] = {};
	struct ibv_srq_attr at = {};
	enum ibv_event_type type;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	void *elem = NULL;
	int i, n = 0, ret;

	srq = mk_srq(&B, 16, 1, 0);
	ASSERT_NE(NULL, srq) TH_LOG("SRQ of 16 WRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_qps(qa, qb, 1, srq))
		TH_LOG("a QP on the SRQ, connected: %s", strerror(errno));
	for (i = 0; i < 8; i++)
		srq_post(srq, i, RX_OFF + i * MSG, MSG);
	at.srq_limit = 4;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT);
	EXPECT_TRUE(!ret) TH_LOG("arm the limit at 4 with 8 WQEs posted (%s)", strerror(ret));
	EXPECT_TRUE(async_event(B.ctx, 200, &type, &elem) < 0)
	   TH_LOG("no event while 8 are posted");
	for (i = 0; i < 4; i++)
		send_msg(qa[0], i, 0, 64);
	for (i = 0; i < 4; i++)
		n += !wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	EXPECT_TRUE(n == 4) TH_LOG("4 receives (%d)", n);
	EXPECT_TRUE(async_event(B.ctx, 500, &type, &elem) < 0)
	   TH_LOG("no event with 4 posted (not fewer than the limit)");
	send_msg(qa[0], 4, 0, 64);
	ret = wait_wc(B.cq, &wc);
	EXPECT_TRUE(!ret && wc.status == IBV_WC_SUCCESS) TH_LOG("a fifth receive");
	ret = async_event(B.ctx, 5000, &type, &elem);
	EXPECT_TRUE(!ret && type == IBV_EVENT_SRQ_LIMIT_REACHED && elem == srq)
	   TH_LOG("with 3 posted: IBV_EVENT_SRQ_LIMIT_REACHED on the SRQ (%s)",
	   ret ? "no event" : ibv_event_type_str(type));
	memset(&at, 0, sizeof(at));
	ret = ibv_query_srq(srq, &at);
	EXPECT_TRUE(!ret && at.srq_limit == 0) TH_LOG("the limit is disarmed: srq_limit %u",
	   at.srq_limit);
	send_msg(qa[0], 5, 0, 64);
	wait_wc(B.cq, &wc);
	EXPECT_TRUE(async_event(B.ctx, 500, &type, &elem) < 0)
	   TH_LOG("no second event with 2 posted");
	while (ibv_poll_cq(A.cq, 1, &wc) > 0)
		;
	destroy_qps(qa, 1);
	destroy_qps(qb, 1);
	if (srq)
		ibv_destroy_srq(srq);
}

#define UD_QKEY		0x11111111U
#define GRH		40

/* A UD QP of @d in RTS (Q_Key UD_QKEY), on @srq if not NULL. */
static struct ibv_qp *mk_ud_qp(struct tu_side *d, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = d->cq, .recv_cq = d->cq, .srq = srq,
		.cap = { .max_send_wr = 16, .max_recv_wr = srq ? 0 : 16,
			 .max_send_sge = 1, .max_recv_sge = srq ? 0 : 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = UD_QKEY,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(d->pd, &ia);
	if (!qp)
		return NULL;
	errno = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_QKEY);
	if (!errno) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_RTR;
		errno = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	}
	if (!errno) {
		a.qp_state = IBV_QPS_RTS;
		errno = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	}
	if (errno) {
		ibv_destroy_qp(qp);
		return NULL;
	}
	return qp;
}

/* A datagram of @len bytes at A.buf + @off from @qp through @ah to @dqpn. */
static int send_ud(struct ibv_qp *qp, struct ibv_ah *ah, uint32_t dqpn,
		   uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)A.buf + off, .length = len,
		.lkey = A.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
		.wr.ud = { .ah = ah, .remote_qpn = dqpn,
			   .remote_qkey = UD_QKEY },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(qp, &wr, &bad);
}

/*
 * UD QPs on an SRQ: two UD QPs of B share it, A's UD QP sends two
 * datagrams to each.  Each takes the next SRQ WQE (ring order), gets the
 * GRH area then the payload, and completes on the QP it was sent to with
 * IBV_WC_GRH and A's QP number; the data is intact.  A datagram longer
 * than the SRQ buffer completes with IBV_WC_LOC_LEN_ERR and the QP goes
 * on: the next datagram is received.  ibv_post_recv on such a QP is
 * EINVAL (no RQ).
 */
TEST_F_TIMEOUT(srq, ud, 120)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = B.gid, .sgid_index = A.gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_qp *qa = NULL, *qb[2] = {};
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_ah *ah = NULL;
	struct ibv_srq *srq;
	struct ibv_wc wc;
	int i, ret, got = 0;
	bool ok = true;

	srq = mk_srq(&B, 16, 1, 0);
	ASSERT_NE(NULL, srq) TH_LOG("SRQ of 16 WRs: %s", strerror(errno));
	qb[0] = mk_ud_qp(&B, srq);
	qb[1] = qb[0] ? mk_ud_qp(&B, srq) : NULL;
	ASSERT_TRUE(qb[0] && qb[1]) TH_LOG("two UD QPs of %s on one SRQ, in RTS: %s",
					   B.name, strerror(errno));
	qa = mk_ud_qp(&A, NULL);
	ASSERT_NE(NULL, qa) TH_LOG("a UD QP of %s in RTS: %s", A.name, strerror(errno));
	ah = ibv_create_ah(A.pd, &aa);
	ASSERT_NE(NULL, ah) TH_LOG("an AH on %s to %s: %s", A.name, B.name, strerror(errno));
	ret = ibv_post_recv(qb[0], &rwr, &rbad);
	EXPECT_TRUE(ret == EINVAL) TH_LOG("ibv_post_recv on a UD QP on an SRQ: EINVAL (%s)",
	   strerror(ret));

	for (i = 0; i < 4; i++)
		if (srq_post(srq, i, RX_OFF + i * (GRH + MSG), GRH + MSG))
			break;
	EXPECT_TRUE(i == 4) TH_LOG("post 4 receives of %d bytes to the SRQ", GRH + MSG);
	for (i = 0; i < 4; i++) {
		memset(A.buf + i * MSG, 0x60 + i, MSG);
		if (send_ud(qa, ah, qb[i % 2]->qp_num, 200 + i, i * MSG, MSG) ||
		    wait_wc(A.cq, &wc) || wc.status != IBV_WC_SUCCESS)
			break;
		/* one at a time: the n-th datagram takes SRQ WQE n */
		if (wait_wc(B.cq, &wc)) {
			ok = false;
			TH_LOG("datagram %d: no receive completion", i);
			break;
		}
		got++;
		if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_RECV ||
		    wc.byte_len != GRH + MSG || !(wc.wc_flags & IBV_WC_GRH) ||
		    wc.wr_id != (uint64_t)i || wc.qp_num != qb[i % 2]->qp_num ||
		    wc.src_qp != qa->qp_num) {
			ok = false;
			TH_LOG("datagram %d: %s, opcode %d, %u bytes, flags %#x, wr_id %lu, qp %#x (want %#x), src_qp %#x",
			       i, ibv_wc_status_str(wc.status), wc.opcode,
			       wc.byte_len, wc.wc_flags, (unsigned long)wc.wr_id,
			       wc.qp_num, qb[i % 2]->qp_num, wc.src_qp);
		} else {
			uint8_t *p = B.buf + RX_OFF + i * (GRH + MSG) + GRH;
			int k;

			for (k = 0; k < MSG; k++)
				if (p[k] != 0x60 + i)
					break;
			if (k < MSG) {
				ok = false;
				TH_LOG("datagram %d: byte %d is %#x, not %#x", i, k,
				       p[k], 0x60 + i);
			}
		}
	}
	EXPECT_TRUE(ok && got == 4)
	   TH_LOG("4 datagrams to 2 UD QPs on one SRQ: received in SRQ order, with the GRH, on the right QP, intact (%d)",
	   got);

	/* a datagram longer than the SRQ buffer, then one that fits */
	ret = srq_post(srq, 10, RX_OFF, GRH + 64);
	if (!ret)
		ret = srq_post(srq, 11, RX_OFF + 4096, GRH + MSG);
	if (!ret)
		ret = send_ud(qa, ah, qb[0]->qp_num, 210, 0, MSG);
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!ret && !wait_wc(B.cq, &wc) && wc.wr_id == 10 &&
	   wc.status == IBV_WC_LOC_LEN_ERR)
	   TH_LOG("a %d-byte datagram into a %d-byte SRQ buffer: IBV_WC_LOC_LEN_ERR (%s)",
	   MSG, GRH + 64, ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	ret = send_ud(qa, ah, qb[0]->qp_num, 211, 0, MSG);
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!ret && !wait_wc(B.cq, &wc) && wc.wr_id == 11 &&
	   wc.status == IBV_WC_SUCCESS && wc.byte_len == GRH + MSG)
	   TH_LOG("and the UD QP goes on: the next datagram is received (%s)",
	   ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	if (ah)
		ibv_destroy_ah(ah);
	destroy_qps(&qa, 1);
	destroy_qps(qb, 2);
	EXPECT_TRUE(ibv_destroy_srq(srq) == 0) TH_LOG("destroy the SRQ once its QPs are gone");
	while (ibv_poll_cq(A.cq, 1, &wc) > 0 || ibv_poll_cq(B.cq, 1, &wc) > 0)
		;
}

/* A context closed with an SRQ and a QP on it open, destroyed after. */
TEST_F_TIMEOUT(srq, close_first, 120)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_context *ctx;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_qp *qp;
	int r[4];

	ctx = open_device_by_name(B.name);
	pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	cq = ctx ? ibv_create_cq(ctx, 8, NULL, NULL, 0) : NULL;
	srq = pd ? ibv_create_srq(pd, &sa) : NULL;
	ia.send_cq = ia.recv_cq = cq;
	ia.srq = srq;
	qp = srq && cq ? ibv_create_qp(pd, &ia) : NULL;
	ASSERT_NE(NULL, qp) TH_LOG("PD, CQ, SRQ and a QP on it on a second context: %s",
				   strerror(errno));
	EXPECT_TRUE(ibv_close_device(ctx) == 0)
	   TH_LOG("close the context with an SRQ and its QP open");
	r[0] = ibv_destroy_qp(qp);
	r[1] = ibv_destroy_srq(srq);
	r[2] = ibv_destroy_cq(cq);
	r[3] = ibv_dealloc_pd(pd);
	EXPECT_TRUE(!r[0] && !r[1] && !r[2] && !r[3])
	   TH_LOG("then destroying them returns 0 (QP %d, SRQ %d, CQ %d, PD %d)",
	   r[0], r[1], r[2], r[3]);
}

/* --exit-live: an SRQ with QPs and posted WQEs, then exit. */
static int exit_live(const char *name, int gid)
{
	struct ibv_qp *qb[NQP];
	struct ibv_srq *srq;
	struct ibv_srq_attr at = { .srq_limit = 2 };
	int i;

	if (open_dev(&B, name, gid))
		return 1;
	srq = mk_srq(&B, 64, 1, 0);
	if (!srq)
		return 1;
	for (i = 0; i < NQP; i++)
		if (!(qb[i] = mk_qp(&B, srq)))
			return 1;
	for (i = 0; i < 8; i++)
		srq_post(srq, i, RX_OFF + i * MSG, MSG);
	if (ibv_modify_srq(srq, &at, IBV_SRQ_LIMIT))
		return 1;
	printf("ready\n");
	fflush(stdout);
	_exit(0);
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc == 4 && !strcmp(argv[1], "--exit-live"))
		return exit_live(argv[2], atoi(argv[3]));
	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	return test_harness_run(1, run);
}
