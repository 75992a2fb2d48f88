// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi posting: work requests turned into WQEs in the engine's format
 * (SGEs, inline data, UD address vectors, MW binds), written to the
 * mapped send and receive rings, and the send doorbell.  The extended
 * post API (qpex.c) builds its WQEs with the same functions, and one
 * table (gaudi_send_ops[]) says which send operations exist on which QP.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ccan/array_size.h>

#include "gaudi.h"

static void gaudi_copy_sge(struct gaudi_sge *dst, const struct ibv_sge *sg,
			   int num_sge)
{
	int i;

	for (i = 0; i < num_sge; i++) {
		dst[i].addr = sg[i].addr;
		dst[i].length = sg[i].length;
		dst[i].lkey = sg[i].lkey;
	}
}

static int gaudi_fill_sge(struct gaudi_wqe *w, const struct ibv_sge *sg,
			  int num_sge)
{
	if (num_sge < 0 || num_sge > GAUDI_MAX_SGE)
		return EINVAL;
	gaudi_copy_sge(w->data.sge, sg, num_sge);
	w->num_sge = num_sge;
	return 0;
}

/* Gather @sg into @dst (at most @max bytes); the length into *len. */
static int gaudi_gather_inline(uint8_t *dst, uint32_t max, uint32_t *len,
			       const struct ibv_sge *sg, int num_sge)
{
	uint32_t n = 0;
	int i;

	if (num_sge < 0 || num_sge > GAUDI_MAX_SGE)
		return EINVAL;
	for (i = 0; i < num_sge; i++) {
		if (sg[i].length > max - n)
			return EINVAL;
		memcpy(dst + n, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		n += sg[i].length;
	}
	*len = n;
	return 0;
}

static int gaudi_fill_inline(struct gaudi_wqe *w, const struct ibv_sge *sg,
			     int num_sge)
{
	int ret;

	ret = gaudi_gather_inline(w->data.inline_data, GAUDI_MAX_INLINE,
				  &w->inline_len, sg, num_sge);
	if (!ret)
		w->flags |= GAUDI_WQE_F_INLINE;
	return ret;
}

/* The WQE flags of @wr's send flags. */
static uint8_t gaudi_send_flags(const struct ibv_send_wr *wr)
{
	uint8_t f = 0;

	if (wr->send_flags & IBV_SEND_SIGNALED)
		f |= GAUDI_WQE_F_SIGNALED;
	if (wr->send_flags & IBV_SEND_SOLICITED)
		f |= GAUDI_WQE_F_SOLICITED;
	if (wr->send_flags & IBV_SEND_FENCE)
		f |= GAUDI_WQE_F_FENCE;
	return f;
}

/* The QP types of the table below. */
enum {
	GAUDI_ON_RC = 1 << 0,
	GAUDI_ON_UC = 1 << 1,
	GAUDI_ON_UD = 1 << 2,
	GAUDI_ON_ALL = GAUDI_ON_RC | GAUDI_ON_UC | GAUDI_ON_UD,
};

/* What a send WQE takes from its work request besides the opcode. */
enum {
	GAUDI_OP_IMM = 1 << 0,		/* imm_data */
	GAUDI_OP_RDMA = 1 << 1,		/* wr.rdma: remote address and rkey */
	GAUDI_OP_INV = 1 << 2,		/* invalidate_rkey */
	GAUDI_OP_INLINE = 1 << 3,	/* its data may be inline */
};

/*
 * The engine's send operations, the one place that says which verbs
 * opcode becomes which WQE, on which QP types, enabled by which flag of
 * an extended QP, with which fields.  post_send (gaudi_build_send), the
 * ibv_wr_* API (through it) and the check of an extended QP's operations
 * at create (gaudi_qpex_ops_supported) all read it.  An opcode without an
 * entry (the atomics, TSO, ATOMIC_WRITE) is not the engine's; FLUSH has
 * one for the extended API only, as ibv_post_send() has no FLUSH.
 */
static const struct gaudi_send_op {
	uint64_t qpex;		/* IBV_QP_EX_WITH_*; 0: no entry */
	uint8_t wqe;		/* GAUDI_WQE_* */
	uint8_t on;		/* GAUDI_ON_*: the QP types that have it */
	uint8_t takes;		/* GAUDI_OP_* */
} gaudi_send_ops[] = {
	[IBV_WR_SEND] = { IBV_QP_EX_WITH_SEND, GAUDI_WQE_SEND,
			  GAUDI_ON_ALL, GAUDI_OP_INLINE },
	[IBV_WR_SEND_WITH_IMM] = { IBV_QP_EX_WITH_SEND_WITH_IMM,
				   GAUDI_WQE_SEND_IMM, GAUDI_ON_ALL,
				   GAUDI_OP_IMM | GAUDI_OP_INLINE },
	[IBV_WR_RDMA_WRITE] = { IBV_QP_EX_WITH_RDMA_WRITE, GAUDI_WQE_WRITE,
				GAUDI_ON_RC | GAUDI_ON_UC,
				GAUDI_OP_RDMA | GAUDI_OP_INLINE },
	[IBV_WR_RDMA_WRITE_WITH_IMM] = {
		IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, GAUDI_WQE_WRITE_IMM,
		GAUDI_ON_RC | GAUDI_ON_UC,
		GAUDI_OP_RDMA | GAUDI_OP_IMM | GAUDI_OP_INLINE },
	/* the data of a READ is where it lands: never inline */
	[IBV_WR_RDMA_READ] = { IBV_QP_EX_WITH_RDMA_READ, GAUDI_WQE_READ,
			       GAUDI_ON_RC, GAUDI_OP_RDMA },
	[IBV_WR_SEND_WITH_INV] = { IBV_QP_EX_WITH_SEND_WITH_INV,
				   GAUDI_WQE_SEND_INV, GAUDI_ON_RC,
				   GAUDI_OP_INV | GAUDI_OP_INLINE },
	[IBV_WR_LOCAL_INV] = { IBV_QP_EX_WITH_LOCAL_INV, GAUDI_WQE_LOCAL_INV,
			       GAUDI_ON_RC | GAUDI_ON_UC, GAUDI_OP_INV },
	[IBV_WR_BIND_MW] = { IBV_QP_EX_WITH_BIND_MW, GAUDI_WQE_BIND_MW,
			     GAUDI_ON_RC | GAUDI_ON_UC, 0 },
	[IBV_WR_FLUSH] = { IBV_QP_EX_WITH_FLUSH, GAUDI_WQE_FLUSH,
			   GAUDI_ON_RC, 0 },
};

static unsigned int gaudi_qpt_bit(enum ibv_qp_type type)
{
	switch (type) {
	case IBV_QPT_RC:
		return GAUDI_ON_RC;
	case IBV_QPT_UC:
		return GAUDI_ON_UC;
	case IBV_QPT_UD:
		return GAUDI_ON_UD;
	default:
		return 0;
	}
}

/* Whether an extended QP of @type can have every operation of @ops. */
bool gaudi_qpex_ops_supported(enum ibv_qp_type type, uint64_t ops)
{
	unsigned int on = gaudi_qpt_bit(type);
	uint64_t have = 0;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(gaudi_send_ops); i++)
		if (gaudi_send_ops[i].on & on)
			have |= gaudi_send_ops[i].qpex;
	return on && !(ops & ~have);
}

