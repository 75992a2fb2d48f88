/* SPDX-License-Identifier: MIT */
/* Internal definitions of libgcoll. */
#ifndef GC_INTERNAL_H
#define GC_INTERNAL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "gcoll.h"

#define GC_API __attribute__((visibility("default")))
#define GC_MAX_RAILS 8
#define GC_ADDR_MAX 256
#define GC_MAX_RANKS 4096          /* 12 bits of the tag */
#define GC_RXPOOL 64               /* receives kept posted for FI_RX_CQ_DATA */
#define GC_NSLOTS 65536            /* rendezvous slots (16 bits of imm) */

/* ---- logging (log.c) ---- */
enum { GC_LOG_NONE = 0, GC_LOG_ERR = 1, GC_LOG_INFO = 2, GC_LOG_TRACE = 3 };
/* read and written through gc_log_lvl() / gc_log_init() only: every
 * gcoll_comm_init_rank re-reads GCOLL_DEBUG while other threads may be
 * logging on their own communicators */
extern int gc_log_level;
static inline int gc_log_lvl(void)
{
	return __atomic_load_n(&gc_log_level, __ATOMIC_RELAXED);
}
void gc_log_init(void);
void gc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log an error (always recorded for gcoll_get_last_error) and return r. */
/* > 0: gc_err() logs at INFO level (a failure the caller expects and
 * handles, like probing for a provider) */
