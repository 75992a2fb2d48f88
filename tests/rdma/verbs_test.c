// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_test - gaudi_ib verbs and RC data path, two devices in one
 * process: QP state machine validation, WRITE / WRITE_IMM / READ / SEND
 * with scatter-gather, inline and unsignaled work requests, zero-byte
 * WRITE and READ (no rkey checked), protection errors (wrong rkey, out
 * of bounds, missing access) that must leave the target memory
 * untouched, RNR retry exhaustion, flush on error, and HBM-to-HBM RDMA
 * through gaudi_nic dma-buf MRs (checked through the accel CPU
 * mapping), address handles (IPv4 and IPv6 GIDs, bad input),
 * and device limits that must match what the driver accepts (extended
 * QPs are qpex_test.c's).  A kselftest
 * (kselftest_harness.h): one test per area, each in its own process with
 * both devices opened anew; output KTAP.
 *
 * usage: verbs_test DEV_A GID_A DEV_B GID_B [ACCEL_A ACCEL_B]
 *        verbs_test --hold-ah DEV GID_INDEX PEER_IPV4
 *   (creates an AH, prints "ready", waits for EOF on stdin, then destroys
 *   it: verbs.sh deletes the device in between)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/dma-heap.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <hlthunk.h>

#include "kselftest_harness.h"
#include "testutil.h"

static struct tu_side A, B;

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b, accel_a = -1, accel_b = -1;

static struct ibv_qp *new_qp(struct tu_side *s)
{
	return tu_qp(s->pd, s->cq, IBV_QPT_RC,
		     &(struct ibv_qp_cap){ .max_send_wr = 64, .max_recv_wr = 64,
					   .max_send_sge = 6, .max_recv_sge = 6,
					   .max_inline_data = 64 });
}

/* INIT -> RTS towards @peer's QP @dqpn: PSNs 7, RNR retries @rnr_retry */
static int to_rtr_rts(struct tu_side *s, struct ibv_qp *qp,
		      struct tu_side *peer, uint32_t dqpn, int rnr_retry)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.psn = 7;
	p.rnr_retry = rnr_retry;
	return tu_qp_rtr_rts(qp, s, peer, dqpn, &p);
}

#define ACC_ALL TU_ACC_ALL

/* A fresh connected pair A.qp <-> B.qp, made by @mk. */
static int connect_pair_of(struct ibv_qp *(*mk)(struct tu_side *), int rnr_retry)
{
	if (A.qp)
		ibv_destroy_qp(A.qp);
	if (B.qp)
		ibv_destroy_qp(B.qp);
	A.qp = mk(&A);
	B.qp = mk(&B);
	if (!A.qp || !B.qp)
		return -1;
	if (tu_qp_init(A.qp, ACC_ALL) || tu_qp_init(B.qp, ACC_ALL))
		return -1;
	if (to_rtr_rts(&A, A.qp, &B, B.qp->qp_num, rnr_retry) ||
	    to_rtr_rts(&B, B.qp, &A, A.qp->qp_num, rnr_retry))
		return -1;
	return 0;
}

static int connect_pair(int rnr_retry)
{
	return connect_pair_of(new_qp, rnr_retry);
}

/* Wait for one completion on @cq (10 s): 0, or -1 if none came. */
static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return tu_poll(cq, wc, 10) == 1 ? 0 : -1;
}

static int post_write(struct ibv_qp *qp, enum ibv_wr_opcode op,
		      struct ibv_sge *sg, int nsge, uint64_t raddr,
		      uint32_t rkey, unsigned int flags, uint32_t imm)
{
	struct ibv_send_wr wr = {
		.wr_id = 42, .sg_list = sg, .num_sge = nsge, .opcode = op,
		.send_flags = flags, .imm_data = htonl(imm),
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;

	return ibv_post_send(qp, &wr, &bad);
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 7 + seed);
}

/* Every test opens both devices anew, in its own process. */
FIXTURE(verbs) {};

FIXTURE_SETUP(verbs)
{
	ASSERT_EQ(0, tu_open(&A, dev_a, gid_a, 256))
		TH_LOG("open %s (GID index %d): %s", dev_a, gid_a, strerror(errno));
	ASSERT_EQ(0, tu_open(&B, dev_b, gid_b, 256))
		TH_LOG("open %s (GID index %d): %s", dev_b, gid_b, strerror(errno));
}

FIXTURE_TEARDOWN(verbs)
{
	if (A.qp)
		ibv_destroy_qp(A.qp);
	if (B.qp)
		ibv_destroy_qp(B.qp);
}

TEST_F_TIMEOUT(verbs, state_machine, 120)
{
	struct ibv_qp_attr a = {};
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp = new_qp(&A);

	EXPECT_TRUE(qp != NULL) TH_LOG("create RC QP");
	if (!qp)
		return;
	a.qp_state = IBV_QPS_RTS;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL)
	   TH_LOG("RESET -> RTS is refused (EINVAL)");
	a.qp_state = IBV_QPS_RTR;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE) == EINVAL)
	   TH_LOG("RESET -> RTR is refused (EINVAL)");
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 9;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL)
	   TH_LOG("INIT with port 9 is refused (EINVAL)");
	a.port_num = 1;
	a.pkey_index = 3;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL)
	   TH_LOG("INIT with pkey index 3 is refused (EINVAL)");
	EXPECT_TRUE(tu_qp_init(qp, ACC_ALL) == 0) TH_LOG("RESET -> INIT");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU) == EINVAL)
	   TH_LOG("INIT -> RTR without AV/dest QPN is refused (EINVAL)");
	memset(&a, 0, sizeof(a));
	EXPECT_TRUE(ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) == 0 &&
	   a.qp_state == IBV_QPS_INIT) TH_LOG("query_qp reports INIT");
	a.qp_state = IBV_QPS_ERR;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0) TH_LOG("INIT -> ERR");
	a.qp_state = IBV_QPS_RESET;
	EXPECT_TRUE(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0) TH_LOG("ERR -> RESET");
	EXPECT_TRUE(ibv_destroy_qp(qp) == 0) TH_LOG("destroy QP");
}

