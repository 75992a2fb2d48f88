// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib verbs: device/port queries, ucontext, PD, rings, AH, MR,
 * counters and the ops table.  CQs are in gib_cq.c, QPs in gib_qp.c.
 *
 * User space (the gaudi provider) posts and polls through rings mapped
 * into the process; the kernel only creates contexts in the engine, rings
 * the send doorbell (an empty post_send) and arms CQs.
 */
#include <linux/dma-mapping.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/iter.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

#define GIB_VENDOR_ID		0x1da3	/* Habana Labs */
#define GIB_VENDOR_PART		0x1060
#define GIB_FW_VER		0x0001000000000000ULL

/*
 * An MR is one single-level page list of PAGE_SIZE entries, and that list
 * is one physically contiguous buffer: 2^19 entries (4 MiB of __le64, the
 * largest page-allocator block without CMA) cover 2 GiB.  One entry is
 * kept for a start that is not page aligned, so any buffer of up to
 * GIB_MAX_MR_SIZE bytes fits, whatever its alignment: that is the
 * max_mr_size query_device reports.
 */
#define GIB_MAX_MR_SIZE	(((u64)GN_ROCE_MAX_PBL_PAGES - 1) << PAGE_SHIFT)

/* The uABI ring formats are the hardware ones. */
static_assert(sizeof(struct gaudi_wqe) == sizeof(struct gn_roce_wqe));
static_assert(sizeof(struct gaudi_cqe) == sizeof(struct gn_roce_cqe));
static_assert(sizeof(struct gaudi_ring_hdr) == GN_ROCE_RING_HDR_SIZE);
static_assert(sizeof(struct gn_roce_wqe) == GN_ROCE_WQE_SIZE);
static_assert(sizeof(struct gn_roce_cqe) == GN_ROCE_CQE_SIZE);
static_assert(offsetof(struct gaudi_wqe, data) ==
	      offsetof(struct gn_roce_wqe, sge));
static_assert(offsetof(struct gaudi_cqe, status) ==
	      offsetof(struct gn_roce_cqe, status));
static_assert(GAUDI_MAX_SGE == GN_ROCE_MAX_SGE);
static_assert(GAUDI_MAX_INLINE == GN_ROCE_MAX_INLINE);
static_assert(GAUDI_UD_MAX_SGE == GN_ROCE_UD_MAX_SGE);
static_assert(GAUDI_UD_MAX_INLINE == GN_ROCE_UD_MAX_INLINE);
static_assert(GAUDI_GRH_SIZE == GN_ROCE_GRH_SIZE);
static_assert(sizeof(struct gaudi_av) == sizeof(struct gn_roce_av));
static_assert(offsetof(struct gaudi_wqe, data.ud.sge) ==
	      offsetof(struct gn_roce_wqe, ud.sge));
static_assert(offsetof(struct gaudi_cqe, src_qp) ==
	      offsetof(struct gn_roce_cqe, src_qp));

/* No input udata is defined yet: all of it must be zero. */
int gib_check_udata_in(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

int gib_respond(struct ib_udata *udata, const void *resp, size_t len)
{
	return ib_copy_to_udata(udata, (void *)resp, min(len, udata->outlen));
}

/* ------------------------------------------------------- device, port */

static int gib_query_device(struct ib_device *ibdev,
			    struct ib_device_attr *a, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = GIB_FW_VER;
	a->sys_image_guid = dev->ibdev.node_guid;
	a->max_mr_size = GIB_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = GIB_VENDOR_ID;
	a->vendor_part_id = GIB_VENDOR_PART;
	a->hw_ver = 1;
	a->max_qp = GN_ROCE_MAX_QP - GN_ROCE_MIN_QPN;
	a->max_qp_wr = 1 << GN_ROCE_MAX_WQ_LOG;
	a->max_srq = GN_ROCE_MAX_SRQ;
	a->max_srq_wr = 1 << GN_ROCE_MAX_WQ_LOG;
	a->max_srq_sge = GN_ROCE_MAX_SGE;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_MEM_WINDOW |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_FLUSH_GLOBAL |
			      IB_DEVICE_MEM_WINDOW_TYPE_2B |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_CURR_QP_STATE_MOD |
			      IB_DEVICE_SYS_IMAGE_GUID;
	a->max_send_sge = GN_ROCE_MAX_SGE;
	a->max_recv_sge = GN_ROCE_MAX_SGE;
	a->max_sge_rd = GN_ROCE_MAX_SGE;
	a->max_cq = GN_ROCE_MAX_CQ;
	a->max_cqe = 1 << GN_ROCE_MAX_CQ_LOG;	/* every ring slot is usable */
	a->max_mr = GN_ROCE_MAX_MR - 1;
	a->max_mw = GN_ROCE_MAX_MW;
	a->max_pd = GN_ROCE_MAX_PD;
	a->max_ah = GIB_MAX_AH;
	a->max_qp_rd_atom = GN_ROCE_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = GN_ROCE_MAX_RD_ATOM;
	a->max_res_rd_atom = GN_ROCE_MAX_RD_ATOM * GN_ROCE_MAX_QP;
	a->atomic_cap = IB_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	/*
	 * Kernel PDs use GN_ROCE_LOCAL_DMA_LKEY (ibdev.local_dma_lkey): the
	 * engine takes SGE addresses of privileged QPs under that lkey as DMA
	 * addresses of its device, which is our dma_device.
	 */
	a->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	return 0;
}

static struct net_device *gib_port_netdev(struct gib_dev *dev, u32 port)
{
	return ib_device_get_netdev(&dev->ibdev, port);
}

/* Active MTU of an IB port (bytes): what the netdev MTU allows. */
int gib_port_mtu(struct gib_dev *dev, u32 port)
{
	struct net_device *ndev = gib_port_netdev(dev, port);
	enum ib_mtu mtu = IB_MTU_1024;

	if (ndev) {
		mtu = max(iboe_get_mtu(READ_ONCE(ndev->mtu)), IB_MTU_1024);
		dev_put(ndev);
	}
	return mtu;
}

/* UD/GSI datagrams the port dropped for a wrong Q_Key (0 if unknown). */
static u32 gib_qkey_viols(struct gib_dev *dev, u32 port)
{
	struct gn_roce_stats st;

	if (gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_QUERY_STATS, port - 1,
			       NULL, 0, &st, sizeof(st)))
		return 0;
	return min_t(u64, le64_to_cpu(st.qkey_viols), U32_MAX);
}

