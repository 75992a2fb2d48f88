/* SPDX-License-Identifier: MIT */
/*
 * The shared-memory fast path for small all-reduces on one host.
 *
 * Going through libfabric costs a small all-reduce a tagged send, a
 * receive and their completions per step, each a trip through the
 * provider's queues.  Open MPI's sm collectives and NCCL's LL protocol
 * instead let every rank drop its contribution into a shared segment and
 * publish it with a flag the others poll; no system call, no queue.  This
 * file does the same for the world communicator when every rank is on this
 * host and the transport is libfabric's shm provider (which already assumes
 * that peers can reach each other's memory):
 *
 *   - rank 0 creates a POSIX shared-memory segment at init; every rank maps
 *     it (two bootstrap rounds; it is unlinked once all have mapped it, so
 *     nothing is left behind);
 *   - each rank owns K slots of GC_FAST_MAX bytes, each led by a sequence
 *     word in the same cache line as the first data bytes (LL-style: an
 *     8-byte all-reduce moves one line per peer), and a "done" word;
 *   - operation s: wait until every rank has consumed s - K (done), copy the
 *     input into slot s mod K, store s with release; wait until every rank's
 *     slot s mod K says s (acquire), reduce all inputs in rank order (so every
 *     rank gets the same bits), store done = s.
 *
 * All-reduces above GC_FAST_MAX and up to GCOLL_SHM_BIG_MAX bytes (at most
 * GC_BIG_MAX_RANKS ranks) take the same road in chunks of GCOLL_SHM_BIG_CHUNK
 * bytes, each chunk a sequence number of its own, with a reduce-scatter in
 * the middle so no byte is reduced twice: every rank copies its chunk,
 * except its own 1/n slice, into its chunk slot (one of GC_BIG_K), reduces
 * its slice of all n inputs (its own read from where it is) into its slice
 * slot, and then copies all n slices out.  Against the ring over the shm
 * provider it moves a little fewer bytes, without the provider's queues,
 * and waits on its peers three times per chunk instead of 2(n-1).
 *
 * Failure semantics are the ones of the fabric path: the communicator's
 * timeout bounds every wait (GCOLL_ERR_TIMEOUT); a peer process that exits
 * is seen through its pidfd within GC_FAST_LIVE_MS (GCOLL_ERR_REMOTE) and
 * not left to the timeout; either puts the communicator in error state;
 * abort and destroy unmap the segment without waiting for anyone.
 * Nonblocking calls and groups go through a request the usual progress
 * engine drives; a blocking call outside a group spins here directly.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gc_bootstrap.h"
#include "gc_fast.h"
#include "gc_stage.h"

#define GC_FAST_K 4                         /* slots per rank */
#define GC_FAST_LINE 64
#define GC_FAST_SLOT (GC_FAST_LINE + GC_FAST_MAX)   /* seq word + data, rounded */
#define GC_FAST_RANK (GC_FAST_LINE + GC_FAST_K * GC_FAST_SLOT)
#define GC_FAST_LIVE_MS 10                  /* how often a waiter checks peers */
#define GC_BIG_K 2                          /* chunk slots per rank */
#define GC_BIG_CHUNK ((size_t)512 << 10)    /* GCOLL_SHM_BIG_CHUNK's default */
#define GC_BIG_MAX_RANKS 8                  /* the segment grows with n */
/* GCOLL_SHM_BIG_MAX's default: with 2 ranks the ring over shm is as good
 * from 256 KiB up, and much better when the host is in its slow state */
#define GC_BIG_DEFAULT(n) ((n) == 2 ? 128u << 10 : 2u << 20)
/* GCOLL_SHM_ADAPT_MAX's default: above GCOLL_SHM_BIG_MAX and up to this,
 * each blocking all-reduce takes the road quicker for its size class */
#define GC_ADAPT_DEFAULT ((size_t)64 << 20)
#define GC_ADAPT_WARM 3                     /* samples per road before a pick */
#define GC_ADAPT_PROBE_MIN 8                /* ops between probes of the other road */
#define GC_ADAPT_PROBE_MAX 64

static uint64_t *done_word(struct gc_fast *f, int r)
{
	return (uint64_t *)((char *)f->map + (size_t)r * GC_FAST_RANK);
}