extern _Thread_local int gc_err_quiet;
gcoll_result_t gc_err(gcoll_result_t r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A libfabric call `what` failed with ret (< 0): GCOLL_ERR_FABRIC, logged. */
gcoll_result_t gc_fi_err(int ret, const char *what);
#define GC_TRACE(...) do { if (gc_log_lvl() >= GC_LOG_TRACE) gc_log(GC_LOG_TRACE, __VA_ARGS__); } while (0)
#define GC_INFO(...) do { if (gc_log_lvl() >= GC_LOG_INFO) gc_log(GC_LOG_INFO, __VA_ARGS__); } while (0)

uint64_t gc_now_ms(void);
uint64_t gc_now_ns(void);
uint64_t gc_env_u64(const char *name, uint64_t def);
/* len random bytes: getrandom(), or if the kernel cannot give them a hash
 * of the time, pid and a counter (distinct, but guessable) */
void gc_random_fill(void *buf, size_t len);
uint64_t gc_random_u64(void);

/* ---- reduction kernels (reduce.c) ---- */
size_t gc_type_size(gcoll_datatype_t t);
/* dst = a op b; dst may be exactly a or b (never a partial overlap). */
void gc_reduce(void *dst, const void *a, const void *b, size_t count,
	       gcoll_datatype_t t, gcoll_redop_t op);
/* buf /= n (for GCOLL_AVG). */
void gc_scale_avg(void *buf, size_t count, gcoll_datatype_t t, int n);

/* A vector of base * n + rem elements cut into n chunks that differ by at
 * most one element (the first rem chunks have one more): where chunk i
 * starts and how long it is, in elements.  The ring and the fast path's
 * slices cut the same way. */
struct gc_chunks {
	size_t base, rem;
};
static inline size_t gc_ck_off(const struct gc_chunks *k, int i)
{
	return (size_t)i * k->base + ((size_t)i < k->rem ? (size_t)i : k->rem);
}
static inline size_t gc_ck_len(const struct gc_chunks *k, int i)
{
	return k->base + ((size_t)i < k->rem ? 1 : 0);
}

/* ---- bootstrap (bootstrap.c) ---- */
struct gc_boot;
/* Connect to the root, send hello; fails with MISMATCH/VERSION/BOOTSTRAP. */
gcoll_result_t gc_boot_connect(const gcoll_unique_id *id, int rank, int nranks,
			       uint64_t timeout_ms, struct gc_boot **out);
/* All ranks contribute len bytes; out receives nranks*len bytes. */
gcoll_result_t gc_boot_allgather(struct gc_boot *b, const void *in, size_t len,
				 void *out);
bool gc_boot_quiesce(struct gc_boot *b, uint64_t max_ms);
void gc_boot_close(struct gc_boot *b);
uint64_t gc_host_id(void);

/* ---- transport (transport.c) ---- */
struct gc_mr {
	struct gc_mr *next;
	uintptr_t base;
	size_t len;
	struct fid_mr *mr;
	void *desc;
	uint64_t key;
	uint64_t access;   /* FI_* access bits it was registered with */
	int pinned;        /* user registration: never evicted */
	int users;         /* in-flight transfers using it */
	uint64_t last_use;
	/* a registration for every role (gc_mr_reg): registered for sends
	 * only; its remote-writable twin is added when the range is first
	 * received into (gc_mr_role), from the same memory (dma-buf: its own
	 * duplicate of the fd) */
	struct gc_mr *twin;
	int dmabuf_fd;     /* owned duplicate, or -1 */
	uint64_t dmabuf_off;
};

struct gc_rxbuf {
	int type;          /* GC_CTX_RXPOOL */
	int rail;
	char data[8];
};

struct gc_rail {
	struct fid_ep *ep;
	struct fid_cq *cq;
	struct fid_av *av;
	fi_addr_t *peers;
	struct gc_rxbuf pool[GC_RXPOOL];
	int pool_posted;      /* pool receives the provider holds */
	uint64_t pool_retry;  /* pool entries whose repost got -FI_EAGAIN */
};

struct gc_transport {
	int refcnt;
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	int nrails;
	struct gc_rail rails[GC_MAX_RAILS];
	size_t addrlen;
	char addr[GC_MAX_RAILS][GC_ADDR_MAX];
	int npeers;
	int myrank;           /* rank in the world communicator */
	bool rx_cq_data;      /* FI_RX_CQ_DATA: writes consume a posted receive */
	bool mr_local, mr_virt, mr_prov_key, dmabuf_native;
	/* peers copy registered memory through its CPU mapping from their own
	 * process (shm's CMA, process_vm_readv/writev) */
	bool peer_cma;
	bool ctrl_inject;     /* control entries fit the inject size */
	/* verbs: endpoints listen on the wildcard address (ep_info); rail i
	 * publishes ident[i % nident] */
	struct fi_info *ep_info;
	struct sockaddr_in ident[GC_MAX_RAILS];
	int nident;
	uint64_t next_key;
	char prov_name[32];
	size_t max_msg;
	/* registration cache */
	struct gc_mr *cache;
	int cache_n, cache_max;
	/* rendezvous slots (receiver side) */
	struct gc_xfer **slots;
	uint32_t slot_hint;
	uint32_t slots_used;
	/* per slot: generation, the check byte of its owner; starts random,
	 * bumped on every allocation */
	uint8_t *slot_gen;
	uint64_t stray_writes;/* remote writes dropped by the immediate check */
	/* connection hellos (gc_tp_connect_all) */
	uint64_t hello_key;   /* the job's secret, from rank 0 over the bootstrap */
	struct gc_conn_hello *hellos;  /* rails x peers; freed after the endpoints */
	struct gc_mr *hello_mr;
	uint64_t stray_hellos;/* hellos dropped: not from the expected peer */
	/* contexts whose owners died with operations still posted */
	struct gc_xfer *zombies;
	uint16_t next_ctx;
	gcoll_result_t fatal;       /* transport broken: every comm fails with it */
	bool closing;               /* endpoints are being closed: no reposts */
	struct gcoll_comm *comms;   /* communicators sharing this transport */
	int yield_every;            /* idle polls between sched_yield() calls */
	/* which instance of the domain's RDMA device this is (the inode of
	 * its uverbs device in sysfs; 0: not an RDMA device): another one
	 * later means it was reset or removed (gc_tp_explain_failure) */
	unsigned long dev_ino;
	/* the world communicator's bootstrap sockets, kept for the closing
	 * round (comm.c, close_quiesce()); set when a communicator on this
	 * transport was aborted or failed: then nobody waits on it */
	struct gc_boot *boot;
	bool unclean;
};

enum gc_ctx_type {
	GC_CTX_EAGER_SEND = 1,
	GC_CTX_EAGER_RECV,
	GC_CTX_CTRL_SEND,
	GC_CTX_CTRL_RECV,
	GC_CTX_WRITE,
	GC_CTX_RXPOOL,
	GC_CTX_HELLO,
};

/* One connection hello, sent to a higher rank or expected from a lower
 * one: the context and the buffer of its operation. */
struct gc_conn_hello {
	int type;          /* GC_CTX_HELLO */
	bool posted, done;
	uint64_t token;    /* gc_hello_token(key, from, to, rail) */
};

struct gc_xfer;
struct gc_ctx {
	int type;
	struct gc_xfer *x;
};

/* Control entry the receiver puts in the sender's mailbox. */
struct gc_ctrl {
	uint64_t addr;     /* remote address (or offset without FI_MR_VIRT_ADDR) */
	uint64_t key;
	uint64_t len;
	uint32_t seq;      /* sequence of the message it answers */
	uint32_t slot;     /* receiver's rendezvous slot, echoed in the imm */
	uint32_t wsize;    /* bytes per RDMA write segment */
	uint32_t chk;      /* check byte every write's immediate must carry */
};

enum gc_xstate { GX_IDLE = 0, GX_ACTIVE, GX_DONE, GX_FAILED };

struct gc_xfer {
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
	struct gc_xfer *znext;
	struct gcoll_comm *comm;
};

/* tags: [61:60] kind, [59:44] comm ctx, [43:32] src rank, [31:0] seq */
#define GC_TAG_DATA 1ULL
#define GC_TAG_CTRL 2ULL
#define GC_TAG_HELLO 3ULL   /* gc_tp_connect_all() */
static inline uint64_t gc_tag(uint64_t kind, uint16_t ctx, int src, uint32_t seq)
{
	return (kind << 60) | ((uint64_t)ctx << 44) |
	       ((uint64_t)(src & 0xfff) << 32) | seq;
}
/* immediate data of a rendezvous write: [31:24] check byte of the slot's
 * owner (the slot's generation: it differs from those of the slot's 255
 * previous owners), [23:8] slot, [7:0] segment index modulo 256.  The
 * receiver counts a write only if the check byte is its own and the
 * segment index one it still expects (never a segment twice). */
static inline uint32_t gc_imm(uint32_t chk, uint32_t slot, size_t seg)
{
	return ((chk & 0xff) << 24) | ((slot & 0xffff) << 8) | (seg & 0xff);
}
/* Rendezvous slots of a receiving transfer whose nseg is set (xfer.c). */
gcoll_result_t gc_slot_alloc(struct gc_transport *tp, struct gc_xfer *x);
void gc_slot_free(struct gc_transport *tp, struct gc_xfer *x);
/* A write's immediate as the receiver's progress handles it. */
void gc_handle_imm(struct gc_transport *tp, uint32_t imm);

/* GCOLL_PROVIDER "gaudi": libfabric's verbs;ofi_rxm on a gaudi_N device */
#define GC_PROV_VERBS "verbs;ofi_rxm"
bool gc_prov_is_gaudi(const char *prov);
bool gc_prov_is_verbs(const char *prov);
gcoll_result_t gc_tp_open(int nrails_req, const char *prov, struct gc_transport **out);
/* Hellos carry gc_hello_token(tp->hello_key, ...): set hello_key first. */
gcoll_result_t gc_tp_connect_all(struct gc_transport *tp, uint64_t timeout_ms);
uint64_t gc_hello_token(uint64_t key, int from, int to, int rail);
gcoll_result_t gc_tp_set_peers(struct gc_transport *tp, int npeers, int myrank,
			       const char *addrs /* npeers * nrails * addrlen */);
void gc_tp_put(struct gc_transport *tp);
/* A request failed with @rc: if the transport's RDMA device was reset or
 * removed since it was opened, say so ("device reset: ..."). */
void gc_tp_explain_failure(struct gc_transport *tp, int rank, gcoll_result_t rc);
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

/* Access a registration gets: only what the buffer's role needs.  Sources
 * of sends and RDMA writes get no remote access at all; receive targets get
 * remote write (rendezvous) but never remote read; the sender's control
 * mailbox only FI_RECV.  User, scratch and dma-buf registrations serve
 * both roles with two registrations: GC_ACC_SRC from the start, GC_ACC_DST
 * (the twin) once the range is received into; a buffer that is only sent
 * from is never remote-writable. */
#define GC_ACC_SRC (FI_SEND | FI_WRITE | FI_READ)
#define GC_ACC_DST (FI_RECV | FI_REMOTE_WRITE)
#define GC_ACC_MAILBOX FI_RECV
/* Find (or make and cache) a registration covering [buf, buf+len) with
 * exactly access, or the registration for that role of a pinned one. */
gcoll_result_t gc_mr_lookup(struct gc_transport *tp, const void *buf, size_t len,
			    uint64_t access, struct gc_mr **out);
/* A registration for every role (user, scratch, dma-buf): GC_ACC_SRC now,
 * the twin later (gc_mr_role).  A dma-buf fd is duplicated and kept. */
gcoll_result_t gc_mr_reg(struct gc_transport *tp, void *buf, size_t len,
			 int dmabuf_fd, uint64_t dmabuf_off, struct gc_mr **out);
/* The registration of m's range for access (m itself, or its twin,
 * registered on first use), with a user taken; GCOLL_ERR_INVALID_USAGE if
 * neither can have it. */
gcoll_result_t gc_mr_role(struct gc_transport *tp, struct gc_mr *m, uint64_t access,
			  struct gc_mr **out);
/* Transfers using m or its twin. */
int gc_mr_users(const struct gc_mr *m);
/* Register host memory, or a dma-buf whose CPU mapping starts at buf: 0
 * or a negative libfabric error, nothing logged (mr.c only builds these). */
int gc_mr_reg_host(struct gc_transport *tp, void *buf, size_t len, uint64_t access,
		   struct fid_mr **out);
int gc_mr_reg_dmabuf(struct gc_transport *tp, int fd, uint64_t off, void *buf, size_t len,
		     uint64_t access, struct fid_mr **out);
gcoll_result_t gc_mr_reg_access(struct gc_transport *tp, void *buf, size_t len,
				int dmabuf_fd, uint64_t dmabuf_off, uint64_t access,
				struct gc_mr **out);
/* The access a transfer's buffer is registered with. */
uint64_t gc_xfer_access(const struct gc_xfer *x);
void gc_mr_free(struct gc_transport *tp, struct gc_mr *m);
void gc_mr_unpin(struct gc_transport *tp, struct gc_mr *m);
void gc_mr_pin(struct gc_transport *tp, struct gc_mr *m);
/* A rail's pool of remote-CQ-data receives (transport.c): put a consumed
 * entry back, and retry those that could not be. */
void gc_rail_repost(struct gc_transport *tp, struct gc_rxbuf *b);
void gc_rail_retry(struct gc_transport *tp, struct gc_rail *r);
/* Unlink a zombie transfer from the transport and free it. */
void gc_tp_free_zombie(struct gc_transport *tp, struct gc_xfer *x);
/* Tests only: the next n pool reposts fail with -FI_EIO. */
extern int gc_test_fail_pool_posts;

/* ---- schedules and requests (sched.c) ---- */
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

/* A user registration (mem.c).  Staged dma-bufs keep a registered host
 * bounce buffer; operations on addresses inside [va, va+len) run on the
 * bounce buffer with copies before (inputs) and after (outputs). */
struct gcoll_mem {
	struct gcoll_comm *comm;
	struct gc_mr *mr;
	int dmabuf;
	bool staged;
	void *va, *host;
	size_t len;
	struct gcoll_mem *next;     /* comm's list of staged regions */
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

/* ---- dma-buf staging (stage.c) ---- */
/* The staged region holding [p, p+len), or NULL. */
struct gcoll_mem *gc_stage_find(struct gcoll_comm *c, const void *p, size_t len);
/* If [buf, buf+len) lies in a staged dma-buf region, the matching address
 * in its bounce buffer (copies queued on r); else buf. */
void *gc_stage(struct gcoll_request *r, const void *buf, size_t len, bool in, bool out);
/* Run n queued copies. */
void gc_stage_copy(const struct gc_copy *cp, int n);

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

/* ---- algorithms (algo.c) ---- */
/* Build the request of one collective from checked arguments (bytes: the
 * whole buffer's size, as the entry point computed it) and gc_submit() it.
 * Communicators of one rank use gc_algo_local_copy(). */
gcoll_result_t gc_algo_local_copy(struct gcoll_comm *c, void *dst, const void *src,
				  size_t bytes, gcoll_request_t *req);
gcoll_result_t gc_algo_allreduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req);
gcoll_result_t gc_algo_reduce_scatter(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				      size_t rcount, size_t bytes, gcoll_datatype_t type,
				      gcoll_redop_t op, gcoll_request_t *req);
gcoll_result_t gc_algo_allgather(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t scount, size_t bytes, gcoll_datatype_t type,
				 gcoll_request_t *req);
gcoll_result_t gc_algo_broadcast(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t bytes, gcoll_datatype_t type, int root,
				 gcoll_request_t *req);
gcoll_result_t gc_algo_reduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, size_t bytes, gcoll_datatype_t type,
			      gcoll_redop_t op, int root, gcoll_request_t *req);
