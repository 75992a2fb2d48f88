// SPDX-License-Identifier: GPL-2.0
/*
 * ud_qpex_test - the extended QP and CQ APIs on user UD QPs of gaudi_N,
 * two devices in one process, one rule a test:
 *   qpex_rdma_read_refused  a UD QP asking for RDMA_READ is refused
 *   qpex_send_imm           SEND with immediate through ibv_wr_*, the UD
 *                           address set before the data
 *   qpex_batch              an unsignaled inline SEND and a SEND in one
 *                           batch, the address set after the data
 *   qpex_bad_batch          a batch with one bad work request (an
 *                           operation not enabled, no UD address, one SGE
 *                           or one inline byte too many) is refused whole
 *                           and nothing of it reaches the wire
 *   cq_ex_timestamp_refused completion timestamps: EOPNOTSUPP
 *   cq_ex_poll              a UD receive polled with start/next/end_poll
 * A kselftest (kselftest_harness.h, the fixture of udutil.h); output KTAP.
 *
 * usage: ud_qpex_test DEV_A GID_A DEV_B GID_B   (as ud_test)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"
#include "udutil.h"

/* An extended UD QP on A, with the send operations @ops (0 or -errno). */
static int qpex_create(struct uqp *u, uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = ud_max_sge, .max_recv_sge = 4,
			 .max_inline_data = ud_max_inline },
		.qp_type = IBV_QPT_UD,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = A.pd,
		.send_ops_flags = ops,
	};

	memset(u, 0, sizeof(*u));
	u->d = &A;
	u->scq = ibv_create_cq(A.ctx, 64, NULL, NULL, 0);
	u->rcq = ibv_create_cq(A.ctx, 64, NULL, NULL, 0);
	if (!u->scq || !u->rcq)
		return -errno;
	ia.send_cq = u->scq;
	ia.recv_cq = u->rcq;
	errno = 0;
	u->qp = ibv_create_qp_ex(A.ctx, &ia);
	return u->qp ? 0 : -errno;
}

/*
 * self->a: an extended UD QP on A (SEND, SEND with immediate) in RTS;
 * self->b: a UD QP on B in RTS; @ah: an AH from A to B.
 */
#define QPEX_UP(ah) do {						\
	int _ret = qpex_create(&self->a, IBV_QP_EX_WITH_SEND |		\
					 IBV_QP_EX_WITH_SEND_WITH_IMM);	\
									\
	ASSERT_EQ(0, _ret) TH_LOG("extended UD QP on %s: %s", A.name,	\
				  strerror(-_ret));			\
	ASSERT_EQ(0, ud_rts(&self->a, QKEY))				\
		TH_LOG("the extended UD QP to RTS");			\
	ASSERT_EQ(0, ud_up(_metadata, &self->b, &B, "receiver"));	\
	(ah) = mk_ah(&A, &B.gid4, A.gid4_index);			\
	ASSERT_NE(NULL, (ah)) TH_LOG("an AH to %s: %s", B.name,	\
				     strerror(errno));			\
} while (0)

TEST_F_TIMEOUT(ud, qpex_rdma_read_refused, 120)
{
	int ret;

	ret = qpex_create(&self->a, IBV_QP_EX_WITH_SEND |
				    IBV_QP_EX_WITH_RDMA_READ);
	EXPECT_EQ(-EOPNOTSUPP, ret)
		TH_LOG("a UD QP with RDMA_READ in send_ops_flags: EOPNOTSUPP (%s)",
		       ret ? strerror(-ret) : "created");
}

TEST_F_TIMEOUT(ud, qpex_send_imm, 120)
{
	uint8_t *tx = A.buf + TX_OFF, *rx = B.buf + RX_OFF;
	struct uqp *r = &self->b;
	struct ibv_wc wc = {};
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	int ret;

	QPEX_UP(ah);
	x = ibv_qp_to_qp_ex(self->a.qp);
	fill(tx, 1000, 3);
	ret = post_rx(r, GRH + r->d->mtu, 0x71);
	ASSERT_EQ(0, ret) TH_LOG("a receive on %s: %s", B.name, strerror(ret));
	ibv_wr_start(x);
	x->wr_id = 0x61;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htonl(0x1234abcd));
	ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx, 1000);
	ret = ibv_wr_complete(x);
	EXPECT_TRUE(!ret && !wait_wc(self->a.scq, &wc, 10) &&
		    wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x61 &&
		    wc.opcode == IBV_WC_SEND)
		TH_LOG("wr_send_imm of 1000 B via wr_set_ud_addr completes (%s)",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!ret && !wait_wc(r->rcq, &wc, 10) &&
		    wc.status == IBV_WC_SUCCESS && wc.wr_id == 0x71 &&
		    wc.byte_len == GRH + 1000 &&
		    (wc.wc_flags & IBV_WC_WITH_IMM) &&
		    ntohl(wc.imm_data) == 0x1234abcd &&
		    wc.src_qp == self->a.qp->qp_num &&
		    !memcmp(rx + GRH, tx, 1000))
		TH_LOG("and arrives whole, with its immediate and src_qp (%s, %u B)",
		       ibv_wc_status_str(wc.status), wc.byte_len);
	ibv_destroy_ah(ah);
}

