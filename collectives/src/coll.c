/* SPDX-License-Identifier: MIT */
/*
 * Communicators, schedules and collective algorithms.
 *
 * A collective becomes a request made of one or more schedules (slices of
 * the buffer, pipelined: up to `depth` slices run at once).  A schedule is
 * a list of phases; a phase is a set of point-to-point transfers started
 * together plus local actions (reduce, copy, average) run once they all
 * complete.  Sequence numbers are assigned when the schedule is built, so
 * the k-th message from A to B matches the k-th receive B posted for A as
 * long as every rank issues operations in the same order.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_internal.h"

/* Scratch references: pointers into a schedule's scratch are built before
 * the scratch exists, so they are encoded in a non-canonical address range
 * and resolved when the schedule starts. */
#define GC_SCR_TAG 0xf000000000000000ull
#define GC_SCR_MASK 0xf000000000000000ull
static inline void *SCR(size_t off)
{
	return (void *)(uintptr_t)(GC_SCR_TAG | off);
}
static inline void *resolve(struct gc_sched *s, const void *p)
{
	uintptr_t v = (uintptr_t)p;

	if ((v & GC_SCR_MASK) == GC_SCR_TAG)
		return (char *)s->scratch + (v & ~GC_SCR_MASK);
	return (void *)v;
}
static inline bool is_scr(const void *p)
{
	return ((uintptr_t)p & GC_SCR_MASK) == GC_SCR_TAG;
}
/* Offset a (possibly scratch) pointer. */
static inline void *PADD(const void *p, size_t off)
{
	return (void *)((uintptr_t)p + off);
}

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gcoll_comm *registry;

/* ---------------------------------------------------------- group state */
static _Thread_local int group_depth;
static _Thread_local struct gcoll_request *group_head, **group_tail;

/* ------------------------------------------------------------ schedules */

static struct gc_sched *sched_new(gcoll_datatype_t t, gcoll_redop_t op)
{
	struct gc_sched *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->type = t;
	s->op = op;
	s->arena_slot = -1;
	return s;
}

static int grow(void **arr, int *cap, int need, size_t esz)
{
	if (need <= *cap)
		return 0;
	int nc = *cap ? *cap * 2 : 8;

	while (nc < need)
		nc *= 2;
	void *p = realloc(*arr, (size_t)nc * esz);

	if (!p)
		return -1;
	*arr = p;
	*cap = nc;
	return 0;
}

static int phase(struct gc_sched *s)
{
	if (grow((void **)&s->phases, &s->capp, s->nphase + 1, sizeof(*s->phases)))
		return -1;
	s->phases[s->nphase++] = (struct gc_phase){ .x0 = s->nx, .a0 = s->na };
	return 0;
}

static int add_xfer(struct gcoll_comm *c, struct gc_sched *s, int kind, int peer,
		    const void *buf, size_t len)
{
	struct gc_xfer *x;

	if (!len)
		return 0;
	if (grow((void **)&s->xfers, &s->capx, s->nx + 1, sizeof(*s->xfers)))
		return -1;
	x = calloc(1, sizeof(*x));
	if (!x)
		return -1;
	x->kind = kind;
	x->peer = peer;
	x->buf = (void *)buf;
	x->len = len;
	x->seq = kind == 0 ? c->send_seq[peer]++ : c->recv_seq[peer]++;
	s->xfers[s->nx++] = x;
	s->phases[s->nphase - 1].nx++;
	return 0;
}
#define SEND(c, s, peer, buf, len) add_xfer(c, s, 0, peer, buf, len)
#define RECV(c, s, peer, buf, len) add_xfer(c, s, 1, peer, buf, len)

static int act(struct gc_sched *s, int kind, void *dst, const void *a, const void *b,
	       size_t count)
{
	if (!count)
		return 0;
	if (kind == GC_ACT_COPY && dst == a)
		return 0;
	if (grow((void **)&s->acts, &s->capa, s->na + 1, sizeof(*s->acts)))
		return -1;
	s->acts[s->na++] = (struct gc_action){ kind, dst, a, b, count };
	s->phases[s->nphase - 1].na++;
	return 0;
}

static void sched_release_scratch(struct gcoll_comm *c, struct gc_sched *s)
{
	if (s->arena_slot >= 0) {
		c->arena_busy &= ~(1u << s->arena_slot);
		s->arena_slot = -1;
	} else if (s->scratch) {
		if (s->scratch_mr)
			gc_mr_free(c->tp, s->scratch_mr);
		free(s->scratch);
	}
	s->scratch = NULL;
	s->scratch_mr = NULL;
}

static void sched_free(struct gcoll_comm *c, struct gc_sched *s)
{
	for (int i = 0; i < s->nx; i++) {
		struct gc_xfer *x = s->xfers[i];

		if (!x)
			continue;
		if (x->state == GX_ACTIVE)
			gc_xfer_cancel(c, x);
		if (gc_xfer_release(c->tp, x))
			free(x);
		else
			gc_tp_adopt_zombie(c->tp, x);
	}
	sched_release_scratch(c, s);
	free(s->xfers);
	free(s->acts);
	free(s->phases);
	free(s);
}

static gcoll_result_t arena_get(struct gcoll_comm *c, struct gc_sched *s)
{
	gcoll_result_t rc;

	if (!s->scratch_len)
		return GCOLL_SUCCESS;
	if (!c->arena) {
		size_t sl = 2 * c->segsize + 64;

		if (sl < s->scratch_len)
			sl = s->scratch_len;
		sl = (sl + 4095) & ~(size_t)4095;
		c->arena = aligned_alloc(4096, sl * (size_t)c->arena_nslots);
		if (!c->arena)
			return gc_err(GCOLL_ERR_NOMEM, "cannot allocate scratch arena");
		c->arena_slot_len = sl;
		rc = gc_mr_reg(c->tp, c->arena, sl * (size_t)c->arena_nslots, -1, 0, &c->arena_mr);
		if (rc)
			return rc;
		c->arena_mr->pinned = 1;
	}
	if (s->scratch_len <= c->arena_slot_len) {
		for (int i = 0; i < c->arena_nslots; i++)
			if (!(c->arena_busy & (1u << i))) {
				c->arena_busy |= 1u << i;
				s->arena_slot = i;
				s->scratch = (char *)c->arena + (size_t)i * c->arena_slot_len;
				s->scratch_mr = c->arena_mr;
				return GCOLL_SUCCESS;
			}
	}
	size_t len = (s->scratch_len + 4095) & ~(size_t)4095;

	s->scratch = aligned_alloc(4096, len);
	if (!s->scratch)
		return gc_err(GCOLL_ERR_NOMEM, "cannot allocate %zu bytes of scratch", len);
	return gc_mr_reg(c->tp, s->scratch, len, -1, 0, &s->scratch_mr);
}

static gcoll_result_t phase_start(struct gcoll_comm *c, struct gc_sched *s)
{
	struct gc_phase *p = &s->phases[s->cur];

	for (int i = p->x0; i < p->x0 + p->nx; i++) {
		struct gc_xfer *x = s->xfers[i];
		gcoll_result_t rc;

		if (is_scr(x->buf)) {
			x->buf = resolve(s, x->buf);
			x->own_mr = s->scratch_mr;
		}
		rc = gc_xfer_start(c, x);
		if (rc)
			return rc;
	}
	return GCOLL_SUCCESS;
}

