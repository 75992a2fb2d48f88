/* SPDX-License-Identifier: GPL-2.0 */
/*
 * udutil.h - user UD QPs between two gaudi_ib devices in one process, for
 * the UD tests (ud_test.c: sends, GRH, bad input, what the device lacks;
 * ud_qpex_test.c: the extended QP and CQ APIs on UD QPs): the devices A
 * and B with a registered buffer each (TX area, RX area), UD QPs with
 * their own CQs, address handles, posting and polling, and the fixture
 * every test of them runs in (FIXTURE(ud), UD_PAIR_UP()).
 *
 * usage of the programs: PROG DEV_A GID_A DEV_B GID_B (GID_*: the IPv4
 * GID indexes; the IPv6 ones are found in the GID tables); with
 * GAUDI_UD_WQE=128 in the environment the provider makes the 128-byte UD
 * WQEs of a provider from before issue 35, and the limits below follow
 * (ud_args()).
 */
#ifndef GAUDI_TESTS_UDUTIL_H
#define GAUDI_TESTS_UDUTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"

#define GRH		40
#define QKEY		0x11111111U
#define BAD_QKEY	0x22222222U
#define QKEY_USE_QP	0x80000000U
#define BUF_SIZE	(64 * 1024)
#define TX_OFF		0
#define RX_OFF		(32 * 1024)
/* the device's limits, UD's as every type's (256-byte UD WQEs, issue 35) */
#define UD_MAX_SGE	6
#define UD_MAX_INLINE	192
/*
 * The limits in use: with GAUDI_UD_WQE=128 the provider asks for the
 * 128-byte UD WQEs of a provider from before issue 35 (the kernel's
 * compatibility path), with room for 4 SGEs and 64 bytes inline.
 */
static uint32_t ud_max_sge = UD_MAX_SGE, ud_max_inline = UD_MAX_INLINE;

struct dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid4, gid6;
	int gid4_index, gid6_index;
	uint32_t mtu;		/* the port's active MTU in bytes */
};

/* A UD QP with its own send and receive CQs. */
struct uqp {
	struct dev *d;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
};

static struct dev A, B;

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b;

/* One completion of @cq within @secs seconds: 0, or -1 (none, or an error). */
static inline int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	return tu_poll(cq, wc, secs) == 1 ? 0 : -1;
}

static inline int open_dev(struct dev *d, const char *name, int gid4_index)
{
	struct ibv_port_attr pa;

	d->name = name;
	d->ctx = open_device_by_name(name);
	if (!d->ctx)
		return -1;
	d->gid4_index = gid4_index;
	if (ibv_query_gid(d->ctx, 1, gid4_index, &d->gid4) ||
	    ibv_query_port(d->ctx, 1, &pa))
		return -1;
	d->mtu = 128U << pa.active_mtu;
	d->gid6_index = tu_find_v6_gid(d->ctx, &d->gid6);
	d->pd = ibv_alloc_pd(d->ctx);
	d->buf = aligned_alloc(4096, BUF_SIZE);
	if (!d->pd || !d->buf)
		return -1;
	d->mr = ibv_reg_mr(d->pd, d->buf, BUF_SIZE, IBV_ACCESS_LOCAL_WRITE);
	return d->mr ? 0 : -1;
}

static inline int ud_create(struct uqp *u, struct dev *d,
			    uint32_t max_send_sge, uint32_t max_inline)
{
	struct ibv_qp_init_attr ia = {
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = max_send_sge, .max_recv_sge = 4,
			 .max_inline_data = max_inline },
		.qp_type = IBV_QPT_UD,
	};

	memset(u, 0, sizeof(*u));
	u->d = d;
	u->scq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	u->rcq = ibv_create_cq(d->ctx, 64, NULL, NULL, 0);
	if (!u->scq || !u->rcq)
		return -1;
	ia.send_cq = u->scq;
	ia.recv_cq = u->rcq;
	errno = 0;
	u->qp = ibv_create_qp(d->pd, &ia);
	if (!u->qp)
		return -1;
	u->cap = ia.cap;
	return 0;
}

/* INIT (port 1, Q_Key @qkey), RTR, RTS. */
static inline int ud_rts(struct uqp *u, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = qkey,
	};
	int ret;

	ret = ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(u->qp, &a, IBV_QP_STATE);
	if (ret)
		return ret;
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x123;
	return ibv_modify_qp(u->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* A UD QP in RTS, or an error printed as a failed test point. */
static inline int ud_up(struct __test_metadata *_metadata, struct uqp *u,
			struct dev *d, const char *what)
{
	int ret;

	ASSERT_EQ(0, ud_create(u, d, ud_max_sge, ud_max_inline))
		TH_LOG("%s: UD QP on %s: %s", what, d->name, strerror(errno));
	ret = ud_rts(u, QKEY);
	ASSERT_EQ(0, ret) TH_LOG("%s: UD QP %#x on %s to RTS: %s", what,
				 u->qp->qp_num, d->name, strerror(ret));
	return 0;
}

static inline void ud_destroy(struct uqp *u)
{
	if (u->qp)
		ibv_destroy_qp(u->qp);
	if (u->scq)
		ibv_destroy_cq(u->scq);
	if (u->rcq)
		ibv_destroy_cq(u->rcq);
	memset(u, 0, sizeof(*u));
}

static inline struct ibv_ah *mk_ah(struct dev *from,
				   const union ibv_gid *dgid, int sgid_index)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = *dgid, .sgid_index = sgid_index,
			 .hop_limit = 64 },
	};

	errno = 0;
	return ibv_create_ah(from->pd, &a);
}

