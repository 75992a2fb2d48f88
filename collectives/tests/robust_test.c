/* SPDX-License-Identifier: MIT */
/*
 * Transport and bootstrap robustness (issue 16).  White-box: built from the
 * library's sources, so a rank can look inside its transport and forge what
 * a faulty or stale peer would send.
 *
 *   robust_test [--provider tcp|shm] [SUBTEST...]
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
 *   fastenv    out-of-range GCOLL_SHM_BIG_CHUNK values are clamped, and rank
 *              0's chunk and limit hold for every rank (shm only)
 *   adapt      chunks or fabric above GCOLL_SHM_BIG_MAX: rank 0's pick
 *              (its state machine alone, then live) reaches every rank, the
 *              quicker road wins, and rank 0's limit holds (shm only)
 *   fpenv      the reduction kernels leave the caller's floating-point flags
 *              as they found them
 *   quiet      the last destroy returns only once every rank has read the
 *              fabric for the last time (its closing round), and a rank
 *              gone before that round does not hold the others up
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fenv.h>
#include <float.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "gc_bootstrap.h"
#include "gc_comm.h"
#include "gc_fast.h"
#include "gc_registry.h"
#include "gc_stage.h"
#include "tutil.h"

struct res {
	int rc[8];
	int val[8];
	double secs[8];
	uint64_t shared[8];
	uint64_t via[8][2];
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
	setenv("GCOLL_EAGER_MAX", "65536", 1);   /* shm: eager up to 1 MiB */
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
	if (rank == 0) {
		gcoll_result_t e = GCOLL_SUCCESS;

		gcoll_comm_get_async_error(c, &e);
		R->val[0] = e;
	}
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
	tu_ok(R->val[0] == GCOLL_ERR_FABRIC, "poolfail: the communicator's async error says so (%d)",
	      R->val[0]);
}

/* ---- imm: a late write for comm 257 after an abort, into a slot comm 1 reuses */
#define IMM_LEN (1u << 20)

static int wait_flag(volatile uint64_t *f, struct gc_transport *tp)
{
	for (uint64_t end = gc_now_ms() + 20000; !*f; ) {
		if (gc_now_ms() > end)
			return -1;
		gc_tp_progress(tp);
	}
	return 0;
}

/* Both ranks: the world communicator (id 1) and, after 255 empty splits,
 * one with id 257 - the same low 8 bits. */
