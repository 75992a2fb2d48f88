/* SPDX-License-Identifier: MIT */
/*
 * Stray and hostile traffic, second round (security review 2026-11, N10).
 * White-box like robust_test: built from the library's sources, so a rank
 * can look inside its transport and forge what a stale or foreign process
 * would send.
 *
 *   harden_test [--provider tcp|shm] [SUBTEST...]
 *
 *   immgen     the check bytes of a slot's successive owners: no two of 256
 *              in a row are equal
 *   immcount   a rendezvous receive counts each segment once, and none out
 *              of range, whatever the check byte (3 and 300 segments)
 *   immseg     live: a duplicate and an out-of-range segment with the right
 *              check byte do not complete a 2-segment receive
 *   immbig     live: 300-segment transfers still complete, data right
 *   memaccess  registrations for every role (user, scratch, dma-buf) have
 *              no remote write until they are received into; live with
 *              gcoll_mem_register: the send buffer never gets one
 *   hello      a connection hello from a process that is not the rank it
 *              claims is not taken, with FI_DIRECTED_RECV and without
 *   idle       300 idle connections to the bootstrap root do not lock the
 *              ranks out
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
	uint64_t shared[16];
	char addr[4][GC_ADDR_MAX];
	size_t addrlen;
};
static struct res *R;
static const char *prov = "tcp";

static void spin(struct gc_transport *tp, int ms)
{
	for (uint64_t end = gc_now_ms() + (uint64_t)ms; gc_now_ms() < end;)
		gc_tp_progress(tp);
}

static int wait_flag(volatile uint64_t *f, struct gc_transport *tp)
{
	for (uint64_t end = gc_now_ms() + 20000; !*f;) {
		if (gc_now_ms() > end)
			return -1;
		if (tp)
			gc_tp_progress(tp);
		else
			usleep(1000);
	}
	return 0;
}

/* ---- immgen: 300 owners of one slot in a row */
static void t_immgen(void)
{
	struct gc_xfer x = { .kind = 1, .nseg = 1 };
	struct gc_transport *tp;
	uint8_t chk[300];
	int same = 0, first = -1;

	if (gc_tp_open(1, prov, &tp)) {
		tu_ok(false, "immgen: transport opens");
		return;
	}
	for (int k = 0; k < 300; k++) {
		tp->slot_hint = 7;
		if (gc_slot_alloc(tp, &x) || x.slot != 7) {
			tu_ok(false, "immgen: slot 7 is taken again (%d)", k);
			gc_tp_put(tp);
			return;
		}
		chk[k] = x.chk;
		gc_slot_free(tp, &x);
		for (int j = k > 255 ? k - 255 : 0; j < k; j++)
			if (chk[j] == chk[k]) {
				same++;
				if (first < 0)
					first = k;
			}
	}
	tu_ok(!same, "immgen: no owner of a slot has the check byte of one of its 255 predecessors (%d equal, first at owner %d)",
	      same, first);
	gc_tp_put(tp);
}

/* ---- immcount: segments fed to the receiver's handler directly */
struct feed {
	size_t seg;
	bool counts;     /* a write the receiver still expects */
};

/* Feed imms for x's slot; false if x completed before the last one or a
 * write was counted (or dropped) against expectation. */
static bool feed(struct gc_transport *tp, struct gc_xfer *x, const struct feed *f, int n,
		 uint64_t *dropped)
{
	uint64_t stray0 = tp->stray_writes;
	uint8_t chk = x->chk;
	uint32_t slot = x->slot;
	bool ok = true;

	for (int i = 0; i < n; i++) {
		size_t done = x->seg_done;

		if (x->state != GX_ACTIVE)
			ok = false;
		gc_handle_imm(tp, gc_imm(chk, slot, f[i].seg));
		ok = ok && x->seg_done == done + f[i].counts;
	}
	*dropped = tp->stray_writes - stray0;
	return ok;
}

