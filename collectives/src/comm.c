/* SPDX-License-Identifier: MIT */
/*
 * Communicators: creation (bootstrap, transport choice, address exchange),
 * split, teardown (destroy, abort) and tunables from the environment.  The
 * registry of live communicators is registry.c's.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gc_algo.h"
#include "gc_bootstrap.h"
#include "gc_comm.h"
#include "gc_fast.h"
#include "gc_registry.h"
#include "gc_stage.h"


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

/* Free a communicator's own memory (what comm_alloc allocated). */
static void comm_free(struct gcoll_comm *c)
{
	gc_fast_free(c->fast);
	free(c->tpeer);
	free(c->send_seq);
	free(c->recv_seq);
	free(c);
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
		comm_free(c);
		return NULL;
	}
	comm_env(c);
	return c;
}

static void comm_link(struct gcoll_comm *c, struct gc_transport *tp)
{
	/* shm moves large tagged messages with a single copy (CMA) itself:
	 * eager saves the control round trip there.  Up to 1 MiB, a ring
	 * chunk at the default segment size: against 256 KiB, 2 ranks ran
	 * 4-64 MiB all-reduces up to 1.6x faster (bench/run.sh BENCH_AB) */
	if (!getenv("GCOLL_EAGER_MAX") && !strcmp(tp->prov_name, "shm"))
		c->eager_max = 1 << 20;
	c->tp = tp;
	c->tp_next = tp->comms;
	tp->comms = c;
	gc_registry_add(c);
}

struct addr_blob {
	int32_t status;
	int32_t nrails;
	uint32_t addrlen;
	uint32_t pad;
	uint64_t hello_key;     /* rank 0's is the job's key for connection hellos */
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
	mine->hello_key = gc_random_u64();
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

/* gcoll_comm_init_rank, step by step.  The steps that talk to the other
 * ranks (bootstrap rounds) run in the same order on every rank. */
struct init_state {
	int rank, nranks;
	uint64_t tmo;               /* bootstrap and connection timeout */
	struct gc_boot *b;
	struct gcoll_comm *c;       /* the communicator being built */
	struct gc_transport *tp;
	struct addr_blob mine, *all;/* every rank's transport status, addresses */
	bool same;                  /* every rank is on this host */
	int local;                  /* ranks on this host */
};

static gcoll_result_t init_check_args(gcoll_comm_t *comm, int nranks, int rank)
{
	static const char fn[] = "gcoll_comm_init_rank";

	if (!comm)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
	*comm = NULL;
	if (nranks < 1 || nranks > GC_MAX_RANKS)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: nranks %d out of range [1, %d]", fn,
			      nranks, GC_MAX_RANKS);
	if (rank < 0 || rank >= nranks)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: rank %d out of range [0, %d)", fn, rank,
			      nranks);
	return GCOLL_SUCCESS;
}

/* Bootstrap round: which ranks share this host. */
static gcoll_result_t init_hosts(struct init_state *st)
{
	uint64_t hid, *hids = calloc((size_t)st->nranks, sizeof(*hids));
	gcoll_result_t rc;

	if (!hids)
		return GCOLL_ERR_NOMEM;
	hid = gc_host_id();
	rc = gc_boot_allgather(st->b, &hid, sizeof(hid), hids);
	st->same = true;
	st->local = 0;
	for (int i = 0; !rc && i < st->nranks; i++) {
		st->same = st->same && hids[i] == hid;
		st->local += hids[i] == hid;
	}
	free(hids);
	return rc;
}

/* Bootstrap rounds: open the transport and trade addresses.  GCOLL_PROVIDER
 * if set; else the device's own ports when every rank has one; else shared
 * memory on one host, tcp across hosts. */
static gcoll_result_t init_transport(struct init_state *st)
{
	const char *prov = getenv("GCOLL_PROVIDER");
	gcoll_result_t rc;

	if (!prov || !*prov) {
		rc = tp_exchange(st->b, "gaudi", true, &st->mine, st->all, &st->tp);
		if (rc)
			return rc;
		for (int i = 0; i < st->nranks && st->tp; i++)
			if (st->all[i].status) {
				GC_INFO("rank %d: rank %d has no usable gaudi port, not using %s",
					st->rank, i, GC_PROV_VERBS);
				gc_tp_put(st->tp);
				st->tp = NULL;
			}
		prov = st->tp ? NULL : st->same ? "shm" : "tcp";
	}
	if (prov) {
		if (st->tp)
			gc_tp_put(st->tp);
		st->tp = NULL;
		rc = tp_exchange(st->b, prov, false, &st->mine, st->all, &st->tp);
		if (rc)
			return rc;
	}
	return GCOLL_SUCCESS;
}