static int two_comms(int rank, int n, gcoll_unique_id id, gcoll_comm_t *c1, gcoll_comm_t *c257)
{
	gcoll_comm_t none;

	if ((R->rc[rank] = gcoll_comm_init_rank(c1, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(*c1, 5000);
	for (int i = 0; i < 255; i++)
		if ((R->rc[rank] = gcoll_comm_split(*c1, GCOLL_SPLIT_NOCOLOR, 0, &none)))
			return 4;
	if ((R->rc[rank] = gcoll_comm_split(*c1, 0, rank, c257)))
		return 5;
	if ((*c1)->ctx != 1 || (*c257)->ctx != 257) {
		R->rc[rank] = 102;
		return 6;
	}
	return 0;
}

static int imm_receiver(gcoll_comm_t c1, gcoll_comm_t c257, unsigned char *buf)
{
	struct gc_transport *tp = c1->tp;
	gcoll_request_t rq;
	uint32_t slot = GC_NSLOTS;

	/* a rendezvous receive on comm 257: its control entry reaches rank 1 */
	if (gcoll_recv(buf, IMM_LEN, GCOLL_UINT8, 1, c257, &rq))
		return 10;
	for (uint32_t s = 0; s < GC_NSLOTS; s++)
		if (tp->slots[s])
			slot = s;
	if (slot == GC_NSLOTS || wait_flag(&R->shared[1], tp))
		return 11;
	/* abort it; the same buffer and the same slot go to a comm 1 receive */
	gcoll_comm_abort(c257);
	tp->slot_hint = slot;
	if (gcoll_recv(buf, IMM_LEN, GCOLL_UINT8, 1, c1, &rq) || !tp->slots[slot])
		return 12;
	R->shared[0] = 1;
	if (wait_flag(&R->shared[2], tp))
		return 13;
	spin(tp, 300);
	/* rank 1's late write for comm 257 must not have completed it */
	R->val[0] = gcoll_test(rq) == GCOLL_IN_PROGRESS;
	R->shared[3] = tp->stray_writes;
	R->shared[4] = 1;
	if (!R->val[0]) {
		/* completed (and freed) by the stray write: take rank 1's
		 * real message so that it finishes too */
		gcoll_recv(buf, IMM_LEN, GCOLL_UINT8, 1, c1, NULL);
		return 14;
	}
	if ((R->rc[0] = gcoll_wait(rq)))
		return 14;
	for (size_t i = 0; i < IMM_LEN; i++)
		if (buf[i] != 0x5a) {
			R->rc[0] = 103;
			return 15;
		}
	return 0;
}

static int imm_sender(gcoll_comm_t c1, gcoll_comm_t c257, unsigned char *buf)
{
	struct gc_transport *tp = c1->tp;
	struct gc_rail *r = &tp->rails[0];
	struct fi_context fctx;
	struct gc_ctrl ctrl;
	struct gc_mr *m = NULL;
	ssize_t ret;

	/* take comm 257's control entry as a sender would, but do not write */
	ret = fi_trecv(r->ep, &ctrl, sizeof(ctrl), NULL, FI_ADDR_UNSPEC,
		       gc_tag(GC_TAG_CTRL, c257->ctx, 0, c257->send_seq[0]), 0, &fctx);
	if (ret)
		return 20;
	for (uint64_t end = gc_now_ms() + 10000;;) {
		struct fi_cq_data_entry e;

		if (fi_cq_read(r->cq, &e, 1) == 1 && e.op_context == &fctx)
			break;
		if (gc_now_ms() > end)
			return 21;
	}
	R->shared[1] = 1;
	if (wait_flag(&R->shared[0], tp))
		return 22;
	/* the late write, with comm 257's immediate, after the abort */
	memset(buf, 0xee, IMM_LEN);
	if (tp->mr_local && gc_mr_lookup(tp, buf, IMM_LEN, GC_ACC_SRC, &m))
		return 23;
	do {
		ret = fi_writedata(r->ep, buf, IMM_LEN, m ? m->desc : NULL,
				   gc_imm(ctrl.chk, ctrl.slot, 0), r->peers[0], ctrl.addr,
				   ctrl.key, NULL);
		gc_tp_progress(tp);
	} while (ret == -FI_EAGAIN);
	if (ret)
		return 24;
	spin(tp, 500);
	R->shared[2] = 1;
	if (wait_flag(&R->shared[4], tp))
		return 25;
	memset(buf, 0x5a, IMM_LEN);
	if ((R->rc[1] = gcoll_send(buf, IMM_LEN, GCOLL_UINT8, 0, c1, NULL)))
		return 26;
	return 0;
}

static int imm_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	unsigned char *buf = aligned_alloc(4096, IMM_LEN);
	gcoll_comm_t c1, c257;
	int ret;

	(void)arg;
	setenv("GCOLL_EAGER_MAX", "65536", 1);   /* IMM_LEN is eager on shm */
	if ((ret = two_comms(rank, n, id, &c1, &c257)))
		return ret;
	ret = rank ? imm_sender(c1, c257, buf) : imm_receiver(c1, c257, buf);
	if (!ret && rank)
		gcoll_comm_abort(c257);
	if (!ret)
		gcoll_comm_destroy(c1);
	free(buf);
	return ret;
}

static void t_imm(void)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	setenv("GCOLL_WRITE_SIZE", "4194304", 1);   /* one write per transfer */
	tu_run(2, imm_main, NULL, 60, st);
	unsetenv("GCOLL_WRITE_SIZE");
	tu_ok(st[0] == 0 && st[1] == 0, "imm: ranks finish (rc %d %d, exit %d %d)",
	      R->rc[0], R->rc[1], st[0], st[1]);
	tu_ok(R->val[0] == 1, "imm: comm 257's late write did not complete comm 1's receive");
	tu_ok(R->shared[3] >= 1, "imm: the late write was counted as stray (%llu)",
	      (unsigned long long)R->shared[3]);
}

/* ---- mraccess: registrations get only the access their role needs */
static void t_mraccess(void)
{
	const uint64_t remote = FI_REMOTE_WRITE | FI_REMOTE_READ;
	struct gc_xfer xs = { .kind = 0 }, xr = { .kind = 1 };
	struct gc_mr *src = NULL, *dst = NULL, *again = NULL;
	struct gc_transport *tp;
	char *buf = aligned_alloc(4096, 8192);

	if (gc_tp_open(1, prov, &tp)) {
		tu_ok(false, "mraccess: transport opens");
		free(buf);
		return;
	}
	tu_ok(!(gc_xfer_access(&xs) & remote), "mraccess: a send asks for no remote access (0x%llx)",
	      (unsigned long long)gc_xfer_access(&xs));
	tu_ok((gc_xfer_access(&xr) & FI_REMOTE_WRITE) && !(gc_xfer_access(&xr) & FI_REMOTE_READ),
	      "mraccess: a receive asks for remote write, not remote read (0x%llx)",
	      (unsigned long long)gc_xfer_access(&xr));
	if (gc_mr_lookup(tp, buf, 100, gc_xfer_access(&xs), &src) ||
	    gc_mr_lookup(tp, buf, 100, gc_xfer_access(&xr), &dst) ||
	    gc_mr_lookup(tp, buf + 50, 50, gc_xfer_access(&xs), &again)) {
		tu_ok(false, "mraccess: registrations");
	} else {
		tu_ok(!(src->access & remote), "mraccess: the send buffer's MR has no remote access (0x%llx)",
		      (unsigned long long)src->access);
		tu_ok(dst != src && (dst->access & FI_REMOTE_WRITE) && !(dst->access & FI_REMOTE_READ),
		      "mraccess: the receive target has its own MR, remote write only (0x%llx)",
		      (unsigned long long)dst->access);
		tu_ok(again == src, "mraccess: the cache is keyed by access");
		src->users -= 2;
		dst->users--;
	}
	gc_tp_put(tp);
	free(buf);
}

/* ---- directed: rank 2 sends rank 0 a message tagged as rank 1's */
static int directed_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	int32_t forged = 0xbad, good = 0x600d, v = 0;
	gcoll_request_t rq;
	gcoll_comm_t c;
	struct gc_transport *tp;

	(void)arg;
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 5000);
	tp = c->tp;
	if (rank == 0) {
		R->val[1] = (tp->info->caps & FI_DIRECTED_RECV) != 0;
		R->shared[5] = c->recv_seq[1];
		R->shared[0] = 1;
		if (wait_flag(&R->shared[1], tp))
			return 10;
		spin(tp, 300);      /* rank 2's message is unexpected by now */
		if (gcoll_recv(&v, 1, GCOLL_INT32, 1, c, &rq))
			return 11;
		spin(tp, 300);
		R->val[0] = gcoll_test(rq) == GCOLL_IN_PROGRESS;
		R->val[2] = v;
		R->shared[2] = 1;
		if (!R->val[0])
			return 12;
		if ((R->rc[0] = gcoll_wait(rq)))
			return 13;
		R->val[2] = v;
	} else if (rank == 2) {
		uint32_t seq;
		int rail;
		ssize_t ret;

		if (wait_flag(&R->shared[0], tp))
			return 20;
		seq = (uint32_t)R->shared[5];
		rail = (int)(seq % (uint32_t)tp->nrails);
		do {
			ret = fi_tinject(tp->rails[rail].ep, &forged, sizeof(forged),
					 tp->rails[rail].peers[0], gc_tag(GC_TAG_DATA, c->ctx, 1, seq));
			gc_tp_progress(tp);
		} while (ret == -FI_EAGAIN);
		spin(tp, 300);
		R->shared[1] = 1;
		if (ret)
			return 21;
	} else {
		if (wait_flag(&R->shared[2], tp))
			return 30;
		if ((R->rc[1] = gcoll_send(&good, 1, GCOLL_INT32, 0, c, NULL)))
			return 31;
	}
	if ((R->rc[rank] = gcoll_comm_destroy(c)))
		return 40;
	return 0;
}

