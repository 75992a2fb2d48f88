/* SPDX-License-Identifier: MIT */
/*
 * Collective algorithms: each builds a request's schedules for one
 * collective (ring, recursive doubling, trees, dissemination) and submits
 * it.  Arguments are checked by the public entry points (coll.c) first;
 * the engine that runs schedules is in sched.c.
 */
#include <stdlib.h>

#include "gc_algo.h"
#include "gc_fast.h"
#include "gc_stage.h"

static int md(int a, int n)
{
	return ((a % n) + n) % n;
}

/* recursive doubling on buf (cnt elements, tmp = scratch of the same size);
 * non-power-of-two ranks fold the extra ranks into their neighbours first */
static int rd_core(struct gcoll_comm *c, struct gc_sched *s, void *buf, void *tmp,
		   size_t cnt, size_t es, bool avg)
{
	int n = c->nranks, r = c->rank, p = 1, rem, nr;
	size_t b = cnt * es;

	while (p * 2 <= n)
		p *= 2;
	rem = n - p;
	if (r < 2 * rem) {
		if (gc_phase(s))
			return -1;
		if (r % 2 == 0) {
			if (SEND(c, s, r + 1, buf, b))
				return -1;
			nr = -1;
		} else {
			if (RECV(c, s, r - 1, tmp, b) || gc_act(s, GC_ACT_REDUCE, buf, buf, tmp, cnt))
				return -1;
			nr = r / 2;
		}
	} else {
		nr = r - rem;
	}
	if (nr >= 0) {
		for (int mask = 1; mask < p; mask <<= 1) {
			int pn = nr ^ mask, peer = pn < rem ? pn * 2 + 1 : pn + rem;

			if (gc_phase(s) || SEND(c, s, peer, buf, b) || RECV(c, s, peer, tmp, b) ||
			    gc_act(s, GC_ACT_REDUCE, buf, buf, tmp, cnt))
				return -1;
		}
		if (avg && gc_act(s, GC_ACT_AVG, buf, NULL, NULL, cnt))
			return -1;
	}
	if (r < 2 * rem) {
		if (gc_phase(s))
			return -1;
		if (r % 2 == 1 ? SEND(c, s, r - 1, buf, b) : RECV(c, s, r + 1, buf, b))
			return -1;
	}
	return 0;
}

static int ar_rd(struct gcoll_comm *c, struct gc_sched *s, const void *sb, void *rb,
		 size_t cnt, size_t es, bool avg)
{
	s->scratch_len = cnt * es;
	if (gc_phase(s) || gc_act(s, GC_ACT_COPY, rb, sb, NULL, cnt * es))
		return -1;
	return rd_core(c, s, rb, SCR(0), cnt, es, avg);
}

static int ar_ring(struct gcoll_comm *c, struct gc_sched *s, const char *sb, char *rb,
		   size_t cnt, size_t es, bool avg)
{
	int n = c->nranks, r = c->rank, right = md(r + 1, n), left = md(r - 1, n);
	struct gc_chunks k = { cnt / (size_t)n, cnt % (size_t)n };

	s->scratch_len = gc_ck_len(&k, 0) * es;
	for (int st = 0; st < n - 1; st++) {
		int cs = md(r - st, n), cr = md(r - st - 1, n);
		const char *src = st == 0 ? sb : rb;

		if (gc_phase(s) ||
		    SEND(c, s, right, src + gc_ck_off(&k, cs) * es, gc_ck_len(&k, cs) * es) ||
		    RECV(c, s, left, SCR(0), gc_ck_len(&k, cr) * es) ||
		    gc_act(s, GC_ACT_REDUCE, rb + gc_ck_off(&k, cr) * es, sb + gc_ck_off(&k, cr) * es,
			SCR(0), gc_ck_len(&k, cr)))
			return -1;
		if (st == n - 2 && avg &&
		    gc_act(s, GC_ACT_AVG, rb + gc_ck_off(&k, cr) * es, NULL, NULL, gc_ck_len(&k, cr)))
			return -1;
	}
	for (int st = 0; st < n - 1; st++) {
		int cs = md(r + 1 - st, n), cr = md(r - st, n);

		if (gc_phase(s) ||
		    SEND(c, s, right, rb + gc_ck_off(&k, cs) * es, gc_ck_len(&k, cs) * es) ||
		    RECV(c, s, left, rb + gc_ck_off(&k, cr) * es, gc_ck_len(&k, cr) * es))
			return -1;
	}
	return 0;
}

