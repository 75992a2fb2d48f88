/* SPDX-License-Identifier: GPL-2.0 */
/*
 * mwutil.h - the two-device setting of mw_test.c and queue_test.c: A is
 * the target, B the peer that writes; qa <-> qb is the connected RC pair
 * of the current step; A has a buffer (abuf), B a registered, patterned
 * one (bbuf, bmr).  MW_FIXTURE(name) opens both devices anew for every
 * test, in its own process; tu_two_dev_args() fills dev_a/gid_a/dev_b/
 * gid_b from the command line.
 */
#ifndef GAUDI_TESTS_MWUTIL_H
#define GAUDI_TESTS_MWUTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "testutil.h"

#define LEN	8192
#define ACC_ALL	TU_ACC_ALL

static struct tu_side A, B;
/* the connected pair of the current step: qa on A, qb on B */
static struct ibv_qp *qa, *qb;
static uint8_t *abuf, *bbuf;
static struct ibv_mr *bmr;

static inline struct ibv_qp *new_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	return tu_qp(pd, cq, IBV_QPT_RC,
		     &(struct ibv_qp_cap){ .max_send_wr = 32, .max_recv_wr = 32,
					   .max_send_sge = 2, .max_recv_sge = 2 });
}

/* @qp of @s RESET -> RTS towards QP @dqpn of @peer (PSNs 3). */
static inline int to_rts(struct tu_side *s, struct ibv_qp *qp, struct tu_side *peer,
		  uint32_t dqpn)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.psn = 3;
	return tu_qp_connect(qp, s, peer, dqpn,
			     ACC_ALL | IBV_ACCESS_FLUSH_GLOBAL, &p);
}

/* A fresh pair qa (A, in @pd_a) <-> qb (B); errors leave QPs in ERR. */
static inline int connect_in(struct ibv_pd *pd_a)
{
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	qa = new_qp(pd_a, A.cq);
	qb = new_qp(B.pd, B.cq);
	if (!qa || !qb)
		return -1;
	return to_rts(&A, qa, &B, qb->qp_num) || to_rts(&B, qb, &A, qa->qp_num);
}

static inline int reconnect(void)
{
	return connect_in(A.pd);
}

/* A new, unconnected qa (or qb), for a pair with another QP. */
static inline int fresh_qa(void)
{
	if (qa)
		ibv_destroy_qp(qa);
	qa = new_qp(A.pd, A.cq);
	return qa ? 0 : -1;
}

static inline int fresh_qb(void)
{
	if (qb)
		ibv_destroy_qp(qb);
	qb = new_qp(B.pd, B.cq);
	return qb ? 0 : -1;
}

/* One completion of @cq (10 s); its status, or -1 if none came. */
static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return tu_poll(cq, wc, 10) == 1 ? (int)wc->status : -1;
}

/* B writes 64 bytes of its buffer to @raddr of A through @rkey (on qp). */
static inline int write_via(struct ibv_qp *qp, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)bbuf, 64, bmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	return wait_wc(B.cq, &wc);
}

static inline int bwrite(uint64_t raddr, uint32_t rkey)
{
	return write_via(qb, raddr, rkey);
}

/* Post @wr on qa and wait for its completion: its status, or -1. */
static inline int a_post(struct ibv_send_wr *wr, struct ibv_wc *wc)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	if (ibv_post_send(qa, wr, &bad))
		return -1;
	return wait_wc(A.cq, wc);
}

static inline bool untouched(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++ != 0xee)
			return false;
	return true;
}

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b;

/*
 * The fixture @name (kselftest_harness.h included first): every test
 * opens both devices anew, in its own process: A with its buffer, B with
 * its registered, patterned one.
 */
#define MW_FIXTURE(name)						\
	FIXTURE(name) {};						\
	FIXTURE_SETUP(name)						\
	{								\
		abuf = aligned_alloc(4096, LEN);			\
		bbuf = aligned_alloc(4096, LEN);			\
		ASSERT_TRUE(abuf && bbuf);				\
		ASSERT_EQ(0, tu_open(&A, dev_a, gid_a, 256))		\
			TH_LOG("open %s (GID index %d): %s", dev_a,	\
			       gid_a, strerror(errno));			\
		ASSERT_EQ(0, tu_open(&B, dev_b, gid_b, 256))		\
			TH_LOG("open %s (GID index %d): %s", dev_b,	\
			       gid_b, strerror(errno));			\
		bmr = ibv_reg_mr(B.pd, bbuf, LEN, ACC_ALL);		\
		ASSERT_NE(NULL, bmr)					\
			TH_LOG("register B's buffer: %s",		\
			       strerror(errno));			\
		for (int i = 0; i < LEN; i++)				\
			bbuf[i] = (uint8_t)(i * 13 + 1);		\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
		if (qa)							\
			ibv_destroy_qp(qa);				\
		if (qb)							\
			ibv_destroy_qp(qb);				\
	}

#endif /* GAUDI_TESTS_MWUTIL_H */
