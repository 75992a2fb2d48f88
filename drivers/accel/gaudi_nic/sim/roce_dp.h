/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated RoCE v2 engine's data path, shared by its parts (private
 * to sim/): wire formats, the packet and transfer descriptors, and the
 * helpers that the RC path (roce_dp.c) and the UD/GSI path (roce_ud.c)
 * both use.  Everything here runs under gaudi_nic_roce.dp_lock.
 */
#ifndef _GAUDI_NIC_SIM_ROCE_DP_H
#define _GAUDI_NIC_SIM_ROCE_DP_H

#include "roce.h"

/* BTH opcodes of the RC and UD transports. */
enum {
	OP_SEND_FIRST		= 0x00,
	OP_SEND_MIDDLE		= 0x01,
	OP_SEND_LAST		= 0x02,
	OP_SEND_LAST_IMM	= 0x03,
	OP_SEND_ONLY		= 0x04,
	OP_SEND_ONLY_IMM	= 0x05,
	OP_WRITE_FIRST		= 0x06,
	OP_WRITE_MIDDLE		= 0x07,
	OP_WRITE_LAST		= 0x08,
	OP_WRITE_LAST_IMM	= 0x09,
	OP_WRITE_ONLY		= 0x0a,
	OP_WRITE_ONLY_IMM	= 0x0b,
	OP_READ_REQ		= 0x0c,
	OP_READ_RESP_FIRST	= 0x0d,
	OP_READ_RESP_MIDDLE	= 0x0e,
	OP_READ_RESP_LAST	= 0x0f,
	OP_READ_RESP_ONLY	= 0x10,
	OP_ACK			= 0x11,
	OP_FLUSH		= 0x1c,	/* RETH, FETH */
	OP_SEND_LAST_INV	= 0x16,
	OP_SEND_ONLY_INV	= 0x17,
	/* UD transport (0x60 | operation) */
	OP_UD_SEND_ONLY		= 0x64,
	OP_UD_SEND_ONLY_IMM	= 0x65,
};

#define OP_UC		0x20	/* UC opcodes: 0x20 | the RC ones, to 0x2b */
#define BTH_SE		0x80
#define BTH_MIG		0x40
#define BTH_ACKREQ	0x80000000U
#define PSN_MASK	0xffffff

/* AETH syndromes */
#define AETH_ACK	0x1f		/* ACK, no end-to-end credits */
#define AETH_RNR(t)	(0x20 | (t))
#define AETH_NAK_SEQ	0x60
#define AETH_NAK_INV	0x61
#define AETH_NAK_ACC	0x62
#define AETH_NAK_OP	0x63

#define BTH_LEN		12
#define RETH_LEN	16
#define AETH_LEN	4
#define IMM_LEN		4
#define DETH_LEN	8
#define IETH_LEN	4
#define FETH_LEN	4
#define ICRC_LEN	4

/* Extension headers carried by a packet. */
struct gnsim_pkt {
	u8 opcode;		/* the RC operation (UC: without 0x20) */
	u8 se;
	bool ackreq;
	bool uc;		/* UC transport: opcode | OP_UC on the wire */
	u32 psn;
	u32 dqpn;
	u64 va;			/* RETH */
	u32 rkey;		/* RETH; IETH: the rkey to invalidate */
	u32 dmalen;
	u32 aeth;		/* syndrome << 24 | msn */
	u32 qkey;		/* DETH */
	u32 sqpn;
	__be32 imm;
	u32 feth;		/* FLUSH: level << 4 | placement type */
	u32 paylen;
	/* sent by a UD/GSI QP: the datagram's address vector (else NULL) */
	const struct gn_roce_av *av;
	/* received: the payload is at offset @pay_off of the frame's pieces */
	const struct gnsim_mac_roce_frag *frags;
	unsigned int nfrags;
	u32 pay_off;
};

/*
 * The other side of a transfer to or from memory regions (gnsim_mr_io):
 * a linear buffer (GN_IO_TO_BUF: read from the MR), the payload of a
 * received packet (GN_IO_FROM_PKT: written to the MR), or the list of
 * pieces of the MR itself (GN_IO_FRAGS: what the MAC gathers to send,
 * read where it lies as a DMA engine would; no copy), or a linear buffer
 * written to the MR (GN_IO_FROM_BUF: the GRH area of a UD receive).
 */
