/* SPDX-License-Identifier: MIT */
/* The shared-memory fast path for all-reduces on one host (fast.c). */
#ifndef GC_FAST_H
#define GC_FAST_H

#include "gc_sched.h"

struct gc_boot;

#define GC_FAST_MAX 4096            /* largest all-reduce it takes (bytes) */
#define GC_FAST_MAX_RANKS 64

/* Above GCOLL_SHM_BIG_MAX and up to GCOLL_SHM_ADAPT_MAX, a blocking
 * all-reduce takes the road that has been quicker for its size class, as
 * rank 0 measures it (fast.c): the chunks through the shared segment, or
 * the fabric's schedule (the ring over the shm provider). */
enum { GC_VIA_FABRIC, GC_VIA_CHUNKS };
#define GC_ADAPT_CLASSES 64          /* power-of-two size classes */
struct gc_adapt {                    /* rank 0's view of one size class */
	uint64_t cost[2];            /* ns per KiB, running average per road */
	uint32_t seen[2];            /* samples per road (the first is dropped) */
	uint32_t since, every;       /* ops since the last probe; probe period
				      * (0: no pick yet) */
	int best;                    /* the road taken between probes */
};
int gc_adapt_pick(struct gc_adapt *a);
bool gc_adapt_record(struct gc_adapt *a, int via, uint64_t cost);

struct gc_fast {
	void *map;                  /* the segment: every rank's slots */
	size_t maplen;
	int n, rank;
	int *pidfd;                 /* per rank: pidfd of its process (own: -1) */
	size_t max;                 /* bytes: rank 0's GCOLL_SHM_FAST_MAX */
	size_t bigmax;              /* bytes: rank 0's GCOLL_SHM_BIG_MAX (0: none) */
	size_t big_off, big_slot;   /* chunk slots: where they start, one's length */
	size_t chunk;               /* bytes of one chunk: rank 0's GCOLL_SHM_BIG_CHUNK */
	uint64_t issued;            /* last sequence handed to an op */
	uint64_t wr;                /* last sequence whose input is written */
	uint64_t rd;                /* last sequence reduced (published in done) */
	uint64_t live_ms;           /* last check of the peers' pidfds */
	size_t adapt_max;           /* bytes: rank 0's GCOLL_SHM_ADAPT_MAX (0: none) */
	uint64_t via[2];            /* adaptive all-reduces per road, every rank */
	struct gc_adapt adapt[GC_ADAPT_CLASSES];   /* rank 0 only */
};
/* init: bootstrap rounds that set c->fast up when possible */
gcoll_result_t gc_fast_setup(struct gcoll_comm *c, struct gc_boot *b);
void gc_fast_free(struct gc_fast *f);
bool gc_fast_ok(struct gcoll_comm *c, size_t bytes);
gcoll_result_t gc_fast_allreduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req);
bool gc_fast_adapt_ok(struct gcoll_comm *c, size_t bytes, gcoll_request_t *req);
/* An adaptive all-reduce (algo.c runs it): every rank learns rank 0's
 * road, the chunks run it, rank 0 records how long it took. */
gcoll_result_t gc_fast_adapt_pick(struct gcoll_comm *c, size_t bytes, int *via);
gcoll_result_t gc_fast_chunks(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, size_t bytes, gcoll_datatype_t type,
			      gcoll_redop_t op);
void gc_fast_adapt_done(struct gcoll_comm *c, size_t bytes, int via, uint64_t ns);

#endif