static int gib_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *a)
{
	struct gib_dev *dev = to_gdev(ibdev);
	struct net_device *ndev;
	bool up = false;

	memset(a, 0, sizeof(*a));
	ndev = gib_port_netdev(dev, port);
	if (ndev) {
		up = netif_running(ndev) && netif_carrier_ok(ndev);
		dev_put(ndev);
	}
	a->state = up ? IB_PORT_ACTIVE : IB_PORT_DOWN;
	a->phys_state = up ? IB_PORT_PHYS_STATE_LINK_UP :
			     IB_PORT_PHYS_STATE_DISABLED;
	a->max_mtu = IB_MTU_4096;
	a->active_mtu = gib_port_mtu(dev, port);
	a->gid_tbl_len = GN_ROCE_MAX_GID;
	/* QP1 (GSI) on every port serves ib_cm */
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_msg_sz = GN_ROCE_MAX_MSG;
	a->bad_pkey_cntr = 0;
	a->qkey_viol_cntr = gib_qkey_viols(dev, port);
	a->pkey_tbl_len = 1;
	a->lid = 0;
	a->sm_lid = 0;
	a->max_vl_num = 1;
	a->ip_gids = true;
	/*
	 * A port whose netdev is gone (del_device unregisters the netdevs
	 * before this device) is down, not an error: the core's cache update
	 * would log "ib_query_port failed" for it.
	 */
	if (!ndev) {
		a->active_speed = IB_SPEED_SDR;
		a->active_width = IB_WIDTH_1X;
		return 0;
	}
	return ib_get_eth_speed(ibdev, port, &a->active_speed,
				&a->active_width);
}

static int gib_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *im)
{
	struct ib_port_attr a;
	int ret;

	ret = ib_query_port(ibdev, port, &a);
	if (ret)
		return ret;
	im->pkey_tbl_len = a.pkey_tbl_len;
	im->gid_tbl_len = a.gid_tbl_len;
	/*
	 * RoCE v2 with QP1: the MAD layer opens a GSI QP on every port and
	 * ib_cm runs on it (rdma_cm connects through it).  No SMI, no SA.
	 */
	im->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer gib_get_link_layer(struct ib_device *ibdev,
					       u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int gib_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int gib_set_gid(const struct ib_gid_attr *attr, bool add)
{
	struct gib_dev *dev = to_gdev(attr->device);
	struct gn_roce_gid_ctx g = {};

	if (attr->index >= GN_ROCE_MAX_GID)
		return -EINVAL;
	if (add) {
		if (attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
			return -EINVAL;
		memcpy(g.gid, attr->gid.raw, sizeof(g.gid));
		g.type = ipv6_addr_v4mapped((struct in6_addr *)attr->gid.raw) ?
			 GN_ROCE_GID_V2_IPV4 : GN_ROCE_GID_V2_IPV6;
	}
	return gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_SET_GID,
				  (attr->port_num - 1) << 16 | attr->index,
				  &g, sizeof(g), NULL, 0);
}

static int gib_add_gid(const struct ib_gid_attr *attr, void **context)
{
	return gib_set_gid(attr, true);
}

static int gib_del_gid(const struct ib_gid_attr *attr, void **context)
{
	return gib_set_gid(attr, false);
}

/* ------------------------------------------------------ ucontext, mmap */

static int gib_alloc_ucontext(struct ib_ucontext *ibuc,
			      struct ib_udata *udata)
{
	struct gaudi_alloc_ucontext_resp resp = {
		.abi_version = GAUDI_IB_UVERBS_ABI_VERSION,
		.max_sge = GAUDI_MAX_SGE,
		.max_inline = GAUDI_MAX_INLINE,
		.wqe_size = GAUDI_WQE_SIZE,
		.cqe_size = GAUDI_CQE_SIZE,
		.ring_hdr_size = GAUDI_RING_HDR_SIZE,
		.ud_max_sge = GAUDI_UD_MAX_SGE,
		.ud_max_inline = GAUDI_UD_MAX_INLINE,
	};
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	gib_limits_init(to_guc(ibuc));
	return gib_respond(udata, &resp, sizeof(resp));
}

/* Runs after every object of the context was destroyed. */
static void gib_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	struct gib_ucontext *uc = to_guc(ibuc);
	int i;

	for (i = 0; i < GIB_RES_MAX; i++)
		WARN_ON_ONCE(uc->count[i]);
	WARN_ON_ONCE(uc->ring_bytes);
}

/*
 * The device goes away under a live process: the core destroys its
 * objects (engine contexts included); the ring pages it still maps stay
 * allocated until it unmaps them, and nothing reads them any more.
 */
/*
 * UVERBS_METHOD_QUERY_CONTEXT (ibv_import_device()): the core answers
 * everything; a context carries nothing the provider must learn again.
 */
static int gib_query_ucontext(struct ib_ucontext *ibuc,
			      struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static void gib_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * Map a ring's pages into @vma, as remap_vmalloc_range() does: that one
 * wants a vmalloc_user() buffer, which cannot be charged to the memory
 * cgroup, and the rings are __vmalloc(GFP_KERNEL_ACCOUNT) memory.  The
 * caller checked that @vma is no larger than the ring.
 */
static int gib_map_ring(struct vm_area_struct *vma, void *buf)
{
	unsigned long addr;
	int ret;

	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, vmalloc_to_page(buf));
		if (ret)
			return ret;
		buf += PAGE_SIZE;
	}
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

static int gib_mmap(struct ib_ucontext *uc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *e;
	struct gib_mmap_entry *me;
	int ret;

	e = rdma_user_mmap_entry_get(uc, vma);
	if (!e)
		return -EINVAL;
	me = container_of(e, struct gib_mmap_entry, rdma);
	if (vma->vm_end - vma->vm_start > e->npages << PAGE_SHIFT)
		ret = -EINVAL;
	else
		ret = gib_map_ring(vma, me->buf);
	rdma_user_mmap_entry_put(e);
	return ret;
}

/*
 * The last reference to an offered ring is gone: no mmap() can reach its
 * buffer any more, so it is freed here (gib_ring_free() gave it to the
 * entry).  Mappings already made hold references to its pages.
 */
static void gib_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct gib_mmap_entry *me = container_of(e, struct gib_mmap_entry,
						 rdma);

	vfree(me->buf);
	kfree(me);
}