static gcoll_result_t sched_start(struct gcoll_comm *c, struct gc_sched *s)
{
	gcoll_result_t rc = arena_get(c, s);

	s->started = true;
	if (rc)
		return rc;
	s->cur = 0;
	if (s->nphase)
		return phase_start(c, s);
	return GCOLL_SUCCESS;
}

static void run_actions(struct gc_sched *s, struct gc_phase *p, int nranks)
{
	for (int i = p->a0; i < p->a0 + p->na; i++) {
		struct gc_action *a = &s->acts[i];
		void *dst = resolve(s, a->dst);
		const void *x = resolve(s, a->a), *y = resolve(s, a->b);

		switch (a->kind) {
		case GC_ACT_REDUCE:
			gc_reduce(dst, x, y, a->count, s->type, s->op);
			break;
		case GC_ACT_COPY:
			if (dst != x)
				memmove(dst, x, a->count);
			break;
		case GC_ACT_AVG:
			gc_scale_avg(dst, a->count, s->type, nranks);
			break;
		}
	}
}

/* Advance s; returns SUCCESS when done, IN_PROGRESS, or an error. */
static gcoll_result_t sched_progress(struct gcoll_comm *c, struct gc_sched *s)
{
	while (s->cur < s->nphase) {
		struct gc_phase *p = &s->phases[s->cur];
		bool all = true;

		for (int i = p->x0; i < p->x0 + p->nx; i++) {
			struct gc_xfer *x = s->xfers[i];
			gcoll_result_t rc;

			if (x->state == GX_FAILED)
				return x->err ? x->err : GCOLL_ERR_REMOTE;
			if (x->state == GX_ACTIVE) {
				rc = gc_xfer_advance(c, x);
				if (rc)
					return rc;
				if (x->state == GX_FAILED)
					return x->err ? x->err : GCOLL_ERR_REMOTE;
				if (x->state != GX_DONE)
					all = false;
			}
		}
		if (!all)
			return GCOLL_IN_PROGRESS;
		for (int i = p->x0; i < p->x0 + p->nx; i++) {
			struct gc_xfer *x = s->xfers[i];

			if (gc_xfer_release(c->tp, x))
				free(x);
			else
				gc_tp_adopt_zombie(c->tp, x);
			s->xfers[i] = NULL;
		}
		run_actions(s, p, c->nranks);
		s->cur++;
		if (s->cur < s->nphase) {
			gcoll_result_t rc = phase_start(c, s);

			if (rc)
				return rc;
		}
	}
	return GCOLL_SUCCESS;
}

/* ------------------------------------------------------------- requests */

static struct gcoll_request *req_new(struct gcoll_comm *c)
{
	struct gcoll_request *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->comm = c;
	r->depth = c->depth;
	return r;
}

static int req_add(struct gcoll_request *r, struct gc_sched *s)
{
	struct gc_sched **n = realloc(r->s, sizeof(*n) * (size_t)(r->ns + 1));

	if (!n)
		return -1;
	r->s = n;
	r->s[r->ns++] = s;
	s->req = r;
	return 0;
}

static void run_copies(struct gc_copy *cp, int n)
{
	for (int i = 0; i < n; i++)
		memcpy(cp[i].dst, cp[i].src, cp[i].len);
}

static int add_copy(struct gc_copy **arr, int *n, void *dst, const void *src, size_t len)
{
	struct gc_copy *a = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));

	if (!a)
		return -1;
	a[*n] = (struct gc_copy){ dst, src, len };
	*arr = a;
	(*n)++;
	return 0;
}

/* If [buf, buf+len) lies in a staged dma-buf region, return the matching
 * address in its host bounce buffer and queue the copies: inputs before the
 * request starts, outputs after it completes. */
static void *stage(struct gcoll_request *r, const void *buf, size_t len, bool in, bool out)
{
	struct gcoll_mem *m;
	char *h;

	if (!buf || !len || !r->comm->staged || !(m = gc_stage_find(r->comm, buf, len)))
		return (void *)buf;
	h = (char *)m->host + ((const char *)buf - (const char *)m->va);
	if ((in && add_copy(&r->pre, &r->npre, h, buf, len)) ||
	    (out && add_copy(&r->post, &r->npost, (void *)buf, h, len)))
		return (void *)buf;   /* out of memory: fall back to the CPU mapping */
	return h;
}

static void req_free(struct gcoll_request *r)
{
	struct gcoll_comm *c = r->comm;
	struct gcoll_request **pp;

	for (pp = &c->reqs; *pp; pp = &(*pp)->cnext)
		if (*pp == r) {
			*pp = r->cnext;
			break;
		}
	for (int i = 0; i < r->ns; i++)
		if (r->s[i])
			sched_free(c, r->s[i]);
	free(r->s);
	free(r->pre);
	free(r->post);
	free(r);
}

static void req_fail(struct gcoll_request *r, gcoll_result_t rc)
{
	if (r->rc == GCOLL_SUCCESS || r->rc == GCOLL_IN_PROGRESS)
		r->rc = rc;
	for (int i = 0; i < r->ns; i++)
		if (r->s[i]) {
			sched_free(r->comm, r->s[i]);
			r->s[i] = NULL;
		}
	r->ndone = r->ns;
	if (rc == GCOLL_ERR_TIMEOUT || rc == GCOLL_ERR_REMOTE || rc == GCOLL_ERR_FABRIC)
		if (!r->comm->async_err)
			r->comm->async_err = rc;
}

static void req_progress(struct gcoll_request *r)
{
	gcoll_result_t rc;

	if (r->rc != GCOLL_IN_PROGRESS)
		return;
	for (int i = r->ndone; i < r->next_start; i++) {
		struct gc_sched *s = r->s[i];

		if (!s || s->done)
			continue;
		rc = sched_progress(r->comm, s);
		if (rc == GCOLL_IN_PROGRESS)
			continue;
		if (rc) {
			req_fail(r, rc);
			return;
		}
		s->done = true;
		sched_release_scratch(r->comm, s);
	}
	/* retire finished schedules in order, start new ones */
	while (r->ndone < r->next_start && r->s[r->ndone]->done) {
		sched_free(r->comm, r->s[r->ndone]);
		r->s[r->ndone] = NULL;
		r->ndone++;
	}
	while (r->next_start < r->ns && r->next_start - r->ndone < r->depth) {
		struct gc_sched *s = r->s[r->next_start++];

		rc = sched_start(r->comm, s);
		if (!rc)
			rc = sched_progress(r->comm, s);
		if (rc == GCOLL_SUCCESS) {
			s->done = true;
			sched_release_scratch(r->comm, s);
		} else if (rc != GCOLL_IN_PROGRESS) {
			req_fail(r, rc);
			return;
		}
	}
	while (r->ndone < r->next_start && r->s[r->ndone]->done) {
		sched_free(r->comm, r->s[r->ndone]);
		r->s[r->ndone] = NULL;
		r->ndone++;
	}
	if (r->ndone == r->ns) {
		run_copies(r->post, r->npost);
		r->rc = GCOLL_SUCCESS;
	}
}

