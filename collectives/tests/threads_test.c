/* SPDX-License-Identifier: MIT */
/*
 * libgcoll from threads other than the one that created the communicator
 * (issue 16: the PyTorch backend creates its communicators on the caller's
 * thread and drives them from worker threads).  Per rank (forked):
 *   - worker: the main thread creates the communicator, one worker thread
 *     runs a mix of collectives on it, the main thread destroys it;
 *   - alternating: two threads take turns (a baton), each operation is
 *     issued nonblocking on one thread and waited for and checked on the
 *     other, every sixth one blocking;
 *   - split: a worker splits the communicator and uses the new one, the
 *     main thread destroys both;
 *   - concurrent: two communicators from separate gcoll_comm_init_rank
 *     calls (the second created on a worker) driven at the same time by two
 *     threads, as the backend's collective and send/recv workers do;
 *   - errors: gcoll_get_last_error() belongs to the thread that failed;
 *   - the rendezvous server thread that gives up at once (bootstrap
 *     timeout 0) does not leave its starter reading freed memory.
 * Every result is checked against values computed on the CPU.
 *
 *   threads_test [--provider tcp|shm] [--ranks 2,3]
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcoll.h"
#include "tutil.h"

#define NOPS 7
#define STEPS 28

struct shared {
	int ok[8][8];         /* [scenario][rank] */
	char err[8][8][200];
};
static struct shared *sh;
enum { S_WORKER, S_ALT, S_SPLIT, S_CONC, S_ERR, S_NUM };
static const char *const sname[S_NUM] = {
	"worker thread: init on main, 28 mixed collectives on a worker, destroy on main",
	"alternating threads: issue on one, wait and check on the other",
	"split on a worker, use there, destroy on main",
	"two independent communicators driven concurrently by two threads",
	"last error is per thread",
};

static int32_t val(int rank, size_t i, int step)
{
	return (int32_t)((i * 7 + (size_t)step * 13 + (size_t)rank * 31) % 1000) - 500;
}

/* counts that take the fast path (shm), eager, rendezvous and the ring */
static const size_t counts[] = { 1, 1000, 70001, 300003 };

/* One operation in flight: its buffers and how to check it. */
struct op {
	int step, kind, n, rank, root;
	size_t count;
	int32_t *in, *out, *rin, *rout;   /* rin/rout: send/recv pair */
	gcoll_request_t req[2];
	int nreq;
	char what[64];
};

static void op_free(struct op *o)
{
	free(o->in);
	free(o->out);
	free(o->rin);
	free(o->rout);
	memset(o, 0, sizeof(*o));
}

