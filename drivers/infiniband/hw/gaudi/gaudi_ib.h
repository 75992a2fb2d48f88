/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gaudi_ib: RDMA driver for the RoCE v2 engine of gaudi_nic devices.
 * It programs the engine only through <linux/gaudi_nic/roce_hw.h>.
 */
#ifndef _GAUDI_IB_H
#define _GAUDI_IB_H

#include <linux/idr.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <linux/gaudi_nic/core.h>
#include <linux/gaudi_nic/roce_hw.h>

/* Address handles per device (AH numbers 1..GIB_MAX_AH), see struct gib_ah */
#define GIB_MAX_AH	65536

/*
 * An MR is one single-level page list of PAGE_SIZE entries, and that list
 * is one physically contiguous buffer: 2^19 entries (4 MiB of __le64, the
 * largest page-allocator block without CMA) cover 2 GiB.  One entry is
 * kept for a start that is not page aligned, so any buffer of up to
 * GIB_MAX_MR_SIZE bytes fits, whatever its alignment: that is the
 * max_mr_size query_device reports.
 */
#define GIB_MAX_MR_SIZE	(((u64)GN_ROCE_MAX_PBL_PAGES - 1) << PAGE_SHIFT)

/*
 * One ib_device per gaudi_nic device.  Lifetime: allocated in the aux
 * driver's probe, freed by ib_dealloc_device() in remove, after
 * ib_unregister_device() destroyed every user object.
 *
 * @cqs, @qps, @srqs: cqn/qpn/srqn -> object, for event dispatch.  Entries are
 * inserted after the engine context exists and erased before it is
 * destroyed; the event handler looks objects up and uses them under the
 * xarray lock, so an erased object gets no more events.
 */
struct gib_dev {
	struct ib_device ibdev;
	struct gaudi_nic_adev *gadev;	/* gaudi_nic.rdma.N: device and engine */
	struct device *dma_dev;
	u32 num_ports;
	struct ida pd_ida;
	struct ida cq_ida;
	struct ida qp_ida;
	struct ida mr_ida;
	struct ida mw_ida;
	struct ida ah_ida;	/* any context: AHs may be made in atomic ones */
	struct xarray cqs;
	struct xarray qps;
	struct ida srq_ida;
	struct xarray srqs;	/* srqn -> gib_srq, as @cqs */
	struct notifier_block nb;
	/* netdev of each port (reference held), under RTNL */
	struct net_device *netdevs[GAUDI_NIC_MAX_PORTS];
};

/*
 * What a user context holds, against the device's limits of the same
 * index (&enum gaudi_nic_ctx_limit, devlink params; gib_limits.c).
 */
enum gib_res {
	GIB_RES_PD = GAUDI_NIC_CTX_PD,
	GIB_RES_CQ = GAUDI_NIC_CTX_CQ,
	GIB_RES_QP = GAUDI_NIC_CTX_QP,
	GIB_RES_SRQ = GAUDI_NIC_CTX_SRQ,
	GIB_RES_MR = GAUDI_NIC_CTX_MR,
	GIB_RES_AH = GAUDI_NIC_CTX_AH,
	GIB_RES_MW = GAUDI_NIC_CTX_MW,
	GIB_RES_DM = GAUDI_NIC_CTX_DM,
	GIB_RES_MAX = GAUDI_NIC_CTX_RING_MB	/* the objects; then the rings */
};

struct gib_ucontext {
	struct ib_ucontext ibuc;
	spinlock_t lim_lock;	/* @count, @ring_bytes */
	u32 count[GIB_RES_MAX];
	u64 ring_bytes;
};

/*
 * @uc: the user context the object is charged to (gib_limits.c); NULL for
 * kernel objects, which are not counted.  Here and in the CQ, QP, SRQ, AH
 * and MR.
 */
struct gib_pd {
	struct ib_pd ibpd;
	u32 pdn;
	struct gib_ucontext *uc;
};

/*
 * A ring shared with the engine (and, for user objects, mapped into the
 * process).  The buffer is vmalloc memory, charged to the memory cgroup
 * of the process for user rings (gib_ring_alloc()); each page is
 * DMA-mapped for the engine.  User mappings hold page references, so the buffer can
 * be freed once the engine context is gone even if still mapped; but once
 * offered for mmap() it is freed by its mmap entry, when no mmap() call
 * can be using it any more (gib_ring_free(), gib_mmap_free()).
 */