/* ------------------------------------------------------------------ PD */

static int gib_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibpd->device);
	struct gib_pd *pd = to_gpd(ibpd);
	struct gaudi_alloc_pd_resp resp = {};
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	pd->uc = rdma_udata_to_drv_context(udata, struct gib_ucontext, ibuc);
	ret = gib_charge(pd->uc, GIB_RES_PD, 0);
	if (ret)
		return ret;
	ret = ida_alloc_range(&dev->pd_ida, 1, GN_ROCE_MAX_PD, GFP_KERNEL);
	if (ret < 0)
		goto err_uncharge;
	pd->pdn = ret;
	if (udata) {
		resp.pdn = pd->pdn;
		ret = gib_respond(udata, &resp, sizeof(resp));
		if (ret) {
			ida_free(&dev->pd_ida, pd->pdn);
			goto err_uncharge;
		}
	}
	return 0;

err_uncharge:
	gib_uncharge(pd->uc, GIB_RES_PD, 0);
	return ret;
}

static int gib_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct gib_pd *pd = to_gpd(ibpd);

	ida_free(&to_gdev(ibpd->device)->pd_ida, pd->pdn);
	gib_uncharge(pd->uc, GIB_RES_PD, 0);
	return 0;
}

/* --------------------------------------------------------------- rings */

/*
 * The engine is done with the ring.  A ring offered to user space belongs
 * to its mmap entry from then on: an mmap() that looked the entry up
 * before the removal may still be mapping the buffer, so the buffer is
 * freed only when the entry's last reference goes (gib_mmap_free()).
 */
void gib_ring_free(struct gib_dev *dev, struct gib_ring *r)
{
	u32 i;

	for (i = 0; r->dma && i < r->npages; i++)
		if (r->dma[i])
			dma_unmap_page(dev->dma_dev, r->dma[i], PAGE_SIZE,
				       DMA_BIDIRECTIONAL);
	kfree(r->dma);
	r->dma = NULL;
	if (r->mmap)
		rdma_user_mmap_entry_remove(r->mmap);
	else
		vfree(r->buf);
	r->mmap = NULL;
	r->buf = NULL;
}

/* The bytes a ring of 2^@log_size entries of @stride bytes takes. */
size_t gib_ring_bytes(u32 log_size, u32 stride)
{
	return PAGE_ALIGN(GN_ROCE_RING_HDR_SIZE + ((size_t)stride << log_size));
}

/*
 * A zeroed ring.  A @user ring (up to several MiB, sized by the process)
 * is charged to the memory cgroup of the process creating it; a kernel
 * object's is not (it would be charged to whichever task happens to run).
 */
int gib_ring_alloc(struct gib_dev *dev, struct gib_ring *r, u32 log_size,
		   u32 stride, bool user)
{
	gfp_t gfp = user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL;
	u32 i;

	r->log_size = log_size;
	r->stride = stride;
	r->size = gib_ring_bytes(log_size, stride);
	r->npages = r->size >> PAGE_SHIFT;
	r->buf = __vmalloc(r->size, gfp | __GFP_ZERO);
	r->dma = kcalloc(r->npages, sizeof(*r->dma), gfp);
	if (!r->buf || !r->dma)
		goto err;
	for (i = 0; i < r->npages; i++) {
		struct page *pg = vmalloc_to_page(r->buf + i * PAGE_SIZE);
		dma_addr_t a;

		a = dma_map_page(dev->dma_dev, pg, 0, PAGE_SIZE,
				 DMA_BIDIRECTIONAL);
		if (dma_mapping_error(dev->dma_dev, a))
			goto err;
		r->dma[i] = a;
	}
	return 0;
err:
	gib_ring_free(dev, r);
	return -ENOMEM;
}

