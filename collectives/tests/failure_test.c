/* SPDX-License-Identifier: MIT */
/*
 * Failure semantics:
 *  - a rank SIGKILLed in the middle of a collective: every survivor gets an
 *    error (not success, not a hang) within its operation timeout;
 *  - shm's fast path for all-reduces (one host), small and chunked: a peer
 *    killed while the others wait in it is reported as GCOLL_ERR_REMOTE
 *    within a second, long before the (20 s) timeout, blocking or not;
 *  - a peer that never shows up: GCOLL_ERR_TIMEOUT, then the communicator
 *    reports the async error and refuses new work;
 *  - gcoll_comm_abort with a silent or dead peer returns at once, and the
 *    handle is dead afterwards;
 *  - bootstrap: rank count mismatch, version mismatch, duplicate rank and a
 *    missing rank give clear, distinct errors on every rank.
 *
 *   failure_test [--provider tcp|shm]
 *
 * The harness kills ranks that do not exit in time: a hang fails the test.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tutil.h"

struct res {
	int rc[8];
	double secs[8];
	int extra[8];
};
static struct res *R;
static const char *prov = "tcp";

#define TMO_MS 3000

/* ---- a rank killed mid-collective */
static int kill_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	size_t count = (size_t)(arg ? 4 << 20 : 256);   /* rendezvous or eager */
	float *a = calloc(count, sizeof(float)), *b = calloc(count, sizeof(float));
	gcoll_comm_t c;
	gcoll_request_t rq;
	gcoll_result_t rc;
	double t0;

	if (arg)   /* shm sends 1 MiB ring chunks eagerly */
		setenv("GCOLL_EAGER_MAX", "65536", 1);
	rc = gcoll_comm_init_rank(&c, n, id, rank);
	if (rc) {
		R->rc[rank] = rc;
		return 3;
	}
	gcoll_comm_set_timeout(c, TMO_MS);
	for (int i = 0; i < 3; i++)
		if ((rc = gcoll_allreduce(a, b, count, GCOLL_FLOAT32, GCOLL_SUM, c, NULL))) {
			R->rc[rank] = rc;
			return 4;
		}
	if (rank == n - 1) {
		/* start the next one, make some progress, die */
		gcoll_allreduce(a, b, count, GCOLL_FLOAT32, GCOLL_SUM, c, &rq);
		for (int i = 0; i < 20; i++)
			if (gcoll_test(rq) != GCOLL_IN_PROGRESS)
				break;   /* done: the handle is gone */
		raise(SIGKILL);
	}
	t0 = tu_now();
	rc = gcoll_allreduce(a, b, count, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	/* keep going until an error shows up: the first call may have
	 * completed if the victim's contribution was already in flight */
	for (int i = 0; i < 5 && rc == GCOLL_SUCCESS; i++)
		rc = gcoll_allreduce(a, b, count, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	R->rc[rank] = rc;
	R->secs[rank] = tu_now() - t0;
	{
		gcoll_result_t ae = GCOLL_SUCCESS;

		gcoll_comm_get_async_error(c, &ae);
		R->extra[rank] = ae;
	}
	gcoll_comm_abort(c);
	free(a);
	free(b);
	return 0;
}

static void test_kill(int n, bool big)
{
	int st[8], bad;

	memset(R, 0, sizeof(*R));
	bad = tu_run(n, kill_main, big ? (void *)1 : NULL, 60, st);
	for (int r = 0; r < n - 1; r++) {
		tu_ok(st[r] == 0 && R->rc[r] != GCOLL_SUCCESS &&
		      (R->rc[r] == GCOLL_ERR_TIMEOUT || R->rc[r] == GCOLL_ERR_REMOTE ||
		       R->rc[r] == GCOLL_ERR_FABRIC),
		      "%s n=%d %s: survivor rank %d returned '%s' after %.2fs (timeout %.1fs), async error '%s'",
		      prov, n, big ? "4M rendezvous" : "1K eager", r, gcoll_get_error_string(R->rc[r]),
		      R->secs[r], TMO_MS / 1000.0, gcoll_get_error_string(R->extra[r]));
	}
	tu_ok(st[n - 1] == 128 + SIGKILL, "%s n=%d: victim was SIGKILLed (status %d)", prov, n,
	      st[n - 1]);
	(void)bad;
}

/* ---- shm fast path: a dead peer is seen through its pidfd, not the timeout.
 * arg: FAST_NB for nonblocking calls, FAST_BIG for an all-reduce that takes
 * the chunked road (three chunks) instead of the small slots. */
#define FAST_TMO_MS 20000
#define FAST_NB 1
#define FAST_BIG 2
#define FAST_BIG_COUNT 300000
static int fast_kill_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	int flags = (int)(intptr_t)arg;
	size_t cnt = flags & FAST_BIG ? FAST_BIG_COUNT : 2;
	float *a = calloc(cnt, sizeof(float)), *b = calloc(cnt, sizeof(float));
	gcoll_comm_t c;
	gcoll_request_t rq = NULL;
	gcoll_result_t rc;
	double t0;

	if (!a || !b)
		return 5;
	/* 1.2 MB: above the 2-rank default limit of the chunked path */
	if (flags & FAST_BIG)
		setenv("GCOLL_SHM_BIG_MAX", "4194304", 1);
	rc = gcoll_comm_init_rank(&c, n, id, rank);
	if (rc) {
		R->rc[rank] = rc;
		return 3;
	}
	gcoll_comm_set_timeout(c, FAST_TMO_MS);
	for (int i = 0; i < 100; i++)
		if ((rc = gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, NULL))) {
			R->rc[rank] = rc;
			return 4;
		}
	if (rank == n - 1) {
		/* publish the next input, then die before reducing */
		gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, &rq);
		gcoll_test(rq);
		usleep(100000);
		raise(SIGKILL);
	}
	t0 = tu_now();
	if (flags & FAST_NB) {
		rc = gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, &rq);
		if (!rc)
			rc = gcoll_wait(rq);
	} else {
		rc = gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	}
	/* the victim may have published its input: then the next one fails */
	if (rc == GCOLL_SUCCESS)
		rc = gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	R->rc[rank] = rc;
	R->secs[rank] = tu_now() - t0;
	R->extra[rank] = gcoll_allreduce(a, b, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	gcoll_comm_abort(c);
	free(a);
	free(b);
	return 0;
}