static void t_directed(void)
{
	int st[3];

	memset(R, 0, sizeof(*R));
	tu_run(3, directed_main, NULL, 60, st);
	if (!R->val[1]) {
		tu_skip("the provider lacks FI_DIRECTED_RECV", "directed");
		return;
	}
	tu_ok(st[0] == 0 && st[1] == 0 && st[2] == 0, "directed: ranks finish (exit %d %d %d)",
	      st[0], st[1], st[2]);
	tu_ok(R->val[0] && R->val[2] == 0x600d,
	      "directed: rank 0's receive from rank 1 ignores rank 2's forged message (got 0x%x)",
	      R->val[2]);
}

/* ---- silent: a client that connects to the root and says nothing */
static int silent_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	gcoll_comm_t c;
	double t0 = tu_now();

	(void)id;
	R->rc[rank] = gcoll_comm_init_rank(&c, n, *(gcoll_unique_id *)arg, rank);
	R->secs[rank] = tu_now() - t0;
	if (R->rc[rank])
		return 3;
	gcoll_comm_destroy(c);
	return 0;
}

static void t_silent(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	gcoll_unique_id id;
	int st[3], lfd, fd;

	memset(R, 0, sizeof(*R));
	/* a free port for the root */
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		tu_ok(false, "silent: a free port");
		return;
	}
	close(lfd);
	if (gcoll_unique_id_from_addr(&id, "127.0.0.1", ntohs(sa.sin_port), 1)) {
		tu_ok(false, "silent: root listens on port %u", ntohs(sa.sin_port));
		return;
	}
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		tu_ok(false, "silent: the silent client connects");
		return;
	}
	usleep(200000);   /* the root has accepted it before the ranks come */
	tu_run(3, silent_main, &id, 60, st);
	close(fd);
	tu_ok(st[0] == 0 && st[1] == 0 && st[2] == 0, "silent: 3 ranks init (rc %d %d %d)",
	      R->rc[0], R->rc[1], R->rc[2]);
	tu_ok(R->secs[0] < 5 && R->secs[1] < 5 && R->secs[2] < 5,
	      "silent: init is not held up by the silent client (%.2f %.2f %.2f s)",
	      R->secs[0], R->secs[1], R->secs[2]);
}

