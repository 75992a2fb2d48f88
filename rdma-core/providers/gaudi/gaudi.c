// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi: userspace provider for the gaudi_nic RoCE v2 engine
 * (kernel driver gaudi_ib, ib_device gaudi_N).
 *
 * Send and receive queues and CQs are rings shared with the engine and
 * mapped into the process (include/uapi/rdma/gaudi-abi.h).  Posting
 * writes WQEs and publishes the producer index; the send doorbell is an
 * empty post_send command (post.c, qpex.c).  Polling reads CQEs up to
 * the engine's producer index and publishes the consumer index (cq.c).
 * This file: the context, PDs, AHs, MRs, MWs and QPs.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "gaudi.h"

static const struct verbs_match_ent gaudi_table[] = {
	VERBS_NAME_MATCH("gaudi_", NULL),
	{},
};

static struct gaudi_context *to_gctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct gaudi_context, ibv_ctx.context);
}

/*
 * Objects outliving their context.  ibv_close_device() with objects still
 * open is a caller's mistake, but a common one: Python's garbage
 * collector tears down pyverbs objects in any order (rdma-core's test
 * suite closes a Context before its CQs whenever a test fails or skips
 * half-way through building its resources).  Each later destroy passes
 * the object's context back to libibverbs (get_ops(), execute_ioctl(),
 * the completion channel's mutex), so freeing the context under live
 * objects turns that mistake into a use after free: a segfault at
 * NULL + 0xd0 (verbs_context.priv) in execute_ioctl() once the memory is
 * reused.  So the provider counts its objects: a context closed with
 * objects open closes its file descriptors (the kernel destroys the
 * objects) but keeps its memory, and destroying an object after that
 * only frees the object's user memory and returns 0.
 */
void gaudi_obj_get(struct ibv_context *ibctx)
{
	atomic_fetch_add_explicit(&to_gctx(ibctx)->live, 1,
				  memory_order_relaxed);
}

void gaudi_obj_put(struct ibv_context *ibctx)
{
	atomic_fetch_sub_explicit(&to_gctx(ibctx)->live, 1,
				  memory_order_relaxed);
}

bool gaudi_ctx_closed(struct ibv_context *ibctx)
{
	return atomic_load_explicit(&to_gctx(ibctx)->closed,
				    memory_order_acquire);
}

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
	struct gaudi_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	if (ibv_cmd_alloc_pd(context, &pd->ibv_pd, &cmd, sizeof(cmd),
			     &resp.ibv_resp, sizeof(resp))) {
		free(pd);
		return NULL;
	}
	gaudi_obj_get(context);
	return &pd->ibv_pd;
}

/*
 * Parent domains (ibv_alloc_parent_domain()): a PD of the provider only,
 * standing for the protection domain it contains.  Its handle is that
 * PD's (ibv_initialize_parent_domain()), so every command given a parent
 * domain (MRs, QPs, SRQs, AHs) acts on the protection domain.  The
 * custom allocators and pd_context are accepted and kept, but have
 * nothing to allocate: every ring is kernel memory mapped into the
 * process (gaudi_ring_map()), never provider memory.  Thread domains do
 * not exist (alloc_td is EOPNOTSUPP), so @td must be NULL.  A PD with
 * parent domains on it is not deallocated (EBUSY).
 */
static struct ibv_pd *
gaudi_alloc_parent_domain(struct ibv_context *context,
			  struct ibv_parent_domain_init_attr *attr)
{
	const uint32_t known = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			       IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT;
	struct gaudi_pd *pd, *prot;

	if (attr->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != context || attr->td) {
		errno = EINVAL;
		return NULL;
	}
	prot = to_gpd(attr->pd);
	if (prot->protection) {		/* a parent domain in a parent domain */
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free)) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;
	pd->protection = prot;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;
	ibv_initialize_parent_domain(&pd->ibv_pd, &prot->ibv_pd);
	atomic_fetch_add_explicit(&prot->parents, 1, memory_order_relaxed);
	gaudi_obj_get(context);
	return &pd->ibv_pd;
}