/*
 * @wr's entry for @qp, or NULL and *@err: EOPNOTSUPP for an opcode the
 * engine does not have (on UD, everything but the sends: its UD path
 * has nothing else), EINVAL for one the QP's transport does not define
 * (READ and SEND_WITH_INV on UC).  FLUSH is the extended API's alone.
 */
static const struct gaudi_send_op *gaudi_send_op(const struct gaudi_qp *qp,
						 const struct ibv_send_wr *wr,
						 int *err)
{
	const struct gaudi_send_op *op;

	*err = EOPNOTSUPP;
	if ((unsigned int)wr->opcode >= ARRAY_SIZE(gaudi_send_ops) ||
	    wr->opcode == IBV_WR_FLUSH)
		return NULL;
	op = &gaudi_send_ops[wr->opcode];
	if (!op->qpex)
		return NULL;
	if (!(op->on & gaudi_qpt_bit(qp->vqp.qp.qp_type))) {
		if (!qp->ud)
			*err = EINVAL;
		return NULL;
	}
	return op;
}

/*
 * A UD send (@op: SEND or SEND with immediate) to the AH's address
 * vector, QPN and Q_Key (GAUDI_QKEY_USE_QP: the QP's own), in a struct
 * gaudi_ud_wqe whatever the SQ's stride: a 128-byte SQ takes its first
 * half, which is why qp->max_send_sge and max_inline are smaller there.
 * A message longer than the path MTU is the engine's to refuse
 * (IBV_WC_LOC_LEN_ERR).
 */
