// SPDX-License-Identifier: GPL-2.0
/*
 * mr_bw - what a dma-buf MR costs the data path (issue 33: revocation must
 * not add a per-page check to it).  RDMA WRITE bandwidth from DEV_W into
 * three kinds of target MR on DEV_T, measured in the same run:
 *
 *   host     host memory registered with ibv_reg_mr (the peer);
 *   udmabuf  host memory of the same kind (a memfd) exported by udmabuf and
 *            registered with ibv_reg_dmabuf_mr: the revocable dma-buf MR
 *            path on the same memory, so its ratio to host is the path's
 *            own cost;
 *   hbm      HBM of accel ACCEL_X exported as a dma-buf and registered with
 *            ibv_reg_dmabuf_mr: what the collectives register.
 *
 * Each sample streams WRITEs of SIZE bytes, DEPTH of them in flight, for
 * SECS seconds; RUNS samples per kind, the kinds interleaved so that a
 * drift in the machine's speed falls on all of them alike.  Prints per kind
 * the median and the spread (min-max) in MB/s, and the ratio of its median
 * to host's.  Timing decides nothing: a test point fails only if a kind
 * cannot be set up, a WRITE fails, or its bytes do not arrive.  Plain TAP.
 *
 * usage: mr_bw DEV_W GID_W DEV_T GID_T ACCEL_X [SIZE [RUNS [SECS]]]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/udmabuf.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <hlthunk.h>
#include <infiniband/verbs.h>

#include "testutil.h"

#define DEPTH		8
#define MAX_RUNS	31
#define TARGET		(4u << 20)

enum { K_HOST, K_UDMABUF, K_HBM, NKINDS };

static const char *const kind_name[NKINDS] = { "host", "udmabuf", "hbm" };

struct target {
	struct ibv_mr *mr;
	uint8_t *cpu;       /* what the CPU sees of the target memory */
	int fd;             /* the dma-buf, or -1 */
	const char *why;    /* why it could not be set up */
	char failure[160];  /* what its first failing sample saw */
	double mbs[MAX_RUNS];
};

/* A memfd of TARGET bytes exported by udmabuf; its mapping in @t->cpu. */
static int udmabuf_target(struct target *t)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC, .size = TARGET };
	int dev, mfd;

	mfd = memfd_create("mr_bw", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, TARGET) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0) {
		t->why = "memfd";
		return -1;
	}
	t->cpu = mmap(NULL, TARGET, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0 || t->cpu == MAP_FAILED) {
		t->why = "/dev/udmabuf cannot be opened";
		t->cpu = NULL;
		close(mfd);
		return -1;
	}
	c.memfd = (uint32_t)mfd;
	t->fd = ioctl(dev, UDMABUF_CREATE, &c);
	close(dev);
	close(mfd);
	if (t->fd < 0)
		t->why = "UDMABUF_CREATE failed";
	return t->fd < 0 ? -1 : 0;
}

/* TARGET bytes of accel @accel's HBM exported as a dma-buf, mapped too. */
static int hbm_target(struct target *t, int accel)
{
	struct hlthunk_hbm_buf buf;
	int fx = hlthunk_open_by_index(accel);

	/* fx and buf stay: the allocation lives as long as the process */
	if (fx < 0 || hlthunk_hbm_buf_create(fx, TARGET, HLTHUNK_HBM_CPU_MAP, &buf)) {
		t->why = "HBM allocation or export failed";
		return -1;
	}
	t->fd = buf.dmabuf_fd;
	t->cpu = buf.cpu;
	return 0;
}

static int setup(struct target *t, int kind, struct ibv_pd *pd, int accel)
{
	t->fd = -1;
	if (kind == K_HOST) {
		t->cpu = aligned_alloc(4096, TARGET);
		t->mr = t->cpu ? ibv_reg_mr(pd, t->cpu, TARGET, TU_ACC_ALL) : NULL;
	} else {
		if (kind == K_UDMABUF ? udmabuf_target(t) : hbm_target(t, accel))
			return -1;
		t->mr = ibv_reg_dmabuf_mr(pd, 0, TARGET, 0, t->fd, TU_ACC_ALL);
	}
	if (!t->mr && !t->why)
		t->why = "registration failed";
	return t->mr ? 0 : -1;
}

/*
 * One sample: WRITEs of @size from @src into @t for @secs, DEPTH in
 * flight, and never fewer than one pass over the whole target, so that
 * every slot of it has been written when the sample ends (a slow sample
 * on a loaded machine must not leave slots the check below reads).
 * MB/s, or -1 if a WRITE failed.
 */