/* Offer a ring to user space; returns the mmap key in *key. */
int gib_ring_mmap(struct ib_ucontext *uc, struct gib_ring *r, u64 *key,
		  u64 *len)
{
	struct gib_mmap_entry *me;
	int ret;

	me = kzalloc(sizeof(*me), GFP_KERNEL_ACCOUNT);
	if (!me)
		return -ENOMEM;
	me->buf = r->buf;
	ret = rdma_user_mmap_entry_insert(uc, &me->rdma, r->size);
	if (ret) {
		kfree(me);
		return ret;
	}
	r->mmap = &me->rdma;
	*key = rdma_user_mmap_get_offset(&me->rdma);
	*len = r->size;
	return 0;
}

int gib_pbl_alloc(struct gib_dev *dev, struct gib_pbl *p, u32 n,
		  struct gn_roce_pbl *hw)
{
	if (!n || n > GN_ROCE_MAX_PBL_PAGES)
		return -EINVAL;
	p->size = (size_t)n * sizeof(__le64);
	p->cpu = dma_alloc_coherent(dev->dma_dev, p->size, &p->dma,
				    GFP_KERNEL);
	if (!p->cpu)
		return -ENOMEM;
	hw->pbl = cpu_to_le64(p->dma);
	hw->npages = cpu_to_le32(n);
	hw->rsvd = 0;
	return 0;
}

void gib_pbl_free(struct gib_dev *dev, struct gib_pbl *p)
{
	if (p->cpu)
		dma_free_coherent(dev->dma_dev, p->size, p->cpu, p->dma);
	p->cpu = NULL;
}

int gib_ring_pbl(struct gib_dev *dev, struct gib_ring *r, struct gib_pbl *p,
		 struct gn_roce_pbl *hw)
{
	u32 i;
	int ret;

	ret = gib_pbl_alloc(dev, p, r->npages, hw);
	if (ret)
		return ret;
	for (i = 0; i < r->npages; i++)
		p->cpu[i] = cpu_to_le64(r->dma[i]);
	return 0;
}

/*
 * A new ring @r of 2^@log_size entries of @stride bytes for an object of
 * user context @uc (NULL: a kernel object), ready for the mailbox command
 * that hands it to the engine: its page list in @pbl, described at @hw
 * (the caller frees @pbl after the command).  A user ring is offered for
 * mmap at once, its key and length in *@key and *@len: the object's
 * creation or resize then cannot fail after the engine took the ring.  On
 * error nothing is left allocated.
 */
int gib_ring_offer(struct gib_dev *dev, struct gib_ucontext *uc,
		   struct gib_ring *r, u32 log_size, u32 stride,
		   struct gib_pbl *pbl, struct gn_roce_pbl *hw, u64 *key,
		   u64 *len)
{
	int ret;

	ret = gib_ring_alloc(dev, r, log_size, stride, !!uc);
	if (ret)
		return ret;
	if (uc) {
		ret = gib_ring_mmap(&uc->ibuc, r, key, len);
		if (ret)
			goto err;
	}
	ret = gib_ring_pbl(dev, r, pbl, hw);
	if (ret)
		goto err;
	return 0;
err:
	gib_ring_free(dev, r);
	return ret;
}

/*
 * Replace the ring @cur of user object @num (charged to @uc as one @res)
 * by one of 2^@log_size entries: the new ring is charged before the old
 * one is given back (a context at its limit cannot grow an object),
 * offered for mmap (*@key, *@len) and handed to the engine by mailbox
 * command @cmd with @ctx (@ctx_len bytes, the ring's page list at @hw),
 * which moves the entries there.  Nothing fails after the move; on error
 * the object keeps its ring.
 */
int gib_ring_replace(struct gib_dev *dev, struct gib_ucontext *uc,
		     enum gib_res res, struct gib_ring *cur, u32 log_size,
		     u32 cmd, u32 num, void *ctx, size_t ctx_len,
		     struct gn_roce_pbl *hw, u64 *key, u64 *len)
{
	u64 bytes = gib_ring_bytes(log_size, cur->stride);
	struct gib_ring ring = {};
	struct gib_pbl pbl = {};
	int ret;

	ret = gib_charge(uc, res, bytes);
	if (ret)
		return ret;
	ret = gib_ring_offer(dev, uc, &ring, log_size, cur->stride, &pbl, hw,
			     key, len);
	if (ret)
		goto err_uncharge;
	ret = gaudi_nic_roce_cmd(dev->hw, cmd, num, ctx, ctx_len, NULL, 0);
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err_ring;
	/* the engine uses the new ring only: the old one can go */
	gib_uncharge(uc, res, gib_ring_bytes(cur->log_size, cur->stride));
	gib_ring_free(dev, cur);
	*cur = ring;
	return 0;

err_ring:
	gib_ring_free(dev, &ring);
err_uncharge:
	gib_uncharge(uc, res, bytes);
	return ret;
}