static int gaudi_dealloc_pd(struct ibv_pd *ibpd)
{
	struct ibv_context *ibctx = ibpd->context;
	struct gaudi_pd *pd = to_gpd(ibpd);
	int ret = 0;

	if (pd->protection)
		atomic_fetch_sub_explicit(&pd->protection->parents, 1,
					  memory_order_relaxed);
	else if (atomic_load_explicit(&pd->parents, memory_order_relaxed))
		ret = EBUSY;
	else if (!gaudi_ctx_closed(ibctx))
		ret = ibv_cmd_dealloc_pd(ibpd);
	if (!ret) {
		free(pd);
		gaudi_obj_put(ibctx);
	}
	return ret;
}

/*
 * Address handles.  The kernel checks the address vector, resolves the
 * destination MAC and hop limit through the IP stack of the source GID's
 * netdev and returns the encoded vector (struct gaudi_create_ah_resp),
 * which UD send WQEs carry unchanged.  ibv_create_ah_from_wc() is generic
 * in libibverbs and ends here too.
 */
static struct ibv_ah *gaudi_create_ah(struct ibv_pd *pd,
				      struct ibv_ah_attr *attr)
{
	struct ugaudi_create_ah_resp resp = {};
	struct gaudi_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	/* a kernel without UD leaves it zero: UD sends to it are refused */
	ah->av = resp.av;
	gaudi_obj_get(pd->context);
	return &ah->ibv_ah;
}

static int gaudi_destroy_ah(struct ibv_ah *ibah)
{
	struct ibv_context *ibctx = ibah->context;
	int ret = gaudi_ctx_closed(ibctx) ? 0 : ibv_cmd_destroy_ah(ibah);

	if (!ret) {
		free(container_of(ibah, struct gaudi_ah, ibv_ah));
		gaudi_obj_put(ibctx);
	}
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
	gaudi_obj_get(pd->context);
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
	gaudi_obj_get(pd->context);
	return &vmr->ibv_mr;
}

/*
 * ibv_rereg_mr(): the kernel changes the MR in place, keeping its keys;
 * work requests using it while it changes may fail.  The iova of a new
 * translation is its address, as ibv_reg_mr() has it.
 */
static int gaudi_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			  void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;

	if ((flags & IBV_REREG_MR_CHANGE_PD) &&
	    (!pd || pd->context != vmr->ibv_mr.context))
		return EINVAL;
	return ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
				access, pd, &cmd, sizeof(cmd), &resp,
				sizeof(resp));
}

static int gaudi_dereg_mr(struct verbs_mr *vmr)
{
	struct ibv_context *ibctx = vmr->ibv_mr.context;
	int ret = gaudi_ctx_closed(ibctx) ? 0 : ibv_cmd_dereg_mr(vmr);

	if (!ret) {
		free(vmr);
		gaudi_obj_put(ibctx);
	}
	return ret;
}

