// SPDX-License-Identifier: GPL-2.0
/*
 * gaudi_nic_test_kulp - a test-only kernel ULP: what a kernel consumer of
 * the verbs (NVMe-oF, iSER, SMC, rdma_cm's users) does that no user
 * program can, run at load on the ib_device named by "ibdev":
 *
 *   rearm  a completion handler that polls its CQ and re-arms it, as the
 *          verbs contract allows; it used to run under the engine's
 *          lock with IRQs off, so the re-arm deadlocked (N4 of the
 *          November review).  The handler must run, its re-arm must
 *          raise the next event, and it must run with IRQs enabled.
 *   irqoff doorbells rung with interrupts off (the MAD layer posts under
 *          an irqsave lock) and in hard interrupt context (an hrtimer):
 *          the engine contract allows any context.  A CQ armed and
 *          receives posted on a QP in the error state, with interrupts
 *          off, then from the timer: every receive must be flushed and
 *          announced by an event.  Until issue 34 the driver deferred
 *          such doorbells itself, and a CQ armed in hard interrupt
 *          context took the emulator's BH lock there.
 *   stale  a kernel QP destroyed with its CQEs still in the CQ, then a
 *          new QP that reuses its number: none of the old CQEs may reach
 *          the new QP (N8: a kernel wr_id is often a pointer, so such a
 *          CQE is a use-after-free).
 *
 * Each check prints "gaudi_nic_test_kulp: ok|not ok - NAME: detail"; the
 * load fails (-EIO) if any failed, -ENODEV without the device.  The
 * module has nothing to do once loaded: rmmod it.  tests/rdma/kverbs.sh
 * runs it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/irqflags.h>
#include <linux/module.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

static char *ibdev = "";
module_param(ibdev, charp, 0444);
MODULE_PARM_DESC(ibdev, "the ib_device to test (e.g. gaudi_36)");

#define KULP_NRECV	4
#define KULP_COOKIE	0x6b756c7000000000ULL	/* "kulp" */

static int kulp_failed;

static void kulp_report(bool ok, const char *name, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_info("%s - %s: %pV\n", ok ? "ok" : "not ok", name, &vaf);
	va_end(args);
	if (!ok)
		kulp_failed = 1;
}

/* the device: found by the client's add callback */
static struct ib_device *kulp_dev;

static int kulp_add(struct ib_device *dev)
{
	if (!kulp_dev && !strcmp(dev_name(&dev->dev), ibdev) &&
	    ib_device_try_get(dev))
		kulp_dev = dev;
	return 0;
}

static void kulp_remove(struct ib_device *dev, void *data)
{
}

static struct ib_client kulp_client = {
	.name = "gaudi_nic_test_kulp",
	.add = kulp_add,
	.remove = kulp_remove,
};

struct kulp_cq {
	struct ib_cq *cq;
	struct completion done;
	atomic_t events;	/* handler calls */
	atomic_t polled;	/* completions the handler took */
	atomic_t irqs_off;	/* handler calls with IRQs disabled */
	int want;		/* complete @done at this many completions */
};

/* The ULP's handler: poll everything, re-arm, poll what the arm missed. */
static void kulp_comp(struct ib_cq *cq, void *ctx)
{
	struct kulp_cq *k = ctx;
	struct ib_wc wc;

	atomic_inc(&k->events);
	if (irqs_disabled())
		atomic_inc(&k->irqs_off);
	do {
		while (ib_poll_cq(cq, 1, &wc) > 0)
			atomic_inc(&k->polled);
	} while (ib_req_notify_cq(cq, IB_CQ_NEXT_COMP |
				  IB_CQ_REPORT_MISSED_EVENTS) > 0);
	if (atomic_read(&k->polled) >= k->want)
		complete(&k->done);
}

static struct ib_qp *kulp_qp(struct ib_pd *pd, struct ib_cq *cq)
{
	struct ib_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		/* gaudi_ib's kernel QPs are UD (and QP1) */
		.qp_type = IB_QPT_UD,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
	};
	struct ib_qp *qp;
	int ret;

	qp = ib_create_qp(pd, &init);
	if (IS_ERR(qp))
		return qp;
	ret = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (ret) {
		ib_destroy_qp(qp);
		return ERR_PTR(ret);
	}
	return qp;
}

/* Post @n receives (wr_id KULP_COOKIE + i) and move @qp to ERR: flushed. */
static int kulp_flush_recvs(struct ib_qp *qp, int n)
{
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_recv_wr wr = {};
	int i, ret;

	for (i = 0; i < n; i++) {
		wr.wr_id = KULP_COOKIE + i;
		ret = ib_post_recv(qp, &wr, NULL);
		if (ret)
			return ret;
	}
	return ib_modify_qp(qp, &attr, IB_QP_STATE);
}