static uint64_t *slot_seq(struct gc_fast *f, int r, uint64_t s)
{
	return (uint64_t *)((char *)f->map + (size_t)r * GC_FAST_RANK + GC_FAST_LINE +
			    (size_t)(s % GC_FAST_K) * GC_FAST_SLOT);
}

static void *slot_data(struct gc_fast *f, int r, uint64_t s)
{
	return slot_seq(f, r, s) + 1;
}

/* The segment's layout for a chunk size and a chunked limit (0: no chunk
 * slots): the small slots of every rank, then GC_BIG_K chunk slots per
 * rank, each [seq line][chunk input][seq line][slice], where a slice holds
 * at most ceil(elements / n) elements of up to 8 bytes. */
static void seg_layout(struct gc_fast *f, uint64_t chunk, uint64_t bigmax)
{
	size_t n = (size_t)f->n;

	f->chunk = chunk;
	f->big_off = n * GC_FAST_RANK;
	f->big_slot = 2 * GC_FAST_LINE + chunk +
		      (chunk / n + 2 * GC_FAST_LINE - 1) / GC_FAST_LINE * GC_FAST_LINE;
	f->maplen = f->big_off + (bigmax ? n * GC_BIG_K * f->big_slot : 0);
}

static uint64_t *big_in_seq(struct gc_fast *f, int r, uint64_t s)
{
	return (uint64_t *)((char *)f->map + f->big_off +
			    ((size_t)r * GC_BIG_K + (size_t)(s % GC_BIG_K)) * f->big_slot);
}

static char *big_in(struct gc_fast *f, int r, uint64_t s)
{
	return (char *)big_in_seq(f, r, s) + GC_FAST_LINE;
}

static uint64_t *big_out_seq(struct gc_fast *f, int r, uint64_t s)
{
	return (uint64_t *)(big_in(f, r, s) + f->chunk);
}

static char *big_out(struct gc_fast *f, int r, uint64_t s)
{
	return (char *)big_out_seq(f, r, s) + GC_FAST_LINE;
}

void gc_fast_free(struct gc_fast *f)
{
	if (!f)
		return;
	if (f->map)
		munmap(f->map, f->maplen);
	for (int i = 0; f->pidfd && i < f->n; i++)
		if (f->pidfd[i] >= 0)
			close(f->pidfd[i]);
	free(f->pidfd);
	free(f);
}

struct fast_info {
	int32_t ok;
	int32_t pid;
	uint64_t pidns;
	uint64_t max;               /* rank 0's byte limit: every rank uses it */
	uint64_t bigmax;            /* rank 0's limit of the chunked path (0: none) */
	uint64_t chunk;             /* rank 0's chunk size */
	uint64_t adapt_max;         /* rank 0's limit of the adaptive choice */
	char name[48];
};

/* Rank 0: give the segment its blocks now, so that a full /dev/shm (64 MiB
 * in a default container) is an error here rather than a SIGBUS at the
 * first touch.  Without room for the chunk slots, go on with the small
 * slots alone. */
static int seg_alloc(int fd, struct gc_fast *f, uint64_t *bigmax)
{
	int e;

	if (*bigmax) {
		e = posix_fallocate(fd, 0, (off_t)f->maplen);
		if (!e)
			return 0;
		GC_INFO("shared-memory fast path: no room for %zu bytes of chunk slots (%s): small all-reduces only",
			f->maplen - f->big_off, strerror(e));
		*bigmax = 0;
		seg_layout(f, f->chunk, 0);
	}
	e = posix_fallocate(fd, 0, (off_t)f->maplen);
	errno = e;
	return e ? -1 : 0;
}

/* Bootstrap rounds of gcoll_comm_init_rank (every rank of a one-host shm
 * communicator calls this; failing to set the fast path up is not an error,
 * the communicator then uses the fabric for everything). */
