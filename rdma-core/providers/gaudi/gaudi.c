// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi: userspace provider for the gaudi_nic RoCE v2 engine
 * (kernel driver gaudi_ib, ib_device gaudi_N).
 *
 * Send and receive queues and CQs are rings shared with the engine and
 * mapped into the process (include/uapi/rdma/gaudi-abi.h).  Posting
 * writes WQEs and publishes the producer index; the send doorbell is an
 * empty post_send command.  Polling reads CQEs up to the engine's
 * producer index and publishes the consumer index.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <ccan/array_size.h>

#include "gaudi.h"

static const struct verbs_match_ent gaudi_table[] = {
	VERBS_NAME_MATCH("gaudi_", NULL),
	{},
};

static int gaudi_query_device(struct ibv_context *context,
			      const struct ibv_query_device_ex_input *input,
			      struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int ret;

	ret = ibv_cmd_query_device_any(context, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 48) & 0xffff,
		 (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)fw & 0xffffffff);
	return 0;
}

static int gaudi_query_port(struct ibv_context *context, uint8_t port,
			    struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd = {};

	return ibv_cmd_query_port(context, port, attr, &cmd, sizeof(cmd));
}

static struct ibv_pd *gaudi_alloc_pd(struct ibv_context *context)
{
	struct ugaudi_alloc_pd_resp resp = {};
	struct ibv_alloc_pd cmd = {};
	struct ibv_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, pd, &cmd, sizeof(cmd), &resp.ibv_resp,
			     sizeof(resp))) {
		free(pd);
		return NULL;
	}
	return pd;
}

static int gaudi_dealloc_pd(struct ibv_pd *pd)
{
	int ret = ibv_cmd_dealloc_pd(pd);

	if (!ret)
		free(pd);
	return ret;
}

/*
 * Address handles.  The kernel checks the address vector and resolves the
 * destination MAC and hop limit through the IP stack of the source GID's
 * netdev; the provider keeps the handle, for the UD QPs to come.
 */
static struct ibv_ah *gaudi_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct ib_uverbs_create_ah_resp resp = {};
	struct gaudi_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp, sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	return &ah->ibv_ah;
}

static int gaudi_destroy_ah(struct ibv_ah *ibah)
{
	int ret = ibv_cmd_destroy_ah(ibah);

	if (!ret)
		free(container_of(ibah, struct gaudi_ah, ibv_ah));
	return ret;
}

static struct ibv_mr *gaudi_reg_mr(struct ibv_pd *pd, void *addr,
				   size_t length, uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	if (ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			   sizeof(cmd), &resp, sizeof(resp))) {
		free(vmr);
		return NULL;
	}
	return &vmr->ibv_mr;
}

static struct ibv_mr *gaudi_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					  size_t length, uint64_t iova, int fd,
					  int access)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				    NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

static int gaudi_dereg_mr(struct verbs_mr *vmr)
{
	int ret = ibv_cmd_dereg_mr(vmr);

	if (!ret)
		free(vmr);
	return ret;
}

static int gaudi_ring_map(struct ibv_context *context, struct gaudi_ring *r,
			  uint64_t key, uint64_t len, uint32_t log,
			  uint32_t stride)
{
	if (log > 16 || len < GAUDI_RING_HDR_SIZE + ((uint64_t)stride << log))
		return EINVAL;
	r->map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      context->cmd_fd, key);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		return errno;
	}
	r->map_len = len;
	r->size = 1U << log;
	r->stride = stride;
	r->hdr = r->map;
	return 0;
}

