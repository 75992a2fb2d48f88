// SPDX-License-Identifier: GPL-2.0
/*
 * qpex_test - extended QPs: the work request API (ibv_wr_*) on RC QPs
 * between two gaudi devices in one process.  The operations the engine
 * lacks are refused at create; every RC operation (WRITE from several
 * SGEs, WRITE with immediate, inline SEND copied when set, SEND with
 * immediate, READ) lands where it should; a batch of work requests rings
 * one doorbell; wr_abort, and any bad work request in a batch (too many
 * SGEs, inline data too long, an operation not enabled, a UD address on
 * an RC QP, more than the send queue holds), drop the whole batch:
 * nothing reaches the wire, and the QP posts again afterwards.  A
 * kselftest (kselftest_harness.h, the two-device fixture of pairutil.h);
 * output KTAP.  Split from verbs_test.c, which keeps the plain verbs.
 *
 * usage: qpex_test DEV_A GID_A DEV_B GID_B
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
#include "pairutil.h"

#define BUF (256 * 1024)

/* The RC operations every extended QP of the test is created with. */
#define QPX_RC_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_WRITE | \
		    IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
		    IBV_QP_EX_WITH_RDMA_READ)

static struct ibv_qp *mk_qpx(struct tu_side *s, enum ibv_qp_type type,
			     uint64_t ops)
{
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = type == IBV_QPT_UD ? 1 : 6,
			 .max_recv_sge = 6, .max_inline_data = 64 },
		.qp_type = type,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = s->pd, .send_ops_flags = ops,
	};

	errno = 0;
	return ibv_create_qp_ex(s->ctx, &ia);
}

static struct ibv_qp *new_qpx(struct tu_side *s)
{
	return mk_qpx(s, IBV_QPT_RC, QPX_RC_OPS);
}

/* An AH from A to B's GID (a UD address for an RC QP's bad request). */
static struct ibv_ah *ah_to_b(void)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = B.gid, .sgid_index = A.gid_index,
			 .hop_limit = 64 },
	};

	return ibv_create_ah(A.pd, &a);
}

/* No completion on @cq for 300 ms. */
static bool cq_quiet(struct ibv_cq *cq)
{
	double end = tu_now() + 0.3;
	struct ibv_wc wc;

	do {
		if (ibv_poll_cq(cq, 1, &wc))
			return false;
		usleep(1000);
	} while (tu_now() < end);
	return true;
}

/* The send completion @id (and, @recv, B's receive completion). */
static bool qpx_done(uint64_t id, enum ibv_wc_opcode op, struct ibv_wc *rwc)
{
	struct ibv_wc wc = {};

	if (wait_wc(A.cq, &wc, 10) || wc.status != IBV_WC_SUCCESS ||
	    wc.wr_id != id || wc.opcode != op) {
		printf("# send completion: status %s, wr_id %#llx (want %#llx), opcode %d (want %d)\n",
		       ibv_wc_status_str(wc.status),
		       (unsigned long long)wc.wr_id, (unsigned long long)id,
		       wc.opcode, op);
		return false;
	}
	if (rwc && (wait_wc(B.cq, rwc, 10) || rwc->status != IBV_WC_SUCCESS)) {
		printf("# receive completion: status %s\n",
		       ibv_wc_status_str(rwc->status));
		return false;
	}
	return true;
}

/* One signaled work request with one SGE, in a batch of its own. */
static int qpx_post1(struct ibv_qp_ex *x, uint64_t id, enum ibv_wr_opcode op,
		     uint32_t rkey, void *raddr, uint32_t imm,
		     struct ibv_mr *mr, void *buf, uint32_t len)
{
	ibv_wr_start(x);
	x->wr_id = id;
	x->wr_flags = IBV_SEND_SIGNALED;
	switch (op) {
	case IBV_WR_RDMA_WRITE:
		ibv_wr_rdma_write(x, rkey, (uintptr_t)raddr);
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		ibv_wr_rdma_write_imm(x, rkey, (uintptr_t)raddr, htonl(imm));
		break;
	case IBV_WR_RDMA_READ:
		ibv_wr_rdma_read(x, rkey, (uintptr_t)raddr);
		break;
	case IBV_WR_SEND_WITH_IMM:
		ibv_wr_send_imm(x, htonl(imm));
		break;
	default:
		ibv_wr_send(x);
		break;
	}
	ibv_wr_set_sge(x, mr->lkey, (uintptr_t)buf, len);
	return ibv_wr_complete(x);
}

