/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * gaudi_ib verbs uABI: what the gaudi_ib kernel driver and the libibverbs
 * provider (libgaudi-rdmav34.so) exchange in the udata of verbs commands,
 * and the formats of the rings user space maps.
 *
 * Rules: fixed-width types, 64-bit fields __aligned_u64, every struct a
 * multiple of 8 bytes with explicit padding; reserved fields must be zero
 * (-EINVAL otherwise).  Commands without an input struct here refuse
 * any non-zero input byte with -EINVAL.
 *
 * Rings: a work queue or CQ is mapped with mmap(offset = *_mmap_key,
 * length = *_mmap_len) on the verbs file.  It starts with a header
 * (struct gaudi_ring_hdr) whose producer and consumer indices are
 * free-running 32-bit counters in separate cache lines, followed by
 * 2^log_size entries.  For a work queue, user space writes the entry,
 * then (store-release) prod; the device writes cons.  For a CQ, the
 * device writes prod; user space reads entries up to prod (load-acquire)
 * and then advances cons.  After posting send work requests, user space
 * rings the doorbell with an empty post_send command on the QP.
 */
#ifndef GAUDI_ABI_USER_H
#define GAUDI_ABI_USER_H

#include <linux/types.h>

#define GAUDI_IB_UVERBS_ABI_VERSION	1

#define GAUDI_RING_HDR_SIZE	128
#define GAUDI_WQE_SIZE		128
#define GAUDI_CQE_SIZE		32
#define GAUDI_MAX_SGE		6
#define GAUDI_MAX_INLINE	96
#define GAUDI_UD_MAX_SGE	4	/* UD QPs without GAUDI_QP_UD_WQE256 */
#define GAUDI_UD_MAX_INLINE	64
#define GAUDI_UD_WQE_SIZE	256	/* UD QPs with GAUDI_QP_UD_WQE256 */
#define GAUDI_UD_WQE256_MAX_INLINE	192
#define GAUDI_GRH_SIZE		40
/* remote_qkey of a UD send with this bit set: use the QP's own Q_Key */
#define GAUDI_QKEY_USE_QP	0x80000000U

struct gaudi_ring_hdr {
	__u32 prod;
	__u32 rsvd0[15];
	__u32 cons;
	__u32 rsvd1[15];
};

struct gaudi_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

enum gaudi_wqe_opcode {
	GAUDI_WQE_SEND		= 0,
	GAUDI_WQE_SEND_IMM	= 1,
	GAUDI_WQE_WRITE		= 2,
	GAUDI_WQE_WRITE_IMM	= 3,
	GAUDI_WQE_READ		= 4,
	GAUDI_WQE_SEND_INV	= 5,	/* rkey: the type 2 MW to invalidate */
	GAUDI_WQE_BIND_MW	= 6,	/* rkey: the MW's new key; data.bind */
	GAUDI_WQE_LOCAL_INV	= 7,	/* rkey: the type 2 MW to invalidate */
	GAUDI_WQE_FLUSH		= 10,	/* rkey, remote_addr, data.flush */
	GAUDI_WQE_RECV		= 8,
};

enum gaudi_wqe_flags {
	GAUDI_WQE_F_SIGNALED	= 1 << 0,
	GAUDI_WQE_F_INLINE	= 1 << 1,
	GAUDI_WQE_F_SOLICITED	= 1 << 2,
	GAUDI_WQE_F_FENCE	= 1 << 3,
};

/*
 * Address vector of a UD send, as create_ah returns it (struct
 * gaudi_create_ah_resp): copied unchanged into the WQE.
 */
struct gaudi_av {
	__u8 port;		/* 0-based; the QP's port is used */
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u32 flow_label;
	__u8 dmac[6];
	__u8 network;		/* 1: RoCE v2 over IPv4, 2: over IPv6 */
	__u8 rsvd;		/* zero, or a local QP operation error */
	__u8 dgid[16];
};

/* gaudi_wqe.data.bind.access */
enum gaudi_mw_access {
	GAUDI_MW_REMOTE_WRITE	= 1 << 1,
	GAUDI_MW_REMOTE_READ	= 1 << 2,
};