static void t_immcount(void)
{
	static struct feed small[] = {
		{ 0, true }, { 0, false }, { 7, false }, { 3, false }, { 1, true }, { 1, false },
		{ 2, true },
	};
	static struct feed big[300 + 3];
	struct gcoll_comm dummy = { 0 };
	struct gc_xfer x = { .kind = 1, .state = GX_ACTIVE, .comm = &dummy, .nseg = 3 };
	struct gc_transport *tp;
	uint64_t dropped;
	bool ok;
	int nb = 0;

	if (gc_tp_open(1, prov, &tp)) {
		tu_ok(false, "immcount: transport opens");
		return;
	}
	/* 3 segments: 0, 0 again, 7, 3 (out of range), 1, 1 again, 2 */
	if (gc_slot_alloc(tp, &x)) {
		tu_ok(false, "immcount: a slot");
		gc_tp_put(tp);
		return;
	}
	ok = feed(tp, &x, small, 6, &dropped);
	tu_ok(ok && x.state == GX_ACTIVE && x.seg_done == 2 && dropped == 4,
	      "immcount: 3 segments: duplicates and indexes 3 and 7 are dropped, not counted (%zu counted, %llu dropped)",
	      x.seg_done, (unsigned long long)dropped);
	feed(tp, &x, &small[6], 1, &dropped);
	tu_ok(x.state == GX_DONE && !x.has_slot, "immcount: 3 segments: the last one completes it");

	/* 300 segments: indexes 0..43 come twice (s and s + 256), 44..255
	 * once; a second 50 and a third 10 are dropped */
	x = (struct gc_xfer){ .kind = 1, .state = GX_ACTIVE, .comm = &dummy, .nseg = 300 };
	if (gc_slot_alloc(tp, &x)) {
		tu_ok(false, "immcount: a slot for 300 segments");
		gc_tp_put(tp);
		return;
	}
	for (size_t s = 0; s < 299; s++) {
		big[nb++] = (struct feed){ s, true };
		if (s == 50)
			big[nb++] = (struct feed){ 50, false };
		if (s == 266)
			big[nb++] = (struct feed){ 10, false };
	}
	ok = feed(tp, &x, big, nb, &dropped);
	tu_ok(ok && x.state == GX_ACTIVE && x.seg_done == 299 && dropped == 2,
	      "immcount: 300 segments: a second 50 and a third 10 are dropped (%zu counted, %llu dropped)",
	      x.seg_done, (unsigned long long)dropped);
	big[0] = (struct feed){ 299, true };
	feed(tp, &x, big, 1, &dropped);
	tu_ok(x.state == GX_DONE && !x.has_slot && !x.seg_cnt,
	      "immcount: 300 segments: the 300th completes it");
	gc_tp_put(tp);
}

/* ---- immseg: live, 2 ranks, a receive of 2 segments */
#define SEG_W (64u << 10)
#define SEG_LEN (2 * SEG_W)

static int immseg_receiver(gcoll_comm_t c, unsigned char *buf)
{
	struct gc_transport *tp = c->tp;
	gcoll_request_t rq;

	memset(buf, 0, SEG_LEN);
	if (gcoll_recv(buf, SEG_LEN, GCOLL_UINT8, 1, c, &rq))
		return 10;
	/* progress the receive (its control entry may have to wait for
	 * the provider) until rank 1 has sent a duplicate of segment 0 and
	 * a segment 5: two counted writes would complete it */
	R->val[0] = 1;
	for (uint64_t end = gc_now_ms() + 20000; R->val[0] && !R->shared[2];) {
		if (gc_now_ms() > end)
			return 11;
		R->val[0] = gcoll_test(rq) == GCOLL_IN_PROGRESS;
	}
	for (uint64_t end = gc_now_ms() + 300; R->val[0] && gc_now_ms() < end;)
		R->val[0] = gcoll_test(rq) == GCOLL_IN_PROGRESS;
	R->shared[3] = tp->stray_writes;
	R->shared[4] = 1;
	if (R->val[0])
		R->rc[0] = gcoll_wait(rq);
	for (size_t i = 0; i < SEG_LEN && !R->rc[0]; i++)
		if (buf[i] != 0x5a)
			R->rc[0] = 103;
	R->shared[5] = 1;
	return R->val[0] ? 0 : 12;
}