enum gnsim_io_kind { GN_IO_TO_BUF, GN_IO_FROM_PKT, GN_IO_FRAGS, GN_IO_FROM_BUF };

struct gnsim_io {
	enum gnsim_io_kind kind;
	union {
		u8 *buf;			/* TO_BUF: advances */
		const u8 *src;			/* FROM_BUF: advances */
		struct {			/* FROM_PKT */
			const struct gnsim_pkt *pkt;
			u32 off;		/* payload offset: advances */
		};
		struct {			/* FRAGS */
			struct gnsim_mac_roce_frag *frags;
			unsigned int nfrags;
			unsigned int max;
		};
	};
};

/* A frame being built in r->frame (gnsim_tx_hdr, gnsim_tx_end). */
struct gnsim_txf {
	u8 *bth;
	u8 *payload;
	u32 paylen;
	u32 tlen;		/* BTH to ICRC */
	u32 flen;
	bool v4;
};

static inline bool op_has_reth(u8 op)
{
	return op == OP_WRITE_FIRST || op == OP_WRITE_ONLY ||
	       op == OP_WRITE_ONLY_IMM || op == OP_READ_REQ || op == OP_FLUSH;
}

/* WQEs answered by READ responses: READ, and FLUSH (no data) */
static inline bool gnsim_wqe_is_read(u8 wqe_op)
{
	return wqe_op == GN_ROCE_WQE_READ || wqe_op == GN_ROCE_WQE_FLUSH;
}

static inline bool op_has_imm(u8 op)
{
	return op == OP_SEND_LAST_IMM || op == OP_SEND_ONLY_IMM ||
	       op == OP_WRITE_LAST_IMM || op == OP_WRITE_ONLY_IMM ||
	       op == OP_UD_SEND_ONLY_IMM;
}

/* WQEs the requester runs itself: no packet, no PSN */
static inline bool gnsim_wqe_is_local(u8 wqe_op)
{
	return wqe_op == GN_ROCE_WQE_BIND_MW || wqe_op == GN_ROCE_WQE_LOCAL_INV;
}

static inline bool op_has_ieth(u8 op)
{
	return op == OP_SEND_LAST_INV || op == OP_SEND_ONLY_INV;
}

static inline bool op_is_ud(u8 op)
{
	return op == OP_UD_SEND_ONLY || op == OP_UD_SEND_ONLY_IMM;
}

static inline bool op_has_aeth(u8 op)
{
	return op == OP_READ_RESP_FIRST || op == OP_READ_RESP_LAST ||
	       op == OP_READ_RESP_ONLY || op == OP_ACK;
}

static inline u32 op_ext_len(u8 op)
{
	return (op_has_reth(op) ? RETH_LEN : 0) +
	       (op_is_ud(op) ? DETH_LEN : 0) +
	       (op_has_imm(op) ? IMM_LEN : 0) +
	       (op_has_ieth(op) ? IETH_LEN : 0) +
	       (op == OP_FLUSH ? FETH_LEN : 0) +
	       (op_has_aeth(op) ? AETH_LEN : 0);
}

/* Signed distance a - b between 24-bit PSNs. */
static inline s32 psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

/*
 * The TX skb an engine is handing to the cable on this CPU (gnsim_tx_end),
 * which the receiving engine's hook takes instead of copying the frame.
 */
DECLARE_PER_CPU(struct sk_buff *, gnsim_rdp_handoff);
/* Smaller frames (ACKs, READ requests) are cheaper to copy. */
#define GN_RR_HANDOFF_MIN	512
/*
 * Frames the receive pipeline queues by reference: smaller ones (an 8 B
 * ping-pong) are faster processed at once than handed to another CPU.
 */
#define GN_RR_PIPELINE_MIN	1024
/*
 * A frame in a reference skb (gnsim_rdp_rx_ref_skb()): this record, then its
 * headers (@hlen bytes, padded to 8), in the head; its @npieces payload
 * pieces are the next page fragments.
 */
struct gnsim_rr_rec {
	u16 hlen;
	u16 npieces;
	u32 flen;
};

#define GN_RR_REC_SIZE(hlen)	(sizeof(struct gnsim_rr_rec) + ALIGN(hlen, 8))
#define GN_RR_REF_HEAD		(GN_RR_TRAIN_MAX * GN_RR_REC_SIZE(GN_RR_HDR_MAX))