static bool use_ring(struct gcoll_comm *c, size_t bytes)
{
	if (c->algo == GC_ALGO_RING)
		return true;
	if (c->algo == GC_ALGO_RD || c->algo == GC_ALGO_TREE)
		return false;
	return bytes >= c->ring_thr;
}

/* The start of an algorithm's request: a new request, with [*sb, +slen)
 * staged in and [*rb, +rlen) staged out (a length of 0: that buffer is not
 * staged on this rank).  NULL when out of memory. */
static struct gcoll_request *build_begin(struct gcoll_comm *c, const void **sb, size_t slen,
					 void **rb, size_t rlen)
{
	struct gcoll_request *r = gc_req_new(c);

	if (!r)
		return NULL;
	*sb = gc_stage(r, *sb, slen, true, false);
	*rb = gc_stage(r, *rb, rlen, false, true);
	return r;
}

/* single-schedule request with just a local copy (n == 1) */
gcoll_result_t gc_algo_local_copy(struct gcoll_comm *c, void *dst, const void *src,
				  size_t bytes, gcoll_request_t *req)
{
	struct gcoll_request *r = gc_req_new(c);
	struct gc_sched *s;

	if (!r)
		return GCOLL_ERR_NOMEM;
	/* the request owns s once it is made: gc_build_fail frees both */
	s = gc_req_sched(r, GCOLL_UINT8, GCOLL_SUM);
	if (!s || gc_phase(s) || gc_act(s, GC_ACT_COPY, dst, src, NULL, bytes))
		return gc_build_fail(r);
	return gc_submit(r, req);
}

/* The all-reduce over the fabric alone: the ring or recursive doubling. */
static gcoll_result_t allreduce_fabric(struct gcoll_comm *c, const void *sendbuf,
				       void *recvbuf, size_t count, size_t bytes,
				       gcoll_datatype_t type, gcoll_redop_t op,
				       gcoll_request_t *req)
{
	size_t es = gc_type_size(type), slice;
	struct gcoll_request *r;
	bool ring, avg = op == GCOLL_AVG;

	ring = use_ring(c, bytes);
	slice = c->segsize / es * (ring ? (size_t)c->nranks : 1);
	if (!slice)
		slice = 1;
	r = build_begin(c, &sendbuf, bytes, &recvbuf, bytes);
	if (!r)
		return GCOLL_ERR_NOMEM;
	for (size_t off = 0; off < count; off += slice) {
		size_t cnt = count - off < slice ? count - off : slice;
		struct gc_sched *s = gc_req_sched(r, type, op);

		if (!s)
			return gc_build_fail(r);
		if (ring ? ar_ring(c, s, (const char *)sendbuf + off * es, (char *)recvbuf + off * es,
				   cnt, es, avg)
			 : ar_rd(c, s, (const char *)sendbuf + off * es, (char *)recvbuf + off * es,
				 cnt, es, avg))
			return gc_build_fail(r);
	}
	return gc_submit(r, req);
}

/* Above GCOLL_SHM_BIG_MAX, the road rank 0 has measured quicker for the
 * size (fast.c keeps the measurements and spreads the pick): the shared
 * segment in chunks or the fabric.  The choice is made here, where both
 * roads are known, so the fast path never calls back into this file. */
static gcoll_result_t allreduce_adaptive(struct gcoll_comm *c, const void *sendbuf,
					 void *recvbuf, size_t count, size_t bytes,
					 gcoll_datatype_t type, gcoll_redop_t op)
{
	gcoll_result_t rc;
	uint64_t t0;
	int via;

	rc = gc_fast_adapt_pick(c, bytes, &via);
	if (rc)
		return rc;
	t0 = c->rank == 0 ? gc_now_ns() : 0;
	rc = via == GC_VIA_CHUNKS
		? gc_fast_chunks(c, sendbuf, recvbuf, count, bytes, type, op)
		: allreduce_fabric(c, sendbuf, recvbuf, count, bytes, type, op, NULL);
	if (rc || c->rank)
		return rc;
	gc_fast_adapt_done(c, bytes, via, gc_now_ns() - t0);
	return rc;
}

gcoll_result_t gc_algo_allreduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req)
{
	if (gc_fast_ok(c, bytes))
		return gc_fast_allreduce(c, sendbuf, recvbuf, count, bytes, type, op, req);
	if (gc_fast_adapt_ok(c, bytes, req))
		return allreduce_adaptive(c, sendbuf, recvbuf, count, bytes, type, op);
	return allreduce_fabric(c, sendbuf, recvbuf, count, bytes, type, op, req);
}

