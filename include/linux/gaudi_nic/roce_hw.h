/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_nic RoCE v2 engine: the hardware interface.
 *
 * This header is the only contract between the RDMA driver (gaudi_ib.ko)
 * and the on-die RoCE engine (emulated in drivers/accel/gaudi_nic/sim/).
 * Replacing the emulator with silicon must not change the driver, so
 * everything the driver may do to the engine is one of:
 *
 *  - a mailbox command (gaudi_nic_roce_cmd()): synchronous, like firmware
 *    commands on real NICs; creates/modifies/destroys contexts (CQ, QP,
 *    MR) and configures ports (MAC, MTU, GIDs);
 *  - a doorbell (gaudi_nic_roce_doorbell()): a 32-bit posted register
 *    write that tells the engine to look at a ring again or arms a CQ;
 *  - memory the engine reads and writes by DMA address: work queue rings,
 *    completion queue rings, page lists (PBLs), data buffers;
 *  - an event (the handler given to gaudi_nic_roce_enable()): completion
 *    events, asynchronous QP/CQ errors.  It is called in atomic context
 *    (like an interrupt handler) and must not sleep.
 *
 * All multi-byte fields of in-memory formats are little endian, except
 * the immediate data, which is kept in network order as on the wire.
 *
 * Loopback.  A frame a port sends to its own MAC address is not put on
 * the cable: the engine receives it itself, as rxe and mlx5 do, so both
 * ends of a connection may be on one port.
 *
 * Rings.  Every ring (SQ, RQ, CQ) is one buffer, described by a PBL of
 * PAGE_SIZE pages: a 128-byte header (struct gn_roce_ring_hdr) followed by
 * 2^log_size entries of a power-of-two stride.  Producer and consumer
 * indices are free-running u32 values (slot = index & (size - 1)); each
 * lives in its own cache line.  For work queues the driver (or user
 * space, through an mmap of the ring) owns @prod and the engine owns
 * @cons; for CQs the engine owns @prod and the consumer owns @cons.  The
 * producer writes the entry, then (release) the index.
 */
#ifndef _LINUX_GAUDI_NIC_ROCE_HW_H
#define _LINUX_GAUDI_NIC_ROCE_HW_H

#include <linux/bits.h>
#include <linux/types.h>

struct gaudi_nic_dev;
struct gaudi_nic_roce;

/* ------------------------------------------------------------ limits */
#define GN_ROCE_MAX_QP		1024	/* QPN 0 and 1 are reserved (GSI) */
#define GN_ROCE_MIN_QPN		2
#define GN_ROCE_MAX_CQ		1024
#define GN_ROCE_MAX_SRQ		1024
#define GN_ROCE_MAX_MR		8192	/* MR index; key = index << 8 | tag */
#define GN_ROCE_MAX_MW		4096	/* MW key = (MAX_MR + index) << 8 | tag */
#define GN_ROCE_MAX_PD		65536
/*
 * 16384 WQEs per work queue (a 2 MiB ring), rxe's max_qp_wr: perftest's UD
 * and UC tests post as many receives as iterations, up to 16000, and do
 * not look at max_qp_wr first
 */
#define GN_ROCE_MAX_WQ_LOG	14
#define GN_ROCE_MAX_CQ_LOG	18	/* 2^18 CQEs per CQ (all usable) */
#define GN_ROCE_MAX_SGE		6
#define GN_ROCE_MAX_INLINE	96
#define GN_ROCE_MAX_MSG		BIT(31)
#define GN_ROCE_MAX_RD_ATOM	16
#define GN_ROCE_MAX_GID		16	/* per port */
#define GN_ROCE_MAX_PBL_PAGES	BIT(19)		/* PAGE_SIZE pages per MR */
#define GN_ROCE_UD_MAX_SGE	4	/* 128-byte UD/GSI send WQEs: the AV */
#define GN_ROCE_UD_MAX_INLINE	64	/* takes room (gn_roce_ud_wqe) */
#define GN_ROCE_UD_WQE_SIZE	256	/* GN_ROCE_QPF_UD_WQE256 */
#define GN_ROCE_UD_WQE256_MAX_INLINE	192
#define GN_ROCE_GRH_SIZE	40	/* UD/GSI receive: GRH area first */