static void gaudi_ring_unmap(struct gaudi_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

static struct ibv_cq *gaudi_create_cq(struct ibv_context *context, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector)
{
	struct ugaudi_create_cq_resp resp = {};
	struct ibv_create_cq cmd = {};
	struct gaudi_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_cq(context, cqe, channel, comp_vector,
				&cq->vcq.cq, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = gaudi_ring_map(context, &cq->ring, resp.cq_mmap_key,
			     resp.cq_mmap_len, resp.log_size, GAUDI_CQE_SIZE);
	if (ret)
		goto err_destroy;
	cq->cons = gaudi_load_acquire(&cq->ring.hdr->cons);
	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	pthread_spin_destroy(&cq->lock);
	free(cq);
	errno = ret;
	return NULL;
}

static int gaudi_destroy_cq(struct ibv_cq *ibcq)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;
	gaudi_ring_unmap(&cq->ring);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

static const enum ibv_wc_opcode gaudi_wc_op[] = {
	[GAUDI_CQE_SEND] = IBV_WC_SEND,
	[GAUDI_CQE_WRITE] = IBV_WC_RDMA_WRITE,
	[GAUDI_CQE_READ] = IBV_WC_RDMA_READ,
	[GAUDI_CQE_RECV] = IBV_WC_RECV,
	[GAUDI_CQE_RECV_WRITE_IMM] = IBV_WC_RECV_RDMA_WITH_IMM,
};

static int gaudi_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct gaudi_cq *cq = container_of(ibcq, struct gaudi_cq, vcq.cq);
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	prod = gaudi_load_acquire(&cq->ring.hdr->prod);
	while (n < ne && cq->cons != prod) {
		struct gaudi_cqe *c = gaudi_ring_entry(&cq->ring, cq->cons);
		struct ibv_wc *w = &wc[n++];

		memset(w, 0, sizeof(*w));
		w->wr_id = c->wr_id;
		w->status = c->status;
		w->opcode = c->opcode < ARRAY_SIZE(gaudi_wc_op) ?
			    gaudi_wc_op[c->opcode] : IBV_WC_SEND;
		w->vendor_err = c->vendor_err;
		w->byte_len = c->byte_len;
		w->qp_num = c->qp_num;
		if (c->flags & GAUDI_CQE_F_IMM) {
			w->imm_data = c->imm_data;
			w->wc_flags |= IBV_WC_WITH_IMM;
		}
		cq->cons++;
	}
	if (n)
		gaudi_store_release(&cq->ring.hdr->cons, cq->cons);
	pthread_spin_unlock(&cq->lock);
	return n;
}

static int gaudi_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

static struct ibv_qp *gaudi_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct ugaudi_create_qp_resp resp = {};
	struct ibv_create_qp cmd = {};
	struct gaudi_qp *qp;
	int ret;

	if (attr->qp_type != IBV_QPT_RC || attr->srq) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = gaudi_ring_map(pd->context, &qp->sq, resp.sq_mmap_key,
			     resp.sq_mmap_len, resp.sq_log_size,
			     GAUDI_WQE_SIZE);
	if (ret)
		goto err_destroy;
	ret = gaudi_ring_map(pd->context, &qp->rq, resp.rq_mmap_key,
			     resp.rq_mmap_len, resp.rq_log_size,
			     GAUDI_WQE_SIZE);
	if (ret)
		goto err_unmap;
	qp->sq_prod = gaudi_load_acquire(&qp->sq.hdr->prod);
	qp->rq_prod = gaudi_load_acquire(&qp->rq.hdr->prod);
	return &qp->vqp.qp;

err_unmap:
	gaudi_ring_unmap(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	errno = ret;
	return NULL;
}

static int gaudi_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd = {};

	return ibv_cmd_query_qp(qp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int gaudi_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			   int attr_mask)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	struct ibv_modify_qp cmd = {};
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (attr_mask & IBV_QP_STATE) {
		qp->in_error = attr->qp_state == IBV_QPS_ERR;
		if (attr->qp_state == IBV_QPS_RESET) {
			/* the engine emptied the rings */
			qp->sq_prod = gaudi_load_acquire(&qp->sq.hdr->prod);
			qp->rq_prod = gaudi_load_acquire(&qp->rq.hdr->prod);
		}
	}
	return 0;
}

static int gaudi_destroy_qp(struct ibv_qp *ibqp)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;
	gaudi_ring_unmap(&qp->sq);
	gaudi_ring_unmap(&qp->rq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	return 0;
}

