/* SPDX-License-Identifier: GPL-2.0 */
/*
 * testutil.h - what the RDMA test programs share.  The tests proper are
 * kselftests (kselftest_harness.h, included first): a check is EXPECT_*()
 * or ASSERT_*(); verbs_fuzz, one run rather than a set of tests, reports
 * through kselftest.h's ksft_test_result_*().  tap_ok() is plain TAP for
 * what runs outside the harness (verbs_test --hold-ah): it prints one
 * numbered point and counts failures.  A kselftest has no ok(), so a
 * check written the old way does not build.
 *
 * The tu_*() helpers build what every two-device test starts from: a
 * device with its PD, CQ and port 1's GID (struct tu_side), QPs, and the
 * RC state changes RESET -> INIT -> RTR -> RTS towards a peer's QP with
 * the path a test asks for (struct tu_path).  They return 0 or an errno
 * (as ibv_modify_qp() does) and do not report: the caller ASSERTs or
 * EXPECTs.  All static inline, so a program that includes this header
 * needs no extra source.
 */
#ifndef GAUDI_RDMA_TESTUTIL_H
#define GAUDI_RDMA_TESTUTIL_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

static int tap_n, tap_failed;

static inline void tap_ok(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

#ifndef __KSELFTEST_HARNESS_H
#define ok tap_ok
#endif

/* The verbs device called @name, opened; NULL if there is none. */
static inline struct ibv_context *open_device_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#define TU_ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ)

/*
 * One end of a test's connections.  tu_open() fills ctx, pd, cq, gid and
 * gid_index; the rest is the test's own (its QP, MR, buffer, a name for
 * messages).
 */
struct tu_side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/* Open @dev, read GID @gid_index of port 1, make a PD and a CQ of @cqe. */
static inline int tu_open(struct tu_side *s, const char *dev, int gid_index,
			  int cqe)
{
	s->ctx = open_device_by_name(dev);
	if (!s->ctx)
		return errno ?: ENODEV;
	s->gid_index = gid_index;
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid))
		return errno ?: EINVAL;
	s->pd = ibv_alloc_pd(s->ctx);
	if (!s->pd)
		return errno ?: ENOMEM;
	s->cq = ibv_create_cq(s->ctx, cqe, NULL, NULL, 0);
	return s->cq ? 0 : errno ?: ENOMEM;
}

/* A QP of @type in @pd, both queues on @cq, with @cap. */
static inline struct ibv_qp *tu_qp(struct ibv_pd *pd, struct ibv_cq *cq,
				   enum ibv_qp_type type,
				   const struct ibv_qp_cap *cap)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .cap = *cap, .qp_type = type,
	};

	return ibv_create_qp(pd, &ia);
}

/* One receive work request @id of @nsge SGEs from @sg on @qp. */
static inline int tu_post_recv(struct ibv_qp *qp, struct ibv_sge *sg,
			       int nsge, uint64_t id)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg,
				  .num_sge = nsge }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* RESET -> INIT on port 1, P_Key index 0, remote @access. */
static inline int tu_qp_init(struct ibv_qp *qp, unsigned int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* What an RC connection is given on its way to RTS (both PSNs are psn). */
struct tu_path {
	enum ibv_mtu mtu;
	uint32_t psn;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint8_t max_rd_atomic, max_dest_rd_atomic;
};

/* MTU 1024, ACK timeout 14 (67 ms), 7 retries, 4 READs each way */
#define TU_PATH_DEFAULT ((struct tu_path){ \
	.mtu = IBV_MTU_1024, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7, \
	.min_rnr_timer = 1, .max_rd_atomic = 4, .max_dest_rd_atomic = 4 })

/* INIT -> RTR -> RTS of @qp on @s towards QP @dqpn on @peer, over @p. */
static inline int tu_qp_rtr_rts(struct ibv_qp *qp, const struct tu_side *s,
				const struct tu_side *peer, uint32_t dqpn,
				const struct tu_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = p->mtu,
		.dest_qp_num = dqpn, .rq_psn = p->psn,
		.max_dest_rd_atomic = p->max_dest_rd_atomic,
		.min_rnr_timer = p->min_rnr_timer,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .hop_limit = 64,
				      .sgid_index = s->gid_index } },
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry_cnt;
	a.rnr_retry = p->rnr_retry;
	a.sq_psn = p->psn;
	a.max_rd_atomic = p->max_rd_atomic;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> RTS in one go: tu_qp_init(), then tu_qp_rtr_rts(). */