/*
 * Reserved lkey of privileged (kernel) QPs (GN_ROCE_QPF_PRIV): the SGE
 * address is a DMA address of the engine's device, not an MR address, as
 * a PD's local_dma_lkey.  Any other QP using it gets a protection error.
 */
#define GN_ROCE_LOCAL_DMA_LKEY	0
/* Q_Keys: QP1's well-known one; in a send WQE, MSB set = the QP's own. */
#define GN_ROCE_GSI_QKEY	0x80010000U
#define GN_ROCE_QKEY_USE_QP	0x80000000U
#define GN_ROCE_GSI_QPN		1	/* wire QPN of every port's GSI QP */

/* ------------------------------------------------------------- rings */
struct gn_roce_ring_hdr {
	__le32 prod;
	__le32 rsvd0[15];
	__le32 cons;
	__le32 rsvd1[15];
};

#define GN_ROCE_RING_HDR_SIZE	128
#define GN_ROCE_WQE_SIZE	128	/* SQ and RQ stride */
#define GN_ROCE_CQE_SIZE	32

/* Scatter/gather element: a DMA range covered by a local MR (lkey). */
struct gn_roce_sge {
	__le64 addr;
	__le32 length;
	__le32 lkey;
};

/*
 * Address vector of a UD/GSI send WQE (struct gn_roce_wqe ud.av): where
 * the datagram goes and from which local GID, resolved by the driver.
 * @port is informational (the QP's port is used); @network is
 * GN_ROCE_GID_V2_IPV4 or _IPV6 and must match the source GID's type.
 */
struct gn_roce_av {
	u8 port;
	u8 sgid_index;
	u8 hop_limit;
	u8 traffic_class;
	__le32 flow_label;
	u8 dmac[6];
	u8 network;
	u8 rsvd;		/* non-zero: GN_ROCE_CQE_LOC_QP_OP_ERR */
	u8 dgid[16];
};

/* Work request opcodes (gn_roce_wqe.opcode). */
enum gn_roce_wqe_op {
	GN_ROCE_WQE_SEND		= 0,
	GN_ROCE_WQE_SEND_IMM		= 1,
	GN_ROCE_WQE_WRITE		= 2,
	GN_ROCE_WQE_WRITE_IMM		= 3,
	GN_ROCE_WQE_READ		= 4,
	GN_ROCE_WQE_SEND_INV		= 5,	/* rkey: the one to invalidate */
	GN_ROCE_WQE_BIND_MW		= 6,	/* RC only; bind (below) */
	GN_ROCE_WQE_LOCAL_INV		= 7,	/* rkey: a type 2 MW's */
	GN_ROCE_WQE_FLUSH		= 10,	/* RC; rkey, remote_addr, flush */
	GN_ROCE_WQE_RECV		= 8,	/* RQ entries */
	GN_ROCE_WQE_NOP			= 15,
};

/* gn_roce_wqe.flags */
#define GN_ROCE_WQE_F_SIGNALED	0x01	/* always write a CQE */
#define GN_ROCE_WQE_F_INLINE	0x02	/* data in inline_data[], length */
#define GN_ROCE_WQE_F_SOLICITED	0x04
#define GN_ROCE_WQE_F_FENCE	0x08