/*
 * A CQ whose handler is kulp_comp() (@k) and a UD QP on it, for test
 * @name; NULL, reported, if either could not be made.
 */
static struct ib_qp *kulp_cq_qp(struct ib_pd *pd, struct kulp_cq *k,
				const char *name)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp *qp;

	init_completion(&k->done);
	k->cq = ib_create_cq(pd->device, kulp_comp, NULL, k, &ca);
	if (IS_ERR(k->cq)) {
		kulp_report(false, name, "ib_create_cq: %ld", PTR_ERR(k->cq));
		return NULL;
	}
	qp = kulp_qp(pd, k->cq);
	if (IS_ERR(qp)) {
		kulp_report(false, name, "QP: %ld", PTR_ERR(qp));
		ib_destroy_cq(k->cq);
		return NULL;
	}
	return qp;
}

static void kulp_test_rearm(struct ib_pd *pd)
{
	struct kulp_cq k = { .want = KULP_NRECV };
	struct ib_recv_wr wr = { .wr_id = KULP_COOKIE + KULP_NRECV };
	struct ib_qp *qp;
	long left;
	int ret;

	qp = kulp_cq_qp(pd, &k, "rearm");
	if (!qp)
		return;
	ib_req_notify_cq(k.cq, IB_CQ_NEXT_COMP);
	ret = kulp_flush_recvs(qp, KULP_NRECV);
	if (ret) {
		kulp_report(false, "rearm", "post and flush: %d", ret);
		goto out_qp;
	}
	left = wait_for_completion_timeout(&k.done, 10 * HZ);
	kulp_report(left && atomic_read(&k.polled) == KULP_NRECV, "rearm",
		    "the handler ran %d time(s) and took %d of %d flushed receives",
		    atomic_read(&k.events), atomic_read(&k.polled), KULP_NRECV);
	/* the handler's own re-arm: one more receive, flushed at once */
	reinit_completion(&k.done);
	k.want = KULP_NRECV + 1;
	ret = ib_post_recv(qp, &wr, NULL);
	left = ret ? 0 : wait_for_completion_timeout(&k.done, 10 * HZ);
	kulp_report(left && atomic_read(&k.polled) == KULP_NRECV + 1,
		    "rearm-again",
		    "the handler's re-arm raised the next event (post %d, %d completions)",
		    ret, atomic_read(&k.polled));
	kulp_report(!atomic_read(&k.irqs_off), "rearm-irqs",
		    "%d of %d handler calls ran with IRQs disabled",
		    atomic_read(&k.irqs_off), atomic_read(&k.events));
out_qp:
	ib_destroy_qp(qp);
	ib_destroy_cq(k.cq);
}

/* kulp_test_irqoff()'s hard interrupt: arm the CQ, post one receive */
struct kulp_hard {
	struct hrtimer timer;
	struct ib_qp *qp;
	int ret;
	bool hardirq;
};

static enum hrtimer_restart kulp_hard_fn(struct hrtimer *t)
{
	struct kulp_hard *h = container_of(t, struct kulp_hard, timer);
	struct ib_recv_wr wr = { .wr_id = KULP_COOKIE + KULP_NRECV };

	h->hardirq = in_hardirq();
	ib_req_notify_cq(h->qp->recv_cq, IB_CQ_NEXT_COMP);
	h->ret = ib_post_recv(h->qp, &wr, NULL);
	return HRTIMER_NORESTART;
}