int gaudi_ring_map(struct ibv_context *context, struct gaudi_ring *r,
		   uint64_t key, uint64_t len, uint32_t log, uint32_t stride)
{
	/*
	 * The kernel sizes the rings (CQs up to 2^18 entries today); 24 only
	 * bounds the shift.  The mapping must hold all entries.
	 */
	if (log > 24 || len < GAUDI_RING_HDR_SIZE + ((uint64_t)stride << log))
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

void gaudi_ring_unmap(struct gaudi_ring *r)
{
	if (r->map)
		munmap(r->map, r->map_len);
	r->map = NULL;
}

/*
 * The send limits of a QP: those of every type, except in a 128-byte UD
 * send WQE (an older kernel), which holds the address vector before its
 * SGEs or inline data and so has room for fewer of them.
 */
static void gaudi_clamp_caps(struct gaudi_qp *qp, struct ibv_qp_cap *cap)
{
	if (cap->max_send_sge > qp->max_send_sge)
		cap->max_send_sge = qp->max_send_sge;
	if (cap->max_inline_data > qp->max_inline)
		cap->max_inline_data = qp->max_inline;
}

/*
 * The kernel side of a new QP.  A UD QP asks for 256-byte send WQEs
 * (GAUDI_QP_UD_WQE256), which take the SGE and inline limits the device
 * reports; a kernel from before them refuses the input with EINVAL, and
 * the QP is then created again with 128-byte WQEs if what it asks for
 * fits their smaller limits.  GAUDI_UD_WQE=128 in the environment asks
 * for those at once, as a provider from before the flag did: it tests a
 * kernel's compatibility path (gaudi(7)).
 */
static int gaudi_create_qp_cmd(struct gaudi_context *ctx, struct ibv_pd *pd,
			       struct gaudi_qp *qp,
			       struct ibv_qp_init_attr *attr,
			       struct ugaudi_create_qp_resp *resp)
{
	struct ugaudi_create_qp cmd = {};
	const char *fmt = getenv("GAUDI_UD_WQE");
	int ret;

	if (qp->ud && !(fmt && !strcmp(fmt, "128")))
		cmd.flags = GAUDI_QP_UD_WQE256;
	ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
				sizeof(cmd), &resp->ibv_resp, sizeof(*resp));
	if (ret == EINVAL && qp->ud &&
	    attr->cap.max_send_sge <= ctx->ud_max_sge &&
	    attr->cap.max_inline_data <= ctx->ud_max_inline) {
		cmd.flags = 0;
		ret = ibv_cmd_create_qp(pd, &qp->vqp.qp, attr, &cmd.ibv_cmd,
					sizeof(cmd), &resp->ibv_resp,
					sizeof(*resp));
	}
	if (ret)
		return ret;
	/* the limits of the SQ's format */
	if (!resp->sq_wqe_size)
		resp->sq_wqe_size = GAUDI_WQE_SIZE;
	if (qp->ud && resp->sq_wqe_size == GAUDI_WQE_SIZE) {
		qp->max_send_sge = ctx->ud_max_sge;
		qp->max_inline = ctx->ud_max_inline;
	} else if (qp->ud && resp->sq_wqe_size == GAUDI_UD_WQE_SIZE) {
		qp->max_send_sge = GAUDI_MAX_SGE;
		qp->max_inline = GAUDI_UD_WQE256_MAX_INLINE;
	} else if (resp->sq_wqe_size != GAUDI_WQE_SIZE) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		return EPROTO;
	}
	return 0;
}

static struct ibv_qp *gaudi_create_qp(struct ibv_pd *pd,
				      struct ibv_qp_init_attr *attr)
{
	struct gaudi_context *ctx = to_gctx(pd->context);
	struct ugaudi_create_qp_resp resp = {};
	struct gaudi_qp *qp;
	int ret;

