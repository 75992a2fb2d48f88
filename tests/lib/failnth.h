/* SPDX-License-Identifier: GPL-2.0 */
/*
 * failnth.h - the loop of the fail-nth tests (issue 31, deliverable 4):
 * every allocation on the path of one call failed, one at a time, through
 * /proc/thread-self/fail-nth.  Shared by tests/rdma/fail_nth.c (the verbs
 * creations, dma-buf MRs) and tests/accel/fail_nth.c (the accel ioctls,
 * the netdev operations, device creation, cables).
 *
 * A step is a call (make) and what undoes it (undo).  For n = 1, 2, ...
 * the n-th fault-injection site the calling thread reaches in the kernel
 * fails (slab and page allocations, whatever the kernel's fault injection
 * is told to fail); the call must return an error or absorb the fault (it
 * succeeded anyway: then its undo must succeed), and the same call without
 * a fault must then succeed and be undone: the device still works.  The
 * loop ends when n passes the number of sites on the path: the fault is
 * not used and the call succeeds.
 *
 * Some paths have thousands of sites (a device's creation registers an
 * ib_device with sysfs files by the hundred; opening a port allocates each
 * RX buffer: sites that all fail the same way).  The loop first counts the
 * sites of the path (fail-nth armed far beyond it: what is left of it says
 * how many were passed; the count varies by a few dozen from call to
 * call, with the slabs that need a new page).  With more sites than the step's
 * budget, it visits every one of the first @head and of the last @tail,
 * and between them every stride-th, the stride the smallest that keeps
 * the visits within the budget: a fixed set, no randomness, and the
 * output says which.  The budget is FAILNTH_BUDGET from the environment
 * if set (to measure), else the step's, else FN_BUDGET.  Before counting,
 * the call is made once unarmed: the first call of a program also faults
 * in its code and data, pages whose allocations are not the call's.
 *
 * Everything between arming and reading back runs in the kernel on behalf
 * of the call alone: the step's make must do nothing else that enters the
 * kernel (no printf, no malloc that could grow the heap, no opening of
 * files: do those before).
 *
 * Output: one TAP point per step (fn_run()); the caller prints the plan.
 */
#ifndef GN_FAILNTH_H
#define GN_FAILNTH_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FN_BUDGET	400	/* visits of one step, by default */
#define FN_COUNT_ARM	1000000	/* more than any path reaches */

/* what a step makes: a pointer (verbs objects) or a number (fds, handles) */
union fn_obj {
	void *p;
	long v;
};

struct fn_step {
	const char *name;
	/* the call: 0 with *o set, or -1 with errno set */
	int (*make)(union fn_obj *o);
	/* undo what make made: 0, or -1 with errno set */
	int (*undo)(union fn_obj o);
	/*
	 * Optional, for calls that can succeed with part of their work not
	 * done (a device whose auxiliary driver's probe failed: the driver
	 * core ignores that): 1 if what make made is whole, 0 if not.  A
	 * call without a fault must make it whole; after a fault, a part is
	 * an absorbed fault, counted apart, if undo then removes it.
	 */
	int (*whole)(union fn_obj o);
	/* visits at most (0: the program's), and which of them always */
	unsigned int budget, head, tail;
};

static int fn_fd = -1;
static unsigned int fn_budget;	/* FAILNTH_BUDGET */

/* Open this thread's fail-nth: 0, or -1 (no fault injection). */
static int fn_open(void)
{
	const char *b = getenv("FAILNTH_BUDGET");

	if (b && atoi(b) > 0)
		fn_budget = atoi(b);
	fn_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	return fn_fd < 0 ? -1 : 0;
}

/* Arm the n-th fault site of this thread (0: disarm). */
static int fn_arm(unsigned int n)
{
	char v[16];
	int len = snprintf(v, sizeof(v), "%u", n);

	return pwrite(fn_fd, v, len, 0) == len ? 0 : -1;
}

/* What is left of the armed count (0: the fault was injected); disarms. */
static long fn_left(void)
{
	char v[16] = "";

	if (pread(fn_fd, v, sizeof(v) - 1, 0) <= 0)
		return -1;
	fn_arm(0);
	return atol(v);
}

static double fn_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Is what make made whole (or has the step no such test)?  Undoes it. */
static int fn_undo_whole(const struct fn_step *s, union fn_obj o)
{
	int whole = !s->whole || s->whole(o);

	return s->undo(o) ? -1 : whole ? 0 : 1;
}

/* The call without a fault, made and undone; 0 if both succeeded. */
static int fn_clean(const struct fn_step *s, const char **why)
{
	union fn_obj o;

	if (s->make(&o)) {
		*why = "the call fails without a fault";
		return -1;
	}
	switch (fn_undo_whole(s, o)) {
	case 0:
		return 0;
	case 1:
		*why = "the call without a fault leaves its work half done";
		errno = 0;
		return -1;
	default:
		*why = "what the call made without a fault cannot be undone";
		return -1;
	}
}

/* The site after @n to fail: each of the head and the tail, a stride between */
static unsigned int fn_next(unsigned int n, unsigned int head,
			    unsigned int stride, unsigned int tail_start)
{
	if (n < head || n >= tail_start)
		return n + 1;
	return n + stride < tail_start ? n + stride : tail_start;
}

/*
 * The number of fault sites on @s's path, or -1 (a failed point printed):
 * the call once unarmed (the program's first touch of its pages is not
 * the call's), then armed far beyond the path: what is left of the count
 * says how many sites it passed.
 */