/* ---- split: forged ranks and colors are rejected, not used as indices */
static int split_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	gcoll_comm_t c, nc = NULL;

	(void)arg;
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 5000);
	if (rank == 1)
		gc_test_split_forge = 1 << 20;
	R->rc[rank] = gcoll_comm_split(c, 0, rank, &nc);
	R->val[rank] = nc == NULL;
	gcoll_comm_abort(c);
	return 0;
}

static void t_split(void)
{
	struct split_info ok[3] = { { 0, 0, 0, 2 }, { -1, 5, 1, 9 }, { 7, 0, 2, 0xffff } }, bad[3];
	static const struct { int idx, field; int64_t v; const char *what; } forged[] = {
		{ 1, 2, 1 << 20, "rank far out of range" },
		{ 2, 2, -1, "negative rank" },
		{ 0, 2, 1, "another rank's number" },
		{ 1, 0, -7, "color below -1" },
		{ 2, 3, 0x10000, "communicator id beyond 16 bits" },
	};
	int st[2];

	tu_ok(gc_split_check(ok, 3) == GCOLL_SUCCESS, "split: valid contributions pass");
	for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
		memcpy(bad, ok, sizeof(ok));
		if (forged[i].field == 0)
			bad[forged[i].idx].color = (int32_t)forged[i].v;
		else if (forged[i].field == 2)
			bad[forged[i].idx].rank = (int32_t)forged[i].v;
		else
			bad[forged[i].idx].next_ctx = (uint32_t)forged[i].v;
		tu_ok(gc_split_check(bad, 3) == GCOLL_ERR_MISMATCH, "split: %s is rejected",
		      forged[i].what);
	}
	memset(R, 0, sizeof(*R));
	tu_run(2, split_main, NULL, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0 && R->rc[0] == GCOLL_ERR_MISMATCH &&
	      R->rc[1] == GCOLL_ERR_MISMATCH && R->val[0] && R->val[1],
	      "split: a rank sending a forged rank makes every rank fail cleanly (rc %d %d, exit %d %d)",
	      R->rc[0], R->rc[1], st[0], st[1]);
}