/* Every rank opened the same kind of transport. */
static gcoll_result_t init_check_peers(const struct init_state *st)
{
	static const char fn[] = "gcoll_comm_init_rank";
	const struct addr_blob *all = st->all, *mine = &st->mine;

	for (int i = 0; i < st->nranks; i++) {
		if (all[i].status)
			return gc_err(GCOLL_ERR_FABRIC, "%s: rank %d could not open its transport",
				      fn, i);
		if (strcmp(all[i].prov, mine->prov) || all[i].nrails != mine->nrails ||
		    all[i].addrlen != mine->addrlen)
			return gc_err(GCOLL_ERR_MISMATCH,
				      "%s: rank %d uses provider %s with %d rails (address size %u), rank %d uses %s with %d (%u)",
				      fn, i, all[i].prov, all[i].nrails, all[i].addrlen, st->rank,
				      mine->prov, mine->nrails, mine->addrlen);
	}
	return GCOLL_SUCCESS;
}

/* Put every rank's addresses in the transport's address vectors, and
 * choose how often idle polls yield the core. */
static gcoll_result_t init_set_peers(struct init_state *st)
{
	struct gc_transport *tp = st->tp;
	size_t len = (size_t)tp->nrails * tp->addrlen;
	char *addrs = malloc((size_t)st->nranks * len);
	gcoll_result_t rc;
	long ncpu;

	if (!addrs)
		return GCOLL_ERR_NOMEM;
	for (int i = 0; i < st->nranks; i++)
		memcpy(addrs + (size_t)i * len, st->all[i].addr, len);
	rc = gc_tp_set_peers(tp, st->nranks, st->rank, addrs);
	free(addrs);
	if (rc)
		return rc;
	tp->hello_key = st->all[0].hello_key;
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	/* mostly spin like MPI when every rank has a core (yielding now and
	 * then bounds the damage when other load shares the cores); yield on
	 * every idle poll when the host is oversubscribed.  0 = never yield. */
	tp->yield_every = (int)gc_env_u64("GCOLL_YIELD_EVERY",
					  ncpu > 0 && st->local > ncpu ? 1 : 1000);
	return GCOLL_SUCCESS;
}

/* A last bootstrap round as a barrier: nobody sends on the fabric before
 * every rank has its peers in its address vectors (the tcp provider
 * otherwise sees connections from addresses it does not know yet and has to
 * resolve crossing connection attempts).  Then endpoints on the wildcard
 * address connect in rank order. */
static gcoll_result_t init_connect(struct init_state *st)
{
	char one = 1, *ones = malloc((size_t)st->nranks);
	gcoll_result_t rc;

	if (!ones)
		return GCOLL_ERR_NOMEM;
	rc = gc_boot_allgather(st->b, &one, 1, ones);
	free(ones);
	if (rc)
		return rc;
	if (st->tp->ep_info)
		return gc_tp_connect_all(st->tp, st->tmo);
	return GCOLL_SUCCESS;
}

/* The world communicator: context id 1, transport peers in rank order. */
static void init_publish(struct init_state *st, gcoll_comm_t *comm)
{
	struct gcoll_comm *c = st->c;

	for (int i = 0; i < st->nranks; i++)
		c->tpeer[i] = i;
	c->ctx = 1;
	st->tp->next_ctx = 2;
	comm_link(c, st->tp);
	*comm = c;
	st->tp->boot = st->b;
	st->b = NULL;
	st->tp = NULL;
	st->c = NULL;
	GC_INFO("rank %d/%d: communicator ready", st->rank, st->nranks);
}

