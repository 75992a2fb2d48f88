/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pairutil.h - two gaudi_ib devices in one process and RC pairs between
 * them, for the tests that need both ends in hand (hardening_test.c,
 * rewrite_test.c, limits_test.c): each opens A and B in its fixture
 * (PAIR_FIXTURE), from the command line's DEV_A GID_A DEV_B GID_B
 * (pair_args()).
 */
#ifndef GAUDI_TESTS_PAIRUTIL_H
#define GAUDI_TESTS_PAIRUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "testutil.h"

static struct tu_side A, B;

/* from the command line */
static const char *dev_a_name, *dev_b_name;
static int gid_a, gid_b;
/* what to_rts() sets: the responder resources and the path MTU */
static int dest_rd_atomic = 4;
static enum ibv_mtu path_mtu = IBV_MTU_1024;

static inline int open_side(struct tu_side *s, const char *name,
			    int gid_index)
{
	return tu_open(s, name, gid_index, 64) ? -1 : 0;
}

/*
 * The fixture @name of a two-device test (kselftest_harness.h included
 * first): every test opens A and B anew, in its own process.
 */
#define PAIR_FIXTURE(name)						\
	FIXTURE(name) {};						\
	FIXTURE_SETUP(name)						\
	{								\
		ASSERT_EQ(0, open_side(&A, dev_a_name, gid_a))		\
			TH_LOG("open %s (GID index %d): %s", dev_a_name,	\
			       gid_a, strerror(errno));			\
		ASSERT_EQ(0, open_side(&B, dev_b_name, gid_b))		\
			TH_LOG("open %s (GID index %d): %s", dev_b_name,	\
			       gid_b, strerror(errno));			\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
	}

/* DEV_A GID_A DEV_B GID_B from argv[1..4]; 0, or -1 if too few. */
static inline int pair_args(int argc, char **argv)
{
	if (argc < 5)
		return -1;
	dev_a_name = argv[1];
	gid_a = atoi(argv[2]);
	dev_b_name = argv[3];
	gid_b = atoi(argv[4]);
	return 0;
}

static inline struct ibv_qp *new_qp(struct tu_side *s)
{
	return tu_qp(s->pd, s->cq, IBV_QPT_RC,
		     &(struct ibv_qp_cap){ .max_send_wr = 16, .max_recv_wr = 16,
					   .max_send_sge = 6, .max_recv_sge = 6 });
}

#define ACC_ALL TU_ACC_ALL

static inline int to_init(struct ibv_qp *qp)
{
	return tu_qp_init(qp, ACC_ALL);
}

/*
 * INIT -> RTR -> RTS towards @peer's QP @dqpn.  ACK timeout 16 (about
 * 270 ms) and 7 retries: the peer has a couple of seconds to come up.
 */
static inline int to_rts(struct tu_side *s, struct ibv_qp *qp,
			 struct tu_side *peer, uint32_t dqpn)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.mtu = path_mtu;
	p.psn = 100;
	p.timeout = 16;
	p.max_dest_rd_atomic = dest_rd_atomic;
	return tu_qp_rtr_rts(qp, s, peer, dqpn, &p);
}

static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	return tu_poll(cq, wc, secs) == 1 ? 0 : -1;
}

static inline void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

/* Destroy the QPs, drain both CQs, free the MRs and their buffers. */
static inline void release(struct ibv_qp *const *qps, int nqps,
			   struct ibv_mr *ma, struct ibv_mr *mb, void *a, void *b)
{
	struct ibv_wc wc;
	int i;

	for (i = 0; i < nqps; i++)
		if (qps[i])
			ibv_destroy_qp(qps[i]);
	while (ibv_poll_cq(A.cq, 1, &wc) > 0 || ibv_poll_cq(B.cq, 1, &wc) > 0)
		;
	if (ma)
		ibv_dereg_mr(ma);
	if (mb)
		ibv_dereg_mr(mb);
	free(a);
	free(b);
}

/* Hardware counter @name of port 1 of @s, or -1. */
static inline long long hw_counter(struct tu_side *s, const char *name)
{
	return tu_hw_counter(ibv_get_device_name(s->ctx->device), name);
}

/*
 * A connected pair of QPs made by @mk, A's to B's; false if it could not
 * be made.
 */
static inline bool connect_pair_with(struct ibv_qp *(*mk)(struct tu_side *),
				     struct ibv_qp **qa, struct ibv_qp **qb)
{
	*qa = mk(&A);
	*qb = mk(&B);
	return *qa && *qb && !to_init(*qa) && !to_init(*qb) &&
	       !to_rts(&A, *qa, &B, (*qb)->qp_num) &&
	       !to_rts(&B, *qb, &A, (*qa)->qp_num);
}

static inline bool connect_pair(struct ibv_qp **qa, struct ibv_qp **qb)
{
	return connect_pair_with(new_qp, qa, qb);
}

/* A WRITE of 64 bytes from @from to @to's buffer; true if it arrived. */
static inline bool write_ok(struct tu_side *s, struct ibv_qp *qp,
			    struct ibv_mr *src, struct ibv_mr *dst,
			    unsigned int seed)
{
	struct ibv_sge sg = { (uintptr_t)src->addr, 64, src->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 77, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)dst->addr,
			     .rkey = dst->rkey },
	}, *bad;
	struct ibv_wc wc;

	fill(src->addr, 64, seed);
	memset(dst->addr, 0, 64);
	return !ibv_post_send(qp, &wr, &bad) && !wait_wc(s->cq, &wc, 20) &&
	       wc.status == IBV_WC_SUCCESS && !memcmp(src->addr, dst->addr, 64);
}

#endif /* GAUDI_TESTS_PAIRUTIL_H */
