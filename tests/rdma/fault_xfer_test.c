// SPDX-License-Identifier: GPL-2.0
/*
 * fault_xfer - RC transfers between two gaudi devices in one process, every
 * byte checked: for each direction (A->B, B->A) and operation (WRITE, READ,
 * SEND), NMSG messages of SIZE bytes, DEPTH of them in flight at once,
 * each with its own byte pattern, the destination checked after each
 * batch.  Meant to run while the cable drops, duplicates, reorders or
 * corrupts frames (tests/rdma/faults.sh): every transfer must complete
 * successfully and deliver exactly the bytes sent.  A kselftest
 * (kselftest_harness.h): one variant of fault_xfer.transfer per operation
 * and direction, each in its own process with its own connected QP pair;
 * only those OPS and DIRS select run (the harness's -v filter).  Output:
 * KTAP.
 *
 * usage: fault_xfer_test DEV_A GID_A DEV_B GID_B [NMSG [SIZE [DEPTH [OPS [DIRS]]]]]
 *   OPS: letters w (WRITE), r (READ), s (SEND); default "wrs"
 *   DIRS: "ab", "ba" or both (default "ab,ba")
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"

#define ACC_ALL TU_ACC_ALL
#define MAX_DEPTH 16

static struct tu_side A = { .name = "A" }, B = { .name = "B" };
static size_t size;
static int depth;

/* The device, an RC QP in INIT and an MR of DEPTH messages (s->buf). */
static int open_side(struct tu_side *s, const char *dev, int gid_index)
{
	if (tu_open(s, dev, gid_index, 4 * MAX_DEPTH))
		return -1;
	s->qp = tu_qp(s->pd, s->cq, IBV_QPT_RC,
		      &(struct ibv_qp_cap){ .max_send_wr = MAX_DEPTH,
					    .max_recv_wr = MAX_DEPTH,
					    .max_send_sge = 1,
					    .max_recv_sge = 1 });
	s->buf = aligned_alloc(4096, depth * size);
	if (!s->qp || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(s->pd, s->buf, depth * size, ACC_ALL);
	if (!s->mr)
		return -1;
	return tu_qp_init(s->qp, ACC_ALL);
}

/* INIT -> RTS towards @peer's QP: PSNs 100, DEPTH READs each way */
static int connect_side(struct tu_side *s, struct tu_side *peer)
{
	struct tu_path p = TU_PATH_DEFAULT;

	p.psn = 100;
	p.max_rd_atomic = MAX_DEPTH;
	p.max_dest_rd_atomic = MAX_DEPTH;
	return tu_qp_rtr_rts(s->qp, s, peer, peer->qp->qp_num, &p);
}

/* Collect @n completions on @cq (60 s in all); false on error or timeout. */
static bool wait_wcs(struct tu_side *s, int n, const char **why)
{
	double end = tu_now() + 60;
	struct ibv_wc wc;
	int got;

	while (n > 0) {
		got = ibv_poll_cq(s->cq, 1, &wc);
		if (got < 0) {
			*why = "poll_cq failed";
			return false;
		}
		if (!got) {
			if (tu_now() > end) {
				*why = "timeout waiting for completions";
				return false;
			}
			usleep(200);
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			*why = ibv_wc_status_str(wc.status);
			return false;
		}
		n--;
	}
	return true;
}

/* Pattern of message @i of run @run: no two messages alike. */
static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 12345;
	size_t i;

	for (i = 0; i < n; i++) {
		x = x * 1103515245u + 12345;
		p[i] = x >> 16;
	}
}

/*
 * One operation @op from requester @rq to responder @rs: @nmsg messages,
 * in batches of @depth.  Returns the number of bad messages, or -1 if a
 * transfer failed (@why says how).
 */
static int run(struct tu_side *rq, struct tu_side *rs, char op, int nmsg,
	       uint32_t seed, const char **why)
{
	/* WRITE and SEND move rq -> rs, READ moves rs -> rq */
	struct tu_side *src = op == 'r' ? rs : rq, *dst = op == 'r' ? rq : rs;
	uint8_t *ref = malloc(size);
	int done, k, batch, bad = 0;

	if (!ref) {
		*why = "out of memory";
		return -1;
	}
	for (done = 0; done < nmsg; done += batch) {
		batch = nmsg - done < depth ? nmsg - done : depth;
		for (k = 0; k < batch; k++) {
			fill(src->buf + k * size, size, seed + done + k);
			memset(dst->buf + k * size, 0, size);
		}
		for (k = 0; k < batch && op == 's'; k++) {
			struct ibv_sge sg = { (uintptr_t)rs->buf + k * size,
					      size, rs->mr->lkey };
			struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sg,
						  .num_sge = 1 }, *badr;

			if (ibv_post_recv(rs->qp, &wr, &badr)) {
				*why = "post_recv failed";
				goto fail;
			}
		}
		for (k = 0; k < batch; k++) {
			struct ibv_sge sg = { (uintptr_t)rq->buf + k * size,
					      size, rq->mr->lkey };
			struct ibv_send_wr wr = {
				.wr_id = k, .sg_list = &sg, .num_sge = 1,
				.opcode = op == 'w' ? IBV_WR_RDMA_WRITE :
					  op == 'r' ? IBV_WR_RDMA_READ :
						      IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = {
					.remote_addr = (uintptr_t)rs->buf + k * size,
					.rkey = rs->mr->rkey,
				},
			}, *badw;

			if (ibv_post_send(rq->qp, &wr, &badw)) {
				*why = "post_send failed";
				goto fail;
			}
		}
		if (!wait_wcs(rq, batch, why))
			goto fail;
		if (op == 's' && !wait_wcs(rs, batch, why))
			goto fail;
		for (k = 0; k < batch; k++) {
			fill(ref, size, seed + done + k);
			if (memcmp(dst->buf + k * size, ref, size))
				bad++;
		}
	}
	free(ref);
	return bad;
