// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi completion queues: plain and extended CQs on a ring the engine
 * writes, polled up to the engine's producer index (the consumer index is
 * published back), and cleaned of a QP's CQEs when it goes.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/array_size.h>

#include "gaudi.h"

static void gaudi_cq_ex_ops(struct ibv_cq_ex *cq);

/* A CQ, plain (@ex NULL) or extended. */
static struct gaudi_cq *gaudi_cq_new(struct ibv_context *context, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector,
				     const struct ibv_cq_init_attr_ex *ex)
{
	struct ugaudi_create_cq_ex_resp resp_ex = {};
	struct ugaudi_create_cq_resp resp = {};
	struct ibv_create_cq_ex cmd_ex = {};
	struct ibv_create_cq cmd = {};
	struct gaudi_cq *cq;
	uint64_t key, len;
	uint32_t log;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	if (ex) {
		ret = ibv_cmd_create_cq_ex(context, ex, &cq->vcq, &cmd_ex,
					   sizeof(cmd_ex), &resp_ex.ibv_resp,
					   sizeof(resp_ex), 0);
		key = resp_ex.cq_mmap_key;
		len = resp_ex.cq_mmap_len;
		log = resp_ex.log_size;
	} else {
		ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
					&cq->vcq.cq, &cmd, sizeof(cmd),
					&resp.ibv_resp, sizeof(resp));
		key = resp.cq_mmap_key;
		len = resp.cq_mmap_len;
		log = resp.log_size;
	}
	if (ret)
		goto err_free;
	ret = gaudi_ring_map(context, &cq->ring, key, len, log,
			     GAUDI_CQE_SIZE);
	if (ret)
		goto err_destroy;
	cq->cons = gaudi_load_acquire(&cq->ring.hdr->cons);
	gaudi_obj_get(context);
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	pthread_spin_destroy(&cq->lock);
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *gaudi_create_cq(struct ibv_context *context, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct gaudi_cq *cq = gaudi_cq_new(context, cqe, channel, comp_vector,
					   NULL);

	return cq ? &cq->vcq.cq : NULL;
}

/*
 * ibv_create_cq_ex(): the standard work completion fields (what poll_cq
 * gives), polled through start_poll/next_poll/end_poll.  A parent
 * domain (IBV_CQ_INIT_ATTR_MASK_PD) is accepted; the CQ's ring is kernel
 * memory as always.  Timestamps, flow tags, VLANs and ignoring overruns:
 * EOPNOTSUPP.
 */
struct ibv_cq_ex *gaudi_create_cq_ex(struct ibv_context *context,
					    struct ibv_cq_init_attr_ex *attr)
{
	struct gaudi_cq *cq;

	if ((attr->comp_mask & ~(IBV_CQ_INIT_ATTR_MASK_FLAGS |
				 IBV_CQ_INIT_ATTR_MASK_PD)) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
	    (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* the PD given must be a parent domain of this context */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !to_gpd(attr->parent_domain)->protection)) {
		errno = EINVAL;
		return NULL;
	}
	cq = gaudi_cq_new(context, attr->cqe, attr->channel,
			  attr->comp_vector, attr);
	if (!cq)
		return NULL;
	gaudi_cq_ex_ops(&cq->vcq.cq_ex);
	return &cq->vcq.cq_ex;
}

/*
 * ibv_resize_cq(): under the CQ lock, so no poll runs on the old ring
 * while the kernel moves what it holds to the new one (its first slots).
 * If the new ring cannot be mapped the CQ is lost (EIO), as the engine
 * already writes there.
 */
int gaudi_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	struct ugaudi_resize_cq_resp resp = {};
	struct gaudi_ring ring = {}, old;
	struct ibv_resize_cq cmd = {};
	int ret;

	pthread_spin_lock(&cq->lock);
	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (!ret && gaudi_ring_map(ibcq->context, &ring, resp.cq_mmap_key,
				   resp.cq_mmap_len, resp.log_size,
				   GAUDI_CQE_SIZE))
		ret = EIO;
	if (!ret) {
		old = cq->ring;
		cq->ring = ring;
		cq->cons = 0;
		gaudi_ring_unmap(&old);
	}
	pthread_spin_unlock(&cq->lock);
	return ret;
}

int gaudi_destroy_cq(struct ibv_cq *ibcq)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	struct ibv_context *ibctx = ibcq->context;
	int ret;

	ret = gaudi_ctx_closed(ibctx) ? 0 : ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	gaudi_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	gaudi_obj_put(ibctx);
	return 0;
}