GC_API gcoll_result_t gcoll_comm_init_rank(gcoll_comm_t *comm, int nranks, gcoll_unique_id id,
					   int rank)
{
	struct init_state st = { .rank = rank, .nranks = nranks };
	gcoll_result_t rc;

	gc_log_init();
	if ((rc = init_check_args(comm, nranks, rank)))
		return rc;
	st.tmo = gc_env_u64("GCOLL_BOOTSTRAP_TIMEOUT_MS", 60000);
	rc = gc_boot_connect(&id, rank, nranks, st.tmo, &st.b);
	if (rc)
		return rc;
	st.all = calloc((size_t)nranks, sizeof(*st.all));
	st.c = comm_alloc(rank, nranks);
	if (!st.all || !st.c)
		rc = GCOLL_ERR_NOMEM;
	if (!rc)
		rc = init_hosts(&st);
	if (!rc)
		rc = init_transport(&st);
	if (!rc)
		rc = init_check_peers(&st);
	if (!rc)
		rc = init_set_peers(&st);
	if (!rc)
		rc = init_connect(&st);
	/* every rank on this host and shm: the fast path's rounds */
	if (!rc && st.same && st.tp->peer_cma && nranks > 1 && nranks <= GC_FAST_MAX_RANKS)
		rc = gc_fast_setup(st.c, st.b);
	if (!rc)
		init_publish(&st, comm);
	gc_boot_close(st.b);
	free(st.all);
	if (st.tp)
		gc_tp_put(st.tp);
	if (st.c)
		comm_free(st.c);
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

	if ((rc = gc_check_common(c, fn)))
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
	/* the algorithm itself, not gcoll_allgather: the handle is checked
	 * already, and the public layer is above this one */
	rc = n == 1 ? gc_algo_local_copy(c, all, &me, sizeof(me), NULL)
		    : gc_algo_allgather(c, &me, all, sizeof(me) / 4, sizeof(me) * (size_t)n,
					GCOLL_INT32, NULL);
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

/* The quiet round's bound: every rank passed the destroy's barrier, so the
 * others are at most a destroy behind (or hold another communicator on the
 * transport, which they may keep as long as they like: then go on). */
#define GC_QUIESCE_MAX_MS	10000

int gc_test_quiesce_delay_ms;

/*
 * The last communicator on @tp goes, cleanly: before the endpoints close,
 * read what peers sent before their last barrier, then wait on the
 * bootstrap sockets, never on the fabric, until every rank has done so.  A
 * connection then never goes down while its peer still reads the fabric.
 * libfabric 2.1's ofi_rxm needs that: when it handles a peer's disconnect
 * with that peer's messages still in the completion queue, it reposts their
 * buffers on the endpoint it has just closed and crashes (fixed upstream
 * by commit 697688386, in no release yet).  A rank that aborted, failed or
 * died closes its socket, and the round ends at once.
 */
static void close_quiesce(struct gc_transport *tp)
{
	uint64_t until = gc_now_ms() + 1000;

	for (int idle = 0; idle < 3 && gc_now_ms() < until;)
		idle = gc_tp_progress(tp) ? 0 : idle + 1;
	if (gc_test_quiesce_delay_ms < 0)
		_exit(0);
	if (gc_test_quiesce_delay_ms)
		usleep((useconds_t)gc_test_quiesce_delay_ms * 1000);
	if (!gc_boot_quiesce(tp->boot, GC_QUIESCE_MAX_MS))
		GC_INFO("rank %d: closing without the last round: a peer went first or went away",
			tp->myrank);
}

static void comm_teardown(struct gcoll_comm *c, gcoll_result_t why, bool clean)
{
	struct gc_transport *tp = c->tp;
	struct gcoll_comm **pp;

	gc_registry_del(c);
	while (c->reqs) {
		struct gcoll_request *r = c->reqs;

		gc_req_fail(r, why);
		gc_req_free(r);
	}
	for (pp = &tp->comms; *pp; pp = &(*pp)->tp_next)
		if (*pp == c) {
			*pp = c->tp_next;
			break;
		}
	if (c->arena_mr)
		gc_mr_free(tp, c->arena_mr);
	free(c->arena);
	c->magic = 0;
	comm_free(c);
	tp->unclean |= !clean;
	if (tp->refcnt == 1) {
		if (tp->boot && !tp->unclean)
			close_quiesce(tp);
		gc_boot_close(tp->boot);
		tp->boot = NULL;
	}
	gc_tp_put(tp);
}

GC_API gcoll_result_t gcoll_comm_destroy(gcoll_comm_t c)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_destroy");

	if (rc)
		return rc;
	/* finish what is in flight, then flush with a barrier so no peer is
	 * still waiting for data our endpoint has not delivered yet */
	for (struct gcoll_request *r = c->reqs; r && !c->async_err; r = r->cnext)
		if (r->rc == GCOLL_IN_PROGRESS && !r->in_group)
			gc_req_wait(r);
	if (!c->async_err && c->nranks > 1) {
		/* the barrier gcoll_barrier would run, with its check of the
		 * transport's state, without calling up into the public layer */
		rc = gc_check_common(c, "gcoll_barrier");
		if (!rc)
			rc = gc_algo_barrier(c, NULL);
	}
	comm_teardown(c, GCOLL_ERR_ABORTED, !rc && !c->async_err);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_abort(gcoll_comm_t c)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_abort");

	if (rc)
		return rc;
	comm_teardown(c, GCOLL_ERR_ABORTED, false);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_get_async_error(gcoll_comm_t c, gcoll_result_t *e)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_get_async_error");

	if (rc)
		return rc;
	if (!e)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_get_async_error: async_error is NULL");
	if (!c->async_err && c->tp)
		gc_progress_all(c->tp);
	*e = c->async_err;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_count(gcoll_comm_t c, int *n)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_count");

	if (rc)
		return rc;
	if (!n)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_count: nranks is NULL");
	*n = c->nranks;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_user_rank(gcoll_comm_t c, int *rank)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_user_rank");

	if (rc)
		return rc;
	if (!rank)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_comm_user_rank: rank is NULL");
	*rank = c->rank;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_set_timeout(gcoll_comm_t c, uint64_t ms)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_set_timeout");

	if (rc)
		return rc;
	c->timeout_ms = ms;
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_comm_transport_info(gcoll_comm_t c, const char **provider,
						int *nrails, int *dmabuf_native, int *rx_cq_data)
{
	gcoll_result_t rc = gc_check_comm(c, "gcoll_comm_transport_info");

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