static void test_fast_kill(int n, int flags)
{
	const char *what = flags & FAST_BIG ? "chunked" : "small";
	const char *how = flags & FAST_NB ? "nonblocking" : "blocking";
	int st[8];

	if (strcmp(prov, "shm")) {
		tu_skip("only the shm provider has the fast path", "fast path n=%d %s: dead peer", n,
			what);
		return;
	}
	memset(R, 0, sizeof(*R));
	tu_run(n, fast_kill_main, (void *)(intptr_t)flags, 60, st);
	for (int r = 0; r < n - 1; r++)
		tu_ok(st[r] == 0 && R->rc[r] == GCOLL_ERR_REMOTE && R->secs[r] < 2.0 &&
		      R->extra[r] == GCOLL_ERR_REMOTE,
		      "shm fast path n=%d %s %s: survivor rank %d got '%s' after %.2fs (timeout %ds), then '%s'",
		      n, what, how, r, gcoll_get_error_string(R->rc[r]), R->secs[r],
		      FAST_TMO_MS / 1000, gcoll_get_error_string(R->extra[r]));
	tu_ok(st[n - 1] == 128 + SIGKILL, "shm fast path n=%d %s: victim was SIGKILLed (status %d)",
	      n, what, st[n - 1]);
}

/* ---- a peer that never participates: timeout, async error */
static int silent_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	int32_t v = 1, out = 0;
	gcoll_comm_t c;
	gcoll_result_t rc, ae = GCOLL_SUCCESS;

	(void)arg;
	rc = gcoll_comm_init_rank(&c, n, id, rank);
	if (rc) {
		R->rc[rank] = rc;
		return 3;
	}
	if (rank == 1) {
		/* stay silent until rank 0 has given up, then abort */
		while (!__atomic_load_n(&R->extra[0], __ATOMIC_SEQ_CST))
			usleep(10000);
		R->rc[1] = gcoll_comm_abort(c);
		return 0;
	}
	gcoll_comm_set_timeout(c, 1000);
	rc = gcoll_allreduce(&v, &out, 1, GCOLL_INT32, GCOLL_SUM, c, NULL);
	R->rc[0] = rc;
	gcoll_comm_get_async_error(c, &ae);
	R->extra[2] = ae;
	R->extra[3] = gcoll_allreduce(&v, &out, 1, GCOLL_INT32, GCOLL_SUM, c, NULL);
	/* abort with a silent peer must not wait for it */
	double t0 = tu_now();

	R->extra[4] = gcoll_comm_abort(c);
	R->secs[0] = tu_now() - t0;
	R->extra[5] = gcoll_allreduce(&v, &out, 1, GCOLL_INT32, GCOLL_SUM, c, NULL);
	__atomic_store_n(&R->extra[0], 1, __ATOMIC_SEQ_CST);
	return 0;
}