gcoll_result_t gc_fast_setup(struct gcoll_comm *c, struct gc_boot *b)
{
	int n = c->nranks, fd = -1;
	struct fast_info mine = { 0 }, *all = calloc((size_t)n, sizeof(*all));
	struct gc_fast *f = calloc(1, sizeof(*f));
	char *oks = malloc((size_t)n), ok2;
	struct stat st;
	gcoll_result_t rc;

	if (!all || !f || !oks) {
		rc = GCOLL_ERR_NOMEM;
		goto out;
	}
	f->n = n;
	f->rank = c->rank;
	f->pidfd = malloc(sizeof(int) * (size_t)n);
	mine.ok = f->pidfd && gc_env_u64("GCOLL_SHM_FAST", 1) != 0;
	mine.pid = getpid();
	mine.pidns = stat("/proc/self/ns/pid", &st) ? 0 : (uint64_t)st.st_ino;
	mine.max = gc_env_u64("GCOLL_SHM_FAST_MAX", GC_FAST_MAX);
	if (mine.max > GC_FAST_MAX)
		mine.max = GC_FAST_MAX;
	mine.bigmax = n <= GC_BIG_MAX_RANKS ? gc_env_u64("GCOLL_SHM_BIG_MAX", GC_BIG_DEFAULT(n)) : 0;
	if (mine.bigmax <= mine.max)
		mine.bigmax = 0;
	mine.chunk = gc_env_u64("GCOLL_SHM_BIG_CHUNK", GC_BIG_CHUNK);
	if (mine.chunk < 64 << 10)
		mine.chunk = 64 << 10;
	if (mine.chunk > 8 << 20)
		mine.chunk = 8 << 20;
	mine.chunk &= ~(uint64_t)(GC_FAST_LINE - 1);
	mine.adapt_max = gc_env_u64("GCOLL_SHM_ADAPT_MAX", GC_ADAPT_DEFAULT);
	/* the layout follows rank 0's choice: the others learn it below */
	seg_layout(f, mine.chunk, mine.bigmax);
	for (int i = 0; f->pidfd && i < n; i++)
		f->pidfd[i] = -1;
	if (c->rank == 0 && mine.ok) {
		snprintf(mine.name, sizeof(mine.name), "/gcoll-%d-%llx", (int)getpid(),
			 (unsigned long long)(gc_now_ms() ^ ((uint64_t)(uintptr_t)f << 16)));
		fd = shm_open(mine.name, O_RDWR | O_CREAT | O_EXCL, 0600);
		mine.ok = fd >= 0 && !seg_alloc(fd, f, &mine.bigmax);
		if (!mine.ok)
			GC_INFO("shared-memory fast path: %s: %s", mine.name, strerror(errno));
	}
	rc = gc_boot_allgather(b, &mine, sizeof(mine), all);
	if (rc)
		goto unlink;
	seg_layout(f, all[0].chunk, all[0].bigmax);
	ok2 = 1;
	for (int i = 0; i < n; i++)
		ok2 = ok2 && all[i].ok && all[i].pidns == mine.pidns && mine.pidns;
	if (ok2 && c->rank) {
		all[0].name[sizeof(all[0].name) - 1] = 0;
		fd = shm_open(all[0].name, O_RDWR, 0);
		ok2 = fd >= 0;
	}
	if (ok2) {
		f->map = mmap(NULL, f->maplen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
		if (f->map == MAP_FAILED) {
			f->map = NULL;
			ok2 = 0;
		}
	}
	for (int i = 0; ok2 && i < n; i++) {
		if (i == c->rank)
			continue;
		f->pidfd[i] = (int)syscall(SYS_pidfd_open, (pid_t)all[i].pid, 0);
		ok2 = f->pidfd[i] >= 0;
	}
	f->max = all[0].max;
	f->bigmax = all[0].bigmax;
	/* rank 0 has dropped its chunk slots when /dev/shm had no room */
	f->adapt_max = f->bigmax && all[0].adapt_max > f->bigmax ? all[0].adapt_max : 0;
	rc = gc_boot_allgather(b, &ok2, 1, oks);
	for (int i = 0; !rc && i < n; i++)
		ok2 = ok2 && oks[i];
	if (!rc && ok2) {
		c->fast = f;
		f = NULL;
		GC_INFO("rank %d: shared-memory fast path for all-reduces up to %zu bytes, in chunks up to %zu, chunks or fabric, whichever is quicker, up to %zu",
			c->rank, c->fast->max, c->fast->bigmax, c->fast->adapt_max);
	}
unlink:
	if (c->rank == 0 && fd >= 0)
		shm_unlink(mine.name);
out:
	if (fd >= 0)
		close(fd);
	gc_fast_free(f);
	free(all);
	free(oks);
	return rc;
}

bool gc_fast_ok(struct gcoll_comm *c, size_t bytes)
{
	return c->fast && bytes && (bytes <= c->fast->max || bytes <= c->fast->bigmax);
}

/* A peer process that has exited: GCOLL_ERR_REMOTE. */
static gcoll_result_t check_peers(struct gcoll_comm *c)
{
	struct gc_fast *f = c->fast;
	struct pollfd p[64];
	int k = 0;

	for (int i = 0; i < f->n && k < 64; i++)
		if (f->pidfd[i] >= 0)
			p[k++] = (struct pollfd){ .fd = f->pidfd[i], .events = POLLIN };
	if (poll(p, (nfds_t)k, 0) <= 0)
		return GCOLL_SUCCESS;
	for (int i = 0, j = 0; i < f->n; i++) {
		if (f->pidfd[i] < 0)
			continue;
		if (p[j++].revents)
			return gc_err(GCOLL_ERR_REMOTE,
				      "rank %d: rank %d exited during a shared-memory all-reduce",
				      c->rank, i);
	}
	return GCOLL_SUCCESS;
}

/* One step of a small op o: SUCCESS when done, IN_PROGRESS when waiting. */
static gcoll_result_t small_step(struct gcoll_comm *c, struct gc_fastop *o)
{
	struct gc_fast *f = c->fast;
	int n = f->n;

	if (o->state == 0) {
		if (f->wr != o->seq - 1)
			return GCOLL_IN_PROGRESS;   /* an earlier op has not written yet */
		for (int i = 0; i < n; i++)
			if (__atomic_load_n(done_word(f, i), __ATOMIC_ACQUIRE) + GC_FAST_K < o->seq)
				return GCOLL_IN_PROGRESS;
		memcpy(slot_data(f, f->rank, o->seq), o->sb, o->bytes);
		__atomic_store_n(slot_seq(f, f->rank, o->seq), o->seq, __ATOMIC_RELEASE);
		f->wr = o->seq;
		o->state = 1;
	}
	if (f->rd != o->seq - 1)
		return GCOLL_IN_PROGRESS;
	for (int i = 0; i < n; i++)
		if (__atomic_load_n(slot_seq(f, i, o->seq), __ATOMIC_ACQUIRE) != o->seq)
			return GCOLL_IN_PROGRESS;
	gc_reduce(o->rb, slot_data(f, 0, o->seq), slot_data(f, 1, o->seq), o->count, o->type, o->op);
	for (int i = 2; i < n; i++)
		gc_reduce(o->rb, o->rb, slot_data(f, i, o->seq), o->count, o->type, o->op);
	if (o->op == GCOLL_AVG)
		gc_scale_avg(o->rb, o->count, o->type, n);
	__atomic_store_n(done_word(f, f->rank), o->seq, __ATOMIC_RELEASE);
	GC_TRACE("rank %d: fast all-reduce %llu done (%zu bytes)", f->rank,
		 (unsigned long long)o->seq, o->bytes);
	f->rd = o->seq;
	o->state = 2;
	return GCOLL_SUCCESS;
}

static bool all_at(struct gc_fast *f, uint64_t *(*word)(struct gc_fast *, int, uint64_t),
		   uint64_t s)
{
	for (int i = 0; i < f->n; i++)
		if (__atomic_load_n(word(f, i, s), __ATOMIC_ACQUIRE) != s)
			return false;
	return true;
}

/* One step of a chunked op o: chunk after chunk, each through states
 * 0 (input not written), 1 (written), 2 (own slice reduced). */
static gcoll_result_t big_step(struct gcoll_comm *c, struct gc_fastop *o)
{
	struct gc_fast *f = c->fast;
	size_t es = gc_type_size(o->type), per = f->chunk / es;
	int n = f->n;

	while (o->ci < o->nchunks) {
		uint64_t s = o->seq + o->ci;
		size_t off = o->ci * per, cnt = o->count - off < per ? o->count - off : per;
		struct gc_chunks k = { cnt / (size_t)n, cnt % (size_t)n };
		size_t lo = gc_ck_off(&k, f->rank), len = gc_ck_len(&k, f->rank);
		const char *in = (const char *)o->sb + off * es;

		if (o->state == 0) {
			if (f->wr != s - 1)
				return GCOLL_IN_PROGRESS;
			for (int i = 0; i < n; i++)
				if (__atomic_load_n(done_word(f, i), __ATOMIC_ACQUIRE) + GC_BIG_K < s)
					return GCOLL_IN_PROGRESS;
			/* the peers need every slice of the input but this
			 * rank's own, which it reduces from where it is */
			memcpy(big_in(f, f->rank, s), in, lo * es);
			memcpy(big_in(f, f->rank, s) + (lo + len) * es, in + (lo + len) * es,
			       (cnt - lo - len) * es);
			__atomic_store_n(big_in_seq(f, f->rank, s), s, __ATOMIC_RELEASE);
			f->wr = s;
			o->state = 1;
		}
		if (o->state == 1) {
			char *out = big_out(f, f->rank, s);
			const char *src[GC_BIG_MAX_RANKS];

			if (f->rd != s - 1 || !all_at(f, big_in_seq, s))
				return GCOLL_IN_PROGRESS;
			for (int i = 0; i < n; i++)
				src[i] = i == f->rank ? in + lo * es : big_in(f, i, s) + lo * es;
			gc_reduce(out, src[0], src[1], len, o->type, o->op);
			for (int i = 2; i < n; i++)
				gc_reduce(out, out, src[i], len, o->type, o->op);
			if (o->op == GCOLL_AVG)
				gc_scale_avg(out, len, o->type, n);
			__atomic_store_n(big_out_seq(f, f->rank, s), s, __ATOMIC_RELEASE);
			o->state = 2;
		}
		if (!all_at(f, big_out_seq, s))
			return GCOLL_IN_PROGRESS;
		for (int i = 0; i < n; i++)
			memcpy((char *)o->rb + (off + gc_ck_off(&k, i)) * es, big_out(f, i, s),
			       gc_ck_len(&k, i) * es);
		__atomic_store_n(done_word(f, f->rank), s, __ATOMIC_RELEASE);
		f->rd = s;
		o->ci++;
		o->state = 0;
	}
	GC_TRACE("rank %d: fast all-reduce %llu..%llu done (%zu bytes)", f->rank,
		 (unsigned long long)o->seq, (unsigned long long)(o->seq + o->nchunks - 1), o->bytes);
	return GCOLL_SUCCESS;
}

static gcoll_result_t fast_step(struct gcoll_comm *c, struct gc_fastop *o)
{
	return o->nchunks ? big_step(c, o) : small_step(c, o);
}

/* The request engine's progress for a fast-path request (its progress
 * function, set by fast_issue). */
static gcoll_result_t fast_progress(struct gcoll_request *r)
{
	struct gcoll_comm *c = r->comm;
	gcoll_result_t rc = fast_step(c, &r->fop);
	uint64_t now;

	if (rc != GCOLL_IN_PROGRESS)
		return rc;
	now = gc_now_ms();
	if (now - c->fast->live_ms >= GC_FAST_LIVE_MS) {
		c->fast->live_ms = now;
		rc = check_peers(c);
		if (rc)
			return rc;
	}
	return GCOLL_IN_PROGRESS;
}

static bool tp_busy(struct gc_transport *tp)
{
	for (struct gcoll_comm *o = tp->comms; o; o = o->tp_next)
		if (o->reqs)
			return true;
	return false;
}

static void fast_fail(struct gcoll_comm *c, gcoll_result_t rc)
{
	if (!c->async_err)
		c->async_err = rc;
}

/* A blocking all-reduce with no other fast op pending: spin right here. */
static gcoll_result_t fast_blocking(struct gcoll_comm *c, struct gc_fastop *o)
{
	uint64_t deadline = c->timeout_ms ? gc_now_ms() + c->timeout_ms : UINT64_MAX;
	int idle = 0, ye = c->tp->yield_every;
	gcoll_result_t rc;

	for (unsigned spins = 1;; spins++) {
		rc = fast_step(c, o);
		if (rc != GCOLL_IN_PROGRESS)
			return rc;
		if (!(spins & 63)) {
			uint64_t now = gc_now_ms();

			/* requests of other operations still need the fabric */
			if (tp_busy(c->tp))
				gc_progress_all(c->tp);
			if (c->tp->fatal) {
				fast_fail(c, c->tp->fatal);
				return c->tp->fatal;
			}
			if (now - c->fast->live_ms >= GC_FAST_LIVE_MS) {
				c->fast->live_ms = now;
				rc = check_peers(c);
				if (rc) {
					fast_fail(c, rc);
					return rc;
				}
			}
			if (now > deadline) {
				rc = gc_err(GCOLL_ERR_TIMEOUT,
					    "rank %d: shared-memory all-reduce (sequence %llu) did not complete within %llu ms",
					    c->rank, (unsigned long long)o->seq,
					    (unsigned long long)c->timeout_ms);
				fast_fail(c, rc);
				return rc;
			}
		}
		/* more ranks than cores: do not spin on a peer's time slice.
		 * After 4096 fruitless polls the peer is most likely not
		 * running at all (no core of its own, or it shares ours - as
		 * ranks do at start until the load balancer moves them): from
		 * then on yield on every poll */
		if (ye > 0 && ++idle >= (spins > 4096 ? 1 : ye)) {
			sched_yield();
			idle = 0;
		} else {
#if defined(__x86_64__) || defined(__i386__)
			__builtin_ia32_pause();
#endif
		}
	}
}

/* Issue an all-reduce on the fast path: in the small slots, or in chunks. */
static gcoll_result_t fast_issue(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req, bool chunked)
{
	struct gc_fast *f = c->fast;
	struct gc_fastop o = { .sb = sendbuf, .rb = recvbuf, .count = count, .bytes = bytes,
			       .type = type, .op = op };
	struct gcoll_request *r;
	bool direct;

	/* each chunk takes a sequence number: the first is o.seq */
	if (chunked)
		o.nchunks = (bytes + f->chunk - 1) / f->chunk;
	/* nothing queued before it and plain host memory: no request at all */
	direct = !req && !gc_in_group() && !c->staged && f->rd == f->issued;
	r = direct ? NULL : gc_req_new(c);
	if (!direct && !r)
		return GCOLL_ERR_NOMEM;
	o.seq = f->issued + 1;
	f->issued += o.nchunks ? o.nchunks : 1;
	if (direct)
		return fast_blocking(c, &o);
	o.sb = gc_stage(r, sendbuf, bytes, true, false);
	o.rb = gc_stage(r, recvbuf, bytes, false, true);
	r->progress = fast_progress;
	r->fop = o;
	return gc_submit(r, req);
}

gcoll_result_t gc_fast_allreduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req)
{
	return fast_issue(c, sendbuf, recvbuf, count, bytes, type, op, req, bytes > c->fast->max);
}