static int gaudi_fill_sge(struct gaudi_wqe *w, const struct ibv_sge *sg,
			  int num_sge)
{
	int i;

	if (num_sge < 0 || num_sge > GAUDI_MAX_SGE)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		w->data.sge[i].addr = sg[i].addr;
		w->data.sge[i].length = sg[i].length;
		w->data.sge[i].lkey = sg[i].lkey;
	}
	w->num_sge = num_sge;
	return 0;
}

static int gaudi_fill_inline(struct gaudi_wqe *w, const struct ibv_sge *sg,
			     int num_sge)
{
	uint32_t len = 0;
	int i;

	for (i = 0; i < num_sge; i++) {
		if (sg[i].length > GAUDI_MAX_INLINE - len)
			return EINVAL;
		memcpy(w->data.inline_data + len, (void *)(uintptr_t)sg[i].addr,
		       sg[i].length);
		len += sg[i].length;
	}
	w->inline_len = len;
	w->flags |= GAUDI_WQE_F_INLINE;
	return 0;
}

static int gaudi_build_send(struct gaudi_qp *qp, struct gaudi_wqe *w,
			    const struct ibv_send_wr *wr)
{
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	switch (wr->opcode) {
	case IBV_WR_SEND:
		w->opcode = GAUDI_WQE_SEND;
		break;
	case IBV_WR_SEND_WITH_IMM:
		w->opcode = GAUDI_WQE_SEND_IMM;
		w->imm_data = wr->imm_data;
		break;
	case IBV_WR_RDMA_WRITE:
		w->opcode = GAUDI_WQE_WRITE;
		break;
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		w->opcode = GAUDI_WQE_WRITE_IMM;
		w->imm_data = wr->imm_data;
		break;
	case IBV_WR_RDMA_READ:
		w->opcode = GAUDI_WQE_READ;
		break;
	default:
		return EINVAL;
	}
	if (w->opcode >= GAUDI_WQE_WRITE) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (wr->send_flags & IBV_SEND_SIGNALED)
		w->flags |= GAUDI_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		w->flags |= GAUDI_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		w->flags |= GAUDI_WQE_F_FENCE;
	if ((wr->send_flags & IBV_SEND_INLINE) &&
	    w->opcode != GAUDI_WQE_READ) {
		if (wr->num_sge < 0 || wr->num_sge > GAUDI_MAX_SGE)
			return EINVAL;
		return gaudi_fill_inline(w, wr->sg_list, wr->num_sge);
	}
	return gaudi_fill_sge(w, wr->sg_list, wr->num_sge);
}

static int gaudi_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&qp->sq_lock);
	start = qp->sq_prod;
	for (; wr; wr = wr->next) {
		uint32_t cons = gaudi_load_acquire(&qp->sq.hdr->cons);
		struct gaudi_wqe w;

		if (qp->sq_prod - cons >= qp->sq.size) {
			ret = ENOMEM;
			break;
		}
		ret = gaudi_build_send(qp, &w, wr);
		if (ret)
			break;
		memcpy(gaudi_ring_entry(&qp->sq, qp->sq_prod), &w, sizeof(w));
		qp->sq_prod++;
	}
	if (ret) {
		*bad_wr = wr;
		if (getenv("GAUDI_DEBUG"))
			fprintf(stderr,
				"gaudi: post_send: %s (prod %u cons %u size %u)\n",
				strerror(ret), qp->sq_prod,
				gaudi_load_acquire(&qp->sq.hdr->cons),
				qp->sq.size);
	}
	if (qp->sq_prod != start) {
		struct ibv_send_wr db = { .opcode = IBV_WR_SEND };
		struct ibv_send_wr *bad;

		gaudi_store_release(&qp->sq.hdr->prod, qp->sq_prod);
		/* doorbell: an empty post_send command */
		if (ibv_cmd_post_send(ibqp, &db, &bad) && !ret)
			ret = EIO;
	}
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