static int write_seg(struct gc_transport *tp, struct gc_mr *m, const struct gc_ctrl *ctrl,
		     unsigned char *buf, size_t seg, size_t off)
{
	struct gc_rail *r = &tp->rails[0];
	ssize_t ret;

	do {
		ret = fi_writedata(r->ep, buf + off, SEG_W, m ? m->desc : NULL,
				   gc_imm(ctrl->chk, ctrl->slot, seg), r->peers[0], ctrl->addr + off,
				   ctrl->key, NULL);
		gc_tp_progress(tp);
	} while (ret == -FI_EAGAIN);
	return (int)ret;
}

static int immseg_sender(gcoll_comm_t c, unsigned char *buf)
{
	struct gc_transport *tp = c->tp;
	struct gc_rail *r = &tp->rails[0];
	struct fi_context fctx;
	struct gc_ctrl ctrl;
	struct gc_mr *m = NULL;
	int ret = 0;

	/* take the control entry as a sender would, then write by hand */
	if (fi_trecv(r->ep, &ctrl, sizeof(ctrl), NULL, FI_ADDR_UNSPEC,
		     gc_tag(GC_TAG_CTRL, c->ctx, 0, c->send_seq[0]), 0, &fctx))
		return 20;
	for (uint64_t end = gc_now_ms() + 10000;;) {
		struct fi_cq_data_entry e;

		if (fi_cq_read(r->cq, &e, 1) == 1 && e.op_context == &fctx)
			break;
		if (gc_now_ms() > end)
			return 21;
	}
	if (ctrl.len != SEG_LEN || ctrl.wsize != SEG_W)
		return 22;
	memset(buf, 0x5a, SEG_LEN);
	if (tp->mr_local && gc_mr_lookup(tp, buf, SEG_LEN, GC_ACC_SRC, &m))
		return 23;
	/* segment 0, segment 0 again, and a segment 5 of a 2-segment transfer */
	ret = write_seg(tp, m, &ctrl, buf, 0, 0);
	if (!ret)
		ret = write_seg(tp, m, &ctrl, buf, 0, 0);
	if (!ret)
		ret = write_seg(tp, m, &ctrl, buf, 5, 0);
	if (ret)
		return 24;
	spin(tp, 500);
	R->shared[2] = 1;
	if (wait_flag(&R->shared[4], tp))
		return 25;
	if (write_seg(tp, m, &ctrl, buf, 1, SEG_W))
		return 26;
	c->send_seq[0]++;
	if (wait_flag(&R->shared[5], tp))
		return 27;
	if (m)
		m->users--;
	return 0;
}

static int immseg_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	unsigned char *buf = aligned_alloc(4096, SEG_LEN);
	gcoll_comm_t c;
	int ret;

	(void)arg;
	setenv("GCOLL_EAGER_MAX", "16384", 1);
	setenv("GCOLL_WRITE_SIZE", "65536", 1);
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 10000);
	/* connected, so that the control entry goes out at once */
	if ((R->rc[rank] = gcoll_barrier(c, NULL)))
		return 4;
	ret = rank ? immseg_sender(c, buf) : immseg_receiver(c, buf);
	gcoll_comm_abort(c);
	free(buf);
	return ret;
}

static void t_immseg(void)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	tu_run(2, immseg_main, NULL, 60, st);
	tu_ok(R->val[0] == 1,
	      "immseg: a duplicate segment 0 and a segment 5 with the right check byte do not complete a 2-segment receive");
	tu_ok(st[0] == 0 && st[1] == 0 && R->rc[0] == 0,
	      "immseg: the real segment 1 completes it, data intact (rc %d, exit %d %d)", R->rc[0],
	      st[0], st[1]);
	tu_ok(R->shared[3] >= 2, "immseg: both were counted as stray (%llu)",
	      (unsigned long long)R->shared[3]);
}

/* ---- immbig: live, 300 segments of 4 KiB each way (counted per index) */
#define BIG_LEN (300u * 4096u)