static const enum ibv_wc_opcode gaudi_wc_op[] = {
	[GAUDI_CQE_SEND] = IBV_WC_SEND,
	[GAUDI_CQE_WRITE] = IBV_WC_RDMA_WRITE,
	[GAUDI_CQE_READ] = IBV_WC_RDMA_READ,
	[GAUDI_CQE_BIND_MW] = IBV_WC_BIND_MW,
	[GAUDI_CQE_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[GAUDI_CQE_FLUSH] = IBV_WC_FLUSH,
	[GAUDI_CQE_RECV] = IBV_WC_RECV,
	[GAUDI_CQE_RECV_WRITE_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
};

/*
 * The sl of a UD receive: the RoCE packet type, as ConnectX reports it
 * there (mlx5's CQE, which rdma-core's mlx5 provider copies to wc.sl):
 * bit 3 a UDP header (RoCE v2), bits 2:0 the L3 header, 1 IPv6, 2 IPv4.
 * It is the flag IBA Annex A17.4.5.1 puts in a UD completion, IPv4 or
 * IPv6, for which struct ibv_wc has no field of its own.  UCX up to 1.18
 * reads the address family from it (ud_verbs' destination GID check,
 * uct_ud_iface_check_grh()): with sl 0 it takes an IPv4 datagram for
 * IPv6, compares the wrong bytes of the GRH area with its GIDs and drops
 * every datagram, so its UD wire-up never completes.
 */
static uint8_t gaudi_wc_roce_sl(uint8_t cqe_flags)
{
	return GAUDI_WC_SL_ROCE_UDP | (cqe_flags & GAUDI_CQE_F_IPV6 ?
				       GAUDI_WC_SL_ROCE_IPV6 :
				       GAUDI_WC_SL_ROCE_IPV4);
}

/*
 * One CQE into one work completion.  @c is a private copy: the ring is
 * user-writable memory the engine also writes, so each entry is read
 * exactly once.
 */
static void gaudi_cqe_to_wc(const struct gaudi_cqe *c, struct ibv_wc *w)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = c->wr_id;
	w->status = c->status <= IBV_WC_GENERAL_ERR ?
		    (enum ibv_wc_status)c->status : IBV_WC_GENERAL_ERR;
	w->opcode = c->opcode < ARRAY_SIZE(gaudi_wc_op) ?
		    gaudi_wc_op[c->opcode] : IBV_WC_SEND;
	w->vendor_err = c->vendor_err;
	w->byte_len = c->byte_len;
	w->qp_num = c->qp_num;
	if (c->flags & GAUDI_CQE_F_IMM) {
		w->imm_data = c->imm_data;
		w->wc_flags |= IBV_WC_WITH_IMM;
	}
	if (c->flags & GAUDI_CQE_F_INV) {
		w->invalidated_rkey = be32toh(c->imm_data);
		w->wc_flags |= IBV_WC_WITH_INV;
	}
	if (c->flags & GAUDI_CQE_F_GRH) {
		/*
		 * A UD receive: the buffer starts with the 40-byte GRH area.
		 * RoCE has no LIDs or P_Key table: slid, dlid_path_bits and
		 * pkey_index stay 0.  Nor SLs: sl carries the packet type
		 * instead (gaudi_wc_roce_sl()).
		 */
		w->wc_flags |= IBV_WC_GRH;
		w->src_qp = c->src_qp & 0xffffff;
		w->sl = gaudi_wc_roce_sl(c->flags);
	}
}

/*
 * More completions than the ring holds: the producer index is not the
 * engine's (the ring is user-writable memory, and a raw uverbs command
 * can resize the CQ behind the library).  Reading on would go round the
 * ring up to 2^32 times (verbs_fuzz spun there); the CQ is reported
 * broken instead, as gaudi_cq_clean() already refuses it.
 */
static bool gaudi_cq_lost(const struct gaudi_cq *cq, uint32_t prod)
{
	return prod - cq->cons > cq->ring.size;
}

int gaudi_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	prod = gaudi_load_acquire(&cq->ring.hdr->prod);
	if (gaudi_cq_lost(cq, prod)) {
		pthread_spin_unlock(&cq->lock);
		return -EIO;
	}
	while (n < ne && cq->cons != prod) {
		struct gaudi_cqe c;

		memcpy(&c, gaudi_ring_entry(&cq->ring, cq->cons), sizeof(c));
		gaudi_cqe_to_wc(&c, &wc[n++]);
		cq->cons++;
	}
	if (n)
		gaudi_store_release(&cq->ring.hdr->cons, cq->cons);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/* Extended polling: one CQE at a time into cq->cur, under the CQ lock. */
static struct gaudi_cq *to_gcq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct gaudi_cq, vcq.cq_ex);
}