/* Free slots of a kernel work queue or SRQ whose producer index is @prod. */
static u32 gib_kring_room(struct gib_ring *r, u32 prod)
{
	struct gn_roce_ring_hdr *hdr = r->buf;
	u32 cons, used;

	/* the engine is done reading the slots before cons */
	cons = le32_to_cpu(smp_load_acquire(&hdr->cons));
	used = prod - cons;

	/* an engine reporting more than it could have taken: full */
	return used >= (1U << r->log_size) ? 0 : (1U << r->log_size) - used;
}

/*
 * Post the list of work requests @wr (struct ib_send_wr or ib_recv_wr, as
 * @ops knows) to the kernel work queue or SRQ @r, whose producer index
 * *@prod @lock guards: each WQE, built by @ops->build (with @priv), is
 * written whole into its slot, and the producer index is published
 * (release) after all of them.  Returns 0, or the error of the first
 * work request not posted (*@bad); *@posted: how many were.
 */
int gib_kring_post(struct gib_ring *r, spinlock_t *lock, u32 *prod,
		   const struct gib_wr_ops *ops, void *priv, const void *wr,
		   const void **bad, u32 *posted)
{
	struct gn_roce_ring_hdr *hdr = r->buf;
	struct gn_roce_wqe w;
	unsigned long flags;
	u32 start, room;
	int ret = 0;

	spin_lock_irqsave(lock, flags);
	start = *prod;
	room = gib_kring_room(r, *prod);
	for (; wr; wr = ops->next(wr)) {
		if (!room) {
			ret = -ENOMEM;
			break;
		}
		ret = ops->build(priv, wr, &w);
		if (ret)
			break;
		memcpy(r->buf + GN_ROCE_RING_HDR_SIZE +
		       (size_t)(*prod & ((1U << r->log_size) - 1)) * r->stride,
		       &w, sizeof(w));
		(*prod)++;
		room--;
	}
	if (ret)
		*bad = wr;
	*posted = *prod - start;
	if (*posted)
		/* the WQEs before the index */
		smp_store_release(&hdr->prod, cpu_to_le32(*prod));
	spin_unlock_irqrestore(lock, flags);
	return ret;
}

/* ------------------------------------------------------------------ AH */

/*
 * Address handles.  The core calls create_ah for kernel AHs (sleepable
 * or not, as RDMA_CREATE_AH_SLEEPABLE says) and create_user_ah, always
 * sleepable, for uverbs; both only validate and store the address vector
 * (struct gib_ah), so neither sleeps nor talks to the engine.
 */
static int gib_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init,
			 struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibah->device);
	struct gib_ah *ah = to_gah(ibah);
	gfp_t gfp = init->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	struct gaudi_create_ah_resp resp = {};
	const struct ib_global_route *grh;
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	ret = gib_av_from_attr(dev, init->ah_attr, &ah->av);
	if (ret)
		return ret;
	/* The engine has no multicast groups. */
	grh = rdma_ah_read_grh(init->ah_attr);
	if (rdma_is_multicast_addr((struct in6_addr *)grh->dgid.raw))
		return -EOPNOTSUPP;
	/* user AHs (create_user_ah) come with udata, kernel ones without */
	ah->uc = rdma_udata_to_drv_context(udata, struct gib_ucontext, ibuc);
	ret = gib_charge(ah->uc, GIB_RES_AH, 0);
	if (ret)
		return ret;
	ret = ida_alloc_range(&dev->ah_ida, 1, GIB_MAX_AH, gfp);
	if (ret < 0) {
		ret = ret == -ENOSPC ? -ENOMEM : ret;
		goto err_uncharge;
	}
	ah->ahn = ret;
	if (udata) {
		/* the provider copies the AV into its UD send WQEs */
		static_assert(sizeof(resp.av) == sizeof(ah->av));
		memcpy(&resp.av, &ah->av, sizeof(resp.av));
		ret = gib_respond(udata, &resp, sizeof(resp));
		if (ret) {
			ida_free(&dev->ah_ida, ah->ahn);
			goto err_uncharge;
		}
	}
	return 0;

err_uncharge:
	gib_uncharge(ah->uc, GIB_RES_AH, 0);
	return ret;
}

static int gib_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct gib_ah *ah = to_gah(ibah);

	/*
	 * Neither sleeps: fine without RDMA_DESTROY_AH_SLEEPABLE (and only
	 * user AHs, always destroyed where sleeping is allowed, are charged).
	 */
	ida_free(&to_gdev(ibah->device)->ah_ida, ah->ahn);
	gib_uncharge(ah->uc, GIB_RES_AH, 0);
	return 0;
}

/* ------------------------------------------------------------------ MR */

/*
 * No MR maps all of memory: kernel PDs get the local DMA lkey instead
 * (IBK_LOCAL_DMA_LKEY), and nothing here registers remote-access DMA MRs.
 */
static struct ib_mr *gib_get_dma_mr(struct ib_pd *pd, int access)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static u32 gib_mr_access(int acc)
{
	u32 a = 0;

	if (acc & IB_ACCESS_LOCAL_WRITE)
		a |= GN_ROCE_MR_LOCAL_WRITE;
	if (acc & IB_ACCESS_REMOTE_WRITE)
		a |= GN_ROCE_MR_REMOTE_WRITE;
	if (acc & IB_ACCESS_REMOTE_READ)
		a |= GN_ROCE_MR_REMOTE_READ;
	if (acc & IB_ACCESS_MW_BIND)
		a |= GN_ROCE_MR_MW_BIND;
	if (acc & IB_ACCESS_FLUSH_GLOBAL)
		a |= GN_ROCE_MR_FLUSH_GLOBAL;
	return a;
}

