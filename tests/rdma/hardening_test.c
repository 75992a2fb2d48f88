// SPDX-License-Identifier: GPL-2.0
/*
 * hardening_test - what a hostile process can do to the RoCE engine
 * through memory it is allowed to write, two devices in one process.
 *
 * The send queue is mmap'd into the process: after posting, the process
 * can rewrite the WQE while the engine still needs it (a packet not yet
 * sent, a retransmission, a READ response still to scatter).  The engine
 * must use the copy it validated when it started the WQE.  Each test
 * posts a WQE while the peer QP is still in INIT (so the first packets
 * are dropped and must be retransmitted), rewrites the WQE in the ring,
 * then lets the peer go to RTR: the data must be what was posted.
 *
 * usage: hardening_test DEV_A GID_A DEV_B GID_B
 * Output: TAP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "testutil.h"

/*
 * The engine's WQE layout (include/linux/gaudi_nic/roce_hw.h,
 * struct gn_roce_wqe): what a process finds in its mmap'd send queue.
 */
#define WQE_SIZE	128
#define RING_HDR	128
#define WQE_F_INLINE	0x02
struct hw_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};
struct hw_wqe {
	uint64_t wr_id;
	uint8_t opcode;
	uint8_t flags;
	uint8_t num_sge;
	uint8_t rsvd0;
	uint32_t imm;
	uint32_t inline_len;
	uint32_t rkey;
	uint64_t remote_addr;
	struct hw_sge sge[6];
};
_Static_assert(sizeof(struct hw_wqe) == WQE_SIZE, "WQE layout");

struct side {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	int gid_index;
};

static struct side A, B;

static int open_side(struct side *s, const char *name, int gid_index)
{
	s->ctx = open_device_by_name(name);
	if (!s->ctx)
		return -1;
	s->gid_index = gid_index;
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid))
		return -1;
	s->pd = ibv_alloc_pd(s->ctx);
	s->cq = ibv_create_cq(s->ctx, 64, NULL, NULL, 0);
	return s->pd && s->cq ? 0 : -1;
}

static struct ibv_qp *new_qp(struct side *s)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = s->cq, .recv_cq = s->cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 6, .max_recv_sge = 6 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(s->pd, &ia);
}

#define ACC_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = ACC_ALL,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/*
 * INIT -> RTR -> RTS towards @peer's QP @dqpn.  ACK timeout 16 (about
 * 270 ms) and 7 retries: the peer has a couple of seconds to come up.
 */
static int to_rts(struct side *s, struct ibv_qp *qp, struct side *peer,
		  uint32_t dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn, .rq_psn = 100, .max_dest_rd_atomic = 4,
		.min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer->gid, .hop_limit = 64,
				      .sgid_index = s->gid_index } },
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 16;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 100;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now() + secs;
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 0;
		usleep(200);
	} while (now() < end);
	return -1;
}

/*
 * The WQE with @wr_id in one of this process's mmap'd gaudi rings (the
 * ring mappings of /dev/infiniband/uverbsN), or NULL.
 */
static struct hw_wqe *find_wqe(uint64_t wr_id, uint8_t opcode)
{
	FILE *f = fopen("/proc/self/maps", "r");
	struct hw_wqe *found = NULL;
	char line[512];

	if (!f)
		return NULL;
	while (!found && fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi, off;
		char perms[8];

		if (!strstr(line, "/dev/infiniband/uverbs") ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", &lo, &hi,
			   perms) != 3 || strncmp(perms, "rw", 2))
			continue;
		for (off = RING_HDR; lo + off + WQE_SIZE <= hi; off += WQE_SIZE) {
			struct hw_wqe *w = (struct hw_wqe *)(lo + off);

			if (w->wr_id == wr_id && w->opcode == opcode) {
				found = w;
				break;
			}
		}
	}
	fclose(f);
	return found;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13 + seed);
}

enum rewrite {
	SET_INLINE,		/* the WRITE's data becomes "inline" */
	SET_NUM_SGE,		/* num_sge 255, SGE 0 shrunk: walk past the WQE */
	MOVE_READ_SGE,		/* the READ's target moves in the MR */
};

static const char *const rewrite_name[] = {
	[SET_INLINE] = "INLINE flag set on a posted 256 B RDMA WRITE",
	[SET_NUM_SGE] = "num_sge 255 and SGE 0 shrunk on a posted 256 B RDMA WRITE",
	[MOVE_READ_SGE] = "SGE moved on a posted 256 B RDMA READ",
};