PAIR_FIXTURE(qpex);

TEST_F_TIMEOUT(qpex, rc, 120)
{
	static const struct { uint64_t op; const char *name; } lacks[] = {
		{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, "ATOMIC_CMP_AND_SWP" },
		{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, "ATOMIC_FETCH_AND_ADD" },
		{ IBV_QP_EX_WITH_TSO, "TSO" },
	};
	static const char *const bad_name[] = {
		"7 SGEs", "97 bytes inline", "an atomic (not enabled)",
		"a UD address on an RC QP", "4096 WRs (more than the SQ holds)",
	};
	uint8_t *a = aligned_alloc(4096, BUF), *b = aligned_alloc(4096, BUF);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, BUF, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, BUF, ACC_ALL);
	struct ibv_sge sg[7], rs;
	struct ibv_data_buf bufs[2];
	struct ibv_qp_ex *x, *x2;
	uint8_t sent[80];
	struct ibv_wc wc = {};
	struct ibv_qp *q;
	struct ibv_ah *ah;
	unsigned int i;
	int ret;

	for (i = 0; i < sizeof(lacks) / sizeof(lacks[0]); i++) {
		q = mk_qpx(&A, IBV_QPT_RC, QPX_RC_OPS | lacks[i].op);
		EXPECT_TRUE(!q && errno == EOPNOTSUPP)
		   TH_LOG("qpex: RC QP with send op %s refused (%s)", lacks[i].name,
		   q ? "created" : strerror(errno));
		if (q)
			ibv_destroy_qp(q);
	}
	q = mk_qpx(&A, IBV_QPT_UD, IBV_QP_EX_WITH_SEND |
		   IBV_QP_EX_WITH_RDMA_WRITE);
	EXPECT_TRUE(!q && errno == EOPNOTSUPP) TH_LOG("qpex: UD QP with RDMA_WRITE refused (%s)",
	   q ? "created" : strerror(errno));
	if (q)
		ibv_destroy_qp(q);
	q = new_qp(&A);
	EXPECT_TRUE(q && !ibv_qp_to_qp_ex(q))
	   TH_LOG("qpex: a QP from ibv_create_qp() has no ibv_qp_ex");
	if (q)
		ibv_destroy_qp(q);

	ASSERT_TRUE(ma && mb) TH_LOG("qpex: register MRs: %s", strerror(errno));
	ASSERT_TRUE(connect_pair_with(new_qpx, &A.qp, &B.qp))
		TH_LOG("qpex: connect RC QPs with send_ops_flags (%s)",
		       strerror(errno));
	x = ibv_qp_to_qp_ex(A.qp);
	ASSERT_NE(NULL, x) TH_LOG("qpex: the QP made with send_ops_flags has an ibv_qp_ex");
	TH_LOG("qpex: connected RC QP %u <-> %u, created with send_ops_flags",
	       A.qp->qp_num, B.qp->qp_num);

	/* WRITE from 3 SGEs */
	fill(a, BUF, 11);
	memset(b, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 1000, ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a + 5000, 9000, ma->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)a + 20000, 30000, ma->lkey };
	ibv_wr_start(x);
	x->wr_id = 0x101;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b + 16);
	ibv_wr_set_sge_list(x, 3, sg);
	ret = ibv_wr_complete(x);
	EXPECT_TRUE(!ret && qpx_done(0x101, IBV_WC_RDMA_WRITE, NULL) &&
	   !memcmp(b + 16, a, 1000) && !memcmp(b + 1016, a + 5000, 9000) &&
	   !memcmp(b + 10016, a + 20000, 30000) && !b[15] && !b[40016])
	   TH_LOG("qpex: wr_rdma_write of 40000 B from 3 SGEs (%s)", strerror(ret));

	/* WRITE with immediate: consumes a receive on B */
	rs = (struct ibv_sge){ (uintptr_t)b + 200000, 4096, mb->lkey };
	tu_post_recv(B.qp, &rs, 1, 0x901);
	ret = qpx_post1(x, 0x102, IBV_WR_RDMA_WRITE_WITH_IMM, mb->rkey,
			b + 60000, 0xabcd1234, ma, a + 70000, 5000);
	EXPECT_TRUE(!ret && qpx_done(0x102, IBV_WC_RDMA_WRITE, &wc) &&
	   wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 0x901 &&
	   (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0xabcd1234 &&
	   !memcmp(b + 60000, a + 70000, 5000))
	   TH_LOG("qpex: wr_rdma_write_imm of 5000 B, immediate delivered (%s)",
	   strerror(ret));

	/* SEND inline (copied at the setter call), SEND with immediate */
	memset(b + 200000, 0, 8192);
	tu_post_recv(B.qp, &rs, 1, 0x902);
	ibv_wr_start(x);
	x->wr_id = 0x103;
	ibv_wr_send(x);
	ibv_wr_set_inline_data(x, a + 300, 80);
	memcpy(sent, a + 300, 80);	/* what was sent */
	memset(a + 300, 0xee, 80);
	ret = ibv_wr_complete(x);
	EXPECT_TRUE(!ret && qpx_done(0x103, IBV_WC_SEND, &wc) &&
	   wc.opcode == IBV_WC_RECV && wc.byte_len == 80 &&
	   !memcmp(b + 200000, sent, 80) && !b[200080])
	   TH_LOG("qpex: wr_send of 80 B inline, copied when set (%s)",
	   strerror(ret));
	fill(a, BUF, 11);
	tu_post_recv(B.qp, &rs, 1, 0x903);
	ret = qpx_post1(x, 0x104, IBV_WR_SEND_WITH_IMM, 0, NULL, 0x5151, ma,
			a + 1234, 3000);
	EXPECT_TRUE(!ret && qpx_done(0x104, IBV_WC_SEND, &wc) &&
	   wc.opcode == IBV_WC_RECV && wc.byte_len == 3000 &&
	   (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0x5151 &&
	   !memcmp(b + 200000, a + 1234, 3000))
	   TH_LOG("qpex: wr_send_imm of 3000 B (%s)", strerror(ret));

	/* READ */
	fill(b, 65536, 77);
	memset(a + 100000, 0, 30000);
	ret = qpx_post1(x, 0x105, IBV_WR_RDMA_READ, mb->rkey, b + 1000, 0, ma,
			a + 100000, 20000);
	EXPECT_TRUE(!ret && qpx_done(0x105, IBV_WC_RDMA_READ, NULL) &&
	   !memcmp(a + 100000, b + 1000, 20000) && !a[120000])
	   TH_LOG("qpex: wr_rdma_read of 20000 B (%s)", strerror(ret));

	/* a batch: unsignaled WRITE, WRITE, SEND of an inline list, READ */
	fill(a, BUF, 11);
	memset(b, 0, 65536);
	memset(b + 200000, 0, 4096);
	fill(b + 8192, 4000, 99);
	tu_post_recv(B.qp, &rs, 1, 0x904);
	bufs[0] = (struct ibv_data_buf){ a + 500, 30 };
	bufs[1] = (struct ibv_data_buf){ a + 900, 40 };
	sg[0] = (struct ibv_sge){ (uintptr_t)a + 2000, 100, ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a + 3000, 200, ma->lkey };
	ibv_wr_start(x);
	x->wr_id = 0x201;
	x->wr_flags = 0;
	ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b);
	ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 1000);
	x->wr_id = 0x202;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b + 4096);
	ibv_wr_set_sge_list(x, 2, sg);
	x->wr_id = 0x203;
	ibv_wr_send(x);
	ibv_wr_set_inline_data_list(x, 2, bufs);
	x->wr_id = 0x204;
	ibv_wr_rdma_read(x, mb->rkey, (uintptr_t)b + 8192);
	ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a + 150000, 4000);
	ret = ibv_wr_complete(x);
	EXPECT_TRUE(!ret && qpx_done(0x202, IBV_WC_RDMA_WRITE, NULL) &&
	   qpx_done(0x203, IBV_WC_SEND, &wc) &&
	   qpx_done(0x204, IBV_WC_RDMA_READ, NULL) &&
	   wc.wr_id == 0x904 && wc.byte_len == 70 &&
	   !memcmp(b, a, 1000) && !memcmp(b + 4096, a + 2000, 100) &&
	   !memcmp(b + 4196, a + 3000, 200) &&
	   !memcmp(b + 200000, a + 500, 30) &&
	   !memcmp(b + 200030, a + 900, 40) &&
	   !memcmp(a + 150000, b + 8192, 4000) && cq_quiet(A.cq))
	   TH_LOG("qpex: a batch of 4 WRs (unsignaled WRITE, WRITE, inline SEND list, READ) in one wr_complete (%s)",
	   strerror(ret));

	/* wr_abort discards what was built since wr_start */
	memset(b, 0, 8192);
	ibv_wr_start(x);
	x->wr_id = 0x301;
	ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b);
	ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 1000);
	ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b + 1000);
	ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 1000);
	ibv_wr_abort(x);
	ret = qpx_post1(x, 0x302, IBV_WR_RDMA_WRITE, mb->rkey, b + 4000, 0, ma,
			a, 1000);
	EXPECT_TRUE(!ret && qpx_done(0x302, IBV_WC_RDMA_WRITE, NULL) &&
	   !memcmp(b + 4000, a, 1000) && !b[0] && !b[1999] && cq_quiet(A.cq))
	   TH_LOG("qpex: wr_abort discards its batch, the next one runs (%s)",
	   strerror(ret));

	/*
	 * Bad input: a good WRITE, then a bad work request, in one batch:
	 * wr_complete fails and neither reaches the wire.
	 */
	ah = ah_to_b();
	for (i = 0; i < 7; i++)
		sg[i] = (struct ibv_sge){ (uintptr_t)a + 100 * i, 10, ma->lkey };
	for (i = 0; i < sizeof(bad_name) / sizeof(bad_name[0]); i++) {
		int k;

		memset(b, 0, 8192);
		ibv_wr_start(x);
		x->wr_id = 0x400 + i;
		ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b);
		ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 1000);
		switch (i) {
		case 0:
			ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b + 4096);
			ibv_wr_set_sge_list(x, 7, sg);
			break;
		case 1:
			ibv_wr_send(x);
			ibv_wr_set_inline_data(x, a, 97);
			break;
		case 2:
			ibv_wr_atomic_fetch_add(x, mb->rkey, (uintptr_t)b, 1);
			ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 8);
			break;
		case 3:
			ibv_wr_send(x);
			ibv_wr_set_ud_addr(x, ah, B.qp->qp_num, 0x11111111);
			ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 8);
			break;
		case 4:
			for (k = 0; k < 4096; k++) {
				ibv_wr_rdma_write(x, mb->rkey, (uintptr_t)b);
				ibv_wr_set_sge(x, ma->lkey, (uintptr_t)a, 1);
			}
			break;
		}
		ret = ibv_wr_complete(x);
		EXPECT_TRUE(ret == (i == 4 ? ENOMEM : EINVAL) && cq_quiet(A.cq) &&
		   !b[0] && !b[4096])
		   TH_LOG("qpex: wr_complete refuses a batch with %s, nothing posted (%s)",
		   bad_name[i], strerror(ret));
	}
	if (ah)
		ibv_destroy_ah(ah);
	/* an operation the QP was not created with */
	q = mk_qpx(&A, IBV_QPT_RC, IBV_QP_EX_WITH_SEND);
	x2 = q ? ibv_qp_to_qp_ex(q) : NULL;
	ret = -1;
	if (x2)
		ret = qpx_post1(x2, 0x502, IBV_WR_RDMA_WRITE, mb->rkey, b, 0,
				ma, a, 8);
	EXPECT_TRUE(ret == EINVAL)
	   TH_LOG("qpex: wr_rdma_write on a QP created with SEND only: EINVAL (%s)",
	   x2 ? strerror(ret) : "no QP");
	if (q)
		ibv_destroy_qp(q);
	/* and the QP still works, with nothing left over */
	ret = qpx_post1(x, 0x501, IBV_WR_RDMA_WRITE, mb->rkey, b + 100, 0, ma,
			a + 5, 500);
	EXPECT_TRUE(!ret && qpx_done(0x501, IBV_WC_RDMA_WRITE, NULL) &&
	   !memcmp(b + 100, a + 5, 500) && !b[0] && cq_quiet(A.cq) &&
	   cq_quiet(B.cq))
	   TH_LOG("qpex: after the refused batches the QP posts and nothing else completes (%s)",
	   strerror(ret));
	release((struct ibv_qp *[]){ A.qp, B.qp }, 2, ma, mb, a, b);
	A.qp = B.qp = NULL;
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc != 5 || pair_args(argc, argv)) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n", argv[0]);
		return 2;
	}
	return test_harness_run(1, run);
}