static double sample(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *src,
		     size_t size, struct target *t, double secs)
{
	size_t slots = TARGET / size, posted = 0, done = 0;
	double t0 = tu_now(), end = t0 + secs;
	struct ibv_wc wc[DEPTH];

	for (;;) {
		while (posted - done < DEPTH && (posted < slots || tu_now() < end)) {
			struct ibv_sge sg = { (uintptr_t)src->addr, (uint32_t)size, src->lkey };
			struct ibv_send_wr wr = {
				.wr_id = posted, .sg_list = &sg, .num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
				/* the MR's own address space: the VA of a
				 * host MR, iova 0 up of a dma-buf one */
				.wr.rdma = { .remote_addr = (uintptr_t)t->mr->addr +
						(posted % slots) * size,
					     .rkey = t->mr->rkey },
			}, *bad;

			int ret = ibv_post_send(qp, &wr, &bad);

			if (ret) {
				snprintf(t->failure, sizeof(t->failure), "ibv_post_send: %s", strerror(ret));
				return -1;
			}
			posted++;
		}
		if (done == posted)
			break;
		int n = ibv_poll_cq(cq, DEPTH, wc);

		if (n < 0) {
			snprintf(t->failure, sizeof(t->failure), "ibv_poll_cq failed");
			return -1;
		}
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS) {
				snprintf(t->failure, sizeof(t->failure), "a WRITE ended with \"%s\"",
					 ibv_wc_status_str(wc[i].status));
				return -1;
			}
		done += (size_t)n;
		if (!n && tu_now() > end + 30) {
			snprintf(t->failure, sizeof(t->failure), "no completion within 30 s");
			return -1;
		}
	}
	return (double)done * (double)size / (tu_now() - t0) / 1e6;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	struct ibv_qp_cap cap = { .max_send_wr = DEPTH, .max_recv_wr = 1,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct tu_path path = TU_PATH_DEFAULT;
	struct target tg[NKINDS] = {};
	struct tu_side W = {}, T = {};
	size_t size = argc > 6 ? strtoul(argv[6], NULL, 0) : 65536;
	int runs = argc > 7 ? atoi(argv[7]) : 5;
	double secs = argc > 8 ? atof(argv[8]) : 1.0, host_med = 0;
	struct ibv_qp *qw, *qt;
	struct ibv_mr *src;
	uint8_t *sbuf;

	printf("TAP version 13\n");
	if (argc < 6 || size < 64 || size > TARGET || TARGET % size ||
	    runs < 1 || runs > MAX_RUNS || secs <= 0) {
		fprintf(stderr, "usage: %s DEV_W GID_W DEV_T GID_T ACCEL_X [SIZE [RUNS [SECS]]]\n"
			"  SIZE: a divisor of %u, at least 64; RUNS: 1 to %d\n",
			argv[0], TARGET, MAX_RUNS);
		return 2;
	}
	path.mtu = IBV_MTU_4096;
	sbuf = aligned_alloc(4096, size);
	if (!sbuf || tu_open(&W, argv[1], atoi(argv[2]), 4 * DEPTH) ||
	    tu_open(&T, argv[3], atoi(argv[4]), 4 * DEPTH)) {
		tap_ok(false, "open %s and %s", argv[1], argv[3]);
		goto out;
	}
	for (size_t i = 0; i < size; i++)
		sbuf[i] = (uint8_t)(i * 13 + 7);
	src = ibv_reg_mr(W.pd, sbuf, size, IBV_ACCESS_LOCAL_WRITE);
	qw = tu_qp(W.pd, W.cq, IBV_QPT_RC, &cap);
	qt = tu_qp(T.pd, T.cq, IBV_QPT_RC, &cap);
	tap_ok(src && qw && qt &&
	       !tu_qp_connect(qw, &W, &T, qt->qp_num, TU_ACC_ALL, &path) &&
	       !tu_qp_connect(qt, &T, &W, qw->qp_num, TU_ACC_ALL, &path),
	       "an RC pair from %s to %s, path MTU 4096", argv[1], argv[3]);
	if (tap_failed)
		goto out;
	for (int k = 0; k < NKINDS; k++) {
		int ret = setup(&tg[k], k, T.pd, atoi(argv[5]));

		tap_ok(!ret, "%s: a %u MiB target MR on %s%s%s", kind_name[k], TARGET >> 20,
		       argv[3], ret ? ": " : "", ret ? tg[k].why : "");
	}
	if (tap_failed)
		goto out;
	for (int r = 0; r < runs; r++)
		for (int k = 0; k < NKINDS; k++)
			if (!tg[k].failure[0])
				tg[k].mbs[r] = sample(qw, W.cq, src, size, &tg[k], secs);
			else
				tg[k].mbs[r] = -1;
	printf("# WRITE %zu B, %d in flight, %d samples of %.1f s per kind, interleaved\n",
	       size, DEPTH, runs, secs);
	printf("# %-8s %10s %21s %8s\n", "target", "median", "spread (MB/s)", "/host");
	for (int k = 0; k < NKINDS; k++) {
		size_t slots = TARGET / size, slot = 0;
		double lo, hi, med;
		bool bad = false;

		for (int r = 0; r < runs; r++)
			bad |= tg[k].mbs[r] < 0;
		tap_ok(!bad, "%s: every WRITE completed%s%s", kind_name[k],
		       bad ? ": " : "", bad ? tg[k].failure : "");
		/* every sample wrote each slot at least once */
		while (!bad && slot < slots && !memcmp(tg[k].cpu + slot * size, sbuf, size))
			slot++;
		tap_ok(!bad && slot == slots, "%s: the written bytes are in the target memory",
		       kind_name[k]);
		if (!bad && slot < slots)
			printf("# %s: slot %zu of %zu (offset %zu) is not the source's bytes\n",
			       kind_name[k], slot, slots, slot * size);
		if (bad)
			continue;
		med = median(tg[k].mbs, runs);
		lo = tg[k].mbs[0];
		hi = tg[k].mbs[runs - 1];
		if (k == K_HOST)
			host_med = med;
		printf("# %-8s %10.1f %10.1f - %8.1f %8.3f\n", kind_name[k], med, lo, hi,
		       host_med > 0 ? med / host_med : 0);
	}
out:
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
