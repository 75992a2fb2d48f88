/* SPDX-License-Identifier: MIT */
/*
 * Transport and bootstrap robustness (issue 16).  White-box: built from the
 * library's sources, so a rank can look inside its transport and forge what
 * a faulty or stale peer would send.
 *
 *   test_robust [--provider tcp|shm] [SUBTEST...]
 *
 *   pool       untagged messages drain the FI_RX_CQ_DATA receive pool
 *   poolfail   a failed pool repost fails the communicator, no silent stall
 *   imm        a late write for comm 257 after an abort must not complete a
 *              comm 1 transfer that reuses the slot
 *   mraccess   send buffers are registered without remote access
 *   directed   a third rank's message with a colliding tag is not matched
 *   silent     a silent TCP client does not delay bootstrap
 *   split      comm_split rejects forged ranks and colors
 *   nonce      unique ids carry unpredictable nonces
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "gc_internal.h"
#include "tutil.h"

struct res {
	int rc[8];
	int val[8];
	double secs[8];
	uint64_t shared[8];
};
static struct res *R;
static const char *prov = "tcp";

static void spin(struct gc_transport *tp, int ms)
{
	for (uint64_t end = gc_now_ms() + (uint64_t)ms; gc_now_ms() < end;)
		gc_tp_progress(tp);
}

/* Untagged inject to peer p on rail 0, retried while the provider is busy. */
static int send_untagged(struct gc_transport *tp, int p, const void *buf, size_t len)
{
	for (uint64_t end = gc_now_ms() + 5000;;) {
		ssize_t ret = fi_inject(tp->rails[0].ep, buf, len, tp->rails[0].peers[p]);

		if (ret != -FI_EAGAIN)
			return (int)ret;
		if (gc_now_ms() > end)
			return -FI_ETIMEDOUT;
		gc_tp_progress(tp);
	}
}

/* ---- pool: 3 x GC_RXPOOL unexpected untagged messages from rank 1 */
static int pool_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	size_t count = 256 << 10;   /* rendezvous */
	float *a = calloc(count, sizeof(float));
	char junk[16] = "unexpected";
	gcoll_comm_t c;
	int ret = 0;

	(void)arg;
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 10000);
	if (rank == 1)
		for (int i = 0; i < 3 * GC_RXPOOL && !ret; i++)
			ret = send_untagged(c->tp, 0, junk, sizeof(junk));
	if (ret) {
		R->rc[rank] = 100;
		return 4;
	}
	if ((R->rc[rank] = gcoll_barrier(c, NULL)))
		return 5;
	spin(c->tp, 300);
	R->val[rank] = c->tp->rails[0].pool_posted;
	for (size_t i = 0; i < count; i++)
		a[i] = 1;
	R->rc[rank] = gcoll_allreduce(a, a, count, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	if (!R->rc[rank] && a[count - 1] != (float)n)
		R->rc[rank] = 101;
	gcoll_comm_destroy(c);
	free(a);
	return R->rc[rank] ? 6 : 0;
}

static void t_pool(void)
{
	int st[2];

	if (!strcmp(prov, "tcp")) {
		/* libfabric 2.1's tcp provider stops delivering on a
		 * connection once a message was truncated into a pool entry,
		 * fix or no fix: the repost is only observable on shm */
		tu_skip("tcp stalls the connection after a truncated message", "pool");
		return;
	}
	memset(R, 0, sizeof(*R));
	tu_run(2, pool_main, NULL, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0, "pool: ranks finish (rc %d %d, exit %d %d)",
	      R->rc[0], R->rc[1], st[0], st[1]);
	tu_ok(R->val[0] == GC_RXPOOL, "pool: %d of %d receives posted after %d unexpected messages",
	      R->val[0], GC_RXPOOL, 3 * GC_RXPOOL);
}

/* ---- poolfail: rank 0's repost fails; its next operation fails */
static int poolfail_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	char junk[16] = "unexpected";
	int v = 1, w = 0;
	gcoll_comm_t c;
	double t0;

	(void)arg;
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 3000);
	if (rank == 0)
		gc_test_fail_pool_posts = 1;
	if (rank == 1 && send_untagged(c->tp, 0, junk, sizeof(junk)))
		return 4;
	/* the message lands, the repost fails: the barrier or the
	 * operation after it fails at once (not at the 3 s timeout) */
	t0 = tu_now();
	R->rc[rank] = gcoll_barrier(c, NULL);
	if (!R->rc[rank]) {
		spin(c->tp, 300);
		R->rc[rank] = gcoll_allreduce(&v, &w, 1, GCOLL_INT32, GCOLL_SUM, c, NULL);
	}
	R->secs[rank] = tu_now() - t0;
	gcoll_comm_abort(c);
	return 0;
}

static void t_poolfail(void)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	tu_run(2, poolfail_main, NULL, 60, st);
	tu_ok(st[0] == 0 && R->rc[0] == GCOLL_ERR_FABRIC && R->secs[0] < 2.0,
	      "poolfail: rank 0 fails with GCOLL_ERR_FABRIC (rc %d in %.2f s)",
	      R->rc[0], R->secs[0]);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*fn)(void); bool rxcq; } T[] = {
		{ "pool", t_pool, true },
		{ "poolfail", t_poolfail, true },
	};
	int first = 1;

	if (argc > 2 && !strcmp(argv[1], "--provider")) {
		prov = argv[2];
		first = 3;
	}
	setenv("GCOLL_PROVIDER", prov, 1);
	setenv("GCOLL_DEBUG", "0", 0);
	R = tu_shared(sizeof(*R));
	for (size_t i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
		bool run = first >= argc;

		for (int k = first; k < argc; k++)
			run |= !strcmp(argv[k], T[i].name);
		if (!run)
			continue;
		if (T[i].rxcq)
			setenv("GCOLL_FORCE_RX_CQ_DATA", "1", 1);
		else
			unsetenv("GCOLL_FORCE_RX_CQ_DATA");
		T[i].fn();
	}
	return tu_done();
}