/* Reduce-scatter by recursive halving, for any n.  With p the largest
 * power of two <= n and rem = n - p, the first 2*rem ranks fold pairwise
 * (the even one hands its whole vector to the odd one and waits).  The p
 * remaining ranks, numbered nr, each own the result chunks of their real
 * ranks ({2nr, 2nr+1} below rem, else {nr+rem}: contiguous in nr), and
 * halve: at distance m each sends the half of its current range that the
 * partner nr ^ m keeps and reduces the half it keeps, log2(p) steps moving
 * (1/2 + 1/4 + ...) of the vector instead of all of it every step.  At
 * the end the odd ranks hand the folded even ones their chunk.  Scratch:
 * the vector and a receive area of the same size. */
static size_t rh_first(int v, int rem)
{
	return (size_t)(v < rem ? 2 * v : v + rem);
}

static int rs_halving(struct gcoll_comm *c, struct gc_sched *s, const void *sb, void *rb,
		      size_t rcount, size_t es, bool avg)
{
	int n = c->nranks, r = c->rank, p = 1, rem, nr, lo;
	size_t bytes = (size_t)n * rcount * es, cb = rcount * es;

	while (p * 2 <= n)
		p *= 2;
	rem = n - p;
	s->scratch_len = 2 * bytes;
	if (gc_phase(s) || gc_act(s, GC_ACT_COPY, SCR(0), sb, NULL, bytes))
		return -1;
	if (r < 2 * rem) {
		if (gc_phase(s))
			return -1;
		if (r % 2 == 0) {
			/* hand everything over, get our chunk back at the end */
			if (SEND(c, s, r + 1, SCR(0), bytes) || gc_phase(s) ||
			    RECV(c, s, r + 1, rb, cb) ||
			    (avg && gc_act(s, GC_ACT_AVG, rb, NULL, NULL, rcount)))
				return -1;
			return 0;
		}
		if (RECV(c, s, r - 1, SCR(bytes), bytes) ||
		    gc_act(s, GC_ACT_REDUCE, SCR(0), SCR(0), SCR(bytes), rcount * (size_t)n))
			return -1;
		nr = r / 2;
	} else {
		nr = r - rem;
	}
	lo = 0;
	for (int m = p / 2; m >= 1; m /= 2) {
		int pn = nr ^ m, peer = pn < rem ? pn * 2 + 1 : pn + rem;
		int keep = nr & m ? lo + m : lo, give = nr & m ? lo : lo + m;
		size_t ko = rh_first(keep, rem) * cb, kl = rh_first(keep + m, rem) * cb - ko;
		size_t go = rh_first(give, rem) * cb, gl = rh_first(give + m, rem) * cb - go;

		if (gc_phase(s) || SEND(c, s, peer, SCR(go), gl) ||
		    RECV(c, s, peer, SCR(bytes + ko), kl) ||
		    gc_act(s, GC_ACT_REDUCE, SCR(ko), SCR(ko), SCR(bytes + ko), kl / es))
			return -1;
		lo = keep;
	}
	/* nr now holds the chunks of its real ranks */
	if (gc_phase(s) || (r < 2 * rem && SEND(c, s, r - 1, SCR((size_t)(r - 1) * cb), cb)) ||
	    gc_act(s, GC_ACT_COPY, rb, SCR((size_t)r * cb), NULL, cb) ||
	    (avg && gc_act(s, GC_ACT_AVG, rb, NULL, NULL, rcount)))
		return -1;
	return 0;
}

