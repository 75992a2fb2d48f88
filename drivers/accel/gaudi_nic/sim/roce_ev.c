// SPDX-License-Identifier: GPL-2.0
/*
 * The RoCE engine's events (completion, QP and SRQ events): raised under
 * dp_lock into a pending bitmap, one bit per object and event type, and
 * delivered by a work item on the BH workqueue, the engine's interrupt,
 * with no engine lock held (see roce.h).  A completion handler may so
 * re-arm its CQ or post, which the verbs contract allows; the events used
 * to be delivered under dp_lock with IRQs off, where that deadlocked (N4
 * of the November review).
 */
#include <linux/bitmap.h>
#include <linux/workqueue.h>
#include "roce.h"

/* every event's object number fits its bitmap */
static_assert(GN_ROCE_MAX_QP <= GN_EV_OBJS && GN_ROCE_MAX_CQ <= GN_EV_OBJS &&
	      GN_ROCE_MAX_SRQ <= GN_EV_OBJS);

/*
 * Raise event @type of object @num: marked pending under dp_lock and
 * delivered by gnsim_roce_ev_work() once no engine lock is held (see
 * roce.h), as a device writes an event queue and interrupts.
 */
void gnsim_roce_event(struct gaudi_nic_roce *r, u8 type, u32 num)
{
	lockdep_assert_held(&r->dp_lock);
	if (WARN_ON_ONCE(type < GN_EV_FIRST || type > GN_EV_LAST ||
			 num >= GN_EV_OBJS))
		return;
	if (!r->event_fn)
		return;
	__set_bit((type - GN_EV_FIRST) * GN_EV_OBJS + num, r->ev_pend);
	queue_work(system_bh_wq, &r->ev_work);
}

/* Drop the pending events @first..@last of object @num (it is destroyed). */
void gnsim_roce_ev_drop(struct gaudi_nic_roce *r, u8 first, u8 last, u32 num)
{
	u8 t;

	lockdep_assert_held(&r->dp_lock);
	for (t = first; t <= last; t++)
		__clear_bit((t - GN_EV_FIRST) * GN_EV_OBJS + num, r->ev_pend);
}

/*
 * The engine's interrupt: deliver the pending events, in softirq context,
 * with dp_lock released, so that a handler may call back into the engine
 * (re-arm its CQ, post).  One instance runs at a time (a work item is
 * never run concurrently with itself), so @ev_batch is its own.
 */
void gnsim_roce_ev_work(struct work_struct *work)
{
	struct gaudi_nic_roce *r = container_of(work, struct gaudi_nic_roce,
						ev_work);
	struct gn_roce_eqe eqe = {};
	gn_roce_event_fn fn;
	unsigned long bit;
	void *priv;

	spin_lock_bh(&r->dp_lock);
	fn = r->event_fn;
	priv = r->event_priv;
	bitmap_copy(r->ev_batch, r->ev_pend, GN_EV_BITS);
	bitmap_zero(r->ev_pend, GN_EV_BITS);
	spin_unlock_bh(&r->dp_lock);
	/* disable() clears fn, then waits for this to return */
	if (!fn)
		return;
	for_each_set_bit(bit, r->ev_batch, GN_EV_BITS) {
		eqe.type = GN_EV_FIRST + bit / GN_EV_OBJS;
		eqe.num = cpu_to_le32(bit % GN_EV_OBJS);
		fn(priv, &eqe);
	}
}