static int gaudi_build_ud_send(struct gaudi_qp *qp, struct gaudi_ud_wqe *w,
			       const struct gaudi_send_op *op,
			       const struct ibv_send_wr *wr)
{
	const struct gaudi_ah *ah;
	int ret;

	w->opcode = op->wqe;
	if (op->takes & GAUDI_OP_IMM)
		w->imm_data = wr->imm_data;
	if (!wr->wr.ud.ah || wr->wr.ud.ah->context != qp->vqp.qp.context)
		return EINVAL;
	ah = container_of(wr->wr.ud.ah, struct gaudi_ah, ibv_ah);
	if (!ah->av.network)	/* the kernel gave no address vector */
		return EOPNOTSUPP;
	w->av = ah->av;
	w->dest_qpn = wr->wr.ud.remote_qpn;
	w->qkey = wr->wr.ud.remote_qkey;
	w->flags |= gaudi_send_flags(wr);
	if (wr->send_flags & IBV_SEND_INLINE) {
		ret = gaudi_gather_inline(w->inline_data,
					  qp->max_inline, &w->inline_len,
					  wr->sg_list, wr->num_sge);
		if (!ret)
			w->flags |= GAUDI_WQE_F_INLINE;
		return ret;
	}
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->max_send_sge)
		return EINVAL;
	gaudi_copy_sge(w->sge, wr->sg_list, wr->num_sge);
	w->num_sge = wr->num_sge;
	return 0;
}

/*
 * A memory window bind (RC): the engine checks the MW, the MR and the
 * range.  The window's access is remote read and write only (local
 * access is the MR's business and ignored); zero-based windows and
 * remote atomics (atomic_cap NONE) are not supported.
 */
static int gaudi_build_bind(struct gaudi_wqe *w, const struct ibv_send_wr *wr)
{
	const struct ibv_mw_bind_info *bi = &wr->bind_mw.bind_info;

	if (!wr->bind_mw.mw || (bi->mw_access_flags & IBV_ACCESS_REMOTE_ATOMIC))
		return EINVAL;
	if (bi->mw_access_flags & IBV_ACCESS_ZERO_BASED)
		return EOPNOTSUPP;
	if (bi->length && !bi->mr)
		return EINVAL;
	w->opcode = GAUDI_WQE_BIND_MW;
	w->rkey = wr->bind_mw.rkey;
	w->data.bind.addr = bi->addr;
	w->data.bind.length = bi->length;
	w->data.bind.mr_lkey = bi->mr ? bi->mr->lkey : 0;
	if (bi->mw_access_flags & IBV_ACCESS_REMOTE_WRITE)
		w->data.bind.access |= GAUDI_MW_REMOTE_WRITE;
	if (bi->mw_access_flags & IBV_ACCESS_REMOTE_READ)
		w->data.bind.access |= GAUDI_MW_REMOTE_READ;
	w->flags |= gaudi_send_flags(wr);
	return 0;
}

/*
 * A send WQE for @wr into @s (a private copy: nothing reaches the ring
 * unless this succeeds), its opcode and fields as gaudi_send_ops[] says.
 */
int gaudi_build_send(struct gaudi_qp *qp, union gaudi_swqe *s,
		     const struct ibv_send_wr *wr)
{
	const struct gaudi_send_op *op;
	struct gaudi_wqe *w = &s->w;
	int ret;

	op = gaudi_send_op(qp, wr, &ret);
	if (!op)
		return ret;
	if (qp->ud) {
		memset(&s->ud, 0, sizeof(s->ud));
		s->ud.wr_id = wr->wr_id;
		return gaudi_build_ud_send(qp, &s->ud, op, wr);
	}
	memset(w, 0, sizeof(*w));
	w->wr_id = wr->wr_id;
	if (wr->opcode == IBV_WR_BIND_MW)
		return gaudi_build_bind(w, wr);
	w->opcode = op->wqe;
	w->flags |= gaudi_send_flags(wr);
	if (op->takes & GAUDI_OP_IMM)
		w->imm_data = wr->imm_data;
	if (op->takes & GAUDI_OP_INV)
		w->rkey = wr->invalidate_rkey;
	if (op->takes & GAUDI_OP_RDMA) {
		w->remote_addr = wr->wr.rdma.remote_addr;
		w->rkey = wr->wr.rdma.rkey;
	}
	if (wr->opcode == IBV_WR_LOCAL_INV)	/* no data */
		return 0;
	if ((wr->send_flags & IBV_SEND_INLINE) && (op->takes & GAUDI_OP_INLINE))
		return gaudi_fill_inline(w, wr->sg_list, wr->num_sge);
	return gaudi_fill_sge(w, wr->sg_list, wr->num_sge);
}