/*
 * A work queue entry, GN_ROCE_WQE_SIZE bytes.  Without F_SIGNALED a
 * successful SQ WQE produces no CQE (the QP was created with
 * sq_sig_all = 0); errors always do.
 *
 * Send WQEs of UD and GSI QPs (SEND, SEND_IMM only) carry the remote
 * Q_Key (GN_ROCE_QKEY_USE_QP: the QP's own), the destination QPN and an
 * address vector; their SGEs or inline data follow it (ud.sge[],
 * ud.inline_data[]).
 *
 * Memory windows.  BIND_MW (num_sge 0) binds the MW of @rkey's index to
 * @rkey (its new key: same index, any tag) over bind.addr .. + bind.length
 * of the MR bind.mr_lkey, which must be in the QP's PD, have
 * GN_ROCE_MR_MW_BIND and cover the range, and GN_ROCE_MR_LOCAL_WRITE if
 * bind.access grants remote write.  A type 1 MW may be rebound at any
 * time, and a zero length unbinds it; a type 2 MW must be unbound (free)
 * and is then bound to this QP: only requests arriving on it may use the
 * window.  LOCAL_INV unbinds the type 2 MW of @rkey (PD of the QP); a
 * SEND_INV message does the same at the responder once it is received,
 * for a type 2 MW bound to the receiving QP.  These run when the WQE is
 * reached, complete in order, and fail with MW_BIND_ERR (BIND_MW) or
 * LOC_QP_OP_ERR (LOCAL_INV).  An MR and an MW key never collide: MW
 * indices follow the MR ones.
 *
 * FLUSH (IBA 1.5 RDMA FLUSH, BTH opcode 0x1c, RETH and FETH) asks the
 * responder to make what was written to @rkey's MR visible (placement
 * type GLOBAL; PERSISTENT needs an MR with GN_ROCE_MR_FLUSH_PERSIST,
 * which nothing registers), over the range or the whole MR (level).  It
 * is ordered and answered like a READ of nothing (one READ response
 * without payload); a QP without GN_ROCE_ACC_FLUSH or an MR without the
 * type's access bit gives a remote access error.  A UD message is at most one path MTU (the port's
 * active MTU): longer ones complete with LOC_LEN_ERR.  Receive WQEs are
 * the same for every QP type; on UD and GSI QPs the first
 * GN_ROCE_GRH_SIZE bytes of the SGEs receive the GRH area (see
 * GN_ROCE_CQE_F_GRH), the payload follows.
 */
struct gn_roce_wqe {
	__le64 wr_id;
	u8 opcode;
	u8 flags;
	u8 num_sge;
	u8 rsvd0;
	__be32 imm;			/* SEND_IMM, WRITE_IMM */
	__le32 inline_len;		/* F_INLINE: bytes in inline_data */
	union {
		__le32 rkey;		/* RC: WRITE*, READ */
		__le32 qkey;		/* UD/GSI send */
	};
	union {
		__le64 remote_addr;	/* RC: WRITE*, READ */
		struct {
			__le32 dest_qpn;	/* UD/GSI send */
			__le32 rsvd1;
		};
	};
	union {
		struct gn_roce_sge sge[GN_ROCE_MAX_SGE];
		u8 inline_data[GN_ROCE_MAX_INLINE];
		struct {		/* FLUSH */
			__le64 length;	/* FLUSH_RANGE: the range */
			u8 type;	/* GN_ROCE_FLUSH_GLOBAL / _PERSISTENT */
			u8 level;	/* GN_ROCE_FLUSH_RANGE / _MR */
			u8 rsvd[6];
		} flush;
		struct {		/* BIND_MW */
			__le64 addr;
			__le64 length;
			__le32 mr_lkey;
			__le32 access;	/* GN_ROCE_MR_REMOTE_* */
		} bind;
		struct {
			struct gn_roce_av av;
			union {
				struct gn_roce_sge sge[GN_ROCE_UD_MAX_SGE];
				u8 inline_data[GN_ROCE_UD_MAX_INLINE];
			};
		} ud;
	};
};

/*
 * UD and GSI send WQEs.  A UD or GSI QP created with GN_ROCE_QPF_UD_WQE256
 * has a send queue of GN_ROCE_UD_WQE_SIZE-byte entries in this format:
 * GN_ROCE_MAX_SGE SGEs or GN_ROCE_UD_WQE256_MAX_INLINE bytes of inline
 * data after the address vector, the limits of every other QP type.
 * Without the flag its entries are GN_ROCE_WQE_SIZE bytes, the first half
 * of this format (struct gn_roce_wqe's ud member), with room for
 * GN_ROCE_UD_MAX_SGE SGEs or GN_ROCE_UD_MAX_INLINE bytes.  @qkey,
 * @dest_qpn, the AV and the data are at the same offsets in both.
 */
struct gn_roce_ud_wqe {
	__le64 wr_id;
	u8 opcode;			/* SEND or SEND_IMM */
	u8 flags;
	u8 num_sge;
	u8 rsvd0;
	__be32 imm;
	__le32 inline_len;
	__le32 qkey;
	__le32 dest_qpn;
	__le32 rsvd1;
	struct gn_roce_av av;
	union {
		struct gn_roce_sge sge[GN_ROCE_MAX_SGE];
		u8 inline_data[GN_ROCE_UD_WQE256_MAX_INLINE];
	};
};

