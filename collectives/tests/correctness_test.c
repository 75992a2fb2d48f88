/* SPDX-License-Identifier: MIT */
/*
 * Correctness of every collective x data type x op against a reference
 * computed on the CPU, over 2..5 forked ranks, for one provider.
 *
 *   correctness_test [--provider tcp|shm] [--ranks 2,3,4,5] [--quick]
 *
 * Data are small integers, so every sum/product is exact in every type and
 * results must match the reference bit for bit (avg: the reference divides
 * the exact sum once, the way the library does).  Each (communicator
 * variant, collective, type) is one TAP line; the variants are the default
 * tuning, a forced ring with tiny segments and rendezvous from 512 bytes
 * (many pipeline slices, every message through fi_writedata), and forced
 * recursive doubling.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_half.h"
#include "tutil.h"

#define MAXG 2048
struct gres {
	char name[96];
	int runs, fails;
};
struct shared {
	int ngroups;
	struct gres g[MAXG];
	char err[5][256];
};
static struct shared *sh;

static const char *tname[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
			       "fp16", "bf16", "fp32", "fp64" };
static const char *oname[] = { "sum", "prod", "min", "max", "avg" };

static bool is_signed(gcoll_datatype_t t)
{
	return t == GCOLL_INT8 || t == GCOLL_INT32 || t == GCOLL_INT64 || t >= GCOLL_FLOAT16;
}
static bool is_float(gcoll_datatype_t t)
{
	return t >= GCOLL_FLOAT16;
}

static void put(void *b, size_t i, gcoll_datatype_t t, double v)
{
	switch (t) {
	case GCOLL_INT8: ((int8_t *)b)[i] = (int8_t)v; break;
	case GCOLL_UINT8: ((uint8_t *)b)[i] = (uint8_t)v; break;
	case GCOLL_INT32: ((int32_t *)b)[i] = (int32_t)v; break;
	case GCOLL_UINT32: ((uint32_t *)b)[i] = (uint32_t)v; break;
	case GCOLL_INT64: ((int64_t *)b)[i] = (int64_t)v; break;
	case GCOLL_UINT64: ((uint64_t *)b)[i] = (uint64_t)v; break;
	case GCOLL_FLOAT16: ((uint16_t *)b)[i] = gc_f32_to_f16((float)v); break;
	case GCOLL_BFLOAT16: ((uint16_t *)b)[i] = gc_f32_to_bf16((float)v); break;
	case GCOLL_FLOAT32: ((float *)b)[i] = (float)v; break;
	case GCOLL_FLOAT64: ((double *)b)[i] = v; break;
	default: break;
	}
}

static double get(const void *b, size_t i, gcoll_datatype_t t)
{
	switch (t) {
	case GCOLL_INT8: return ((const int8_t *)b)[i];
	case GCOLL_UINT8: return ((const uint8_t *)b)[i];
	case GCOLL_INT32: return ((const int32_t *)b)[i];
	case GCOLL_UINT32: return ((const uint32_t *)b)[i];
	case GCOLL_INT64: return (double)((const int64_t *)b)[i];
	case GCOLL_UINT64: return (double)((const uint64_t *)b)[i];
	case GCOLL_FLOAT16: return gc_f16_to_f32(((const uint16_t *)b)[i]);
	case GCOLL_BFLOAT16: return gc_bf16_to_f32(((const uint16_t *)b)[i]);
	case GCOLL_FLOAT32: return ((const float *)b)[i];
	case GCOLL_FLOAT64: return ((const double *)b)[i];
	default: return 0;
	}
}

/* value contributed by rank r at element i for a reduction */
static double rval(int r, size_t i, gcoll_datatype_t t, gcoll_redop_t op)
{
	unsigned u = (unsigned)((size_t)r * 7 + i * 3 + 1 + i / 7);

	if (op == GCOLL_PROD) {
		unsigned k = u % 3;

		if (is_signed(t))
			return k == 0 ? -1 : k == 1 ? 1 : 2;
		return k == 0 ? 1 : 2;
	}
	return is_signed(t) ? (double)((int)(u % 9) - 4) : (double)(u % 5);
}