static void test_silent(void)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	tu_run(2, silent_main, NULL, 60, st);
	tu_ok(R->rc[0] == GCOLL_ERR_TIMEOUT, "%s: allreduce with a silent peer times out ('%s')", prov,
	      gcoll_get_error_string(R->rc[0]));
	tu_ok(R->extra[2] == GCOLL_ERR_TIMEOUT, "%s: async error reports the timeout ('%s')", prov,
	      gcoll_get_error_string(R->extra[2]));
	tu_ok(R->extra[3] == GCOLL_ERR_TIMEOUT, "%s: a comm in error refuses new work ('%s')", prov,
	      gcoll_get_error_string(R->extra[3]));
	tu_ok(R->extra[4] == GCOLL_SUCCESS, "%s: abort without the peer's cooperation succeeds (%.3fs)",
	      prov, R->secs[0]);
	tu_ok(R->extra[5] == GCOLL_ERR_INVALID_USAGE, "%s: the aborted handle is dead ('%s')", prov,
	      gcoll_get_error_string(R->extra[5]));
	tu_ok(R->rc[1] == GCOLL_SUCCESS && st[0] == 0 && st[1] == 0,
	      "%s: the silent peer aborts too; both exit (%d, %d)", prov, st[0], st[1]);
}

/* ---- abort while a nonblocking op is in flight and the peer is dead.
 * arg NULL: over the fabric (shm's fast path off, as on any provider);
 * else through shm's chunked fast path, where the issue may already see
 * the dead peer's pidfd and fail with GCOLL_ERR_REMOTE. */
static int dead_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	static float a[1 << 16], b[1 << 16];
	gcoll_comm_t c;
	gcoll_request_t rq;
	gcoll_result_t rc;

	if (!arg)
		setenv("GCOLL_SHM_FAST", "0", 1);
	else   /* 256 KiB: above the 2-rank default limit of the chunked path */
		setenv("GCOLL_SHM_BIG_MAX", "4194304", 1);
	rc = gcoll_comm_init_rank(&c, n, id, rank);
	if (rc) {
		R->rc[rank] = rc;
		return 3;
	}
	if (rank == 1)
		_exit(0);   /* vanish without destroy */
	usleep(200000);
	rc = gcoll_allreduce(a, b, 1 << 16, GCOLL_FLOAT32, GCOLL_SUM, c, &rq);
	R->extra[0] = rc;
	for (int i = 0; !rc && i < 100; i++)
		if (gcoll_test(rq) != GCOLL_IN_PROGRESS) {
			R->extra[1] = 1;   /* completed or failed: handle gone */
			break;
		}
	R->rc[0] = gcoll_comm_abort(c);
	return 0;
}