static inline int tu_qp_connect(struct ibv_qp *qp, const struct tu_side *s,
				const struct tu_side *peer, uint32_t dqpn,
				unsigned int access, const struct tu_path *p)
{
	return tu_qp_init(qp, access) ?: tu_qp_rtr_rts(qp, s, peer, dqpn, p);
}

/*
 * The command line of a two-device harness test: DEV_A GID_A DEV_B GID_B.
 * Returns 0, or 2 (the exit status) after printing the usage.
 */
static inline int tu_two_dev_args(int argc, char **argv, const char **dev_a,
				  int *gid_a, const char **dev_b, int *gid_b)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n", argv[0]);
		return 2;
	}
	*dev_a = argv[1];
	*gid_a = atoi(argv[2]);
	*dev_b = argv[3];
	*gid_b = atoi(argv[4]);
	return 0;
}

/* The number in the file at @path (sysfs), or -1. */
static inline long long tu_read_ll(const char *path)
{
	long long v = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* /sys/class/infiniband/DEV/ports/1/hw_counters/NAME, or -1. */
static inline long long tu_hw_counter(const char *dev, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", dev, name);
	return tu_read_ll(path);
}

/* CLOCK_MONOTONIC in seconds */
static inline double tu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Poll @cq for one completion for up to @secs: 1 with it in @wc, 0 if
 * none came, negative if polling failed.
 */
static inline int tu_poll(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = tu_now() + secs;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (tu_now() >= end)
			return 0;
		usleep(100);
	}
}

/*
 * The doorbell of user QP @qp, rung by hand: POST_SEND through the
 * write() ABI with one empty work request (through @ah on a UD QP, where
 * the core looks the AH up; NULL otherwise).  gaudi_ib only rings the
 * engine, which reads the ring: a test that wrote the ring itself rings
 * with this, where the provider would publish its own producer index.
 */
static inline int tu_raw_doorbell(struct ibv_qp *qp, struct ibv_ah *ah)
{
	struct ib_uverbs_cmd_hdr h = { .command = IB_USER_VERBS_CMD_POST_SEND };
	struct ib_uverbs_post_send c = {};
	struct ib_uverbs_send_wr wr = {};
	struct ib_uverbs_post_send_resp r = {};
	uint8_t buf[sizeof(h) + sizeof(c) + sizeof(wr)];

	h.in_words = sizeof(buf) / 4;
	h.out_words = sizeof(r) / 4;
	c.response = (uintptr_t)&r;
	c.qp_handle = qp->handle;
	c.wr_count = 1;
	c.wqe_size = sizeof(wr);
	wr.opcode = IB_UVERBS_WR_SEND;
	if (ah)
		wr.wr.ud.ah = ah->handle;
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &c, sizeof(c));
	memcpy(buf + sizeof(h) + sizeof(c), &wr, sizeof(wr));
	if (write(qp->context->cmd_fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return errno;
	return 0;
}

/* Whether @g is an IPv4-mapped GID (::ffff:a.b.c.d). */
static inline bool tu_gid_is_v4(const union ibv_gid *g)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, pfx, sizeof(pfx));
}

/* Index of the first RoCE v2 global IPv6 GID of port 1 (in @gid), or -1. */
static inline int tu_find_v6_gid(struct ibv_context *ctx, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len; i++) {
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2 || tu_gid_is_v4(&e.gid) ||
		    (e.gid.raw[0] == 0xfe && (e.gid.raw[1] & 0xc0) == 0x80))
			continue;
		*gid = e.gid;
		return i;
	}
	return -1;
}

/* Index of an unused GID table entry of port 1, or -1. */
static inline int tu_find_empty_gid(struct ibv_context *ctx)
{
	struct ibv_port_attr pa;
	struct ibv_gid_entry e;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (i = pa.gid_tbl_len - 1; i >= 0; i--)
		if (ibv_query_gid_ex(ctx, 1, i, &e, 0))
			return i;
	return -1;
}

#endif
