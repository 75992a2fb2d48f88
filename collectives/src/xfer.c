/* SPDX-License-Identifier: MIT */
/*
 * Transfers over the libfabric transport (transport.c): eager tagged
 * messages, receiver-driven rendezvous writes (the protocol is described
 * at the top of transport.c), their slots, and the completion queue
 * progress that finishes them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "gc_xfer.h"

#define GC_WRITE_WINDOW 16   /* outstanding writes per transfer */

static void mr_put(struct gc_xfer *x)
{
	if (x->mr) {
		x->mr->users--;
		x->mr = NULL;
	}
}

static gcoll_result_t xfer_mr(struct gcoll_comm *c, struct gc_xfer *x, bool need)
{
	if (x->mr || !need)
		return GCOLL_SUCCESS;
	if (x->own_mr)
		return gc_mr_role(c->tp, x->own_mr, gc_xfer_access(x), &x->mr);
	return gc_mr_lookup(c->tp, x->buf, x->len, gc_xfer_access(x), &x->mr);
}

uint64_t gc_xfer_access(const struct gc_xfer *x)
{
	return x->kind == 0 ? GC_ACC_SRC : GC_ACC_DST;
}

/* ----------------------------------------------------------- transfers */

static fi_addr_t peer_addr(struct gcoll_comm *c, int rail, int peer)
{
	return c->tp->rails[rail].peers[c->tpeer[peer]];
}

/* Source a tagged receive from peer accepts: only that peer when the
 * provider filters by source (FI_DIRECTED_RECV).  The tag names the sender's
 * rank in the communicator, but nothing stops another process - a faulty
 * rank, or one of another communicator with the same id - from sending
 * the same tag. */
static fi_addr_t recv_src(struct gcoll_comm *c, int rail, int peer)
{
	if (!(c->tp->info->caps & FI_DIRECTED_RECV))
		return FI_ADDR_UNSPEC;
	return peer_addr(c, rail, peer);
}

static void xfer_done(struct gc_xfer *x)
{
	if (x->state == GX_ACTIVE)
		x->state = GX_DONE;
}

static void xfer_fail(struct gc_xfer *x, gcoll_result_t e)
{
	if (x->state == GX_ACTIVE || x->state == GX_IDLE) {
		x->state = GX_FAILED;
		x->err = e;
	}
}

void gc_slot_free(struct gc_transport *tp, struct gc_xfer *x)
{
	if (x->has_slot) {
		tp->slots[x->slot] = NULL;
		tp->slots_used--;
		x->has_slot = false;
		free(x->seg_cnt);
		x->seg_cnt = NULL;
	}
}

/* A slot for receiving transfer x (x->nseg set) and its check byte: the
 * slot's generation, which starts at a random value and goes up by one on
 * every allocation.  So the check byte of a new owner differs from the check
 * bytes of the slot's last 255 owners: a write meant for one of them - a
 * late one after an abort, or one for another communicator - never counts
 * for the new one, whatever their communicator ids, peers and sequences.
 * Slots are taken round-robin, so a slot comes back only after the other
 * 65535 have been passed: a stale write could match only after 255 such
 * rounds. */
gcoll_result_t gc_slot_alloc(struct gc_transport *tp, struct gc_xfer *x)
{
	if (tp->slots_used >= GC_NSLOTS - 1)
		return gc_err(GCOLL_ERR_NOMEM,
			      "transport: all %d rendezvous slots in use (too many receives in flight)",
			      GC_NSLOTS - 1);
	if (!tp->slot_gen) {
		tp->slot_gen = malloc(GC_NSLOTS);
		if (!tp->slot_gen)
			return GCOLL_ERR_NOMEM;
		gc_random_fill(tp->slot_gen, GC_NSLOTS);
	}
	memset(x->seg_seen, 0, sizeof(x->seg_seen));
	x->seg_cnt = NULL;
	if (x->nseg > 256) {
		x->seg_cnt = calloc(256, sizeof(*x->seg_cnt));
		if (!x->seg_cnt)
			return GCOLL_ERR_NOMEM;
	}
	for (;;) {
		uint32_t s = tp->slot_hint++ & (GC_NSLOTS - 1);

		if (!tp->slots[s]) {
			tp->slots[s] = x;
			tp->slots_used++;
			x->slot = s;
			x->chk = ++tp->slot_gen[s];
			x->has_slot = true;
			return GCOLL_SUCCESS;
		}
	}
}