/*
 * Sends need RTS or a later state (SQD, SQE; ERR flushes them), as the
 * kernel requires of its own QPs.  ibv_modify_qp() keeps the state.
 */
bool gaudi_sq_ready(struct gaudi_qp *qp)
{
	return qp->vqp.qp.state >= IBV_QPS_RTS;
}

/*
 * Append @s to the SQ, unpublished (under sq_lock); ENOMEM when full.
 * The SQ's stride says how much of @s is the WQE.
 */
int gaudi_sq_put(struct gaudi_qp *qp, const union gaudi_swqe *s)
{
	uint32_t cons = gaudi_load_acquire(&qp->sq.hdr->cons);

	if (qp->sq_prod - cons >= qp->sq.size)
		return ENOMEM;
	memcpy(gaudi_ring_entry(&qp->sq, qp->sq_prod), s, qp->sq.stride);
	qp->sq_prod++;
	return 0;
}

/*
 * Publish the WQEs put since the producer index was @start and ring the
 * doorbell once for them (under sq_lock): an empty post_send command.
 * For a UD QP the core looks up the WR's AH, so @ah names one just put.
 */
int gaudi_sq_doorbell(struct gaudi_qp *qp, uint32_t start, struct ibv_ah *ah)
{
	struct ibv_send_wr db = { .opcode = IBV_WR_SEND };
	struct ibv_send_wr *bad;

	if (qp->sq_prod == start)
		return 0;
	gaudi_store_release(&qp->sq.hdr->prod, qp->sq_prod);
	db.wr.ud.ah = ah;
	return ibv_cmd_post_send(&qp->vqp.qp, &db, &bad) ? EIO : 0;
}

int gaudi_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			   struct ibv_send_wr **bad_wr)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	struct ibv_ah *db_ah = NULL;
	uint32_t start;
	int ret = 0, db;

	pthread_spin_lock(&qp->sq_lock);
	start = qp->sq_prod;
	for (; wr; wr = wr->next) {
		union gaudi_swqe w;

		/* an opcode the engine lacks is EOPNOTSUPP in any state */
		ret = gaudi_build_send(qp, &w, wr);
		if (!ret && !gaudi_sq_ready(qp))
			ret = EINVAL;
		if (!ret)
			ret = gaudi_sq_put(qp, &w);
		if (ret)
			break;
		if (qp->ud)
			db_ah = wr->wr.ud.ah;
	}
	if (ret) {
		*bad_wr = wr;
		if (getenv("GAUDI_DEBUG"))
			fprintf(stderr,
				"gaudi: post_send: opcode %d: %s (prod %u cons %u size %u)\n",
				wr->opcode, strerror(ret), qp->sq_prod,
				gaudi_load_acquire(&qp->sq.hdr->cons),
				qp->sq.size);
	}
	db = gaudi_sq_doorbell(qp, start, db_ah);
	if (db && !ret)
		ret = db;
	pthread_spin_unlock(&qp->sq_lock);
	return ret;
}

int gaudi_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct gaudi_qp *qp = container_of(ibqp, struct gaudi_qp, vqp.qp);
	uint32_t start;
	int ret = 0;

	/*
	 * a QP on an SRQ: its receives are posted to the SRQ.  None in
	 * RESET (the engine empties the rings on the way out of it), as for
	 * kernel QPs.
	 */
	if (!qp->rq.map || ibqp->state == IBV_QPS_RESET) {
		*bad_wr = wr;
		return EINVAL;
	}
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
