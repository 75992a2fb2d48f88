/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libgaudi: userspace provider for the gaudi_nic RoCE v2 engine.
 */
#ifndef GAUDI_H
#define GAUDI_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <infiniband/driver.h>
#include <infiniband/kern-abi.h>
#include <rdma/gaudi-abi.h>
#include <kernel-abi/gaudi-abi.h>

DECLARE_DRV_CMD(ugaudi_alloc_context, IB_USER_VERBS_CMD_GET_CONTEXT,
		empty, gaudi_alloc_ucontext_resp);
DECLARE_DRV_CMD(ugaudi_alloc_pd, IB_USER_VERBS_CMD_ALLOC_PD,
		empty, gaudi_alloc_pd_resp);
DECLARE_DRV_CMD(ugaudi_create_cq, IB_USER_VERBS_CMD_CREATE_CQ,
		empty, gaudi_create_cq_resp);
DECLARE_DRV_CMD(ugaudi_create_cq_ex, IB_USER_VERBS_EX_CMD_CREATE_CQ,
		empty, gaudi_create_cq_resp);
DECLARE_DRV_CMD(ugaudi_resize_cq, IB_USER_VERBS_CMD_RESIZE_CQ,
		empty, gaudi_resize_cq_resp);
DECLARE_DRV_CMD(ugaudi_create_qp, IB_USER_VERBS_CMD_CREATE_QP,
		gaudi_create_qp_cmd, gaudi_create_qp_resp);
DECLARE_DRV_CMD(ugaudi_create_srq, IB_USER_VERBS_CMD_CREATE_SRQ,
		empty, gaudi_create_srq_resp);
DECLARE_DRV_CMD(ugaudi_modify_srq, IB_USER_VERBS_CMD_MODIFY_SRQ,
		gaudi_modify_srq_cmd, empty);
DECLARE_DRV_CMD(ugaudi_create_ah, IB_USER_VERBS_CMD_CREATE_AH,
		empty, gaudi_create_ah_resp);

struct gaudi_device {
	struct verbs_device ibv_dev;
};

struct gaudi_context {
	struct verbs_context ibv_ctx;
	/* objects open (PDs, MRs, CQs, QPs, AHs); closed by close_device */
	atomic_int live;
	atomic_bool closed;
	/*
	 * send limits of UD QPs in 128-byte WQEs (a kernel without
	 * GAUDI_QP_UD_WQE256): the AV takes room in the WQE
	 */
	uint32_t ud_max_sge;
	uint32_t ud_max_inline;
};

/*
 * A PD, or a parent domain (@protection set: the PD it contains, whose
 * kernel handle it shares; gaudi.c).  @parents: parent domains on a PD.
 */
struct gaudi_pd {
	struct ibv_pd ibv_pd;
	struct gaudi_pd *protection;
	atomic_int parents;
	void *pd_context;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
};

static inline struct gaudi_pd *to_gpd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct gaudi_pd, ibv_pd);
}

/* The address vector the kernel checked and resolved (dmac included). */
struct gaudi_ah {
	struct ibv_ah ibv_ah;
	struct gaudi_av av;
};

/* A ring mapped from the kernel: header, then 2^log entries. */
struct gaudi_ring {
	void *map;
	size_t map_len;
	uint32_t size;
	uint32_t stride;
	struct gaudi_ring_hdr *hdr;
};

/* wc.sl of a UD receive: the RoCE packet type (cq.c, gaudi_wc_roce_sl()) */
#define GAUDI_WC_SL_ROCE_IPV6	0x1
#define GAUDI_WC_SL_ROCE_IPV4	0x2
#define GAUDI_WC_SL_ROCE_UDP	0x8

struct gaudi_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;
	struct gaudi_ring ring;
	uint32_t cons;
	/* extended polling: the completion start/next_poll are at */
	struct ibv_wc cur;
};

/*
 * A batch of the work request API (ibv_wr_*, qpex.c): the work request
 * being built, as the ibv_send_wr post_send would take (its SGEs and
 * inline data copied here), so both APIs share one WQE builder.
 */