/* The descriptor for x->ctrl with access (NULL without FI_MR_LOCAL): a
 * cached registration of its heap page, not held (the xfer lives there). */
static gcoll_result_t ctrl_desc(struct gc_transport *tp, struct gc_xfer *x, uint64_t access,
				void **desc)
{
	struct gc_mr *cm;
	gcoll_result_t rc;

	*desc = NULL;
	if (!tp->mr_local)
		return GCOLL_SUCCESS;
	rc = gc_mr_lookup(tp, &x->ctrl, sizeof(x->ctrl), access, &cm);
	if (rc)
		return rc;
	cm->users--;
	*desc = cm->desc;
	return GCOLL_SUCCESS;
}

/* The receiver's control entry as a tagged send from x->ctrl, for
 * providers whose inject size is smaller than an entry; x stays alive
 * until the send completes (inflight). */
static ssize_t ctrl_send(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	void *desc;
	ssize_t ret;

	if (ctrl_desc(tp, x, GC_ACC_SRC, &desc))
		return -FI_ENOMEM;
	x->c_main.type = GC_CTX_CTRL_SEND;
	ret = fi_tsend(tp->rails[x->rail].ep, &x->ctrl, sizeof(x->ctrl), desc,
		       peer_addr(c, x->rail, x->peer), gc_tag(GC_TAG_CTRL, c->ctx, c->rank, x->seq),
		       &x->c_main);
	if (!ret)
		x->inflight++;
	return ret;
}

/* An eager message: one tagged send or receive. */
static gcoll_result_t eager_advance(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	struct gc_rail *r = &tp->rails[x->rail];
	gcoll_result_t rc;
	ssize_t ret;

	if (x->posted)
		return GCOLL_SUCCESS;
	rc = xfer_mr(c, x, tp->mr_local);
	if (rc)
		return rc;
	if (x->kind == 0) {
		x->c_main.type = GC_CTX_EAGER_SEND;
		ret = fi_tsend(r->ep, x->buf, x->len, x->mr ? x->mr->desc : NULL,
			       peer_addr(c, x->rail, x->peer),
			       gc_tag(GC_TAG_DATA, c->ctx, c->rank, x->seq), &x->c_main);
	} else {
		x->c_main.type = GC_CTX_EAGER_RECV;
		ret = fi_trecv(r->ep, x->buf, x->len, x->mr ? x->mr->desc : NULL,
			       recv_src(c, x->rail, x->peer),
			       gc_tag(GC_TAG_DATA, c->ctx, x->peer, x->seq), 0, &x->c_main);
	}
	if (ret == -FI_EAGAIN)
		return GCOLL_SUCCESS;
	if (ret)
		return gc_fi_err((int)ret, x->kind == 0 ? "fi_tsend" : "fi_trecv");
	x->posted = true;
	x->inflight++;
	return GCOLL_SUCCESS;
}