/* ---- quiet: the closing round after the last destroy's barrier */
static int quiet_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	int late = *(int *)arg;
	gcoll_comm_t c;
	double t0;

	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 20000);
	R->rc[rank] = gcoll_barrier(c, NULL);
	if (rank == n - 1)
		gc_test_quiesce_delay_ms = late;
	t0 = tu_now();
	gcoll_comm_destroy(c);
	R->secs[rank] = tu_now() - t0;
	return R->rc[rank] ? 4 : 0;
}

static void t_quiet(void)
{
	int st[3], late = 1500, gone = -1;

	memset(R, 0, sizeof(*R));
	tu_run(3, quiet_main, &late, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0 && st[2] == 0 &&
	      R->secs[0] >= 1.4 && R->secs[1] >= 1.4,
	      "quiet: destroy waits for the rank that reads the fabric last (rank 2 %.1f s late: ranks 0 and 1 took %.2f %.2f s; exit %d %d %d)",
	      late / 1000.0, R->secs[0], R->secs[1], st[0], st[1], st[2]);
	memset(R, 0, sizeof(*R));
	tu_run(3, quiet_main, &gone, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0 && R->secs[0] < 5 && R->secs[1] < 5,
	      "quiet: a rank gone before the closing round does not hold the others up (%.2f %.2f s; exit %d %d)",
	      R->secs[0], R->secs[1], st[0], st[1]);
}

/* ---- nonce: ids from an address take GCOLL_BOOTSTRAP_SECRET into account */
static void t_nonce(void)
{
	gcoll_unique_id a, b, p, q;

	setenv("GCOLL_BOOTSTRAP_SECRET", "one secret", 1);
	gcoll_unique_id_from_addr(&a, "127.0.0.1", 29999, 0);
	setenv("GCOLL_BOOTSTRAP_SECRET", "another secret", 1);
	gcoll_unique_id_from_addr(&b, "127.0.0.1", 29999, 0);
	unsetenv("GCOLL_BOOTSTRAP_SECRET");
	gcoll_unique_id_from_addr(&p, "127.0.0.1", 29999, 0);
	gcoll_unique_id_from_addr(&q, "127.0.0.1", 29999, 0);
	tu_ok(memcmp(&a, &b, sizeof(a)) && memcmp(&a, &p, sizeof(a)),
	      "nonce: the secret changes the id built from an address");
	tu_ok(!memcmp(&p, &q, sizeof(p)), "nonce: without a secret every process builds the same id");
	tu_ok(!gcoll_get_unique_id(&a) && !gcoll_get_unique_id(&b) && memcmp(&a, &b, sizeof(a)),
	      "nonce: gcoll_get_unique_id ids differ");
}

/* ---- fpenv: the reduction kernels leave the caller's floating-point
 * environment as they found it (reduce.c): no flag raised by their
 * arithmetic (0.1 + 0.2 is inexact, FLT_MAX + FLT_MAX overflows) is left
 * set, none the caller had is cleared, and the sums are right */