fail:
	free(ref);
	return -1;
}

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b, nmsg = 32;
static uint32_t seed0;

FIXTURE(fault_xfer) {};

/* one operation in one direction: requester B (ba) or A */
FIXTURE_VARIANT(fault_xfer) {
	char op;
	bool ba;
	int idx;	/* its messages' patterns start at seed0 + idx * nmsg */
};

FIXTURE_VARIANT_ADD(fault_xfer, write_ab) { .op = 'w', .ba = false, .idx = 0 };
FIXTURE_VARIANT_ADD(fault_xfer, write_ba) { .op = 'w', .ba = true, .idx = 1 };
FIXTURE_VARIANT_ADD(fault_xfer, read_ab) { .op = 'r', .ba = false, .idx = 2 };
FIXTURE_VARIANT_ADD(fault_xfer, read_ba) { .op = 'r', .ba = true, .idx = 3 };
FIXTURE_VARIANT_ADD(fault_xfer, send_ab) { .op = 's', .ba = false, .idx = 4 };
FIXTURE_VARIANT_ADD(fault_xfer, send_ba) { .op = 's', .ba = true, .idx = 5 };

FIXTURE_SETUP(fault_xfer)
{
	ASSERT_EQ(0, open_side(&A, dev_a, gid_a))
		TH_LOG("open %s (GID index %d), an RC QP in INIT: %s", dev_a,
		       gid_a, strerror(errno));
	ASSERT_EQ(0, open_side(&B, dev_b, gid_b))
		TH_LOG("open %s (GID index %d), an RC QP in INIT: %s", dev_b,
		       gid_b, strerror(errno));
	ASSERT_EQ(0, connect_side(&A, &B)) TH_LOG("A's QP to RTS");
	ASSERT_EQ(0, connect_side(&B, &A)) TH_LOG("B's QP to RTS");
}

FIXTURE_TEARDOWN(fault_xfer)
{
}

/* NMSG messages of SIZE bytes, DEPTH in flight, each one checked */
TEST_F_TIMEOUT(fault_xfer, transfer, 300)
{
	const char *opname = variant->op == 'w' ? "WRITE" :
			     variant->op == 'r' ? "READ" : "SEND";
	struct tu_side *rq = variant->ba ? &B : &A, *rs = variant->ba ? &A : &B;
	const char *why = "";
	int bad;

	bad = run(rq, rs, variant->op, nmsg, seed0 + variant->idx * nmsg, &why);
	ASSERT_LE(0, bad)
		TH_LOG("%s %s->%s: %d x %zu B: %s", opname, rq->name, rs->name,
		       nmsg, size, why);
	EXPECT_EQ(0, bad)
		TH_LOG("%s %s->%s: %d of %d messages differ from what was sent",
		       opname, rq->name, rs->name, bad, nmsg);
	ksft_print_msg("%s %s->%s: %d x %zu B, %d in flight, %d messages intact\n",
		       opname, rq->name, rs->name, nmsg, size, depth, nmsg - bad);
}

int main(int argc, char **argv)
{
	const char *ops = "wrs", *dirs = "ab,ba", *o;
	/* the harness's arguments: -v VARIANT for each one selected */
	char *hargv[1 + 2 * 6 + 1] = { argv[0] };
	static char vname[6][16];
	int hargc = 1, nv = 0;

	seed0 = (uint32_t)time(NULL);
	size = 16384;
	depth = 8;
	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B [NMSG [SIZE [DEPTH [OPS [DIRS]]]]]\n",
			argv[0]);
		return 2;
	}
	dev_a = argv[1];
	gid_a = atoi(argv[2]);
	dev_b = argv[3];
	gid_b = atoi(argv[4]);
	if (argc > 5)
		nmsg = atoi(argv[5]);
	if (argc > 6)
		size = strtoul(argv[6], NULL, 0);
	if (argc > 7)
		depth = atoi(argv[7]);
	if (argc > 8)
		ops = argv[8];
	if (argc > 9)
		dirs = argv[9];
	if (nmsg < 1 || !size || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "bad NMSG, SIZE or DEPTH (1..%d)\n", MAX_DEPTH);
		return 2;
	}
	for (o = ops; *o; o++) {
		const char *opname = *o == 'w' ? "write" : *o == 'r' ? "read" :
				     *o == 's' ? "send" : NULL;
		int d;

		if (!opname || strchr(o + 1, *o)) {
			fprintf(stderr, "unknown or repeated operation '%c'\n", *o);
			return 2;
		}
		for (d = 0; d < 2; d++) {
			if (!strstr(dirs, d ? "ba" : "ab"))
				continue;
			snprintf(vname[nv], sizeof(vname[0]), "%s_%s", opname,
				 d ? "ba" : "ab");
			hargv[hargc++] = "-v";
			hargv[hargc++] = vname[nv++];
		}
	}
	if (hargc == 1) {
		fprintf(stderr, "no operation in both OPS and DIRS\n");
		return 2;
	}
	return test_harness_run(hargc, hargv);
}