/* Issue operation step on c (nonblocking when nb). */
static gcoll_result_t op_start(struct op *o, gcoll_comm_t c, int rank, int n, int step, bool nb)
{
	gcoll_result_t rc = GCOLL_SUCCESS;
	size_t cnt;

	memset(o, 0, sizeof(*o));
	o->step = step;
	o->kind = step % NOPS;
	o->n = n;
	o->rank = rank;
	o->count = cnt = counts[(size_t)(step / NOPS + step) % 4];
	o->root = step % n;
	o->in = malloc((size_t)n * cnt * sizeof(int32_t));
	o->out = malloc((size_t)n * cnt * sizeof(int32_t));
	if (!o->in || !o->out)
		return GCOLL_ERR_NOMEM;
	for (size_t i = 0; i < (size_t)n * cnt; i++) {
		o->in[i] = val(rank, i, step);
		o->out[i] = -1;
	}
	gcoll_request_t *r0 = nb ? &o->req[0] : NULL, *r1 = nb ? &o->req[1] : NULL;

	switch (o->kind) {
	case 0:
		snprintf(o->what, sizeof(o->what), "allreduce %zu", cnt);
		rc = gcoll_allreduce(o->in, o->out, cnt, GCOLL_INT32, GCOLL_SUM, c, r0);
		break;
	case 1:
		snprintf(o->what, sizeof(o->what), "allgather %zu", cnt);
		rc = gcoll_allgather(o->in, o->out, cnt, GCOLL_INT32, c, r0);
		break;
	case 2:
		snprintf(o->what, sizeof(o->what), "broadcast %zu root %d", cnt, o->root);
		rc = gcoll_broadcast(o->in, o->out, cnt, GCOLL_INT32, o->root, c, r0);
		break;
	case 3:
		snprintf(o->what, sizeof(o->what), "reduce_scatter %zu", cnt);
		rc = gcoll_reduce_scatter(o->in, o->out, cnt, GCOLL_INT32, GCOLL_MAX, c, r0);
		break;
	case 4:
		snprintf(o->what, sizeof(o->what), "in-place allreduce %zu", cnt);
		memcpy(o->out, o->in, cnt * sizeof(int32_t));
		rc = gcoll_allreduce(o->out, o->out, cnt, GCOLL_INT32, GCOLL_SUM, c, r0);
		break;
	case 5:
		/* a ring of send/recv in a group */
		snprintf(o->what, sizeof(o->what), "send/recv ring %zu", cnt);
		o->rout = malloc(cnt * sizeof(int32_t));
		if (!o->rout)
			return GCOLL_ERR_NOMEM;
		memset(o->rout, 0xff, cnt * sizeof(int32_t));
		rc = gcoll_group_start();
		if (!rc)
			rc = gcoll_send(o->in, cnt, GCOLL_INT32, (rank + 1) % n, c, r0);
		if (!rc)
			rc = gcoll_recv(o->rout, cnt, GCOLL_INT32, (rank + n - 1) % n, c, r1);
		if (!rc)
			rc = gcoll_group_end();
		o->nreq = nb ? 2 : 0;
		return rc;
	default:
		snprintf(o->what, sizeof(o->what), "barrier");
		rc = gcoll_barrier(c, r0);
		break;
	}
	o->nreq = nb ? 1 : 0;
	return rc;
}

/* Wait for (if nonblocking) and check an operation; frees it. */
static bool op_finish(struct op *o, gcoll_result_t rc, char *err, size_t errlen)
{
	int n = o->n, rank = o->rank;
	size_t cnt = o->count, bad = SIZE_MAX;

	for (int k = 0; k < o->nreq; k++) {
		gcoll_result_t w = gcoll_wait(o->req[k]);

		if (!rc)
			rc = w;
	}
	if (rc) {
		snprintf(err, errlen, "step %d %s: %s (%s)", o->step, o->what,
			 gcoll_get_error_string(rc), gcoll_get_last_error());
		op_free(o);
		return false;
	}
	for (size_t i = 0; i < cnt && bad == SIZE_MAX; i++) {
		int64_t want = 0;

		switch (o->kind) {
		case 0:
		case 4:
			for (int r = 0; r < n; r++)
				want += val(r, i, o->step);
			if (o->out[i] != want)
				bad = i;
			break;
		case 1:
			for (int r = 0; r < n; r++)
				if (o->out[(size_t)r * cnt + i] != val(r, i, o->step))
					bad = (size_t)r * cnt + i;
			break;
		case 2:
			if (o->out[i] != val(o->root, i, o->step))
				bad = i;
			break;
		case 3:
			want = INT32_MIN;
			for (int r = 0; r < n; r++)
				if (val(r, (size_t)rank * cnt + i, o->step) > want)
					want = val(r, (size_t)rank * cnt + i, o->step);
			if (o->out[i] != want)
				bad = i;
			break;
		case 5:
			if (o->rout[i] != val((rank + n - 1) % n, i, o->step))
				bad = i;
			break;
		default:
			break;
		}
	}
	if (bad != SIZE_MAX)
		snprintf(err, errlen, "step %d %s: wrong value at element %zu", o->step, o->what, bad);
	op_free(o);
	return bad == SIZE_MAX;
}

/* ---- worker ---- */
struct wctx {
	gcoll_comm_t c;
	int rank, n, first, steps;
	bool ok;
	char err[200];
};