#define BUF (256 * 1024)

TEST_F_TIMEOUT(verbs, data_path, 120)
{
	uint8_t *a = aligned_alloc(4096, BUF), *b = aligned_alloc(4096, BUF);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, BUF, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, BUF, ACC_ALL);
	struct ibv_sge sg[3];
	struct ibv_wc wc;
	int i, n;

	ASSERT_TRUE(ma && mb) TH_LOG("register 256 KiB MRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_pair(7)) TH_LOG("connect QPs: %s", strerror(errno));
	TH_LOG("connected QP %u (%s) <-> QP %u (%s)", A.qp->qp_num,
	       ibv_get_device_name(A.ctx->device), B.qp->qp_num,
	       ibv_get_device_name(B.ctx->device));

	/* WRITE 100000 bytes gathered from 3 SGEs */
	fill(a, BUF, 1);
	memset(b, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 1000, ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a + 5000, 49000, ma->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)a + 60000, 50000, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_WRITE, sg, 3, (uintptr_t)b + 8, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	EXPECT_TRUE(!wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RDMA_WRITE) TH_LOG("RDMA WRITE 100000 B, 3 SGEs (%s)",
	   ibv_wc_status_str(wc.status));
	EXPECT_TRUE(!memcmp(b + 8, a, 1000) && !memcmp(b + 1008, a + 5000, 49000) &&
	   !memcmp(b + 50008, a + 60000, 50000) && !b[7] && !b[100008])
	   TH_LOG("written bytes match, neighbours untouched");

	/*
	 * 6 SGEs of 1000 B, each across a page boundary: a packet's payload
	 * is gathered from many pieces of memory (zero-copy transmit), and
	 * READ responses are scattered back into the same SGEs.
	 */
	{
		struct ibv_sge s6[6];
		bool same = true;

		memset(b, 0, BUF);
		for (i = 0; i < 6; i++)
			s6[i] = (struct ibv_sge){ (uintptr_t)a + 8192 * i + 3600,
						  1000, ma->lkey };
		post_write(A.qp, IBV_WR_RDMA_WRITE, s6, 6, (uintptr_t)b + 1,
			   mb->rkey, IBV_SEND_SIGNALED, 0);
		n = wait_wc(A.cq, &wc);
		for (i = 0; i < 6; i++)
			same = same && !memcmp(b + 1 + 1000 * i,
					       a + 8192 * i + 3600, 1000);
		EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && same && !b[0] && !b[6001])
		   TH_LOG("RDMA WRITE from 6 SGEs across page boundaries (%s)",
		   ibv_wc_status_str(wc.status));
		fill(b, BUF, 5);
		post_write(A.qp, IBV_WR_RDMA_READ, s6, 6, (uintptr_t)b + 4000,
			   mb->rkey, IBV_SEND_SIGNALED, 0);
		n = wait_wc(A.cq, &wc);
		for (i = 0, same = true; i < 6; i++)
			same = same && !memcmp(a + 8192 * i + 3600,
					       b + 4000 + 1000 * i, 1000);
		EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && same &&
		   a[3599] == (uint8_t)(3599 * 7 + 1) &&
		   a[4600] == (uint8_t)(4600 * 7 + 1))
		   TH_LOG("RDMA READ into 6 SGEs across page boundaries (%s)",
		   ibv_wc_status_str(wc.status));
		fill(a, BUF, 1);
	}

	/* unsignaled writes, then a signaled one: one completion */
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 64, ma->lkey };
	for (i = 0; i < 5; i++)
		post_write(A.qp, IBV_WR_RDMA_WRITE, sg, 1, (uintptr_t)b, mb->rkey,
			   i == 4 ? IBV_SEND_SIGNALED : 0, 0);
	EXPECT_TRUE(!wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	   ibv_poll_cq(A.cq, 1, &wc) == 0)
	   TH_LOG("4 unsignaled + 1 signaled WRITE give one completion");

	/* WRITE with immediate consumes a receive */
	sg[1] = (struct ibv_sge){ (uintptr_t)b + 200000, 16, mb->lkey };
	tu_post_recv(B.qp, &sg[1], 1, 77);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 3000, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_WRITE_WITH_IMM, sg, 1, (uintptr_t)b + 4096,
		   mb->rkey, IBV_SEND_SIGNALED, 0xabcd1234);
	EXPECT_TRUE(!wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS)
	   TH_LOG("WRITE_WITH_IMM completes");
	/* wait first: the message's arguments are evaluated before ok() */
	n = wait_wc(B.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 77 &&
	   (wc.wc_flags & IBV_WC_WITH_IMM) && ntohl(wc.imm_data) == 0xabcd1234 &&
	   wc.byte_len == 3000 && !memcmp(b + 4096, a, 3000))
	   TH_LOG("responder: RECV_RDMA_WITH_IMM, imm 0x%x, %u bytes", ntohl(wc.imm_data),
	   wc.byte_len);

	/* READ 150000 bytes into 2 SGEs */
	fill(b, BUF, 9);
	memset(a, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 70000, ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a + 100000, 80000, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_READ, sg, 2, (uintptr_t)b + 3, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	EXPECT_TRUE(!wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RDMA_READ && wc.byte_len == 150000)
	   TH_LOG("RDMA READ 150000 B into 2 SGEs (%s)", ibv_wc_status_str(wc.status));
	EXPECT_TRUE(!memcmp(a, b + 3, 70000) && !memcmp(a + 100000, b + 70003, 80000))
	   TH_LOG("read bytes match");

	/*
	 * Zero bytes name no memory: the responder checks neither rkey nor
	 * address (IBA C9-88).  UCX's rc_verbs flushes an endpoint with an
	 * inline RDMA WRITE of zero bytes to rkey 0, address 0; it took
	 * both QPs to ERR (issue 35).  Then the pair still works.
	 */
	post_write(A.qp, IBV_WR_RDMA_WRITE, NULL, 0, 0, 0,
		   IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE)
	   TH_LOG("RDMA WRITE of 0 bytes to rkey 0, address 0 (%s)",
	   n ? "no completion" : ibv_wc_status_str(wc.status));
	post_write(A.qp, IBV_WR_RDMA_READ, NULL, 0, 0, 0, IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ &&
	   wc.byte_len == 0)
	   TH_LOG("RDMA READ of 0 bytes from rkey 0, address 0 (%s)",
	   n ? "no completion" : ibv_wc_status_str(wc.status));
	memset(b, 0, 64);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 64, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_WRITE, sg, 1, (uintptr_t)b, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && !memcmp(b, a, 64))
	   TH_LOG("then an RDMA WRITE of 64 B (%s)",
	   n ? "no completion" : ibv_wc_status_str(wc.status));

	/* SEND: 3 SGEs into a receive of 2 SGEs; inline SEND */
	fill(a, BUF, 3);
	memset(b, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)b, 3000, mb->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)b + 10000, 10000, mb->lkey };
	tu_post_recv(B.qp, sg, 2, 5);
	sg[0] = (struct ibv_sge){ (uintptr_t)a, 100, ma->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)a + 1000, 4000, ma->lkey };
	sg[2] = (struct ibv_sge){ (uintptr_t)a + 9000, 900, ma->lkey };
	post_write(A.qp, IBV_WR_SEND, sg, 3, 0, 0, IBV_SEND_SIGNALED, 0);
	n = !wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS;
	n = n && !wait_wc(B.cq, &wc);
	EXPECT_TRUE(n && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RECV && wc.byte_len == 5000 && wc.wr_id == 5)
	   TH_LOG("SEND 5000 B from 3 SGEs received (%u bytes)", wc.byte_len);
	EXPECT_TRUE(!memcmp(b, a, 100) && !memcmp(b + 100, a + 1000, 2900) &&
	   !memcmp(b + 10000, a + 3900, 1100) && !memcmp(b + 11100, a + 9000, 900))
	   TH_LOG("received bytes scattered correctly");
	{
		char msg[64] = "inline hello from gaudi";

		sg[0] = (struct ibv_sge){ (uintptr_t)b + 50000, 64, mb->lkey };
		tu_post_recv(B.qp, sg, 1, 6);
		sg[0] = (struct ibv_sge){ (uintptr_t)msg, sizeof(msg), 0 };
		post_write(A.qp, IBV_WR_SEND_WITH_IMM, sg, 1, 0, 0,
			   IBV_SEND_SIGNALED | IBV_SEND_INLINE, 99);
		memset(msg, 0, sizeof(msg));	/* inline: copied at post */
		n = !wait_wc(A.cq, &wc) && wc.status == IBV_WC_SUCCESS;
		EXPECT_TRUE(n && !wait_wc(B.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		   !strcmp((char *)b + 50000, "inline hello from gaudi") &&
		   ntohl(wc.imm_data) == 99)
		   TH_LOG("inline SEND_WITH_IMM of 64 B");
	}

	/* protection: the target memory must stay untouched */
	struct {
		const char *what;
		enum ibv_wr_opcode op;
		uint64_t off;
		uint32_t len;
		int key;	/* 0 good, 1 wrong rkey, 2 MR without access */
	} bad[] = {
		{ "wrong rkey", IBV_WR_RDMA_WRITE, 0, 4096, 1 },
		{ "out-of-bounds WRITE", IBV_WR_RDMA_WRITE, BUF - 1000, 4096, 0 },
		{ "WRITE to an MR without REMOTE_WRITE", IBV_WR_RDMA_WRITE, 0,
		  4096, 2 },
		{ "READ of an MR without REMOTE_READ", IBV_WR_RDMA_READ, 0,
		  4096, 2 },
	};
	struct ibv_mr *mro = ibv_reg_mr(B.pd, b, BUF, IBV_ACCESS_LOCAL_WRITE);

	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++) {
		uint32_t rkey = bad[i].key == 1 ? mb->rkey ^ 0x55 :
				bad[i].key == 2 ? mro->rkey : mb->rkey;

		/* the last case left the pair in error: a new pair */
		n = connect_pair(7);
		EXPECT_EQ(0, n) TH_LOG("%s: reconnect", bad[i].what);
		if (n)
			continue;
		fill(a, BUF, 5);
		memset(b, 0xee, BUF);
		sg[0] = (struct ibv_sge){ (uintptr_t)a, bad[i].len, ma->lkey };
		tu_post_recv(B.qp, &sg[0], 1, 1);
		post_write(A.qp, bad[i].op, sg, 1, (uintptr_t)b + bad[i].off,
			   rkey, IBV_SEND_SIGNALED, 0);
		n = wait_wc(A.cq, &wc);
		EXPECT_TRUE(!n && wc.status == IBV_WC_REM_ACCESS_ERR)
		   TH_LOG("%s: requester gets REM_ACCESS_ERR (%s)", bad[i].what,
		   n ? "no completion" : ibv_wc_status_str(wc.status));
		for (n = 0; n < BUF && b[n] == 0xee; n++)
			;
		EXPECT_TRUE(n == BUF) TH_LOG("%s: target memory untouched", bad[i].what);
		/* the responder QP went to error: its receive is flushed */
		n = wait_wc(B.cq, &wc);
		EXPECT_TRUE(!n && wc.status == IBV_WC_WR_FLUSH_ERR && wc.wr_id == 1)
		   TH_LOG("%s: responder's receive flushed", bad[i].what);
	}
	ibv_dereg_mr(mro);

	/* RNR: no receive posted, rnr_retry 0 */
	if (!connect_pair(0)) {
		sg[0] = (struct ibv_sge){ (uintptr_t)a, 10, ma->lkey };
		post_write(A.qp, IBV_WR_SEND, sg, 1, 0, 0, IBV_SEND_SIGNALED, 0);
		n = wait_wc(A.cq, &wc);
		EXPECT_TRUE(!n && wc.status == IBV_WC_RNR_RETRY_EXC_ERR)
		   TH_LOG("SEND without a receive, rnr_retry 0: %s",
		   n ? "no completion" : ibv_wc_status_str(wc.status));
		post_write(A.qp, IBV_WR_SEND, sg, 1, 0, 0, 0, 0);
		n = wait_wc(A.cq, &wc);
		EXPECT_TRUE(!n && wc.status == IBV_WC_WR_FLUSH_ERR)
		   TH_LOG("later work requests are flushed");
	}
	/* RNR retried until a receive shows up */
	if (!connect_pair(7)) {
		sg[0] = (struct ibv_sge){ (uintptr_t)a, 10, ma->lkey };
		post_write(A.qp, IBV_WR_SEND, sg, 1, 0, 0, IBV_SEND_SIGNALED, 0);
		usleep(200000);
		sg[1] = (struct ibv_sge){ (uintptr_t)b, 10, mb->lkey };
		tu_post_recv(B.qp, &sg[1], 1, 3);
		n = wait_wc(A.cq, &wc);
		EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS)
		   TH_LOG("SEND before the receive is retried (rnr_retry 7): %s",
		   n ? "no completion" : ibv_wc_status_str(wc.status));
		wait_wc(B.cq, &wc);
	}
	ibv_dereg_mr(ma);
	ibv_dereg_mr(mb);
	free(a);
	free(b);
}

