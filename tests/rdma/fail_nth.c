// SPDX-License-Identifier: GPL-2.0
/*
 * fail_nth - every allocation on the path of a verbs call failed, one at a
 * time (issue 31, deliverable 4).  For each step (alloc PD, create CQ,
 * QP, SRQ, register an MR, register a dma-buf MR on HBM of an accel
 * device, allocate an MW, create an AH), for n = 1, 2,
 * ...: the n-th fault-injection site the calling thread reaches in the
 * kernel fails (/proc/thread-self/fail-nth: slab and page allocations,
 * user copies, whatever the debug kernel lets fail), the call must return
 * an error, and the same call without a fault must then succeed; until n
 * passes the number of sites on the path and the call succeeds with the
 * fault unused.  The kernel's own reports (kmemleak, lockdep, KASAN) are
 * the lane's watch; what is left on the device is checked by the script.
 *
 * The loop is tests/lib/failnth.h's.  The dma-buf is exported once, before
 * any step (hl-thunk: open, alloc, map, export); only its registration is
 * armed.  tests/accel/fail_nth.c fails the export's own path.
 *
 * usage: fail_nth DEV GID_INDEX [ACCEL_BUS_ID]  (gaudi_nic.N, DEV's
 * accel device; without it the dma-buf step is skipped)
 * Output: TAP, one point per step.  Needs a debug kernel with
 * CONFIG_FAULT_INJECTION and failslab/fail_page_alloc told to fail
 * sleeping allocations (tests/rdma/fail_nth.sh sets them).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include <hlthunk.h>

#include "testutil.h"
#include "failnth.h"

static struct tu_side S;
static void *buf;
/* HBM of the accel device, exported as dma-buf before any step */
static int dmabuf_fd = -1;
#define DMABUF_SIZE	(1 << 16)

static int mk(union fn_obj *o, void *p)
{
	o->p = p;
	return p ? 0 : -1;
}

static int pd_make(union fn_obj *o)
{
	return mk(o, ibv_alloc_pd(S.ctx));
}

static int pd_undo(union fn_obj o)
{
	return ibv_dealloc_pd(o.p);
}

static int cq_make(union fn_obj *o)
{
	return mk(o, ibv_create_cq(S.ctx, 16, NULL, NULL, 0));
}

static int cq_undo(union fn_obj o)
{
	return ibv_destroy_cq(o.p);
}

static int qp_make(union fn_obj *o)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = S.cq, .recv_cq = S.cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return mk(o, ibv_create_qp(S.pd, &qa));
}

static int qp_undo(union fn_obj o)
{
	return ibv_destroy_qp(o.p);
}

static int srq_make(union fn_obj *o)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };

	return mk(o, ibv_create_srq(S.pd, &sa));
}

static int srq_undo(union fn_obj o)
{
	return ibv_destroy_srq(o.p);
}

static int mr_make(union fn_obj *o)
{
	return mk(o, ibv_reg_mr(S.pd, buf, 1 << 16, IBV_ACCESS_LOCAL_WRITE |
			       IBV_ACCESS_REMOTE_WRITE));
}

static int mr_undo(union fn_obj o)
{
	return ibv_dereg_mr(o.p);
}

/* the export was made before: only the registration is armed */
static int dmabuf_mr_make(union fn_obj *o)
{
	return mk(o, ibv_reg_dmabuf_mr(S.pd, 0, DMABUF_SIZE, 0x10000000,
				       dmabuf_fd, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ));
}

static int mw_make(union fn_obj *o)
{
	return mk(o, ibv_alloc_mw(S.pd, IBV_MW_TYPE_1));
}

static int mw_undo(union fn_obj o)
{
	return ibv_dealloc_mw(o.p);
}

static int ah_make(union fn_obj *o)
{
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = S.gid, .sgid_index = S.gid_index,
			 .hop_limit = 64 },
	};

	return mk(o, ibv_create_ah(S.pd, &aa));
}

static int ah_undo(union fn_obj o)
{
	return ibv_destroy_ah(o.p);
}

static const struct fn_step steps[] = {
	{ .name = "ibv_alloc_pd", .make = pd_make, .undo = pd_undo },
	{ .name = "ibv_create_cq", .make = cq_make, .undo = cq_undo },
	{ .name = "ibv_create_qp (RC)", .make = qp_make, .undo = qp_undo },
	{ .name = "ibv_create_srq", .make = srq_make, .undo = srq_undo },
	{ .name = "ibv_reg_mr (64 KiB)", .make = mr_make, .undo = mr_undo },
	{ .name = "ibv_reg_dmabuf_mr (64 KiB of HBM)", .make = dmabuf_mr_make, .undo = mr_undo },
	{ .name = "ibv_alloc_mw (type 1)", .make = mw_make, .undo = mw_undo },
	{ .name = "ibv_create_ah", .make = ah_make, .undo = ah_undo },
};
#define NSTEPS	(int)(sizeof(steps) / sizeof(steps[0]))
#define DMABUF_STEP	5

/* 64 KiB of HBM of accel device @bus (gaudi_nic.N), mapped and exported */
static int dmabuf_export(const char *bus)
{
	uint64_t h, va;
	int fd;

	fd = hlthunk_open(HLTHUNK_DEVICE_GAUDI_NIC, bus);
	if (fd < 0) {
		errno = -fd;
		return -1;
	}
	h = hlthunk_device_memory_alloc(fd, DMABUF_SIZE, 0, true, false);
	va = h ? hlthunk_device_memory_map(fd, h, 0) : 0;
	if (!va)
		return -1;
	/* the dma-buf keeps the memory; the accel fd stays open to the end */
	return hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va,
							     DMABUF_SIZE, 0,
							     O_RDWR | O_CLOEXEC);
}

int main(int argc, char **argv)
{
	int s, bad = 0;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s DEV GID_INDEX [ACCEL_BUS_ID]\n",
			argv[0]);
		return 2;
	}
	buf = aligned_alloc(4096, 1 << 16);
	if (argc == 4) {
		dmabuf_fd = dmabuf_export(argv[3]);
		if (dmabuf_fd < 0) {
			fprintf(stderr, "fail_nth: cannot export HBM of %s: %s\n",
				argv[3], strerror(errno));
			return 2;
		}
	}
	if (!buf || tu_open(&S, argv[1], atoi(argv[2]), 64)) {
		fprintf(stderr, "fail_nth: cannot open %s: %s\n", argv[1],
			strerror(errno));
		return 2;
	}
	printf("TAP version 13\n1..%d\n", NSTEPS);
	if (fn_open()) {
		for (s = 0; s < NSTEPS; s++)
			printf("not ok %d - %s: /proc/thread-self/fail-nth: %s (a kernel with CONFIG_FAULT_INJECTION)\n",
			       s + 1, steps[s].name, strerror(errno));
		return 1;
	}
	for (s = 0; s < NSTEPS; s++) {
		if (s == DMABUF_STEP && dmabuf_fd < 0)
			printf("ok %d - %s # SKIP no accel device given\n",
			       s + 1, steps[s].name);
		else
			bad |= fn_run(s + 1, &steps[s]) != 0;
	}
	return bad;
}