/* Rendezvous receiver: register, take a slot, inject the control entry. */
static gcoll_result_t rndv_recv_advance(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	struct gc_rail *r = &tp->rails[x->rail];
	gcoll_result_t rc;
	ssize_t ret;

	if (x->posted)
		return GCOLL_SUCCESS;
	if (!x->has_slot) {
		rc = xfer_mr(c, x, true);
		if (rc)
			return rc;
		x->nseg = (x->len + c->wsize - 1) / c->wsize;
		rc = gc_slot_alloc(tp, x);
		if (rc)
			return rc;
		x->ctrl.addr = tp->mr_virt ? (uint64_t)(uintptr_t)x->buf
					   : (uint64_t)((uintptr_t)x->buf - x->mr->base);
		x->ctrl.key = x->mr->key;
		x->ctrl.len = x->len;
		x->ctrl.seq = x->seq;
		x->ctrl.slot = x->slot;
		x->ctrl.wsize = (uint32_t)c->wsize;
		x->ctrl.chk = x->chk;
	}
	if (tp->ctrl_inject)
		ret = fi_tinject(r->ep, &x->ctrl, sizeof(x->ctrl),
				 peer_addr(c, x->rail, x->peer),
				 gc_tag(GC_TAG_CTRL, c->ctx, c->rank, x->seq));
	else
		ret = ctrl_send(c, x);
	if (ret == -FI_EAGAIN)
		return GCOLL_SUCCESS;
	if (ret)
		return gc_fi_err((int)ret, tp->ctrl_inject ? "fi_tinject (rendezvous control)"
					                   : "fi_tsend (rendezvous control)");
	x->posted = true;
	return GCOLL_SUCCESS;
}

/* Rendezvous sender: wait for the control entry, then write the segments,
 * at most GC_WRITE_WINDOW outstanding, striped over the rails. */
static gcoll_result_t rndv_send_advance(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	struct gc_rail *r = &tp->rails[x->rail];
	gcoll_result_t rc;
	ssize_t ret;

	if (!x->posted) {
		void *desc;

		rc = ctrl_desc(tp, x, GC_ACC_MAILBOX, &desc);
		if (rc)
			return rc;
		x->c_main.type = GC_CTX_CTRL_RECV;
		ret = fi_trecv(r->ep, &x->ctrl, sizeof(x->ctrl), desc,
			       recv_src(c, x->rail, x->peer),
			       gc_tag(GC_TAG_CTRL, c->ctx, x->peer, x->seq), 0,
			       &x->c_main);
		if (ret == -FI_EAGAIN)
			return GCOLL_SUCCESS;
		if (ret)
			return gc_fi_err((int)ret, "fi_trecv (rendezvous mailbox)");
		x->posted = true;
		x->inflight++;
		return GCOLL_SUCCESS;
	}
	if (!x->ctrl_ready)
		return GCOLL_SUCCESS;
	if (!x->nseg) {
		if (x->ctrl.len != x->len || x->ctrl.seq != x->seq || !x->ctrl.wsize)
			return gc_err(GCOLL_ERR_INVALID_USAGE,
				      "send to rank %d: receiver expects %llu bytes, sender has %zu (seq %u)",
				      x->peer, (unsigned long long)x->ctrl.len, x->len, x->seq);
		x->nseg = (x->len + x->ctrl.wsize - 1) / x->ctrl.wsize;
		rc = xfer_mr(c, x, tp->mr_local);
		if (rc)
			return rc;
	}
	x->c_write.type = GC_CTX_WRITE;
	while (x->seg_posted < x->nseg &&
	       x->seg_posted - x->seg_done < GC_WRITE_WINDOW) {
		size_t off = x->seg_posted * x->ctrl.wsize;
		size_t n = x->len - off < x->ctrl.wsize ? x->len - off : x->ctrl.wsize;
		int rail = (int)((x->seg_posted + x->seq) % (size_t)tp->nrails);

		ret = fi_writedata(tp->rails[rail].ep, (char *)x->buf + off, n,
				   x->mr ? x->mr->desc : NULL,
				   gc_imm(x->ctrl.chk, x->ctrl.slot, x->seg_posted),
				   peer_addr(c, rail, x->peer), x->ctrl.addr + off, x->ctrl.key,
				   &x->c_write);
		if (ret == -FI_EAGAIN)
			break;
		if (ret)
			return gc_fi_err((int)ret, "fi_writedata");
		x->seg_posted++;
		x->inflight++;
	}
	return GCOLL_SUCCESS;
}