/* Completion opcodes (gn_roce_cqe.opcode). */
enum gn_roce_cqe_op {
	GN_ROCE_CQE_SEND		= 0,
	GN_ROCE_CQE_WRITE		= 1,
	GN_ROCE_CQE_READ		= 2,
	GN_ROCE_CQE_BIND_MW		= 3,
	GN_ROCE_CQE_LOCAL_INV		= 4,
	GN_ROCE_CQE_FLUSH		= 5,
	GN_ROCE_CQE_RECV		= 8,
	GN_ROCE_CQE_RECV_WRITE_IMM	= 9,
};

/* Completion status (gn_roce_cqe.status); the ib_wc_status order. */
enum gn_roce_cqe_status {
	GN_ROCE_CQE_OK			= 0,
	GN_ROCE_CQE_LOC_LEN_ERR		= 1,
	GN_ROCE_CQE_LOC_QP_OP_ERR	= 2,
	GN_ROCE_CQE_LOC_PROT_ERR	= 4,
	GN_ROCE_CQE_WR_FLUSH_ERR	= 5,
	GN_ROCE_CQE_MW_BIND_ERR		= 6,
	GN_ROCE_CQE_BAD_RESP_ERR	= 7,
	GN_ROCE_CQE_LOC_ACCESS_ERR	= 8,
	GN_ROCE_CQE_REM_INV_REQ_ERR	= 9,
	GN_ROCE_CQE_REM_ACCESS_ERR	= 10,
	GN_ROCE_CQE_REM_OP_ERR		= 11,
	GN_ROCE_CQE_RETRY_EXC_ERR	= 12,
	GN_ROCE_CQE_RNR_RETRY_EXC_ERR	= 13,
	GN_ROCE_CQE_GENERAL_ERR		= 21,
};

/*
 * gn_roce_cqe.flags.  F_GRH: a UD/GSI receive; byte_len counts the
 * GN_ROCE_GRH_SIZE bytes of the GRH area, which holds the IPv6 header
 * (F_IPV6) or, for IPv4, 20 zero bytes and then the IPv4 header (as
 * union rdma_network_hdr).  @src_qp is the sender's QPN (DETH).
 */
#define GN_ROCE_CQE_F_IMM	0x01	/* imm is valid */
#define GN_ROCE_CQE_F_GRH	0x02
#define GN_ROCE_CQE_F_IPV6	0x04
#define GN_ROCE_CQE_F_INV	0x08	/* imm: the rkey a SEND_INV invalidated */

/* A completion queue entry, GN_ROCE_CQE_SIZE bytes. */
struct gn_roce_cqe {
	__le64 wr_id;
	__le32 byte_len;
	__be32 imm;
	__le32 qpn;		/* the engine's QP number (GSI: not 1) */
	u8 opcode;
	u8 status;
	u8 flags;
	u8 rsvd0;
	__le32 vendor_err;
	__le32 src_qp;		/* F_GRH */
};

/* ---------------------------------------------------------- doorbells */
/*
 * A doorbell is one 32-bit write: type in bits 31..28, object number in
 * bits 23..0.  SQ: the engine re-reads the SQ producer index.  RQ: only
 * needed in the error state (posted receives are flushed).  CQ_ARM and
 * CQ_ARM_SOL request one completion event for the next CQE written after
 * the doorbell (any / solicited or in error); CQEs already in the ring do
 * not raise it, so consumers poll once more after arming.
 *
 * It may be rung in any context, hard interrupt and interrupts off
 * included, and never blocks.  Like a write into a doorbell FIFO, it is
 * posted: the engine may take it after the call returns (the emulator
 * does, for a doorbell rung with interrupts off), and then sees the ring
 * entries written before the doorbell.  An arm taken late raises its
 * event at once if the ring then holds CQEs not consumed yet: a CQE
 * written between the doorbell and its taking is not missed, at the cost
 * of a possible spurious event.
 */