gcoll_result_t gc_algo_reduce_scatter(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				      size_t rcount, size_t bytes, gcoll_datatype_t type,
				      gcoll_redop_t op, gcoll_request_t *req)
{
	size_t es = gc_type_size(type), slice;
	struct gcoll_request *r;
	bool avg = op == GCOLL_AVG;
	int n = c->nranks, rk = c->rank;

	r = build_begin(c, &sendbuf, bytes, &recvbuf, rcount * es);
	if (!r)
		return GCOLL_ERR_NOMEM;
	if (!use_ring(c, bytes)) {
		/* small: recursive halving on a scratch copy */
		struct gc_sched *s = gc_req_sched(r, type, op);

		if (!s || rs_halving(c, s, sendbuf, recvbuf, rcount, es, avg))
			return gc_build_fail(r);
		return gc_submit(r, req);
	}
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < rcount; o += slice) {
		size_t k = rcount - o < slice ? rcount - o : slice, kb = k * es;
		struct gc_sched *s = gc_req_sched(r, type, op);
		const char *sb = sendbuf;
		char *rb = (char *)recvbuf + o * es;

		if (!s)
			return gc_build_fail(r);
		s->scratch_len = 2 * kb;
#define CH(i) (sb + ((size_t)(i) * rcount + o) * es)
		for (int st = 0; st < n - 1; st++) {
			int cs = md(rk - st - 1, n), cr = md(rk - st - 2, n);
			const void *src = st == 0 ? (const void *)CH(cs) : SCR((size_t)((st - 1) % 2) * kb);
			void *t = SCR((size_t)(st % 2) * kb);
			void *dst = st == n - 2 ? (void *)rb : t;

			if (gc_phase(s) || SEND(c, s, md(rk + 1, n), src, kb) ||
			    RECV(c, s, md(rk - 1, n), t, kb) ||
			    gc_act(s, GC_ACT_REDUCE, dst, t, CH(cr), k))
				return gc_build_fail(r);
		}
#undef CH
		if (avg && gc_act(s, GC_ACT_AVG, rb, NULL, NULL, k))
			return gc_build_fail(r);
	}
	return gc_submit(r, req);
}

gcoll_result_t gc_algo_allgather(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t scount, size_t bytes, gcoll_datatype_t type,
				 gcoll_request_t *req)
{
	size_t es = gc_type_size(type), slice;
	struct gcoll_request *r;
	int n = c->nranks, rk = c->rank;

	r = build_begin(c, &sendbuf, scount * es, &recvbuf, bytes);
	if (!r)
		return GCOLL_ERR_NOMEM;
	if ((n & (n - 1)) == 0 && !use_ring(c, bytes)) {
		/* small, power of two: recursive doubling - at step k exchange
		 * the 2^k contiguous blocks gathered so far with rank ^ 2^k */
		struct gc_sched *s = gc_req_sched(r, type, GCOLL_SUM);
		size_t b = scount * es;
		char *rb = recvbuf;

		if (!s)
			return gc_build_fail(r);
		if (gc_phase(s) || gc_act(s, GC_ACT_COPY, rb + (size_t)rk * b, sendbuf, NULL, b))
			return gc_build_fail(r);
		for (int mask = 1; mask < n; mask <<= 1) {
			int peer = rk ^ mask, mine = rk & ~(mask - 1), theirs = peer & ~(mask - 1);

			if (gc_phase(s) || SEND(c, s, peer, rb + (size_t)mine * b, (size_t)mask * b) ||
			    RECV(c, s, peer, rb + (size_t)theirs * b, (size_t)mask * b))
				return gc_build_fail(r);
		}
		return gc_submit(r, req);
	}
	if (n > 4 && !use_ring(c, bytes)) {
		/* small, any other n from 5: Bruck, ceil(log2 n) steps instead
		 * of the ring's n - 1 (at n = 3 both take 2, and the ring needs
		 * no scratch and no final copy).  tmp (scratch) holds the blocks of ranks rk,
		 * rk+1, ...; at step d send the first min(d, n-d) of them to
		 * rk - d and receive as many from rk + d behind them; then
		 * rotate tmp into place. */
		struct gc_sched *s = gc_req_sched(r, type, GCOLL_SUM);
		size_t b = scount * es;
		char *rb = recvbuf;

		if (!s)
			return gc_build_fail(r);
		s->scratch_len = (size_t)n * b;
		if (gc_phase(s) || gc_act(s, GC_ACT_COPY, SCR(0), sendbuf, NULL, b))
			return gc_build_fail(r);
		for (int d = 1; d < n; d <<= 1) {
			size_t cnt = (size_t)(d < n - d ? d : n - d) * b;

			if (gc_phase(s) || SEND(c, s, md(rk - d, n), SCR(0), cnt) ||
			    RECV(c, s, md(rk + d, n), SCR((size_t)d * b), cnt))
				return gc_build_fail(r);
		}
		if (gc_phase(s) ||
		    gc_act(s, GC_ACT_COPY, rb + (size_t)rk * b, SCR(0), NULL, (size_t)(n - rk) * b) ||
		    (rk && gc_act(s, GC_ACT_COPY, rb, SCR((size_t)(n - rk) * b), NULL, (size_t)rk * b)))
			return gc_build_fail(r);
		return gc_submit(r, req);
	}
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < scount; o += slice) {
		size_t kb = (scount - o < slice ? scount - o : slice) * es;
		struct gc_sched *s = gc_req_sched(r, type, GCOLL_SUM);
		char *rb = recvbuf;
#define CH(i) (rb + ((size_t)(i) * scount + o) * es)

		if (!s)
			return gc_build_fail(r);
		if (gc_phase(s) || gc_act(s, GC_ACT_COPY, CH(rk), (const char *)sendbuf + o * es, NULL, kb))
			return gc_build_fail(r);
		for (int st = 0; st < n - 1; st++)
			if (gc_phase(s) || SEND(c, s, md(rk + 1, n), CH(md(rk - st, n)), kb) ||
			    RECV(c, s, md(rk - 1, n), CH(md(rk - st - 1, n)), kb))
				return gc_build_fail(r);
#undef CH
	}
	return gc_submit(r, req);
}

