// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libgaudi: shared receive queues.
 *
 * An SRQ is a ring of receive WQEs (struct gaudi_wqe, GAUDI_WQE_RECV)
 * mapped from the kernel (struct gaudi_create_srq_resp).  Posting writes
 * the entries and publishes the producer index (release); the engine
 * takes WQEs from it for every RC or UD QP created on the SRQ, so no
 * doorbell is needed.  Those QPs have no receive queue of their own.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gaudi.h"

static struct gaudi_srq *to_gsrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct gaudi_srq, vsrq.srq);
}

struct ibv_srq *gaudi_create_srq(struct ibv_pd *pd,
				 struct ibv_srq_init_attr *attr)
{
	struct ugaudi_create_srq_resp resp = {};
	struct ibv_create_srq cmd = {};
	struct gaudi_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd, sizeof(cmd),
				 &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	ret = gaudi_ring_map(pd->context, &srq->ring, resp.srq_mmap_key,
			     resp.srq_mmap_len, resp.log_size, GAUDI_WQE_SIZE);
	if (ret)
		goto err_destroy;
	/* the kernel's answer (ibv_cmd_create_srq() updated attr) */
	srq->max_sge = attr->attr.max_sge;
	srq->srqn = resp.srqn;
	srq->prod = gaudi_load_acquire(&srq->ring.hdr->prod);
	gaudi_obj_get(pd->context);
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	pthread_spin_destroy(&srq->lock);
	free(srq);
	errno = ret;
	return NULL;
}

/*
 * IBV_SRQ_LIMIT arms the limit event.  IBV_SRQ_MAX_WR resizes: under the
 * SRQ lock (nothing is posted meanwhile) the kernel moves the WQEs not
 * yet taken to the first slots of a new ring and describes it in @resp;
 * the old ring is then dropped.  If the new ring cannot be mapped the
 * SRQ is lost (EIO): the engine already reads it.
 */
int gaudi_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		     int attr_mask)
{
	struct gaudi_srq *srq = to_gsrq(ibsrq);
	struct gaudi_resize_srq_resp resp = {};
	struct ugaudi_modify_srq cmd = {};
	struct gaudi_ring ring = {}, old;
	int ret;

	if (!(attr_mask & IBV_SRQ_MAX_WR))
		return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
					  sizeof(cmd.ibv_cmd));
	cmd.resp_addr = (uintptr_t)&resp;
	pthread_spin_lock(&srq->lock);
	ret = ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd.ibv_cmd,
				 sizeof(cmd));
	if (!ret && gaudi_ring_map(ibsrq->context, &ring, resp.srq_mmap_key,
				   resp.srq_mmap_len, resp.log_size,
				   GAUDI_WQE_SIZE))
		ret = EIO;
	if (!ret) {
		old = srq->ring;
		srq->ring = ring;
		srq->prod = resp.prod;
		gaudi_ring_unmap(&old);
	}
	pthread_spin_unlock(&srq->lock);
	return ret;
}

int gaudi_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd = {};

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int gaudi_destroy_srq(struct ibv_srq *ibsrq)
{
	struct gaudi_srq *srq = to_gsrq(ibsrq);
	struct ibv_context *ibctx = ibsrq->context;
	int ret;

	/* EBUSY while a QP uses it: the SRQ stays as it was */
	ret = gaudi_ctx_closed(ibctx) ? 0 : ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;
	gaudi_ring_unmap(&srq->ring);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	gaudi_obj_put(ibctx);
	return 0;
}

/*
 * Receive work requests into the ring.  Each WQE is built in a private
 * copy and written whole; the consumer index (the engine's) is read once
 * per call.  A full ring gives ENOMEM, too many SGEs EINVAL, with
 * *bad_wr the first request not posted; the ones before it are posted.
 */
int gaudi_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr)
{
	struct gaudi_srq *srq = to_gsrq(ibsrq);
	uint32_t start, used;
	int ret = 0;

	pthread_spin_lock(&srq->lock);
	start = srq->prod;
	used = srq->prod - gaudi_load_acquire(&srq->ring.hdr->cons);
	for (; wr; wr = wr->next) {
		struct gaudi_wqe w;
		int i;

		if (used >= srq->ring.size) {
			ret = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_sge ||
		    wr->num_sge > GAUDI_MAX_SGE) {
			ret = EINVAL;
			break;
		}
		memset(&w, 0, sizeof(w));
		w.wr_id = wr->wr_id;
		w.opcode = GAUDI_WQE_RECV;
		w.num_sge = wr->num_sge;
		for (i = 0; i < wr->num_sge; i++) {
			w.data.sge[i].addr = wr->sg_list[i].addr;
			w.data.sge[i].length = wr->sg_list[i].length;
			w.data.sge[i].lkey = wr->sg_list[i].lkey;
		}
		memcpy(gaudi_ring_entry(&srq->ring, srq->prod), &w, sizeof(w));
		srq->prod++;
		used++;
	}
	if (ret)
		*bad_wr = wr;
	if (srq->prod != start)
		gaudi_store_release(&srq->ring.hdr->prod, srq->prod);
	pthread_spin_unlock(&srq->lock);
	return ret;
}