static inline int post_rx(struct uqp *u, uint32_t len, uint64_t id)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)u->d->buf + RX_OFF, .length = len,
		.lkey = u->d->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	memset(u->d->buf + RX_OFF, 0xaa, GRH + u->d->mtu + 64);
	/* as UCX's ud_verbs (1.19 on) presets it: not 0x6? */
	u->d->buf[RX_OFF] = 0xff;
	return ibv_post_recv(u->qp, &wr, &bad);
}

/* A receive of one path MTU at @off into the receive area. */
static inline int post_rx_at(struct uqp *u, uint32_t off, uint64_t id)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)u->d->buf + RX_OFF + off,
		.length = GRH + u->d->mtu, .lkey = u->d->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(u->qp, &wr, &bad);
}

enum how { VIA_SGE, VIA_MAXSGE, VIA_INLINE };

static inline const char *how_name(enum how how)
{
	return how == VIA_INLINE ? "inline" : how == VIA_MAXSGE ? "max SGEs" :
	       "1 SGE";
}

static inline void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

/* Post one UD send of @len bytes from the sender's TX area. */
static inline int post_ud(struct uqp *u, struct ibv_ah *ah, uint32_t dqpn,
			  uint32_t qkey, enum ibv_wr_opcode op, uint32_t len,
			  enum how how, uint32_t imm, uint64_t id,
			  struct ibv_send_wr **bad)
{
	struct ibv_sge sg[UD_MAX_SGE];
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = sg, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(imm),
		.wr.ud = { .ah = ah, .remote_qpn = dqpn,
			   .remote_qkey = qkey },
	};
	uint8_t *base = u->d->buf + TX_OFF;
	uint32_t n = how == VIA_MAXSGE ? ud_max_sge : 1, i, off = 0;

	for (i = 0; i < n; i++) {
		/* uneven pieces, the last takes the rest */
		uint32_t part = i + 1 < n ? len / (n + 1) : len - off;

		sg[i].addr = (uintptr_t)base + off;
		sg[i].length = part;
		sg[i].lkey = u->d->mr->lkey;
		off += part;
	}
	wr.num_sge = len || how != VIA_SGE ? n : 0;
	if (how == VIA_INLINE)
		wr.send_flags |= IBV_SEND_INLINE;
	return ibv_post_send(u->qp, &wr, bad);
}

/*
 * wc.sl of a UD receive from @sgid: the RoCE packet type as ConnectX
 * reports it (0x8 RoCE v2, | 0x2 IPv4 or 0x1 IPv6), what UCX up to 1.18
 * takes the address family from (its destination GID check drops every
 * datagram otherwise: issue 35).
 */
static inline uint8_t roce_sl(const union ibv_gid *sgid)
{
	return tu_gid_is_v4(sgid) ? 0xa : 0x9;
}

/* Every test opens both devices anew, in its own process. */
FIXTURE(ud) {
	struct uqp a, b, a2;	/* UD QPs: two on A, one on B */
};

FIXTURE_SETUP(ud)
{
	ASSERT_EQ(0, open_dev(&A, dev_a, gid_a))
		TH_LOG("open %s (GID index %d): %s", dev_a, gid_a, strerror(errno));
	ASSERT_EQ(0, open_dev(&B, dev_b, gid_b))
		TH_LOG("open %s (GID index %d): %s", dev_b, gid_b, strerror(errno));
	TH_LOG("path MTU %u/%u, IPv6 GIDs %d/%d", A.mtu, B.mtu,
	       A.gid6_index, B.gid6_index);
}

FIXTURE_TEARDOWN(ud)
{
	ud_destroy(&self->a);
	ud_destroy(&self->b);
	ud_destroy(&self->a2);
}

/* UD QPs a (on A) and b (on B) in RTS */
#define UD_PAIR_UP() do {						\
	ASSERT_EQ(0, ud_up(_metadata, &self->a, &A, "exchange"));	\
	ASSERT_EQ(0, ud_up(_metadata, &self->b, &B, "exchange"));	\
	TH_LOG("UD QPs %#x on %s and %#x on %s in RTS",			\
	       self->a.qp->qp_num, A.name, self->b.qp->qp_num, B.name);	\
} while (0)

/* UD_PAIR_UP(), and @ah: an AH on A to B's IPv4 GID */
#define UD_PAIR_AH(ah) do {						\
	UD_PAIR_UP();							\
	(ah) = mk_ah(&A, &B.gid4, A.gid4_index);			\
	ASSERT_NE(NULL, (ah)) TH_LOG("AH %s -> %s: %s", A.name, B.name,	\
				     strerror(errno));			\
} while (0)

/*
 * The command line (DEV_A GID_A DEV_B GID_B) and GAUDI_UD_WQE: 0, or 2
 * after a usage message.  *@wqe128: the 128-byte UD WQEs are in use.
 */
static inline int ud_args(int argc, char **argv, bool *wqe128)
{
	const char *fmt = getenv("GAUDI_UD_WQE");

	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	*wqe128 = fmt && !strcmp(fmt, "128");
	if (*wqe128) {
		ud_max_sge = 4;
		ud_max_inline = 64;
	}
	return 0;
}

#endif /* GAUDI_TESTS_UDUTIL_H */