static long fn_count(int num, const struct fn_step *s)
{
	const char *why = "";
	union fn_obj o;
	long left;
	int ret;

	if (fn_clean(s, &why)) {
		printf("not ok %d - %s: %s (%s)\n", num, s->name, why,
		       strerror(errno));
		return -1;
	}
	if (fn_arm(FN_COUNT_ARM)) {
		printf("not ok %d - %s: arm fail-nth: %s\n", num, s->name,
		       strerror(errno));
		return -1;
	}
	ret = s->make(&o);
	left = fn_left();
	if (ret || left <= 0) {
		printf("not ok %d - %s: the call to count its fault sites failed: %s\n",
		       num, s->name, left <= 0 ? "fail-nth unreadable" :
		       strerror(errno));
		return -1;
	}
	if (fn_undo_whole(s, o)) {
		printf("not ok %d - %s: without a fault, the call's work is half done or cannot be undone (%s)\n",
		       num, s->name, strerror(errno));
		return -1;
	}
	return FN_COUNT_ARM - left;
}

/* What one step's walk over its fault sites visited, and found. */
struct fn_walk {
	long sites;			/* counted before the walk */
	unsigned int head, tail, stride;
	unsigned int visits, failed, absorbed, partial;
};

/* The step's TAP point and its diagnostics. */
static void fn_report(int num, const struct fn_step *s,
		      const struct fn_walk *w, long last_sites, double t0)
{
	if (w->stride == 1)
		printf("ok %d - %s: each of its %ld fault sites failed in turn: %u returned an error, %u were absorbed (the call succeeded), and the device served the call again after each\n",
		       num, s->name, last_sites, w->failed, w->absorbed);
	else
		printf("ok %d - %s: of its %ld fault sites, each of the first %u and of the last %u, and every %u-th between, failed in turn (%u sites): %u returned an error, %u were absorbed (the call succeeded), and the device served the call again after each\n",
		       num, s->name, w->sites, w->head, w->tail, w->stride,
		       w->visits, w->failed, w->absorbed);
	if (s->whole)
		printf("# %s: besides, %u faults left the call's work half done (it succeeded, a part missing), and the undo removed what there was\n",
		       s->name, w->partial);
	printf("# %s: %ld sites counted, %ld on the last call, %u visited, %.1f s\n",
	       s->name, w->sites, last_sites, w->visits, fn_now() - t0);
	fflush(stdout);
}

/* One step, its fault sites failed in turn; 0 if it held. */
static int fn_run(int num, const struct fn_step *s)
{
	struct fn_walk w = { .stride = 1 };
	unsigned int n, budget, tail_start, last = 0, retailed = 0;
	const char *why = "";
	double t0 = fn_now();
	union fn_obj o;
	long left;
	int ret;

	w.sites = fn_count(num, s);
	if (w.sites < 0)
		return -1;
	budget = fn_budget ? fn_budget : s->budget ? s->budget : FN_BUDGET;
	w.head = w.sites;
	tail_start = w.sites;
	if (w.sites > budget) {
		w.head = s->head < budget / 2 ? s->head : budget / 2;
		w.tail = s->tail < budget / 4 ? s->tail : budget / 4;
		tail_start = w.sites - w.tail;
		w.stride = (tail_start - w.head + (budget - w.head - w.tail) - 1) /
			   (budget - w.head - w.tail);
	}
	for (n = 1;; n = fn_next(n, w.head, w.stride, tail_start)) {
		if (fn_arm(n)) {
			printf("not ok %d - %s: arm fail-nth %u: %s\n", num,
			       s->name, n, strerror(errno));
			return -1;
		}
		errno = 0;
		ret = s->make(&o);
		left = fn_left();
		if (left < 0) {
			printf("not ok %d - %s: read fail-nth: %s\n", num,
			       s->name, strerror(errno));
			return -1;
		}
		if (left) {
			/* the path has fewer than n sites: done */
			if (ret) {
				printf("not ok %d - %s: failed without a fault (%s)\n",
				       num, s->name, strerror(errno));
				return -1;
			}
			if (fn_undo_whole(s, o)) {
				printf("not ok %d - %s: without a fault, the call's work is half done or cannot be undone (%s)\n",
				       num, s->name, strerror(errno));
				return -1;
			}
			/*
			 * A stride passed the end, the count having been
			 * high (a path's count varies by a few dozen from
			 * call to call: slabs that need a new page, RCU
			 * frees): the tail from the end this call found,
			 * again if the next call is shorter still.
			 */
			if (w.tail && retailed < 8 && n - left > last) {
				retailed++;
				tail_start = n - left >= last + w.tail ?
					     n - left - w.tail + 1 : last + 1;
				n = tail_start - 1;	/* next: tail_start */
				continue;
			}
			break;
		}
		last = n;
		w.visits++;
		if (!ret) {
			ret = fn_undo_whole(s, o);
			if (ret < 0) {
				printf("not ok %d - %s: fault %u: what the call made despite it cannot be undone (%s)\n",
				       num, s->name, n, strerror(errno));
				return -1;
			}
			if (ret)
				w.partial++;
			else
				w.absorbed++;
		} else {
			w.failed++;
		}
		/* the device still works: the same call without a fault */
		if (fn_clean(s, &why)) {
			printf("not ok %d - %s: after fault %u, %s (%s)\n", num,
			       s->name, n, why, strerror(errno));
			return -1;
		}
	}
	fn_report(num, s, &w, (long)n - left, t0);
	return 0;
}

#endif /* GN_FAILNTH_H */