static void t_fpenv(void)
{
	static float a[1000], b[1000], d[1000];
	static double x[3] = { 0.1, 1e308, 3 }, y[3] = { 0.2, 1e308, 4 }, z[3];
	bool sums = true;

	for (int i = 0; i < 1000; i++) {
		a[i] = i % 2 ? 0.1f : FLT_MAX;
		b[i] = i % 2 ? 0.2f : FLT_MAX;
	}
	feclearexcept(FE_ALL_EXCEPT);
	gc_reduce(d, a, b, 1000, GCOLL_FLOAT32, GCOLL_SUM);
	gc_reduce(a, a, b, 1000, GCOLL_FLOAT32, GCOLL_SUM);
	gc_reduce(z, x, y, 3, GCOLL_FLOAT64, GCOLL_SUM);
	gc_scale_avg(z, 3, GCOLL_FLOAT64, 3);
	tu_ok(!fetestexcept(FE_ALL_EXCEPT), "fpenv: no flag left set by inexact and overflowing sums (%#x)",
	      fetestexcept(FE_ALL_EXCEPT));
	for (int i = 0; i < 1000; i++)
		sums &= i % 2 ? d[i] == 0.1f + 0.2f && a[i] == d[i] : isinf(d[i]) && isinf(a[i]);
	tu_ok(sums && z[0] == (0.1 + 0.2) / 3 && isinf(z[1]) && z[2] == 7.0 / 3,
	      "fpenv: the sums are right");
	feraiseexcept(FE_DIVBYZERO);
	gc_reduce(d, d, b, 1000, GCOLL_FLOAT32, GCOLL_SUM);
	tu_ok(fetestexcept(FE_ALL_EXCEPT) == FE_DIVBYZERO,
	      "fpenv: a flag the caller had stays, and only it (%#x)", fetestexcept(FE_ALL_EXCEPT));
	feclearexcept(FE_ALL_EXCEPT);
}

/* ---- fastenv: the chunked fast path's tunables are bad input too.  Rank 0
 * asks for a chunk out of range (or not a multiple of 64) and a 4 MiB
 * limit; the other ranks ask for a 4 KiB chunk and no chunked path.
 * Every rank must take rank 0's clamped values and still add right. */
#define FASTENV_COUNT 300001
static int fastenv_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	float *a = malloc(FASTENV_COUNT * sizeof(float)), *b = malloc(FASTENV_COUNT * sizeof(float));
	gcoll_comm_t c;
	int bad = 0;

	if (!a || !b)
		return 5;
	setenv("GCOLL_SHM_BIG_CHUNK", rank ? "4096" : (const char *)arg, 1);
	setenv("GCOLL_SHM_BIG_MAX", rank ? "0" : "4194304", 1);
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 20000);
	for (int i = 0; i < FASTENV_COUNT; i++)
		a[i] = (float)(rank + i % 7);
	R->rc[rank] = gcoll_allreduce(a, b, FASTENV_COUNT, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	for (int i = 0; i < FASTENV_COUNT; i++)
		bad += b[i] != (float)(n * (n - 1) / 2 + n * (i % 7));
	R->val[rank] = bad;
	R->shared[rank] = c->fast ? c->fast->chunk : 0;
	R->secs[rank] = c->fast ? (double)c->fast->bigmax : 0;
	gcoll_comm_destroy(c);
	free(a);
	free(b);
	return 0;
}

static void t_fastenv(void)
{
	static const struct { const char *env; uint64_t want; } cases[] = {
		{ "1", 64 << 10 },               /* below 64 KiB */
		{ "99999999999", 8 << 20 },      /* above 8 MiB */
		{ "100003", 100003 & ~63ull },   /* not a multiple of 64 */
	};
	int st[3];

	if (strcmp(prov, "shm")) {
		tu_skip("only the shm provider has the fast path", "fastenv: chunk %s", "clamping");
		return;
	}
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		bool ok = true;

		memset(R, 0, sizeof(*R));
		tu_run(3, fastenv_main, (void *)cases[k].env, 60, st);
		for (int r = 0; r < 3; r++)
			ok = ok && st[r] == 0 && R->rc[r] == GCOLL_SUCCESS && R->val[r] == 0 &&
			     R->shared[r] == cases[k].want && R->secs[r] == 4194304.0;
		tu_ok(ok, "fastenv: GCOLL_SHM_BIG_CHUNK=%s on rank 0 -> every rank uses %llu-byte chunks (got %llu %llu %llu), 4 MiB limit, sums right (wrong %d %d %d, rc %d %d %d)",
		      cases[k].env, (unsigned long long)cases[k].want,
		      (unsigned long long)R->shared[0], (unsigned long long)R->shared[1],
		      (unsigned long long)R->shared[2], R->val[0], R->val[1], R->val[2], R->rc[0],
		      R->rc[1], R->rc[2]);
	}
}

