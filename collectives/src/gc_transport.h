/* SPDX-License-Identifier: MIT */
/* The libfabric transport (transport.c): fabric, domain, rails and their
 * receive pools, the peers' addresses, connecting them; and the wire
 * format of tags and immediates every layer above uses. */
#ifndef GC_TRANSPORT_H
#define GC_TRANSPORT_H

#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

#include "gc_util.h"
#include "gc_mr.h"

#define GC_MAX_RAILS 8
#define GC_ADDR_MAX 256
#define GC_RXPOOL 64               /* receives kept posted for FI_RX_CQ_DATA */
#define GC_NSLOTS 65536            /* rendezvous slots (16 bits of imm) */

struct gc_boot;
struct gc_xfer;
struct gcoll_comm;

/* A transfer whose owner gave up on it while the provider still holds its
 * contexts (xfer.c).  The transport keeps it, linked through this first
 * member, and frees it once its endpoints are closed; it needs to know
 * nothing else of a transfer. */
struct gc_zombie {
	struct gc_zombie *next;
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
	struct gc_zombie *zombies;
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

/* A rail's pool of remote-CQ-data receives (transport.c): put a consumed
 * entry back, and retry those that could not be. */
void gc_rail_repost(struct gc_transport *tp, struct gc_rxbuf *b);
void gc_rail_retry(struct gc_transport *tp, struct gc_rail *r);
/* Unlink a zombie transfer from the transport and free it. */
void gc_tp_free_zombie(struct gc_transport *tp, struct gc_zombie *z);
/* Tests only: the next n pool reposts fail with -FI_EIO. */
extern int gc_test_fail_pool_posts;

#endif