#define GN_ROCE_DB_SQ		0x1
#define GN_ROCE_DB_RQ		0x2
#define GN_ROCE_DB_CQ_ARM	0x3
#define GN_ROCE_DB_CQ_ARM_SOL	0x4
#define GN_ROCE_DB(type, num)	(((u32)(type) << 28) | ((num) & 0xffffff))

/* ------------------------------------------------------------ contexts */
/*
 * A ring or MR is described to the engine by a page list: @npages DMA
 * addresses (__le64 each, PAGE_SIZE aligned, PAGE_SIZE each) stored in a
 * physically contiguous, DMA-able buffer at @pbl.  The engine reads the
 * list when the context is created; the driver may free it afterwards.
 */
struct gn_roce_pbl {
	__le64 pbl;
	__le32 npages;
	__le32 rsvd;
};

/*
 * RESIZE_CQ moves a CQ to the new ring of @ring/@log_size at once: the
 * CQEs written and not consumed (up to the old ring's cons) are copied to
 * its first slots, its prod is their count and its cons 0; -EINVAL if
 * they do not fit.  The old ring is no longer written.
 */
struct gn_roce_cq_ctx {
	struct gn_roce_pbl ring;
	u8 log_size;
	u8 rsvd[7];
};

/* QP states: the ib_qp_state order. */
enum gn_roce_qp_state {
	GN_ROCE_QPS_RESET	= 0,
	GN_ROCE_QPS_INIT	= 1,
	GN_ROCE_QPS_RTR		= 2,
	GN_ROCE_QPS_RTS		= 3,
	GN_ROCE_QPS_SQD		= 4,
	GN_ROCE_QPS_SQE		= 5,
	GN_ROCE_QPS_ERR		= 6,
};

/*
 * QP types: the ib_qp_type order.  A GSI QP is created with its port in
 * @port; it receives the port's datagrams for QPN 1 (GN_ROCE_GSI_QPN),
 * sends with source QPN 1 and checks GN_ROCE_GSI_QKEY.  One per port.
 *
 * UC QPs are connected like RC ones but unreliable (IBTA UC, BTH opcodes
 * 0x20 | the RC operation): SEND, SEND_IMM, WRITE, WRITE_IMM, BIND_MW and
 * LOCAL_INV.  A send WQE completes once its packets are sent; nothing is
 * acknowledged or retried.  The responder silently drops a message that
 * arrives out of sequence, lacks a receive WQE, or fails its rkey, range
 * or access checks (and counts it in rx_drops); only a receive WQE it
 * cannot use (bad lkey) moves it to ERR.
 */
#define GN_ROCE_QPT_GSI		1
#define GN_ROCE_QPT_RC		2
#define GN_ROCE_QPT_UC		3	/* see below */
#define GN_ROCE_QPT_UD		4

/* gn_roce_qp_ctx.flags (CREATE_QP only) */
#define GN_ROCE_QPF_PRIV	0x01	/* kernel QP: may use LOCAL_DMA_LKEY */
#define GN_ROCE_QPF_SRQ		0x02	/* receives from SRQ @srqn, no RQ */
#define GN_ROCE_QPF_UD_WQE256	0x04	/* UD, GSI: SQ of gn_roce_ud_wqe */

/* gn_roce_qp_ctx.access (remote access granted to the peer) */
#define GN_ROCE_ACC_REMOTE_WRITE	0x1
#define GN_ROCE_ACC_REMOTE_READ		0x2
#define GN_ROCE_ACC_FLUSH		0x4	/* RDMA FLUSH requests */

/*
 * QP context.  CREATE_QP takes the whole context (state RESET); MODIFY_QP
 * takes a context plus a mask of GN_ROCE_QPC_* bits naming the fields to
 * take from it.  The driver validates transitions and attributes (the
 * engine refuses nonsense with -EINVAL but does not second-guess the
 * IBTA state table).  @path_mtu is 256 << (path_mtu - 1) bytes, as
 * enum ib_mtu.  @timeout is the IBTA local ACK timeout exponent
 * (4.096 us << timeout; 0 means no timeout), @min_rnr_timer the IBTA
 * RNR timer encoding.  dgid is the remote RoCE v2 GID (IPv4-mapped or
 * IPv6), sgid_index the local GID table index (SET_GID).
 */