/* ---- adapt, part 1: rank 0's state machine, fed made-up costs */
static void t_adapt_pick(void)
{
	struct gc_adapt a = { 0 };
	int picks[6], probe = -1, flips = 0;
	bool ok = true;

	/* warm-up: the roads alternate, chunks first, until each has 3 samples */
	for (int i = 0; i < 6; i++) {
		picks[i] = gc_adapt_pick(&a);
		flips += gc_adapt_record(&a, picks[i], picks[i] == GC_VIA_CHUNKS ? 100 : 300);
	}
	for (int i = 0; i < 6; i++)
		ok = ok && picks[i] == (i % 2 ? GC_VIA_FABRIC : GC_VIA_CHUNKS);
	tu_ok(ok && flips == 1 && a.best == GC_VIA_CHUNKS && a.every == 8,
	      "adapt: warm-up alternates chunks and fabric, then picks the cheaper (chunks; every %u, %d picks made)",
	      a.every, flips);
	/* the other road is tried once in every 8 ops; a probe that confirms
	 * the pick doubles the period */
	for (int i = 0; i < 8; i++) {
		int v = gc_adapt_pick(&a);

		if (v == GC_VIA_FABRIC && probe < 0)
			probe = i;
		gc_adapt_record(&a, v, v == GC_VIA_CHUNKS ? 100 : 300);
	}
	tu_ok(probe == 7 && a.every == 16 && a.best == GC_VIA_CHUNKS,
	      "adapt: the fabric is probed at the 8th op (at %d), and the period doubles (%u)", probe,
	      a.every);
	/* the host slows the chunks down: the pick changes within a few ops */
	int n = 0;

	while (a.best == GC_VIA_CHUNKS && n < 10) {
		int v = gc_adapt_pick(&a);

		flips += gc_adapt_record(&a, v, v == GC_VIA_CHUNKS ? 900 : 300);
		n++;
	}
	tu_ok(a.best == GC_VIA_FABRIC && a.every == 8 && n <= 3,
	      "adapt: chunks 3x slower than the fabric -> the fabric after %d ops (period %u)", n,
	      a.every);
	for (int i = 0; i < 64; i++)
		gc_adapt_record(&a, GC_VIA_FABRIC, 300);
	tu_ok(a.every == 8 && a.best == GC_VIA_FABRIC,
	      "adapt: samples of the picked road alone do not stretch the probe period (%u)",
	      a.every);
}

/* ---- adapt, part 2: live.  GCOLL_SEGMENT_SIZE=1024 makes the fabric's
 * ring ten times slower than the chunks, so rank 0 must settle on the
 * chunks; every rank must take each op's road with it (a rank that took
 * the other road would wait on its peers until the timeout).  Every 5th
 * op is nonblocking: it keeps to the fabric and asks nobody.  The other
 * ranks ask for the opposite of rank 0's GCOLL_SHM_ADAPT_MAX; rank 0's
 * limit holds. */
#define ADAPT_COUNT (256 << 10)      /* 1 MiB of floats */
#define ADAPT_OPS 30
static int adapt_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	float *a = malloc(ADAPT_COUNT * sizeof(float)), *b = malloc(ADAPT_COUNT * sizeof(float));
	gcoll_comm_t c;
	int bad = 0;

	if (!a || !b)
		return 5;
	setenv("GCOLL_SEGMENT_SIZE", "1024", 1);
	setenv("GCOLL_SHM_BIG_MAX", "262144", 1);   /* 1 MiB chooses at 3 ranks too */
	/* the other ranks ask for the opposite of rank 0 */
	if (rank)
		setenv("GCOLL_SHM_ADAPT_MAX", arg ? "67108864" : "0", 1);
	else if (arg)
		setenv("GCOLL_SHM_ADAPT_MAX", (const char *)arg, 1);
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 20000);
	for (int k = 0; k < ADAPT_OPS && !R->rc[rank]; k++) {
		gcoll_request_t q;

		for (int i = 0; i < ADAPT_COUNT; i++)
			a[i] = (float)(rank + (i + k) % 7);
		if (k % 5 == 4) {
			R->rc[rank] = gcoll_allreduce(a, b, ADAPT_COUNT, GCOLL_FLOAT32, GCOLL_SUM, c, &q);
			if (!R->rc[rank])
				R->rc[rank] = gcoll_wait(q);
		} else {
			R->rc[rank] = gcoll_allreduce(a, b, ADAPT_COUNT, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
		}
		for (int i = 0; i < ADAPT_COUNT; i++)
			bad += b[i] != (float)(n * (n - 1) / 2 + n * ((i + k) % 7));
	}
	R->val[rank] = bad;
	R->via[rank][0] = c->fast ? c->fast->via[GC_VIA_FABRIC] : 99;
	R->via[rank][1] = c->fast ? c->fast->via[GC_VIA_CHUNKS] : 99;
	gcoll_comm_destroy(c);
	free(a);
	free(b);
	return 0;
}

