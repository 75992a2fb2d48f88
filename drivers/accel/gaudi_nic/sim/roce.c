// SPDX-License-Identifier: GPL-2.0
/*
 * The emulated RoCE v2 engine: the mailbox (its command table; each
 * object's commands are in roce_cq.c, roce_qp.c, roce_srq.c, roce_mr.c and
 * roce_mw.c), the port commands, doorbells, and the engine's life.  The
 * core driver creates it through the hardware ops (gnsim_roce_alloc()) and
 * the auxiliary device gaudi_nic.rdma.N through which gaudi_ib drives it.
 * The data path is in roce_dp.c; the concurrency model in roce.h.
 */
#include <linux/dma-direct.h>
#include <linux/etherdevice.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/netdevice.h>
#include <linux/platform_device.h>
#include <linux/rtnetlink.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include "bus.h"
#include "mac.h"
#include "roce.h"

static_assert(sizeof(struct gn_roce_qp_ctx) % 8 == 0);
static_assert(sizeof(struct gn_roce_mr_ctx) % 8 == 0);
static_assert(sizeof(struct gn_roce_mw_ctx) % 8 == 0);
static_assert(sizeof(struct gnsim_rstats) == sizeof(struct gn_roce_stats));

/* Host memory or HBM behind a DMA address of our device. */
void *gnsim_roce_dma_virt(struct gaudi_nic_roce *r, u64 addr)
{
	return phys_to_virt(dma_to_phys(r->dma_dev, addr));
}

static struct page *gnsim_roce_dma_page(struct gaudi_nic_roce *r, u64 addr)
{
	unsigned int off;
	struct page *pg;
	phys_addr_t pa;

	if (addr >= GNSIM_BUS_BASE) {
		pg = gnsim_bus_get_page(addr, &off);
		if (IS_ERR(pg))
			return NULL;
		if (off) {
			put_page(pg);
			return NULL;
		}
		return pg;
	}
	pa = dma_to_phys(r->dma_dev, addr);
	if (!pfn_valid(PHYS_PFN(pa)))
		return NULL;
	pg = pfn_to_page(PHYS_PFN(pa));
	get_page(pg);
	return pg;
}

void gnsim_rmem_free(struct gnsim_rmem *m)
{
	u32 i;

	for (i = 0; m->pages && i < m->npages; i++)
		if (m->pages[i])
			put_page(m->pages[i]);
	kvfree(m->pages);
	m->pages = NULL;
	m->npages = 0;
}

/* Read a page list and translate it (the engine's address cache). */
int gnsim_rmem_load(struct gaudi_nic_roce *r, const struct gn_roce_pbl *p,
		    struct gnsim_rmem *m)
{
	u32 n = le32_to_cpu(p->npages), i;
	const __le64 *pbl;

