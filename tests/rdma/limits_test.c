// SPDX-License-Identifier: GPL-2.0
/*
 * limits_test - what one process may take of a gaudi_ib device: the
 * per-context limits (the device's max_*_per_ctx devlink params), their
 * defaults and the ids kept for kernel consumers (N2 of the November
 * review), the ring memory limit; and the helpers hardening.sh runs in
 * rdma and memory cgroups (exhaust, bigcq, manymr).
 *
 * usage: limits_test DEV_A GID_A DEV_B GID_B
 *        limits_test exhaust|bigcq|manymr DEV N HOLD_SECS
 * A kselftest (kselftest_harness.h): one test per area, each in its own
 * process with both devices opened anew; output KTAP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "devlink_param.h"
#include "kselftest_harness.h"
#include "pairutil.h"

PAIR_FIXTURE(limits)

/*
 * Per-context limits (the devlink params max_<kind>_per_ctx of the device
 * DEV_A belongs to).  For each kind of object, with its limit lowered to
 * LIM_N: a context stops at the limit with EDQUOT; meanwhile another
 * process (a fork, with its own context) creates its own LIM_N and, for
 * QPs, connects a pair and carries a WRITE; once the first context frees
 * one object it can create one again.  The ring memory limit the same
 * way with CQ rings of 4 and 8 MiB.  A limit is the device's: DEV_B's
 * contexts do not feel DEV_A's.  Bad values for a parameter are refused
 * and leave it as it was.  Every parameter is given back its value.
 */
#define LIM_N		3

enum lim_kind {
	LIM_PD, LIM_CQ, LIM_QP, LIM_SRQ, LIM_MR, LIM_AH, LIM_MW, LIM_DM,
	LIM_KINDS
};

static const char *const lim_param[LIM_KINDS] = {
	"max_pd_per_ctx", "max_cq_per_ctx", "max_qp_per_ctx",
	"max_srq_per_ctx", "max_mr_per_ctx", "max_ah_per_ctx",
	"max_mw_per_ctx", "max_dm_per_ctx",
};

/* The devlink handle of RDMA device @ibdev (its aux device's parent). */
static int lim_handle(const char *ibdev, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device", ibdev);
	return dl_handle(path, 1, buf, len);
}

/* Read DEV_A's parameter @name into @buf; 0 or -1 (errno set). */
static int param_get(const char *name, char *buf, size_t len)
{
	char handle[128];

	if (lim_handle(dev_a_name, handle, sizeof(handle)))
		return -1;
	return dl_param_get(handle, name, buf, len);
}

/* Set DEV_A's parameter @name to @val (a literal); 0 or the errno. */
static int param_set(const char *name, const char *val)
{
	char handle[128];

	if (lim_handle(dev_a_name, handle, sizeof(handle)))
		return ENODEV;
	return dl_param_set(handle, name, val);
}

/* A context of its own on device A, with the PD and CQ objects need. */
struct lim_ctx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	void *buf;
};

static int lim_open_on(struct lim_ctx *c, const char *ibdev)
{
	memset(c, 0, sizeof(*c));
	c->ctx = open_device_by_name(ibdev);
	c->buf = aligned_alloc(4096, 4096);
	if (!c->ctx || !c->buf)
		return -1;
	c->pd = ibv_alloc_pd(c->ctx);
	c->cq = ibv_create_cq(c->ctx, 4, NULL, NULL, 0);
	return c->pd && c->cq ? 0 : -1;
}

static int lim_open(struct lim_ctx *c)
{
	return lim_open_on(c, dev_a_name);
}

static void lim_close(struct lim_ctx *c)
{
	if (c->cq)
		ibv_destroy_cq(c->cq);
	if (c->pd)
		ibv_dealloc_pd(c->pd);
	if (c->ctx)
		ibv_close_device(c->ctx);
	free(c->buf);
}

/* The objects of @kind that lim_open() made already: they count too. */
static int lim_base(enum lim_kind kind)
{
	return kind == LIM_PD || kind == LIM_CQ;
}