static void req_start(struct gcoll_request *r)
{
	struct gcoll_comm *c = r->comm;

	r->rc = GCOLL_IN_PROGRESS;
	r->in_group = false;
	r->deadline = c->timeout_ms ? gc_now_ms() + c->timeout_ms : UINT64_MAX;
	r->cnext = c->reqs;
	c->reqs = r;
	run_copies(r->pre, r->npre);
	req_progress(r);
}

static int progress_all(struct gc_transport *tp)
{
	int n = gc_tp_progress(tp);

	for (struct gcoll_comm *c = tp->comms; c; c = c->tp_next)
		for (struct gcoll_request *r = c->reqs, *nx; r; r = nx) {
			nx = r->cnext;
			/* a broken transport (tp->fatal) fails what is in
			 * flight instead of leaving it to stall */
			if (tp->fatal && r->rc == GCOLL_IN_PROGRESS && !r->in_group)
				req_fail(r, tp->fatal);
			else
				req_progress(r);
		}
	if (tp->fatal)
		for (struct gcoll_comm *c = tp->comms; c; c = c->tp_next)
			if (!c->async_err)
				c->async_err = tp->fatal;
	return n;
}

/* On timeout, say what we were waiting for (the usual "who hangs" question). */
static void req_dump(struct gcoll_request *r)
{
	for (int i = r->ndone; i < r->next_start && i < r->ns; i++) {
		struct gc_sched *s = r->s[i];
		struct gc_phase *p;

		if (!s || s->done || s->cur >= s->nphase)
			continue;
		p = &s->phases[s->cur];
		for (int k = p->x0; k < p->x0 + p->nx; k++) {
			struct gc_xfer *x = s->xfers[k];

			if (!x || x->state != GX_ACTIVE)
				continue;
			gc_log(GC_LOG_ERR,
			       "  slice %d phase %d/%d: %s rank %d, %zu bytes, seq %u, rail %d, %s%s%s",
			       i, s->cur, s->nphase, x->kind ? "recv from" : "send to", x->peer, x->len,
			       x->seq, x->rail, x->rndv ? "rendezvous" : "eager",
			       x->rndv && x->kind == 0 && !x->ctrl_ready ? ", no control entry yet" : "",
			       x->rndv && x->nseg ? ", some segments missing" : "");
		}
	}
}

static gcoll_result_t req_test(struct gcoll_request *r)
{
	if (r->rc == GCOLL_IN_PROGRESS) {
		progress_all(r->comm->tp);
		if (r->rc == GCOLL_IN_PROGRESS && gc_now_ms() > r->deadline) {
			gc_err(GCOLL_ERR_TIMEOUT, "rank %d: operation did not complete within %llu ms",
			       r->comm->rank, (unsigned long long)r->comm->timeout_ms);
			if (gc_log_level >= GC_LOG_ERR)
				req_dump(r);
			req_fail(r, GCOLL_ERR_TIMEOUT);
		}
	}
	return r->rc;
}

static gcoll_result_t req_wait(struct gcoll_request *r)
{
	int idle = 0;
	gcoll_result_t rc;

	for (;;) {
		if (r->rc == GCOLL_IN_PROGRESS) {
			if (progress_all(r->comm->tp))
				idle = 0;
			else
				idle++;
		}
		if ((rc = req_test(r)) != GCOLL_IN_PROGRESS)
			return rc;
		/* more ranks than cores: do not spin on a peer's time slice */
		if (r->comm->tp->yield_every > 0 && idle >= r->comm->tp->yield_every) {
			sched_yield();
			idle = 0;
		}
	}
}

/* ------------------------------------------------------------ validation */