/*
 * The engine context of an MR of @umem at @iova with @key in @pdn: @ctx,
 * whose page list @pbl the caller frees (gib_pbl_free()) after the
 * command.
 */
static int gib_mr_ctx(struct gib_dev *dev, struct ib_umem *umem, u64 iova,
		      u32 key, u32 pdn, int access, struct gib_pbl *pbl,
		      struct gn_roce_mr_ctx *ctx)
{
	struct ib_block_iter biter;
	u64 first, last;
	u32 n, i = 0;
	int ret;

	first = ALIGN_DOWN(umem->address, PAGE_SIZE);
	last = ALIGN(umem->address + umem->length, PAGE_SIZE);
	if ((last - first) >> PAGE_SHIFT > GN_ROCE_MAX_PBL_PAGES)
		return -EINVAL;
	n = (last - first) >> PAGE_SHIFT;
	memset(ctx, 0, sizeof(*ctx));
	ret = gib_pbl_alloc(dev, pbl, n, &ctx->pages);
	if (ret)
		return ret;
	rdma_umem_for_each_dma_block(umem, &biter, PAGE_SIZE) {
		if (i == n)
			break;
		pbl->cpu[i++] = cpu_to_le64(rdma_block_iter_dma_address(&biter));
	}
	if (i != n) {
		gib_pbl_free(dev, pbl);
		return -EFAULT;
	}
	ctx->iova = cpu_to_le64(iova);
	ctx->length = cpu_to_le64(umem->length);
	ctx->key = cpu_to_le32(key);
	ctx->pdn = cpu_to_le32(pdn);
	ctx->access = cpu_to_le32(gib_mr_access(access));
	ctx->offset = cpu_to_le32(umem->address & ~PAGE_MASK);
	return 0;
}

/* An MR of @umem, charged to the user context @uc (NULL: none). */
static struct ib_mr *gib_mr_create(struct ib_pd *ibpd, struct ib_umem *umem,
				   u64 iova, int access,
				   struct gib_ucontext *uc)
{
	struct gib_dev *dev = to_gdev(ibpd->device);
	struct gn_roce_mr_ctx ctx;
	struct gib_pbl pbl = {};
	struct gib_mr *mr;
	int ret;

	ret = gib_charge(uc, GIB_RES_MR, 0);
	if (ret)
		goto err_umem;
	/* user MRs only: gib_get_dma_mr() makes none */
	mr = kzalloc(sizeof(*mr), GFP_KERNEL_ACCOUNT);
	if (!mr) {
		ret = -ENOMEM;
		goto err_uncharge;
	}
	mr->uc = uc;
	ret = ida_alloc_range(&dev->mr_ida, 1, GN_ROCE_MAX_MR - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	mr->index = ret;
	mr->umem = umem;
	mr->access = access;
	mr->ibmr.lkey = mr->index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.rkey = mr->ibmr.lkey;
	mr->ibmr.length = umem->length;
	mr->ibmr.iova = iova;
	mr->ibmr.page_size = PAGE_SIZE;
	ret = gib_mr_ctx(dev, umem, iova, mr->ibmr.lkey, to_gpd(ibpd)->pdn,
			 access, &pbl, &ctx);
	if (ret)
		goto err_ida;
	ret = gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_CREATE_MR, mr->index,
				 &ctx, sizeof(ctx), NULL, 0);
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err_ida;
	return &mr->ibmr;

err_ida:
	ida_free(&dev->mr_ida, mr->index);
err_free:
	kfree(mr);
err_uncharge:
	gib_uncharge(uc, GIB_RES_MR, 0);
err_umem:
	ib_umem_release(umem);
	return ERR_PTR(ret);
}

static int gib_check_mr_len(struct gib_dev *dev, u64 len)
{
	if (!len)
		return -EINVAL;
	if (len > GIB_MAX_MR_SIZE) {
		ibdev_warn_ratelimited(&dev->ibdev,
				       "MR of %llu bytes refused: max_mr_size is %llu; register it in several MRs\n",
				       len, GIB_MAX_MR_SIZE);
		return -EINVAL;
	}
	return 0;
}

/*
 * IB_ACCESS_REMOTE_ATOMIC is accepted and ignored: atomic_cap is NONE, so
 * no atomic request ever reaches an MR, and libfabric's verbs provider
 * asks for it on every registration with remote write.
 */
#define GIB_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_MW_BIND | IB_ACCESS_FLUSH_GLOBAL | \
			 IB_ACCESS_RELAXED_ORDERING)

static struct ib_mr *gib_reg_user_mr(struct ib_pd *pd, u64 start, u64 len,
				     u64 iova, int access,
				     struct ib_udata *udata)
{
	struct ib_umem *umem;
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ERR_PTR(ret);
	if (access & ~GIB_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	ret = gib_check_mr_len(to_gdev(pd->device), len);
	if (ret)
		return ERR_PTR(ret);
	umem = ib_umem_get(pd->device, start, len, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	return gib_mr_create(pd, umem, iova, access,
			     rdma_udata_to_drv_context(udata,
						       struct gib_ucontext,
						       ibuc));
}

static struct ib_mr *gib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
					    u64 len, u64 iova, int fd,
					    int access,
					    struct uverbs_attr_bundle *attrs)
{
	struct ib_umem_dmabuf *ud;
	int ret;

