/* SPDX-License-Identifier: MIT */
/* Schedules and requests (sched.c): building phases of transfers and
 * actions, running them, deadlines, test and wait, groups.  A request also
 * carries the staging copies (stage.c, same layer) and the op of a
 * fast-path request (fast.c, above), which sets its progress function. */
#ifndef GC_SCHED_H
#define GC_SCHED_H

#include "gc_xfer.h"

enum gc_act_kind { GC_ACT_REDUCE = 1, GC_ACT_COPY, GC_ACT_AVG };
struct gc_action {
	int kind;
	void *dst;
	const void *a, *b;
	size_t count;      /* elements (bytes for COPY) */
};

struct gc_phase {
	int x0, nx;        /* range in sched->xfers */
	int a0, na;        /* range in sched->acts */
};

struct gc_sched {
	struct gc_sched *next;      /* in the comm's active list */
	struct gcoll_request *req;
	int nphase, cur;
	int nx, capx, na, capa, capp;
	struct gc_phase *phases;
	struct gc_xfer **xfers;
	struct gc_action *acts;
	gcoll_datatype_t type;
	gcoll_redop_t op;
	void *scratch;
	size_t scratch_len;
	int arena_slot;             /* -1: private scratch */
	struct gc_mr *scratch_mr;
	bool started, done;
	gcoll_result_t rc;
};

struct gc_copy {
	void *dst;
	const void *src;
	size_t len;
};

/* A fast-path all-reduce (fast.c) */
struct gc_fastop {
	uint64_t seq;
	const void *sb;
	void *rb;
	size_t count, bytes;
	gcoll_datatype_t type;
	gcoll_redop_t op;
	int state;                  /* 0: input not written, 1: written, 2: small:
				     * done; chunked: this chunk's slice reduced */
	size_t nchunks, ci;         /* chunked (large) op: chunks, and the current one */
};

struct gcoll_request {
	struct gcoll_comm *comm;
	/* advances the request: IN_PROGRESS, SUCCESS or an error; gc_req_new
	 * sets the schedules' own, the fast path its (then fop is its op) */
	gcoll_result_t (*progress)(struct gcoll_request *r);
	struct gc_fastop fop;
	struct gc_copy *pre, *post; /* dma-buf staging copies */
	int npre, npost;
	struct gc_sched **s;
	int ns, next_start, ndone, depth;
	uint64_t deadline;
	gcoll_result_t rc;
	bool user;                  /* the user holds a handle */
	bool in_group;              /* waiting for group_end to start */
	struct gcoll_request *gnext;
	struct gcoll_request *cnext; /* comm's list of live requests */
};

/* Scratch references: pointers into a schedule's scratch are built before
 * the scratch exists, so they are encoded in a non-canonical address range
 * and resolved when the schedule starts. */
#define GC_SCR_TAG 0xf000000000000000ull
#define GC_SCR_MASK 0xf000000000000000ull
static inline void *SCR(size_t off)
{
	return (void *)(uintptr_t)(GC_SCR_TAG | off);
}
static inline void *gc_scr_resolve(struct gc_sched *s, const void *p)
{
	uintptr_t v = (uintptr_t)p;

	if ((v & GC_SCR_MASK) == GC_SCR_TAG)
		return (char *)s->scratch + (v & ~GC_SCR_MASK);
	return (void *)v;
}
static inline bool gc_is_scr(const void *p)
{
	return ((uintptr_t)p & GC_SCR_MASK) == GC_SCR_TAG;
}
/* Offset a (possibly scratch) pointer. */
static inline void *PADD(const void *p, size_t off)
{
	return (void *)((uintptr_t)p + off);
}

/* Building a schedule: gc_phase() opens a phase; transfers and actions go
 * into the last phase.  All return 0, or -1 when out of memory. */
struct gc_sched *gc_sched_new(gcoll_datatype_t t, gcoll_redop_t op);
int gc_phase(struct gc_sched *s);
/* kind 0 = send, 1 = recv; takes the peer's next sequence number */
int gc_add_xfer(struct gcoll_comm *c, struct gc_sched *s, int kind, int peer,
		const void *buf, size_t len);
#define SEND(c, s, peer, buf, len) gc_add_xfer(c, s, 0, peer, buf, len)
#define RECV(c, s, peer, buf, len) gc_add_xfer(c, s, 1, peer, buf, len)
int gc_act(struct gc_sched *s, int kind, void *dst, const void *a, const void *b,
	   size_t count);

/* Requests */
struct gcoll_request *gc_req_new(struct gcoll_comm *c);
int gc_req_add(struct gcoll_request *r, struct gc_sched *s);
/* A new schedule added to r (its next slice); NULL when out of memory. */
struct gc_sched *gc_req_sched(struct gcoll_request *r, gcoll_datatype_t t, gcoll_redop_t op);
/* Start a built request (or queue it in the open group); wait for it and
 * free it if req is NULL, else hand it to the user. */
gcoll_result_t gc_submit(struct gcoll_request *r, gcoll_request_t *req);
/* Free a request that failed to build; returns GCOLL_ERR_NOMEM. */
gcoll_result_t gc_build_fail(struct gcoll_request *r);
void gc_req_free(struct gcoll_request *r);
void gc_req_fail(struct gcoll_request *r, gcoll_result_t rc);
/* Progress every communicator on tp; returns completions handled. */
int gc_progress_all(struct gc_transport *tp);
/* One progress round and the deadline check; the request's state. */
gcoll_result_t gc_req_test(struct gcoll_request *r);
gcoll_result_t gc_req_wait(struct gcoll_request *r);
/* gcoll_group_start / gcoll_group_end */
gcoll_result_t gc_group_open(void);
gcoll_result_t gc_group_close(void);

/* a gcoll_group_start is open on this thread */
bool gc_in_group(void);

#endif