static int gaudi_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	uint32_t start;
	int ret = 0;

	pthread_spin_lock(&qp->rq_lock);
	start = qp->rq_prod;
	for (; wr; wr = wr->next) {
		uint32_t cons = gaudi_load_acquire(&qp->rq.hdr->cons);
		struct gaudi_wqe w;

		if (qp->rq_prod - cons >= qp->rq.size) {
			ret = ENOMEM;
			break;
		}
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.opcode = GAUDI_WQE_RECV;
		ret = gaudi_fill_sge(&w, wr->sg_list, wr->num_sge);
		if (ret)
			break;
		memcpy(gaudi_ring_entry(&qp->rq, qp->rq_prod), &w, sizeof(w));
		qp->rq_prod++;
	}
	if (ret)
		*bad_wr = wr;
	if (qp->rq_prod != start) {
		gaudi_store_release(&qp->rq.hdr->prod, qp->rq_prod);
		if (qp->in_error) {
			struct ibv_recv_wr db = {};
			struct ibv_recv_wr *bad;

			/* flush: the engine completes them in error */
			ibv_cmd_post_recv(ibqp, &db, &bad);
		}
	}
	pthread_spin_unlock(&qp->rq_lock);
	return ret;
}

static void gaudi_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops gaudi_ctx_ops = {
	.alloc_pd = gaudi_alloc_pd,
	.create_ah = gaudi_create_ah,
	.create_cq = gaudi_create_cq,
	.create_qp = gaudi_create_qp,
	.dealloc_pd = gaudi_dealloc_pd,
	.dereg_mr = gaudi_dereg_mr,
	.destroy_ah = gaudi_destroy_ah,
	.destroy_cq = gaudi_destroy_cq,
	.destroy_qp = gaudi_destroy_qp,
	.free_context = gaudi_free_context,
	.modify_qp = gaudi_modify_qp,
	.poll_cq = gaudi_poll_cq,
	.post_recv = gaudi_post_recv,
	.post_send = gaudi_post_send,
	.query_device_ex = gaudi_query_device,
	.query_port = gaudi_query_port,
	.query_qp = gaudi_query_qp,
	.reg_dmabuf_mr = gaudi_reg_dmabuf_mr,
	.reg_mr = gaudi_reg_mr,
	.req_notify_cq = gaudi_req_notify_cq,
};

static struct verbs_context *gaudi_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct ugaudi_alloc_context_resp resp = {};
	struct ibv_get_context cmd = {};
	struct gaudi_context *ctx;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	if (ibv_cmd_get_context(&ctx->ibv_ctx, &cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp)))
		goto err;
	if (resp.wqe_size != GAUDI_WQE_SIZE ||
	    resp.cqe_size != GAUDI_CQE_SIZE ||
	    resp.ring_hdr_size != GAUDI_RING_HDR_SIZE) {
		errno = EPROTO;
		goto err;
	}
	verbs_set_ops(&ctx->ibv_ctx, &gaudi_ctx_ops);
	return &ctx->ibv_ctx;
err:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

static void gaudi_free_context(struct ibv_context *ibctx)
{
	struct gaudi_context *ctx =
		container_of(ibctx, struct gaudi_context, ibv_ctx.context);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

static struct verbs_device *gaudi_device_alloc(struct verbs_sysfs_dev *sdev)
{
	struct gaudi_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	return &dev->ibv_dev;
}

static void gaudi_device_free(struct verbs_device *vdev)
{
	free(container_of(vdev, struct gaudi_device, ibv_dev));
}

static const struct verbs_device_ops gaudi_dev_ops = {
	.name = "gaudi",
	.match_min_abi_version = GAUDI_IB_UVERBS_ABI_VERSION,
	.match_max_abi_version = GAUDI_IB_UVERBS_ABI_VERSION,
	.match_table = gaudi_table,
	.alloc_device = gaudi_device_alloc,
	.uninit_device = gaudi_device_free,
	.alloc_context = gaudi_alloc_context,
};
PROVIDER_DRIVER(gaudi, gaudi_dev_ops);
