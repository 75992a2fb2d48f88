// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi: the work request API of extended QPs (ibv_qp_ex, ibv_wr_*).
 *
 * A builder (wr_send, wr_rdma_write, ...) starts a work request, setters
 * give its address (wr_set_ud_addr) and data (wr_set_sge*,
 * wr_set_inline_data*).  The request is kept as the struct ibv_send_wr
 * post_send would take and becomes a WQE through post_send's own builder
 * (gaudi_build_send) when the next request starts or at wr_complete: one
 * WQE format, one set of checks, for both APIs.  WQEs go into the ring
 * unpublished; wr_complete publishes the batch and rings the doorbell
 * once.  wr_abort, and an error anywhere in the batch (an operation not
 * enabled at create, too many SGEs, inline data too long, a UD address on
 * an RC QP, a full ring, a QP not yet in RTS), drop the whole batch: the producer index goes
 * back to its value at wr_start, so the engine sees none of it (mlx5
 * rolls back the same way); wr_complete returns the first error.
 * Inline data is copied when its setter is called, as the API requires.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaudi.h"

static struct gaudi_qp *to_gqpx(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct gaudi_qp, vqp.qp_ex);
}

static void wr_fail(struct gaudi_wr_state *s, int err)
{
	if (!s->err)
		s->err = err;
}

/* The request being built into the ring, unpublished. */
static void wr_put(struct gaudi_qp *qp)
{
	struct gaudi_wr_state *s = &qp->wr;
	union gaudi_swqe u;
	struct gaudi_wqe *w = &u.w;
	int ret;

	if (!s->open)
		return;
	s->open = false;
	if (s->err)
		return;
	if (s->cur.opcode == IBV_WR_FLUSH) {
		/* only here: ibv_post_send() has no FLUSH */
		memset(w, 0, sizeof(*w));
		w->wr_id = s->cur.wr_id;
		w->opcode = GAUDI_WQE_FLUSH;
		w->rkey = s->cur.wr.rdma.rkey;
		w->remote_addr = s->cur.wr.rdma.remote_addr;
		w->data.flush.length = s->flush_len;
		w->data.flush.type = s->flush_type;
		w->data.flush.level = s->flush_level;
		if (s->cur.send_flags & IBV_SEND_SIGNALED)
			w->flags |= GAUDI_WQE_F_SIGNALED;
		if (s->cur.send_flags & IBV_SEND_FENCE)
			w->flags |= GAUDI_WQE_F_FENCE;
		ret = 0;
	} else {
		ret = gaudi_build_send(qp, &u, &s->cur);
	}
	if (!ret)
		ret = gaudi_sq_put(qp, &u);
	if (ret) {
		wr_fail(s, ret);
		return;
	}
	if (qp->ud)
		s->db_ah = s->cur.wr.ud.ah;
}

/* A builder: the next request, if @op was enabled at create. */
static struct ibv_send_wr *wr_begin(struct ibv_qp_ex *ibqp, uint64_t op,
				    enum ibv_wr_opcode opcode)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);
	struct gaudi_wr_state *s = &qp->wr;

	wr_put(qp);
	if (!(s->ops & op)) {
		wr_fail(s, EINVAL);
		return NULL;
	}
	memset(&s->cur, 0, sizeof(s->cur));
	s->cur.wr_id = ibqp->wr_id;
	/* inline is what the data setter says, not a flag */
	s->cur.send_flags = ibqp->wr_flags & ~IBV_SEND_INLINE;
	s->cur.opcode = opcode;
	s->open = true;
	return &s->cur;
}

/* A setter: the request being built, or NULL (and an error) if none. */
static struct ibv_send_wr *wr_cur(struct gaudi_qp *qp)
{
	if (qp->wr.open)
		return &qp->wr.cur;
	wr_fail(&qp->wr, EINVAL);
	return NULL;
}

static void gaudi_wr_send(struct ibv_qp_ex *ibqp)
{
	wr_begin(ibqp, IBV_QP_EX_WITH_SEND, IBV_WR_SEND);
}

static void gaudi_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct ibv_send_wr *wr = wr_begin(ibqp, IBV_QP_EX_WITH_SEND_WITH_IMM,
					  IBV_WR_SEND_WITH_IMM);

	if (wr)
		wr->imm_data = imm_data;
}