static int immbig_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	unsigned char *sb = malloc(BIG_LEN), *rb = malloc(BIG_LEN);
	gcoll_request_t rq[2];
	gcoll_comm_t c;
	int bad = 0;

	(void)arg;
	setenv("GCOLL_EAGER_MAX", "16384", 1);
	setenv("GCOLL_WRITE_SIZE", "4096", 1);
	if (!sb || !rb || (R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 20000);
	for (size_t i = 0; i < BIG_LEN; i++)
		sb[i] = (unsigned char)(i * 7 + (size_t)rank * 13 + i / 4096);
	memset(rb, 0, BIG_LEN);
	gcoll_group_start();
	gcoll_send(sb, BIG_LEN, GCOLL_UINT8, 1 - rank, c, &rq[0]);
	gcoll_recv(rb, BIG_LEN, GCOLL_UINT8, 1 - rank, c, &rq[1]);
	R->rc[rank] = gcoll_group_end();
	if (!R->rc[rank])
		R->rc[rank] = gcoll_wait(rq[0]);
	if (!R->rc[rank])
		R->rc[rank] = gcoll_wait(rq[1]);
	for (size_t i = 0; i < BIG_LEN; i++)
		bad += rb[i] != (unsigned char)(i * 7 + (size_t)(1 - rank) * 13 + i / 4096);
	R->val[rank] = bad;
	R->shared[rank] = c->tp->stray_writes;
	gcoll_comm_destroy(c);
	free(sb);
	free(rb);
	return 0;
}

static void t_immbig(void)
{
	int st[2];

	memset(R, 0, sizeof(*R));
	tu_run(2, immbig_main, NULL, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0 && !R->rc[0] && !R->rc[1] && !R->val[0] && !R->val[1] &&
	      !R->shared[0] && !R->shared[1],
	      "immbig: 300-segment send/recv both ways, data right, nothing dropped (rc %d %d, wrong %d %d, strays %llu %llu)",
	      R->rc[0], R->rc[1], R->val[0], R->val[1], (unsigned long long)R->shared[0],
	      (unsigned long long)R->shared[1]);
}

/* ---- memaccess, part 1: a registration for every role, by hand */
static void t_memaccess_unit(void)
{
	struct gc_mr *m = NULL, *s = NULL, *d = NULL, *d2 = NULL, *mb = NULL;
	char *buf = aligned_alloc(4096, 3 * 4096);
	struct gc_transport *tp;

	if (gc_tp_open(1, prov, &tp) || gc_mr_reg(tp, buf, 2 * 4096, -1, 0, &m)) {
		tu_ok(false, "memaccess: transport and registration");
		free(buf);
		return;
	}
	gc_mr_pin(tp, m);
	tu_ok(!(m->access & (FI_REMOTE_WRITE | FI_REMOTE_READ)) && !m->twin,
	      "memaccess: a registration for every role starts without remote access (0x%llx)",
	      (unsigned long long)m->access);
	if (gc_mr_lookup(tp, buf + 100, 200, GC_ACC_SRC, &s) ||
	    gc_mr_lookup(tp, buf + 4096, 100, GC_ACC_DST, &d) ||
	    gc_mr_lookup(tp, buf, 2 * 4096, GC_ACC_DST, &d2) ||
	    gc_mr_lookup(tp, buf + 300, 8, GC_ACC_MAILBOX, &mb)) {
		tu_ok(false, "memaccess: lookups");
	} else {
		tu_ok(s == m && !(s->access & FI_REMOTE_WRITE),
		      "memaccess: a send inside it uses it as it is");
		tu_ok(d == m->twin && d2 == d && mb == d && (d->access & FI_REMOTE_WRITE) &&
		      !(d->access & FI_REMOTE_READ) && d->key != m->key && d->base == m->base &&
		      d->len == m->len,
		      "memaccess: receives use one remote-writable twin of the whole range (0x%llx)",
		      d ? (unsigned long long)d->access : 0ull);
		tu_ok(gc_mr_users(m) == 4, "memaccess: users of both are counted (%d)",
		      gc_mr_users(m));
		s->users--;
		d->users -= 3;
	}
	gc_mr_unpin(tp, m);   /* frees the twin too (LeakSanitizer) */
	gc_tp_put(tp);
	free(buf);
}