/* tree in "virtual rank" space (root = 0): binomial or chain */
static int tree_links(int v, int n, bool chain, int *parent, int *child, int maxc)
{
	int nc = 0, mask = 1;

	*parent = -1;
	if (chain) {
		if (v > 0)
			*parent = v - 1;
		if (v + 1 < n)
			child[nc++] = v + 1;
		return nc;
	}
	while (mask < n) {
		if (v & mask) {
			*parent = v - mask;
			break;
		}
		mask <<= 1;
	}
	for (mask >>= 1; mask > 0; mask >>= 1)
		if (v + mask < n && nc < maxc)
			child[nc++] = v + mask;
	return nc;
}

/* This rank's place *v in the tree rooted at root: a chain for large
 * messages (or GCOLL_ALGO=ring), else binomial; returns its child count. */
static int tree_setup(struct gcoll_comm *c, int root, size_t bytes, int *v, int *parent,
		      int child[32])
{
	bool chain = c->algo == GC_ALGO_RING || (c->algo == GC_ALGO_AUTO && bytes >= c->ring_thr);

	*v = md(c->rank - root, c->nranks);
	return tree_links(*v, c->nranks, chain, parent, child, 32);
}

gcoll_result_t gc_algo_broadcast(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t bytes, gcoll_datatype_t type, int root,
				 gcoll_request_t *req)
{
	size_t slice;
	struct gcoll_request *r;
	int n = c->nranks, v, parent, child[32], nc;

	nc = tree_setup(c, root, bytes, &v, &parent, child);
	/* only the root has a buffer to send */
	r = build_begin(c, &sendbuf, v == 0 ? bytes : 0, &recvbuf, bytes);
	if (!r)
		return GCOLL_ERR_NOMEM;
	slice = c->segsize;
	for (size_t o = 0; o < bytes; o += slice) {
		size_t kb = bytes - o < slice ? bytes - o : slice;
		struct gc_sched *s = gc_req_sched(r, type, GCOLL_SUM);
		char *rb = (char *)recvbuf + o;
		const char *src = v == 0 ? (const char *)sendbuf + o : rb;

		if (!s)
			return gc_build_fail(r);
		if (parent >= 0 && (gc_phase(s) || RECV(c, s, md(parent + root, n), rb, kb)))
			return gc_build_fail(r);
		if (gc_phase(s))
			return gc_build_fail(r);
		for (int i = 0; i < nc; i++)
			if (SEND(c, s, md(child[i] + root, n), src, kb))
				return gc_build_fail(r);
		if (v == 0 && gc_act(s, GC_ACT_COPY, rb, src, NULL, kb))
			return gc_build_fail(r);
	}
	return gc_submit(r, req);
}

