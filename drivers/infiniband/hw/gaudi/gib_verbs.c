// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib verbs: device/port queries, ucontext, PD, AH, counters and
 * the ops table.  Rings are in gib_ring.c, MRs and MWs in gib_mr.c, CQs
 * in gib_cq.c, QPs in gib_qp.c, SRQs in gib_srq.c.
 *
 * User space (the gaudi provider) posts and polls through rings mapped
 * into the process; the kernel only creates contexts in the engine, rings
 * the send doorbell (an empty post_send) and arms CQs.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <net/addrconf.h>
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/gaudi-abi.h>
#include <linux/gaudi_nic/core.h>

#include "gaudi_ib.h"

#define GIB_VENDOR_ID		0x1da3	/* Habana Labs */
#define GIB_VENDOR_PART		0x1060
#define GIB_FW_VER		0x0001000000000000ULL

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
static_assert(sizeof(struct gaudi_ud_wqe) == GN_ROCE_UD_WQE_SIZE);
static_assert(sizeof(struct gn_roce_ud_wqe) == GN_ROCE_UD_WQE_SIZE);
static_assert(GAUDI_UD_WQE_SIZE == GN_ROCE_UD_WQE_SIZE);
static_assert(GAUDI_UD_WQE256_MAX_INLINE == GN_ROCE_UD_WQE256_MAX_INLINE);
/* a 128-byte UD WQE is the first half of a 256-byte one */
static_assert(offsetof(struct gaudi_ud_wqe, av) ==
	      offsetof(struct gn_roce_wqe, ud.av));
static_assert(offsetof(struct gaudi_ud_wqe, sge) ==
	      offsetof(struct gn_roce_wqe, ud.sge));
static_assert(offsetof(struct gn_roce_ud_wqe, sge) ==
	      offsetof(struct gn_roce_wqe, ud.sge));
static_assert(offsetof(struct gn_roce_ud_wqe, qkey) ==
	      offsetof(struct gn_roce_wqe, qkey));
static_assert(offsetof(struct gn_roce_ud_wqe, dest_qpn) ==
	      offsetof(struct gn_roce_wqe, dest_qpn));
static_assert(offsetof(struct gn_roce_ud_wqe, inline_len) ==
	      offsetof(struct gn_roce_wqe, inline_len));

/*
 * The provider writes WQEs and reads CQEs in the engine's format, so the
 * uABI opcodes, flags and access bits are the hardware's values, and a
 * CQE's status is an ib_wc_status (gib_poll_cq() and the provider pass it
 * through).  A hardware change that moves one fails the build here.
 */