/* ------------------------------------------------ chunks or fabric?
 *
 * Which road is quicker above GCOLL_SHM_BIG_MAX depends on the host more
 * than on the size: on this 2-core machine the chunks ran 1.3-1.7x the ring
 * over the shm provider at 4-64 MiB with 2 ranks in one state of the host,
 * and 0.5-0.6x in another, which can begin in the middle of a run
 * (Documentation/collectives.md, "The machine's two states").  So rank 0
 * measures both per power-of-two size class: each road GC_ADAPT_WARM times
 * first (the first sample of each dropped: it pays for first touches),
 * then the cheaper one (a running average of ns per KiB), trying the other
 * every `every` ops - GC_ADAPT_PROBE_MIN after a change of mind, doubling
 * up to GC_ADAPT_PROBE_MAX while the probes confirm the pick.  Its pick
 * reaches every rank through one small fast-path all-reduce before the
 * operation, so all ranks take the same road with no other agreement.
 * Only blocking all-reduces outside a group choose: a nonblocking one
 * would have to build its schedule before the pick arrives, so those keep
 * to the fabric. */

int gc_adapt_pick(struct gc_adapt *a)
{
	if (a->seen[GC_VIA_FABRIC] < GC_ADAPT_WARM || a->seen[GC_VIA_CHUNKS] < GC_ADAPT_WARM)
		return a->seen[GC_VIA_CHUNKS] <= a->seen[GC_VIA_FABRIC] ? GC_VIA_CHUNKS
									 : GC_VIA_FABRIC;
	if (++a->since >= a->every) {
		a->since = 0;
		return !a->best;
	}
	return a->best;
}

