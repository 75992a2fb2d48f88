/* SPDX-License-Identifier: MIT */
/* Point-to-point transfers (xfer.c): eager messages, the rendezvous
 * protocol and its slots, completion progress.  The communicator's state
 * is defined here, at the lowest layer that reads it: the transfers need
 * its peers, context id and sizes; the layers above add the fields they
 * own (requests, staged regions, the fast path), as pointers. */
#ifndef GC_XFER_H
#define GC_XFER_H

#include "gc_transport.h"

struct gcoll_request;
struct gcoll_mem;
struct gc_fast;

struct gc_xfer;
struct gc_ctx {
	int type;
	struct gc_xfer *x;
};

enum gc_xstate { GX_IDLE = 0, GX_ACTIVE, GX_DONE, GX_FAILED };

struct gc_xfer {
	/* first: the transport frees a zombie transfer through it */
	struct gc_zombie zombie;
	int kind;            /* 0 = send, 1 = recv */
	int peer;            /* comm rank */
	void *buf;
	size_t len;
	uint32_t seq;
	int rail;            /* rail of eager/control traffic */
	bool rndv;
	int state;
	gcoll_result_t err;
	struct gc_mr *mr;    /* registration in use (users++), or NULL */
	struct gc_mr *own_mr;/* preset registration (scratch) */
	int inflight;        /* provider operations still holding our contexts */
	bool posted;         /* eager op / ctrl op posted */
	bool ctrl_ready;     /* sender: control entry arrived */
	struct gc_ctrl ctrl;
	uint32_t slot;
	uint8_t chk;         /* receiver: check byte its writes must carry */
	bool has_slot;
	size_t nseg, seg_posted, seg_done;
	/* receiver, while it has a slot: the segments counted, by index
	 * modulo 256 - a bitmap up to 256 segments, else a count each */
	uint64_t seg_seen[4];
	uint32_t *seg_cnt;
	struct gc_ctx c_main, c_write;
	struct gcoll_comm *comm;
};
_Static_assert(offsetof(struct gc_xfer, zombie) == 0, "gc_tp_free_zombie frees it");

/* the communicator's algo tunable (GCOLL_ALGO), read by algo.c and fast.c */
enum { GC_ALGO_AUTO = 0, GC_ALGO_RING, GC_ALGO_RD, GC_ALGO_TREE };

struct gcoll_comm {
	uint32_t magic;
	int rank, nranks;
	struct gc_transport *tp;
	int *tpeer;                 /* comm rank -> transport peer */
	uint16_t ctx;
	uint32_t *send_seq, *recv_seq;
	uint64_t timeout_ms;
	gcoll_result_t async_err;
	bool aborted;
	struct gcoll_request *reqs;
	/* scratch arena */
	void *arena;
	size_t arena_slot_len;
	int arena_nslots;
	uint32_t arena_busy;
	struct gc_mr *arena_mr;
	/* tunables */
	int algo;
	size_t ring_thr, segsize, eager_max, wsize;
	int depth;
	uint32_t split_count;
	struct gcoll_comm *tp_next;
	struct gcoll_comm *reg_next;
	struct gcoll_mem *staged;
	struct gc_fast *fast;       /* shared-memory fast path, or NULL */
};

/* Rendezvous slots of a receiving transfer whose nseg is set (xfer.c). */
gcoll_result_t gc_slot_alloc(struct gc_transport *tp, struct gc_xfer *x);
void gc_slot_free(struct gc_transport *tp, struct gc_xfer *x);
/* A write's immediate as the receiver's progress handles it. */
void gc_handle_imm(struct gc_transport *tp, uint32_t imm);

/* Poll every rail's CQ once; returns number of completions handled. */
int gc_tp_progress(struct gc_transport *tp);
/* Start a transfer (posts what can be posted).  Returns error on failure. */
gcoll_result_t gc_xfer_start(struct gcoll_comm *c, struct gc_xfer *x);
/* Advance a started transfer (post pending writes / ctrl). */
gcoll_result_t gc_xfer_advance(struct gcoll_comm *c, struct gc_xfer *x);
/* Give up on a transfer: cancel posted receives; keep it alive while the
 * provider holds contexts (it becomes a zombie owned by the transport). */
void gc_xfer_cancel(struct gcoll_comm *c, struct gc_xfer *x);
/* Release a finished transfer's resources; returns true if x may be freed. */
bool gc_xfer_release(struct gc_transport *tp, struct gc_xfer *x);
void gc_tp_adopt_zombie(struct gc_transport *tp, struct gc_xfer *x);
/* The access a transfer's buffer is registered with. */
uint64_t gc_xfer_access(const struct gc_xfer *x);

#endif