	if (!n || n > GN_ROCE_MAX_PBL_PAGES || p->rsvd)
		return -EINVAL;
	pbl = gnsim_roce_dma_virt(r, le64_to_cpu(p->pbl));
	/*
	 * Commands run in their caller's context: what a process makes the
	 * engine hold is charged to its memory cgroup (N3 of the November
	 * review).  A dma-buf MR pins no process memory, so this array is
	 * all that registering one HBM export thousands of times costs.
	 */
	m->pages = kvcalloc(n, sizeof(*m->pages),
			    GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	if (!m->pages)
		return -ENOMEM;
	m->npages = n;
	for (i = 0; i < n; i++) {
		u64 a = le64_to_cpu(READ_ONCE(pbl[i]));

		if (a & ~PAGE_MASK)
			goto bad;
		m->pages[i] = gnsim_roce_dma_page(r, a);
		if (!m->pages[i])
			goto bad;
	}
	return 0;
bad:
	gnsim_rmem_free(m);
	return -EINVAL;
}

int gnsim_rring_load(struct gaudi_nic_roce *r, const struct gn_roce_pbl *p,
		     u32 log, u32 stride, struct gnsim_rring *ring)
{
	u64 need = GN_ROCE_RING_HDR_SIZE + ((u64)stride << log);
	int ret;
	u32 i;

	ret = gnsim_rmem_load(r, p, &ring->mem);
	if (ret)
		return ret;
	/* Rings live in host memory, directly addressable. */
	for (i = 0; i < ring->mem.npages; i++)
		if (PageHighMem(ring->mem.pages[i]))
			ret = -EINVAL;
	if (ret || ((u64)ring->mem.npages << PAGE_SHIFT) < need) {
		gnsim_rmem_free(&ring->mem);
		return -EINVAL;
	}
	ring->size = 1U << log;
	ring->stride = stride;
	return 0;
}

/* ------------------------------------------------------------ commands */

/* Doorbells @first..@last of @num latched and not taken: dropped. */
void gnsim_roce_db_drop(struct gaudi_nic_roce *r, u32 first, u32 last,
			u32 num)
{
	u32 t;

	for (t = first; t <= last; t++)
		clear_bit((t - GN_DB_FIRST) * GN_DB_OBJS + num, r->db_late);
}

static int gnsim_cmd_set_port(struct gaudi_nic_roce *r, u32 port,
			      const void *in, void *out)
{
	const struct gn_roce_port_ctx *c = in;

	if (port >= r->num_ports || c->rsvd1 ||
	    memchr_inv(c->rsvd0, 0, sizeof(c->rsvd0)))
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	ether_addr_copy(r->ports[port].mac_addr, c->mac);
	r->ports[port].mtu = le32_to_cpu(c->mtu);
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

static int gnsim_cmd_set_gid(struct gaudi_nic_roce *r, u32 index,
			     const void *in, void *out)
{
	const struct gn_roce_gid_ctx *c = in;
	u32 port = index >> 16, gi = index & 0xffff;

	if (port >= r->num_ports || gi >= GN_ROCE_MAX_GID ||
	    c->type > GN_ROCE_GID_V2_IPV6 ||
	    memchr_inv(c->rsvd, 0, sizeof(c->rsvd)))
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	r->ports[port].gids[gi] = *c;
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

static int gnsim_cmd_query_stats(struct gaudi_nic_roce *r, u32 port,
				 const void *in, void *out)
{
	struct gn_roce_stats *st = out;
	const u64 *src;
	__le64 *dst;
	unsigned int i;

	if (port >= r->num_ports)
		return -EINVAL;
	spin_lock_bh(&r->dp_lock);
	src = (const u64 *)&r->ports[port].st;
	dst = (__le64 *)out;
	for (i = 0; i < sizeof(*st) / sizeof(u64); i++)
		dst[i] = cpu_to_le64(src[i]);
	/* frames the receive queue had no room for are dropped frames too */
	spin_lock(&r->rxq.lock);
	le64_add_cpu(&st->rx_drops, r->ports[port].rxq_drops);
	spin_unlock(&r->rxq.lock);
	spin_unlock_bh(&r->dp_lock);
	return 0;
}

/*
 * The mailbox commands (gn_roce_cmd_op): each one's handler and the sizes
 * of its arguments.  A command with no entry (.fn NULL) is refused.
 */
static const struct gnsim_cmd {
	int (*fn)(struct gaudi_nic_roce *r, u32 index, const void *in,
		  void *out);
	u16 in;
	u16 out;
} gnsim_cmds[] = {
	[GN_ROCE_CMD_SET_PORT] = { gnsim_cmd_set_port,
				   sizeof(struct gn_roce_port_ctx), 0 },
	[GN_ROCE_CMD_SET_GID] = { gnsim_cmd_set_gid,
				  sizeof(struct gn_roce_gid_ctx), 0 },
	[GN_ROCE_CMD_CREATE_CQ] = { gnsim_cmd_create_cq,
				    sizeof(struct gn_roce_cq_ctx), 0 },
	[GN_ROCE_CMD_DESTROY_CQ] = { gnsim_cmd_destroy_cq, 0, 0 },
	[GN_ROCE_CMD_RESIZE_CQ] = { gnsim_cmd_resize_cq,
				    sizeof(struct gn_roce_cq_ctx), 0 },
	[GN_ROCE_CMD_CREATE_QP] = { gnsim_cmd_create_qp,
				    sizeof(struct gn_roce_qp_ctx), 0 },
	[GN_ROCE_CMD_MODIFY_QP] = { gnsim_cmd_modify_qp,
				    sizeof(struct gn_roce_modify_qp), 0 },
	[GN_ROCE_CMD_QUERY_QP] = { gnsim_cmd_query_qp,
				   0, sizeof(struct gn_roce_qp_ctx) },
	[GN_ROCE_CMD_DESTROY_QP] = { gnsim_cmd_destroy_qp, 0, 0 },
	[GN_ROCE_CMD_CREATE_MR] = { gnsim_cmd_create_mr,
				    sizeof(struct gn_roce_mr_ctx), 0 },
	[GN_ROCE_CMD_REREG_MR] = { gnsim_cmd_rereg_mr,
				   sizeof(struct gn_roce_mr_ctx), 0 },
	[GN_ROCE_CMD_DESTROY_MR] = { gnsim_cmd_destroy_mr, 0, 0 },
	[GN_ROCE_CMD_REVOKE_MR] = { gnsim_cmd_revoke_mr, 0, 0 },
	[GN_ROCE_CMD_CREATE_MW] = { gnsim_cmd_create_mw,
				    sizeof(struct gn_roce_mw_ctx), 0 },
	[GN_ROCE_CMD_DESTROY_MW] = { gnsim_cmd_destroy_mw, 0, 0 },
	[GN_ROCE_CMD_QUERY_STATS] = { gnsim_cmd_query_stats,
				      0, sizeof(struct gn_roce_stats) },
	[GN_ROCE_CMD_CREATE_SRQ] = { gnsim_cmd_create_srq,
				     sizeof(struct gn_roce_srq_ctx), 0 },
	[GN_ROCE_CMD_RESIZE_SRQ] = { gnsim_cmd_resize_srq,
				     sizeof(struct gn_roce_srq_ctx), 0 },
	[GN_ROCE_CMD_ARM_SRQ] = { gnsim_cmd_arm_srq, sizeof(__le32), 0 },
	[GN_ROCE_CMD_QUERY_SRQ] = { gnsim_cmd_query_srq,
				    0, sizeof(struct gn_roce_srq_ctx) },
	[GN_ROCE_CMD_DESTROY_SRQ] = { gnsim_cmd_destroy_srq, 0, 0 },
};

static int gnsim_roce_cmd(struct gaudi_nic_roce *r, u32 op, u32 index,
			  const void *in, size_t in_len, void *out,
			  size_t out_len)
{
	const struct gnsim_cmd *cmd;
	int ret;

	if (op >= ARRAY_SIZE(gnsim_cmds) || !gnsim_cmds[op].fn)
		return -EINVAL;
	cmd = &gnsim_cmds[op];
	if (in_len != cmd->in || out_len != cmd->out ||
	    (cmd->in && !in) || (cmd->out && !out))
		return -EINVAL;

	mutex_lock(&r->cmd_lock);
	ret = r->enabled ? cmd->fn(r, index, in, out) : -ENODEV;
	mutex_unlock(&r->cmd_lock);
	return ret;
}

/*
 * Take doorbell @type of object @num, under dp_lock.  @late: it was
 * latched (gnsim_roce_doorbell()) and CQEs may have been written since;
 * an arm raises its event at once if the ring holds CQEs not consumed
 * yet, so that none written in between goes unannounced.
 */
static void gnsim_roce_db_take(struct gaudi_nic_roce *r, u32 type, u32 num,
			       bool late)
{
	struct gnsim_rcq *cq;
	struct gnsim_rqp *qp;

	lockdep_assert_held(&r->dp_lock);
	switch (type) {
	case GN_ROCE_DB_SQ:
	case GN_ROCE_DB_RQ:
		qp = num < GN_ROCE_MAX_QP ? r->qps[num] : NULL;
		if (!qp)
			break;
		if (type == GN_ROCE_DB_SQ)
			gnsim_rdp_sq_doorbell(r, qp);
		else
			gnsim_rdp_rq_doorbell(r, qp);
		break;
	case GN_ROCE_DB_CQ_ARM:
	case GN_ROCE_DB_CQ_ARM_SOL:
		cq = num < GN_ROCE_MAX_CQ ? r->cqs[num] : NULL;
		if (!cq)
			break;
		if (late && cq->prod !=
		    le32_to_cpu(READ_ONCE(gnsim_rring_hdr(&cq->ring)->cons))) {
			cq->armed = 0;
			gnsim_roce_event(r, GN_ROCE_EV_COMP, num);
		} else if (cq->armed != GN_ROCE_DB_CQ_ARM) {
			cq->armed = type;
		}
		break;
	}
}

/* The doorbells latched while interrupts were off: the work item's. */
void gnsim_roce_db_late(struct gaudi_nic_roce *r)
{
	unsigned long bit;

	lockdep_assert_held(&r->dp_lock);
	for_each_set_bit(bit, r->db_late, GN_DB_BITS)
		if (test_and_clear_bit(bit, r->db_late))
			gnsim_roce_db_take(r, GN_DB_FIRST + bit / GN_DB_OBJS,
					   bit % GN_DB_OBJS, true);
}

/*
 * A doorbell may be rung in any context (roce_hw.h).  Where dp_lock, a
 * BH lock, cannot be taken (interrupts off: the MAD layer posts under an
 * irqsave lock; hard interrupt context), it is latched, one bit per type
 * and object, and the engine's work item takes it: a doorbell FIFO.
 */
static void gnsim_roce_doorbell(struct gaudi_nic_roce *r, u32 db)
{
	u32 type = db >> 28, num = db & 0xffffff;

	if (type < GN_DB_FIRST || type > GN_DB_LAST || num >= GN_DB_OBJS)
		return;
	if (irqs_disabled()) {
		/* the ring's entries before the bit the work item tests */
		smp_mb__before_atomic();
		set_bit((type - GN_DB_FIRST) * GN_DB_OBJS + num, r->db_late);
		gnsim_rdp_kick(r);
		return;
	}
	spin_lock_bh(&r->dp_lock);
	if (r->enabled)
		gnsim_roce_db_take(r, type, num, false);
	spin_unlock_bh(&r->dp_lock);
}

/* Drop every context (engine reset). */
static void gnsim_roce_reset_all(struct gaudi_nic_roce *r)
{
	u32 i;

	for (i = 0; i < GN_ROCE_MAX_QP; i++)
		if (r->qps[i])
			gnsim_cmd_destroy_qp(r, i, NULL, NULL);
	/* windows first: an MR with windows bound refuses to go */
	for (i = 0; i < GN_ROCE_MAX_MW; i++)
		if (r->mws[i].used)
			gnsim_cmd_destroy_mw(r, i, NULL, NULL);
	for (i = 0; i < GN_ROCE_MAX_MR; i++)
		if (r->mrs[i])
			gnsim_cmd_destroy_mr(r, i, NULL, NULL);
	for (i = 0; i < GN_ROCE_MAX_SRQ; i++)
		if (r->srqs[i])
			gnsim_cmd_destroy_srq(r, i, NULL, NULL);
	for (i = 0; i < GN_ROCE_MAX_CQ; i++)
		if (r->cqs[i])
			gnsim_cmd_destroy_cq(r, i, NULL, NULL);
	gnsim_rdp_rx_purge(r);
	skb_queue_purge(&r->txq);
}

static int gnsim_roce_enable(struct gaudi_nic_roce *r, gn_roce_event_fn fn,
			     void *priv)
{
	int ret = 0;

	mutex_lock(&r->cmd_lock);
	if (r->enabled) {
		ret = -EBUSY;
		goto out;
	}
	gnsim_roce_reset_all(r);
	spin_lock_bh(&r->dp_lock);
	r->event_fn = fn;
	r->event_priv = priv;
	r->enabled = true;
	spin_unlock_bh(&r->dp_lock);
out:
	mutex_unlock(&r->cmd_lock);
	return ret;
}

static void gnsim_roce_disable(struct gaudi_nic_roce *r)
{
	mutex_lock(&r->cmd_lock);
	spin_lock_bh(&r->dp_lock);
	r->enabled = false;
	r->event_fn = NULL;
	r->event_priv = NULL;
	bitmap_zero(r->ev_pend, GN_EV_BITS);
	spin_unlock_bh(&r->dp_lock);
	/* no handler runs once this returns (the ops' contract) */
	cancel_work_sync(&r->ev_work);
	gnsim_rdp_stop(r);
	gnsim_roce_reset_all(r);
	mutex_unlock(&r->cmd_lock);
}

/* What the RDMA driver is handed with the aux device (roce_hw.h). */
const struct gaudi_nic_roce_ops gnsim_roce_ops = {
	.enable = gnsim_roce_enable,
	.disable = gnsim_roce_disable,
	.cmd = gnsim_roce_cmd,
	.doorbell = gnsim_roce_doorbell,
};

/* ------------------------------------------------ engine create/destroy */

static void gnsim_roce_release(struct gaudi_nic_roce *r)
{
	cancel_work_sync(&r->ev_work);
	if (!IS_ERR_OR_NULL(r->kworker))
		kthread_destroy_worker(r->kworker);
	if (r->rdp_ref)
		gnsim_rdp_put();
	kvfree(r->qps);
	kvfree(r->cqs);
	kvfree(r->srqs);
	kvfree(r->mrs);
	kvfree(r->mws);
	bitmap_free(r->kick);
	bitmap_free(r->resend);
	bitmap_free(r->db_late);
	bitmap_free(r->ev_pend);
	bitmap_free(r->ev_batch);
	kfree_skb(r->txskb);
	kfree(r->frame_buf);
	kfree(r->train);
	kfree(r);
}

/*
 * The device goes away: the core deleted gaudi_nic.rdma.N first, so
 * gaudi_ib, which disables the engine, is gone.
 */
void gnsim_roce_free(struct gaudi_nic_roce *r)
{
	u32 p;

	for (p = 0; p < r->num_ports; p++)
		if (r->ports[p].mac)
			gnsim_mac_set_roce_handler(r->ports[p].mac, NULL, NULL);
	mutex_lock(&r->cmd_lock);
	spin_lock_bh(&r->dp_lock);
	r->enabled = false;
	spin_unlock_bh(&r->dp_lock);
	gnsim_rdp_stop(r);
	gnsim_roce_reset_all(r);
	mutex_unlock(&r->cmd_lock);
	gnsim_roce_release(r);
}

static int gnsim_engine_cpu = -1;
module_param_named(roce_engine_cpu, gnsim_engine_cpu, int, 0644);
MODULE_PARM_DESC(roce_engine_cpu,
		 "CPU the RoCE engines' threads are put on when created: -1 (default) the last online CPU if there are two or more, -2 none (the scheduler decides), or a CPU number");

/*
 * Where the thread of a new engine runs (roce_engine_cpu).  By default
 * every engine's thread is on the last online CPU, leaving the others to
 * the applications.  The threads are SCHED_FIFO, and the scheduler leaves
 * a waking real-time thread on the CPU it last ran on, often the CPU of
 * the process that feeds it, so the two share a CPU while another idles;
 * and engines cabled together hand each other every frame and ACK: on one
 * CPU neither spins on the other's lock, nor waits for a wake-up sent
 * across CPUs.  Measured in one guest with two CPUs, two engines over a
 * cable, 3 runs each: ib_write_bw at 64 KiB 794-1067 MiB/s left to the
 * scheduler against 1242-1285 on the last CPU; ib_read_bw 633-784
 * against 822-842; ib_write_lat unchanged (8.6-11.5 us typical).  A
 * preference, not a binding: taskset moves a thread, and the scheduler
 * does if its CPU goes offline.
 */
static void gnsim_roce_place(struct task_struct *t)
{
	int cpu = READ_ONCE(gnsim_engine_cpu);

	if (cpu == -1) {
		if (num_online_cpus() < 2)
			return;
		cpu = cpumask_last(cpu_online_mask);
	}
	if (cpu == -2)
		return;
	if (cpu < 0 || cpu >= nr_cpu_ids || !cpu_online(cpu) ||
	    set_cpus_allowed_ptr(t, cpumask_of(cpu)))
		pr_warn("gaudi_nic: roce_engine_cpu=%d is not an online CPU; the scheduler places the RoCE engines' threads\n",
			cpu);
}

/*
 * The engine of device @id, doing DMA as @dma_dev, its port p wired to
 * @macs[p] (the on-die wiring: steered RoCE frames come to the engine).
 * Called through the hardware ops by the core's probe, after the MACs;
 * undone by gnsim_roce_free().
 */
struct gaudi_nic_roce *gnsim_roce_alloc(struct device *dma_dev, u32 id,
					struct gn_mac *const *macs,
					u32 num_ports)
{
	struct gaudi_nic_roce *r;
	u32 p;
	int ret;

	r = kzalloc(struct_size(r, ports, num_ports), GFP_KERNEL);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->num_ports = num_ports;
	r->dma_dev = dma_dev;
	mutex_init(&r->cmd_lock);
	spin_lock_init(&r->dp_lock);
	skb_queue_head_init(&r->rxq);
	skb_queue_head_init(&r->txq);
	INIT_LIST_HEAD(&r->ack_list);
	INIT_LIST_HEAD(&r->read_list);
	kthread_init_work(&r->work, gnsim_rdp_work);
	INIT_WORK(&r->ev_work, gnsim_roce_ev_work);
	hrtimer_init(&r->ack_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	r->ack_timer.function = gnsim_rdp_ack_timer;
	hrtimer_init(&r->read_timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL);
	r->read_timer.function = gnsim_rdp_read_timer;
	r->qps = kvcalloc(GN_ROCE_MAX_QP, sizeof(*r->qps), GFP_KERNEL);
	r->cqs = kvcalloc(GN_ROCE_MAX_CQ, sizeof(*r->cqs), GFP_KERNEL);
	r->mrs = kvcalloc(GN_ROCE_MAX_MR, sizeof(*r->mrs), GFP_KERNEL);
	r->mws = kvcalloc(GN_ROCE_MAX_MW, sizeof(*r->mws), GFP_KERNEL);
	r->srqs = kvcalloc(GN_ROCE_MAX_SRQ, sizeof(*r->srqs), GFP_KERNEL);
	r->kick = bitmap_zalloc(GN_ROCE_MAX_QP, GFP_KERNEL);
	r->resend = bitmap_zalloc(GN_ROCE_MAX_QP, GFP_KERNEL);
	r->db_late = bitmap_zalloc(GN_DB_BITS, GFP_KERNEL);
	r->ev_pend = bitmap_zalloc(GN_EV_BITS, GFP_KERNEL);
	r->ev_batch = bitmap_zalloc(GN_EV_BITS, GFP_KERNEL);
	r->frame_buf = kzalloc(GN_RR_MAX_FRAME, GFP_KERNEL);
	r->train = kzalloc(sizeof(*r->train), GFP_KERNEL);
	r->txskb = alloc_skb(GN_RR_MAX_FRAME, GFP_KERNEL);
	r->frame = r->txskb ? r->txskb->data : r->frame_buf;
	if (!r->qps || !r->cqs || !r->mrs || !r->mws || !r->srqs || !r->kick ||
	    !r->resend || !r->db_late || !r->ev_pend || !r->ev_batch ||
	    !r->frame_buf || !r->train) {
		gnsim_roce_release(r);
		return ERR_PTR(-ENOMEM);
	}
	r->kworker = kthread_create_worker(0, "gaudi_roce/%u", id);
	if (IS_ERR(r->kworker)) {
		ret = PTR_ERR(r->kworker);
		gnsim_roce_release(r);
		return ERR_PTR(ret);
	}
	sched_set_fifo_low(r->kworker->task);
	gnsim_roce_place(r->kworker->task);
	gnsim_rdp_get();
	r->rdp_ref = true;
	for (p = 0; p < r->num_ports; p++) {
		r->ports[p].r = r;
		r->ports[p].port = p;
		r->ports[p].mtu = ETH_DATA_LEN;
		r->ports[p].mac = macs[p];
	}
	for (p = 0; p < r->num_ports; p++)
		if (r->ports[p].mac)
			gnsim_mac_set_roce_handler(r->ports[p].mac, gnsim_rdp_rx,
						   &r->ports[p]);
	return r;
}