struct gib_ring {
	void *buf;
	size_t size;
	u32 log_size;
	u32 stride;
	u32 npages;
	dma_addr_t *dma;
	struct rdma_user_mmap_entry *mmap;
};

/* What an mmap key maps: a ring's @buf, or a DM's @hbm (gib_dm.c). */
struct gib_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct gaudi_nic_hbm *hbm;
};

/*
 * User CQs are polled by the provider through the mapped ring; kernel CQs
 * (no uobject) by gib_poll_cq(), which owns @cons under @lock.
 */
struct gib_cq {
	struct ib_cq ibcq;
	u32 cqn;
	struct gib_ucontext *uc;
	struct gib_ring ring;
	spinlock_t lock;	/* kernel CQs: @cons, reading the ring */
	u32 cons;
	struct mutex resize;	/* user CQs: @ring, ibcq.cqe (resize) */
};

/*
 * User QPs post through the mapped rings; the kernel only rings doorbells.
 * Kernel QPs (UD, GSI: no uobject) are posted to by gib_post_send() and
 * gib_post_recv() under @sq_lock/@rq_lock, which own @sq_prod/@rq_prod.
 *
 * @qpn is the engine's QP number (dev->qps key, CQE qpn); ibqp.qp_num is
 * the same except for GSI QPs, whose qp_num is 1 on every port.
 * @state is written under @mutex and read locklessly by the post paths.
 */
struct gib_qp {
	struct ib_qp ibqp;
	u32 qpn;
	struct gib_ucontext *uc;
	struct mutex mutex;	/* modify_qp / query_qp: state, attr */
	enum ib_qp_state state;
	struct ib_qp_attr attr;	/* last values set, for query */
	struct gib_ring sq;
	struct gib_ring rq;
	u64 ring_bytes;		/* of @sq and @rq, charged to @uc */
	u32 max_inline;
	u32 max_send_sge;
	u32 port;		/* 1-based; 0 until set (RC, UD) */
	bool sig_all;
	spinlock_t sq_lock;	/* kernel QPs: @sq_prod, SQ slots */
	u32 sq_prod;
	spinlock_t rq_lock;	/* kernel QPs: @rq_prod, RQ slots */
	u32 rq_prod;
};

/*
 * Address handle.  @av is an address vector (struct gn_roce_av): where a
 * packet goes and from which GID, in the engine's own encoding (0-based
 * port, little-endian flow label, dmac already resolved); QPs (IB_QP_AV)
 * and AHs are validated into this one form by gib_av_from_attr().  UD
 * send WQEs carry the AV itself (as mlx5's do), so the AH is pure driver
 * state: create and destroy never sleep and send no command (the core may
 * create kernel AHs in atomic context).  @ahn is the AH's number, unique
 * per device while it lives.  Immutable between create_ah and destroy_ah.
 * The core holds a reference on the source GID entry (ib_ah.sgid_attr)
 * for the whole lifetime, so @av.sgid_index is not reused while the AH
 * exists, but the entry may be invalidated (address removed): then
 * SET_GID has cleared it in the engine.
 */
struct gib_ah {
	struct ib_ah ibah;
	u32 ahn;
	struct gib_ucontext *uc;
	struct gn_roce_av av;
};

/* @access: the IB_ACCESS_* flags as registered (or re-registered) */
struct gib_mr {
	struct ib_mr ibmr;
	struct ib_umem *umem;
	struct gib_ucontext *uc;
	u32 index;
	int access;
};

/*
 * Device memory (ibv_alloc_dm()): HBM owned by its mmap entry @mmap
 * (gib_dm.c), charged to @uc.
 */
struct gib_dm {
	struct ib_dm ibdm;
	struct gaudi_nic_hbm *hbm;
	struct rdma_user_mmap_entry *mmap;
	struct gib_ucontext *uc;
};

static inline struct gib_dm *to_gdm(struct ib_dm *dm)
{
	return container_of(dm, struct gib_dm, ibdm);
}

/*
 * Memory window: engine index @index, rkey (GN_ROCE_MAX_MR + index) << 8
 * | tag.  Binding is work requests' business (the engine's), so the
 * driver only creates and destroys the window.
 */