static void t_adapt(void)
{
	int st[3];

	t_adapt_pick();
	if (strcmp(prov, "shm")) {
		tu_skip("only the shm provider has the fast path", "adapt: %s", "live");
		return;
	}
	for (int n = 2; n <= 3; n++) {
		bool same = true, sums = true;
		uint64_t f0, c0;

		memset(R, 0, sizeof(*R));
		tu_run(n, adapt_main, NULL, 120, st);
		f0 = R->via[0][0];
		c0 = R->via[0][1];
		for (int r = 0; r < n; r++) {
			sums = sums && st[r] == 0 && R->rc[r] == GCOLL_SUCCESS && R->val[r] == 0;
			same = same && R->via[r][0] == f0 && R->via[r][1] == c0;
		}
		tu_ok(sums, "adapt: %d ranks, 1 MiB all-reduces, blocking and not, sum right (rc %d %d, wrong %d %d)",
		      n, R->rc[0], R->rc[1], R->val[0], R->val[1]);
		tu_ok(same && f0 + c0 == ADAPT_OPS * 4 / 5,
		      "adapt: %d ranks: every rank took rank 0's road for each of the %d blocking ops (rank 0: %llu fabric, %llu chunks; rank 1: %llu, %llu)",
		      n, ADAPT_OPS * 4 / 5, (unsigned long long)f0, (unsigned long long)c0,
		      (unsigned long long)R->via[1][0], (unsigned long long)R->via[1][1]);
		/* warm-up: 3 each; then chunks, the fabric probed at the 8th */
		tu_ok(f0 >= 3 && f0 <= 5 && c0 >= 19,
		      "adapt: %d ranks: the chunks win over a slow ring (%llu chunks, %llu fabric)",
		      n, (unsigned long long)c0, (unsigned long long)f0);
	}
	memset(R, 0, sizeof(*R));
	tu_run(2, adapt_main, "0", 120, st);
	tu_ok(st[0] == 0 && st[1] == 0 && !R->rc[0] && !R->rc[1] && !R->val[0] && !R->val[1] &&
	      R->via[0][0] + R->via[0][1] + R->via[1][0] + R->via[1][1] == 0,
	      "adapt: GCOLL_SHM_ADAPT_MAX=0 on rank 0: nobody chooses, sums right (rc %d %d, wrong %d %d, %llu choices)",
	      R->rc[0], R->rc[1], R->val[0], R->val[1],
	      (unsigned long long)(R->via[0][0] + R->via[0][1] + R->via[1][0] + R->via[1][1]));
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*fn)(void); bool rxcq; } T[] = {
		{ "pool", t_pool, true },
		{ "poolfail", t_poolfail, true },
		{ "imm", t_imm, false },
		{ "mraccess", t_mraccess, false },
		{ "directed", t_directed, false },
		{ "silent", t_silent, false },
		{ "split", t_split, false },
		{ "nonce", t_nonce, false },
		{ "fastenv", t_fastenv, false },
		{ "adapt", t_adapt, false },
		{ "fpenv", t_fpenv, false },
		{ "quiet", t_quiet, false },
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