/* One object of @kind in @c, or NULL with errno set. */
static void *lim_create(struct lim_ctx *c, enum lim_kind kind)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = c->cq, .recv_cq = c->cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = B.gid, .sgid_index = A.gid_index,
			 .hop_limit = 64 },
	};

	errno = 0;
	switch (kind) {
	case LIM_PD:
		return ibv_alloc_pd(c->ctx);
	case LIM_CQ:
		return ibv_create_cq(c->ctx, 4, NULL, NULL, 0);
	case LIM_QP:
		return ibv_create_qp(c->pd, &qa);
	case LIM_SRQ:
		return ibv_create_srq(c->pd, &sa);
	case LIM_MR:
		return ibv_reg_mr(c->pd, c->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	case LIM_AH:
		return ibv_create_ah(c->pd, &aa);
	case LIM_MW:
		return ibv_alloc_mw(c->pd, IBV_MW_TYPE_1);
	case LIM_DM:
		return ibv_alloc_dm(c->ctx,
				    &(struct ibv_alloc_dm_attr){ .length = 4096 });
	default:
		return NULL;
	}
}

static void lim_destroy(enum lim_kind kind, void *o)
{
	switch (kind) {
	case LIM_PD:
		ibv_dealloc_pd(o);
		break;
	case LIM_CQ:
		ibv_destroy_cq(o);
		break;
	case LIM_QP:
		ibv_destroy_qp(o);
		break;
	case LIM_SRQ:
		ibv_destroy_srq(o);
		break;
	case LIM_MR:
		ibv_dereg_mr(o);
		break;
	case LIM_AH:
		ibv_destroy_ah(o);
		break;
	case LIM_MW:
		ibv_dealloc_mw(o);
		break;
	case LIM_DM:
		ibv_free_dm(o);
		break;
	default:
		break;
	}
}

/*
 * Create objects of @kind in @c until one fails (at most @max) into @o;
 * returns how many, with the errno of the failure in *@err (0: none).
 */
static int lim_fill(struct lim_ctx *c, enum lim_kind kind, void **o, int max,
		    int *err)
{
	int n;

	*err = 0;
	for (n = 0; n < max; n++) {
		o[n] = lim_create(c, kind);
		if (!o[n]) {
			*err = errno;
			break;
		}
	}
	return n;
}

/*
 * The other process: a context of its own takes its full share of @kind
 * and hits the same limit; for QPs, fresh contexts on both devices
 * connect a pair and carry a WRITE.  Exit status 0 if all of that held.
 */
static int lim_child(enum lim_kind kind)
{
	void *o[LIM_N + 1];
	struct lim_ctx c;
	int n, err, want = LIM_N - lim_base(kind), ret = 1;

	if (lim_open(&c))
		goto out;
	n = lim_fill(&c, kind, o, want + 1, &err);
	if (n == want && err == EDQUOT)
		ret = 0;
	else
		printf("# child: %d %s, %s\n", n, lim_param[kind],
		       strerror(err));
	while (n-- > 0)
		lim_destroy(kind, o[n]);
	if (!ret && kind == LIM_QP) {
		uint8_t *a = aligned_alloc(4096, 4096);
		uint8_t *b = aligned_alloc(4096, 4096);
		struct ibv_qp *qa = NULL, *qb = NULL;
		struct ibv_mr *ma, *mb;

		/* this process's own contexts, not the parent's */
		ret = 1;
		if (open_side(&A, dev_a_name, A.gid_index) ||
		    open_side(&B, dev_b_name, B.gid_index) || !a || !b)
			goto out;
		ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
		mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
		if (ma && mb && connect_pair(&qa, &qb) &&
		    write_ok(&A, qa, ma, mb, 3))
			ret = 0;
		else
			printf("# child: no WRITE over a new QP pair\n");
		release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
	}
out:
	lim_close(&c);
	return ret;
}

