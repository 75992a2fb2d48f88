// SPDX-License-Identifier: GPL-2.0
/*
 * rewrite_test - a process rewrites a WQE in its mmap'd send queue after
 * posting it, while the engine still needs it: the engine must use the
 * copy it validated when it took the WQE, never the ring again.  Two
 * devices in one process.
 *
 * RC: the engine needs a WQE until it is acknowledged (a retransmission,
 * a READ response still to scatter).  Each test posts while the peer QP
 * is still in INIT (so the first packets are dropped and must be
 * retransmitted), rewrites the WQE, then lets the peer go to RTR: the
 * data must be what was posted.
 *
 * UD: a datagram leaves once, at the doorbell, so there is no
 * retransmission to wait for; the window is inside the doorbell.  The
 * test module gaudi_nic_test_delay holds the posting thread for 500 ms at
 * gnsim_ud_send_one(), where the engine has copied the WQE out of the ring
 * and starts to validate it and build the packet; another thread
 * rewrites the WQE then (its data, length, SGEs, destination, Q_Key,
 * address vector).  The datagram must carry what was posted to the QP
 * it was posted to, and
 * the rewrite must have happened inside the window (the delay fired and
 * the post had not returned), or the test proves nothing.
 *
 * usage: rewrite_test DEV_A GID_A DEV_B GID_B
 * A kselftest (kselftest_harness.h): one test per rewrite, each in its
 * own process with both devices opened anew; output KTAP.
 */
#define _GNU_SOURCE		/* gettid() */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "pairutil.h"
#include "ringutil.h"

#define LEN	256
#define WR_ID	0x5eedf00dcafe0000ULL

enum rewrite {
	SET_INLINE,		/* the WRITE's data becomes "inline" */
	SET_NUM_SGE,		/* num_sge 255, SGE 0 shrunk: walk past the WQE */
	MOVE_READ_SGE,		/* the READ's target moves in the MR */
};

static const char *const rewrite_name[] = {
	[SET_INLINE] = "INLINE flag set on a posted 256 B RDMA WRITE",
	[SET_NUM_SGE] = "num_sge 255 and SGE 0 shrunk on a posted 256 B RDMA WRITE",
	[MOVE_READ_SGE] = "SGE moved on a posted 256 B RDMA READ",
};

/*
 * Post a 256 B WRITE (or READ) from A to B while B's QP is in INIT,
 * rewrite the WQE in A's ring as @how says, bring B's QP up; the
 * retransmission must carry (or scatter) exactly what was posted.
 */
static void test_rewrite(struct __test_metadata *_metadata, enum rewrite how)
{
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 8192, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 8192, ACC_ALL);
	struct ibv_qp *qa = new_qp(&A), *qb = new_qp(&B);
	bool read = how == MOVE_READ_SGE;
	struct ibv_sge sg = { (uintptr_t)a, LEN, ma ? ma->lkey : 0 };
	struct ibv_send_wr wr = {
		.wr_id = WR_ID + how, .sg_list = &sg, .num_sge = 1,
		.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b,
			     .rkey = mb ? mb->rkey : 0 },
	}, *bad;
	struct gaudi_wqe *w;
	struct ibv_wc wc = {};
	int ret;

	ASSERT_TRUE(a && b && ma && mb && qa && qb)
		TH_LOG("%s: buffers, MRs and QPs (%s)", rewrite_name[how], strerror(errno));
	ASSERT_EQ(0, to_init(qa)) TH_LOG("%s: A's QP to INIT", rewrite_name[how]);
	ASSERT_EQ(0, to_init(qb)) TH_LOG("%s: B's QP to INIT", rewrite_name[how]);
	ASSERT_EQ(0, to_rts(&A, qa, &B, qb->qp_num))
		TH_LOG("%s: A's QP to RTS", rewrite_name[how]);
	fill(a, 8192, read ? 3 : 1);
	fill(b, 8192, read ? 1 : 3);
	ASSERT_EQ(0, ibv_post_send(qa, &wr, &bad)) TH_LOG("%s: post", rewrite_name[how]);
	/* the first transmission reaches a QP in INIT and is dropped */
	usleep(20000);
	w = ring_find_wqe(wr.wr_id, read ? GAUDI_WQE_READ : GAUDI_WQE_WRITE,
			   NULL);
	ASSERT_NE(NULL, w) TH_LOG("%s: the WQE is in the mmap'd ring", rewrite_name[how]);
	switch (how) {
	case SET_INLINE:
		__atomic_store_n(&w->flags, w->flags | GAUDI_WQE_F_INLINE,
				 __ATOMIC_RELEASE);
		break;
	case SET_NUM_SGE:
		__atomic_store_n(&w->data.sge[0].length, 16, __ATOMIC_RELEASE);
		__atomic_store_n(&w->num_sge, 255, __ATOMIC_RELEASE);
		break;
	case MOVE_READ_SGE:
		__atomic_store_n(&w->data.sge[0].addr, (uintptr_t)a + 4096,
				 __ATOMIC_RELEASE);
		break;
	}
	ASSERT_EQ(0, to_rts(&B, qb, &A, qa->qp_num))
		TH_LOG("%s: B's QP to RTS", rewrite_name[how]);
	ret = wait_wc(A.cq, &wc, 20);
	if (read) {
		uint8_t want[LEN];

		fill(want, sizeof(want), 1);	/* b's first bytes */
		EXPECT_TRUE(!ret && wc.status == IBV_WC_SUCCESS && !memcmp(a, want, LEN))
		   TH_LOG("%s: the response lands where it was posted to (%s)",
		   rewrite_name[how], ret ? "no completion" :
		   ibv_wc_status_str(wc.status));
		fill(want, sizeof(want), 3);	/* a's bytes at 4096 */
		EXPECT_TRUE(!memcmp(a + 4096, want, LEN))
		   TH_LOG("%s: the rewritten target is untouched", rewrite_name[how]);
	} else {
		EXPECT_TRUE(!ret && wc.status == IBV_WC_SUCCESS && !memcmp(b, a, LEN))
		   TH_LOG("%s: the target holds exactly the posted bytes (%s)",
		   rewrite_name[how], ret ? "no completion" :
		   ibv_wc_status_str(wc.status));
		EXPECT_TRUE(b[LEN] == (uint8_t)(LEN * 13 + 3))
		   TH_LOG("%s: nothing written past the message", rewrite_name[how]);
	}
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}