static void test_dead_abort(bool fast)
{
	int st[2];

	if (fast && strcmp(prov, "shm")) {
		tu_skip("only the shm provider has the fast path",
			"abort with a fast-path operation in flight and a dead peer");
		return;
	}
	memset(R, 0, sizeof(*R));
	tu_run(2, dead_main, fast ? (void *)1 : NULL, 30, st);
	tu_ok((R->extra[0] == GCOLL_SUCCESS || (fast && R->extra[0] == GCOLL_ERR_REMOTE)) &&
	      R->rc[0] == GCOLL_SUCCESS && st[0] == 0,
	      "%s%s: abort with an operation in flight and a dead peer (issue '%s', abort '%s', exit %d)",
	      prov, fast ? " fast path" : "", gcoll_get_error_string(R->extra[0]),
	      gcoll_get_error_string(R->rc[0]), st[0]);
}

/* ---- bootstrap mismatches */
struct bcase {
	int nranks[2];
	int rank[2];
	int fake_version;   /* rank 1 pretends to be another version */
	int nproc;
	const char *prov1;  /* rank 1's GCOLL_PROVIDER, if not the others' */
};

static int boot_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	struct bcase *b = arg;
	gcoll_comm_t c = NULL;
	double t0 = tu_now();
	gcoll_result_t rc;

	(void)n;
	if (b->fake_version && rank == 1)
		setenv("GCOLL_TEST_FAKE_VERSION", "999", 1);
	if (b->prov1 && rank == 1)
		setenv("GCOLL_PROVIDER", b->prov1, 1);
	rc = gcoll_comm_init_rank(&c, b->nranks[rank], id, b->rank[rank]);
	R->rc[rank] = rc;
	R->secs[rank] = tu_now() - t0;
	/* a provider mismatch must say which providers met */
	R->extra[rank] = b->prov1 && rc && strstr(gcoll_get_last_error(), b->prov1) &&
			 strstr(gcoll_get_last_error(), prov);
	if (!rc)
		gcoll_comm_abort(c);
	return 0;
}

static void test_boot(const char *what, struct bcase b, gcoll_result_t want)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	tu_run(b.nproc, boot_main, &b, 30, st);
	for (int r = 0; r < b.nproc; r++)
		tu_ok(R->rc[r] == (int)want && st[r] == 0 && (!b.prov1 || R->extra[r]),
		      "bootstrap %s: rank %d gets '%s' (want '%s'%s, %.2fs)", what, r,
		      gcoll_get_error_string(R->rc[r]), gcoll_get_error_string(want),
		      b.prov1 ? ", naming both providers" : "", R->secs[r]);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--provider") && i + 1 < argc)
			prov = argv[++i];
	setenv("GCOLL_PROVIDER", prov, 1);
	setenv("GCOLL_DEBUG", "0", 0);   /* expected errors: keep the log quiet */
	R = tu_shared(sizeof(*R));

	test_kill(3, false);
	test_kill(3, true);
	test_kill(2, true);
	test_fast_kill(2, 0);
	test_fast_kill(3, FAST_NB);
	test_fast_kill(2, FAST_BIG | FAST_NB);
	test_fast_kill(4, FAST_BIG);
	test_silent();
	test_dead_abort(false);
	test_dead_abort(true);

	setenv("GCOLL_BOOTSTRAP_TIMEOUT_MS", "2000", 1);
	test_boot("rank count mismatch", (struct bcase){ { 2, 3 }, { 0, 1 }, 0, 2 },
		  GCOLL_ERR_MISMATCH);
	test_boot("version mismatch", (struct bcase){ { 2, 2 }, { 0, 1 }, 1, 2 }, GCOLL_ERR_VERSION);
	test_boot("duplicate rank", (struct bcase){ { 2, 2 }, { 0, 0 }, 0, 2 }, GCOLL_ERR_MISMATCH);
	test_boot("provider mismatch",
		  (struct bcase){ { 2, 2 }, { 0, 1 }, 0, 2, strcmp(prov, "shm") ? "shm" : "tcp" },
		  GCOLL_ERR_MISMATCH);
	test_boot("missing rank (timeout)", (struct bcase){ { 2, 2 }, { 0, 1 }, 0, 1 },
		  GCOLL_ERR_BOOTSTRAP);
	return tu_done();
}