/* Rank 0: one operation of the class took `cost` ns per KiB on road via.
 * True when the class's pick changed. */
bool gc_adapt_record(struct gc_adapt *a, int via, uint64_t cost)
{
	int best;

	if (a->seen[via] < UINT32_MAX)
		a->seen[via]++;
	if (a->seen[via] == 1)
		return false;
	a->cost[via] = a->seen[via] == 2 ? cost : (a->cost[via] + cost) / 2;
	if (a->seen[GC_VIA_FABRIC] < GC_ADAPT_WARM || a->seen[GC_VIA_CHUNKS] < GC_ADAPT_WARM)
		return false;
	best = a->cost[GC_VIA_CHUNKS] < a->cost[GC_VIA_FABRIC] ? GC_VIA_CHUNKS : GC_VIA_FABRIC;
	if (!a->every || best != a->best) {
		a->best = best;
		a->every = GC_ADAPT_PROBE_MIN;
		a->since = 0;
		return true;
	}
	if (via != best && a->every < GC_ADAPT_PROBE_MAX)
		a->every *= 2;              /* a probe confirmed the pick */
	return false;
}

bool gc_fast_adapt_ok(struct gcoll_comm *c, size_t bytes, gcoll_request_t *req)
{
	struct gc_fast *f = c->fast;

	/* every rank decides alike: the limits are rank 0's, and a collective
	 * is blocking (or in a group) on every rank or on none */
	return f && !req && !gc_in_group() && c->algo == GC_ALGO_AUTO && bytes > f->bigmax &&
	       bytes <= f->adapt_max;
}