/* UD: the rewrites made inside the doorbell */
enum ud_rewrite {
	UD_INLINE,		/* inline data and length */
	UD_SGE,			/* the SGEs: other bytes, longer, more */
	UD_DEST,		/* destination QPN and Q_Key: another QP of B */
	UD_AV,			/* address vector: another GID and MAC */
};

static const char *const ud_rewrite_name[] = {
	[UD_INLINE] = "inline data and length of a posted 48 B UD SEND",
	[UD_SGE] = "SGEs of a posted 256 B UD SEND",
	[UD_DEST] = "destination QPN and Q_Key of a posted UD SEND",
	[UD_AV] = "destination GID and MAC of a posted UD SEND",
};

#define UD_QKEY		0x11111111U
#define UD_QKEY2	0x22222222U
#define UD_GRH		40
#define UD_LEN		256
#define UD_INLINE_LEN	48
#define UD_WR_ID	0x5eedf00dcafe0100ULL
#define UD_HOLD_MS	500

struct ud_rewriter {
	enum ud_rewrite how;
	uint64_t wr_id;
	uint32_t qpn2;		/* B's other QP */
	uint64_t other;		/* A's other bytes (UD_SGE) */
	int go;			/* main -> thread: the delay is armed */
	int posted;		/* main -> thread: ibv_post_send() returned */
	int fired;		/* the delay fired: the engine holds the WQE */
	int rewritten;		/* the WQE was found and rewritten */
	int in_window;		/* ... before the post returned */
};

static void ud_rewrite_wqe(struct ud_rewriter *rw, struct gaudi_ud_wqe *w)
{
	static const uint8_t bogus_gid[16] = {
		[10] = 0xff, [11] = 0xff, 10, 255, 255, 1 };
	int i;

	switch (rw->how) {
	case UD_INLINE:
		memset(w->inline_data, 0xee, GAUDI_UD_WQE256_MAX_INLINE);
		__atomic_store_n(&w->inline_len, GAUDI_UD_WQE256_MAX_INLINE,
				 __ATOMIC_RELEASE);
		break;
	case UD_SGE:
		for (i = 0; i < GAUDI_MAX_SGE; i++) {
			w->sge[i].addr = rw->other;
			w->sge[i].length = 100;
			w->sge[i].lkey = w->sge[0].lkey;
		}
		__atomic_store_n(&w->num_sge, GAUDI_MAX_SGE,
				 __ATOMIC_RELEASE);
		break;
	case UD_DEST:
		w->qkey = UD_QKEY2;
		__atomic_store_n(&w->dest_qpn, rw->qpn2, __ATOMIC_RELEASE);
		break;
	case UD_AV:
		memcpy(w->av.dgid, bogus_gid, sizeof(bogus_gid));
		memset(w->av.dmac, 0x02, sizeof(w->av.dmac));
		__atomic_thread_fence(__ATOMIC_RELEASE);
		break;
	}
}