/* Post what is pending for x.  -FI_EAGAIN leaves it for the next call. */
gcoll_result_t gc_xfer_advance(struct gcoll_comm *c, struct gc_xfer *x)
{
	if (x->state != GX_ACTIVE)
		return GCOLL_SUCCESS;
	if (!x->rndv)
		return eager_advance(c, x);
	if (x->kind == 1)
		return rndv_recv_advance(c, x);
	return rndv_send_advance(c, x);
}

gcoll_result_t gc_xfer_start(struct gcoll_comm *c, struct gc_xfer *x)
{
	x->state = GX_ACTIVE;
	x->rail = (int)(x->seq % (uint32_t)c->tp->nrails);
	x->rndv = x->len > c->eager_max;
	x->c_main.x = x;
	x->c_write.x = x;
	x->comm = c;
	return gc_xfer_advance(c, x);
}

void gc_xfer_cancel(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;

	gc_slot_free(tp, x);
	if (x->inflight && x->posted &&
	    (x->c_main.type == GC_CTX_EAGER_RECV || x->c_main.type == GC_CTX_CTRL_RECV))
		fi_cancel(&tp->rails[x->rail].ep->fid, &x->c_main);
	xfer_fail(x, GCOLL_ERR_ABORTED);
}

bool gc_xfer_release(struct gc_transport *tp, struct gc_xfer *x)
{
	gc_slot_free(tp, x);
	mr_put(x);
	return x->inflight == 0;
}

void gc_tp_adopt_zombie(struct gc_transport *tp, struct gc_xfer *x)
{
	x->comm = NULL;
	x->zombie.next = tp->zombies;
	tp->zombies = &x->zombie;
}

/* ------------------------------------------------------------ progress */

static void ctx_finish(struct gc_transport *tp, struct gc_xfer *x)
{
	x->inflight--;
	if (!x->comm && x->inflight == 0)
		gc_tp_free_zombie(tp, &x->zombie);
}

/* Take segment index idx (modulo 256) of x if x still expects one:
 * nseg / 256 segments have each index, one more for the indexes below
 * nseg % 256.  Up to 256 segments, each is taken once. */
static bool seg_take(struct gc_xfer *x, uint32_t idx)
{
	size_t want = (x->nseg >> 8) + (idx < (x->nseg & 0xff));
	uint64_t bit = 1ull << (idx & 63);

	if (x->seg_cnt) {
		if (x->seg_cnt[idx] >= want)
			return false;
		x->seg_cnt[idx]++;
		return true;
	}
	if (!want || (x->seg_seen[idx >> 6] & bit))
		return false;
	x->seg_seen[idx >> 6] |= bit;
	return true;
}

void gc_handle_imm(struct gc_transport *tp, uint32_t imm)
{
	uint32_t slot = (imm >> 8) & 0xffff;
	struct gc_xfer *x = tp->slots[slot];

	/* the slot's owner must be live, the check byte its own and the
	 * segment one it still expects: a write for an aborted transfer, for
	 * a slot since reused or for another communicator, and a segment out
	 * of range or seen before, is counted and dropped */
	if (!x || !x->comm || x->chk != imm >> 24 || !seg_take(x, imm & 0xff)) {
		tp->stray_writes++;
		GC_TRACE("stray rendezvous write imm 0x%08x dropped (%s)", imm,
			 !x || !x->comm ? "slot not in use" : x->chk != imm >> 24 ?
			 "check byte of another owner" : "segment not expected");
		return;
	}
	x->seg_done++;
	if (x->seg_done >= x->nseg) {
		gc_slot_free(tp, x);
		xfer_done(x);
	}
}