gcoll_result_t gc_algo_reduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, size_t bytes, gcoll_datatype_t type,
			      gcoll_redop_t op, int root, gcoll_request_t *req)
{
	size_t es = gc_type_size(type), slice;
	struct gcoll_request *r;
	int n = c->nranks, v, parent, child[32], nc;

	nc = tree_setup(c, root, bytes, &v, &parent, child);
	/* only the root receives the result */
	r = build_begin(c, &sendbuf, bytes, &recvbuf, v == 0 ? bytes : 0);
	if (!r)
		return GCOLL_ERR_NOMEM;
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < count; o += slice) {
		size_t k = count - o < slice ? count - o : slice, kb = k * es;
		struct gc_sched *s = gc_req_sched(r, type, op);
		const char *sb = (const char *)sendbuf + o * es;
		void *acc = v == 0 ? (void *)((char *)recvbuf + o * es) : SCR((size_t)nc * kb);
		const void *cur = sb;

		if (!s)
			return gc_build_fail(r);
		s->scratch_len = (size_t)(nc + 1) * kb;
		if (nc) {
			if (gc_phase(s))
				return gc_build_fail(r);
			for (int i = 0; i < nc; i++)
				if (RECV(c, s, md(child[i] + root, n), SCR((size_t)i * kb), kb))
					return gc_build_fail(r);
			for (int i = 0; i < nc; i++) {
				if (gc_act(s, GC_ACT_REDUCE, acc, cur, SCR((size_t)i * kb), k))
					return gc_build_fail(r);
				cur = acc;
			}
		}
		if (v == 0) {
			if (!nc && (gc_phase(s) || gc_act(s, GC_ACT_COPY, acc, sb, NULL, kb)))
				return gc_build_fail(r);
			if (op == GCOLL_AVG && gc_act(s, GC_ACT_AVG, acc, NULL, NULL, k))
				return gc_build_fail(r);
		} else if (gc_phase(s) || SEND(c, s, md(parent + root, n), cur, kb)) {
			return gc_build_fail(r);
		}
	}
	return gc_submit(r, req);
}

gcoll_result_t gc_algo_alltoall(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				size_t bytes, gcoll_datatype_t type, gcoll_request_t *req)
{
	int n = c->nranks, rk = c->rank;
	size_t b = bytes / (size_t)n;
	struct gcoll_request *r;
	struct gc_sched *s;
	const char *src;

	r = build_begin(c, &sendbuf, bytes, &recvbuf, bytes);
	if (!r)
		return GCOLL_ERR_NOMEM;
	s = gc_req_sched(r, type, GCOLL_SUM);
	if (!s)
		return gc_build_fail(r);
	src = sendbuf;
	if (bytes && sendbuf == recvbuf) {
		s->scratch_len = bytes;
		if (gc_phase(s) || gc_act(s, GC_ACT_COPY, SCR(0), sendbuf, NULL, bytes))
			return gc_build_fail(r);
		src = SCR(0);
	}
	if (gc_phase(s))
		return gc_build_fail(r);
	for (int i = 1; i < n; i++) {
		int to = md(rk + i, n), from = md(rk - i, n);

		if (SEND(c, s, to, PADD(src, (size_t)to * b), b) ||
		    RECV(c, s, from, (char *)recvbuf + (size_t)from * b, b))
			return gc_build_fail(r);
	}
	if (gc_act(s, GC_ACT_COPY, (char *)recvbuf + (size_t)rk * b, PADD(src, (size_t)rk * b), NULL, b))
		return gc_build_fail(r);
	return gc_submit(r, req);
}

gcoll_result_t gc_algo_barrier(struct gcoll_comm *c, gcoll_request_t *req)
{
	int n = c->nranks, rk = c->rank;
	struct gcoll_request *r;
	struct gc_sched *s;

	r = gc_req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	s = gc_req_sched(r, GCOLL_UINT8, GCOLL_SUM);
	if (!s)
		return gc_build_fail(r);
	s->scratch_len = 2;
	/* dissemination barrier */
	for (int k = 1; k < n; k <<= 1)
		if (gc_phase(s) || SEND(c, s, md(rk + k, n), SCR(0), 1) ||
		    RECV(c, s, md(rk - k, n), SCR(1), 1))
			return gc_build_fail(r);
	return gc_submit(r, req);
}

gcoll_result_t gc_algo_p2p(struct gcoll_comm *c, int kind, void *buf, size_t bytes,
			   gcoll_datatype_t type, int peer, gcoll_request_t *req)
{
	struct gcoll_request *r;
	struct gc_sched *s;

	r = gc_req_new(c);
	s = gc_sched_new(type, GCOLL_SUM);
	if (r)
		buf = gc_stage(r, buf, bytes, kind == 0, kind == 1);
	if (!r || !s || gc_req_add(r, s) || gc_phase(s) || gc_add_xfer(c, s, kind, peer, buf, bytes)) {
		if (r && s && r->ns)
			return gc_build_fail(r);
		free(s);
		if (r) {
			free(r->pre);
			free(r->post);
		}
		free(r);
		return GCOLL_ERR_NOMEM;
	}
	return gc_submit(r, req);
}