#define LEN	256
#define WR_ID	0x5eedf00dcafe0000ULL

/*
 * Post a 256 B WRITE (or READ) from A to B while B's QP is in INIT,
 * rewrite the WQE in A's ring as @how says, bring B's QP up; the
 * retransmission must carry (or scatter) exactly what was posted.
 */
static void test_rewrite(enum rewrite how)
{
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 8192, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 8192, ACC_ALL);
	struct ibv_qp *qa = new_qp(&A), *qb = new_qp(&B);
	bool read = how == MOVE_READ_SGE;
	struct ibv_sge sg = { (uintptr_t)a, LEN, ma ? ma->lkey : 0 };
	struct ibv_send_wr wr = {
		.wr_id = WR_ID + how, .sg_list = &sg, .num_sge = 1,
		.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b,
			     .rkey = mb ? mb->rkey : 0 },
	}, *bad;
	struct hw_wqe *w;
	struct ibv_wc wc = {};
	int ret;

	if (!a || !b || !ma || !mb || !qa || !qb || to_init(qa) ||
	    to_init(qb) || to_rts(&A, qa, &B, qb->qp_num)) {
		ok(false, "%s: set up (%s)", rewrite_name[how], strerror(errno));
		goto out;
	}
	fill(a, 8192, read ? 3 : 1);
	fill(b, 8192, read ? 1 : 3);
	if (ibv_post_send(qa, &wr, &bad)) {
		ok(false, "%s: post", rewrite_name[how]);
		goto out;
	}
	/* the first transmission reaches a QP in INIT and is dropped */
	usleep(20000);
	w = find_wqe(wr.wr_id, read ? 4 : 2);
	if (!w) {
		ok(false, "%s: the WQE is in the mmap'd ring", rewrite_name[how]);
		goto out;
	}
	switch (how) {
	case SET_INLINE:
		__atomic_store_n(&w->flags, w->flags | WQE_F_INLINE,
				 __ATOMIC_RELEASE);
		break;
	case SET_NUM_SGE:
		__atomic_store_n(&w->sge[0].length, 16, __ATOMIC_RELEASE);
		__atomic_store_n(&w->num_sge, 255, __ATOMIC_RELEASE);
		break;
	case MOVE_READ_SGE:
		__atomic_store_n(&w->sge[0].addr, (uintptr_t)a + 4096,
				 __ATOMIC_RELEASE);
		break;
	}
	if (to_rts(&B, qb, &A, qa->qp_num)) {
		ok(false, "%s: peer to RTS", rewrite_name[how]);
		goto out;
	}
	ret = wait_wc(A.cq, &wc, 20);
	if (read) {
		uint8_t want[LEN];

		fill(want, sizeof(want), 1);	/* b's first bytes */
		ok(!ret && wc.status == IBV_WC_SUCCESS && !memcmp(a, want, LEN),
		   "%s: the response lands where it was posted to (%s)",
		   rewrite_name[how], ret ? "no completion" :
		   ibv_wc_status_str(wc.status));
		fill(want, sizeof(want), 3);	/* a's bytes at 4096 */
		ok(!memcmp(a + 4096, want, LEN),
		   "%s: the rewritten target is untouched", rewrite_name[how]);
	} else {
		ok(!ret && wc.status == IBV_WC_SUCCESS && !memcmp(b, a, LEN),
		   "%s: the target holds exactly the posted bytes (%s)",
		   rewrite_name[how], ret ? "no completion" :
		   ibv_wc_status_str(wc.status));
		ok(b[LEN] == (uint8_t)(LEN * 13 + 3),
		   "%s: nothing written past the message", rewrite_name[how]);
	}
out:
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
	while (ibv_poll_cq(A.cq, 1, &wc) > 0 || ibv_poll_cq(B.cq, 1, &wc) > 0)
		;
	if (ma)
		ibv_dereg_mr(ma);
	if (mb)
		ibv_dereg_mr(mb);
	free(a);
	free(b);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n");
	if (open_side(&A, argv[1], atoi(argv[2])) ||
	    open_side(&B, argv[3], atoi(argv[4]))) {
		ok(false, "open %s and %s", argv[1], argv[3]);
		printf("1..%d\n", tap_n);
		return 1;
	}
	test_rewrite(SET_INLINE);
	test_rewrite(SET_NUM_SGE);
	test_rewrite(MOVE_READ_SGE);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