static void handle_entry(struct gc_transport *tp, struct fi_cq_data_entry *e)
{
	struct gc_ctx *ctx = e->op_context;
	struct gc_xfer *x;

	if (e->flags & FI_REMOTE_CQ_DATA) {
		gc_handle_imm(tp, (uint32_t)e->data);
		if (tp->rx_cq_data && ctx && ctx->type == GC_CTX_RXPOOL) {
			struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

			tp->rails[b->rail].pool_posted--;
			gc_rail_repost(tp, b);
		}
		return;
	}
	if (!ctx)
		return;
	if (ctx->type == GC_CTX_RXPOOL) {   /* an unexpected untagged message */
		struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

		tp->rails[b->rail].pool_posted--;
		gc_rail_repost(tp, b);
		return;
	}
	x = ctx->x;
	switch (ctx->type) {
	case GC_CTX_EAGER_SEND:
		xfer_done(x);
		break;
	case GC_CTX_EAGER_RECV:
		if (e->len != x->len)
			xfer_fail(x, GCOLL_ERR_INVALID_USAGE);
		else
			xfer_done(x);
		break;
	case GC_CTX_CTRL_RECV:
		x->ctrl_ready = true;
		break;
	case GC_CTX_CTRL_SEND:
		break;
	case GC_CTX_WRITE:
		x->seg_done++;
		if (x->seg_done >= x->nseg)
			xfer_done(x);
		break;
	default:
		return;
	}
	ctx_finish(tp, x);
}

static void handle_error(struct gc_transport *tp, struct fid_cq *cq)
{
	struct fi_cq_err_entry err = { 0 };
	struct gc_ctx *ctx;

	if (fi_cq_readerr(cq, &err, 0) != 1)
		return;
	ctx = err.op_context;
	if (ctx && ctx->type == GC_CTX_RXPOOL) {
		struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

		/* a pool entry ends in error when an unexpected untagged
		 * message lands in it (truncated to 0 bytes): it is as
		 * consumed as by a write and must go back, or a peer sending
		 * GC_RXPOOL such messages drains the pool.  Cancelled means
		 * the endpoint is closing. */
		tp->rails[b->rail].pool_posted--;
		if (err.err != FI_ECANCELED) {
			GC_INFO("transport: rail %d: pool receive ended with %s; reposted",
				b->rail, fi_strerror(err.err));
			gc_rail_repost(tp, b);
		}
		return;
	}
	if (!ctx) {
		if (err.err != FI_ECANCELED)
			gc_log(GC_LOG_ERR, "transport: completion error without owner: %s",
			       fi_strerror(err.err));
		return;
	}
	if (err.err == FI_ECANCELED &&
	    ctx->x->state != GX_ACTIVE && ctx->x->state != GX_IDLE) {
		/* ours: gc_xfer_cancel() failed the transfer before it asked
		 * for the cancel, and the error is on record */
	} else if (err.err == FI_ECANCELED) {
		/* not ours: the provider flushed the operation, as rxm does
		 * when the connection under it breaks */
		xfer_fail(ctx->x, gc_err(GCOLL_ERR_REMOTE,
					 "transport: operation with rank %d cancelled by the provider: its connection to that rank failed (the peer died, or a link on the path went down)",
					 ctx->x->peer));
	} else if (err.err == FI_ETRUNC) {
		xfer_fail(ctx->x, gc_err(GCOLL_ERR_INVALID_USAGE,
					 "transport: message from rank %d truncated (the ranks passed different sizes)",
					 ctx->x->peer));
	} else {
		xfer_fail(ctx->x, gc_err(GCOLL_ERR_REMOTE,
					 "transport: operation with rank %d failed: %s (provider error %d)",
					 ctx->x->peer, fi_strerror(err.err), err.prov_errno));
	}
	ctx_finish(tp, ctx->x);
}

int gc_tp_progress(struct gc_transport *tp)
{
	struct fi_cq_data_entry e[16];
	int total = 0;

	for (int i = 0; i < tp->nrails; i++) {
		if (tp->rails[i].pool_retry)
			gc_rail_retry(tp, &tp->rails[i]);
		for (;;) {
			ssize_t n = fi_cq_read(tp->rails[i].cq, e, 16);

			if (n == -FI_EAVAIL) {
				handle_error(tp, tp->rails[i].cq);
				total++;
				continue;
			}
			if (n <= 0)
				break;
			for (ssize_t k = 0; k < n; k++)
				handle_entry(tp, &e[k]);
			total += (int)n;
			if (n < 16)
				break;
		}
	}
	return total;
}