	ret = gib_check_udata_in(&attrs->driver_udata);
	if (ret)
		return ERR_PTR(ret);
	if (access & ~GIB_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	ret = gib_check_mr_len(to_gdev(pd->device), len);
	if (ret)
		return ERR_PTR(ret);
	ud = ib_umem_dmabuf_get_pinned(pd->device, offset, len, fd, access);
	if (IS_ERR(ud))
		return ERR_CAST(ud);
	return gib_mr_create(pd, &ud->umem, iova, access,
			     to_guc(attrs->context));
}

/*
 * Re-registration in place (ibv_rereg_mr()): a new translation
 * (IB_MR_REREG_TRANS), PD or access for the same MR, whose keys stay, so
 * that peers holding the rkey keep using it.  The engine swaps the whole
 * context at once (REREG_MR); on failure the MR is left as it was.
 * Memory is pinned anew for a new translation, or when the new access
 * needs the pages writable and they were pinned read-only.  A dma-buf MR
 * keeps its buffer: a new translation for it is EOPNOTSUPP.  Changing
 * IB_ACCESS_REMOTE_ATOMIC is EOPNOTSUPP too: the device has no atomics
 * (atomic_cap NONE), registration accepts the flag only because
 * libfabric always asks for it, and a change of it could only be
 * observed through atomic operations.
 */
static struct ib_mr *gib_rereg_user_mr(struct ib_mr *ibmr, int flags,
				       u64 start, u64 len, u64 iova,
				       int access, struct ib_pd *pd,
				       struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmr->device);
	struct gib_mr *mr = to_gmr(ibmr);
	struct ib_umem *umem = mr->umem;
	struct gn_roce_mr_ctx ctx;
	struct gib_pbl pbl = {};
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ERR_PTR(ret);
	if (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD | IB_MR_REREG_ACCESS))
		return ERR_PTR(-EOPNOTSUPP);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;
	if (!(flags & IB_MR_REREG_PD))
		pd = ibmr->pd;
	if (access & ~GIB_MR_ACCESS ||
	    (access ^ mr->access) & IB_ACCESS_REMOTE_ATOMIC)
		return ERR_PTR(-EOPNOTSUPP);
	if (flags & IB_MR_REREG_TRANS) {
		if (umem->is_dmabuf)
			return ERR_PTR(-EOPNOTSUPP);
		ret = gib_check_mr_len(dev, len);
		if (ret)
			return ERR_PTR(ret);
	} else {
		start = umem->address;
		len = umem->length;
		iova = ibmr->iova;
	}
	if (flags & IB_MR_REREG_TRANS ||
	    (!umem->is_dmabuf && !umem->writable && ib_access_writable(access))) {
		umem = ib_umem_get(ibmr->device, start, len, access);
		if (IS_ERR(umem))
			return ERR_CAST(umem);
	}
	ret = gib_mr_ctx(dev, umem, iova, ibmr->lkey, to_gpd(pd)->pdn, access,
			 &pbl, &ctx);
	if (ret)
		goto err;
	ret = gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_REREG_MR, mr->index,
				 &ctx, sizeof(ctx), NULL, 0);
	gib_pbl_free(dev, &pbl);
	if (ret)
		goto err;
	if (umem != mr->umem) {
		ib_umem_release(mr->umem);
		mr->umem = umem;
	}
	mr->access = access;
	ibmr->length = umem->length;
	ibmr->iova = iova;
	/* the core moves ibmr->pd and its use counts */
	return NULL;
err:
	if (umem != mr->umem)
		ib_umem_release(umem);
	return ERR_PTR(ret);
}

static int gib_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmr->device);
	struct gib_mr *mr = to_gmr(ibmr);

	/* After this the engine holds no translation of the pages. */
	gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_DESTROY_MR, mr->index, NULL, 0,
			   NULL, 0);
	ib_umem_release(mr->umem);
	ida_free(&dev->mr_ida, mr->index);
	gib_uncharge(mr->uc, GIB_RES_MR, 0);
	kfree(mr);
	return 0;
}

/* ------------------------------------------------------------------ MW */

static int gib_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct gib_dev *dev = to_gdev(ibmw->device);
	struct gib_mw *mw = container_of(ibmw, struct gib_mw, ibmw);
	struct gib_ucontext *uc = rdma_udata_to_drv_context(udata,
							    struct gib_ucontext,
							    ibuc);
	struct gn_roce_mw_ctx ctx = {};
	int ret;

	ret = gib_check_udata_in(udata);
	if (ret)
		return ret;
	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	ret = gib_charge(uc, GIB_RES_MW, 0);
	if (ret)
		return ret;
	ret = ida_alloc_max(&dev->mw_ida, GN_ROCE_MAX_MW - 1, GFP_KERNEL);
	if (ret < 0)
		goto err_uncharge;
	mw->index = ret;
	mw->uc = uc;
	ibmw->rkey = (GN_ROCE_MAX_MR + mw->index) << 8 |
		     (get_random_u32() & 0xff);
	ctx.key = cpu_to_le32(ibmw->rkey);
	ctx.pdn = cpu_to_le32(to_gpd(ibmw->pd)->pdn);
	ctx.type = ibmw->type == IB_MW_TYPE_1 ? 1 : 2;
	ret = gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_CREATE_MW, mw->index,
				 &ctx, sizeof(ctx), NULL, 0);
	if (ret)
		goto err_ida;
	return 0;