/*
 * All fields little endian except imm_data (network order).  Send WQEs
 * of UD QPs carry the remote Q_Key in rkey, the destination QPN in the
 * low 32 bits of remote_addr, and the AV before their SGEs or inline
 * data (data.ud); a UD message is at most one path MTU.  Receive
 * buffers of UD QPs get the 40-byte GRH area first (GAUDI_CQE_F_GRH).
 * BIND_MW (RC, num_sge 0) binds the memory window of rkey's index to
 * rkey over data.bind.addr .. + length of the MR data.bind.mr_lkey (zero
 * length: unbind a type 1 window); it completes as GAUDI_CQE_BIND_MW.
 * FLUSH (RC, num_sge 0; ibv_wr_flush) completes as GAUDI_CQE_FLUSH.
 */
struct gaudi_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 flags;
	__u8 num_sge;
	__u8 rsvd0;
	__be32 imm_data;
	__u32 inline_len;
	__u32 rkey;
	__aligned_u64 remote_addr;
	union {
		struct gaudi_sge sge[GAUDI_MAX_SGE];
		__u8 inline_data[GAUDI_MAX_INLINE];
		struct {
			__aligned_u64 addr;
			__aligned_u64 length;
			__u32 mr_lkey;
			__u32 access;	/* enum gaudi_mw_access */
		} bind;
		struct {
			__aligned_u64 length;
			__u8 type;	/* 1: global, 2: persistent */
			__u8 level;	/* 0: the range, 1: the whole MR */
			__u8 rsvd[6];	/* zero, or a local QP operation error */
		} flush;
		struct {
			struct gaudi_av av;
			union {
				struct gaudi_sge sge[GAUDI_UD_MAX_SGE];
				__u8 inline_data[GAUDI_UD_MAX_INLINE];
			};
		} ud;
	} data;
};

/*
 * Send WQE of a UD QP created with GAUDI_QP_UD_WQE256: GAUDI_UD_WQE_SIZE
 * bytes, with room after the AV for GAUDI_MAX_SGE SGEs or
 * GAUDI_UD_WQE256_MAX_INLINE bytes, the limits of the other QP types.
 * Its first GAUDI_WQE_SIZE bytes are laid out as a struct gaudi_wqe with
 * data.ud (rkey is @qkey, remote_addr @dest_qpn and @rsvd1), the format
 * of a UD QP created without the flag.
 */
struct gaudi_ud_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;		/* GAUDI_WQE_SEND or GAUDI_WQE_SEND_IMM */
	__u8 flags;
	__u8 num_sge;
	__u8 rsvd0;
	__be32 imm_data;
	__u32 inline_len;
	__u32 qkey;		/* GAUDI_QKEY_USE_QP: the QP's own */
	__u32 dest_qpn;
	__u32 rsvd1;
	struct gaudi_av av;
	union {
		struct gaudi_sge sge[GAUDI_MAX_SGE];
		__u8 inline_data[GAUDI_UD_WQE256_MAX_INLINE];
	};
};

enum gaudi_cqe_opcode {
	GAUDI_CQE_SEND			= 0,
	GAUDI_CQE_WRITE			= 1,
	GAUDI_CQE_READ			= 2,
	GAUDI_CQE_BIND_MW		= 3,
	GAUDI_CQE_LOCAL_INV		= 4,
	GAUDI_CQE_FLUSH			= 5,
	GAUDI_CQE_RECV			= 8,
	GAUDI_CQE_RECV_WRITE_IMM	= 9,
};

/*
 * GAUDI_CQE_F_GRH: a UD receive; byte_len includes the 40-byte GRH area,
 * which holds the IPv6 header (GAUDI_CQE_F_IPV6) or 20 zero bytes and
 * the IPv4 header; src_qp is the sender's QP number.  GAUDI_CQE_F_INV: a
 * receive of a SEND with invalidate; imm_data is the rkey it invalidated.
 */
enum gaudi_cqe_flags {
	GAUDI_CQE_F_IMM		= 1 << 0,
	GAUDI_CQE_F_GRH		= 1 << 1,
	GAUDI_CQE_F_IPV6	= 1 << 2,
	GAUDI_CQE_F_INV		= 1 << 3,
};

/* status is an enum ib_wc_status value. */
struct gaudi_cqe {
	__aligned_u64 wr_id;
	__u32 byte_len;
	__be32 imm_data;
	__u32 qp_num;
	__u8 opcode;
	__u8 status;
	__u8 flags;
	__u8 rsvd0;
	__u32 vendor_err;
	__u32 src_qp;
};