	/* RC, UC and UD only; RC and UD QPs may take receives from an SRQ */
	if ((attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	     attr->qp_type != IBV_QPT_UD) ||
	    (attr->srq && attr->qp_type == IBV_QPT_UC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	qp->ud = attr->qp_type == IBV_QPT_UD;
	qp->max_send_sge = GAUDI_MAX_SGE;
	qp->max_inline = GAUDI_MAX_INLINE;
	pthread_spin_init(&qp->sq_lock, PTHREAD_PROCESS_PRIVATE);
	pthread_spin_init(&qp->rq_lock, PTHREAD_PROCESS_PRIVATE);
	ret = gaudi_create_qp_cmd(ctx, pd, qp, attr, &resp);
	if (ret) {
		if (getenv("GAUDI_DEBUG"))
			fprintf(stderr,
				"gaudi: create_qp: type %d, send wr %u sge %u inline %u, recv wr %u sge %u: %s\n",
				attr->qp_type, attr->cap.max_send_wr,
				attr->cap.max_send_sge,
				attr->cap.max_inline_data,
				attr->cap.max_recv_wr, attr->cap.max_recv_sge,
				strerror(ret));
		goto err_free;
	}
	ret = gaudi_ring_map(pd->context, &qp->sq, resp.sq_mmap_key,
			     resp.sq_mmap_len, resp.sq_log_size,
			     resp.sq_wqe_size);
	if (ret)
		goto err_destroy;
	/* a QP on an SRQ has no RQ (rq_mmap_len 0): qp->rq stays unmapped */
	if (!attr->srq || resp.rq_mmap_len)
		ret = gaudi_ring_map(pd->context, &qp->rq, resp.rq_mmap_key,
				     resp.rq_mmap_len, resp.rq_log_size,
				     GAUDI_WQE_SIZE);
	if (ret)
		goto err_unmap;
	qp->sq_prod = gaudi_load_acquire(&qp->sq.hdr->prod);
	if (qp->rq.map)
		qp->rq_prod = gaudi_load_acquire(&qp->rq.hdr->prod);
	gaudi_clamp_caps(qp, &attr->cap);
	gaudi_obj_get(pd->context);
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

/*
 * ibv_create_qp_ex(): what ibv_create_qp() has (a PD, no create flags),
 * plus the work request API (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, qpex.c)
 * with the operations the engine has.  Anything more (XRC, TSO, atomics,
 * memory windows, ...) is EOPNOTSUPP.
 */
static struct ibv_qp *gaudi_create_qp_ex(struct ibv_context *context,
					 struct ibv_qp_init_attr_ex *attr)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	bool wr_api = attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	struct ibv_qp *ibqp;

	if ((attr->comp_mask & ~known) ||
	    !(attr->comp_mask & IBV_QP_INIT_ATTR_PD) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (wr_api && !gaudi_qpex_ops_supported(attr->qp_type,
						  attr->send_ops_flags))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	/* struct ibv_qp_init_attr is the head of struct ibv_qp_init_attr_ex */
	ibqp = gaudi_create_qp(attr->pd, (struct ibv_qp_init_attr *)attr);
	if (ibqp && wr_api)
		gaudi_qpex_init(container_of(ibqp, struct gaudi_qp, vqp.qp),
				attr->send_ops_flags);
	return ibqp;
}

static int gaudi_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	struct ibv_query_qp cmd = {};
	int ret;

	ret = ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
			       sizeof(cmd));
	if (ret)
		return ret;
	gaudi_clamp_caps(qp, &attr->cap);
	gaudi_clamp_caps(qp, &init_attr->cap);
	return 0;
}

/*
 * Take @ibqp's completions not yet polled out of its CQs, as mlx4 and
 * mlx5 do when a QP is reset or destroyed: once the call returns, a poll
 * sees nothing of the QP as it was.  A consumer may free the contexts of
 * a destroyed QP's work requests at once, as libfabric's rxm frees a
 * connection's endpoint and then drains the shared CQ.
 */
static void gaudi_qp_clean_cqs(struct ibv_qp *ibqp)
{
	if (ibqp->send_cq)
		gaudi_cq_clean(ibqp->send_cq, ibqp->qp_num);
	if (ibqp->recv_cq && ibqp->recv_cq != ibqp->send_cq)
		gaudi_cq_clean(ibqp->recv_cq, ibqp->qp_num);
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
			gaudi_qp_clean_cqs(ibqp);
			/* the engine emptied the rings */
			qp->sq_prod = gaudi_load_acquire(&qp->sq.hdr->prod);
			if (qp->rq.map)
				qp->rq_prod = gaudi_load_acquire(&qp->rq.hdr->prod);
		}
	}
	return 0;
}

static int gaudi_destroy_qp(struct ibv_qp *ibqp)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	struct ibv_context *ibctx = ibqp->context;
	int ret;

	if (!gaudi_ctx_closed(ibctx)) {
		ret = ibv_cmd_destroy_qp(ibqp);
		if (ret)
			return ret;
		/* the engine writes no more CQEs for it */
		gaudi_qp_clean_cqs(ibqp);
	}
	gaudi_ring_unmap(&qp->sq);
	gaudi_ring_unmap(&qp->rq);
	pthread_spin_destroy(&qp->sq_lock);
	pthread_spin_destroy(&qp->rq_lock);
	free(qp);
	gaudi_obj_put(ibctx);
	return 0;
}