static void kulp_test_irqoff(struct ib_pd *pd)
{
	struct kulp_cq k = { .want = KULP_NRECV };
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct kulp_hard h = { .ret = -EINPROGRESS };
	struct ib_recv_wr wr = {};
	unsigned long flags;
	int i, ret = 0;
	struct ib_qp *qp;
	long left;

	qp = kulp_cq_qp(pd, &k, "irqoff");
	if (!qp)
		return;
	ret = ib_modify_qp(qp, &err, IB_QP_STATE);
	if (ret) {
		kulp_report(false, "irqoff", "QP to ERR: %d", ret);
		goto out_qp;
	}
	local_irq_save(flags);
	ib_req_notify_cq(k.cq, IB_CQ_NEXT_COMP);
	for (i = 0; i < KULP_NRECV && !ret; i++) {
		wr.wr_id = KULP_COOKIE + i;
		ret = ib_post_recv(qp, &wr, NULL);
	}
	local_irq_restore(flags);
	left = ret ? 0 : wait_for_completion_timeout(&k.done, 10 * HZ);
	kulp_report(left && atomic_read(&k.polled) == KULP_NRECV, "irqoff",
		    "a CQ armed and %d receives posted with interrupts off: post %d, %d flushed in %d event(s)",
		    KULP_NRECV, ret, atomic_read(&k.polled),
		    atomic_read(&k.events));
	reinit_completion(&k.done);
	k.want = KULP_NRECV + 1;
	h.qp = qp;
	hrtimer_init_on_stack(&h.timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	h.timer.function = kulp_hard_fn;
	hrtimer_start(&h.timer, ms_to_ktime(1), HRTIMER_MODE_REL_HARD);
	left = wait_for_completion_timeout(&k.done, 10 * HZ);
	hrtimer_cancel(&h.timer);
	destroy_hrtimer_on_stack(&h.timer);
	kulp_report(left && h.hardirq && !h.ret &&
		    atomic_read(&k.polled) == KULP_NRECV + 1, "hardirq",
		    "a CQ armed and a receive posted in hard interrupt context (%s): post %d, %d of %d flushed",
		    h.hardirq ? "in_hardirq()" : "not in_hardirq()", h.ret,
		    atomic_read(&k.polled), KULP_NRECV + 1);
out_qp:
	ib_destroy_qp(qp);
	ib_destroy_cq(k.cq);
}

static void kulp_test_stale(struct ib_pd *pd)
{
	struct ib_cq_init_attr ca = { .cqe = 16 };
	struct ib_qp *qp, *qp2;
	struct ib_cq *cq;
	struct ib_wc wc;
	u32 qpn;
	int n = 0, ret;

	cq = ib_create_cq(pd->device, NULL, NULL, NULL, &ca);
	if (IS_ERR(cq)) {
		kulp_report(false, "stale", "ib_create_cq: %ld", PTR_ERR(cq));
		return;
	}
	qp = kulp_qp(pd, cq);
	if (IS_ERR(qp)) {
		kulp_report(false, "stale", "QP: %ld", PTR_ERR(qp));
		goto out_cq;
	}
	qpn = qp->qp_num;
	ret = kulp_flush_recvs(qp, KULP_NRECV);
	ib_destroy_qp(qp);
	if (ret) {
		kulp_report(false, "stale", "post and flush: %d", ret);
		goto out_cq;
	}
	qp2 = kulp_qp(pd, cq);
	if (IS_ERR(qp2)) {
		kulp_report(false, "stale", "second QP: %ld", PTR_ERR(qp2));
		goto out_cq;
	}
	/* the case of the finding: the number is handed back lowest-first */
	kulp_report(qp2->qp_num == qpn, "stale-qpn",
		    "the new QP reuses the destroyed one's number (%u, %u)",
		    qpn, qp2->qp_num);
	while (ib_poll_cq(cq, 1, &wc) > 0 && n < 64) {
		n++;
		pr_info("stale CQE: wr_id %#llx status %d qp %u\n",
			wc.wr_id, wc.status, wc.qp ? wc.qp->qp_num : 0);
	}
	kulp_report(!n, "stale",
		    "%d CQE(s) of the destroyed QP %u reached its successor", n,
		    qpn);
	ib_destroy_qp(qp2);
out_cq:
	ib_destroy_cq(cq);
}

static int __init kulp_init(void)
{
	struct ib_pd *pd;
	int ret;

	ret = ib_register_client(&kulp_client);
	if (ret)
		return ret;
	if (!kulp_dev) {
		pr_err("no ib_device named \"%s\" (ibdev=)\n", ibdev);
		ret = -ENODEV;
		goto out;
	}
	pd = ib_alloc_pd(kulp_dev, 0);
	if (IS_ERR(pd)) {
		ret = PTR_ERR(pd);
		pr_err("%s: ib_alloc_pd: %d\n", ibdev, ret);
		goto out_put;
	}
	/* stale first: without the fix of N4, rearm deadlocks the CPU */
	kulp_test_stale(pd);
	kulp_test_rearm(pd);
	kulp_test_irqoff(pd);
	ib_dealloc_pd(pd);
	ret = kulp_failed ? -EIO : 0;
out_put:
	ib_device_put(kulp_dev);
out:
	ib_unregister_client(&kulp_client);
	return ret;
}

static void __exit kulp_exit(void)
{
}

module_init(kulp_init);
module_exit(kulp_exit);
MODULE_DESCRIPTION("gaudi_nic test: a kernel ULP's completion handler, doorbells in any context, QP reuse");
MODULE_LICENSE("GPL");
