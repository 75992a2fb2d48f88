/* SPDX-License-Identifier: MIT */
/*
 * The schedule and request engine.
 *
 * A collective becomes a request made of one or more schedules (slices of
 * the buffer, pipelined: up to `depth` slices run at once).  A schedule is
 * a list of phases; a phase is a set of point-to-point transfers started
 * together plus local actions (reduce, copy, average) run once they all
 * complete.  Sequence numbers are assigned when the schedule is built, so
 * the k-th message from A to B matches the k-th receive B posted for A as
 * long as every rank issues operations in the same order.
 *
 * This file builds schedules (gc_phase, gc_add_xfer, gc_act), runs them
 * (scratch, progress, completion), and owns requests: their deadlines,
 * test and wait, and the queue of an open group.  The algorithms that fill
 * schedules are in algo.c.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gc_sched.h"
#include "gc_stage.h"

/* ---------------------------------------------------------- group state */
static _Thread_local int group_depth;
static _Thread_local struct gcoll_request *group_head, **group_tail;

/* ------------------------------------------------------------ schedules */

struct gc_sched *gc_sched_new(gcoll_datatype_t t, gcoll_redop_t op)
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

int gc_phase(struct gc_sched *s)
{
	if (grow((void **)&s->phases, &s->capp, s->nphase + 1, sizeof(*s->phases)))
		return -1;
	s->phases[s->nphase++] = (struct gc_phase){ .x0 = s->nx, .a0 = s->na };
	return 0;
}

int gc_add_xfer(struct gcoll_comm *c, struct gc_sched *s, int kind, int peer,
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

int gc_act(struct gc_sched *s, int kind, void *dst, const void *a, const void *b,
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

		if (gc_is_scr(x->buf)) {
			x->buf = gc_scr_resolve(s, x->buf);
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
		void *dst = gc_scr_resolve(s, a->dst);
		const void *x = gc_scr_resolve(s, a->a), *y = gc_scr_resolve(s, a->b);

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

static gcoll_result_t sched_req_progress(struct gcoll_request *r);

struct gcoll_request *gc_req_new(struct gcoll_comm *c)
{
	struct gcoll_request *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->comm = c;
	r->depth = c->depth;
	r->progress = sched_req_progress;
	return r;
}

int gc_req_add(struct gcoll_request *r, struct gc_sched *s)
{
	struct gc_sched **n = realloc(r->s, sizeof(*n) * (size_t)(r->ns + 1));

	if (!n)
		return -1;
	r->s = n;
	r->s[r->ns++] = s;
	s->req = r;
	return 0;
}

struct gc_sched *gc_req_sched(struct gcoll_request *r, gcoll_datatype_t t, gcoll_redop_t op)
{
	struct gc_sched *s = gc_sched_new(t, op);

	if (!s || gc_req_add(r, s)) {
		free(s);
		return NULL;
	}
	return s;
}

void gc_req_free(struct gcoll_request *r)
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

void gc_req_fail(struct gcoll_request *r, gcoll_result_t rc)
{
	if (r->rc == GCOLL_SUCCESS || r->rc == GCOLL_IN_PROGRESS) {
		r->rc = rc;
		gc_tp_explain_failure(r->comm->tp, r->comm->rank, rc);
	}
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

/* The progress of a request made of schedules: IN_PROGRESS, SUCCESS once
 * every schedule completed, or the error of the first that failed. */
static gcoll_result_t sched_req_progress(struct gcoll_request *r)
{
	gcoll_result_t rc;

	for (int i = r->ndone; i < r->next_start; i++) {
		struct gc_sched *s = r->s[i];

		if (!s || s->done)
			continue;
		rc = sched_progress(r->comm, s);
		if (rc == GCOLL_IN_PROGRESS)
			continue;
		if (rc)
			return rc;
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
			return rc;
		}
	}
	while (r->ndone < r->next_start && r->s[r->ndone]->done) {
		sched_free(r->comm, r->s[r->ndone]);
		r->s[r->ndone] = NULL;
		r->ndone++;
	}
	return r->ndone == r->ns ? GCOLL_SUCCESS : GCOLL_IN_PROGRESS;
}

/* Every request advances through its own progress function: schedules by
 * default, or the one its builder set (the fast path's), so this engine
 * needs to know nothing about the kinds of requests above it. */
static void req_progress(struct gcoll_request *r)
{
	gcoll_result_t rc;

	if (r->rc != GCOLL_IN_PROGRESS)
		return;
	rc = r->progress(r);
	if (rc == GCOLL_SUCCESS) {
		gc_stage_copy(r->post, r->npost);
		r->rc = GCOLL_SUCCESS;
	} else if (rc != GCOLL_IN_PROGRESS) {
		gc_req_fail(r, rc);
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
	gc_stage_copy(r->pre, r->npre);
	req_progress(r);
}

int gc_progress_all(struct gc_transport *tp)
{
	int n = gc_tp_progress(tp);

	for (struct gcoll_comm *c = tp->comms; c; c = c->tp_next)
		for (struct gcoll_request *r = c->reqs, *nx; r; r = nx) {
			nx = r->cnext;
			/* a broken transport (tp->fatal) fails what is in
			 * flight instead of leaving it to stall */
			if (tp->fatal && r->rc == GCOLL_IN_PROGRESS && !r->in_group)
				gc_req_fail(r, tp->fatal);
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

gcoll_result_t gc_req_test(struct gcoll_request *r)
{
	if (r->rc == GCOLL_IN_PROGRESS) {
		gc_progress_all(r->comm->tp);
		if (r->rc == GCOLL_IN_PROGRESS && gc_now_ms() > r->deadline) {
			gc_err(GCOLL_ERR_TIMEOUT, "rank %d: operation did not complete within %llu ms",
			       r->comm->rank, (unsigned long long)r->comm->timeout_ms);
			if (gc_log_lvl() >= GC_LOG_ERR)
				req_dump(r);
			gc_req_fail(r, GCOLL_ERR_TIMEOUT);
		}
	}
	return r->rc;
}

gcoll_result_t gc_req_wait(struct gcoll_request *r)
{
	int idle = 0;
	gcoll_result_t rc;

	for (;;) {
		if (r->rc == GCOLL_IN_PROGRESS) {
			if (gc_progress_all(r->comm->tp))
				idle = 0;
			else
				idle++;
		}
		if ((rc = gc_req_test(r)) != GCOLL_IN_PROGRESS)
			return rc;
		/* more ranks than cores: do not spin on a peer's time slice */
		if (r->comm->tp->yield_every > 0 && idle >= r->comm->tp->yield_every) {
			sched_yield();
			idle = 0;
		}
	}
}

/* Submit a built request: start it (or queue it in the open group), then
 * wait if the caller has no handle. */
gcoll_result_t gc_submit(struct gcoll_request *r, gcoll_request_t *req)
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
	gcoll_result_t rc = gc_req_wait(r);

	gc_req_free(r);
	return rc;
}

gcoll_result_t gc_build_fail(struct gcoll_request *r)
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

/* ---------------------------------------------------------------- groups */

bool gc_in_group(void)
{
	return group_depth > 0;
}

/* gcoll_group_start / gcoll_group_end: requests submitted in between are
 * queued (gc_submit) and started together when the outermost group ends. */
gcoll_result_t gc_group_open(void)
{
	group_depth++;
	return GCOLL_SUCCESS;
}

gcoll_result_t gc_group_close(void)
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
		gcoll_result_t e = gc_req_wait(r);

		if (e && !rc)
			rc = e;
		gc_req_free(r);
	}
	return rc;
}