/* ---- memaccess, part 2: live, with gcoll_mem_register */
#define MA_COUNT (256u << 10)

static int memaccess_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	float *sb = aligned_alloc(4096, MA_COUNT * sizeof(float));
	float *rb = aligned_alloc(4096, MA_COUNT * sizeof(float));
	gcoll_mem_t hs, hr;
	gcoll_comm_t c;
	int bad = 0;

	(void)arg;
	setenv("GCOLL_EAGER_MAX", "16384", 1);   /* rendezvous on shm too */
	setenv("GCOLL_SHM_FAST", "0", 1);        /* over the fabric */
	if ((R->rc[rank] = gcoll_comm_init_rank(&c, n, id, rank)))
		return 3;
	gcoll_comm_set_timeout(c, 20000);
	if (gcoll_mem_register(c, sb, MA_COUNT * sizeof(float), &hs) ||
	    gcoll_mem_register(c, rb, MA_COUNT * sizeof(float), &hr))
		return 4;
	for (unsigned i = 0; i < MA_COUNT; i++)
		sb[i] = (float)(rank + i % 5);
	R->rc[rank] = gcoll_allreduce(sb, rb, MA_COUNT, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	for (unsigned i = 0; i < MA_COUNT; i++)
		bad += rb[i] != (float)(n * (n - 1) / 2 + n * (i % 5));
	R->val[rank] = bad;
	R->shared[2 * rank] = hs->mr->access | (hs->mr->twin ? hs->mr->twin->access : 0);
	R->shared[2 * rank + 1] = hr->mr->twin ? hr->mr->twin->access : 0;
	if (gcoll_mem_deregister(c, hs) || gcoll_mem_deregister(c, hr))
		R->val[rank] += 1000000;
	gcoll_comm_destroy(c);
	free(sb);
	free(rb);
	return 0;
}

static void t_memaccess(void)
{
	int st[2];

	t_memaccess_unit();
	memset(R, 0, sizeof(*R));
	tu_run(2, memaccess_main, NULL, 60, st);
	tu_ok(st[0] == 0 && st[1] == 0 && !R->rc[0] && !R->rc[1] && !R->val[0] && !R->val[1],
	      "memaccess: all-reduce between registered buffers, sum right (rc %d %d, wrong %d %d)",
	      R->rc[0], R->rc[1], R->val[0], R->val[1]);
	tu_ok(!((R->shared[0] | R->shared[2]) & FI_REMOTE_WRITE),
	      "memaccess: the registered send buffer never had remote write (0x%llx 0x%llx)",
	      (unsigned long long)R->shared[0], (unsigned long long)R->shared[2]);
	tu_ok((R->shared[1] & R->shared[3] & FI_REMOTE_WRITE) != 0,
	      "memaccess: the receive buffer got it when it was received into (0x%llx 0x%llx)",
	      (unsigned long long)R->shared[1], (unsigned long long)R->shared[3]);
}

/* ---- hello: rank 2 (X) knows rank 1's address and says hello to it as
 * rank 0, with a key it does not know.  Rank 1 (B) must wait for rank 0
 * (A), who says hello a second later. */
#define HELLO_KEY 0x5eedf00dcafe1234ull