struct gn_roce_qp_ctx {
	__le32 qpn;
	u8 state;
	u8 type;
	u8 port;
	u8 sq_sig_all;
	__le32 pdn;
	__le32 dest_qpn;
	__le32 sq_psn;
	__le32 rq_psn;
	__le32 sq_cqn;
	__le32 rq_cqn;
	__le32 access;
	u8 path_mtu;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 timeout;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 sgid_index;
	u8 dmac[6];
	u8 hop_limit;
	u8 traffic_class;
	__le32 flow_label;
	u8 dgid[16];
	u8 sq_log_size;
	u8 rq_log_size;
	u8 flags;
	u8 rsvd0;
	__le32 qkey;		/* UD, GSI */
	struct gn_roce_pbl sq;
	struct gn_roce_pbl rq;		/* unused with GN_ROCE_QPF_SRQ */
	__le32 srqn;			/* GN_ROCE_QPF_SRQ */
	__le32 rsvd1;
};

#define GN_ROCE_QPC_STATE	0x0001
#define GN_ROCE_QPC_ACCESS	0x0002
#define GN_ROCE_QPC_PORT	0x0004
#define GN_ROCE_QPC_AV		0x0008	/* dmac, dgid, sgid_index, hop... */
#define GN_ROCE_QPC_PATH_MTU	0x0010
#define GN_ROCE_QPC_DEST_QPN	0x0020
#define GN_ROCE_QPC_RQ_PSN	0x0040
#define GN_ROCE_QPC_SQ_PSN	0x0080
#define GN_ROCE_QPC_TIMEOUT	0x0100
#define GN_ROCE_QPC_RETRY	0x0200	/* retry_cnt */
#define GN_ROCE_QPC_RNR_RETRY	0x0400
#define GN_ROCE_QPC_MIN_RNR	0x0800
#define GN_ROCE_QPC_RD_ATOMIC	0x1000	/* max_rd_atomic */
#define GN_ROCE_QPC_DEST_RD_AT	0x2000	/* max_dest_rd_atomic */
#define GN_ROCE_QPC_QKEY	0x4000

struct gn_roce_modify_qp {
	__le32 mask;
	__le32 rsvd;
	struct gn_roce_qp_ctx ctx;
};

/*
 * Shared receive queue: a ring of receive WQEs (GN_ROCE_WQE_SIZE stride,
 * the RQ format) of protection domain @pdn.  QPs created with
 * GN_ROCE_QPF_SRQ take their receive WQEs from it, in ring order, each
 * consumed (cons advanced) when a message starts to arrive for it;
 * their own RQ does not exist.  @limit (ib_srq_attr.srq_limit): when
 * non-zero, the engine raises GN_ROCE_EV_SRQ_LIMIT once the posted WQEs
 * are fewer than @limit, and disarms it (limit 0).  ARM_SRQ sets it.
 * An SRQ is destroyed only once no QP uses it (-EBUSY).
 * RESIZE_SRQ moves it to the new ring of @ring/@log_size (@pdn and @limit
 * must be 0): the WQEs posted and not taken are copied to its first
 * slots, then the engine sets its cons to 0 and its prod to their count
 * (-EINVAL if they do not fit); the old ring is no longer read.
 */
struct gn_roce_srq_ctx {
	struct gn_roce_pbl ring;
	__le32 pdn;
	__le32 limit;
	u8 log_size;
	u8 rsvd[7];
};

/* gn_roce_mr_ctx.access */
#define GN_ROCE_MR_LOCAL_WRITE		0x1
#define GN_ROCE_MR_REMOTE_WRITE		0x2
#define GN_ROCE_MR_REMOTE_READ		0x4
#define GN_ROCE_MR_MW_BIND		0x8	/* memory windows may bind to it */
#define GN_ROCE_MR_FLUSH_GLOBAL		0x10	/* FLUSH, placement type global */
#define GN_ROCE_MR_FLUSH_PERSIST	0x20	/* FLUSH, persistent */

/* gn_roce_wqe.flush */
#define GN_ROCE_FLUSH_GLOBAL		1
#define GN_ROCE_FLUSH_PERSISTENT	2
#define GN_ROCE_FLUSH_RANGE		0
#define GN_ROCE_FLUSH_MR		1

