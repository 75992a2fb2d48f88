// SPDX-License-Identifier: GPL-2.0
/*
 * fail_nth - every allocation on the path of a verbs call failed, one at a
 * time (issue 31, deliverable 4).  For each step (alloc PD, create CQ,
 * QP, SRQ, register an MR, allocate an MW, create an AH), for n = 1, 2,
 * ...: the n-th fault-injection site the calling thread reaches in the
 * kernel fails (/proc/thread-self/fail-nth: slab and page allocations,
 * user copies, whatever the debug kernel lets fail), the call must return
 * an error, and the same call without a fault must then succeed; until n
 * passes the number of sites on the path and the call succeeds with the
 * fault unused.  The kernel's own reports (kmemleak, lockdep, KASAN) are
 * the lane's watch; what is left on the device is checked by the script.
 *
 * usage: fail_nth DEV GID_INDEX
 * Output: TAP, one point per step.  Needs a debug kernel with
 * CONFIG_FAULT_INJECTION and failslab/fail_page_alloc told to fail
 * sleeping allocations (tests/rdma/fail_nth.sh sets them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "testutil.h"

#define MAX_SITES	4000	/* more than any path here reaches */

static struct tu_side S;
static int nth_fd = -1;
static void *buf;

/* Arm the n-th fault site of this thread (0: disarm). */
static int nth_arm(unsigned int n)
{
	char v[16];
	int len = snprintf(v, sizeof(v), "%u", n);

	return pwrite(nth_fd, v, len, 0) == len ? 0 : -1;
}

/* Was the armed fault injected?  Disarms it either way. */
static int nth_fired(void)
{
	char v[16] = "";
	int fired;

	if (pread(nth_fd, v, sizeof(v) - 1, 0) <= 0)
		return -1;
	fired = atoi(v) == 0;
	nth_arm(0);
	return fired;
}

enum step { PD, CQ, QP, SRQ, MR, MW, AH, NSTEPS };
static const char *const step_name[NSTEPS] = {
	"ibv_alloc_pd", "ibv_create_cq", "ibv_create_qp (RC)",
	"ibv_create_srq", "ibv_reg_mr (64 KiB)", "ibv_alloc_mw (type 1)",
	"ibv_create_ah",
};

static void *step_do(enum step s)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = S.cq, .recv_cq = S.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = S.gid, .sgid_index = S.gid_index,
			 .hop_limit = 64 },
	};

	switch (s) {
	case PD:
		return ibv_alloc_pd(S.ctx);
	case CQ:
		return ibv_create_cq(S.ctx, 16, NULL, NULL, 0);
	case QP:
		return ibv_create_qp(S.pd, &qa);
	case SRQ:
		return ibv_create_srq(S.pd, &sa);
	case MR:
		return ibv_reg_mr(S.pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE);
	case MW:
		return ibv_alloc_mw(S.pd, IBV_MW_TYPE_1);
	case AH:
		return ibv_create_ah(S.pd, &aa);
	default:
		return NULL;
	}
}

static int step_undo(enum step s, void *o)
{
	switch (s) {
	case PD:
		return ibv_dealloc_pd(o);
	case CQ:
		return ibv_destroy_cq(o);
	case QP:
		return ibv_destroy_qp(o);
	case SRQ:
		return ibv_destroy_srq(o);
	case MR:
		return ibv_dereg_mr(o);
	case MW:
		return ibv_dealloc_mw(o);
	case AH:
		return ibv_destroy_ah(o);
	default:
		return -1;
	}
}

/* One step, every site failed in turn; 0 if it held. */
static int run_step(int num, enum step s)
{
	unsigned int n, failed = 0, absorbed = 0;
	void *o;
	int fired;

	for (n = 1; n <= MAX_SITES; n++) {
		if (nth_arm(n)) {
			printf("not ok %d - %s: arm fail-nth %u: %s\n", num,
			       step_name[s], n, strerror(errno));
			return -1;
		}
		errno = 0;
		o = step_do(s);
		fired = nth_fired();
		if (fired < 0) {
			printf("not ok %d - %s: read fail-nth: %s\n", num,
			       step_name[s], strerror(errno));
			return -1;
		}
		if (!fired) {
			/* the path has fewer than n sites: done */
			if (!o) {
				printf("not ok %d - %s: failed without a fault (%s)\n",
				       num, step_name[s], strerror(errno));
				return -1;
			}
			step_undo(s, o);
			printf("ok %d - %s: each of its %u fault sites failed in turn: %u returned an error, %u were absorbed (the call succeeded), and the device served the call again after each\n",
			       num, step_name[s], n - 1, failed, absorbed);
			return 0;
		}
		if (o) {
			absorbed++;
			if (step_undo(s, o)) {
				printf("not ok %d - %s: fault %u: the object made despite it cannot be freed\n",
				       num, step_name[s], n);
				return -1;
			}
		} else {
			failed++;
		}
		/* the device still works: the same call without a fault */
		o = step_do(s);
		if (!o || step_undo(s, o)) {
			printf("not ok %d - %s: after fault %u the call fails without one (%s)\n",
			       num, step_name[s], n, strerror(errno));
			return -1;
		}
	}
	printf("not ok %d - %s: more than %d fault sites\n", num, step_name[s],
	       MAX_SITES);
	return -1;
}

int main(int argc, char **argv)
{
	int s, bad = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV GID_INDEX\n", argv[0]);
		return 2;
	}
	buf = aligned_alloc(4096, 1 << 16);
	if (!buf || tu_open(&S, argv[1], atoi(argv[2]), 64)) {
		fprintf(stderr, "fail_nth: cannot open %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	nth_fd = open("/proc/thread-self/fail-nth", O_RDWR);
	printf("TAP version 13\n1..%d\n", NSTEPS);
	if (nth_fd < 0) {
		for (s = 0; s < NSTEPS; s++)
			printf("not ok %d - %s: /proc/thread-self/fail-nth: %s (a kernel with CONFIG_FAULT_INJECTION)\n",
			       s + 1, step_name[s], strerror(errno));
		return 1;
	}
	for (s = 0; s < NSTEPS; s++)
		bad |= run_step(s + 1, s) != 0;
	return bad;
}