/*
 * Memory windows.  The kernel allocates the window (its first rkey); the
 * engine binds it when a BIND_MW work request reaches it.  A type 1 bind
 * (ibv_bind_mw()) is such a work request with the next rkey, which the
 * window takes at once, as rxe does: if the bind completes in error the
 * caller must not use it.
 */
static struct ibv_mw *gaudi_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;
	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	gaudi_obj_get(pd->context);
	return mw;
}

static int gaudi_dealloc_mw(struct ibv_mw *mw)
{
	struct ibv_context *ibctx = mw->context;
	int ret = gaudi_ctx_closed(ibctx) ? 0 : ibv_cmd_dealloc_mw(mw);

	if (!ret) {
		free(mw);
		gaudi_obj_put(ibctx);
	}
	return ret;
}

static int gaudi_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			 struct ibv_mw_bind *bind)
{
	struct ibv_send_wr wr = {
		.wr_id = bind->wr_id,
		.opcode = IBV_WR_BIND_MW,
		.send_flags = bind->send_flags,
		.bind_mw = {
			.mw = mw,
			.rkey = ibv_inc_rkey(mw->rkey),
			.bind_info = bind->bind_info,
		},
	};
	struct ibv_send_wr *bad;
	int ret;

	if (qp->qp_type != IBV_QPT_RC && qp->qp_type != IBV_QPT_UC)
		return EINVAL;
	ret = gaudi_post_send(qp, &wr, &bad);
	if (!ret)
		mw->rkey = wr.bind_mw.rkey;
	return ret;
}

/*
 * Sharing objects between processes (ibv_import_device(), _pd(), _mr()):
 * an imported context is a second verbs context on the same kernel
 * context (the command file descriptor is shared), so rings it maps and
 * objects it makes belong to that one.  A PD needs nothing of the
 * provider but its handle, which the kernel checks whenever a command
 * uses it; an MR is looked up (ibv_cmd_query_mr()).  Unimporting frees
 * only this process's view.
 */
static struct ibv_pd *gaudi_import_pd(struct ibv_context *context,
				      uint32_t pd_handle)
{
	struct gaudi_pd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	pd->ibv_pd.context = context;
	pd->ibv_pd.handle = pd_handle;
	gaudi_obj_get(context);
	return &pd->ibv_pd;
}

static void gaudi_unimport_pd(struct ibv_pd *ibpd)
{
	struct ibv_context *ibctx = ibpd->context;

	free(to_gpd(ibpd));
	gaudi_obj_put(ibctx);
}

static struct ibv_mr *gaudi_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr = calloc(1, sizeof(*vmr));
	int ret;

	if (!vmr)
		return NULL;
	ret = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	gaudi_obj_get(pd->context);
	return &vmr->ibv_mr;
}

static void gaudi_unimport_mr(struct ibv_mr *mr)
{
	struct ibv_context *ibctx = mr->context;

	free(container_of(mr, struct verbs_mr, ibv_mr));
	gaudi_obj_put(ibctx);
}