struct gaudi_wr_state {
	uint64_t ops;		/* send_ops_flags the QP was created with */
	uint32_t start;		/* sq_prod at wr_start */
	int err;		/* the first error of the batch */
	bool open;		/* a WR is being built (cur) */
	struct ibv_send_wr cur;
	struct ibv_sge sge[GAUDI_MAX_SGE];
	uint8_t inl[GAUDI_UD_WQE256_MAX_INLINE];	/* the largest */
	struct ibv_ah *db_ah;	/* UD: an AH of the batch, for the doorbell */
	/* wr_flush: what ibv_send_wr has no room for (cur.wr.rdma, length) */
	uint64_t flush_len;
	uint8_t flush_type;
	uint8_t flush_level;
};

struct gaudi_qp {
	struct verbs_qp vqp;
	pthread_spinlock_t sq_lock;
	pthread_spinlock_t rq_lock;
	struct gaudi_ring sq;
	struct gaudi_ring rq;
	uint32_t sq_prod;
	uint32_t rq_prod;
	bool in_error;
	bool ud;
	uint32_t max_send_sge;
	uint32_t max_inline;
	/* the work request API (qpex.c), between wr_start and wr_complete */
	struct gaudi_wr_state wr;
};

static inline void *gaudi_ring_entry(struct gaudi_ring *r, uint32_t idx)
{
	return (uint8_t *)r->map + GAUDI_RING_HDR_SIZE +
	       (size_t)(idx & (r->size - 1)) * r->stride;
}

static inline uint32_t gaudi_load_acquire(uint32_t *p)
{
	return atomic_load_explicit((_Atomic(uint32_t) *)p,
				    memory_order_acquire);
}

static inline void gaudi_store_release(uint32_t *p, uint32_t v)
{
	atomic_store_explicit((_Atomic(uint32_t) *)p, v,
			      memory_order_release);
}

/* A shared receive queue: the mapped ring; @prod is ours, under @lock. */
struct gaudi_srq {
	struct verbs_srq vsrq;
	pthread_spinlock_t lock;
	struct gaudi_ring ring;
	uint32_t prod;
	uint32_t max_sge;
	uint32_t srqn;
};

/* gaudi.c */
void gaudi_obj_get(struct ibv_context *ibctx);
void gaudi_obj_put(struct ibv_context *ibctx);
bool gaudi_ctx_closed(struct ibv_context *ibctx);
int gaudi_ring_map(struct ibv_context *context, struct gaudi_ring *r,
		   uint64_t key, uint64_t len, uint32_t log, uint32_t stride);
void gaudi_ring_unmap(struct gaudi_ring *r);

/* dm.c */
struct ibv_dm *gaudi_alloc_dm(struct ibv_context *context,
			      struct ibv_alloc_dm_attr *attr);
int gaudi_free_dm(struct ibv_dm *ibdm);
struct ibv_dm *gaudi_import_dm(struct ibv_context *context,
			       uint32_t dm_handle);
void gaudi_unimport_dm(struct ibv_dm *ibdm);
struct ibv_mr *gaudi_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length,
			       unsigned int access);

/* cq.c */
struct ibv_cq *gaudi_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel,
			       int comp_vector);
struct ibv_cq_ex *gaudi_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
int gaudi_resize_cq(struct ibv_cq *ibcq, int cqe);
int gaudi_destroy_cq(struct ibv_cq *ibcq);
int gaudi_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int gaudi_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
void gaudi_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

/* post.c */
int gaudi_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int gaudi_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
/*
 * A send WQE being built, in the SQ's format: struct gaudi_ud_wqe on a UD
 * QP (of which a 128-byte SQ takes the first half), gaudi_wqe otherwise.
 */
union gaudi_swqe {
	struct gaudi_wqe w;
	struct gaudi_ud_wqe ud;
};

int gaudi_build_send(struct gaudi_qp *qp, union gaudi_swqe *s,
		     const struct ibv_send_wr *wr);
bool gaudi_qpex_ops_supported(enum ibv_qp_type type, uint64_t ops);
bool gaudi_sq_ready(struct gaudi_qp *qp);
int gaudi_sq_put(struct gaudi_qp *qp, const union gaudi_swqe *s);
int gaudi_sq_doorbell(struct gaudi_qp *qp, uint32_t start, struct ibv_ah *ah);

/* qpex.c */
void gaudi_qpex_init(struct gaudi_qp *qp, uint64_t ops);

/* srq.c */
struct ibv_srq *gaudi_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr);
int gaudi_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask);
int gaudi_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int gaudi_destroy_srq(struct ibv_srq *ibsrq);
int gaudi_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

#endif /* GAUDI_H */