static void wr_rdma(struct ibv_qp_ex *ibqp, uint64_t op,
		    enum ibv_wr_opcode opcode, uint32_t rkey,
		    uint64_t remote_addr, __be32 imm_data)
{
	struct ibv_send_wr *wr = wr_begin(ibqp, op, opcode);

	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	wr->imm_data = imm_data;
}

static void gaudi_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE, rkey,
		remote_addr, 0);
}

static void gaudi_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, __be32 imm_data)
{
	wr_rdma(ibqp, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr, imm_data);
}

static void gaudi_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			       uint64_t remote_addr)
{
	wr_rdma(ibqp, IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ, rkey,
		remote_addr, 0);
}

/*
 * Builders of operations the engine does not have: never enabled (create
 * refuses them), so calling one is an error of the batch.
 */
static void wr_not_enabled(struct ibv_qp_ex *ibqp)
{
	wr_begin(ibqp, 0, IBV_WR_SEND);
}

static void gaudi_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, uint64_t compare,
				    uint64_t swap)
{
	wr_not_enabled(ibqp);
}

static void gaudi_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				      uint64_t remote_addr, uint64_t add)
{
	wr_not_enabled(ibqp);
}

/* A memory window bind: its own request, no data setter follows. */
static void gaudi_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			     uint32_t rkey,
			     const struct ibv_mw_bind_info *bind_info)
{
	struct ibv_send_wr *wr = wr_begin(ibqp, IBV_QP_EX_WITH_BIND_MW,
					  IBV_WR_BIND_MW);

	if (!wr)
		return;
	wr->bind_mw.mw = mw;
	wr->bind_mw.rkey = rkey;
	wr->bind_mw.bind_info = *bind_info;
}

static void gaudi_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct ibv_send_wr *wr = wr_begin(ibqp, IBV_QP_EX_WITH_LOCAL_INV,
					  IBV_WR_LOCAL_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void gaudi_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t rkey)
{
	struct ibv_send_wr *wr = wr_begin(ibqp, IBV_QP_EX_WITH_SEND_WITH_INV,
					  IBV_WR_SEND_WITH_INV);

	if (wr)
		wr->invalidate_rkey = rkey;
}

static void gaudi_wr_send_tso(struct ibv_qp_ex *ibqp, void *hdr,
			      uint16_t hdr_sz, uint16_t mss)
{
	wr_not_enabled(ibqp);
}

static void gaudi_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t remote_addr, const void *atomic_wr)
{
	wr_not_enabled(ibqp);
}

/*
 * RDMA FLUSH of global visibility over a range or the whole MR; the
 * engine has no persistent memory, so a persistent one fails at the
 * responder (no MR has that access).
 */
static void gaudi_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			   uint64_t remote_addr, size_t len, uint8_t type,
			   uint8_t level)
{
	struct gaudi_wr_state *s = &to_gqpx(ibqp)->wr;
	struct ibv_send_wr *wr;

	if ((type != IBV_FLUSH_GLOBAL && type != IBV_FLUSH_PERSISTENT) ||
	    (level != IBV_FLUSH_RANGE && level != IBV_FLUSH_MR)) {
		wr_put(to_gqpx(ibqp));
		wr_fail(s, EINVAL);
		return;
	}
	wr = wr_begin(ibqp, IBV_QP_EX_WITH_FLUSH, IBV_WR_FLUSH);
	if (!wr)
		return;
	wr->wr.rdma.rkey = rkey;
	wr->wr.rdma.remote_addr = remote_addr;
	s->flush_len = len;
	s->flush_type = type;
	s->flush_level = level;
}

static void gaudi_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp, uint32_t srqn)
{
	/* no XRC QPs */
	wr_fail(&to_gqpx(ibqp)->wr, EINVAL);
}

static void gaudi_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
				 uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);
	struct ibv_send_wr *wr = wr_cur(qp);

	if (!wr)
		return;
	if (!qp->ud) {
		wr_fail(&qp->wr, EINVAL);
		return;
	}
	/* gaudi_build_ud_send() checks the AH */
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = remote_qpn;
	wr->wr.ud.remote_qkey = remote_qkey;
}

static void gaudi_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				  const struct ibv_sge *sg_list)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);
	struct ibv_send_wr *wr = wr_cur(qp);

	if (!wr)
		return;
	if (num_sge > qp->max_send_sge || num_sge > GAUDI_MAX_SGE) {
		wr_fail(&qp->wr, EINVAL);
		return;
	}
	memcpy(qp->wr.sge, sg_list, num_sge * sizeof(*sg_list));
	wr->sg_list = qp->wr.sge;
	wr->num_sge = num_sge;
	wr->send_flags &= ~IBV_SEND_INLINE;
}

