// SPDX-License-Identifier: GPL-2.0
/*
 * revoke_test - a peer streams RDMA WRITEs into a dma-buf MR while the
 * device that owns the memory goes away (tests/rdma/revoke.sh, issue 33).
 *
 * The HBM of accel device ACCEL_X is exported as a dma-buf and registered
 * on DEV_T; DEV_W writes into it (or, with "read", reads from it), 4 KiB
 * at a time, each one waited for.  Once 20 have gone through (the first
 * one's bytes compared with the HBM through its CPU mapping) it prints
 * "ready" and goes on; the script
 * writes a line to its stdin and removes ACCEL_X.  The writer must get an
 * error completion (the target's MR revoked: a remote access error), and
 * the time from that line to the error is printed ("revoked after S s").
 * Afterwards the MR deregisters cleanly.  Plain TAP.
 *
 * usage: revoke_test DEV_W GID_W DEV_T GID_T ACCEL_X [write|read]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <hlthunk.h>
#include <infiniband/verbs.h>

#include "testutil.h"

#define SIZE		(1 << 20)
#define CHUNK		4096
#define READY_AFTER	20
#define LIMIT_S		60.0

/* A line on stdin: the revocation begins now. */
static bool go_seen(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	char buf[64];

	if (poll(&p, 1, 0) != 1)
		return false;
	return read(0, buf, sizeof(buf)) > 0;
}

int main(int argc, char **argv)
{
	struct tu_side W = {}, T = {};
	struct tu_path path = TU_PATH_DEFAULT;
	struct ibv_qp_cap cap = { .max_send_wr = 4, .max_recv_wr = 4,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct ibv_qp *qw, *qt;
	struct ibv_mr *wmr, *tmr;
	uint64_t h, va;
	double t0 = 0, start;
	int fx, dfd, n = 0, st = IBV_WC_SUCCESS, ret;
	uint8_t *cpu, *wbuf;
	bool rd = argc == 7 && !strcmp(argv[6], "read");
	enum ibv_wr_opcode op = rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	const char *what = rd ? "READs" : "WRITEs";

	printf("TAP version 13\n");
	if (argc != 6 && !(argc == 7 && (rd || !strcmp(argv[6], "write")))) {
		fprintf(stderr, "usage: %s DEV_W GID_W DEV_T GID_T ACCEL_X [write|read]\n",
			argv[0]);
		return 2;
	}
	fx = hlthunk_open_by_index(atoi(argv[5]));
	h = fx >= 0 ? hlthunk_device_memory_alloc(fx, SIZE, 0, true, false) : 0;
	va = h ? hlthunk_device_memory_map(fx, h, 0) : 0;
	dfd = va ? hlthunk_device_mapped_memory_export_dmabuf_fd(fx, va, SIZE, 0,
								 O_RDWR | O_CLOEXEC) : -1;
	cpu = h ? hlthunk_device_memory_mmap(fx, h, SIZE) : NULL;
	tap_ok(dfd >= 0 && cpu, "1 MiB of accel %s's HBM exported as a dma-buf",
	       argv[5]);
	wbuf = aligned_alloc(4096, CHUNK);
	if (dfd < 0 || !cpu || !wbuf ||
	    tu_open(&W, argv[1], atoi(argv[2]), 16) ||
	    tu_open(&T, argv[3], atoi(argv[4]), 16))
		goto out;
	tmr = ibv_reg_dmabuf_mr(T.pd, 0, SIZE, 0, dfd, TU_ACC_ALL);
	wmr = ibv_reg_mr(W.pd, wbuf, CHUNK, IBV_ACCESS_LOCAL_WRITE);
	qw = tu_qp(W.pd, W.cq, IBV_QPT_RC, &cap);
	qt = tu_qp(T.pd, T.cq, IBV_QPT_RC, &cap);
	tap_ok(tmr && wmr && qw && qt &&
	       !tu_qp_connect(qw, &W, &T, qt->qp_num, TU_ACC_ALL, &path) &&
	       !tu_qp_connect(qt, &T, &W, qw->qp_num, TU_ACC_ALL, &path),
	       "the dma-buf MR on %s, a QP pair from %s", argv[3], argv[1]);
	if (tap_failed)
		goto out;
	for (int i = 0; i < CHUNK; i++) {
		wbuf[i] = (uint8_t)(i * 7 + 1);
		if (rd)
			cpu[i] = (uint8_t)(i * 5 + 3);
	}
	start = tu_now();
	while (st == IBV_WC_SUCCESS && tu_now() - start < LIMIT_S) {
		struct ibv_sge sg = { (uintptr_t)wbuf, CHUNK, wmr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = n, .sg_list = &sg, .num_sge = 1,
			.opcode = op,
			.send_flags = IBV_SEND_SIGNALED,
			/* WRITEs walk the MR; READs fetch the pattern at 0 */
			.wr.rdma = { .remote_addr = rd ? 0 :
					(uint64_t)(n % (SIZE / CHUNK)) * CHUNK,
				     .rkey = tmr->rkey },
		}, *bad;
		struct ibv_wc wc;

		if (!t0 && go_seen())
			t0 = tu_now();
		if (ibv_post_send(qw, &wr, &bad) ||
		    tu_poll(W.cq, &wc, 30) != 1) {
			st = -1;
			break;
		}
		st = wc.status;
		if (st == IBV_WC_SUCCESS && ++n == READY_AFTER) {
			tap_ok(!memcmp(cpu, wbuf, CHUNK),
			       "%d %s between the HBM and %s", n, what, argv[1]);
			printf("ready\n");
			fflush(stdout);
		}
	}
	if (!t0 && go_seen())
		t0 = tu_now();
	tap_ok(st > 0 && t0 > 0,
	       "%s got \"%s\" after %d %s, %.3f s after the revocation began",
	       argv[1], st > 0 ? ibv_wc_status_str(st) : "no completion", n,
	       what, t0 ? tu_now() - t0 : -1.0);
	if (t0)
		printf("# revoked after %.3f s\n", tu_now() - t0);
	ret = ibv_dereg_mr(tmr);
	tap_ok(!ret, "the revoked MR deregisters (%s)", strerror(ret));
	ibv_destroy_qp(qw);
	ibv_destroy_qp(qt);
	ibv_dereg_mr(wmr);
out:
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