err_ida:
	ida_free(&dev->mw_ida, mw->index);
err_uncharge:
	gib_uncharge(uc, GIB_RES_MW, 0);
	return ret;
}

/* After DESTROY_MW no request can use the window's key. */
static int gib_dealloc_mw(struct ib_mw *ibmw)
{
	struct gib_dev *dev = to_gdev(ibmw->device);
	struct gib_mw *mw = container_of(ibmw, struct gib_mw, ibmw);

	gaudi_nic_roce_cmd(dev->hw, GN_ROCE_CMD_DESTROY_MW, mw->index, NULL, 0,
			   NULL, 0);
	ida_free(&dev->mw_ida, mw->index);
	gib_uncharge(mw->uc, GIB_RES_MW, 0);
	return 0;
}

/* ------------------------------------------------------------ counters */

/* In struct gn_roce_stats order. */
static const struct rdma_stat_desc gib_stat_descs[] = {
	{ .name = "tx_packets" },
	{ .name = "tx_bytes" },
	{ .name = "rx_packets" },
	{ .name = "rx_bytes" },
	{ .name = "retransmits" },
	{ .name = "local_ack_timeouts" },
	{ .name = "out_of_sequence" },
	{ .name = "duplicate_requests" },
	{ .name = "rx_icrc_errors" },
	{ .name = "rnr_nak_received" },
	{ .name = "rnr_nak_sent" },
	{ .name = "seq_nak_received" },
	{ .name = "rx_dropped" },
	{ .name = "remote_access_errors" },
	{ .name = "qkey_violations" },
	{ .name = "loopback_packets" },
};

static_assert(ARRAY_SIZE(gib_stat_descs) ==
	      sizeof(struct gn_roce_stats) / sizeof(__le64));

static struct rdma_hw_stats *gib_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(gib_stat_descs,
					  ARRAY_SIZE(gib_stat_descs),
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int gib_get_hw_stats(struct ib_device *ibdev,
			    struct rdma_hw_stats *stats, u32 port, int index)
{
	struct gn_roce_stats st;
	const __le64 *v = (const __le64 *)&st;
	int i, ret;

	if (!port)
		return 0;
	ret = gaudi_nic_roce_cmd(to_gdev(ibdev)->hw, GN_ROCE_CMD_QUERY_STATS,
				 port - 1, NULL, 0, &st, sizeof(st));
	if (ret)
		return ret;
	for (i = 0; i < ARRAY_SIZE(gib_stat_descs); i++)
		stats->value[i] = le64_to_cpu(v[i]);
	return ARRAY_SIZE(gib_stat_descs);
}

const struct ib_device_ops gib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = GAUDI_IB_UVERBS_ABI_VERSION,

	.query_device = gib_query_device,
	.query_port = gib_query_port,
	.get_port_immutable = gib_get_port_immutable,
	.get_link_layer = gib_get_link_layer,
	.query_pkey = gib_query_pkey,
	.add_gid = gib_add_gid,
	.del_gid = gib_del_gid,
	.alloc_ucontext = gib_alloc_ucontext,
	.dealloc_ucontext = gib_dealloc_ucontext,
	.disassociate_ucontext = gib_disassociate_ucontext,
	.query_ucontext = gib_query_ucontext,
	.mmap = gib_mmap,
	.mmap_free = gib_mmap_free,
	.alloc_pd = gib_alloc_pd,
	.dealloc_pd = gib_dealloc_pd,
	.create_ah = gib_create_ah,
	.create_user_ah = gib_create_ah,
	.destroy_ah = gib_destroy_ah,
	.create_cq = gib_create_cq,
	.destroy_cq = gib_destroy_cq,
	.resize_cq = gib_resize_cq,
	.poll_cq = gib_poll_cq,
	.req_notify_cq = gib_req_notify_cq,
	.create_qp = gib_create_qp,
	.modify_qp = gib_modify_qp,
	.query_qp = gib_query_qp,
	.destroy_qp = gib_destroy_qp,
	.post_send = gib_post_send,
	.post_recv = gib_post_recv,
	.create_srq = gib_create_srq,
	.modify_srq = gib_modify_srq,
	.query_srq = gib_query_srq,
	.destroy_srq = gib_destroy_srq,
	.post_srq_recv = gib_post_srq_recv,
	.get_dma_mr = gib_get_dma_mr,
	.reg_user_mr = gib_reg_user_mr,
	.reg_user_mr_dmabuf = gib_reg_user_mr_dmabuf,
	.rereg_user_mr = gib_rereg_user_mr,
	.dereg_mr = gib_dereg_mr,
	.alloc_mw = gib_alloc_mw,
	.dealloc_mw = gib_dealloc_mw,
	.alloc_hw_port_stats = gib_alloc_hw_port_stats,
	.get_hw_stats = gib_get_hw_stats,

	INIT_RDMA_OBJ_SIZE(ib_ucontext, gib_ucontext, ibuc),
	INIT_RDMA_OBJ_SIZE(ib_pd, gib_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_mw, gib_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_ah, gib_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, gib_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_qp, gib_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, gib_srq, ibsrq),
};