static const char *via_name(int via)
{
	return via == GC_VIA_CHUNKS ? "the shared segment in chunks" : "the fabric";
}

/* The road of one adaptive all-reduce of `bytes` bytes: rank 0 picks it
 * and every rank learns the pick through one small fast-path all-reduce.
 * algo.c then runs the all-reduce on that road (the fabric's schedule is
 * the algorithms', which this file does not call). */
gcoll_result_t gc_fast_adapt_pick(struct gcoll_comm *c, size_t bytes, int *via)
{
	struct gc_fast *f = c->fast;
	int cls = 63 - __builtin_clzll((unsigned long long)bytes);
	uint64_t mine = 0, pick = 0;
	gcoll_result_t rc;

	if (c->rank == 0)
		mine = 1 + (uint64_t)gc_adapt_pick(&f->adapt[cls]);
	rc = fast_issue(c, &mine, &pick, 1, sizeof(pick), GCOLL_UINT64, GCOLL_SUM, NULL, false);
	if (rc)
		return rc;
	if (pick != 1 + GC_VIA_FABRIC && pick != 1 + GC_VIA_CHUNKS) {
		rc = gc_err(GCOLL_ERR_MISMATCH,
			    "rank %d: rank 0's choice of road for a %zu-byte all-reduce arrived as %llu: do all ranks call it with the same count?",
			    c->rank, bytes, (unsigned long long)pick);
		fast_fail(c, rc);
		return rc;
	}
	*via = (int)pick - 1;
	f->via[*via]++;
	return GCOLL_SUCCESS;
}

/* A blocking all-reduce through the shared segment in chunks. */
gcoll_result_t gc_fast_chunks(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, size_t bytes, gcoll_datatype_t type,
			      gcoll_redop_t op)
{
	return fast_issue(c, sendbuf, recvbuf, count, bytes, type, op, NULL, true);
}

/* Rank 0: an adaptive all-reduce of `bytes` bytes took ns on road via. */
void gc_fast_adapt_done(struct gcoll_comm *c, size_t bytes, int via, uint64_t ns)
{
	int cls = 63 - __builtin_clzll((unsigned long long)bytes);
	struct gc_adapt *a = &c->fast->adapt[cls];

	if (gc_adapt_record(a, via, ns * 1024 / bytes))
		GC_INFO("rank 0: all-reduces of %llu-%llu bytes now take %s (%llu against %llu ns per KiB)",
			1ull << cls, (2ull << cls) - 1, via_name(a->best),
			(unsigned long long)a->cost[a->best], (unsigned long long)a->cost[!a->best]);
}