static int hello_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	bool fallback = arg != NULL;
	struct gc_transport *tp;
	struct gc_boot *b;
	char addrs[3 * GC_ADDR_MAX], mine[GC_ADDR_MAX] = { 0 }, av[2 * GC_ADDR_MAX];
	size_t al;
	double t0;

	if (gc_tp_open(1, prov, &tp))
		return 3;
	al = tp->addrlen;
	memcpy(mine, tp->addr[0], al);
	if (gc_boot_connect(&id, rank, n, 20000, &b) || gc_boot_allgather(b, mine, al, addrs))
		return 4;
	/* A and B: the job (ranks 0, 1); X: itself as rank 0, then B */
	memcpy(av, rank == 2 ? addrs + 2 * al : addrs, al);
	memcpy(av + al, addrs + al, al);
	if (gc_tp_set_peers(tp, 2, rank == 1, av))
		return 5;
	tp->hello_key = rank == 2 ? ~HELLO_KEY : HELLO_KEY;
	if (rank == 2) {
		R->rc[2] = gc_tp_connect_all(tp, 10000);
		R->shared[0] = 1;
		wait_flag(&R->shared[2], NULL);
	} else if (rank == 1) {
		if (fallback)
			tp->info->caps &= ~FI_DIRECTED_RECV;
		/* progress until X's hello is in (unexpected) */
		while (!R->shared[0])
			spin(tp, 10);
		spin(tp, 300);
		R->shared[1] = 1;
		t0 = tu_now();
		R->rc[1] = gc_tp_connect_all(tp, 10000);
		R->secs[1] = tu_now() - t0;
		R->val[1] = (int)tp->stray_hellos;
		spin(tp, 300);
		R->shared[2] = 1;
	} else {
		wait_flag(&R->shared[1], NULL);
		usleep(1000000);
		R->rc[0] = gc_tp_connect_all(tp, 10000);
		wait_flag(&R->shared[2], NULL);
		spin(tp, 100);
	}
	gc_boot_close(b);
	gc_tp_put(tp);
	return 0;
}

static void t_hello(void)
{
	static const char *const how[] = { "directed receive", "any source, token checked" };
	int st[3];

	for (int v = 0; v < 2; v++) {
		memset(R, 0, sizeof(*R));
		tu_run(3, hello_main, v ? (void *)1 : NULL, 60, st);
		tu_ok(st[0] == 0 && st[1] == 0 && st[2] == 0 && R->rc[0] == 0 && R->rc[1] == 0,
		      "hello (%s): ranks 0 and 1 connect (rc %d %d, X %d, exit %d %d %d)", how[v],
		      R->rc[0], R->rc[1], R->rc[2], st[0], st[1], st[2]);
		tu_ok(R->secs[1] >= 0.8,
		      "hello (%s): rank 1 does not take X's hello for rank 0's (waited %.2f s for rank 0)",
		      how[v], R->secs[1]);
		if (v)
			tu_ok(R->val[1] == 1, "hello (%s): X's hello was dropped as stray (%d)", how[v],
			      R->val[1]);
	}
}

/* ---- idle: 300 connections that never say hello, then the ranks */
#define IDLE_CONNS 300

static int idle_main(int rank, int n, gcoll_unique_id id, void *arg)
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

static void t_idle(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof(sa);
	static int fds[IDLE_CONNS];
	gcoll_unique_id id;
	int st[2], lfd, nc = 0;

	memset(R, 0, sizeof(*R));
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &sl)) {
		tu_ok(false, "idle: a free port");
		return;
	}
	close(lfd);
	if (gcoll_unique_id_from_addr(&id, "127.0.0.1", ntohs(sa.sin_port), 1)) {
		tu_ok(false, "idle: root listens on port %u", ntohs(sa.sin_port));
		return;
	}
	for (; nc < IDLE_CONNS; nc++) {
		fds[nc] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fds[nc] < 0 || connect(fds[nc], (struct sockaddr *)&sa, sizeof(sa)))
			break;
	}
	usleep(500000);   /* the root has accepted them before the ranks come */
	tu_run(2, idle_main, &id, 60, st);
	for (int i = 0; i < nc; i++)
		close(fds[i]);
	tu_ok(nc == IDLE_CONNS, "idle: %d idle connections to the root", nc);
	tu_ok(st[0] == 0 && st[1] == 0, "idle: 2 ranks init past them (rc %d %d)", R->rc[0],
	      R->rc[1]);
	tu_ok(R->secs[0] < 5 && R->secs[1] < 5,
	      "idle: without waiting for the idle ones to time out (%.2f %.2f s)", R->secs[0],
	      R->secs[1]);
}

int main(int argc, char **argv)
{
	static const struct { const char *name; void (*fn)(void); } T[] = {
		{ "immgen", t_immgen },
		{ "immcount", t_immcount },
		{ "immseg", t_immseg },
		{ "immbig", t_immbig },
		{ "memaccess", t_memaccess },
		{ "hello", t_hello },
		{ "idle", t_idle },
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
		if (run)
			T[i].fn();
	}
	return tu_done();
}
