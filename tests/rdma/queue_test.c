// SPDX-License-Identifier: GPL-2.0
/*
 * queue_test - CQs and SRQs on gaudi_ib, two devices in one process (the
 * setting of mwutil.h: A the target, B the writer):
 *  - a CQ resized keeps its completions, in order; one too small for them
 *    is refused (EINVAL) and loses nothing; the new ring takes more;
 *  - an SRQ resized likewise keeps its posted receives, first, and is
 *    refused below them;
 *  - a QP moved to RESET, or destroyed, takes its own completions out of
 *    the CQ and no other QP's (as mlx4 and mlx5 do: libfabric's rxm reads
 *    a shared CQ after freeing a connection's endpoint).
 * A kselftest (kselftest_harness.h): one test per rule, each in its own
 * process with both devices opened anew; output KTAP.  Split from
 * mw_test.c.
 *
 * usage: queue_test DEV_A GID_A DEV_B GID_B
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "mwutil.h"

/*
 * Resize a CQ holding 3 completions: too small is EINVAL (and loses
 * nothing), larger keeps them in order, and the new ring takes more.
 */
static void test_resize_cq(struct __test_metadata *_metadata)
{
	struct ibv_cq *cq = ibv_create_cq(B.ctx, 4, NULL, NULL, 0);
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL);
	struct ibv_qp *q = cq ? new_qp(B.pd, cq) : NULL;
	struct ibv_wc wc[8];
	int i, n = 0, ret;
	double end;

	ASSERT_FALSE(!cq || !mr || !q || fresh_qa() || to_rts(&B, q, &A, qa->qp_num) ||
	    to_rts(&A, qa, &B, q->qp_num))
		TH_LOG("resize CQ: set up");
	EXPECT_TRUE(cq->cqe >= 4)
		TH_LOG("CQ of %d entries", cq->cqe);
	memset(abuf, 0xee, LEN);
	for (i = 0; i < 3; i++) {
		struct ibv_sge sg = { (uintptr_t)bbuf + 64 * i, 64, bmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 100 + i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)abuf + 64 * i, mr->rkey },
		}, *bad;

		ibv_post_send(q, &wr, &bad);
	}
	/* the last WRITE landed; its ACK (the CQE) follows within ms */
	end = tu_now() + 10;
	while (memcmp(abuf + 128, bbuf + 128, 64) && tu_now() < end)
		usleep(1000);
	usleep(500000);
	ret = ibv_resize_cq(cq, 1);
	EXPECT_TRUE(ret == EINVAL)
		TH_LOG("shrinking it below its 3 completions: EINVAL (%d)",
	   ret);
	ret = ibv_resize_cq(cq, 0);
	EXPECT_TRUE(ret == EINVAL)
		TH_LOG("resize to 0 entries: EINVAL (%d)", ret);
	ret = ibv_resize_cq(cq, 1 << 24);
	EXPECT_TRUE(ret == EINVAL)
		TH_LOG("resize past max_cqe: EINVAL (%d)", ret);
	ret = ibv_resize_cq(cq, 16);
	n = ibv_poll_cq(cq, 8, wc);
	EXPECT_TRUE(!ret && cq->cqe >= 16 && n == 3 && wc[0].wr_id == 100 &&
	   wc[1].wr_id == 101 && wc[2].wr_id == 102 &&
	   wc[2].status == IBV_WC_SUCCESS)
		TH_LOG("grown to %d entries, the 3 completions kept in order (%d, %d polled)",
	   cq->cqe, ret, n);
	for (i = 0; i < 6; i++) {
		struct ibv_sge sg = { (uintptr_t)bbuf, 64, bmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 200 + i, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)abuf, mr->rkey },
		}, *bad;

		ibv_post_send(q, &wr, &bad);
	}
	n = 0;
	end = tu_now() + 10;
	while (n < 6 && tu_now() < end) {
		ret = ibv_poll_cq(cq, 8, wc);
		n += ret > 0 ? ret : 0;
		usleep(100);
	}
	EXPECT_TRUE(n == 6)
		TH_LOG("6 more completions through the new ring (%d)", n);
	ret = ibv_resize_cq(cq, 2);
	EXPECT_TRUE(!ret && cq->cqe >= 2 && cq->cqe < 16)
		TH_LOG("an empty CQ shrinks to %d entries (%d)", cq->cqe, ret);
	if (q)
		ibv_destroy_qp(q);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
	reconnect();
}