struct gib_mw {
	struct ib_mw ibmw;
	struct gib_ucontext *uc;
	u32 index;
};

static inline struct gib_dev *to_gdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct gib_dev, ibdev);
}

static inline struct gib_pd *to_gpd(struct ib_pd *pd)
{
	return container_of(pd, struct gib_pd, ibpd);
}

static inline struct gib_cq *to_gcq(struct ib_cq *cq)
{
	return container_of(cq, struct gib_cq, ibcq);
}

static inline struct gib_qp *to_gqp(struct ib_qp *qp)
{
	return container_of(qp, struct gib_qp, ibqp);
}

static inline struct gib_mr *to_gmr(struct ib_mr *mr)
{
	return container_of(mr, struct gib_mr, ibmr);
}

static inline struct gib_ah *to_gah(struct ib_ah *ah)
{
	return container_of(ah, struct gib_ah, ibah);
}

static inline struct gib_ucontext *to_guc(struct ib_ucontext *uc)
{
	return container_of(uc, struct gib_ucontext, ibuc);
}

/*
 * A page list for the engine: @n DMA addresses in a coherent buffer,
 * valid until gib_pbl_free().  The engine copies it during the command.
 */
struct gib_pbl {
	__le64 *cpu;
	dma_addr_t dma;
	size_t size;
};

/* gib_limits.c */
void gib_limits_init(struct gib_ucontext *uc);
int gib_charge(struct gib_ucontext *uc, enum gib_res res, u64 bytes);
void gib_uncharge(struct gib_ucontext *uc, enum gib_res res, u64 bytes);
int gib_id_alloc(struct ida *ida, struct gib_ucontext *uc, enum gib_res res,
		 u32 min, u32 max, gfp_t gfp);

/* gib_robj.c: the engine's ring-backed objects (create/destroy steps) */
enum gib_robj_type {
	GIB_ROBJ_CQ,
	GIB_ROBJ_SRQ,
	GIB_ROBJ_QP,
};

int gib_robj_reserve(struct gib_dev *dev, enum gib_robj_type t,
		     struct gib_ucontext *uc, u64 ring_bytes);
void gib_robj_release(struct gib_dev *dev, enum gib_robj_type t,
		      struct gib_ucontext *uc, u32 num, u64 ring_bytes);
int gib_robj_publish(struct gib_dev *dev, enum gib_robj_type t, u32 num,
		     void *obj, const void *ctx, size_t ctx_len);
int gib_robj_unpublish(struct gib_dev *dev, enum gib_robj_type t, u32 num);

/* gib_verbs.c */
extern const struct ib_device_ops gib_dev_ops;
int gib_port_mtu(struct gib_dev *dev, u32 port);
int gib_check_udata_in(struct ib_udata *udata);
int gib_udata_uc(struct ib_udata *udata, struct gib_ucontext **uc);
int gib_respond(struct ib_udata *udata, const void *resp, size_t len);
size_t gib_ring_bytes(u32 log_size, u32 stride);
int gib_ring_alloc(struct gib_dev *dev, struct gib_ring *r, u32 log_size,
		   u32 stride, bool user);
void gib_ring_free(struct gib_dev *dev, struct gib_ring *r);
int gib_ring_mmap(struct ib_ucontext *uc, struct gib_ring *r, u64 *key,
		  u64 *len);
int gib_pbl_alloc(struct gib_dev *dev, struct gib_pbl *p, u32 n,
		  struct gn_roce_pbl *hw);
void gib_pbl_free(struct gib_dev *dev, struct gib_pbl *p);
int gib_ring_pbl(struct gib_dev *dev, struct gib_ring *r, struct gib_pbl *p,
		 struct gn_roce_pbl *hw);
int gib_ring_offer(struct gib_dev *dev, struct gib_ucontext *uc,
		   struct gib_ring *r, u32 log_size, u32 stride,
		   struct gib_pbl *pbl, struct gn_roce_pbl *hw, u64 *key,
		   u64 *len);
int gib_ring_replace(struct gib_dev *dev, struct gib_ucontext *uc,
		     enum gib_res res, struct gib_ring *cur, u32 log_size,
		     u32 cmd, u32 num, void *ctx, size_t ctx_len,
		     struct gn_roce_pbl *hw, u64 *key, u64 *len);