/*
 * Memory region: @iova .. @iova + @length maps onto the pages of @pages;
 * @offset is the offset of @iova in the first page.  @length may be 0 (a
 * DM MR may cover no byte): @pages still holds the first page, and only
 * zero-length accesses at @iova fit.  Page addresses are
 * DMA addresses of the engine's device: host memory or any gaudi_nic
 * device's HBM bus window (peer-to-peer).  @key is the full lkey/rkey.
 * REREG_MR replaces every field of an existing MR at once (@key must be
 * the MR's own): packets see the old or the new context, never a mix.
 * DESTROY_MR and REREG_MR fail with -EBUSY while a memory window is bound
 * to the MR (IBTA); unbinding, invalidating or destroying the window, or
 * destroying the QP a type 2 window was bound through, releases it.
 * REVOKE_MR drops the MR's translation: once it returns, the engine holds
 * nothing of its pages and no request reaches them through its keys (or
 * a window bound to it); local use completes with a local protection
 * error, a peer's request with a remote access error.  The MR keeps its
 * index and keys until DESTROY_MR, so they cannot name other memory
 * meanwhile; REREG_MR of a revoked MR is -EACCES.  For memory whose owner
 * takes it back (a revoked dma-buf).
 */
struct gn_roce_mr_ctx {
	__le64 iova;
	__le64 length;
	__le32 key;
	__le32 pdn;
	__le32 access;
	__le32 offset;
	struct gn_roce_pbl pages;
};

/*
 * Memory window (CREATE_MW, index < GN_ROCE_MAX_MW): @key its first rkey
 * ((GN_ROCE_MAX_MR + index) << 8 | tag), @type 1 or 2; created unbound.
 * DESTROY_MW invalidates it at once.
 */
struct gn_roce_mw_ctx {
	__le32 key;
	__le32 pdn;
	u8 type;
	u8 rsvd[7];
};

/* Port configuration (SET_PORT). */
struct gn_roce_port_ctx {
	u8 mac[6];
	u8 rsvd0[2];
	__le32 mtu;		/* netdev MTU, bytes */
	__le32 rsvd1;
};

/* GID table entry (SET_GID; an all-zero gid invalidates the entry). */
#define GN_ROCE_GID_V2_IPV4	1
#define GN_ROCE_GID_V2_IPV6	2
struct gn_roce_gid_ctx {
	u8 gid[16];
	u8 type;
	u8 rsvd[7];
};

/* Mailbox commands: gaudi_nic_roce_cmd(hw, op, index, in, out). */
enum gn_roce_cmd_op {
	GN_ROCE_CMD_SET_PORT	= 1,	/* index: port, in: port_ctx */
	GN_ROCE_CMD_SET_GID	= 2,	/* index: port << 16 | gid index */
	GN_ROCE_CMD_CREATE_CQ	= 3,	/* index: cqn, in: cq_ctx */
	GN_ROCE_CMD_DESTROY_CQ	= 4,	/* index: cqn */
	GN_ROCE_CMD_CREATE_QP	= 5,	/* index: qpn, in: qp_ctx */
	GN_ROCE_CMD_MODIFY_QP	= 6,	/* index: qpn, in: modify_qp */
	GN_ROCE_CMD_QUERY_QP	= 7,	/* index: qpn, out: qp_ctx */
	GN_ROCE_CMD_DESTROY_QP	= 8,	/* index: qpn */
	GN_ROCE_CMD_CREATE_MR	= 9,	/* index: mr index, in: mr_ctx */
	GN_ROCE_CMD_DESTROY_MR	= 10,	/* index: mr index */
	GN_ROCE_CMD_QUERY_STATS	= 11,	/* index: port, out: stats */
	GN_ROCE_CMD_CREATE_SRQ	= 12,	/* index: srqn, in: srq_ctx */
	GN_ROCE_CMD_DESTROY_SRQ	= 13,	/* index: srqn */
	GN_ROCE_CMD_ARM_SRQ	= 14,	/* index: srqn, in: __le32 limit */
	GN_ROCE_CMD_QUERY_SRQ	= 15,	/* index: srqn, out: srq_ctx */
	GN_ROCE_CMD_REREG_MR	= 16,	/* index: mr index, in: mr_ctx */
	GN_ROCE_CMD_CREATE_MW	= 17,	/* index: mw index, in: mw_ctx */
	GN_ROCE_CMD_DESTROY_MW	= 18,	/* index: mw index */
	GN_ROCE_CMD_RESIZE_CQ	= 19,	/* index: cqn, in: cq_ctx (new ring) */
	GN_ROCE_CMD_RESIZE_SRQ	= 20,	/* index: srqn, in: srq_ctx (new ring) */
	GN_ROCE_CMD_REVOKE_MR	= 21,	/* index: mr index */
};