/* HBM of device A -> HBM of device B through dma-buf MRs, and back. */
TEST_F_TIMEOUT(verbs, hbm, 120)
{
	const uint64_t size = 1 << 20;
	int acc_a = accel_a, acc_b = accel_b;
	int fa, fb;
	uint64_t ha, hb, va, vb;
	int da = -1, db = -1;
	struct ibv_mr *ma, *mb;
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint8_t *ca, *cb;
	int n;

	if (acc_a < 0)
		SKIP(return, "no accel devices given (ACCEL_A ACCEL_B)");
	fa = hlthunk_open_by_index(acc_a);
	fb = hlthunk_open_by_index(acc_b);
	ASSERT_LE(0, fa) TH_LOG("open accel device %d: %s", acc_a, strerror(errno));
	ASSERT_LE(0, fb) TH_LOG("open accel device %d: %s", acc_b, strerror(errno));
	ha = hlthunk_device_memory_alloc(fa, size, 0, true, false);
	hb = hlthunk_device_memory_alloc(fb, size, 0, true, false);
	va = ha ? hlthunk_device_memory_map(fa, ha, 0) : 0;
	vb = hb ? hlthunk_device_memory_map(fb, hb, 0) : 0;
	if (va && vb) {
		da = hlthunk_device_mapped_memory_export_dmabuf_fd(fa, va, size,
								   0, O_RDWR | O_CLOEXEC);
		db = hlthunk_device_mapped_memory_export_dmabuf_fd(fb, vb, size,
								   0, O_RDWR | O_CLOEXEC);
	}
	ca = ha ? hlthunk_device_memory_mmap(fa, ha, size) : NULL;
	cb = hb ? hlthunk_device_memory_mmap(fb, hb, size) : NULL;
	EXPECT_TRUE(da >= 0 && db >= 0 && ca && cb)
	   TH_LOG("HBM: 1 MiB on each device, exported as dma-buf, CPU-mapped (%s)",
	   da >= 0 && db >= 0 && ca && cb ? "ok" : strerror(errno));
	if (da < 0 || db < 0 || !ca || !cb)
		return;
	ma = ibv_reg_dmabuf_mr(A.pd, 0, size, 0x10000000, da, ACC_ALL);
	mb = ibv_reg_dmabuf_mr(B.pd, 0, size, 0x20000000, db, ACC_ALL);
	EXPECT_TRUE(ma && mb) TH_LOG("ibv_reg_dmabuf_mr on both exports (%s)",
	   ma && mb ? "ok" : strerror(errno));
	if (!ma || !mb || connect_pair(7))
		return;
	fill(ca, size, 11);
	memset(cb, 0, size);
	sg = (struct ibv_sge){ 0x10000000, size, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_WRITE, &sg, 1, 0x20000000, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && !memcmp(ca, cb, size))
	   TH_LOG("RDMA WRITE HBM(A) -> HBM(B), 1 MiB, verified through the CPU mapping");
	memset(ca, 0, size);
	fill(cb, size, 17);
	sg = (struct ibv_sge){ 0x10000000 + 4096, size - 8192, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_READ, &sg, 1, 0x20000000 + 4096, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS &&
	   !memcmp(ca + 4096, cb + 4096, size - 8192) && !ca[0] &&
	   !ca[size - 1]) TH_LOG("RDMA READ HBM(B) -> HBM(A), verified");
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	A.qp = B.qp = NULL;
	ibv_dereg_mr(ma);
	ibv_dereg_mr(mb);
	/* the export is pinned by the MR until here; now it can go */
	close(da);
	close(db);
	hlthunk_device_memory_munmap(ca, size);
	hlthunk_device_memory_munmap(cb, size);
	hlthunk_memory_unmap(fa, va);
	hlthunk_memory_unmap(fb, vb);
	EXPECT_TRUE(hlthunk_device_memory_free(fa, ha) == 0) TH_LOG("free HBM after dereg");
	hlthunk_close(fa);
	hlthunk_close(fb);
}