/* roce_dp.c: memory, completions, QP state */
struct gnsim_rmr *gnsim_mr_get(struct gaudi_nic_roce *r, u32 key, u32 pdn);
/* roce_mw.c */
bool gnsim_key_is_mw(u32 key);
struct gnsim_rmr *gnsim_mw_resolve(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
				   u32 key, u64 va, u64 len, u32 acc);
bool gnsim_mw_remote_inv(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u32 key);
int gnsim_mw_local_op(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		      const struct gn_roce_wqe *w);
bool gnsim_mr_covers(struct gnsim_rmr *mr, u64 va, u64 len);
int gnsim_mr_io(struct gnsim_rmr *mr, u64 va, u32 len, struct gnsim_io *io);
int gnsim_sge_io(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u32 pdn,
		 const struct gn_roce_wqe *w, u32 off, u32 len, struct gnsim_io *io);
u32 gnsim_wqe_len(const struct gn_roce_wqe *w);
void gnsim_cq_push(struct gaudi_nic_roce *r, struct gnsim_rcq *cq,
		   const struct gn_roce_cqe *cqe, bool solicited);
void gnsim_cqe_inv(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u64 wr_id,
		   u32 len, u32 rkey, bool solicited);
void gnsim_cqe(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, struct gnsim_rcq *cq,
	       u64 wr_id, u8 opcode, u8 status, u32 len, bool has_imm,
	       __be32 imm, bool solicited);
u8 gnsim_sq_cqe_op(u8 wqe_op);
void gnsim_sq_set_cons(struct gnsim_rqp *qp);
void gnsim_rq_set_cons(struct gnsim_rqp *qp);
void gnsim_rq_consume(struct gnsim_rqp *qp);
bool gnsim_rq_has_wqe(struct gnsim_rqp *qp);
int gnsim_wq_posted(struct gnsim_rring *ring, u32 cons);
int gnsim_sq_posted(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_qp_stop_timer(struct gnsim_rqp *qp);
void gnsim_qp_flush(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_req_fail(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u8 status);

/* roce_tx.c: transmit */
extern struct sk_buff_head gnsim_ref_pool;	/* see its definition */
#define GN_REF_POOL_MAX		512
#define GN_SKB_REF		1	/* cb[2] of a reference skb */
struct sk_buff *gnsim_rdp_skb_alloc(void);
void gnsim_rdp_skb_free(struct sk_buff *skb);
bool gnsim_rdp_ref_reset(struct sk_buff *skb);
u32 gnsim_icrc(const u8 *l3, bool v4, const u8 *bth, u32 tlen);
int gnsim_tx_hdr_len(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		     const struct gn_roce_av *path, u8 op);
void gnsim_tx(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
	      const struct gnsim_pkt *p);
int gnsim_tx_mem(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		 const struct gnsim_pkt *p, int hl, const struct gn_roce_wqe *w,
		 u32 off, struct gnsim_rmr *mr, u64 va);
void gnsim_tx_hdr_only(struct gaudi_nic_roce *r, struct gnsim_rqp *qp,
		       struct gnsim_pkt *p);
void gnsim_tx_train_flush(struct gaudi_nic_roce *r);
void gnsim_rdp_xmit1(struct gnsim_rport *pt, const u8 *f, u32 len, u32 flags);
void gnsim_send_ack(struct gaudi_nic_roce *r, struct gnsim_rqp *qp, u8 syndrome,
		    u32 psn);

/* roce_req.c: requester */
void gnsim_req_send(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_req_rewind(struct gnsim_rqp *qp);
void gnsim_req_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
		  struct gnsim_rqp *qp, const struct gnsim_pkt *p);

/* roce_resp.c: responder */
bool gnsim_resp_take_rwqe(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_resp_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
		   struct gnsim_rqp *qp, const struct gnsim_pkt *p);
bool gnsim_rdp_reads_run(struct gaudi_nic_roce *r, bool *paused);

/* roce_ud.c: UD and GSI */
void gnsim_ud_send(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_ud_rx(struct gaudi_nic_roce *r, struct gnsim_rport *pt,
		 const u8 *l3, bool v4, const struct gnsim_pkt *p, u32 flen);

#endif /* _GAUDI_NIC_SIM_ROCE_DP_H */