static gcoll_result_t check_comm(struct gcoll_comm *c, const char *fn)
{
	struct gcoll_comm *i;

	if (!c)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
	pthread_mutex_lock(&reg_lock);
	for (i = registry; i && i != c; i = i->reg_next)
		;
	pthread_mutex_unlock(&reg_lock);
	if (!i)
		return gc_err(GCOLL_ERR_INVALID_USAGE,
			      "%s: comm %p is not a live communicator (destroyed or aborted?)",
			      fn, (void *)c);
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_common(struct gcoll_comm *c, const char *fn)
{
	gcoll_result_t rc = check_comm(c, fn);

	if (rc)
		return rc;
	if (!c->async_err && c->tp->fatal)
		c->async_err = c->tp->fatal;
	if (c->async_err)
		return gc_err(c->async_err, "%s: communicator is in error state (%s); abort or destroy it",
			      fn, gcoll_get_error_string(c->async_err));
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_type(gcoll_datatype_t t, const char *fn)
{
	if ((unsigned)t >= GCOLL_NUM_TYPES)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: datatype %d is not a gcoll_datatype_t",
			      fn, (int)t);
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_op(gcoll_redop_t op, const char *fn)
{
	if ((unsigned)op >= GCOLL_NUM_OPS)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: op %d is not a gcoll_redop_t", fn, (int)op);
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_buf(const void *p, size_t count, const char *name, const char *fn)
{
	if (!p && count)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
	if (is_scr(p))
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: %s is not a user-space address", fn, name);
	return GCOLL_SUCCESS;
}

/* bytes = count * es * mult, rejecting overflow and absurd sizes */
static gcoll_result_t check_count(size_t count, gcoll_datatype_t t, size_t mult,
				  const char *fn, size_t *bytes)
{
	size_t es = gc_type_size(t), b;

	if (__builtin_mul_overflow(count, es, &b) || __builtin_mul_overflow(b, mult, &b) ||
	    b > (1ull << 56))
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT,
			      "%s: count %zu of %zu-byte elements (x%zu) overflows", fn, count, es, mult);
	*bytes = b;
	return GCOLL_SUCCESS;
}

/* Submit a built request: start it (or queue it in the open group), then
 * wait if the caller has no handle. */
static gcoll_result_t submit(struct gcoll_request *r, gcoll_request_t *req)
{
	if (req) {
		r->user = true;
		*req = r;
	}
	if (group_depth > 0) {
		r->in_group = true;
		r->rc = GCOLL_IN_PROGRESS;
		r->gnext = NULL;
		if (!group_tail)
			group_tail = &group_head;
		*group_tail = r;
		group_tail = &r->gnext;
		return GCOLL_SUCCESS;
	}
	req_start(r);
	if (req)
		return r->rc == GCOLL_IN_PROGRESS || r->rc == GCOLL_SUCCESS ? GCOLL_SUCCESS : r->rc;
	gcoll_result_t rc = req_wait(r);

	req_free(r);
	return rc;
}

static gcoll_result_t build_fail(struct gcoll_request *r)
{
	r->rc = GCOLL_ERR_NOMEM;
	for (int i = 0; i < r->ns; i++)
		sched_free(r->comm, r->s[i]);
	free(r->s);
	free(r->pre);
	free(r->post);
	free(r);
	return gc_err(GCOLL_ERR_NOMEM, "out of memory building a schedule");
}

/* ------------------------------------------------------------ algorithms */

struct chunks {
	size_t base, rem;
};
static size_t ck_off(struct chunks *k, int i)
{
	return (size_t)i * k->base + ((size_t)i < k->rem ? (size_t)i : k->rem);
}
static size_t ck_len(struct chunks *k, int i)
{
	return k->base + ((size_t)i < k->rem ? 1 : 0);
}
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
		if (phase(s))
			return -1;
		if (r % 2 == 0) {
			if (SEND(c, s, r + 1, buf, b))
				return -1;
			nr = -1;
		} else {
			if (RECV(c, s, r - 1, tmp, b) || act(s, GC_ACT_REDUCE, buf, buf, tmp, cnt))
				return -1;
			nr = r / 2;
		}
	} else {
		nr = r - rem;
	}
	if (nr >= 0) {
		for (int mask = 1; mask < p; mask <<= 1) {
			int pn = nr ^ mask, peer = pn < rem ? pn * 2 + 1 : pn + rem;

			if (phase(s) || SEND(c, s, peer, buf, b) || RECV(c, s, peer, tmp, b) ||
			    act(s, GC_ACT_REDUCE, buf, buf, tmp, cnt))
				return -1;
		}
		if (avg && act(s, GC_ACT_AVG, buf, NULL, NULL, cnt))
			return -1;
	}
	if (r < 2 * rem) {
		if (phase(s))
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
	if (phase(s) || act(s, GC_ACT_COPY, rb, sb, NULL, cnt * es))
		return -1;
	return rd_core(c, s, rb, SCR(0), cnt, es, avg);
}

static int ar_ring(struct gcoll_comm *c, struct gc_sched *s, const char *sb, char *rb,
		   size_t cnt, size_t es, bool avg)
{
	int n = c->nranks, r = c->rank, right = md(r + 1, n), left = md(r - 1, n);
	struct chunks k = { cnt / (size_t)n, cnt % (size_t)n };

	s->scratch_len = ck_len(&k, 0) * es;
	for (int st = 0; st < n - 1; st++) {
		int cs = md(r - st, n), cr = md(r - st - 1, n);
		const char *src = st == 0 ? sb : rb;

		if (phase(s) ||
		    SEND(c, s, right, src + ck_off(&k, cs) * es, ck_len(&k, cs) * es) ||
		    RECV(c, s, left, SCR(0), ck_len(&k, cr) * es) ||
		    act(s, GC_ACT_REDUCE, rb + ck_off(&k, cr) * es, sb + ck_off(&k, cr) * es,
			SCR(0), ck_len(&k, cr)))
			return -1;
		if (st == n - 2 && avg &&
		    act(s, GC_ACT_AVG, rb + ck_off(&k, cr) * es, NULL, NULL, ck_len(&k, cr)))
			return -1;
	}
	for (int st = 0; st < n - 1; st++) {
		int cs = md(r + 1 - st, n), cr = md(r - st, n);

		if (phase(s) ||
		    SEND(c, s, right, rb + ck_off(&k, cs) * es, ck_len(&k, cs) * es) ||
		    RECV(c, s, left, rb + ck_off(&k, cr) * es, ck_len(&k, cr) * es))
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

/* single-schedule request with just a local copy (n == 1) */
static gcoll_result_t local_copy(struct gcoll_comm *c, void *dst, const void *src, size_t bytes,
				 gcoll_request_t *req)
{
	struct gcoll_request *r = req_new(c);
	struct gc_sched *s = sched_new(GCOLL_UINT8, GCOLL_SUM);

	if (!r || !s || req_add(r, s) || phase(s) || act(s, GC_ACT_COPY, dst, src, NULL, bytes)) {
		free(s);
		if (r)
			return build_fail(r);
		return GCOLL_ERR_NOMEM;
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_allreduce(const void *sendbuf, void *recvbuf, size_t count,
				      gcoll_datatype_t type, gcoll_redop_t op,
				      gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_allreduce";
	gcoll_result_t rc;
	size_t bytes = 0, es, slice;
	struct gcoll_request *r;
	bool ring, avg = op == GCOLL_AVG;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	es = gc_type_size(type);
	if (c->nranks == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	ring = use_ring(c, bytes);
	slice = c->segsize / es * (ring ? (size_t)c->nranks : 1);
	if (!slice)
		slice = 1;
	r = req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	sendbuf = stage(r, sendbuf, bytes, true, false);
	recvbuf = stage(r, recvbuf, bytes, false, true);
	for (size_t off = 0; off < count; off += slice) {
		size_t cnt = count - off < slice ? count - off : slice;
		struct gc_sched *s = sched_new(type, op);

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		if (ring ? ar_ring(c, s, (const char *)sendbuf + off * es, (char *)recvbuf + off * es,
				   cnt, es, avg)
			 : ar_rd(c, s, (const char *)sendbuf + off * es, (char *)recvbuf + off * es,
				 cnt, es, avg))
			return build_fail(r);
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_reduce_scatter(const void *sendbuf, void *recvbuf, size_t rcount,
					   gcoll_datatype_t type, gcoll_redop_t op,
					   gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_reduce_scatter";
	gcoll_result_t rc;
	size_t bytes = 0, es, slice;
	struct gcoll_request *r;
	bool avg = op == GCOLL_AVG;
	int n, rk;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_buf(sendbuf, rcount, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, rcount, "recvbuf", fn)) ||
	    (rc = check_count(rcount, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	es = gc_type_size(type);
	n = c->nranks;
	rk = c->rank;
	if (n == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	r = req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	sendbuf = stage(r, sendbuf, bytes, true, false);
	recvbuf = stage(r, recvbuf, rcount * es, false, true);
	if (!use_ring(c, bytes)) {
		/* small: recursive doubling on a scratch copy, keep our chunk */
		struct gc_sched *s = sched_new(type, op);
		size_t tot = rcount * (size_t)n;

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		s->scratch_len = 2 * bytes;
		if (phase(s) || act(s, GC_ACT_COPY, SCR(0), sendbuf, NULL, bytes) ||
		    rd_core(c, s, SCR(0), SCR(bytes), tot, es, false) ||
		    act(s, GC_ACT_COPY, recvbuf, SCR((size_t)rk * rcount * es), NULL, rcount * es) ||
		    (avg && act(s, GC_ACT_AVG, recvbuf, NULL, NULL, rcount)))
			return build_fail(r);
		return submit(r, req);
	}
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < rcount; o += slice) {
		size_t k = rcount - o < slice ? rcount - o : slice, kb = k * es;
		struct gc_sched *s = sched_new(type, op);
		const char *sb = sendbuf;
		char *rb = (char *)recvbuf + o * es;

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		s->scratch_len = 2 * kb;
#define CH(i) (sb + ((size_t)(i) * rcount + o) * es)
		for (int st = 0; st < n - 1; st++) {
			int cs = md(rk - st - 1, n), cr = md(rk - st - 2, n);
			const void *src = st == 0 ? (const void *)CH(cs) : SCR((size_t)((st - 1) % 2) * kb);
			void *t = SCR((size_t)(st % 2) * kb);
			void *dst = st == n - 2 ? (void *)rb : t;

			if (phase(s) || SEND(c, s, md(rk + 1, n), src, kb) ||
			    RECV(c, s, md(rk - 1, n), t, kb) ||
			    act(s, GC_ACT_REDUCE, dst, t, CH(cr), k))
				return build_fail(r);
		}
#undef CH
		if (avg && act(s, GC_ACT_AVG, rb, NULL, NULL, k))
			return build_fail(r);
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_allgather(const void *sendbuf, void *recvbuf, size_t scount,
				      gcoll_datatype_t type, gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_allgather";
	gcoll_result_t rc;
	size_t bytes = 0, es, slice;
	struct gcoll_request *r;
	int n, rk;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(sendbuf, scount, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, scount, "recvbuf", fn)) ||
	    (rc = check_count(scount, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	es = gc_type_size(type);
	n = c->nranks;
	rk = c->rank;
	if (n == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	r = req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	sendbuf = stage(r, sendbuf, scount * es, true, false);
	recvbuf = stage(r, recvbuf, bytes, false, true);
	if ((n & (n - 1)) == 0 && !use_ring(c, bytes)) {
		/* small, power of two: recursive doubling - at step k exchange
		 * the 2^k contiguous blocks gathered so far with rank ^ 2^k */
		struct gc_sched *s = sched_new(type, GCOLL_SUM);
		size_t b = scount * es;
		char *rb = recvbuf;

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		if (phase(s) || act(s, GC_ACT_COPY, rb + (size_t)rk * b, sendbuf, NULL, b))
			return build_fail(r);
		for (int mask = 1; mask < n; mask <<= 1) {
			int peer = rk ^ mask, mine = rk & ~(mask - 1), theirs = peer & ~(mask - 1);

			if (phase(s) || SEND(c, s, peer, rb + (size_t)mine * b, (size_t)mask * b) ||
			    RECV(c, s, peer, rb + (size_t)theirs * b, (size_t)mask * b))
				return build_fail(r);
		}
		return submit(r, req);
	}
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < scount; o += slice) {
		size_t kb = (scount - o < slice ? scount - o : slice) * es;
		struct gc_sched *s = sched_new(type, GCOLL_SUM);
		char *rb = recvbuf;
#define CH(i) (rb + ((size_t)(i) * scount + o) * es)

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		if (phase(s) || act(s, GC_ACT_COPY, CH(rk), (const char *)sendbuf + o * es, NULL, kb))
			return build_fail(r);
		for (int st = 0; st < n - 1; st++)
			if (phase(s) || SEND(c, s, md(rk + 1, n), CH(md(rk - st, n)), kb) ||
			    RECV(c, s, md(rk - 1, n), CH(md(rk - st - 1, n)), kb))
				return build_fail(r);
#undef CH
	}
	return submit(r, req);
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

static gcoll_result_t check_root(struct gcoll_comm *c, int root, const char *fn)
{
	if (root < 0 || root >= c->nranks)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: root %d out of range [0, %d)", fn, root,
			      c->nranks);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_broadcast(const void *sendbuf, void *recvbuf, size_t count,
				      gcoll_datatype_t type, int root, gcoll_comm_t c,
				      gcoll_request_t *req)
{
	static const char fn[] = "gcoll_broadcast";
	gcoll_result_t rc;
	size_t bytes = 0, slice;
	struct gcoll_request *r;
	int n, v, parent, child[32], nc;
	bool chain;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_root(c, root, fn)) ||
	    (c->rank == root && (rc = check_buf(sendbuf, count, "sendbuf", fn))) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	n = c->nranks;
	if (n == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	v = md(c->rank - root, n);
	chain = c->algo == GC_ALGO_RING || (c->algo == GC_ALGO_AUTO && bytes >= c->ring_thr);
	nc = tree_links(v, n, chain, &parent, child, 32);
	r = req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	if (v == 0)
		sendbuf = stage(r, sendbuf, bytes, true, false);
	recvbuf = stage(r, recvbuf, bytes, false, true);
	slice = c->segsize;
	for (size_t o = 0; o < bytes; o += slice) {
		size_t kb = bytes - o < slice ? bytes - o : slice;
		struct gc_sched *s = sched_new(type, GCOLL_SUM);
		char *rb = (char *)recvbuf + o;
		const char *src = v == 0 ? (const char *)sendbuf + o : rb;

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		if (parent >= 0 && (phase(s) || RECV(c, s, md(parent + root, n), rb, kb)))
			return build_fail(r);
		if (phase(s))
			return build_fail(r);
		for (int i = 0; i < nc; i++)
			if (SEND(c, s, md(child[i] + root, n), src, kb))
				return build_fail(r);
		if (v == 0 && act(s, GC_ACT_COPY, rb, src, NULL, kb))
			return build_fail(r);
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_reduce(const void *sendbuf, void *recvbuf, size_t count,
				   gcoll_datatype_t type, gcoll_redop_t op, int root,
				   gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_reduce";
	gcoll_result_t rc;
	size_t bytes = 0, es, slice;
	struct gcoll_request *r;
	int n, v, parent, child[32], nc;
	bool chain;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_root(c, root, fn)) || (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (c->rank == root && (rc = check_buf(recvbuf, count, "recvbuf", fn))) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	n = c->nranks;
	es = gc_type_size(type);
	if (n == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	v = md(c->rank - root, n);
	chain = c->algo == GC_ALGO_RING || (c->algo == GC_ALGO_AUTO && bytes >= c->ring_thr);
	nc = tree_links(v, n, chain, &parent, child, 32);
	r = req_new(c);
	if (!r)
		return GCOLL_ERR_NOMEM;
	sendbuf = stage(r, sendbuf, bytes, true, false);
	if (v == 0)
		recvbuf = stage(r, recvbuf, bytes, false, true);
	slice = c->segsize / es;
	if (!slice)
		slice = 1;
	for (size_t o = 0; o < count; o += slice) {
		size_t k = count - o < slice ? count - o : slice, kb = k * es;
		struct gc_sched *s = sched_new(type, op);
		const char *sb = (const char *)sendbuf + o * es;
		void *acc = v == 0 ? (void *)((char *)recvbuf + o * es) : SCR((size_t)nc * kb);
		const void *cur = sb;

		if (!s || req_add(r, s)) {
			free(s);
			return build_fail(r);
		}
		s->scratch_len = (size_t)(nc + 1) * kb;
		if (nc) {
			if (phase(s))
				return build_fail(r);
			for (int i = 0; i < nc; i++)
				if (RECV(c, s, md(child[i] + root, n), SCR((size_t)i * kb), kb))
					return build_fail(r);
			for (int i = 0; i < nc; i++) {
				if (act(s, GC_ACT_REDUCE, acc, cur, SCR((size_t)i * kb), k))
					return build_fail(r);
				cur = acc;
			}
		}
		if (v == 0) {
			if (!nc && (phase(s) || act(s, GC_ACT_COPY, acc, sb, NULL, kb)))
				return build_fail(r);
			if (op == GCOLL_AVG && act(s, GC_ACT_AVG, acc, NULL, NULL, k))
				return build_fail(r);
		} else if (phase(s) || SEND(c, s, md(parent + root, n), cur, kb)) {
			return build_fail(r);
		}
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_alltoall(const void *sendbuf, void *recvbuf, size_t count,
				     gcoll_datatype_t type, gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_alltoall";
	gcoll_result_t rc;
	size_t bytes = 0, b;
	struct gcoll_request *r;
	struct gc_sched *s;
	const char *src;
	int n, rk;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	n = c->nranks;
	rk = c->rank;
	b = bytes / (size_t)n;
	if (n == 1)
		return local_copy(c, recvbuf, sendbuf, bytes, req);
	r = req_new(c);
	s = sched_new(type, GCOLL_SUM);
	if (!r || !s || req_add(r, s)) {
		free(s);
		if (r)
			return build_fail(r);
		return GCOLL_ERR_NOMEM;
	}
	sendbuf = stage(r, sendbuf, bytes, true, false);
	recvbuf = stage(r, recvbuf, bytes, false, true);
	src = sendbuf;
	if (bytes && sendbuf == recvbuf) {
		s->scratch_len = bytes;
		if (phase(s) || act(s, GC_ACT_COPY, SCR(0), sendbuf, NULL, bytes))
			return build_fail(r);
		src = SCR(0);
	}
	if (phase(s))
		return build_fail(r);
	for (int i = 1; i < n; i++) {
		int to = md(rk + i, n), from = md(rk - i, n);

		if (SEND(c, s, to, PADD(src, (size_t)to * b), b) ||
		    RECV(c, s, from, (char *)recvbuf + (size_t)from * b, b))
			return build_fail(r);
	}
	if (act(s, GC_ACT_COPY, (char *)recvbuf + (size_t)rk * b, PADD(src, (size_t)rk * b), NULL, b))
		return build_fail(r);
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_barrier(gcoll_comm_t c, gcoll_request_t *req)
{
	struct gcoll_request *r;
	struct gc_sched *s;
	gcoll_result_t rc;
	int n, rk;

	if ((rc = check_common(c, "gcoll_barrier")))
		return rc;
	n = c->nranks;
	rk = c->rank;
	r = req_new(c);
	s = sched_new(GCOLL_UINT8, GCOLL_SUM);
	if (!r || !s || req_add(r, s)) {
		free(s);
		if (r)
			return build_fail(r);
		return GCOLL_ERR_NOMEM;
	}
	s->scratch_len = 2;
	/* dissemination barrier */
	for (int k = 1; k < n; k <<= 1)
		if (phase(s) || SEND(c, s, md(rk + k, n), SCR(0), 1) ||
		    RECV(c, s, md(rk - k, n), SCR(1), 1))
			return build_fail(r);
	return submit(r, req);
}

static gcoll_result_t p2p(int kind, void *buf, size_t count, gcoll_datatype_t type, int peer,
			  gcoll_comm_t c, gcoll_request_t *req, const char *fn)
{
	struct gcoll_request *r;
	struct gc_sched *s;
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(buf, count, kind ? "recvbuf" : "sendbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	if (peer < 0 || peer >= c->nranks || peer == c->rank)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: peer %d invalid (nranks %d, self %d)",
			      fn, peer, c->nranks, c->rank);
	r = req_new(c);
	s = sched_new(type, GCOLL_SUM);
	if (r)
		buf = stage(r, buf, bytes, kind == 0, kind == 1);
	if (!r || !s || req_add(r, s) || phase(s) || add_xfer(c, s, kind, peer, buf, bytes)) {
		if (r && s && r->ns)
			return build_fail(r);
		free(s);
		if (r) {
			free(r->pre);
			free(r->post);
		}
		free(r);
		return GCOLL_ERR_NOMEM;
	}
	return submit(r, req);
}

GC_API gcoll_result_t gcoll_send(const void *sendbuf, size_t count, gcoll_datatype_t type,
				 int peer, gcoll_comm_t c, gcoll_request_t *req)
{
	return p2p(0, (void *)sendbuf, count, type, peer, c, req, "gcoll_send");
}

GC_API gcoll_result_t gcoll_recv(void *recvbuf, size_t count, gcoll_datatype_t type, int peer,
				 gcoll_comm_t c, gcoll_request_t *req)
{
	return p2p(1, recvbuf, count, type, peer, c, req, "gcoll_recv");
}

/* ---------------------------------------------------------------- groups */

GC_API gcoll_result_t gcoll_group_start(void)
{
	group_depth++;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_group_end(void)
{
	struct gcoll_request *r, *nx, *head;
	gcoll_result_t rc = GCOLL_SUCCESS;

	if (group_depth <= 0)
		return gc_err(GCOLL_ERR_INVALID_USAGE, "gcoll_group_end without gcoll_group_start");
	if (--group_depth > 0)
		return GCOLL_SUCCESS;
	head = group_head;
	group_head = NULL;
	group_tail = &group_head;
	for (r = head; r; r = r->gnext)
		req_start(r);
	for (r = head; r; r = nx) {
		nx = r->gnext;
		if (r->user)
			continue;
		gcoll_result_t e = req_wait(r);

		if (e && !rc)
			rc = e;
		req_free(r);
	}
	return rc;
}

/* A request the user may test or wait on: not NULL, and started. */
static gcoll_result_t req_usable(gcoll_request_t r, const char *fn)
{
	if (!r)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: req is NULL", fn);
	if (r->in_group)
		return gc_err(GCOLL_ERR_INVALID_USAGE, "%s: request not started (group still open)", fn);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_test(gcoll_request_t r)
{
	gcoll_result_t rc = req_usable(r, "gcoll_test");

	if (rc)
		return rc;
	rc = req_test(r);
	if (rc == GCOLL_IN_PROGRESS)
		return rc;
	req_free(r);
	return rc;
}

GC_API gcoll_result_t gcoll_wait(gcoll_request_t r)
{
	gcoll_result_t rc = req_usable(r, "gcoll_wait");

	if (rc)
		return rc;
	rc = req_wait(r);
	req_free(r);
	return rc;
}

/* --------------------------------------------------------- communicators */

static void comm_env(struct gcoll_comm *c)
{
	const char *a = getenv("GCOLL_ALGO");

	c->timeout_ms = gc_env_u64("GCOLL_TIMEOUT_MS", 120000);
	c->ring_thr = gc_env_u64("GCOLL_RING_THRESHOLD", 256 << 10);
	c->segsize = gc_env_u64("GCOLL_SEGMENT_SIZE", 1 << 20);
	c->eager_max = gc_env_u64("GCOLL_EAGER_MAX", 16 << 10);
	c->wsize = gc_env_u64("GCOLL_WRITE_SIZE", 512 << 10);
	c->depth = (int)gc_env_u64("GCOLL_PIPELINE_DEPTH", 2);
	if (c->segsize < 64)
		c->segsize = 64;
	if (c->wsize < 4096)
		c->wsize = 4096;
	if (c->wsize > UINT32_MAX)
		c->wsize = 1u << 30;
	if (c->depth < 1)
		c->depth = 1;
	if (c->depth > 16)
		c->depth = 16;
	c->arena_nslots = c->depth + 1;
	c->algo = GC_ALGO_AUTO;
	if (a && !strcmp(a, "ring"))
		c->algo = GC_ALGO_RING;
	else if (a && (!strcmp(a, "rd") || !strcmp(a, "recursive")))
		c->algo = GC_ALGO_RD;
	else if (a && !strcmp(a, "tree"))
		c->algo = GC_ALGO_TREE;
}

static struct gcoll_comm *comm_alloc(int rank, int nranks)
{
	struct gcoll_comm *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->magic = GC_COMM_MAGIC;
	c->rank = rank;
	c->nranks = nranks;
	c->tpeer = calloc((size_t)nranks, sizeof(int));
	c->send_seq = calloc((size_t)nranks, sizeof(uint32_t));
	c->recv_seq = calloc((size_t)nranks, sizeof(uint32_t));
	if (!c->tpeer || !c->send_seq || !c->recv_seq) {
		free(c->tpeer);
		free(c->send_seq);
		free(c->recv_seq);
		free(c);
		return NULL;
	}
	comm_env(c);
	return c;
}

static void comm_link(struct gcoll_comm *c, struct gc_transport *tp)
{
	/* shm moves large tagged messages with a single copy (CMA) itself:
	 * eager up to 256 KiB saves the control round trip there */
	if (!getenv("GCOLL_EAGER_MAX") && !strcmp(tp->prov_name, "shm"))
		c->eager_max = 256 << 10;
	c->tp = tp;
	c->tp_next = tp->comms;
	tp->comms = c;
	pthread_mutex_lock(&reg_lock);
	c->reg_next = registry;
	registry = c;
	pthread_mutex_unlock(&reg_lock);
}

struct addr_blob {
	int32_t status;
	int32_t nrails;
	uint32_t addrlen;
	uint32_t pad;
	char prov[32];
	char addr[GC_MAX_RAILS * GC_ADDR_MAX];
};

/* Open a transport over prov and trade every rank's status and addresses
 * (all[]).  *tpp is the open transport, NULL if it failed here; the result
 * is the exchange's only, so that a local failure fails every rank quickly. */
static gcoll_result_t tp_exchange(struct gc_boot *b, const char *prov, bool quiet,
				  struct addr_blob *mine, struct addr_blob *all,
				  struct gc_transport **tpp)
{
	struct gc_transport *tp = NULL;
	gcoll_result_t rc;

	memset(mine, 0, sizeof(*mine));
	gc_err_quiet += quiet;
	rc = gc_tp_open((int)gc_env_u64("GCOLL_NRAILS", 1), prov, &tp);
	gc_err_quiet -= quiet;
	mine->status = rc;
	if (!rc) {
		mine->nrails = tp->nrails;
		mine->addrlen = (uint32_t)tp->addrlen;
		snprintf(mine->prov, sizeof(mine->prov), "%s", tp->prov_name);
		for (int i = 0; i < tp->nrails; i++)
			memcpy(mine->addr + (size_t)i * tp->addrlen, tp->addr[i], tp->addrlen);
	}
	*tpp = tp;
	rc = gc_boot_allgather(b, mine, sizeof(*mine), all);
	if (rc && tp) {
		gc_tp_put(tp);
		*tpp = NULL;
	}
	return rc;
}

GC_API gcoll_result_t gcoll_comm_init_rank(gcoll_comm_t *comm, int nranks, gcoll_unique_id id,
					   int rank)
{
	static const char fn[] = "gcoll_comm_init_rank";
	uint64_t tmo, hid, *hids = NULL;
	struct addr_blob mine, *all = NULL;
	struct gc_transport *tp = NULL;
	struct gc_boot *b = NULL;
	struct gcoll_comm *c = NULL;
	const char *prov;
	char *addrs = NULL;
	gcoll_result_t rc;
	bool same = true;

	gc_log_init();
	if (!comm)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
	*comm = NULL;
	if (nranks < 1 || nranks > GC_MAX_RANKS)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: nranks %d out of range [1, %d]", fn,
			      nranks, GC_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: rank %d out of range [0, %d)", fn, rank,
			      nranks);
	tmo = gc_env_u64("GCOLL_BOOTSTRAP_TIMEOUT_MS", 60000);
	rc = gc_boot_connect(&id, rank, nranks, tmo, &b);
	if (rc)
		return rc;
	hids = calloc((size_t)nranks, sizeof(*hids));
	all = calloc((size_t)nranks, sizeof(*all));
	c = comm_alloc(rank, nranks);
	if (!hids || !all || !c) {
		rc = GCOLL_ERR_NOMEM;
		goto out;
	}
	hid = gc_host_id();
	rc = gc_boot_allgather(b, &hid, sizeof(hid), hids);
	if (rc)
		goto out;
	int local = 0;

	for (int i = 0; i < nranks; i++) {
		same = same && hids[i] == hid;
		local += hids[i] == hid;
	}
	prov = getenv("GCOLL_PROVIDER");
	if (!prov || !*prov) {
		/* the device's own ports when every rank has one; else shared
		 * memory on one host, tcp across hosts */
		rc = tp_exchange(b, "gaudi", true, &mine, all, &tp);
		if (rc)
			goto out;
		for (int i = 0; i < nranks && tp; i++)
			if (all[i].status) {
				GC_INFO("rank %d: rank %d has no usable gaudi port, not using %s", rank,
					i, GC_PROV_VERBS);
				gc_tp_put(tp);
				tp = NULL;
			}
		prov = tp ? NULL : same ? "shm" : "tcp";
	}
	if (prov) {
		if (tp)
			gc_tp_put(tp);
		tp = NULL;
		rc = tp_exchange(b, prov, false, &mine, all, &tp);
		if (rc)
			goto out;
	}
	for (int i = 0; i < nranks; i++) {
		if (all[i].status) {
			rc = gc_err(GCOLL_ERR_FABRIC, "%s: rank %d could not open its transport", fn, i);
			goto out;
		}
		if (strcmp(all[i].prov, mine.prov) || all[i].nrails != mine.nrails ||
		    all[i].addrlen != mine.addrlen) {
			rc = gc_err(GCOLL_ERR_MISMATCH,
				    "%s: rank %d uses provider %s with %d rails (address size %u), rank %d uses %s with %d (%u)",
				    fn, i, all[i].prov, all[i].nrails, all[i].addrlen, rank, mine.prov,
				    mine.nrails, mine.addrlen);
			goto out;
		}
	}
	addrs = malloc((size_t)nranks * (size_t)tp->nrails * tp->addrlen);
	if (!addrs) {
		rc = GCOLL_ERR_NOMEM;
		goto out;
	}
	for (int i = 0; i < nranks; i++)
		memcpy(addrs + (size_t)i * (size_t)tp->nrails * tp->addrlen, all[i].addr,
		       (size_t)tp->nrails * tp->addrlen);
	rc = gc_tp_set_peers(tp, nranks, rank, addrs);
	if (rc)
		goto out;
	{
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		/* mostly spin like MPI when every rank has a core (yielding
		 * now and then bounds the damage when other load shares the
		 * cores); yield on every idle poll when the host is
		 * oversubscribed.  0 = never yield. */
		tp->yield_every = (int)gc_env_u64("GCOLL_YIELD_EVERY",
						  ncpu > 0 && local > ncpu ? 1 : 1000);
	}
	/* a last bootstrap round as a barrier: nobody sends on the fabric
	 * before every rank has its peers in its address vectors (the tcp
	 * provider otherwise sees connections from addresses it does not know
	 * yet and has to resolve crossing connection attempts) */
	{
		char one = 1, *ones = malloc((size_t)nranks);

		if (!ones) {
			rc = GCOLL_ERR_NOMEM;
			goto out;
		}
		rc = gc_boot_allgather(b, &one, 1, ones);
		free(ones);
		if (rc)
			goto out;
	}
	/* endpoints on the wildcard address connect in rank order */
	if (tp->ep_info && (rc = gc_tp_connect_all(tp, tmo)))
		goto out;
	for (int i = 0; i < nranks; i++)
		c->tpeer[i] = i;
	c->ctx = 1;
	tp->next_ctx = 2;
	comm_link(c, tp);
	*comm = c;
	tp = NULL;
	c = NULL;
	GC_INFO("rank %d/%d: communicator ready", rank, nranks);
out:
	gc_boot_close(b);
	free(addrs);
	free(hids);
	free(all);
	if (tp)
		gc_tp_put(tp);
	if (c) {
		free(c->tpeer);
		free(c->send_seq);
		free(c->recv_seq);
		free(c);
	}
	return rc;
}

int gc_test_split_forge;

/* What every rank contributes to a split, checked before any of it is used
 * as an index: a faulty or hostile peer must not make us read out of
 * bounds.  all[i] comes from rank i (the allgather orders by rank). */
gcoll_result_t gc_split_check(const struct split_info *all, int n)
{
	for (int i = 0; i < n; i++) {
		if (all[i].rank != i)
			return gc_err(GCOLL_ERR_MISMATCH,
				      "gcoll_comm_split: rank %d says it is rank %d", i, all[i].rank);
		if (all[i].color < -1)
			return gc_err(GCOLL_ERR_MISMATCH,
				      "gcoll_comm_split: rank %d sent color %d", i, all[i].color);
		if (all[i].next_ctx < 2 || all[i].next_ctx > 0xffff)
			return gc_err(GCOLL_ERR_MISMATCH,
				      "gcoll_comm_split: rank %d sent communicator id %u", i,
				      all[i].next_ctx);
	}
	return GCOLL_SUCCESS;
}

static int split_cmp(const void *a, const void *b)
{
	const struct split_info *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->rank - y->rank;
}

GC_API gcoll_result_t gcoll_comm_split(gcoll_comm_t c, int color, int key, gcoll_comm_t *newcomm)
{
	static const char fn[] = "gcoll_comm_split";
	struct split_info me, *all, *grp;
	struct gcoll_comm *nc;
	gcoll_result_t rc;
	uint32_t ctx = 0;
	int n, k = 0, myidx = -1;

	if ((rc = check_common(c, fn)))
		return rc;
	if (!newcomm)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: newcomm is NULL", fn);
	*newcomm = NULL;
	n = c->nranks;
	all = calloc((size_t)n, sizeof(*all));
	grp = calloc((size_t)n, sizeof(*grp));
	if (!all || !grp) {
		free(all);
		free(grp);
		return GCOLL_ERR_NOMEM;
	}
	me = (struct split_info){ color < 0 ? -1 : color, key, c->rank, c->tp->next_ctx };
	if (gc_test_split_forge)
		me.rank += gc_test_split_forge;
	rc = gcoll_allgather(&me, all, sizeof(me) / 4, GCOLL_INT32, c, NULL);
	if (!rc)
		rc = gc_split_check(all, n);
	if (rc)
		goto out;
	for (int i = 0; i < n; i++) {
		if (all[i].next_ctx > ctx)
			ctx = all[i].next_ctx;
		if (color >= 0 && all[i].color == color)
			grp[k++] = all[i];
	}
	if (ctx >= 0xffff) {
		rc = gc_err(GCOLL_ERR_UNSUPPORTED, "%s: out of communicator ids", fn);
		goto out;
	}
	c->tp->next_ctx = (uint16_t)(ctx + 1);
	if (color < 0)
		goto out;
	qsort(grp, (size_t)k, sizeof(*grp), split_cmp);
	for (int i = 0; i < k; i++)
		if (grp[i].rank == c->rank)
			myidx = i;
	nc = comm_alloc(myidx, k);
	if (!nc) {
		rc = GCOLL_ERR_NOMEM;
		goto out;
	}
	for (int i = 0; i < k; i++)
		nc->tpeer[i] = c->tpeer[grp[i].rank];
	nc->ctx = (uint16_t)ctx;
	nc->timeout_ms = c->timeout_ms;
	c->tp->refcnt++;
	comm_link(nc, c->tp);
	*newcomm = nc;
out:
	free(all);
	free(grp);
	return rc;
}

static void comm_teardown(struct gcoll_comm *c, gcoll_result_t why)
{
	struct gc_transport *tp = c->tp;
	struct gcoll_comm **pp;

	pthread_mutex_lock(&reg_lock);
	for (pp = &registry; *pp; pp = &(*pp)->reg_next)
		if (*pp == c) {
			*pp = c->reg_next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
	while (c->reqs) {
		struct gcoll_request *r = c->reqs;

		req_fail(r, why);
		req_free(r);
	}
	for (pp = &tp->comms; *pp; pp = &(*pp)->tp_next)
		if (*pp == c) {
			*pp = c->tp_next;
			break;
		}
	if (c->arena_mr)
		gc_mr_free(tp, c->arena_mr);
	free(c->arena);
	free(c->tpeer);
	free(c->send_seq);
	free(c->recv_seq);
	c->magic = 0;
	free(c);
	gc_tp_put(tp);
}

GC_API gcoll_result_t gcoll_comm_destroy(gcoll_comm_t c)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_destroy");

	if (rc)
		return rc;
	/* finish what is in flight, then flush with a barrier so no peer is
	 * still waiting for data our endpoint has not delivered yet */
	for (struct gcoll_request *r = c->reqs; r && !c->async_err; r = r->cnext)
		if (r->rc == GCOLL_IN_PROGRESS && !r->in_group)
			req_wait(r);
	if (!c->async_err && c->nranks > 1)
		gcoll_barrier(c, NULL);
	comm_teardown(c, GCOLL_ERR_ABORTED);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_abort(gcoll_comm_t c)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_abort");

	if (rc)
		return rc;
	comm_teardown(c, GCOLL_ERR_ABORTED);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_get_async_error(gcoll_comm_t c, gcoll_result_t *e)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_get_async_error");

	if (rc)
		return rc;
	if (!e)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_get_async_error: async_error is NULL");
	if (!c->async_err && c->tp)
		progress_all(c->tp);
	*e = c->async_err;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_count(gcoll_comm_t c, int *n)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_count");

	if (rc)
		return rc;
	if (!n)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_count: nranks is NULL");
	*n = c->nranks;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_user_rank(gcoll_comm_t c, int *rank)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_user_rank");

	if (rc)
		return rc;
	if (!rank)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_user_rank: rank is NULL");
	*rank = c->rank;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_set_timeout(gcoll_comm_t c, uint64_t ms)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_set_timeout");

	if (rc)
		return rc;
	c->timeout_ms = ms;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_transport_info(gcoll_comm_t c, const char **provider,
						int *nrails, int *dmabuf_native, int *rx_cq_data)
{
	gcoll_result_t rc = check_comm(c, "gcoll_comm_transport_info");

	if (rc)
		return rc;
	if (provider)
		*provider = c->tp->prov_name;
	if (nrails)
		*nrails = c->tp->nrails;
	if (dmabuf_native)
		*dmabuf_native = c->tp->dmabuf_native;
	if (rx_cq_data)
		*rx_cq_data = c->tp->rx_cq_data;
	return GCOLL_SUCCESS;
}