static void gaudi_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops gaudi_ctx_ops = {
	.alloc_dm = gaudi_alloc_dm,
	.alloc_mw = gaudi_alloc_mw,
	.alloc_parent_domain = gaudi_alloc_parent_domain,
	.bind_mw = gaudi_bind_mw,
	.alloc_pd = gaudi_alloc_pd,
	.create_ah = gaudi_create_ah,
	.create_cq = gaudi_create_cq,
	.create_cq_ex = gaudi_create_cq_ex,
	.create_qp = gaudi_create_qp,
	.create_qp_ex = gaudi_create_qp_ex,
	.create_srq = gaudi_create_srq,
	.dealloc_mw = gaudi_dealloc_mw,
	.dealloc_pd = gaudi_dealloc_pd,
	.dereg_mr = gaudi_dereg_mr,
	.destroy_ah = gaudi_destroy_ah,
	.destroy_cq = gaudi_destroy_cq,
	.destroy_qp = gaudi_destroy_qp,
	.destroy_srq = gaudi_destroy_srq,
	.free_context = gaudi_free_context,
	.free_dm = gaudi_free_dm,
	.import_dm = gaudi_import_dm,
	.import_mr = gaudi_import_mr,
	.import_pd = gaudi_import_pd,
	.modify_qp = gaudi_modify_qp,
	.modify_srq = gaudi_modify_srq,
	.poll_cq = gaudi_poll_cq,
	.post_recv = gaudi_post_recv,
	.post_send = gaudi_post_send,
	.post_srq_recv = gaudi_post_srq_recv,
	.query_device_ex = gaudi_query_device,
	.query_port = gaudi_query_port,
	.query_qp = gaudi_query_qp,
	.query_srq = gaudi_query_srq,
	.reg_dm_mr = gaudi_reg_dm_mr,
	.reg_dmabuf_mr = gaudi_reg_dmabuf_mr,
	.reg_mr = gaudi_reg_mr,
	.unimport_dm = gaudi_unimport_dm,
	.unimport_mr = gaudi_unimport_mr,
	.unimport_pd = gaudi_unimport_pd,
	.rereg_mr = gaudi_rereg_mr,
	.req_notify_cq = gaudi_req_notify_cq,
	.resize_cq = gaudi_resize_cq,
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
	/* a kernel from before UD leaves these zero: the uAPI's limits */
	ctx->ud_max_sge = resp.ud_max_sge && resp.ud_max_sge <= GAUDI_UD_MAX_SGE ?
			  resp.ud_max_sge : GAUDI_UD_MAX_SGE;
	ctx->ud_max_inline = resp.ud_max_inline &&
			     resp.ud_max_inline <= GAUDI_UD_MAX_INLINE ?
			     resp.ud_max_inline : GAUDI_UD_MAX_INLINE;
	verbs_set_ops(&ctx->ibv_ctx, &gaudi_ctx_ops);
	return &ctx->ibv_ctx;
err:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	return NULL;
}

/*
 * ibv_import_device(): a context on the kernel context behind @cmd_fd,
 * which must have one (the query fails otherwise).  The UD limits are the
 * uAPI's, which are the kernel's.
 */
static struct verbs_context *gaudi_import_context(struct ibv_device *ibdev,
						  int cmd_fd)
{
	struct gaudi_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, NULL);
	if (ret) {
		/* the caller keeps its descriptor */
		ctx->ibv_ctx.context.cmd_fd = -1;
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = ret;
		return NULL;
	}
	ctx->ud_max_sge = GAUDI_UD_MAX_SGE;
	ctx->ud_max_inline = GAUDI_UD_MAX_INLINE;
	verbs_set_ops(&ctx->ibv_ctx, &gaudi_ctx_ops);
	return &ctx->ibv_ctx;
}

static void gaudi_free_context(struct ibv_context *ibctx)
{
	struct gaudi_context *ctx = to_gctx(ibctx);
	int live = atomic_load_explicit(&ctx->live, memory_order_relaxed);

	if (live) {
		/*
		 * Closed with objects open (see gaudi_obj_get()): close the
		 * files, so the kernel destroys the objects now, and keep
		 * the context's memory for their later destroy calls.  It
		 * leaks, as does the device reference.
		 */
		if (getenv("GAUDI_DEBUG"))
			fprintf(stderr,
				"gaudi: %s closed with %d objects open; they are destroyed, the context's memory is kept for them\n",
				ibv_get_device_name(ibctx->device), live);
		atomic_store_explicit(&ctx->closed, true,
				      memory_order_release);
		if (ibctx->cmd_fd >= 0)
			close(ibctx->cmd_fd);
		if (ibctx->async_fd >= 0)
			close(ibctx->async_fd);
		ibctx->cmd_fd = -1;
		ibctx->async_fd = -1;
		return;
	}
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
	.import_context = gaudi_import_context,
};
PROVIDER_DRIVER(gaudi, gaudi_dev_ops);