static void gaudi_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			     uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	gaudi_wr_set_sge_list(ibqp, 1, &sge);
}

/* Inline data: copied now, into one buffer the WQE builder gathers. */
static void gaudi_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					  size_t num_buf,
					  const struct ibv_data_buf *buf)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);
	struct ibv_send_wr *wr = wr_cur(qp);
	size_t i, n = 0;

	if (!wr)
		return;
	if (wr->opcode == IBV_WR_RDMA_READ) {
		wr_fail(&qp->wr, EINVAL);
		return;
	}
	for (i = 0; i < num_buf; i++) {
		if (buf[i].length > qp->max_inline - n ||
		    buf[i].length > sizeof(qp->wr.inl) - n) {
			wr_fail(&qp->wr, EINVAL);
			return;
		}
		memcpy(qp->wr.inl + n, buf[i].addr, buf[i].length);
		n += buf[i].length;
	}
	qp->wr.sge[0].addr = (uintptr_t)qp->wr.inl;
	qp->wr.sge[0].length = n;
	qp->wr.sge[0].lkey = 0;
	wr->sg_list = qp->wr.sge;
	wr->num_sge = 1;
	wr->send_flags |= IBV_SEND_INLINE;
}

static void gaudi_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				     size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	gaudi_wr_set_inline_data_list(ibqp, 1, &buf);
}

static void gaudi_wr_start(struct ibv_qp_ex *ibqp)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);

	pthread_spin_lock(&qp->sq_lock);
	qp->wr.start = qp->sq_prod;
	qp->wr.err = 0;
	qp->wr.open = false;
	qp->wr.db_ah = NULL;
}

static int gaudi_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);
	struct gaudi_wr_state *s = &qp->wr;
	int ret;

	wr_put(qp);
	ret = s->err;
	if (!ret && qp->sq_prod != s->start && !gaudi_sq_ready(qp))
		ret = EINVAL;
	if (ret) {
		if (getenv("GAUDI_DEBUG"))
			fprintf(stderr,
				"gaudi: wr_complete: %s; the batch of %u WQEs is dropped\n",
				strerror(ret), qp->sq_prod - s->start);
		qp->sq_prod = s->start;
	} else {
		ret = gaudi_sq_doorbell(qp, s->start, s->db_ah);
	}
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

static void gaudi_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct gaudi_qp *qp = to_gqpx(ibqp);

	qp->wr.open = false;
	qp->sq_prod = qp->wr.start;
	pthread_spin_unlock(&qp->sq_lock);
}

/* A QP created with send_ops_flags @ops: ibv_qp_to_qp_ex() gives this. */
void gaudi_qpex_init(struct gaudi_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *q = &qp->vqp.qp_ex;

	qp->wr.ops = ops;
	q->wr_start = gaudi_wr_start;
	q->wr_complete = gaudi_wr_complete;
	q->wr_abort = gaudi_wr_abort;
	q->wr_send = gaudi_wr_send;
	q->wr_send_imm = gaudi_wr_send_imm;
	q->wr_rdma_write = gaudi_wr_rdma_write;
	q->wr_rdma_write_imm = gaudi_wr_rdma_write_imm;
	q->wr_rdma_read = gaudi_wr_rdma_read;
	q->wr_atomic_cmp_swp = gaudi_wr_atomic_cmp_swp;
	q->wr_atomic_fetch_add = gaudi_wr_atomic_fetch_add;
	q->wr_bind_mw = gaudi_wr_bind_mw;
	q->wr_local_inv = gaudi_wr_local_inv;
	q->wr_send_inv = gaudi_wr_send_inv;
	q->wr_send_tso = gaudi_wr_send_tso;
	q->wr_atomic_write = gaudi_wr_atomic_write;
	q->wr_flush = gaudi_wr_flush;
	q->wr_set_ud_addr = gaudi_wr_set_ud_addr;
	q->wr_set_xrc_srqn = gaudi_wr_set_xrc_srqn;
	q->wr_set_sge = gaudi_wr_set_sge;
	q->wr_set_sge_list = gaudi_wr_set_sge_list;
	q->wr_set_inline_data = gaudi_wr_set_inline_data;
	q->wr_set_inline_data_list = gaudi_wr_set_inline_data_list;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}