static int gaudi_cq_ex_fetch(struct gaudi_cq *cq)
{
	uint32_t prod = gaudi_load_acquire(&cq->ring.hdr->prod);
	struct gaudi_cqe c;

	if (cq->cons == prod)
		return ENOENT;
	if (gaudi_cq_lost(cq, prod))
		return EIO;
	memcpy(&c, gaudi_ring_entry(&cq->ring, cq->cons), sizeof(c));
	gaudi_cqe_to_wc(&c, &cq->cur);
	cq->cons++;
	cq->vcq.cq_ex.wr_id = cq->cur.wr_id;
	cq->vcq.cq_ex.status = cq->cur.status;
	return 0;
}

static int gaudi_start_poll(struct ibv_cq_ex *ibcq,
			    struct ibv_poll_cq_attr *attr)
{
	struct gaudi_cq *cq = to_gcq_ex(ibcq);
	int ret;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	ret = gaudi_cq_ex_fetch(cq);
	if (ret)	/* no end_poll follows */
		pthread_spin_unlock(&cq->lock);
	return ret;
}

static int gaudi_next_poll(struct ibv_cq_ex *ibcq)
{
	return gaudi_cq_ex_fetch(to_gcq_ex(ibcq));
}

static void gaudi_end_poll(struct ibv_cq_ex *ibcq)
{
	struct gaudi_cq *cq = to_gcq_ex(ibcq);

	gaudi_store_release(&cq->ring.hdr->cons, cq->cons);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode gaudi_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.opcode;
}

static uint32_t gaudi_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.vendor_err;
}

static uint32_t gaudi_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.byte_len;
}

static __be32 gaudi_read_imm_data(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.imm_data;
}

static uint32_t gaudi_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.qp_num;
}

static uint32_t gaudi_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.src_qp;
}

static unsigned int gaudi_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.wc_flags;
}

/* RoCE: no LIDs; sl is a UD receive's packet type (gaudi_wc_roce_sl()) */
static uint32_t gaudi_read_slid(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static uint8_t gaudi_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_gcq_ex(ibcq)->cur.sl;
}

static uint8_t gaudi_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return 0;
}

static void gaudi_cq_ex_ops(struct ibv_cq_ex *cq)
{
	cq->start_poll = gaudi_start_poll;
	cq->next_poll = gaudi_next_poll;
	cq->end_poll = gaudi_end_poll;
	cq->read_opcode = gaudi_read_opcode;
	cq->read_vendor_err = gaudi_read_vendor_err;
	cq->read_byte_len = gaudi_read_byte_len;
	cq->read_imm_data = gaudi_read_imm_data;
	cq->read_qp_num = gaudi_read_qp_num;
	cq->read_src_qp = gaudi_read_src_qp;
	cq->read_wc_flags = gaudi_read_wc_flags;
	cq->read_slid = gaudi_read_slid;
	cq->read_sl = gaudi_read_sl;
	cq->read_dlid_path_bits = gaudi_read_dlid_path_bits;
}

int gaudi_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/*
 * Drop the completions of QP @qpn not yet polled from @ibcq (a QP moved
 * to RESET starts afresh, and a destroyed one leaves nothing behind, as
 * mlx4 and mlx5 clean their CQs): the others
 * move up over them, newest first, and the consumer index passes the
 * freed slots.  The engine may be adding CQEs past the producer index
 * read here meanwhile; those are not touched.
 */
void gaudi_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	uint32_t prod, i, freed = 0;

	pthread_spin_lock(&cq->lock);
	prod = gaudi_load_acquire(&cq->ring.hdr->prod);
	if (gaudi_cq_lost(cq, prod))
		goto out;
	for (i = prod; i != cq->cons; i--) {
		struct gaudi_cqe *c = gaudi_ring_entry(&cq->ring, i - 1);

		if (c->qp_num == qpn)
			freed++;
		else if (freed)
			memcpy(gaudi_ring_entry(&cq->ring, i - 1 + freed), c,
			       sizeof(*c));
	}
	if (freed) {
		cq->cons += freed;
		gaudi_store_release(&cq->ring.hdr->cons, cq->cons);
	}
out:
	pthread_spin_unlock(&cq->lock);
}