TEST_F_TIMEOUT(ud, qpex_batch, 120)
{
	uint8_t *tx = A.buf + TX_OFF, *rx = B.buf + RX_OFF;
	struct uqp *r = &self->b;
	struct ibv_wc wc = {};
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	int ret;

	QPEX_UP(ah);
	x = ibv_qp_to_qp_ex(self->a.qp);
	fill(tx, 200, 9);
	ret = post_rx(r, GRH + r->d->mtu, 0x72) ?: post_rx_at(r, 16384, 0x73);
	ASSERT_EQ(0, ret) TH_LOG("two receives on %s: %s", B.name, strerror(ret));
	ibv_wr_start(x);
	x->wr_id = 0x62;
	x->wr_flags = 0;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, tx, 64);
	ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
	x->wr_id = 0x63;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx + 100, 10);
	memset(tx, 0, 64);	/* inline: already copied */
	ret = ibv_wr_complete(x);
	fill(tx, 64, 9);
	EXPECT_TRUE(!ret && !wait_wc(self->a.scq, &wc, 10) && wc.wr_id == 0x63 &&
		    wc.status == IBV_WC_SUCCESS)
		TH_LOG("the batch's one signaled SEND completes, alone (%s)",
		       ret ? strerror(ret) : ibv_wc_status_str(wc.status));
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!wait_wc(r->rcq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
		    wc.wr_id == 0x72 && wc.byte_len == GRH + 64 &&
		    !memcmp(rx + GRH, tx, 64))
		TH_LOG("the inline SEND, address set after the data, arrives first (%s, %u B)",
		       ibv_wc_status_str(wc.status), wc.byte_len);
	memset(&wc, 0, sizeof(wc));
	EXPECT_TRUE(!wait_wc(r->rcq, &wc, 10) && wc.status == IBV_WC_SUCCESS &&
		    wc.wr_id == 0x73 && wc.byte_len == GRH + 10 &&
		    !memcmp(rx + 16384 + GRH, tx + 100, 10))
		TH_LOG("then the SEND from an SGE (%s, %u B)",
		       ibv_wc_status_str(wc.status), wc.byte_len);
	ibv_destroy_ah(ah);
}

TEST_F_TIMEOUT(ud, qpex_bad_batch, 120)
{
	static const char *const what[] = {
		"RDMA_WRITE (not enabled)", "no UD address",
		"max_send_sge + 1 SGEs", "max_inline + 1 bytes inline",
	};
	uint8_t *tx = A.buf + TX_OFF;
	struct ibv_sge sg[UD_MAX_SGE + 1];
	struct uqp *r = &self->b;
	struct ibv_wc wc = {};
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	unsigned int i;
	int ret;

	QPEX_UP(ah);
	x = ibv_qp_to_qp_ex(self->a.qp);
	for (i = 0; i <= UD_MAX_SGE; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)tx, 1, A.mr->lkey };
	ret = post_rx(r, GRH + r->d->mtu, 0x74);
	ASSERT_EQ(0, ret) TH_LOG("a receive on %s: %s", B.name, strerror(ret));
	/* a good SEND, then the bad one */
	for (i = 0; i < 4; i++) {
		ibv_wr_start(x);
		x->wr_id = 0x80 + i;
		x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(x);
		ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
		ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx, 10);
		switch (i) {
		case 0:
			ibv_wr_rdma_write(x, 1, 0);
			ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx, 10);
			break;
		case 1:
			ibv_wr_send(x);
			ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx, 10);
			break;
		case 2:
			ibv_wr_send(x);
			ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
			ibv_wr_set_sge_list(x, ud_max_sge + 1, sg);
			break;
		case 3:
			ibv_wr_send(x);
			ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
			ibv_wr_set_inline_data(x, tx, ud_max_inline + 1);
			break;
		}
		ret = ibv_wr_complete(x);
		EXPECT_TRUE(ret == EINVAL && wait_wc(self->a.scq, &wc, 0.3))
			TH_LOG("a batch with %s refused whole (%s)", what[i],
			       strerror(ret));
	}
	/* none of them arrived: a good one takes the receive posted first */
	ibv_wr_start(x);
	x->wr_id = 0x90;
	ibv_wr_send(x);
	ibv_wr_set_ud_addr(x, ah, r->qp->qp_num, QKEY);
	ibv_wr_set_sge(x, A.mr->lkey, (uintptr_t)tx, 7);
	ret = ibv_wr_complete(x);
	EXPECT_TRUE(!ret && !wait_wc(self->a.scq, &wc, 10) && wc.wr_id == 0x90 &&
		    !wait_wc(r->rcq, &wc, 10) && wc.wr_id == 0x74 &&
		    wc.byte_len == GRH + 7 && wait_wc(r->rcq, &wc, 0.3))
		TH_LOG("no refused send was received, the next one is (%s)",
		       strerror(ret));
	ibv_destroy_ah(ah);
}