#define GIB_SAME(a, b)	static_assert((int)(a) == (int)(b))
GIB_SAME(GAUDI_WQE_SEND, GN_ROCE_WQE_SEND);
GIB_SAME(GAUDI_WQE_SEND_IMM, GN_ROCE_WQE_SEND_IMM);
GIB_SAME(GAUDI_WQE_WRITE, GN_ROCE_WQE_WRITE);
GIB_SAME(GAUDI_WQE_WRITE_IMM, GN_ROCE_WQE_WRITE_IMM);
GIB_SAME(GAUDI_WQE_READ, GN_ROCE_WQE_READ);
GIB_SAME(GAUDI_WQE_SEND_INV, GN_ROCE_WQE_SEND_INV);
GIB_SAME(GAUDI_WQE_BIND_MW, GN_ROCE_WQE_BIND_MW);
GIB_SAME(GAUDI_WQE_LOCAL_INV, GN_ROCE_WQE_LOCAL_INV);
GIB_SAME(GAUDI_WQE_FLUSH, GN_ROCE_WQE_FLUSH);
GIB_SAME(GAUDI_WQE_RECV, GN_ROCE_WQE_RECV);
GIB_SAME(GAUDI_WQE_F_SIGNALED, GN_ROCE_WQE_F_SIGNALED);
GIB_SAME(GAUDI_WQE_F_INLINE, GN_ROCE_WQE_F_INLINE);
GIB_SAME(GAUDI_WQE_F_SOLICITED, GN_ROCE_WQE_F_SOLICITED);
GIB_SAME(GAUDI_WQE_F_FENCE, GN_ROCE_WQE_F_FENCE);
GIB_SAME(GAUDI_MW_REMOTE_WRITE, GN_ROCE_MR_REMOTE_WRITE);
GIB_SAME(GAUDI_MW_REMOTE_READ, GN_ROCE_MR_REMOTE_READ);
GIB_SAME(GAUDI_CQE_SEND, GN_ROCE_CQE_SEND);
GIB_SAME(GAUDI_CQE_WRITE, GN_ROCE_CQE_WRITE);
GIB_SAME(GAUDI_CQE_READ, GN_ROCE_CQE_READ);
GIB_SAME(GAUDI_CQE_BIND_MW, GN_ROCE_CQE_BIND_MW);
GIB_SAME(GAUDI_CQE_LOCAL_INV, GN_ROCE_CQE_LOCAL_INV);
GIB_SAME(GAUDI_CQE_FLUSH, GN_ROCE_CQE_FLUSH);
GIB_SAME(GAUDI_CQE_RECV, GN_ROCE_CQE_RECV);
GIB_SAME(GAUDI_CQE_RECV_WRITE_IMM, GN_ROCE_CQE_RECV_WRITE_IMM);
GIB_SAME(GAUDI_CQE_F_IMM, GN_ROCE_CQE_F_IMM);
GIB_SAME(GAUDI_CQE_F_GRH, GN_ROCE_CQE_F_GRH);
GIB_SAME(GAUDI_CQE_F_IPV6, GN_ROCE_CQE_F_IPV6);
GIB_SAME(GAUDI_CQE_F_INV, GN_ROCE_CQE_F_INV);
GIB_SAME(GN_ROCE_CQE_OK, IB_WC_SUCCESS);
GIB_SAME(GN_ROCE_CQE_LOC_LEN_ERR, IB_WC_LOC_LEN_ERR);
GIB_SAME(GN_ROCE_CQE_LOC_QP_OP_ERR, IB_WC_LOC_QP_OP_ERR);
GIB_SAME(GN_ROCE_CQE_LOC_PROT_ERR, IB_WC_LOC_PROT_ERR);
GIB_SAME(GN_ROCE_CQE_WR_FLUSH_ERR, IB_WC_WR_FLUSH_ERR);
GIB_SAME(GN_ROCE_CQE_MW_BIND_ERR, IB_WC_MW_BIND_ERR);
GIB_SAME(GN_ROCE_CQE_BAD_RESP_ERR, IB_WC_BAD_RESP_ERR);
GIB_SAME(GN_ROCE_CQE_LOC_ACCESS_ERR, IB_WC_LOC_ACCESS_ERR);
GIB_SAME(GN_ROCE_CQE_REM_INV_REQ_ERR, IB_WC_REM_INV_REQ_ERR);
GIB_SAME(GN_ROCE_CQE_REM_ACCESS_ERR, IB_WC_REM_ACCESS_ERR);
GIB_SAME(GN_ROCE_CQE_REM_OP_ERR, IB_WC_REM_OP_ERR);
GIB_SAME(GN_ROCE_CQE_RETRY_EXC_ERR, IB_WC_RETRY_EXC_ERR);
GIB_SAME(GN_ROCE_CQE_RNR_RETRY_EXC_ERR, IB_WC_RNR_RETRY_EXC_ERR);
GIB_SAME(GN_ROCE_CQE_GENERAL_ERR, IB_WC_GENERAL_ERR);

/* No input udata is defined yet: all of it must be zero. */
int gib_check_udata_in(struct ib_udata *udata)
{
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;
	return 0;
}

/*
 * The user context a create verb's @udata comes from, in *@uc: NULL for
 * a kernel caller; -EINVAL for a user one without a context.
 */
int gib_udata_uc(struct ib_udata *udata, struct gib_ucontext **uc)
{
	*uc = NULL;
	if (!udata)
		return 0;
	*uc = rdma_udata_to_drv_context(udata, struct gib_ucontext, ibuc);
	return *uc ? 0 : -EINVAL;
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
	a->max_dm_size = gib_max_dm_size(dev);
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

	if (gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_QUERY_STATS, port - 1,
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
	return gaudi_nic_roce_cmd(dev->gadev, GN_ROCE_CMD_SET_GID,
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
	else if (me->hbm)
		ret = gib_dm_map(vma, me->hbm);
	else
		ret = gib_map_ring(vma, me->buf);
	rdma_user_mmap_entry_put(e);
	return ret;
}

/*
 * The last reference to an offered ring or DM is gone: no mmap() can
 * reach its buffer any more, so it is freed here (gib_ring_free() and
 * gib_dealloc_dm() gave it to the entry).  Mappings already made hold
 * references to its pages.
 */
static void gib_mmap_free(struct rdma_user_mmap_entry *e)
{
	struct gib_mmap_entry *me = container_of(e, struct gib_mmap_entry,
						 rdma);

	if (me->hbm)
		gaudi_nic_hbm_free(me->hbm);
	else
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
	ret = gib_id_alloc(&dev->pd_ida, pd->uc, GIB_RES_PD, 1, GN_ROCE_MAX_PD,
			   GFP_KERNEL);
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
	ret = gib_id_alloc(&dev->ah_ida, ah->uc, GIB_RES_AH, 1, GIB_MAX_AH, gfp);
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
	{ .name = "sq_deferrals" },
	{ .name = "read_pass_yields" },
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
	ret = gaudi_nic_roce_cmd(to_gdev(ibdev)->gadev, GN_ROCE_CMD_QUERY_STATS,
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
	.alloc_dm = gib_alloc_dm,
	.dealloc_dm = gib_dealloc_dm,
	.reg_dm_mr = gib_reg_dm_mr,
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