/* A WQE of a kernel ring, in any of the formats its rings hold. */
union gib_wqe {
	struct gn_roce_wqe wqe;
	struct gn_roce_ud_wqe ud;	/* UD, GSI send queues */
};

/*
 * A kind of work request list for gib_kring_post(): @build turns work
 * request @wr into WQE @w (0 or -errno), @next gives the one after @wr.
 * The ring's stride says how much of @w is the WQE.
 */
struct gib_wr_ops {
	int (*build)(void *priv, const void *wr, union gib_wqe *w);
	const void *(*next)(const void *wr);
};

int gib_kring_post(struct gib_ring *r, spinlock_t *lock, u32 *prod,
		   const struct gib_wr_ops *ops, void *priv, const void *wr,
		   const void **bad, u32 *posted);

/* gib_mr.c */
void gib_mr_ctx_fill(struct gn_roce_mr_ctx *ctx, u64 iova, u64 length,
		     u32 key, u32 pdn, int access, u32 offset);
struct gib_mr *gib_mr_new(struct ib_pd *ibpd, struct gib_ucontext *uc,
			  int access, u64 length, u64 iova);
int gib_mr_install(struct gib_dev *dev, struct gib_mr *mr,
		   struct gn_roce_mr_ctx *ctx, struct gib_pbl *pbl);
void gib_mr_undo(struct gib_dev *dev, struct gib_mr *mr);
struct ib_mr *gib_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *gib_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
			      u64 iova, int access, struct ib_udata *udata);
struct ib_mr *gib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset, u64 len,
				     u64 iova, int fd, int access,
				     struct uverbs_attr_bundle *attrs);
struct ib_mr *gib_rereg_user_mr(struct ib_mr *ibmr, int flags, u64 start,
				u64 len, u64 iova, int access,
				struct ib_pd *pd, struct ib_udata *udata);
int gib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

/* gib_dm.c */
extern const struct uapi_definition *const gib_uapi_defs;
u64 gib_max_dm_size(struct gib_dev *dev);
struct ib_dm *gib_alloc_dm(struct ib_device *ibdev, struct ib_ucontext *ibuc,
			   struct ib_dm_alloc_attr *attr,
			   struct uverbs_attr_bundle *attrs);
int gib_dealloc_dm(struct ib_dm *ibdm, struct uverbs_attr_bundle *attrs);
struct ib_mr *gib_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
			    struct ib_dm_mr_attr *attr,
			    struct uverbs_attr_bundle *attrs);
int gib_dm_map(struct vm_area_struct *vma, struct gaudi_nic_hbm *hbm);
int gib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int gib_dealloc_mw(struct ib_mw *ibmw);

/* gib_cq.c */
int gib_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		  struct uverbs_attr_bundle *attrs);
int gib_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int gib_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);
int gib_poll_cq(struct ib_cq *ibcq, int n, struct ib_wc *wc);
int gib_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags f);
void gib_cq_clean(struct ib_cq *ibcq, u32 qpn);

/* gib_qp.c */
extern const struct gib_wr_ops gib_recv_wr_ops;	/* *priv: max SGEs */
int gib_av_from_attr(struct gib_dev *dev, const struct rdma_ah_attr *ah,
		     struct gn_roce_av *av);
int gib_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata);
int gib_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int gib_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int gib_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);
int gib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad);
int gib_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad);

/*
 * Shared receive queue.  User SRQs are posted to through the mapped ring;
 * kernel SRQs by gib_post_srq_recv() under @lock, which owns @prod.
 * @max_sge: the SGEs a receive WR may have (as created).
 */
struct gib_srq {
	struct ib_srq ibsrq;
	u32 srqn;
	struct gib_ucontext *uc;
	u32 max_sge;
	struct gib_ring ring;
	spinlock_t lock;	/* kernel SRQs: @prod, ring slots */
	u32 prod;
	struct mutex resize;	/* user SRQs: @ring (resize) */
};

static inline struct gib_srq *to_gsrq(struct ib_srq *srq)
{
	return container_of(srq, struct gib_srq, ibsrq);
}

/* gib_srq.c */
int gib_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int gib_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int gib_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int gib_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int gib_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad);

#endif /* _GAUDI_IB_H */