static void *worker(void *arg)
{
	struct wctx *w = arg;
	struct op o;

	w->ok = true;
	for (int s = w->first; s < w->first + w->steps && w->ok; s++) {
		gcoll_result_t rc = op_start(&o, w->c, w->rank, w->n, s, s % 3 == 1);

		w->ok = op_finish(&o, rc, w->err, sizeof(w->err));
	}
	return NULL;
}

static bool run_worker(gcoll_comm_t c, int rank, int n, char *err, size_t errlen)
{
	struct wctx w = { .c = c, .rank = rank, .n = n, .steps = STEPS };
	pthread_t th;

	if (pthread_create(&th, NULL, worker, &w)) {
		snprintf(err, errlen, "pthread_create failed");
		return false;
	}
	pthread_join(th, NULL);
	if (!w.ok)
		snprintf(err, errlen, "%s", w.err);
	return w.ok;
}

/* ---- alternating threads with a baton ---- */
struct alt {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int turn;             /* step whose turn it is */
	gcoll_comm_t c;
	int rank, n;
	struct op pending;    /* issued by the previous step's thread */
	gcoll_result_t pending_rc;
	bool has_pending, ok;
	char err[200];
};
struct alt_arg {
	struct alt *a;
	int me;
};

static void *alt_thread(void *arg)
{
	struct alt_arg *aa = arg;
	struct alt *a = aa->a;

	for (int s = aa->me; s <= STEPS; s += 2) {
		pthread_mutex_lock(&a->mu);
		while (a->turn != s)
			pthread_cond_wait(&a->cv, &a->mu);
		pthread_mutex_unlock(&a->mu);
		/* finish what the other thread issued, then issue our own */
		if (a->has_pending && a->ok)
			a->ok = op_finish(&a->pending, a->pending_rc, a->err, sizeof(a->err));
		else if (a->has_pending)
			op_free(&a->pending);
		a->has_pending = false;
		if (s < STEPS && a->ok) {
			bool nb = s % 6 != 5;

			a->pending_rc = op_start(&a->pending, a->c, a->rank, a->n, s, nb);
			if (nb)
				a->has_pending = true;
			else
				a->ok = op_finish(&a->pending, a->pending_rc, a->err, sizeof(a->err));
		}
		pthread_mutex_lock(&a->mu);
		a->turn = s + 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

static bool run_alt(gcoll_comm_t c, int rank, int n, char *err, size_t errlen)
{
	struct alt a = { .c = c, .rank = rank, .n = n, .ok = true };
	struct alt_arg aa[2] = { { &a, 0 }, { &a, 1 } };
	pthread_t th[2];
	int made = 0;

	pthread_mutex_init(&a.mu, NULL);
	pthread_cond_init(&a.cv, NULL);
	for (; made < 2; made++)
		if (pthread_create(&th[made], NULL, alt_thread, &aa[made]))
			break;
	if (made < 2) {
		/* cannot happen in practice; do not leave a thread waiting */
		snprintf(err, errlen, "pthread_create failed");
		pthread_mutex_lock(&a.mu);
		a.ok = false;
		pthread_mutex_unlock(&a.mu);
		for (int i = 0; i < made; i++)
			pthread_cancel(th[i]);
	}
	for (int i = 0; i < made; i++)
		pthread_join(th[i], NULL);
	pthread_mutex_destroy(&a.mu);
	pthread_cond_destroy(&a.cv);
	if (!a.ok && made == 2)
		snprintf(err, errlen, "%s", a.err);
	return a.ok && made == 2;
}

/* ---- split on a worker ---- */
struct sctx {
	gcoll_comm_t world, sub;
	int rank, n;
	bool ok;
	char err[200];
};

static void *split_worker(void *arg)
{
	struct sctx *s = arg;
	struct wctx w;
	gcoll_result_t rc;

	/* reversed order: the new rank is n-1-rank */
	rc = gcoll_comm_split(s->world, 0, -s->rank, &s->sub);
	if (rc) {
		snprintf(s->err, sizeof(s->err), "split: %s", gcoll_get_last_error());
		return NULL;
	}
	w = (struct wctx){ .c = s->sub, .rank = s->n - 1 - s->rank, .n = s->n,
			   .first = 100, .steps = NOPS };
	worker(&w);
	s->ok = w.ok;
	memcpy(s->err, w.err, sizeof(s->err));
	return NULL;
}

static bool run_split(gcoll_comm_t c, int rank, int n, char *err, size_t errlen)
{
	struct sctx s = { .world = c, .rank = rank, .n = n };
	pthread_t th;

	if (pthread_create(&th, NULL, split_worker, &s)) {
		snprintf(err, errlen, "pthread_create failed");
		return false;
	}
	pthread_join(th, NULL);
	if (s.sub && gcoll_comm_destroy(s.sub)) {
		snprintf(err, errlen, "destroy of the split on main: %s", gcoll_get_last_error());
		return false;
	}
	if (!s.ok)
		snprintf(err, errlen, "%s", s.err);
	return s.ok;
}

/* ---- two communicators at once ---- */
struct cctx {
	gcoll_unique_id id;
	gcoll_comm_t c;
	struct wctx w;
	char err[200];
};

static void *conc_second(void *arg)
{
	struct cctx *x = arg;

	if (gcoll_comm_init_rank(&x->c, x->w.n, x->id, x->w.rank)) {
		snprintf(x->w.err, sizeof(x->w.err), "second init on a worker: %s",
			 gcoll_get_last_error());
		return NULL;
	}
	x->w.c = x->c;
	worker(&x->w);
	return NULL;
}

static bool run_conc(gcoll_comm_t c, int rank, int n, char *err, size_t errlen)
{
	struct cctx x = { .w = { .rank = rank, .n = n, .first = 200, .steps = STEPS } };
	struct wctx w = { .c = c, .rank = rank, .n = n, .first = 300, .steps = STEPS };
	gcoll_result_t rc = GCOLL_SUCCESS;
	pthread_t th[2];
	bool ok;

	/* rank 0 makes the second communicator's id, the first one hands it out */
	if (rank == 0)
		rc = gcoll_get_unique_id(&x.id);
	if (!rc)
		rc = gcoll_broadcast(&x.id, &x.id, sizeof(x.id), GCOLL_UINT8, 0, c, NULL);
	if (rc) {
		snprintf(err, errlen, "second id: %s", gcoll_get_last_error());
		return false;
	}
	if (pthread_create(&th[0], NULL, conc_second, &x)) {
		snprintf(err, errlen, "pthread_create failed");
		return false;
	}
	if (pthread_create(&th[1], NULL, worker, &w)) {
		pthread_join(th[0], NULL);
		snprintf(err, errlen, "pthread_create failed");
		return false;
	}
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	ok = w.ok && x.w.ok;
	if (!w.ok)
		snprintf(err, errlen, "first communicator: %s", w.err);
	else if (!x.w.ok)
		snprintf(err, errlen, "second communicator: %s", x.w.err);
	if (x.c && gcoll_comm_destroy(x.c)) {
		snprintf(err, errlen, "destroy of the second on main: %s", gcoll_get_last_error());
		ok = false;
	}
	return ok;
}

/* ---- errors belong to their thread ---- */
struct ectx {
	gcoll_comm_t c;
	gcoll_result_t rc;
	char last[200];
};

static void *err_worker(void *arg)
{
	struct ectx *e = arg;
	int32_t v = 0;

	e->rc = gcoll_allreduce(&v, &v, 1, GCOLL_NUM_TYPES, GCOLL_SUM, e->c, NULL);
	snprintf(e->last, sizeof(e->last), "%s", gcoll_get_last_error());
	return NULL;
}

static bool run_err(gcoll_comm_t c, int rank, int n, char *err, size_t errlen)
{
	struct ectx e = { .c = c };
	char before[200];
	pthread_t th;
	int32_t v = 1, sum = 0;
	gcoll_result_t rc;

	snprintf(before, sizeof(before), "%s", gcoll_get_last_error());
	if (pthread_create(&th, NULL, err_worker, &e)) {
		snprintf(err, errlen, "pthread_create failed");
		return false;
	}
	pthread_join(th, NULL);
	/* the bad call left the communicator usable */
	rc = gcoll_allreduce(&v, &sum, 1, GCOLL_INT32, GCOLL_SUM, c, NULL);
	if (e.rc != GCOLL_ERR_INVALID_ARGUMENT || !strstr(e.last, "type") ||
	    strcmp(before, gcoll_get_last_error()) || rc || sum != n) {
		snprintf(err, errlen,
			 "worker rc %d last \"%.60s\"; main last \"%.40s\" (was \"%.40s\"); then rc %d sum %d",
			 e.rc, e.last, gcoll_get_last_error(), before, rc, sum);
		return false;
	}
	(void)rank;
	return true;
}

static int rank_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	bool (*const fn[S_NUM])(gcoll_comm_t, int, int, char *, size_t) = {
		run_worker, run_alt, run_split, run_conc, run_err,
	};
	gcoll_comm_t c;
	int bad = 0;

	(void)arg;
	if (gcoll_comm_init_rank(&c, n, id, rank)) {
		snprintf(sh->err[0][rank], sizeof(sh->err[0][rank]), "init: %s",
			 gcoll_get_last_error());
		return 3;
	}
	gcoll_comm_set_timeout(c, 60000);
	for (int s = 0; s < S_NUM; s++) {
		sh->ok[s][rank] = fn[s](c, rank, n, sh->err[s][rank], sizeof(sh->err[s][rank]));
		bad += !sh->ok[s][rank];
		if (!sh->ok[s][rank] && s != S_ERR)
			break;  /* the peers may be stuck in a collective: stop here */
	}
	if (gcoll_comm_destroy(c))
		bad++;
	return bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *prov = "tcp", *ranks = "2,3";
	int status[8];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--provider") && i + 1 < argc) {
			prov = argv[++i];
		} else if (!strcmp(argv[i], "--ranks") && i + 1 < argc) {
			ranks = argv[++i];
		} else {
			fprintf(stderr, "usage: %s [--provider P] [--ranks 2,3]\n", argv[0]);
			return 2;
		}
	}
	setenv("GCOLL_PROVIDER", prov, 1);
	setenv("GCOLL_DEBUG", "0", 0);   /* the expected errors: keep the log quiet */
	sh = tu_shared(sizeof(*sh));
	for (const char *p = ranks; *p;) {
		int n = (int)strtol(p, (char **)&p, 10);

		if (*p == ',')
			p++;
		if (n < 2 || n > 8) {
			fprintf(stderr, "rank counts are 2..8\n");
			return 2;
		}
		memset(sh, 0, sizeof(*sh));
		int nbad = tu_run(n, rank_main, NULL, 240, status);

		for (int s = 0; s < S_NUM; s++) {
			int good = 0;
			const char *why = "";

			for (int r = 0; r < n; r++) {
				good += sh->ok[s][r];
				if (!sh->ok[s][r] && !*why)
					why = sh->err[s][r][0] ? sh->err[s][r] : "not reached";
			}
			tu_ok(good == n, "%s, %d ranks, %s%s%s", prov, n, sname[s], *why ? ": " : "",
			      why);
		}
		tu_ok(nbad == 0, "%s, %d ranks: every rank exited cleanly (status %d %d %d)", prov, n,
		      status[0], status[1], n > 2 ? status[2] : 0);
	}
	/* the rendezvous server thread frees its state when it gives up; the
	 * thread that started it must not look at that state afterwards
	 * (ASan: heap-use-after-free in srv_start) */
	{
		gcoll_unique_id id;
		int fails = 0;

		setenv("GCOLL_BOOTSTRAP_TIMEOUT_MS", "0", 1);
		for (int i = 0; i < 20; i++)
			fails += gcoll_get_unique_id(&id) != GCOLL_SUCCESS;
		unsetenv("GCOLL_BOOTSTRAP_TIMEOUT_MS");
		tu_ok(!fails, "20 unique ids whose server thread gives up at once: %d failed", fails);
	}
	return tu_done();
}