/* ------------------------------------------------------------ events */
enum gn_roce_event_type {
	GN_ROCE_EV_COMP		= 1,	/* num: cqn */
	GN_ROCE_EV_CQ_ERR	= 2,	/* num: cqn (overflow) */
	GN_ROCE_EV_QP_FATAL	= 3,	/* num: qpn, moved to ERR */
	GN_ROCE_EV_QP_REQ_ERR	= 4,	/* num: qpn, invalid request */
	GN_ROCE_EV_QP_ACC_ERR	= 5,	/* num: qpn, access violation */
	GN_ROCE_EV_QP_LAST_WQE	= 6,
	GN_ROCE_EV_SRQ_LIMIT	= 7,	/* num: srqn, limit reached */
};

struct gn_roce_eqe {
	u8 type;
	u8 rsvd[3];
	__le32 num;
};

/* Port counters (QUERY_STATS). */
struct gn_roce_stats {
	__le64 tx_pkts;
	__le64 tx_bytes;
	__le64 rx_pkts;
	__le64 rx_bytes;
	__le64 retransmits;
	__le64 timeouts;
	__le64 out_of_seq;
	__le64 dup_reqs;
	__le64 icrc_errs;
	__le64 rnr_naks_rx;
	__le64 rnr_naks_tx;
	__le64 seq_naks_rx;
	__le64 rx_drops;
	__le64 rem_access_errs;
	__le64 qkey_viols;	/* UD/GSI datagrams with a wrong Q_Key */
	__le64 loopback_pkts;	/* frames to the port's own MAC, looped */
	__le64 sq_deferrals;	/* SQ work past a doorbell's budget, deferred */
	__le64 read_yields;	/* READ response passes that reached their cap */
};

/* ---------------------------------------------------- the aux device */
typedef void (*gn_roce_event_fn)(void *priv, const struct gn_roce_eqe *eqe);

/**
 * struct gaudi_nic_roce_ops - the engine, as a driver programs it
 * @enable: install the event handler @fn and reset every context; -EBUSY
 *	if already enabled.  @fn is called with @priv in softirq context,
 *	one event at a time, with no engine lock held: it may ring
 *	doorbells (re-arm a CQ, post).  Events of one kind for one object
 *	not yet delivered are merged into one.  Once DESTROY_* of an
 *	object returns, no event of it is being delivered or will be.
 * @disable: destroy whatever contexts are left; returns once no event
 *	handler runs any more
 * @cmd: a mailbox command (GN_ROCE_CMD_*): 0 or a negative errno:
 *	-EINVAL bad argument, -ENOENT no such context, -EBUSY context in use
 *	(e.g. a CQ with QPs), -ENOMEM, -ENODEV engine disabled.  Sleeps.
 * @doorbell: a 32-bit posted register write (GN_ROCE_DB()); any context,
 *	never blocks (see "doorbells" above)
 *
 * The hardware implements it (the emulator: gaudi_nic_sim.ko); the core
 * hands it over with the aux device, so the RDMA driver imports nothing
 * from the module that implements the engine.
 */
struct gaudi_nic_roce_ops {
	int (*enable)(struct gaudi_nic_roce *roce, gn_roce_event_fn fn,
		      void *priv);
	void (*disable)(struct gaudi_nic_roce *roce);
	int (*cmd)(struct gaudi_nic_roce *roce, u32 op, u32 index,
		   const void *in, size_t in_len, void *out, size_t out_len);
	void (*doorbell)(struct gaudi_nic_roce *roce, u32 db);
};

#endif /* _LINUX_GAUDI_NIC_ROCE_HW_H */
