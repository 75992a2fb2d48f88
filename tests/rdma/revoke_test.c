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
 * Afterwards the MR deregisters cleanly.
 *
 * With "reload" the script resets ACCEL_X (devlink dev reload) instead,
 * and closes stdin once the reset has returned; the device lives on.
 * Then the old accel fd must fail with EIO, its CPU mapping must read
 * zeroes (a page of its own, not the HBM), all of the HBM must be back
 * (hbm_used 0), and a new allocation of the same size
 * (first fit on an empty HBM: the same frames, the same bus addresses)
 * must stay all zero while the old writer keeps trying its revoked rkey,
 * each try on QPs connected anew, and the old process writes through its
 * old mapping.
 *
 * "churn" races the other orders against resets the script makes of
 * ACCEL_X meanwhile: for SECONDS, open the device, export 64 KiB, register
 * it on DEV_T, then close the dma-buf fd before or after deregistering
 * the MR (alternately), and free.  Every step may fail with the reset's
 * error, but a deregistration never fails and the process never hangs.
 * Plain TAP.
 *
 * usage: revoke_test DEV_W GID_W DEV_T GID_T ACCEL_X [write|read] [reload]
 *        revoke_test churn DEV_T ACCEL_X SECONDS
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

#define RETRIES		20

/* /sys/bus/platform/devices/gaudi_nic.ACCEL/gaudi_nic/NAME, or -1 */
static long long accel_stat(const char *accel, const char *name)
{
	char path[128];

	snprintf(path, sizeof(path),
		 "/sys/bus/platform/devices/gaudi_nic.%s/gaudi_nic/%s", accel, name);
	return tu_read_ll(path);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * After the reset of ACCEL_X (fd @fx, old mapping @cpu): the checks of
 * the top of this file.  @op on @qw (towards @qt) with @rkey is the old
 * writer's work request.
 */
static void after_reset(const char *accel, int fx, uint8_t *cpu,
			struct tu_side *W, struct tu_side *T,
			struct ibv_qp *qw, struct ibv_qp *qt, struct ibv_mr *wmr,
			enum ibv_wr_opcode op, uint32_t rkey)
{
	struct tu_path path = TU_PATH_DEFAULT;
	struct ibv_qp_attr reset = { .qp_state = IBV_QPS_RESET };
	struct hlthunk_hw_ip_info hw;
	int fn, i, passed = 0, err = 0;
	uint8_t *cpu2 = NULL;
	uint64_t h2, va2;
	long long used;
	bool fails;

	errno = 0;
	fails = !hlthunk_device_memory_alloc(fx, SIZE, 0, true, false) &&
		errno == EIO;
	tap_ok(fails && hlthunk_get_hw_ip_info(fx, &hw) == -1 && errno == EIO,
	       "the old fd of accel %s fails with EIO after the reset", accel);
	tap_ok(all_zero(cpu, SIZE),
	       "its old CPU mapping reads zeroes, not the HBM it had written");
	used = accel_stat(accel, "hbm_used");
	tap_ok(used == 0, "all of accel %s's HBM is back (hbm_used %lld)",
	       accel, used);
	fn = hlthunk_open_by_index(atoi(accel));
	h2 = fn >= 0 ? hlthunk_device_memory_alloc(fn, SIZE, 0, true, false) : 0;
	va2 = h2 ? hlthunk_device_memory_map(fn, h2, 0) : 0;
	cpu2 = va2 ? hlthunk_device_memory_mmap(fn, h2, SIZE) : NULL;
	tap_ok(cpu2 && all_zero(cpu2, SIZE),
	       "a new open allocates 1 MiB on accel %s again, all zero", accel);
	if (!cpu2)
		return;
	for (i = 0; i < RETRIES; i++) {
		struct ibv_sge sg = { (uintptr_t)wmr->addr, CHUNK, wmr->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sg, .num_sge = 1, .opcode = op,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uint64_t)i * CHUNK,
				     .rkey = rkey },
		}, *bad;
		struct ibv_wc wc;

		if (ibv_modify_qp(qw, &reset, IBV_QP_STATE) ||
		    ibv_modify_qp(qt, &reset, IBV_QP_STATE) ||
		    tu_qp_connect(qw, W, T, qt->qp_num, TU_ACC_ALL, &path) ||
		    tu_qp_connect(qt, T, W, qw->qp_num, TU_ACC_ALL, &path) ||
		    ibv_post_send(qw, &wr, &bad) || tu_poll(W->cq, &wc, 30) != 1)
			break;
		if (wc.status == IBV_WC_SUCCESS)
			passed++;
		else
			err++;
		/* the old owner writes through its old mapping too */
		memset(cpu + (size_t)i * CHUNK, 0xa5, CHUNK);
		/* the responder's QP erred too: drain what it flushed */
		while (ibv_poll_cq(T->cq, 1, &wc) > 0)
			;
	}
	tap_ok(err == RETRIES && !passed && all_zero(cpu2, SIZE),
	       "%d more tries with the revoked rkey and the old mapping: %d refused, %d went through; the new HBM stays all zero",
	       RETRIES, err, passed);
	hlthunk_device_memory_munmap(cpu2, SIZE);
	hlthunk_close(fn);
}