struct gaudi_alloc_ucontext_resp {
	__u32 abi_version;
	__u32 max_sge;
	__u32 max_inline;
	__u32 wqe_size;
	__u32 cqe_size;
	__u32 ring_hdr_size;
	__u32 ud_max_sge;
	__u32 ud_max_inline;
};

struct gaudi_alloc_pd_resp {
	__u32 pdn;
	__u32 rsvd;
};

struct gaudi_create_cq_resp {
	__aligned_u64 cq_mmap_key;
	__aligned_u64 cq_mmap_len;
	__u32 cqn;
	__u32 log_size;
};

/*
 * create_qp input (optional: none is flags 0).  GAUDI_QP_UD_WQE256, on a
 * UD QP: its send queue holds struct gaudi_ud_wqe, so that it takes the
 * SGE and inline limits the device reports for every QP type.  Without
 * it a UD send queue holds struct gaudi_wqe (data.ud: GAUDI_UD_MAX_SGE
 * SGEs, GAUDI_UD_MAX_INLINE bytes).  A kernel from before this command
 * refuses any input with EINVAL; one that knows it refuses unknown flags
 * and a non-zero @rsvd the same way.
 */
enum gaudi_create_qp_flags {
	GAUDI_QP_UD_WQE256	= 1 << 0,
};

struct gaudi_create_qp_cmd {
	__u32 flags;
	__u32 rsvd;
};

/* @sq_wqe_size: the send queue's entry size; 0 from an older kernel: 128 */
struct gaudi_create_qp_resp {
	__aligned_u64 sq_mmap_key;
	__aligned_u64 sq_mmap_len;
	__aligned_u64 rq_mmap_key;
	__aligned_u64 rq_mmap_len;
	__u32 qpn;
	__u32 sq_log_size;
	__u32 rq_log_size;
	__u32 sq_wqe_size;
};

/*
 * resize_cq: the CQ's new ring, mapped like the first.  The CQEs not yet
 * consumed when the command ran are at its first slots (its cons is 0);
 * the old ring is no longer written.
 */
struct gaudi_resize_cq_resp {
	__aligned_u64 cq_mmap_key;
	__aligned_u64 cq_mmap_len;
	__u32 log_size;
	__u32 rsvd;
};

/*
 * create_srq: the SRQ's ring (receive WQEs, struct gaudi_wqe, opcode
 * GAUDI_WQE_RECV), mapped and posted like an RQ; no doorbell is needed.
 * A QP created on an SRQ has no RQ (rq_mmap_len 0).
 */
struct gaudi_create_srq_resp {
	__aligned_u64 srq_mmap_key;
	__aligned_u64 srq_mmap_len;
	__u32 srqn;
	__u32 log_size;
};

/*
 * modify_srq input.  With IBV_SRQ_MAX_WR (resize) @resp_addr is the user
 * address of a struct gaudi_resize_srq_resp the kernel fills (modify_srq
 * has no response of its own); 0 otherwise.  The new ring holds the WQEs
 * posted and not yet taken at its first slots: its prod is their count
 * and cons 0.  The old ring is no longer read.
 */
struct gaudi_modify_srq_cmd {
	__aligned_u64 resp_addr;
};

struct gaudi_resize_srq_resp {
	__aligned_u64 srq_mmap_key;
	__aligned_u64 srq_mmap_len;
	__u32 log_size;
	__u32 prod;
};

/* create_ah: the address vector UD sends to this AH carry. */
struct gaudi_create_ah_resp {
	struct gaudi_av av;
};

/*
 * Driver methods of the ioctl interface, in its driver namespace (ids
 * from 1 << UVERBS_ID_NS_SHIFT, 0x1000).
 *
 * GAUDI_IB_METHOD_DM_QUERY, on a device memory object (UVERBS_OBJECT_DM,
 * from ibv_alloc_dm() or ibv_import_dm()): the mmap offset of its HBM on
 * the uverbs file (__u64, a shared mapping of up to its length rounded up
 * to pages) and its length in bytes (__u64).
 */
enum gaudi_ib_dm_methods {
	GAUDI_IB_METHOD_DM_QUERY = 0x1000,
};

enum gaudi_ib_query_dm_attrs {
	GAUDI_IB_ATTR_QUERY_DM_HANDLE = 0x1000,
	GAUDI_IB_ATTR_QUERY_DM_MMAP_OFFSET,
	GAUDI_IB_ATTR_QUERY_DM_LENGTH,
};

#endif /* GAUDI_ABI_USER_H */