/* distinct-ish value for data movement collectives (fits every type) */
static double uval(int r, size_t i)
{
	return (double)(((size_t)r * 37 + i * 5 + i / 13) % 101);
}

static double expect_red(int n, size_t i, gcoll_datatype_t t, gcoll_redop_t op)
{
	double acc = rval(0, i, t, op), q;
	char tmp[8];

	for (int r = 1; r < n; r++) {
		double v = rval(r, i, t, op);

		switch (op) {
		case GCOLL_SUM: case GCOLL_AVG: acc += v; break;
		case GCOLL_PROD: acc *= v; break;
		case GCOLL_MIN: acc = v < acc ? v : acc; break;
		case GCOLL_MAX: acc = v > acc ? v : acc; break;
		default: break;
		}
	}
	if (op == GCOLL_AVG) {
		if (!is_float(t))
			acc = (double)((int64_t)acc / n);
		else if (t == GCOLL_FLOAT64)
			acc = acc / (double)n;
		else
			acc = (double)((float)acc / (float)n);
	}
	put(tmp, 0, t, acc);   /* quantise like the library */
	q = get(tmp, 0, t);
	return q;
}

struct ctx {
	gcoll_comm_t comm;
	int rank, n;
	const char *variant;
	int gi;            /* group index */
	int fails;
};

static void group_begin(struct ctx *c, const char *coll, gcoll_datatype_t t)
{
	c->gi = __atomic_fetch_add(&sh->ngroups, 0, __ATOMIC_SEQ_CST);
	if (c->rank == 0) {
		snprintf(sh->g[c->gi].name, sizeof(sh->g[c->gi].name), "n=%d %s %s %s", c->n,
			 c->variant, coll, tname[t]);
	}
}

static void group_end(struct ctx *c)
{
	/* all ranks enumerate groups identically; rank 0 advances the index */
	gcoll_barrier(c->comm, NULL);
	if (c->rank == 0)
		__atomic_fetch_add(&sh->ngroups, 1, __ATOMIC_SEQ_CST);
	gcoll_barrier(c->comm, NULL);
}