gcoll_result_t gc_algo_alltoall(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				size_t bytes, gcoll_datatype_t type, gcoll_request_t *req);
gcoll_result_t gc_algo_barrier(struct gcoll_comm *c, gcoll_request_t *req);
/* kind 0 = send, 1 = recv */
gcoll_result_t gc_algo_p2p(struct gcoll_comm *c, int kind, void *buf, size_t bytes,
			   gcoll_datatype_t type, int peer, gcoll_request_t *req);

/* ---- shared-memory fast path (fast.c) ---- */
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
/* a gcoll_group_start is open on this thread */
bool gc_in_group(void);

/* ---- the registry of live communicators (registry.c) ---- */
void gc_registry_add(struct gcoll_comm *c);
void gc_registry_del(struct gcoll_comm *c);
/* comm is a live communicator (in the registry) */
gcoll_result_t gc_check_comm(struct gcoll_comm *c, const char *fn);
/* ... and not in error state */
gcoll_result_t gc_check_common(struct gcoll_comm *c, const char *fn);

/* ---- communicators (comm.c) ---- */

/* What each rank contributes to gcoll_comm_split (comm.c). */
struct split_info {
	int32_t color, key, rank;
	uint32_t next_ctx;
};
/* Check every rank's contribution before it is used as an index. */
gcoll_result_t gc_split_check(const struct split_info *all, int n);
/* Tests only: added to this rank's rank in its split contribution. */
extern int gc_test_split_forge;
/* tests: a rank's closing round starts this late; < 0: the rank exits
 * instead, as one that dies between its last barrier and the round */
extern int gc_test_quiesce_delay_ms;

#define GC_COMM_MAGIC 0x67636f6dU
enum { GC_ALGO_AUTO = 0, GC_ALGO_RING, GC_ALGO_RD, GC_ALGO_TREE };

#endif
