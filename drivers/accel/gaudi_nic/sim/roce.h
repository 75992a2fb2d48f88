/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The emulated RoCE v2 engine of a gaudi_nic device (part of the
 * emulator, gaudi_nic_sim.ko).  Its programming interface is
 * include/linux/gaudi_nic/roce_hw.h.
 *
 * Concurrency model: the engine is one "pipeline" per device.  Every
 * access to contexts (QP, CQ, MR tables and their state) and every frame
 * the engine sends happens under @dp_lock (BH disabled): in the doorbell
 * caller (SQ processing) and in the engine's work item (received frames,
 * timers, and the doorbells rung with interrupts off, latched in
 * @db_late).  Frames received from the MACs are queued on @rxq by the MAC
 * hook (large frames and trains sent zero-copy by reference to their
 * pages, a large frame built by another engine on this CPU by reference
 * to its skb, any other copied) and processed by the work item, which
 * drains @rxq until it is empty: only the skb that finds it empty kicks
 * it.  Frames sent zero-copy are gathered in @train (one QP's) and go to
 * the MAC together; the train is sent before any other frame and is empty
 * whenever @dp_lock is released.
 * Any frame but a READ request may be processed in the MAC's call chain
 * itself, if spin_trylock() gets @dp_lock and @rxq is empty (order
 * kept); meanwhile @rx_inline is set and everything the engine
 * would transmit is deferred to the work item (frames copied to @txq, new
 * requests flagged in @resend, ACKs on @ack_list), so the synchronous
 * cable never recurses from one engine into another and no dp_lock is
 * ever waited for inside another.  The SQ doorbell sends what is deferred
 * first.  Mailbox commands are serialised by @cmd_lock and change tables under
 * @dp_lock; a context removed from its table is never seen again by the
 * data path, so it can be freed right after.
 * Events (completion, QP and SRQ events) are raised under @dp_lock into
 * @ev_pend, one bit per object and event type (a second event of a kind
 * not yet delivered adds nothing), and delivered by @ev_work on the BH
 * workqueue (softirq context, the engine's interrupt) with no engine
 * lock held: a completion handler may re-arm its CQ or post.  Destroying
 * an object drops its pending events and waits for a delivery under way,
 * so no event reaches an object that reuses its number.
 */
#ifndef _GAUDI_NIC_SIM_ROCE_H
#define _GAUDI_NIC_SIM_ROCE_H

#include <linux/hrtimer.h>
#include <linux/mutex.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/kthread.h>
#include <linux/sizes.h>
#include <linux/workqueue.h>
#include <linux/gaudi_nic/roce_hw.h>
#include "mac.h"

struct gn_mac;

/*
 * Maximum packets in flight per QP (go-back-N window): 2 MiB at MTU 4096,
 * more than a stream sends while a coalesced ACK is on its way (up to
 * GN_RR_ACK_DELAY_US plus a wake-up).  128 stalled 64 KiB ib_write_bw
 * and ib_send_bw under TCG (575 and 501 MiB/s against 734 and 731).
 */
#define GN_RR_WINDOW		512
/* Request an ACK at least every this many packets. */
#define GN_RR_ACK_EVERY		32
/*
 * An ACK owed after an inline receive waits this long for a doorbell of
 * the same engine to carry it before the work item is woken for it: long
 * enough for a ping-pong peer to answer under TCG, far below the
 * requester's ACK timeout (at least 10 ms).
 */
#define GN_RR_ACK_DELAY_US	200
/*
 * READ responses go out in bursts of at most this many packets (and
 * bytes), dp_lock released between them, so that one READ of up to 2 GiB
 * cannot hold the engine.  A burst is ~0.2 ms of TCG time at MTU 256.
 */
#define GN_RR_READ_BURST	64
#define GN_RR_READ_BURST_BYTES	SZ_256K
/*
 * The work per dp_lock hold is capped per pass, not per QP (N9 of the
 * November review): a work item pass sends at most this many READ bursts
 * (2 MiB) whatever the number of QPs owing responses, and a doorbell (or
 * the work item's turn of a QP) starts at most GN_RR_SQ_BUDGET WQEs,
 * local operations (BIND_MW, LOCAL_INV) and UD datagrams included; the
 * rest is the work item's, which goes on in later passes.
 */
#define GN_RR_READ_PASS		8
#define GN_RR_SQ_BUDGET		256
/*
 * Link-level flow control between engines (PFC on the RoCE priority): a
 * receive queue this long asserts XOFF to the link partner, one this
 * short lifts it; a paused sender looks again after GN_RR_PAUSE_US.
 */
#define GN_RR_XOFF		512
#define GN_RR_XON		128
#define GN_RR_PAUSE_US		50
#define GN_RR_MAX_FRAME		(ETH_HLEN + 40 + 8 + 12 + 16 + 4 + 4096 + 4)

/*
 * Frames in a train (gnsim_tx_train_slot()): 64 KiB at MTU 4096, and at most
 * what one reference skb of the receive pipeline holds of page-aligned
 * payloads (MAX_SKB_FRAGS).
 */
#define GN_RR_TRAIN_MAX		16
/* Room for the headers of any frame the engine builds (IPv6, RETH, ImmDt). */
#define GN_RR_HDR_MAX		128

/* A train being gathered: @n frames of QP @qpn on port @port. */
struct gnsim_rtrain {
	unsigned int n;
	u32 port;
	u32 qpn;
	struct gnsim_mac_roce_frame fr[GN_RR_TRAIN_MAX];
	struct gnsim_mac_roce_frag pieces[GN_RR_TRAIN_MAX][GN_MAC_ROCE_MAX_FRAGS];
	u8 hdr[GN_RR_TRAIN_MAX][GN_RR_HDR_MAX];
};

/* Pages behind a page list; a reference is held on each. */
struct gnsim_rmem {
	u32 npages;
	struct page **pages;
};

struct gnsim_rring {
	struct gnsim_rmem mem;
	u32 size;		/* entries (power of two) */
	u32 stride;
};

struct gnsim_rcq {
	u32 cqn;
	struct gnsim_rring ring;
	u32 prod;		/* engine's producer index */
	u8 armed;		/* 0, GN_ROCE_DB_CQ_ARM or _ARM_SOL */
	bool overflow;
	u32 users;		/* QPs using this CQ */
};

struct gnsim_rsrq {
	u32 srqn;
	u32 pdn;
	struct gnsim_rring ring;
	u32 cons;		/* engine's consumer index */
	u32 limit;		/* armed limit, 0: disarmed */
	u32 users;		/* QPs using this SRQ */
};

/*
 * A memory window (roce_mw.c), in r->mws[index]: @used from CREATE_MW to
 * DESTROY_MW; while @bound it grants @access over @va .. @va + @length of
 * the MR whose key is @mr_key, to requests on QP @qpn only for type 2.
 */
struct gnsim_rmw {
	bool used;
	bool bound;
	u8 type;
	u32 key;
	u32 pdn;
	u32 qpn;
	u32 mr_key;
	u32 access;
	u64 va;
	u64 length;
};

struct gnsim_rmr {
	u32 index;
	u32 key;
	u32 pdn;
	u32 access;
	u32 mws;		/* windows bound to it, under dp_lock */
	bool revoked;		/* REVOKE_MR: no translation, under dp_lock */
	u64 iova;
	u64 length;
	u32 offset;
	struct gnsim_rmem mem;
};

/*
 * Per SQ slot: the WQE as the engine copied it out of the ring when it
 * started it, and how it was put on the wire.  The ring is writable by
 * user space, so after gnsim_req_start() the engine never reads the slot in
 * the ring again: continued packets, retransmissions, READ responses and
 * flushes all use @wqe, whose num_sge and inline_len were validated then.
 */
struct gnsim_rswqe {
	u32 first_psn;
	u32 npkts;
	u32 len;
	u32 rcvd;		/* READ: responses received */
	u8 opcode;
	u8 flags;
	u8 bad;			/* CQE status if invalid, else 0 */
	u64 wr_id;
	struct gn_roce_wqe wqe;
};

/*
 * A READ the responder serves: one of the QP's responder resources
 * (max_dest_rd_atomic of them, kept in a ring of GN_ROCE_MAX_RD_ATOM).
 * The MR is looked up again for every burst, so a READ whose MR goes away
 * meanwhile ends with a remote access NAK.
 */
struct gnsim_rread {
	u32 psn;		/* PSN of the first response */
	u32 npkts;
	u32 next;		/* next response to send; npkts: all sent */
	u32 msn;		/* MSN its responses carry */
	u32 rkey;
	u32 len;
	u64 va;
	u32 mr_acc;		/* what the MR must grant (READ or FLUSH) */
	u32 qp_acc;		/* and the QP */
};

struct gnsim_rqp {
	struct gn_roce_qp_ctx ctx;	/* attributes as last set */
	u32 qpn;
	u8 state;
	u32 mtu;			/* path MTU, bytes */
	/*
	 * where a connected QP's frames go (GN_ROCE_QPC_AV; port and network
	 * unused); a UD QP's go to each datagram's AV (gnsim_pkt.av)
	 */
	struct gn_roce_av path;
	struct gnsim_rring sq;
	struct gnsim_rring rq;
	struct gnsim_rcq *scq;
	struct gnsim_rcq *rcq;
	struct gnsim_rsrq *srq;		/* receives from it, no RQ */
	struct gnsim_rswqe *swqe;		/* sq.size entries */

	/* requester */
	u32 sq_tail;		/* oldest WQE not completed (= ring cons) */
	u32 sq_head;		/* WQE being sent */
	u32 sq_next;		/* first WQE never started */
	u32 sq_pkt;		/* next packet of sq_head's WQE */
	u32 npsn;		/* PSN of the next new packet */
	u32 una;		/* oldest unacknowledged PSN */
	u32 acked;		/* PSN after the highest ACKed one */
	u32 reads_out;		/* READs in flight */
	u32 retry_left;
	u32 rnr_left;
	bool rnr_wait;
	bool timer_on;
	struct timer_list timer;
	struct gaudi_nic_roce *r;

	/* responder */
	u32 epsn;		/* expected PSN */
	u32 msn;
	u32 rq_cons;
	bool nak_sent;
	struct list_head ack_node;	/* on gaudi_nic_roce.ack_list */
	bool in_send;		/* a multi-packet SEND is being received */
	struct gn_roce_wqe rwqe;	/* its receive WQE */
	u32 rwqe_pdn;		/* rwqe's PD: the SRQ's, or the QP's */
	u32 recv_off;
	bool in_write;		/* a multi-packet WRITE is being received */
	u64 wr_va;
	u32 wr_rkey;
	u32 wr_left;
	u32 wr_len;
	/*
	 * READs accepted: reads[rd_head - 1] is the newest, reads[rd_send]
	 * the oldest whose responses are not all sent (all sent: rd_send ==
	 * rd_head), indices modulo GN_ROCE_MAX_RD_ATOM.  While responses are
	 * owed the QP is on gaudi_nic_roce.read_list, and the ACKs of later
	 * requests wait (@ack_after_read) so that none overtakes them.  A
	 * duplicate READ moves rd_send back to replay; @rd_first, the oldest
	 * READ not yet answered once, never moves back: the responder
	 * resources in use are rd_head - rd_first.
	 */
	struct gnsim_rread reads[GN_ROCE_MAX_RD_ATOM];
	u32 rd_head;
	u32 rd_send;
	u32 rd_first;
	bool ack_after_read;
	struct list_head read_node;	/* on gaudi_nic_roce.read_list */
};

/* Port counters in CPU order; same fields as struct gn_roce_stats. */
struct gnsim_rstats {
	u64 tx_pkts;
	u64 tx_bytes;
	u64 rx_pkts;
	u64 rx_bytes;
	u64 retransmits;
	u64 timeouts;
	u64 out_of_seq;
	u64 dup_reqs;
	u64 icrc_errs;
	u64 rnr_naks_rx;
	u64 rnr_naks_tx;
	u64 seq_naks_rx;
	u64 rx_drops;
	u64 rem_access_errs;
	u64 qkey_viols;
	u64 loopback_pkts;
	u64 sq_deferrals;	/* SQ work left to the work item (budget) */
	u64 read_yields;	/* READ passes that ended at their cap */
};

struct gnsim_rport {
	struct gaudi_nic_roce *r;
	u32 port;
	struct gn_mac *mac;
	u8 mac_addr[ETH_ALEN];
	u32 mtu;
	struct gn_roce_gid_ctx gids[GN_ROCE_MAX_GID];
	struct gnsim_rqp *gsi;		/* QP1, under dp_lock */
	struct gnsim_rstats st;		/* under dp_lock */
	u64 rxq_drops;			/* receive queue full, under rxq.lock */
	bool xoff;			/* XOFF asserted, under rxq.lock */
};

struct gaudi_nic_roce {
	struct device *dma_dev;
	struct mutex cmd_lock;		/* serialises mailbox commands */
	spinlock_t dp_lock;		/* the pipeline: see the top */
	bool enabled;
	gn_roce_event_fn event_fn;	/* under dp_lock */
	void *event_priv;
	unsigned long *ev_pend;		/* GN_EV_BITS, under dp_lock */
	unsigned long *ev_batch;	/* what @ev_work is delivering */
	struct work_struct ev_work;	/* on system_bh_wq */
	struct gnsim_rqp **qps;
	struct gnsim_rcq **cqs;
	struct gnsim_rsrq **srqs;
	struct gnsim_rmr **mrs;
	struct gnsim_rmw *mws;		/* GN_ROCE_MAX_MW, under dp_lock */
	struct sk_buff_head rxq;
	struct list_head ack_list;	/* QPs owing an ACK, under dp_lock */
	struct list_head read_list;	/* QPs owing READ responses, ditto */
	/* wakes the work item when the link partner lifts its pause */
	struct hrtimer read_timer;
	/*
	 * The engine's processing context: a SCHED_FIFO kthread, so that a
	 * busy-polling process on the same CPU cannot hold back the "hardware"
	 * for a whole scheduler slice.
	 */
	struct kthread_worker *kworker;
	struct kthread_work work;
	struct hrtimer ack_timer;	/* delayed kick for ACKs (see above) */
	unsigned long *kick;		/* QPs whose timer fired */
	/* deferred by an inline receive (see the top), under dp_lock */
	bool rx_inline;
	struct sk_buff_head txq;	/* frames to send */
	unsigned long *resend;		/* QPs with requests to send */
	/* doorbells rung with interrupts off, for the work item: GN_DB_BITS */
	unsigned long *db_late;
	/*
	 * TX frame under construction, under dp_lock: the data of @txskb
	 * (which a receiving engine may take over, then a new one is
	 * allocated), or @frame_buf when no skb could be allocated.
	 */
	u8 *frame;
	struct sk_buff *txskb;
	u8 *frame_buf;
	/* the UD or GSI send WQE being sent, copied out of its ring */
	struct gn_roce_ud_wqe ud_wqe;
	/*
	 * Frames sent zero-copy, gathered into a train for the MAC
	 * (gnsim_tx_train_slot()), under dp_lock: of one QP, and empty whenever
	 * dp_lock is not held.
	 */
	struct gnsim_rtrain *train;
	bool rdp_ref;			/* holds gnsim_rdp_get() */
	u32 num_ports;
	struct gnsim_rport ports[] __counted_by(num_ports);
};

/*
 * Pending events: GN_ROCE_EV_COMP .. GN_ROCE_EV_SRQ_LIMIT (1..7), each a
 * bitmap of GN_EV_OBJS objects (QPs, CQs and SRQs all number < 1024).
 */
#define GN_EV_FIRST	GN_ROCE_EV_COMP
#define GN_EV_LAST	GN_ROCE_EV_SRQ_LIMIT
#define GN_EV_OBJS	1024
#define GN_EV_BITS	((GN_EV_LAST - GN_EV_FIRST + 1) * GN_EV_OBJS)

/*
 * Latched doorbells: GN_ROCE_DB_SQ .. GN_ROCE_DB_CQ_ARM_SOL (1..4), each a
 * bitmap of GN_DB_OBJS objects (QPs and CQs number < 1024).
 */
#define GN_DB_FIRST	GN_ROCE_DB_SQ
#define GN_DB_LAST	GN_ROCE_DB_CQ_ARM_SOL
#define GN_DB_OBJS	1024
#define GN_DB_BITS	((GN_DB_LAST - GN_DB_FIRST + 1) * GN_DB_OBJS)
static_assert(GN_ROCE_MAX_QP <= GN_DB_OBJS && GN_ROCE_MAX_CQ <= GN_DB_OBJS);

/* roce.c */
void gnsim_roce_db_late(struct gaudi_nic_roce *r);
void *gnsim_roce_dma_virt(struct gaudi_nic_roce *r, u64 addr);

/* roce_ev.c */
void gnsim_roce_event(struct gaudi_nic_roce *r, u8 type, u32 num);
void gnsim_roce_ev_drop(struct gaudi_nic_roce *r, u8 first, u8 last, u32 num);
void gnsim_roce_ev_work(struct work_struct *work);

/* roce_dp.c */
void gnsim_rdp_sq_doorbell(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_sq_defer(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_rq_doorbell(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_ack_now(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_to_error(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_reset(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_work(struct kthread_work *work);
void gnsim_rdp_kick(struct gaudi_nic_roce *r);
enum hrtimer_restart gnsim_rdp_ack_timer(struct hrtimer *t);
enum hrtimer_restart gnsim_rdp_read_timer(struct hrtimer *t);
void gnsim_rdp_detach(struct gaudi_nic_roce *r, struct gnsim_rqp *qp);
void gnsim_rdp_rx_purge(struct gaudi_nic_roce *r);
void gnsim_rdp_stop(struct gaudi_nic_roce *r);
void gnsim_rdp_timer(struct timer_list *t);
void gnsim_rdp_rx(void *ctx, const struct gnsim_mac_roce_frame *frames,
		  unsigned int n, u32 flags);
void gnsim_rdp_get(void);
void gnsim_rdp_put(void);
void *gnsim_rring_entry(struct gnsim_rring *ring, u32 idx);
void gnsim_rring_read(struct gnsim_rring *ring, u32 idx, void *dst);
struct gn_roce_ring_hdr *gnsim_rring_hdr(struct gnsim_rring *ring);

/* glue with the core driver */
struct gaudi_nic_roce *gnsim_roce_alloc(struct device *dma_dev, u32 id,
					struct gn_mac *const *macs,
					u32 num_ports);
void gnsim_roce_free(struct gaudi_nic_roce *r);
/* what the RDMA driver is handed with the aux device */
extern const struct gaudi_nic_roce_ops gnsim_roce_ops;

/* roce.c: page lists, rings, latched doorbells */
int gnsim_rmem_load(struct gaudi_nic_roce *r, const struct gn_roce_pbl *p,
		    struct gnsim_rmem *m);
void gnsim_rmem_free(struct gnsim_rmem *m);
int gnsim_rring_load(struct gaudi_nic_roce *r, const struct gn_roce_pbl *p,
		     u32 log, u32 stride, struct gnsim_rring *ring);
void gnsim_roce_db_drop(struct gaudi_nic_roce *r, u32 first, u32 last,
			u32 num);

/*
 * The mailbox commands, each in the file of its object; roce.c's table
 * dispatches them under cmd_lock.  @in and @out are the command's
 * arguments, of the sizes the table gives, or NULL; a caller other than
 * the table passes NULL to a command that takes none.
 */
/* roce_cq.c */
int gnsim_cmd_create_cq(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_resize_cq(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_destroy_cq(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
/* roce_qp.c */
int gnsim_cmd_create_qp(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_modify_qp(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_query_qp(struct gaudi_nic_roce *r, u32 index, const void *in,
		       void *out);
int gnsim_cmd_destroy_qp(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
/* roce_srq.c */
int gnsim_cmd_create_srq(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
int gnsim_cmd_resize_srq(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
int gnsim_cmd_arm_srq(struct gaudi_nic_roce *r, u32 index, const void *in,
		      void *out);
int gnsim_cmd_query_srq(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_destroy_srq(struct gaudi_nic_roce *r, u32 index, const void *in,
			  void *out);
/* roce_mr.c: the MR table */
int gnsim_cmd_create_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_rereg_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
		       void *out);
int gnsim_cmd_revoke_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_destroy_mr(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
/* roce_mw.c: memory windows; QP destruction unbinds type 2 MWs */
int gnsim_cmd_create_mw(struct gaudi_nic_roce *r, u32 index, const void *in,
			void *out);
int gnsim_cmd_destroy_mw(struct gaudi_nic_roce *r, u32 index, const void *in,
			 void *out);
void gnsim_mw_qp_gone(struct gaudi_nic_roce *r, u32 qpn);

#endif /* _GAUDI_NIC_SIM_ROCE_H */