/*
 * The other thread: once the delay has fired (the posting thread is held
 * in the engine), find the WQE and rewrite it.
 */
static void *ud_rewriter_thread(void *arg)
{
	struct ud_rewriter *rw = arg;
	struct gaudi_ud_wqe *w;
	double end;

	while (!__atomic_load_n(&rw->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	end = tu_now() + 10;
	while ((rw->fired = delay_fired()) == 0 && tu_now() < end &&
	       !__atomic_load_n(&rw->posted, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (rw->fired != 1)
		return NULL;
	/* a UD WQE starts as a gaudi_wqe does (gaudi-abi.h) */
	w = (struct gaudi_ud_wqe *)ring_find_wqe(rw->wr_id, GAUDI_WQE_SEND,
						 NULL);
	if (!w)
		return NULL;
	ud_rewrite_wqe(rw, w);
	rw->rewritten = 1;
	rw->in_window = !__atomic_load_n(&rw->posted, __ATOMIC_ACQUIRE);
	return NULL;
}

/* A UD QP in RTS on @s's PD and CQ with Q_Key @qkey, or NULL. */
static struct ibv_qp *ud_qp(struct tu_side *s, uint32_t qkey)
{
	struct ibv_qp *qp = tu_qp(s->pd, s->cq, IBV_QPT_UD,
				  &(struct ibv_qp_cap){
					.max_send_wr = 16, .max_recv_wr = 16,
					.max_send_sge = GAUDI_MAX_SGE,
					.max_recv_sge = 1,
					.max_inline_data =
						GAUDI_UD_WQE256_MAX_INLINE });
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};

	if (!qp)
		return NULL;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	ibv_destroy_qp(qp);
	return NULL;
}

static int ud_post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf,
			uint64_t wr_id)
{
	struct ibv_sge sg = { (uintptr_t)buf, UD_GRH + 1024, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/*
 * Post a UD SEND from A to B's first QP, held in the engine while the
 * other thread rewrites it as @how says; what B receives must be what
 * was posted, on the QP it was posted to, and nothing must reach B's
 * second QP.
 */
static void ud_rewrite_run(struct __test_metadata *_metadata,
			   enum ud_rewrite how)
{
	const char *what = ud_rewrite_name[how];
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 8192, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 8192, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_qp *qa = ud_qp(&A, UD_QKEY), *qb = ud_qp(&B, UD_QKEY);
	struct ibv_qp *qb2 = ud_qp(&B, UD_QKEY2);
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = B.gid, .sgid_index = A.gid_index,
			 .hop_limit = 64 },
	};
	struct ibv_ah *ah = ibv_create_ah(A.pd, &aa);
	bool inl = how == UD_INLINE;
	uint32_t len = inl ? UD_INLINE_LEN : UD_LEN;
	struct ibv_sge sg = { (uintptr_t)a, len, ma ? ma->lkey : 0 };
	struct ibv_send_wr wr = {
		.wr_id = UD_WR_ID + how, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED | (inl ? IBV_SEND_INLINE : 0),
		.wr.ud = { .ah = ah, .remote_qpn = qb ? qb->qp_num : 0,
			   .remote_qkey = UD_QKEY },
	}, *bad;
	struct ud_rewriter rw = {
		.how = how, .wr_id = wr.wr_id, .qpn2 = qb2 ? qb2->qp_num : 0,
		.other = (uintptr_t)a + 4096,
	};
	struct ibv_wc wc = {}, rwc = {};
	bool sent = false, got = false;
	uint8_t zero[64] = {};
	pthread_t th;
	int ret, n;

	ASSERT_TRUE(a && b && ma && mb && qa && qb && qb2 && ah)
		TH_LOG("%s: buffers, MRs, UD QPs and an AH (%s)", what, strerror(errno));
	fill(a, 4096, 1);
	fill(a + 4096, 4096, 9);
	memset(b, 0, 8192);
	ASSERT_TRUE(!ud_post_recv(qb, mb, b, 1) && !ud_post_recv(qb2, mb, b + 4096, 2))
		TH_LOG("%s: receives on both of B's QPs", what);
	ASSERT_EQ(0, pthread_create(&th, NULL, ud_rewriter_thread, &rw))
		TH_LOG("%s: the rewriting thread", what);
	if (delay_arm("gnsim_ud_send_one", gettid(), UD_HOLD_MS)) {
		ret = errno;
		__atomic_store_n(&rw.posted, 1, __ATOMIC_RELEASE);
		__atomic_store_n(&rw.go, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
		ASSERT_EQ(0, ret) TH_LOG("%s: arm the delay at gnsim_ud_send_one (%s)",
					 what, strerror(ret));
	}
	__atomic_store_n(&rw.go, 1, __ATOMIC_RELEASE);
	ret = ibv_post_send(qa, &wr, &bad);
	__atomic_store_n(&rw.posted, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	delay_off();
	ASSERT_EQ(0, ret) TH_LOG("%s: post (%s)", what, strerror(ret));
	ASSERT_TRUE(rw.fired == 1 && rw.rewritten && rw.in_window)
		TH_LOG("%s: rewritten while the engine held it (delay fired %d, WQE %s, %s)",
		       what, rw.fired, rw.rewritten ? "rewritten" : "not found",
		       rw.in_window ? "in the window" : "after the post returned");
	/* A's send completion and B's receive, in either order */
	for (n = 0; n < 2; n++) {
		struct ibv_wc w = {};

		if (!sent && !wait_wc(A.cq, &w, 5)) {
			wc = w;
			sent = true;
		} else if (!got && !wait_wc(B.cq, &w, 5)) {
			rwc = w;
			got = true;
		}
	}
	EXPECT_TRUE(sent && wc.wr_id == wr.wr_id && wc.status == IBV_WC_SUCCESS)
		TH_LOG("%s: the send completes successfully (%s)", what,
		       sent ? ibv_wc_status_str(wc.status) : "no completion");
	EXPECT_TRUE(got && rwc.status == IBV_WC_SUCCESS && rwc.wr_id == 1 &&
		    rwc.qp_num == qb->qp_num && rwc.byte_len == UD_GRH + len &&
		    !memcmp(b + UD_GRH, a, len))
		TH_LOG("%s: B's QP %#x receives exactly the %u bytes posted (%s, QP %#x, %u bytes, data %s)",
		       what, qb->qp_num, len,
		       got ? ibv_wc_status_str(rwc.status) : "nothing",
		       rwc.qp_num, rwc.byte_len > UD_GRH ? rwc.byte_len - UD_GRH : 0,
		       !memcmp(b + UD_GRH, a, len) ? "as posted" : "differs");
	EXPECT_TRUE(!memcmp(b + UD_GRH + len, zero, sizeof(zero)))
		TH_LOG("%s: nothing is written past the message", what);
	EXPECT_TRUE(wait_wc(B.cq, &rwc, 0.3) && !memcmp(b + 4096, zero, sizeof(zero)))
		TH_LOG("%s: nothing reaches B's other QP %#x (a completion on QP %#x)",
		       what, qb2->qp_num, rwc.qp_num);
	ibv_destroy_ah(ah);
	ibv_destroy_qp(qb2);
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}

/* The same, or a skip that says why if the delay injector is not loaded. */
static void test_ud_rewrite(struct __test_metadata *_metadata,
			    enum ud_rewrite how)
{
	if (access(DELAY_ARM, W_OK))
		SKIP(return, "%s: %s is not there: the test module gaudi_nic_test_delay is not loaded (tests/rdma/hardening.sh loads it)",
		     ud_rewrite_name[how], DELAY_ARM);
	ud_rewrite_run(_metadata, how);
}

PAIR_FIXTURE(rewrite)

TEST_F_TIMEOUT(rewrite, rc_set_inline, 120)
{
	test_rewrite(_metadata, SET_INLINE);
}

TEST_F_TIMEOUT(rewrite, rc_set_num_sge, 120)
{
	test_rewrite(_metadata, SET_NUM_SGE);
}

TEST_F_TIMEOUT(rewrite, rc_move_read_sge, 120)
{
	test_rewrite(_metadata, MOVE_READ_SGE);
}


TEST_F_TIMEOUT(rewrite, ud_inline, 60)
{
	test_ud_rewrite(_metadata, UD_INLINE);
}

TEST_F_TIMEOUT(rewrite, ud_sge, 60)
{
	test_ud_rewrite(_metadata, UD_SGE);
}

TEST_F_TIMEOUT(rewrite, ud_dest, 60)
{
	test_ud_rewrite(_metadata, UD_DEST);
}

TEST_F_TIMEOUT(rewrite, ud_av, 60)
{
	test_ud_rewrite(_metadata, UD_AV);
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
