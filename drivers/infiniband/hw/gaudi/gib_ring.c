// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_ib rings: the work and completion queue buffers the engine reads
 * and writes, their page lists, their mmap into user space (offer,
 * replace on resize) and the kernel's own posting to them
 * (gib_kring_post()).
 */
#include <linux/dma-mapping.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "gaudi_ib.h"

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
 * Every ring is sized by its creator, a process or a kernel consumer
 * (ib_alloc_cq()'s entries): one that asks for more than the host can
 * give gets -ENOMEM to report, not an allocation-failure splat in the
 * kernel log (__GFP_NOWARN).
 */
int gib_ring_alloc(struct gib_dev *dev, struct gib_ring *r, u32 log_size,
		   u32 stride, bool user)
{
	gfp_t gfp = (user ? GFP_KERNEL_ACCOUNT : GFP_KERNEL) | __GFP_NOWARN;
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
	ret = gaudi_nic_roce_cmd(dev->gadev, cmd, num, ctx, ctx_len, NULL, 0);
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
	union gib_wqe w;
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
		       &w, min_t(size_t, r->stride, sizeof(w)));
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