static void test_limit_kind(struct __test_metadata *_metadata, enum lim_kind kind)
{
	const char *param = lim_param[kind];
	int n, err, status = -1, want = LIM_N - lim_base(kind);
	void *o[LIM_N + 1];
	char saved[32], val[32];
	struct lim_ctx c;
	bool again;
	pid_t pid;

	ASSERT_EQ(0, param_get(param, saved, sizeof(saved)))
		TH_LOG("%s: read it with devlink dev param show (%s)", param, strerror(errno));
	snprintf(val, sizeof(val), "%d", LIM_N);
	err = param_set(param, val);
	ASSERT_EQ(0, err) TH_LOG("%s: set it to %d (%s)", param, LIM_N, strerror(err));
	/* from here on the parameter is restored before any return */
	err = lim_open(&c) ? (errno ?: EIO) : 0;
	EXPECT_EQ(0, err)
		TH_LOG("%s: open a context on %s (%s)", param, dev_a_name, strerror(err));
	if (err)
		goto out;
	n = lim_fill(&c, kind, o, want + 1, &err);
	EXPECT_TRUE(n == want && err == EDQUOT)
	   TH_LOG("%s=%d: a context creates %d more and the next fails with EDQUOT (%d, %s)",
	   param, LIM_N, want, n, strerror(err));

	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(lim_child(kind));
	if (pid > 0)
		waitpid(pid, &status, 0);
	EXPECT_TRUE(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
	   TH_LOG("%s: meanwhile another process's context creates its own %d%s",
	   param, want, kind == LIM_QP ? " and carries a WRITE over a new pair" : "");

	again = false;
	if (n > 0) {
		lim_destroy(kind, o[--n]);
		o[n] = lim_create(&c, kind);
		again = o[n] != NULL;
		if (again)
			n++;
	}
	EXPECT_TRUE(again) TH_LOG("%s: after freeing one, the context creates one again (%s)",
	   param, again ? "yes" : strerror(errno));
	while (n-- > 0)
		lim_destroy(kind, o[n]);
out:
	lim_close(&c);
	err = param_set(param, saved);
	EXPECT_EQ(0, err) TH_LOG("%s: restore %s (%s)", param, saved, strerror(err));
}

TEST_F_TIMEOUT(limits, limits, 120)
{
	int kind;

	for (kind = 0; kind < LIM_KINDS; kind++)
		test_limit_kind(_metadata, kind);
}

/*
 * N2 of the November review: with the default limits one context took
 * every memory window of the device (4096), and two every QP.  Now a
 * context stops at its default share of windows with EDQUOT, well short
 * of the device's space, and another process still gets windows.
 */
TEST_F_TIMEOUT(limits, limit_defaults, 120)
{
	struct ibv_device_attr da = {};
	struct lim_ctx c, c2;
	char val[32];
	void **o = NULL;
	int n = 0, err = 0, status = -1, lim;
	pid_t pid;

	ASSERT_EQ(0, param_get("max_mw_per_ctx", val, sizeof(val)))
		TH_LOG("max_mw_per_ctx: read it (%s)", strerror(errno));
	lim = atoi(val);
	ASSERT_TRUE(!lim_open(&c) && !ibv_query_device(c.ctx, &da))
		TH_LOG("open a context on %s (%s)", dev_a_name, strerror(errno));
	o = calloc(da.max_mw + 1, sizeof(*o));
	ASSERT_NE(NULL, o);
	n = lim_fill(&c, LIM_MW, o, da.max_mw + 1, &err);
	EXPECT_TRUE(lim > 0 && n == lim && err == EDQUOT && n <= da.max_mw / 8)
	   TH_LOG("with the default max_mw_per_ctx (%d) a context gets %d of the device's %d windows, then EDQUOT (%s)",
	   lim, n, da.max_mw, strerror(err));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		void *mw;

		if (lim_open(&c2))
			_exit(2);
		mw = lim_create(&c2, LIM_MW);
		if (!mw)
			printf("# child: %s\n", strerror(errno));
		_exit(mw ? 0 : 1);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	EXPECT_TRUE(pid > 0 && WIFEXITED(status) && !WEXITSTATUS(status))
	   TH_LOG("meanwhile another process allocates a window");
	while (n-- > 0)
		lim_destroy(LIM_MW, o[n]);
	free(o);
	lim_close(&c);
}

/*
 * The kernel's reserve: with max_qp_per_ctx lifted, user contexts
 * together get every QP number but the lowest, which kernel consumers
 * keep; then a kernel ULP (gaudi_nic_test_kulp.ko, $KULP_KO) still
 * creates its QPs and CQs.  Before N2's fix user contexts could take
 * every number, and the kernel's next QP (QP1 of a new port, rdma_cm's)
 * failed.
 */
TEST_F_TIMEOUT(limits, limit_reserve, 180)
{
	const char *ko = getenv("KULP_KO");
	struct ibv_device_attr da = {};
	char saved[32], cmd[512];
	void **o = NULL;
	int n = 0, err = 0, rc;
	struct lim_ctx c;

	if (!ko || access(ko, R_OK))
		SKIP(return, "KULP_KO (gaudi_nic_test_kulp.ko) not given: hardening.sh sets it");
	ASSERT_EQ(0, param_get("max_qp_per_ctx", saved, sizeof(saved)));
	ASSERT_EQ(0, param_set("max_qp_per_ctx", "0"));
	/* from here on the parameter is restored before any return */
	if (lim_open(&c) || ibv_query_device(c.ctx, &da) ||
	    !(o = calloc(da.max_qp + 1, sizeof(*o)))) {
		EXPECT_TRUE(0) TH_LOG("open a context on %s (%s)", dev_a_name,
				      strerror(errno));
		goto out;
	}
	n = lim_fill(&c, LIM_QP, o, da.max_qp + 1, &err);
	EXPECT_TRUE(n > 0 && n < da.max_qp && err)
	   TH_LOG("with no per-context limit a context gets %d of the device's %d QPs, then %s",
	   n, da.max_qp, strerror(err));
	snprintf(cmd, sizeof(cmd),
		 "insmod %s ibdev=%s 2>&1 && rmmod gaudi_nic_test_kulp",
		 ko, dev_a_name);
	fflush(stdout);
	rc = system(cmd);
	EXPECT_EQ(0, rc)
	   TH_LOG("meanwhile a kernel ULP creates its CQs and QPs (insmod gaudi_nic_test_kulp: status %d)",
	   rc);
out:
	while (n-- > 0)
		lim_destroy(LIM_QP, o[n]);
	free(o);
	lim_close(&c);
	err = param_set("max_qp_per_ctx", saved);
	EXPECT_EQ(0, err) TH_LOG("max_qp_per_ctx: restore %s (%s)", saved, strerror(err));
}

/* The ring memory limit: CQ rings of 4 MiB + a page and 8 MiB + a page. */
TEST_F_TIMEOUT(limits, limit_rings, 120)
{
	const char *param = "max_ring_mb_per_ctx";
	struct ibv_cq *big = NULL, *half = NULL, *half2 = NULL;
	char saved[32];
	struct lim_ctx c;
	int err, err2;

	ASSERT_EQ(0, param_get(param, saved, sizeof(saved)))
		TH_LOG("%s: read it (%s)", param, strerror(errno));
	err = param_set(param, "8");
	ASSERT_EQ(0, err) TH_LOG("%s: set it to 8 (%s)", param, strerror(err));
	/* from here on the parameter is restored before any return */
	err = lim_open(&c) ? (errno ?: EIO) : 0;
	EXPECT_EQ(0, err) TH_LOG("%s: open a context (%s)", param, strerror(err));
	if (err)
		goto out;
	/* 2^18 CQEs of 32 bytes and the ring's header page: 8 MiB + 4 KiB */
	big = ibv_create_cq(c.ctx, 1 << 18, NULL, NULL, 0);
	err = errno;
	half = ibv_create_cq(c.ctx, 1 << 17, NULL, NULL, 0);
	half2 = ibv_create_cq(c.ctx, 1 << 17, NULL, NULL, 0);
	err2 = errno;
	EXPECT_TRUE(!big && err == EDQUOT && half && !half2 && err2 == EDQUOT)
	   TH_LOG("%s=8: an 8 MiB CQ ring is refused with EDQUOT (%s), one of 4 MiB fits (%s), a second does not (%s)",
	   param, big ? "created" : strerror(err), half ? "yes" : "no",
	   half2 ? "created" : strerror(err2));
	if (half) {
		ibv_destroy_cq(half);
		half = ibv_create_cq(c.ctx, 1 << 17, NULL, NULL, 0);
	}
	EXPECT_TRUE(half) TH_LOG("%s: after destroying it, a 4 MiB CQ fits again", param);
	if (half)
		ibv_destroy_cq(half);
	if (half2)
		ibv_destroy_cq(half2);
	if (big)
		ibv_destroy_cq(big);
out:
	lim_close(&c);
	err = param_set(param, saved);
	EXPECT_EQ(0, err) TH_LOG("%s: restore %s (%s)", param, saved, strerror(err));
}

/*
 * A limit is the device's: with DEV_A's max_qp_per_ctx at LIM_N, a
 * context on DEV_B, another device, still creates LIM_N + 1 QPs.  (They
 * were module parameters, one value for every device, before issue 34.)
 */
TEST_F_TIMEOUT(limits, limit_per_device, 120)
{
	char ha[128] = "", hb[128] = "", saved[32], val[32];
	void *o[LIM_N + 1];
	int n = 0, err = 0;
	struct lim_ctx c;

	lim_handle(dev_a_name, ha, sizeof(ha));
	lim_handle(dev_b_name, hb, sizeof(hb));
	ASSERT_TRUE(ha[0] && hb[0] && strcmp(ha, hb))
		TH_LOG("%s and %s are functions of two devices (%s, %s)",
		       dev_a_name, dev_b_name, ha, hb);
	ASSERT_EQ(0, param_get("max_qp_per_ctx", saved, sizeof(saved)))
		TH_LOG("max_qp_per_ctx of %s: read it (%s)", ha, strerror(errno));
	snprintf(val, sizeof(val), "%d", LIM_N);
	ASSERT_EQ(0, param_set("max_qp_per_ctx", val));
	/* from here on the parameter is restored before any return */
	if (!lim_open_on(&c, dev_b_name))
		n = lim_fill(&c, LIM_QP, o, LIM_N + 1, &err);
	EXPECT_EQ(LIM_N + 1, n)
	   TH_LOG("max_qp_per_ctx %d on %s: a context on %s (%s) creates %d QPs, got %d (%s)",
	   LIM_N, ha, dev_b_name, hb, LIM_N + 1, n, strerror(err));
	while (n-- > 0)
		lim_destroy(LIM_QP, o[n]);
	lim_close(&c);
	err = param_set("max_qp_per_ctx", saved);
	EXPECT_EQ(0, err) TH_LOG("max_qp_per_ctx: restore %s (%s)", saved, strerror(err));
}

/*
 * Values that are not a u32 are refused (by devlink: the kernel takes the
 * value as a u32 attribute) and change nothing.
 */
TEST_F_TIMEOUT(limits, limit_bad_values, 120)
{
	static const char *const bad[] = { "-1", "abc", "4294967296", "12abc" };
	char before[32], after[32];
	unsigned int i, refused = 0;

	ASSERT_EQ(0, param_get("max_qp_per_ctx", before, sizeof(before)))
		TH_LOG("max_qp_per_ctx: read it (%s)", strerror(errno));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		refused += param_set("max_qp_per_ctx", bad[i]) != 0;
	EXPECT_TRUE(refused == i && !param_get("max_qp_per_ctx", after, sizeof(after)) &&
	   !strcmp(before, after))
	   TH_LOG("max_qp_per_ctx: -1, abc, 2^32 and 12abc are refused (%u of %u), the value stays %s (%s)",
	   refused, i, before, after);
}

/*
 * "exhaust DEV N HOLD": allocate up to N PDs on DEV, print how many and
 * the error that stopped them, hold them HOLD seconds.  The per-process
 * limit test runs it inside and outside an rdma cgroup.
 */
static int exhaust(const char *name, int n, int hold)
{
	struct ibv_context *ctx = open_device_by_name(name);
	struct ibv_pd **pds = calloc(n, sizeof(*pds));
	int i, err = 0;

	if (!ctx || !pds) {
		printf("exhaust: cannot open %s\n", name);
		return 1;
	}
	for (i = 0; i < n; i++) {
		pds[i] = ibv_alloc_pd(ctx);
		if (!pds[i]) {
			err = errno;
			break;
		}
	}
	printf("objects %d errno %d (%s)\n", i, err, err ? strerror(err) : "none");
	fflush(stdout);
	sleep(hold);
	while (i-- > 0)
		ibv_dealloc_pd(pds[i]);
	free(pds);
	ibv_close_device(ctx);
	return 0;
}

/*
 * "bigcq DEV N HOLD": create N CQs of 2^18 CQEs (8 MiB rings) on DEV,
 * print how many, hold them HOLD seconds.  hardening.sh runs it in a
 * memory cgroup and reads what the rings cost the cgroup.
 */
static int bigcq(const char *name, int n, int hold)
{
	struct ibv_context *ctx = open_device_by_name(name);
	struct ibv_cq **cqs = calloc(n, sizeof(*cqs));
	int i, err = 0;

	if (!ctx || !cqs) {
		printf("bigcq: cannot open %s\n", name);
		return 1;
	}
	for (i = 0; i < n; i++) {
		cqs[i] = ibv_create_cq(ctx, 1 << 18, NULL, NULL, 0);
		if (!cqs[i]) {
			err = errno;
			break;
		}
	}
	printf("cqs %d errno %d (%s)\n", i, err, err ? strerror(err) : "none");
	fflush(stdout);
	sleep(hold);
	while (i-- > 0)
		ibv_destroy_cq(cqs[i]);
	free(cqs);
	ibv_close_device(ctx);
	return 0;
}

/*
 * "manymr DEV N HOLD": register one 8 MiB buffer N times on DEV, print
 * how many, hold them HOLD seconds.  hardening.sh runs it in a memory
 * cgroup: the engine's page array of each MR (16 KiB here) is charged
 * there (N3 of the November review).
 */
static int manymr(const char *name, int n, int hold)
{
	struct ibv_context *ctx = open_device_by_name(name);
	struct ibv_mr **mrs = calloc(n, sizeof(*mrs));
	size_t len = 8 << 20;
	void *buf = aligned_alloc(4096, len);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	int i, err = 0;

	if (!pd || !mrs || !buf) {
		printf("manymr: cannot open %s\n", name);
		return 1;
	}
	memset(buf, 1, len);
	for (i = 0; i < n; i++) {
		mrs[i] = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[i]) {
			err = errno;
			break;
		}
	}
	printf("mrs %d errno %d (%s)\n", i, err, err ? strerror(err) : "none");
	fflush(stdout);
	sleep(hold);
	while (i-- > 0)
		ibv_dereg_mr(mrs[i]);
	free(mrs);
	free(buf);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}


int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc == 5 && !strcmp(argv[1], "manymr"))
		return manymr(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "exhaust"))
		return exhaust(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "bigcq"))
		return bigcq(argv[2], atoi(argv[3]), atoi(argv[4]));
	if (pair_args(argc, argv)) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n"
			"       %s exhaust|bigcq|manymr DEV N HOLD_SECS\n",
			argv[0], argv[0]);
		return 2;
	}
	return test_harness_run(1, run);
}