#define CHURN_SIZE	(64 << 10)

/* One round of "churn": 1 if an MR was registered, 0 if not, -1 if its
 * deregistration failed. */
static int churn_round(struct ibv_pd *pd, int accel, bool fd_first)
{
	int fx = hlthunk_open_by_index(accel), dfd = -1, ret = 0;
	uint64_t h = 0, va = 0;
	struct ibv_mr *mr = NULL;

	if (fx < 0)
		return 0;
	h = hlthunk_device_memory_alloc(fx, CHURN_SIZE, 0, true, false);
	va = h ? hlthunk_device_memory_map(fx, h, 0) : 0;
	if (va)
		dfd = hlthunk_device_mapped_memory_export_dmabuf_fd(fx, va, CHURN_SIZE, 0,
								    O_RDWR | O_CLOEXEC);
	if (dfd >= 0)
		mr = ibv_reg_dmabuf_mr(pd, 0, CHURN_SIZE, 0, dfd, TU_ACC_ALL);
	if (fd_first && dfd >= 0)
		close(dfd);
	if (mr)
		ret = ibv_dereg_mr(mr) ? -1 : 1;
	if (!fd_first && dfd >= 0)
		close(dfd);
	if (va)
		hlthunk_memory_unmap(fx, va);
	if (h)
		hlthunk_device_memory_free(fx, h);
	hlthunk_close(fx);
	return ret;
}

static int churn(const char *dev_t, const char *accel, double secs)
{
	struct ibv_context *ctx = open_device_by_name(dev_t);
	struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
	int rounds = 0, regs = 0, bad = 0, r;
	double end = tu_now() + secs;

	if (!pd) {
		tap_ok(false, "a PD on %s", dev_t);
		goto out;
	}
	while (tu_now() < end) {
		r = churn_round(pd, atoi(accel), rounds & 1);
		regs += r > 0;
		bad += r < 0;
		rounds++;
	}
	tap_ok(!bad && regs > 0,
	       "%d rounds of export, register on %s, close and deregister beside the resets of accel %s: %d registered, %d deregistrations failed",
	       rounds, dev_t, accel, regs, bad);
	ibv_dealloc_pd(pd);
out:
	if (ctx)
		ibv_close_device(ctx);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

/*
 * The end of stdin: the script closes it once the reset has returned.  The
 * error completion comes in the middle of the reset (its first step is the
 * revocation), so the checks of the device that lives on wait for this.
 */
static bool reset_done(void)
{
	struct pollfd p = { .fd = 0, .events = POLLIN };
	double end = tu_now() + LIMIT_S;
	char buf[64];

	while (tu_now() < end) {
		if (poll(&p, 1, 100) < 0)
			return false;
		if (p.revents && read(0, buf, sizeof(buf)) <= 0)
			return true;
	}
	return false;
}

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
	bool rd = argc >= 7 && !strcmp(argv[6], "read");
	bool reload = argc == 8 && !strcmp(argv[7], "reload");
	enum ibv_wr_opcode op = rd ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	const char *what = rd ? "READs" : "WRITEs";

	printf("TAP version 13\n");
	if (argc == 5 && !strcmp(argv[1], "churn"))
		return churn(argv[2], argv[3], atof(argv[4]));
	if (argc != 6 && !(argc >= 7 && (rd || !strcmp(argv[6], "write")) &&
			   (argc == 7 || reload))) {
		fprintf(stderr, "usage: %s DEV_W GID_W DEV_T GID_T ACCEL_X [write|read] [reload]\n"
			"       %s churn DEV_T ACCEL_X SECONDS\n", argv[0], argv[0]);
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
	if (reload && st > 0 && !reset_done())
		tap_ok(false, "the reset of accel %s returns within %.0f s",
		       argv[5], LIMIT_S);
	else if (reload && st > 0)
		after_reset(argv[5], fx, cpu, &W, &T, qw, qt, wmr, op,
			    tmr->rkey);
	ret = ibv_dereg_mr(tmr);
	tap_ok(!ret, "the revoked MR deregisters (%s)", strerror(ret));
	ibv_destroy_qp(qw);
	ibv_destroy_qp(qt);
	ibv_dereg_mr(wmr);
out:
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