static void record(struct ctx *c, bool ok, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void record(struct ctx *c, bool ok, const char *fmt, ...)
{
	if (c->rank == 0)
		__atomic_fetch_add(&sh->g[c->gi].runs, 1, __ATOMIC_SEQ_CST);
	if (ok)
		return;
	__atomic_fetch_add(&sh->g[c->gi].fails, 1, __ATOMIC_SEQ_CST);
	c->fails++;
	if (c->fails < 6) {
		va_list ap;
		char buf[256];

		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		fprintf(stderr, "rank %d: FAIL %s: %s\n", c->rank, sh->g[c->gi].name, buf);
	}
}

/* compare buf[i] (i in [0,cnt)) against f(i); returns first bad index or -1 */
#define CHECK(buf, cnt, t, EXP, badidx, got, want)                                  \
	do {                                                                         \
		badidx = -1;                                                         \
		for (size_t i_ = 0; i_ < (cnt); i_++) {                              \
			size_t i = i_;                                               \
			double w_ = (EXP), g_ = get(buf, i, t);                      \
			if (!(g_ == w_)) {                                           \
				badidx = (long)i;                                    \
				got = g_;                                            \
				want = w_;                                           \
				break;                                               \
			}                                                            \
		}                                                                    \
	} while (0)

static double quant(gcoll_datatype_t t, double v)
{
	char tmp[8];

	put(tmp, 0, t, v);
	return get(tmp, 0, t);
}

static void t_allreduce(struct ctx *c, gcoll_datatype_t t, gcoll_redop_t op, size_t cnt, bool inplace)
{
	size_t es = gcoll_type_size(t);
	char *sb = malloc(cnt * es + 1), *rb = malloc(cnt * es + 1);
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc;

	for (size_t i = 0; i < cnt; i++)
		put(sb, i, t, rval(c->rank, i, t, op));
	memset(rb, 0x5a, cnt * es);
	if (inplace) {
		memcpy(rb, sb, cnt * es);
		rc = gcoll_allreduce(rb, rb, cnt, t, op, c->comm, NULL);
	} else {
		rc = gcoll_allreduce(sb, rb, cnt, t, op, c->comm, NULL);
	}
	if (rc) {
		record(c, false, "allreduce %s count %zu: %s", oname[op], cnt, gcoll_get_error_string(rc));
	} else {
		CHECK(rb, cnt, t, expect_red(c->n, i, t, op), bad, got, want);
		record(c, bad < 0, "allreduce %s count %zu%s: [%ld] = %g, want %g", oname[op], cnt,
		       inplace ? " in-place" : "", bad, got, want);
	}
	free(sb);
	free(rb);
}

static void t_reduce(struct ctx *c, gcoll_datatype_t t, gcoll_redop_t op, size_t cnt, int root,
		     bool inplace)
{
	size_t es = gcoll_type_size(t);
	char *sb = malloc(cnt * es + 1), *rb = malloc(cnt * es + 1);
	long bad = -1;
	double got = 0, want = 0;
	gcoll_result_t rc;

	for (size_t i = 0; i < cnt; i++)
		put(sb, i, t, rval(c->rank, i, t, op));
	memset(rb, 0x5a, cnt * es);
	if (inplace && c->rank == root) {
		memcpy(rb, sb, cnt * es);
		rc = gcoll_reduce(rb, rb, cnt, t, op, root, c->comm, NULL);
	} else {
		rc = gcoll_reduce(sb, rb, cnt, t, op, root, c->comm, NULL);
	}
	if (rc) {
		record(c, false, "reduce %s count %zu root %d: %s", oname[op], cnt, root,
		       gcoll_get_error_string(rc));
	} else {
		if (c->rank == root)
			CHECK(rb, cnt, t, expect_red(c->n, i, t, op), bad, got, want);
		record(c, bad < 0, "reduce %s count %zu root %d: [%ld] = %g, want %g", oname[op], cnt,
		       root, bad, got, want);
	}
	free(sb);
	free(rb);
}

static void t_reduce_scatter(struct ctx *c, gcoll_datatype_t t, gcoll_redop_t op, size_t cnt,
			     bool inplace)
{
	size_t es = gcoll_type_size(t), tot = cnt * (size_t)c->n;
	char *sb = malloc(tot * es + 1), *rb = malloc(cnt * es + 1), *out;
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc;
	size_t base = (size_t)c->rank * cnt;

	for (size_t i = 0; i < tot; i++)
		put(sb, i, t, rval(c->rank, i, t, op));
	memset(rb, 0x5a, cnt * es);
	out = inplace ? sb + base * es : rb;
	rc = gcoll_reduce_scatter(sb, out, cnt, t, op, c->comm, NULL);
	if (rc) {
		record(c, false, "reduce_scatter %s count %zu: %s", oname[op], cnt,
		       gcoll_get_error_string(rc));
	} else {
		CHECK(out, cnt, t, expect_red(c->n, base + i, t, op), bad, got, want);
		record(c, bad < 0, "reduce_scatter %s count %zu%s: [%ld] = %g, want %g", oname[op], cnt,
		       inplace ? " in-place" : "", bad, got, want);
	}
	free(sb);
	free(rb);
}

static void t_allgather(struct ctx *c, gcoll_datatype_t t, size_t cnt, bool inplace)
{
	size_t es = gcoll_type_size(t), tot = cnt * (size_t)c->n;
	char *sb = malloc(cnt * es + 1), *rb = malloc(tot * es + 1);
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc;

	memset(rb, 0x5a, tot * es);
	for (size_t i = 0; i < cnt; i++)
		put(inplace ? rb + (size_t)c->rank * cnt * es : sb, i, t, uval(c->rank, i));
	rc = gcoll_allgather(inplace ? rb + (size_t)c->rank * cnt * es : sb, rb, cnt, t, c->comm, NULL);
	if (rc) {
		record(c, false, "allgather count %zu: %s", cnt, gcoll_get_error_string(rc));
	} else {
		CHECK(rb, tot, t, quant(t, uval((int)(i / cnt), i % cnt)), bad, got, want);
		record(c, bad < 0, "allgather count %zu%s: [%ld] = %g, want %g", cnt,
		       inplace ? " in-place" : "", bad, got, want);
	}
	free(sb);
	free(rb);
}

static void t_broadcast(struct ctx *c, gcoll_datatype_t t, size_t cnt, int root, bool inplace)
{
	size_t es = gcoll_type_size(t);
	char *sb = malloc(cnt * es + 1), *rb = malloc(cnt * es + 1);
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc;

	memset(rb, 0x5a, cnt * es);
	for (size_t i = 0; i < cnt; i++)
		put(sb, i, t, c->rank == root ? uval(root, i) : 0);
	if (inplace && c->rank == root)
		memcpy(rb, sb, cnt * es);
	rc = gcoll_broadcast(inplace ? rb : sb, rb, cnt, t, root, c->comm, NULL);
	if (rc) {
		record(c, false, "broadcast count %zu root %d: %s", cnt, root, gcoll_get_error_string(rc));
	} else {
		CHECK(rb, cnt, t, quant(t, uval(root, i)), bad, got, want);
		record(c, bad < 0, "broadcast count %zu root %d: [%ld] = %g, want %g", cnt, root, bad,
		       got, want);
	}
	free(sb);
	free(rb);
}

static void t_alltoall(struct ctx *c, gcoll_datatype_t t, size_t cnt, bool inplace)
{
	size_t es = gcoll_type_size(t), tot = cnt * (size_t)c->n;
	char *sb = malloc(tot * es + 1), *rb = malloc(tot * es + 1);
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc;

	memset(rb, 0x5a, tot * es);
	for (size_t i = 0; i < tot; i++)
		put(inplace ? rb : sb, i, t, uval(c->rank, i));
	rc = gcoll_alltoall(inplace ? rb : sb, rb, cnt, t, c->comm, NULL);
	if (rc) {
		record(c, false, "alltoall count %zu: %s", cnt, gcoll_get_error_string(rc));
	} else {
		/* block p came from rank p, its block for us: elements r*cnt.. */
		CHECK(rb, tot, t, quant(t, uval((int)(i / cnt), (size_t)c->rank * cnt + i % cnt)), bad,
		      got, want);
		record(c, bad < 0, "alltoall count %zu%s: [%ld] = %g, want %g", cnt,
		       inplace ? " in-place" : "", bad, got, want);
	}
	free(sb);
	free(rb);
}

/* group of send/recv: ring shift right, and a nonblocking exchange */
static void t_sendrecv(struct ctx *c, gcoll_datatype_t t, size_t cnt)
{
	size_t es = gcoll_type_size(t);
	int right = (c->rank + 1) % c->n, left = (c->rank + c->n - 1) % c->n;
	char *sb = malloc(cnt * es + 1), *rb = malloc(cnt * es + 1);
	gcoll_request_t rq[2];
	long bad;
	double got = 0, want = 0;
	gcoll_result_t rc, rc2;

	for (size_t i = 0; i < cnt; i++)
		put(sb, i, t, uval(c->rank, i));
	memset(rb, 0x5a, cnt * es);
	gcoll_group_start();
	rc = gcoll_send(sb, cnt, t, right, c->comm, NULL);
	rc2 = gcoll_recv(rb, cnt, t, left, c->comm, NULL);
	if (!rc)
		rc = rc2;
	rc2 = gcoll_group_end();
	if (!rc)
		rc = rc2;
	if (rc) {
		record(c, false, "group send/recv count %zu: %s", cnt, gcoll_get_error_string(rc));
	} else {
		CHECK(rb, cnt, t, quant(t, uval(left, i)), bad, got, want);
		record(c, bad < 0, "group send/recv count %zu: [%ld] = %g, want %g", cnt, bad, got, want);
	}
	/* nonblocking the other way round, completed with test() polling */
	memset(rb, 0x5a, cnt * es);
	rc = gcoll_recv(rb, cnt, t, right, c->comm, &rq[0]);
	if (!rc)
		rc = gcoll_send(sb, cnt, t, left, c->comm, &rq[1]);
	if (!rc) {
		bool d0 = false, d1 = false;

		while (!rc && !(d0 && d1)) {
			if (!d0) {
				rc = gcoll_test(rq[0]);
				d0 = rc != GCOLL_IN_PROGRESS;
				if (rc == GCOLL_IN_PROGRESS)
					rc = GCOLL_SUCCESS;
			}
			if (!rc && !d1) {
				rc = gcoll_test(rq[1]);
				d1 = rc != GCOLL_IN_PROGRESS;
				if (rc == GCOLL_IN_PROGRESS)
					rc = GCOLL_SUCCESS;
			}
		}
	}
	if (rc) {
		record(c, false, "nonblocking send/recv count %zu: %s", cnt, gcoll_get_error_string(rc));
	} else {
		CHECK(rb, cnt, t, quant(t, uval(right, i)), bad, got, want);
		record(c, bad < 0, "nonblocking send/recv count %zu: [%ld] = %g, want %g", cnt, bad, got,
		       want);
	}
	free(sb);
	free(rb);
}

static void run_matrix(struct ctx *c, const size_t *counts, int ncounts, size_t big)
{
	for (int t = 0; t < GCOLL_NUM_TYPES; t++) {
		size_t es = gcoll_type_size((gcoll_datatype_t)t);
		int k = 0;

		group_begin(c, "allreduce", (gcoll_datatype_t)t);
		for (int op = 0; op < GCOLL_NUM_OPS; op++)
			for (int i = 0; i < ncounts; i++, k++)
				t_allreduce(c, (gcoll_datatype_t)t, (gcoll_redop_t)op, counts[i], k % 3 == 1);
		if (big)
			t_allreduce(c, (gcoll_datatype_t)t, t % 2 ? GCOLL_MAX : GCOLL_SUM, big / es + 3,
				    t % 3 == 0);
		/* 1.5 MiB: on shm with 3-8 ranks, three chunks of the fast path, uneven slices */
		if (big)
			t_allreduce(c, (gcoll_datatype_t)t, (gcoll_redop_t)(t % GCOLL_NUM_OPS),
				    (3u << 19) / es + 5, t % 2 == 0);
		group_end(c);

		group_begin(c, "reduce_scatter", (gcoll_datatype_t)t);
		for (int op = 0; op < GCOLL_NUM_OPS; op++)
			for (int i = 0; i < ncounts; i++, k++)
				t_reduce_scatter(c, (gcoll_datatype_t)t, (gcoll_redop_t)op,
						 counts[i] / 2 + (size_t)(i & 1), k % 3 == 2);
		if (big && t % 3 == 1)
			t_reduce_scatter(c, (gcoll_datatype_t)t, GCOLL_SUM, big / es / (size_t)c->n + 1, false);
		group_end(c);

		group_begin(c, "reduce", (gcoll_datatype_t)t);
		for (int op = 0; op < GCOLL_NUM_OPS; op++)
			for (int i = 0; i < ncounts; i++, k++)
				t_reduce(c, (gcoll_datatype_t)t, (gcoll_redop_t)op, counts[i], k % c->n,
					 k % 4 == 1);
		if (big && t % 3 == 2)
			t_reduce(c, (gcoll_datatype_t)t, GCOLL_MIN, big / es + 1, c->n - 1, false);
		group_end(c);

		group_begin(c, "allgather", (gcoll_datatype_t)t);
		for (int i = 0; i < ncounts; i++, k++)
			t_allgather(c, (gcoll_datatype_t)t, counts[i] / 2 + 1, k % 2 == 1);
		if (big && t % 4 == 0)
			t_allgather(c, (gcoll_datatype_t)t, big / es / (size_t)c->n + 1, false);
		group_end(c);

		group_begin(c, "broadcast", (gcoll_datatype_t)t);
		for (int i = 0; i < ncounts; i++, k++)
			t_broadcast(c, (gcoll_datatype_t)t, counts[i], (k + 1) % c->n, k % 2 == 0);
		if (big && t % 4 == 1)
			t_broadcast(c, (gcoll_datatype_t)t, big / es + 5, 1 % c->n, false);
		group_end(c);

		group_begin(c, "alltoall", (gcoll_datatype_t)t);
		for (int i = 0; i < ncounts; i++, k++)
			t_alltoall(c, (gcoll_datatype_t)t, counts[i] / 2 + 1, k % 2 == 0);
		group_end(c);

		group_begin(c, "send/recv", (gcoll_datatype_t)t);
		for (int i = 0; i < ncounts; i++, k++)
			t_sendrecv(c, (gcoll_datatype_t)t, counts[i] + 1);
		group_end(c);
	}
}

static bool quick;

static int rank_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	static const size_t c_world[] = { 0, 1, 7, 1001, 24011 };
	static const size_t c_world_q[] = { 0, 1, 1001, 24011 };
	static const size_t c_ring[] = { 1, 5, 333, 4099 };
	static const size_t c_rd[] = { 2, 13, 3001 };
	struct ctx c = { .rank = rank, .n = n };
	gcoll_comm_t world, ring, rd, half;
	gcoll_result_t rc;
	int fails = 0;

	(void)arg;
	rc = gcoll_comm_init_rank(&world, n, id, rank);
	if (rc) {
		snprintf(sh->err[rank], sizeof(sh->err[rank]), "init: %s", gcoll_get_last_error());
		return 3;
	}
	/* variants inherit tuning from the environment at creation */
	setenv("GCOLL_ALGO", "ring", 1);
	setenv("GCOLL_SEGMENT_SIZE", "4096", 1);
	setenv("GCOLL_EAGER_MAX", "512", 1);
	setenv("GCOLL_WRITE_SIZE", "4096", 1);
	rc = gcoll_comm_split(world, 0, rank, &ring);
	setenv("GCOLL_ALGO", "rd", 1);
	unsetenv("GCOLL_SEGMENT_SIZE");
	unsetenv("GCOLL_EAGER_MAX");
	unsetenv("GCOLL_WRITE_SIZE");
	if (!rc)
		rc = gcoll_comm_split(world, 0, rank, &rd);
	unsetenv("GCOLL_ALGO");
	/* a split into halves: (n+1)/2 and n/2 ranks, reversed order */
	if (!rc)
		rc = gcoll_comm_split(world, rank % 2, -rank, &half);
	if (rc) {
		snprintf(sh->err[rank], sizeof(sh->err[rank]), "split: %s", gcoll_get_last_error());
		return 4;
	}

	c.comm = world;
	c.variant = "default";
	run_matrix(&c, quick ? c_world_q : c_world, quick ? 4 : 5, quick ? 0 : (3u << 20) + 123);
	c.comm = ring;
	c.variant = "ring/seg4k/rndv512";
	run_matrix(&c, c_ring, quick ? 2 : 4, 0);
	c.comm = rd;
	c.variant = "recursive-doubling";
	run_matrix(&c, c_rd, 3, 0);

	/* the split halves: check membership and a sum over them */
	{
		int hn = 0, hr = -1;
		int32_t v = rank, sum = -1, want = 0;

		gcoll_comm_count(half, &hn);
		gcoll_comm_user_rank(half, &hr);
		for (int r = rank % 2; r < n; r += 2)
			want += r;
		rc = gcoll_allreduce(&v, &sum, 1, GCOLL_INT32, GCOLL_SUM, half, NULL);
		c.comm = world;
		c.variant = "split";
		group_begin(&c, "halves", GCOLL_INT32);
		record(&c, !rc && sum == want && hn == (rank % 2 ? n / 2 : (n + 1) / 2) &&
			   hr == hn - 1 - rank / 2,
		       "split: rc %d sum %d want %d size %d rank %d", rc, sum, want, hn, hr);
		group_end(&c);
	}
	/* several nonblocking collectives in flight at once on two
	 * communicators (scratch arena contention, interleaved slices) */
	{
		size_t cnts[3] = { 5, 300001, 77 };
		float *in[3], *out[3];
		int32_t hv = rank, hs = -1, hw = 0;
		gcoll_request_t rq[4];
		gcoll_result_t e = GCOLL_SUCCESS;
		bool good = true;

		for (int r = rank % 2; r < n; r += 2)
			hw += r;
		for (int k = 0; k < 3; k++) {
			in[k] = malloc(cnts[k] * sizeof(float));
			out[k] = malloc(cnts[k] * sizeof(float));
			for (size_t i = 0; i < cnts[k]; i++)
				in[k][i] = (float)rval(rank, i + (size_t)k, GCOLL_FLOAT32, GCOLL_SUM);
		}
		for (int k = 0; k < 3 && !e; k++)
			e = gcoll_allreduce(in[k], out[k], cnts[k], GCOLL_FLOAT32, GCOLL_SUM,
					    k == 1 ? ring : world, &rq[k]);
		if (!e)
			e = gcoll_allreduce(&hv, &hs, 1, GCOLL_INT32, GCOLL_SUM, half, &rq[3]);
		for (int k = 3; k >= 0 && !e; k--)
			e = gcoll_wait(rq[k]);
		for (int k = 0; k < 3; k++) {
			for (size_t i = 0; i < cnts[k] && !e && good; i++)
				good = out[k][i] == (float)expect_red(n, i + (size_t)k, GCOLL_FLOAT32, GCOLL_SUM);
			free(in[k]);
			free(out[k]);
		}
		c.comm = world;
		c.variant = "nonblocking";
		group_begin(&c, "3 concurrent allreduces on 3 comms", GCOLL_FLOAT32);
		record(&c, !e && good && hs == hw, "concurrent: rc %d good %d half %d/%d", e, good, hs, hw);
		group_end(&c);
	}
	fails = c.fails;
	if (gcoll_comm_destroy(half) || gcoll_comm_destroy(rd) || gcoll_comm_destroy(ring) ||
	    gcoll_comm_destroy(world))
		fails++;
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *prov = "tcp";
	int ranks[8] = { 2, 3, 4, 5 }, nr = 4;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
			prov = argv[++i];
		} else if (!strcmp(argv[i], "--quick")) {
			quick = true;
		} else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
			char *s = argv[++i];

			nr = 0;
			for (char *tok = strtok(s, ","); tok && nr < 8; tok = strtok(NULL, ","))
				ranks[nr++] = atoi(tok);
		} else {
			fprintf(stderr, "usage: %s [--provider P] [--ranks 2,3,4,5] [--quick]\n", argv[0]);
			return 2;
		}
	}
	setenv("GCOLL_PROVIDER", prov, 1);
	setenv("GCOLL_TIMEOUT_MS", "60000", 0);
	sh = tu_shared(sizeof(*sh));
	for (int k = 0; k < nr; k++) {
		int n = ranks[k], st[64], bad, g0;
		double t0 = tu_now();

		memset(sh, 0, sizeof(*sh));
		bad = tu_run(n, rank_main, NULL, 240, st);
		g0 = sh->ngroups;
		for (int g = 0; g < g0; g++)
			tu_ok(sh->g[g].fails == 0 && sh->g[g].runs > 0, "%s %s (%d cases, %d rank failures)",
			      prov, sh->g[g].name, sh->g[g].runs, sh->g[g].fails);
		for (int r = 0; r < n; r++)
			if (sh->err[r][0])
				fprintf(stderr, "rank %d: %s\n", r, sh->err[r]);
		tu_ok(bad == 0 && g0 > 0, "%s n=%d: all ranks exited cleanly (%d groups, %.1fs)", prov, n,
		      g0, tu_now() - t0);
		if (bad)
			for (int r = 0; r < n; r++)
				if (st[r])
					fprintf(stderr, "  rank %d exit status %d\n", r, st[r]);
	}
	return tu_done();
}