TEST_F_TIMEOUT(ud, cq_ex_timestamp_refused, 120)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_cq_ex *ts;

	errno = 0;
	ts = ibv_create_cq_ex(B.ctx, &ca);
	EXPECT_TRUE(!ts && errno == EOPNOTSUPP)
		TH_LOG("extended CQ with completion timestamps: EOPNOTSUPP (%s)",
		       ts ? "created" : strerror(errno));
	if (ts)
		ibv_destroy_cq(ibv_cq_ex_to_cq(ts));
}

/*
 * A UD receive polled through start_poll/next_poll/end_poll, with the
 * standard fields of an extended CQ.
 */
TEST_F_TIMEOUT(ud, cq_ex_poll, 120)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
	};
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD,
	};
	struct ibv_poll_cq_attr pa = {};
	struct uqp *s = &self->a, *r = &self->b, x = {};
	struct ibv_send_wr *bad;
	struct ibv_cq_ex *cq;
	struct ibv_ah *ah;
	int ret, n = 0;
	bool good;

	UD_PAIR_UP();
	cq = ibv_create_cq_ex(B.ctx, &ca);
	ASSERT_NE(NULL, cq) TH_LOG("extended CQ with the standard fields: %s",
				   strerror(errno));
	x.d = &B;
	ia.send_cq = r->scq;
	ia.recv_cq = ibv_cq_ex_to_cq(cq);
	x.qp = ibv_create_qp(B.pd, &ia);
	ah = mk_ah(&A, &B.gid4, A.gid4_index);
	ret = !x.qp || !ah ? -1 : ud_rts(&x, QKEY);
	if (!ret)
		ret = post_rx(&x, GRH + 64, 0x81);
	if (!ret)
		ret = post_ud(s, ah, x.qp->qp_num, QKEY, IBV_WR_SEND_WITH_IMM, 20,
			      VIA_SGE, 0x1234, 0x82, &bad);
	ASSERT_EQ(0, ret) TH_LOG("a UD QP with an extended receive CQ, a receive and a send to it: %s",
				 ret < 0 ? "QP or AH not created" : strerror(ret));
	ASSERT_EQ(0, wait_wc(s->scq, &(struct ibv_wc){}, 10))
		TH_LOG("the send's completion");
	for (int i = 0; i < 10000; i++) {
		ret = ibv_start_poll(cq, &pa);
		if (ret != ENOENT)
			break;
		usleep(1000);
	}
	good = !ret && cq->status == IBV_WC_SUCCESS && cq->wr_id == 0x81 &&
	       ibv_wc_read_opcode(cq) == IBV_WC_RECV &&
	       ibv_wc_read_byte_len(cq) == GRH + 20 &&
	       ntohl(ibv_wc_read_imm_data(cq)) == 0x1234 &&
	       ibv_wc_read_qp_num(cq) == x.qp->qp_num &&
	       ibv_wc_read_src_qp(cq) == s->qp->qp_num &&
	       (ibv_wc_read_wc_flags(cq) & (IBV_WC_GRH | IBV_WC_WITH_IMM)) ==
	       (IBV_WC_GRH | IBV_WC_WITH_IMM) &&
	       ibv_wc_read_slid(cq) == 0 &&
	       ibv_wc_read_sl(cq) == roce_sl(&A.gid4);
	if (!ret) {
		n = 1;
		while (ibv_next_poll(cq) == 0)
			n++;
		ibv_end_poll(cq);
	}
	EXPECT_TRUE(good && n == 1)
		TH_LOG("start_poll/next_poll/end_poll: the UD receive with GRH, src_qp and immediate (%s, %d)",
		       ret ? strerror(ret) : "polled", n);
	EXPECT_TRUE(ibv_start_poll(cq, &pa) == ENOENT)
		TH_LOG("then the extended CQ is empty");
	ibv_destroy_ah(ah);
	ibv_destroy_qp(x.qp);
	EXPECT_TRUE(ibv_destroy_cq(ibv_cq_ex_to_cq(cq)) == 0)
		TH_LOG("destroy the extended CQ");
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };
	bool wqe128;
	int ret;

	ret = ud_args(argc, argv, &wqe128);
	if (ret)
		return ret;
	return test_harness_run(1, run);
}