/*
 * A read-only export (O_RDONLY) lends its HBM for reading only: a dma-buf
 * MR on it with any write access (remote or local) is refused with
 * EACCES, at registration and at re-registration; a read-only MR on it
 * serves a peer's RDMA READ.  (N7 of the November review: the write
 * access was granted and peers could write the exporter's HBM.)
 */
TEST_F_TIMEOUT(verbs, hbm_rdonly, 120)
{
	const uint64_t size = 64 << 10;
	uint64_t hb, vb = 0;
	struct ibv_mr *ma = NULL, *mb;
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint8_t *a, *cb;
	int fb, db = -1, n, ret;

	if (accel_b < 0)
		SKIP(return, "no accel devices given (ACCEL_A ACCEL_B)");
	fb = hlthunk_open_by_index(accel_b);
	ASSERT_LE(0, fb) TH_LOG("open accel device %d: %s", accel_b, strerror(errno));
	hb = hlthunk_device_memory_alloc(fb, size, 0, true, false);
	vb = hb ? hlthunk_device_memory_map(fb, hb, 0) : 0;
	if (vb)
		db = hlthunk_device_mapped_memory_export_dmabuf_fd(fb, vb, size, 0,
								   O_RDONLY | O_CLOEXEC);
	cb = hb ? hlthunk_device_memory_mmap(fb, hb, size) : NULL;
	a = aligned_alloc(4096, size);
	ASSERT_TRUE(db >= 0 && cb && a)
		TH_LOG("64 KiB of HBM exported O_RDONLY, CPU-mapped (%s)", strerror(errno));
	errno = 0;
	mb = ibv_reg_dmabuf_mr(B.pd, 0, size, 0x40000000, db, ACC_ALL);
	EXPECT_TRUE(!mb && errno == EACCES)
		TH_LOG("a writable dma-buf MR on the read-only export is refused with EACCES (%s)",
		       mb ? "registered" : strerror(errno));
	if (mb)
		ibv_dereg_mr(mb);
	errno = 0;
	mb = ibv_reg_dmabuf_mr(B.pd, 0, size, 0x40000000, db,
			       IBV_ACCESS_LOCAL_WRITE);
	EXPECT_TRUE(!mb && errno == EACCES)
		TH_LOG("so is one with only local write (%s)",
		       mb ? "registered" : strerror(errno));
	if (mb)
		ibv_dereg_mr(mb);
	mb = ibv_reg_dmabuf_mr(B.pd, 0, size, 0x40000000, db,
			       IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mb) TH_LOG("a read-only dma-buf MR on it (%s)", strerror(errno));
	ret = ibv_rereg_mr(mb, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	EXPECT_NE(0, ret) TH_LOG("re-registering it writable is refused");
	ma = ibv_reg_mr(A.pd, a, size, ACC_ALL);
	ASSERT_TRUE(ma && !connect_pair(7)) TH_LOG("an MR on A and a connected pair");
	fill(cb, size, 29);
	memset(a, 0, size);
	sg = (struct ibv_sge){ (uintptr_t)a, size, ma->lkey };
	post_write(A.qp, IBV_WR_RDMA_READ, &sg, 1, 0x40000000, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && !memcmp(a, cb, size))
		TH_LOG("a peer's RDMA READ of the read-only HBM (%s)",
		       n ? "no completion" : ibv_wc_status_str(wc.status));
	fill(a, size, 31);
	post_write(A.qp, IBV_WR_RDMA_WRITE, &sg, 1, 0x40000000, mb->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_REM_ACCESS_ERR && cb[0] == (uint8_t)29)
		TH_LOG("a peer's RDMA WRITE to it fails with a remote access error, HBM untouched (%s)",
		       n ? "no completion" : ibv_wc_status_str(wc.status));
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	A.qp = B.qp = NULL;
	ibv_dereg_mr(mb);
	ibv_dereg_mr(ma);
	close(db);
	hlthunk_device_memory_munmap(cb, size);
	hlthunk_memory_unmap(fb, vb);
	hlthunk_device_memory_free(fb, hb);
	hlthunk_close(fb);
	free(a);
}

/* A dma-buf of the system heap (host pages) as the target of a WRITE. */
TEST_F_TIMEOUT(verbs, heap, 120)
{
	struct dma_heap_allocation_data d = {
		.len = 1 << 20, .fd_flags = O_RDWR | O_CLOEXEC,
	};
	int heap = open("/dev/dma_heap/system", O_RDONLY | O_CLOEXEC);
	uint8_t *src = aligned_alloc(4096, 1 << 20), *dst;
	struct ibv_mr *ms, *md;
	struct ibv_sge sg;
	struct ibv_wc wc;
	int n, fd;

	if (heap < 0)
		SKIP(return, "dma-buf MR on the system heap: no /dev/dma_heap/system");
	EXPECT_TRUE(ioctl(heap, DMA_HEAP_IOCTL_ALLOC, &d) == 0)
	   TH_LOG("allocate 1 MiB from /dev/dma_heap/system");
	fd = d.fd;
	dst = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ms = ibv_reg_mr(A.pd, src, 1 << 20, ACC_ALL);
	md = ibv_reg_dmabuf_mr(B.pd, 0, 1 << 20, 0x30000000, fd, ACC_ALL);
	EXPECT_TRUE(md != NULL && dst != MAP_FAILED) TH_LOG("ibv_reg_dmabuf_mr on a system heap dma-buf");
	if (!md || !ms || dst == MAP_FAILED || connect_pair(7))
		return;
	fill(src, 1 << 20, 23);
	memset(dst, 0, 1 << 20);
	sg = (struct ibv_sge){ (uintptr_t)src, 1 << 20, ms->lkey };
	post_write(A.qp, IBV_WR_RDMA_WRITE, &sg, 1, 0x30000000, md->rkey,
		   IBV_SEND_SIGNALED, 0);
	n = wait_wc(A.cq, &wc);
	EXPECT_TRUE(!n && wc.status == IBV_WC_SUCCESS && !memcmp(src, dst, 1 << 20))
	   TH_LOG("RDMA WRITE into the heap dma-buf, verified through its mmap");
	ibv_destroy_qp(A.qp);
	ibv_destroy_qp(B.qp);
	A.qp = B.qp = NULL;
	ibv_dereg_mr(md);
	ibv_dereg_mr(ms);
	munmap(dst, 1 << 20);
	close(fd);
	/* a closed dma-buf fd cannot be registered */
	errno = 0;
	md = ibv_reg_dmabuf_mr(B.pd, 0, 1 << 20, 0, fd, ACC_ALL);
	EXPECT_TRUE(!md && errno) TH_LOG("dma-buf MR on a closed fd fails (%s)", strerror(errno));
	/* an fd that is not a dma-buf */
	errno = 0;
	md = ibv_reg_dmabuf_mr(B.pd, 0, 4096, 0, heap, ACC_ALL);
	EXPECT_TRUE(!md && errno) TH_LOG("dma-buf MR on a non-dma-buf fd fails (%s)",
	   strerror(errno));
	close(heap);
	free(src);
}

/* ------------------------------------------------------ device limits */

/*
 * What ibv_devinfo -v shows must be what the driver accepts: the largest
 * advertised queue, SGE count and CQ are created, one more is refused.
 */
TEST_F_TIMEOUT(verbs, limits, 120)
{
	struct ibv_device_attr_ex dx = {};
	struct ibv_device_attr *d = &dx.orig_attr;
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq, .qp_type = IBV_QPT_RC,
	};
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ASSERT_EQ(0, ibv_query_device_ex(A.ctx, NULL, &dx)) TH_LOG("ibv_query_device_ex");
	EXPECT_TRUE(d->max_ah > 0 && d->max_mr_size > 0 && d->max_qp_wr > 0 &&
	   d->max_sge > 0 && d->max_cqe > 0 && (d->page_size_cap & 4096) &&
	   d->atomic_cap == IBV_ATOMIC_NONE &&
	   (d->device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT))
	   TH_LOG("device attributes: max_ah %d, max_mr_size 0x%llx, max_qp_wr %d, max_sge %d, max_cqe %d, page_size_cap 0x%llx, no atomics, port events",
	   d->max_ah, (unsigned long long)d->max_mr_size, d->max_qp_wr,
	   d->max_sge, d->max_cqe, (unsigned long long)d->page_size_cap);
	ia.cap = (struct ibv_qp_cap){ .max_send_wr = d->max_qp_wr,
				      .max_recv_wr = d->max_qp_wr,
				      .max_send_sge = d->max_sge,
				      .max_recv_sge = d->max_sge };
	qp = ibv_create_qp(A.pd, &ia);
	EXPECT_TRUE(qp != NULL) TH_LOG("QP with max_qp_wr (%d) WRs and max_sge (%d) SGEs",
	   d->max_qp_wr, d->max_sge);
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_wr = d->max_qp_wr + 1;
	qp = ibv_create_qp(A.pd, &ia);
	EXPECT_TRUE(qp == NULL) TH_LOG("QP with max_qp_wr + 1 WRs is refused");
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_wr = 1;
	ia.cap.max_send_sge = d->max_sge + 1;
	qp = ibv_create_qp(A.pd, &ia);
	EXPECT_TRUE(qp == NULL) TH_LOG("QP with max_sge + 1 SGEs is refused");
	if (qp)
		ibv_destroy_qp(qp);
	cq = ibv_create_cq(A.ctx, d->max_cqe, NULL, NULL, 0);
	EXPECT_TRUE(cq != NULL) TH_LOG("CQ of max_cqe (%d) entries", d->max_cqe);
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(A.ctx, d->max_cqe + 1, NULL, NULL, 0);
	EXPECT_TRUE(cq == NULL) TH_LOG("CQ of max_cqe + 1 entries is refused");
	if (cq)
		ibv_destroy_cq(cq);
}