/* Post receive @id of 64 bytes at @off of A's buffer to @srq. */
static int srq_post(struct ibv_srq *srq, struct ibv_mr *mr, uint64_t id,
		    size_t off)
{
	struct ibv_sge sg = { (uintptr_t)abuf + off, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/*
 * Resize an SRQ holding 3 receives: below them is EINVAL, larger keeps
 * them first, and the new ring takes more than the old one could.
 */
static void test_resize_srq(struct __test_metadata *_metadata)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL);
	struct ibv_srq *srq = ibv_create_srq(A.pd, &sa);
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .srq = srq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_qp *q = srq ? ibv_create_qp(A.pd, &ia) : NULL;
	struct ibv_device_attr da = {};
	struct ibv_srq_attr at = {};
	int i, n = 0, order = 1, ret;
	struct ibv_wc wc;
	double end;

	ASSERT_FALSE(!mr || !srq || !q || fresh_qb() || to_rts(&A, q, &B, qb->qp_num) ||
	    to_rts(&B, qb, &A, q->qp_num))
		TH_LOG("resize SRQ: set up");
	/* what earlier steps left on A's CQ */
	while (ibv_poll_cq(A.cq, 1, &wc) > 0)
		;
	EXPECT_TRUE(!ibv_query_device(A.ctx, &da) &&
	   (da.device_cap_flags & IBV_DEVICE_SRQ_RESIZE))
		TH_LOG("the device reports SRQ resize");
	for (i = 0; i < 3; i++)
		srq_post(srq, mr, 300 + i, 64 * i);
	at.max_wr = 2;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	EXPECT_TRUE(ret == EINVAL)
		TH_LOG("shrinking it below its 3 receives: EINVAL (%d)", ret);
	at.max_wr = 1 << 20;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	EXPECT_TRUE(ret == EINVAL)
		TH_LOG("resize past max_srq_wr: EINVAL (%d)", ret);
	at.max_wr = 16;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	memset(&at, 0, sizeof(at));
	if (!ret)
		ret = ibv_query_srq(srq, &at);
	EXPECT_TRUE(!ret && at.max_wr >= 16)
		TH_LOG("grown to %u receives (%d)", at.max_wr, ret);
	for (i = 3; i < 13; i++)
		ret |= srq_post(srq, mr, 300 + i, 64 * i);
	EXPECT_TRUE(!ret)
		TH_LOG("13 receives posted, more than the old ring held");
	for (i = 0; i < 13; i++) {
		struct ibv_sge sg = { (uintptr_t)bbuf, 16, bmr->lkey };
		struct ibv_send_wr wr = { .wr_id = 400 + i, .sg_list = &sg,
					  .num_sge = 1, .opcode = IBV_WR_SEND },
				   *bad;

		ibv_post_send(qb, &wr, &bad);
	}
	end = tu_now() + 10;
	while (n < 13 && tu_now() < end) {
		if (ibv_poll_cq(A.cq, 1, &wc) != 1) {
			usleep(100);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id != 300u + n)
			order = 0;
		n++;
	}
	EXPECT_TRUE(n == 13 && order)
		TH_LOG("13 SENDs take the 3 moved receives first, then the new ones, in order (%d)",
	   n);
	at.max_wr = 2;
	ret = ibv_modify_srq(srq, &at, IBV_SRQ_MAX_WR);
	EXPECT_TRUE(!ret)
		TH_LOG("the empty SRQ shrinks (%d)", ret);
	if (q)
		ibv_destroy_qp(q);
	if (srq)
		ibv_destroy_srq(srq);
	if (mr)
		ibv_dereg_mr(mr);
	reconnect();
}

/* @qp (UC) to RTS towards @dqpn: UC takes no timeouts, retries or READs. */
/*
 * A QP moved to RESET or destroyed takes its completions out of the CQ
 * (as mlx4 and mlx5 do; rdma-core's rereg tests restart QPs that way, and
 * libfabric's rxm drains a shared CQ after freeing a connection's
 * endpoint), and only its own: two QPs with a flushed receive each, one
 * reset or destroyed.
 */
static void test_gone_cq(struct __test_metadata *_metadata, bool destroy)
{
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL);
	struct ibv_qp *q[2] = { new_qp(A.pd, A.cq), new_qp(A.pd, A.cq) };
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_sge sg = { (uintptr_t)abuf, 64, mr ? mr->lkey : 0 };
	struct ibv_recv_wr rwr = { .wr_id = 700, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	struct ibv_wc wc[4];
	int i, n = 0;

	while (ibv_poll_cq(A.cq, 1, wc) > 0)
		;
	for (i = 0; i < 2 && mr && q[0] && q[1]; i++) {
		at.qp_state = IBV_QPS_INIT;
		ibv_modify_qp(q[i], &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			      IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
		ibv_post_recv(q[i], &rwr, &bad);
		at.qp_state = IBV_QPS_ERR;
		ibv_modify_qp(q[i], &at, IBV_QP_STATE);
	}
	usleep(200000);
	at.qp_state = IBV_QPS_RESET;
	if (q[0] && destroy && !ibv_destroy_qp(q[0])) {
		q[0] = NULL;
		n = ibv_poll_cq(A.cq, 4, wc);
	} else if (q[0] && !destroy && !ibv_modify_qp(q[0], &at, IBV_QP_STATE)) {
		n = ibv_poll_cq(A.cq, 4, wc);
	}
	EXPECT_TRUE(q[1] && n == 1 && wc[0].qp_num == q[1]->qp_num &&
	   wc[0].status == IBV_WC_WR_FLUSH_ERR)
		TH_LOG("%s drops the QP's own flushed completion from the CQ, not another QP's (%d left)",
	   destroy ? "destroy" : "RESET", n);
	for (i = 0; i < 2; i++)
		if (q[i])
			ibv_destroy_qp(q[i]);
	if (mr)
		ibv_dereg_mr(mr);
}

MW_FIXTURE(queue);

TEST_F_TIMEOUT(queue, resize_cq, 120)
{
	test_resize_cq(_metadata);
}

TEST_F_TIMEOUT(queue, resize_srq, 120)
{
	test_resize_srq(_metadata);
}

TEST_F_TIMEOUT(queue, reset_cq, 120)
{
	test_gone_cq(_metadata, false);
}

TEST_F_TIMEOUT(queue, destroy_cq, 120)
{
	test_gone_cq(_metadata, true);
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	return test_harness_run(1, run);
}