/*
 * Teardown of the CQ tests' pair: destroy A's and B's QPs (before the
 * caller puts its CQs back and destroys its own), free the MRs and their
 * buffers.
 */
static void pair_release(struct ibv_mr *ma, struct ibv_mr *mb, void *a, void *b)
{
	if (A.qp)
		ibv_destroy_qp(A.qp);
	if (B.qp)
		ibv_destroy_qp(B.qp);
	A.qp = B.qp = NULL;
	if (ma)
		ibv_dereg_mr(ma);
	if (mb)
		ibv_dereg_mr(mb);
	free(a);
	free(b);
}

/*
 * A CQ of 2^n entries holds 2^n completions: the ring is not rounded up
 * past the request, so its last slot must be usable (no overflow).
 */
TEST_F_TIMEOUT(verbs, cq_full, 120)
{
	struct ibv_cq *cq = ibv_create_cq(A.ctx, 4, NULL, NULL, 0);
	struct ibv_cq *save = A.cq;
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *ma = NULL, *mb = NULL;
	struct ibv_wc wc[8];
	struct ibv_sge sg;
	double end;
	int i, n = 0, r;

	EXPECT_TRUE(cq && cq->cqe == 4) TH_LOG("CQ of 4 entries (cqe %d)", cq ? cq->cqe : 0);
	if (!cq)
		goto out;
	A.cq = cq;
	ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
	mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
	ASSERT_TRUE(ma && mb) TH_LOG("MRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_pair(7)) TH_LOG("connect QPs on the 4-entry CQ");
	sg = (struct ibv_sge){ (uintptr_t)a, 8, ma->lkey };
	for (i = 0; i < 4; i++)
		post_write(A.qp, IBV_WR_RDMA_WRITE, &sg, 1, (uintptr_t)b + 8 * i,
			   mb->rkey, IBV_SEND_SIGNALED, 0);
	end = tu_now() + 10;
	while (n < 4 && tu_now() < end) {
		r = ibv_poll_cq(cq, 8 - n, wc + n);
		if (r < 0)
			break;
		n += r;
		if (n < 4)
			usleep(100);
	}
	for (i = 0; i < n; i++)
		if (wc[i].status != IBV_WC_SUCCESS)
			break;
	EXPECT_TRUE(n == 4 && i == 4) TH_LOG("4 completions in the 4-entry CQ, all successful (%d, %d)",
	   n, i);
out:
	pair_release(ma, mb, a, b);
	A.cq = save;
	if (cq)
		ibv_destroy_cq(cq);
}

/*
 * The core CQ libfabric 2.1's ofi_rxm opens with its defaults: (128 + 128)
 * WRs x FI_UNIVERSE_SIZE (1024 peers) = 2^18 entries, with a completion
 * channel on comp_vector 0, armed at once.  It must be created (a ring of
 * 2^18 CQEs: every slot of a CQ ring is usable) and deliver completions
 * and their event: a RECV_RDMA_WITH_IMM and the WRITE's own completion.
 */
#define RXM_DEF_CQ_SIZE ((128 + 128) * 1024)

TEST_F_TIMEOUT(verbs, rxm_cq, 120)
{
	struct ibv_comp_channel *ch_a = ibv_create_comp_channel(A.ctx);
	struct ibv_comp_channel *ch_b = ibv_create_comp_channel(B.ctx);
	struct ibv_cq *cq_a = NULL, *cq_b = NULL, *save_a = A.cq, *save_b = B.cq;
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *ma = NULL, *mb = NULL;
	struct ibv_sge sg;
	struct ibv_cq *ev_cq;
	struct pollfd pfd;
	struct ibv_wc wc;
	void *ev_ctx;
	int n;

	EXPECT_TRUE(ch_a && ch_b) TH_LOG("completion channels");
	if (!ch_a || !ch_b)
		goto out;
	cq_a = ibv_create_cq(A.ctx, RXM_DEF_CQ_SIZE, NULL, ch_a, 0);
	cq_b = ibv_create_cq(B.ctx, RXM_DEF_CQ_SIZE, NULL, ch_b, 0);
	EXPECT_TRUE(cq_a && cq_b && cq_b->cqe >= RXM_DEF_CQ_SIZE)
	   TH_LOG("CQ of %d entries with a channel, ofi_rxm's default (%s, cqe %d)",
	   RXM_DEF_CQ_SIZE, cq_b ? "created" : strerror(errno),
	   cq_b ? cq_b->cqe : 0);
	if (!cq_a || !cq_b)
		goto out;
	EXPECT_TRUE(!ibv_req_notify_cq(cq_a, 0) && !ibv_req_notify_cq(cq_b, 0))
	   TH_LOG("arm the %d-entry CQs", RXM_DEF_CQ_SIZE);
	A.cq = cq_a;
	B.cq = cq_b;
	ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
	mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
	ASSERT_TRUE(ma && mb) TH_LOG("MRs: %s", strerror(errno));
	ASSERT_EQ(0, connect_pair(7))
		TH_LOG("connect QPs on the %d-entry CQs", RXM_DEF_CQ_SIZE);
	fill(a, 4096, 3);
	memset(b, 0, 4096);
	sg = (struct ibv_sge){ (uintptr_t)a, 64, ma->lkey };
	tu_post_recv(B.qp, NULL, 0, 77);
	post_write(A.qp, IBV_WR_RDMA_WRITE_WITH_IMM, &sg, 1, (uintptr_t)b,
		   mb->rkey, IBV_SEND_SIGNALED, 0x1234);
	pfd = (struct pollfd){ .fd = ch_b->fd, .events = POLLIN };
	n = poll(&pfd, 1, 10000);
	EXPECT_TRUE(n == 1 && !ibv_get_cq_event(ch_b, &ev_cq, &ev_ctx) && ev_cq == cq_b)
	   TH_LOG("completion event on the %d-entry CQ", RXM_DEF_CQ_SIZE);
	if (n == 1)
		ibv_ack_cq_events(cq_b, 1);
	EXPECT_TRUE(!wait_wc(cq_b, &wc) && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 77 &&
	   ntohl(wc.imm_data) == 0x1234 && !memcmp(a, b, 64))
	   TH_LOG("RECV_RDMA_WITH_IMM through it, data written (%s)",
	   ibv_wc_status_str(wc.status));
	EXPECT_TRUE(!wait_wc(cq_a, &wc) && wc.status == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_RDMA_WRITE)
	   TH_LOG("the WRITE's completion on the sender's (%s)",
	   ibv_wc_status_str(wc.status));
out:
	pair_release(ma, mb, a, b);
	A.cq = save_a;
	B.cq = save_b;
	if (cq_a)
		ibv_destroy_cq(cq_a);
	if (cq_b)
		ibv_destroy_cq(cq_b);
	if (ch_a)
		ibv_destroy_comp_channel(ch_a);
	if (ch_b)
		ibv_destroy_comp_channel(ch_b);
}

/*
 * MRs beyond max_mr_size are refused up front (-EINVAL, logged), before
 * any page is pinned: the buffer is a reserved but untouched mapping.
 */
TEST_F_TIMEOUT(verbs, mr_limit, 120)
{
	struct ibv_device_attr d;
	size_t len;
	void *p;
	struct ibv_mr *mr;

	ASSERT_EQ(0, ibv_query_device(A.ctx, &d)) TH_LOG("ibv_query_device");
	len = d.max_mr_size + 4096;
	p = mmap(NULL, len + 4096, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p)
		TH_LOG("reserve %zu bytes of address space (%s)", len, strerror(errno));
	errno = 0;
	mr = ibv_reg_mr(A.pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_TRUE(!mr && errno == EINVAL)
	   TH_LOG("MR of max_mr_size + 4 KiB (%zu bytes) refused with EINVAL (%s)",
	   len, mr ? "registered" : strerror(errno));
	if (mr)
		ibv_dereg_mr(mr);
	munmap(p, len + 4096);
}

/* ---------------------------------------------------- address handles */

static struct ibv_ah *mk_ah(struct ibv_pd *pd, const union ibv_gid *dgid,
			    int sgid_index, int port, int global)
{
	struct ibv_ah_attr a = {
		.is_global = global, .port_num = port,
		.grh = { .dgid = *dgid, .sgid_index = sgid_index,
			 .hop_limit = 64 },
	};

	errno = 0;
	return ibv_create_ah(pd, &a);
}

static const char *ah_res(struct ibv_ah *ah)
{
	return ah ? "created" : strerror(errno);
}

static void v4_gid(union ibv_gid *g, const char *ip)
{
	memset(g, 0, sizeof(*g));
	g->raw[10] = g->raw[11] = 0xff;
	inet_pton(AF_INET, ip, &g->raw[12]);
}

TEST_F_TIMEOUT(verbs, ah, 120)
{
	union ibv_gid v6a, v6b, g;
	struct ibv_ah *ah, *ahs[64];
	struct ibv_pd *pd;
	int i6a, i6b, empty, i, n;

	ah = mk_ah(A.pd, &B.gid, A.gid_index, 1, 1);
	EXPECT_TRUE(ah != NULL) TH_LOG("AH to the peer's IPv4 GID (sgid index %d): %s",
	   A.gid_index, ah_res(ah));
	EXPECT_TRUE(!ah || ibv_destroy_ah(ah) == 0) TH_LOG("destroy the IPv4 AH");

	i6a = tu_find_v6_gid(A.ctx, &v6a);
	i6b = tu_find_v6_gid(B.ctx, &v6b);
	EXPECT_LE(0, i6a) TH_LOG("%s has a global IPv6 GID", dev_a);
	EXPECT_LE(0, i6b) TH_LOG("%s has a global IPv6 GID", dev_b);
	if (i6a >= 0 && i6b >= 0) {
		ah = mk_ah(A.pd, &v6b, i6a, 1, 1);
		EXPECT_TRUE(ah != NULL) TH_LOG("AH to the peer's IPv6 GID (sgid index %d): %s",
		   i6a, ah_res(ah));
		EXPECT_TRUE(!ah || ibv_destroy_ah(ah) == 0) TH_LOG("destroy the IPv6 AH");
		ah = mk_ah(A.pd, &v6b, A.gid_index, 1, 1);
		EXPECT_TRUE(ah == NULL) TH_LOG("AH from an IPv4 GID to an IPv6 GID is refused (%s)",
		   ah_res(ah));
		if (ah)
			ibv_destroy_ah(ah);
	}

	ah = mk_ah(A.pd, &B.gid, 200, 1, 1);
	EXPECT_TRUE(ah == NULL && errno == EINVAL)
	   TH_LOG("AH with sgid index 200 (beyond the table) gives EINVAL (%s)",
	   ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);
	empty = tu_find_empty_gid(A.ctx);
	ah = empty < 0 ? NULL : mk_ah(A.pd, &B.gid, empty, 1, 1);
	EXPECT_TRUE(empty >= 0 && ah == NULL && errno == ENODATA)
	   TH_LOG("AH with sgid index %d (no such GID) gives ENODATA (%s)", empty,
	   ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);
	ah = mk_ah(A.pd, &B.gid, A.gid_index, 2, 1);
	EXPECT_TRUE(ah == NULL && errno == EINVAL) TH_LOG("AH on port 2 gives EINVAL (%s)",
	   ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);
	ah = mk_ah(A.pd, &B.gid, A.gid_index, 1, 0);
	EXPECT_TRUE(ah == NULL && errno == EINVAL)
	   TH_LOG("AH without GRH on a RoCE port gives EINVAL (%s)", ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);
	v4_gid(&g, "239.1.2.3");
	ah = mk_ah(A.pd, &g, A.gid_index, 1, 1);
	EXPECT_TRUE(ah == NULL && errno == EOPNOTSUPP)
	   TH_LOG("AH to a multicast GID gives EOPNOTSUPP (%s)", ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);
	v4_gid(&g, "198.51.100.7");
	ah = mk_ah(A.pd, &g, A.gid_index, 1, 1);
	EXPECT_TRUE(ah == NULL) TH_LOG("AH to an unroutable IPv4 address fails (%s)",
	   ah_res(ah));
	if (ah)
		ibv_destroy_ah(ah);

	/* many AHs on their own PD; the PD is busy while they live */
	pd = ibv_alloc_pd(A.ctx);
	for (n = 0; pd && n < (int)(sizeof(ahs) / sizeof(ahs[0])); n++) {
		ahs[n] = mk_ah(pd, &B.gid, A.gid_index, 1, 1);
		if (!ahs[n])
			break;
	}
	EXPECT_TRUE(n == (int)(sizeof(ahs) / sizeof(ahs[0]))) TH_LOG("%d AHs on one PD", n);
	EXPECT_TRUE(pd && ibv_dealloc_pd(pd) == EBUSY)
	   TH_LOG("the PD of live AHs cannot be freed (EBUSY)");
	for (i = 0; i < n; i++)
		if (ibv_destroy_ah(ahs[i]))
			break;
	EXPECT_TRUE(i == n) TH_LOG("destroy %d AHs", n);
	EXPECT_TRUE(pd && ibv_dealloc_pd(pd) == 0) TH_LOG("then the PD is freed");
}

/*
 * --hold-ah: keep an AH (and its PD) alive while verbs.sh deletes the
 * device; afterwards destroying them must not fail otherwise than with
 * EIO (the core already destroyed them; gaudi_ib warns at removal if an
 * AH number was leaked).
 */
static int hold_ah(const char *dev, int gid_index, const char *peer)
{
	struct tu_side s = {};
	union ibv_gid g;
	struct ibv_ah *ah;
	char buf[64];
	int r1, r2;

	printf("TAP version 13\n");
	if (tu_open(&s, dev, gid_index, 256)) {
		tap_ok(false, "open %s", dev);
		printf("1..%d\n", tap_n);
		return 1;
	}
	v4_gid(&g, peer);
	ah = mk_ah(s.pd, &g, gid_index, 1, 1);
	tap_ok(ah != NULL, "AH on %s to %s held: %s", dev, peer, ah_res(ah));
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	r1 = ah ? ibv_destroy_ah(ah) : -1;
	ibv_destroy_cq(s.cq);
	r2 = ibv_dealloc_pd(s.pd);
	/* EIO: the core destroyed them (0 with RDMAV_ALLOW_DISASSOC_DESTROY) */
	tap_ok((r1 == 0 || r1 == EIO) && (r2 == 0 || r2 == EIO),
	   "after the device is gone: destroy AH %d, free PD %d", r1, r2);
	ibv_close_device(s.ctx);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc == 5 && !strcmp(argv[1], "--hold-ah"))
		return hold_ah(argv[2], atoi(argv[3]), argv[4]);
	if (argc != 5 && argc != 7) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [ACC_A ACC_B]\n",
			argv[0]);
		return 2;
	}
	dev_a = argv[1];
	gid_a = atoi(argv[2]);
	dev_b = argv[3];
	gid_b = atoi(argv[4]);
	if (argc == 7) {
		accel_a = atoi(argv[5]);
		accel_b = atoi(argv[6]);
	}
	return test_harness_run(1, run);
}
