// SPDX-License-Identifier: GPL-2.0
/*
 * hardening_test - what a hostile process can do to the RoCE engine
 * through memory it is allowed to write, two devices in one process.
 *
 * The rings are mmap'd into the process: after posting, it can move the
 * producer index back behind WQEs the engine started (prod_backwards),
 * move a CQ's producer index past the ring (cq_prod_lie), or map a ring
 * while its QP is destroyed (mmap_race).  From the wire:
 * READs that exceed the responder resources, a READ replayed, GIDs
 * removed under traffic, forged frames.  The engine's work per lock hold
 * is capped (work_caps).  WQEs rewritten after posting are
 * rewrite_test.c's.
 *
 * usage: hardening_test DEV_A GID_A DEV_B GID_B
 * A kselftest (kselftest_harness.h): one test per area, each in its own
 * process with both devices opened anew; output KTAP.
 */
#define _GNU_SOURCE		/* gettid() */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "pairutil.h"
#include "ringutil.h"

#define LEN	256
#define WR_ID	0x5eedf00dcafe0000ULL

/*
 * The responder resources are enforced: with max_dest_rd_atomic 0 no
 * READ is served; with 1, a second READ that arrives while the first is
 * still being answered is refused.  Either way the requester gets a
 * remote invalid request error, not data.
 */
static void test_rd_limit(struct __test_metadata *_metadata, int dest, int nreads)
{
	size_t len = 1 << 20;
	uint8_t *a = aligned_alloc(4096, len), *b = aligned_alloc(4096, len);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, len, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, len, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_send_wr wr[4], *bad;
	struct ibv_sge sg[4];
	struct ibv_wc wc = {};
	int i, inv = 0, good = 0, done = 0;

	if (nreads > 4)
		nreads = 4;

	dest_rd_atomic = dest;
	path_mtu = IBV_MTU_256;
	ASSERT_TRUE(a && b && ma && mb)
		TH_LOG("max_dest_rd_atomic %d: buffers and MRs (%s)", dest, strerror(errno));
	ASSERT_TRUE(connect_pair(&qa, &qb))
		TH_LOG("max_dest_rd_atomic %d: a connected QP pair (%s)", dest, strerror(errno));
	/*
	 * One post, one doorbell: the requests leave back to back, so the
	 * second reaches the responder while the first one's 2048
	 * responses (32 bursts) are still owed.
	 */
	for (i = 0; i < nreads; i++) {
		size_t part = len / nreads;

		sg[i] = (struct ibv_sge){ (uintptr_t)a + i * part, part,
					  ma->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sg[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)b + i * part,
				     .rkey = mb->rkey },
			.next = i + 1 < nreads ? &wr[i + 1] : NULL,
		};
	}
	ASSERT_EQ(0, ibv_post_send(qa, wr, &bad))
		TH_LOG("max_dest_rd_atomic %d: post %d READs", dest, nreads);
	for (done = 0; done < nreads; done++) {
		if (wait_wc(A.cq, &wc, 60))
			break;
		inv += wc.status == IBV_WC_REM_INV_REQ_ERR;
		good += wc.status == IBV_WC_SUCCESS;
	}
	EXPECT_TRUE(done == nreads && inv >= 1)
	   TH_LOG("max_dest_rd_atomic %d, %d READs posted at once: refused with a remote invalid request error (%d refused, %d served, %d completions)",
	   dest, nreads, inv, good, done);
	dest_rd_atomic = 4;
	path_mtu = IBV_MTU_1024;
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}

PAIR_FIXTURE(hardening)

TEST_F_TIMEOUT(hardening, rd_limit_0_1, 120)
{
	test_rd_limit(_metadata, 0, 1);
}

TEST_F_TIMEOUT(hardening, rd_limit_1_2, 120)
{
	test_rd_limit(_metadata, 1, 2);
}

/*
 * One large READ at MTU 256 (64 Ki responses): the responder sends each
 * response once (no replay of what was received), the requester's
 * receive queue never overflows, and a WRITE on another QP of the same
 * devices, posted behind it, completes while the READ is still going on.
 */
TEST_F_TIMEOUT(hardening, big_read, 120)
{
	size_t len = 16 << 20;
	long long npkts = len / 256;
	uint8_t *a = aligned_alloc(4096, len), *b = aligned_alloc(4096, len);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, len, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, len, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL, *qa2 = NULL, *qb2 = NULL;
	struct ibv_wc wc = {};
	long long tx0, drop0, tx1, drop1;
	double t0, t_write = -1, t_read = -1;
	bool read_ok = false, write_ok = false;

	path_mtu = IBV_MTU_256;
	ASSERT_TRUE(a && b && ma && mb)
		TH_LOG("16 MiB READ at MTU 256: buffers and MRs (%s)", strerror(errno));
	ASSERT_TRUE(connect_pair(&qa, &qb) && connect_pair(&qa2, &qb2))
		TH_LOG("16 MiB READ at MTU 256: two connected QP pairs (%s)",
		       strerror(errno));
	memset(a, 0, len);
	fill(b, len, 7);
	tx0 = hw_counter(&B, "tx_packets");
	drop0 = hw_counter(&A, "rx_dropped");
	{
		struct ibv_sge sg = { (uintptr_t)a, len, ma->lkey };
		struct ibv_sge sg2 = { (uintptr_t)a, 64, ma->lkey };
		struct ibv_send_wr rd = {
			.wr_id = 1, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)b,
				     .rkey = mb->rkey },
		}, wr = {
			.wr_id = 2, .sg_list = &sg2, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { .remote_addr = (uintptr_t)b + len - 64,
				     .rkey = mb->rkey },
		}, *bad;

		t0 = tu_now();
		ASSERT_EQ(0, ibv_post_send(qa, &rd, &bad))
			TH_LOG("16 MiB READ at MTU 256: post the READ");
		ASSERT_EQ(0, ibv_post_send(qa2, &wr, &bad))
			TH_LOG("16 MiB READ at MTU 256: post the WRITE beside it");
	}
	while ((t_read < 0 || t_write < 0) && !wait_wc(A.cq, &wc, 120)) {
		if (wc.wr_id == 1) {
			t_read = tu_now() - t0;
			read_ok = wc.status == IBV_WC_SUCCESS;
		} else {
			t_write = tu_now() - t0;
			write_ok = wc.status == IBV_WC_SUCCESS;
		}
	}
	tx1 = hw_counter(&B, "tx_packets");
	drop1 = hw_counter(&A, "rx_dropped");
	{
		uint8_t *want = malloc(len);

		if (want)
			fill(want, len, 7);
		EXPECT_TRUE(read_ok && want && !memcmp(a, want, len - 64))
		   TH_LOG("16 MiB READ at MTU 256 completes with the data (%s, %.2f s)",
		   t_read < 0 ? "no completion" : read_ok ? "success" :
		   "error", t_read);
		free(want);
	}
	EXPECT_TRUE(write_ok && t_write < t_read)
	   TH_LOG("a WRITE on another QP, posted behind it, completes first (%.3f s against %.2f s)",
	   t_write, t_read);
	EXPECT_TRUE(tx0 >= 0 && tx1 - tx0 <= npkts + npkts / 8)
	   TH_LOG("the responder sent each response about once (%lld packets for %lld responses)",
	   tx1 - tx0, npkts);
	EXPECT_TRUE(drop0 >= 0 && drop1 == drop0)
	   TH_LOG("the requester dropped nothing (rx_dropped +%lld)", drop1 - drop0);
	path_mtu = IBV_MTU_1024;
	release((struct ibv_qp *[]){ qa, qb, qa2, qb2 }, 4, ma, mb, a, b);
}

/* The uverbs mappings in /proc/self/maps: start addresses and offsets. */
static int uverbs_maps(uintptr_t *lo, uintptr_t *hi, unsigned long long *off,
		       int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %llx", &lo[n],
			   &hi[n], &off[n]) == 3)
			n++;
	}
	fclose(f);
	return n;
}

struct mmap_race {
	int fd;
	size_t len;
	unsigned long long off;
	pid_t tid;
	int go;
	void *map;
	int err;
};

static void *mmap_race_thread(void *arg)
{
	struct mmap_race *m = arg;

	__atomic_store_n(&m->tid, gettid(), __ATOMIC_RELEASE);
	while (!__atomic_load_n(&m->go, __ATOMIC_ACQUIRE))
		usleep(1000);
	m->map = mmap(NULL, m->len, PROT_READ, MAP_SHARED, m->fd, m->off);
	m->err = m->map == MAP_FAILED ? errno : 0;
	return NULL;
}

/*
 * mmap() of a QP's ring while the QP is destroyed: the driver looked the
 * ring up, and the destroy frees it before the mapping is made (the test
 * module gaudi_nic_test_delay holds the mmap() for 500 ms at its first
 * vm_insert_page(), the destroy runs meanwhile).  The mapping must show
 * the ring as it was, not fail and not show freed memory; the delay must
 * have fired, or the race was not run.
 */
TEST_F_TIMEOUT(hardening, mmap_race, 120)
{
	uintptr_t lo0[64], hi0[64], lo1[64], hi1[64];
	unsigned long long off0[64], off1[64];
	struct mmap_race m = { .fd = A.ctx->cmd_fd, .map = MAP_FAILED };
	const uint64_t marker = 0x6761756469726163ULL;
	struct ibv_qp *qp = NULL;
	pthread_t th;
	int n0, n1, i, j, fired;
	uint64_t *ring = NULL;
	bool armed;
	int err;

	if (access(DELAY_ARM, W_OK))
		SKIP(return, "mmap of a ring during its QP's destroy: %s is not there: the test module gaudi_nic_test_delay is not loaded (tests/rdma/hardening.sh loads it)",
		     DELAY_ARM);
	n0 = uverbs_maps(lo0, hi0, off0, 64);
	qp = new_qp(&A);
	n1 = uverbs_maps(lo1, hi1, off1, 64);
	for (i = 0; qp && !ring && i < n1; i++) {
		for (j = 0; j < n0 && lo0[j] != lo1[i]; j++)
			;
		if (j == n0) {		/* a mapping the QP brought: a ring */
			ring = (uint64_t *)lo1[i];
			m.len = hi1[i] - lo1[i];
			m.off = off1[i];
		}
	}
	ASSERT_NE(NULL, ring)
		TH_LOG("mmap race: a QP and its ring mapping (%s)", strerror(errno));
	/* the last 8 bytes of the ring: no WQE was posted there */
	ring[m.len / 8 - 1] = marker;
	ASSERT_EQ(0, pthread_create(&th, NULL, mmap_race_thread, &m))
		TH_LOG("mmap race: thread");
	while (!__atomic_load_n(&m.tid, __ATOMIC_ACQUIRE))
		usleep(1000);
	armed = !delay_arm("vm_insert_page", m.tid, 500);
	err = errno;
	if (!armed) {
		/* the thread first: it waits for go */
		__atomic_store_n(&m.go, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	ASSERT_TRUE(armed) TH_LOG("mmap race: arm the delay (%s)", strerror(err));
	__atomic_store_n(&m.go, 1, __ATOMIC_RELEASE);
	usleep(150000);		/* the thread is held inside mmap() */
	ibv_destroy_qp(qp);
	qp = NULL;
	pthread_join(th, NULL);
	fired = delay_fired();
	EXPECT_TRUE(fired == 1 && m.map != MAP_FAILED &&
	   ((uint64_t *)m.map)[m.len / 8 - 1] == marker)
	   TH_LOG("mmap of a ring during its QP's destroy maps the ring as it was (%s, delay fired %d)",
	   m.map == MAP_FAILED ? strerror(m.err) : "mapped", fired);
	if (m.map != MAP_FAILED)
		munmap(m.map, m.len);
	delay_off();
	if (qp)
		ibv_destroy_qp(qp);
}

/* Run tests/rdma/roce_inject.py as $INJECT (a command prefix) with @args. */
static int inject(const char *args)
{
	const char *cmd = getenv("INJECT");
	char buf[1024];

	snprintf(buf, sizeof(buf), "%s %s", cmd, args);
	fflush(stdout);
	return system(buf);
}

/* Post an 8-byte-capable receive on @qp into @buf. */
static int post_recv8(struct ibv_qp *qp, struct ibv_mr *mr, void *buf,
		      uint64_t wr_id)
{
	struct ibv_sge sg = { (uintptr_t)buf, 64, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sg,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}


/* B READs @len bytes of A's @ma at @off into @mb; the CQE's status or -1. */
static int read_from_a(struct ibv_qp *qb, struct ibv_mr *mb, struct ibv_mr *ma,
		       size_t off, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)mb->addr, len, mb->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 88, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)ma->addr + off,
			     .rkey = ma->rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qb, &wr, &bad) || wait_wc(B.cq, &wc, 20))
		return -1;
	return wc.status;
}

#define DUP_LEN		(2u << 20)	/* 2048 packets at MTU 1024 */

/*
 * N5 of the November review: a duplicate READ forged from the peer's
 * address moved the responder's send cursor back, so that the next real
 * READ found the responder resources (max_dest_rd_atomic 1) all taken,
 * was answered as an invalid request, and the connection was torn down.
 * B READs 2 MiB at PSN 100 (2048 packets, so that a replay of it takes a
 * while); then a duplicate of it and a new 64-byte READ at PSN 2148 are
 * injected back to back from B's address.  B's own READ at 2148 must get
 * its data (A answers it as a duplicate of the injected one), and A's QP
 * stays in RTS.
 */
TEST_F_TIMEOUT(hardening, dup_read_rewind, 120)
{
	const char *peer = getenv("INJECT_PEER");
	uint8_t *a = aligned_alloc(4096, 2 * DUP_LEN);
	uint8_t *b = aligned_alloc(4096, 2 * DUP_LEN);
	struct ibv_mr *ma = a ? ibv_reg_mr(A.pd, a, 2 * DUP_LEN, ACC_ALL) : NULL;
	struct ibv_mr *mb = b ? ibv_reg_mr(B.pd, b, 2 * DUP_LEN, ACC_ALL) : NULL;
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = {};
	unsigned int psn = 100 + DUP_LEN / 1024;
	char args[512];
	int st;

	if (!getenv("INJECT") || !peer)
		SKIP(goto out, "INJECT and INJECT_PEER are not set (tests/rdma/hardening.sh sets them)");
	ASSERT_TRUE(a && b && ma && mb)
		TH_LOG("buffers and MRs (%s)", strerror(errno));
	dest_rd_atomic = 1;
	ASSERT_TRUE(connect_pair(&qa, &qb))
		TH_LOG("a connected QP pair, max_dest_rd_atomic 1 (%s)",
		       strerror(errno));
	fill(a, 2 * DUP_LEN, 5);
	st = read_from_a(qb, mb, ma, 0, DUP_LEN);
	ASSERT_EQ(IBV_WC_SUCCESS, st) TH_LOG("B's READ of 2 MiB at PSN 100");
	snprintf(args, sizeof(args),
		 "reads %s %u 100 %#llx %#x %u %u %#llx %#x 64 >/dev/null",
		 peer, qa->qp_num, (unsigned long long)(uintptr_t)a, ma->rkey,
		 DUP_LEN, psn,
		 (unsigned long long)(uintptr_t)a + DUP_LEN, ma->rkey);
	EXPECT_EQ(0, inject(args)) TH_LOG("inject: %s", args);
	usleep(200 * 1000);
	memset(b, 0, 64);
	st = read_from_a(qb, mb, ma, DUP_LEN, 64);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(b, a + DUP_LEN, 64))
	   TH_LOG("B's own READ at PSN %u gets its data after the forged pair (status %d)",
	   psn, st);
	EXPECT_TRUE(!ibv_query_qp(qa, &attr, IBV_QP_STATE, &init) &&
	   attr.qp_state == IBV_QPS_RTS)
	   TH_LOG("A's QP is still in RTS (state %d)", attr.qp_state);
out:
	dest_rd_atomic = 4;
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}

#define CAP_WRITES	1024	/* one doorbell: four times the SQ budget */
#define CAP_PAIRS	12	/* READs owed at once: past a pass's cap of 8 */
#define CAP_READ	(1u << 20)

/*
 * N9 of the November review: the work done under the engine's lock is
 * capped per pass, not per QP.  A doorbell for 1024 posted WRITEs starts
 * 256 and leaves the rest to the work item (A's sq_deferrals counter
 * moves), and every WRITE lands; 12 QPs owing 1 MiB of READ responses at
 * once are served 8 bursts a pass (A's read_pass_yields moves), and every
 * READ gets its data.
 */
TEST_F_TIMEOUT(hardening, work_caps, 180)
{
	size_t len = CAP_PAIRS * CAP_READ;
	uint8_t *a = aligned_alloc(4096, len), *b = aligned_alloc(4096, len);
	struct ibv_mr *ma = a ? ibv_reg_mr(A.pd, a, len, ACC_ALL) : NULL;
	struct ibv_mr *mb = b ? ibv_reg_mr(B.pd, b, len, ACC_ALL) : NULL;
	struct ibv_qp *qa[CAP_PAIRS] = {}, *qb[CAP_PAIRS] = {}, *wa, *wb;
	static struct ibv_send_wr wr[CAP_WRITES];
	static struct ibv_sge sg[CAP_WRITES];
	long long def0, def1, yl0, yl1;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	int i, ok = 0;

	ASSERT_TRUE(ma && mb) TH_LOG("buffers and MRs (%s)", strerror(errno));
	wa = tu_qp(A.pd, A.cq, IBV_QPT_RC, &(struct ibv_qp_cap){
		   .max_send_wr = CAP_WRITES, .max_recv_wr = 1,
		   .max_send_sge = 1, .max_recv_sge = 1 });
	wb = new_qp(&B);
	ASSERT_TRUE(wa && wb && !to_init(wa) && !to_init(wb) &&
		    !to_rts(&A, wa, &B, wb->qp_num) &&
		    !to_rts(&B, wb, &A, wa->qp_num))
		TH_LOG("a pair with a send queue of %d", CAP_WRITES);
	fill(a, CAP_WRITES * 64, 9);
	memset(b, 0, CAP_WRITES * 64);
	for (i = 0; i < CAP_WRITES; i++) {
		sg[i] = (struct ibv_sge){ (uintptr_t)a + i * 64, 64, ma->lkey };
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &sg[i], .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = i == CAP_WRITES - 1 ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { (uintptr_t)b + i * 64, mb->rkey },
			.next = i == CAP_WRITES - 1 ? NULL : &wr[i + 1],
		};
	}
	def0 = hw_counter(&A, "sq_deferrals");
	EXPECT_TRUE(!ibv_post_send(wa, wr, &bad) && !wait_wc(A.cq, &wc, 60) &&
	   wc.status == IBV_WC_SUCCESS && wc.wr_id == CAP_WRITES - 1 &&
	   !memcmp(a, b, CAP_WRITES * 64))
	   TH_LOG("%d WRITEs posted with one doorbell all land", CAP_WRITES);
	/* the core caches hw_counters for 10 ms: read them anew */
	usleep(50 * 1000);
	def1 = hw_counter(&A, "sq_deferrals");
	EXPECT_TRUE(def0 >= 0 && def1 > def0)
	   TH_LOG("the doorbell left work to the work item: sq_deferrals %lld -> %lld",
	   def0, def1);
	ibv_destroy_qp(wa);
	ibv_destroy_qp(wb);

	for (i = 0; i < CAP_PAIRS; i++)
		if (!connect_pair(&qa[i], &qb[i]))
			break;
	ASSERT_EQ(CAP_PAIRS, i) TH_LOG("%d connected pairs", CAP_PAIRS);
	fill(a, len, 3);
	memset(b, 0, len);
	yl0 = hw_counter(&A, "read_pass_yields");
	for (i = 0; i < CAP_PAIRS; i++) {
		struct ibv_sge rs = { (uintptr_t)b + i * CAP_READ, CAP_READ,
				      mb->lkey };
		struct ibv_send_wr rw = {
			.wr_id = 100 + i, .sg_list = &rs, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)a + i * CAP_READ, ma->rkey },
		};

		if (ibv_post_send(qb[i], &rw, &bad))
			break;
	}
	for (int n = 0; n < i; n++)
		ok += !wait_wc(B.cq, &wc, 60) && wc.status == IBV_WC_SUCCESS;
	usleep(50 * 1000);
	yl1 = hw_counter(&A, "read_pass_yields");
	EXPECT_TRUE(ok == CAP_PAIRS && !memcmp(a, b, len))
	   TH_LOG("%d READs of 1 MiB on %d QPs at once all get their data (%d did)",
	   CAP_PAIRS, CAP_PAIRS, ok);
	EXPECT_TRUE(yl0 >= 0 && yl1 > yl0)
	   TH_LOG("passes stopped at their cap of READ bursts: read_pass_yields %lld -> %lld",
	   yl0, yl1);
	release(qa, CAP_PAIRS, NULL, NULL, NULL, NULL);
	release(qb, CAP_PAIRS, ma, mb, a, b);
}

/* The index of GID @addr (text) on port 1 of @ctx, or -1. */
static int gid_index_of(struct ibv_context *ctx, const char *addr)
{
	union ibv_gid want, g;
	int i;

	if (inet_pton(AF_INET6, addr, &want) != 1)
		return -1;
	for (i = 0; i < 16; i++)
		if (!ibv_query_gid(ctx, 1, i, &g) && !memcmp(&g, &want, 16))
			return i;
	return -1;
}

/*
 * N5 of the November review: a QP's source GID removed (its address
 * deleted: the entry becomes type 0, all zeros) still matched IPv6
 * packets addressed to "::".  A pair is connected over the IPv6 GIDs, a
 * SEND from B's address to A's is taken (the control), A's address is
 * deleted, and a SEND from B's address to :: must be dropped.  Needs
 * $INJECT_PEER6 ("IFACE DMAC B_ADDR A_ADDR") and $V6_DEL_A / $V6_ADD_A
 * (commands that delete and restore A's address), from hardening.sh.
 */
TEST_F_TIMEOUT(hardening, gid_removed, 120)
{
	const char *peer6 = getenv("INJECT_PEER6"), *del = getenv("V6_DEL_A");
	const char *add = getenv("V6_ADD_A");
	char ifc[64], mac[32], baddr[64], aaddr[64], args[512];
	struct tu_side a6 = {}, b6 = {};
	uint8_t *a = aligned_alloc(4096, 4096);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_mr *ma = NULL;
	struct ibv_wc wc;
	union ibv_gid g;
	int ia, ib, got, i;

	if (!getenv("INJECT") || !peer6 || !del || !add ||
	    sscanf(peer6, "%63s %31s %63s %63s", ifc, mac, baddr, aaddr) != 4)
		SKIP(free(a); return, "INJECT, INJECT_PEER6, V6_DEL_A and V6_ADD_A are not set (tests/rdma/hardening.sh sets them)");
	ASSERT_EQ(0, open_side(&a6, dev_a_name, 0));
	ASSERT_EQ(0, open_side(&b6, dev_b_name, 0));
	ia = gid_index_of(a6.ctx, aaddr);
	ib = gid_index_of(b6.ctx, baddr);
	ASSERT_TRUE(ia >= 0 && ib >= 0)
		TH_LOG("GIDs of %s and %s (%d, %d)", aaddr, baddr, ia, ib);
	ibv_query_gid(a6.ctx, 1, ia, &a6.gid);
	ibv_query_gid(b6.ctx, 1, ib, &b6.gid);
	a6.gid_index = ia;
	b6.gid_index = ib;
	ma = ibv_reg_mr(a6.pd, a, 4096, ACC_ALL);
	qa = new_qp(&a6);
	qb = new_qp(&b6);
	ASSERT_TRUE(a && ma && qa && qb && !to_init(qa) && !to_init(qb) &&
		    !to_rts(&a6, qa, &b6, qb->qp_num) &&
		    !to_rts(&b6, qb, &a6, qa->qp_num))
		TH_LOG("a pair over the IPv6 GIDs %d and %d (%s)", ia, ib,
		       strerror(errno));
	ASSERT_EQ(0, post_recv8(qa, ma, a, 600));
	ASSERT_EQ(0, post_recv8(qa, ma, a, 601));
	snprintf(args, sizeof(args), "send %s %s %s %s %u 100 >/dev/null",
		 ifc, mac, baddr, aaddr, qa->qp_num);
	inject(args);
	got = !wait_wc(a6.cq, &wc, 5);
	EXPECT_TRUE(got && wc.wr_id == 600)
		TH_LOG("the control: a SEND from %s to %s is taken", baddr, aaddr);
	fflush(stdout);
	EXPECT_EQ(0, system(del)) TH_LOG("delete %s: %s", aaddr, del);
	/* the RDMA core removes the GID from its work queue */
	for (i = 0; i < 100; i++) {
		if (!ibv_query_gid(a6.ctx, 1, ia, &g) &&
		    !memcmp(&g, (uint8_t[16]){0}, 16))
			break;
		usleep(50 * 1000);
	}
	EXPECT_LT(i, 100) TH_LOG("GID %d of %s goes with the address", ia,
				 dev_a_name);
	snprintf(args, sizeof(args), "send %s %s %s :: %u 101 >/dev/null",
		 ifc, mac, baddr, qa->qp_num);
	inject(args);
	got = !wait_wc(a6.cq, &wc, 2);
	EXPECT_FALSE(got)
		TH_LOG("a SEND from %s to :: is dropped once the QP's GID is removed (%s)",
		       baddr, got ? "it completed a receive" : "no receive");
	fflush(stdout);
	EXPECT_EQ(0, system(add)) TH_LOG("restore %s: %s", aaddr, add);
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(ma);
	free(a);
	for (struct tu_side *t = &a6; t; t = t == &a6 ? &b6 : NULL) {
		ibv_destroy_cq(t->cq);
		ibv_dealloc_pd(t->pd);
		ibv_close_device(t->ctx);
	}
}

/*
 * Frames from the wire that are not the connection's.  A SEND Only with
 * a valid ICRC, the QP's number and its expected PSN, sent from an
 * address that is not the QP's peer, must not reach the QP; the same
 * frame from the peer's address does (the control that shows the frame
 * was good).  Then FUZZ_SECS seconds of malformed frames from the peer's
 * address at the QP and its neighbours (tests/rdma/roce_inject.py fuzz);
 * afterwards new QPs on both devices still carry a WRITE each way.
 * $INJECT is the injector command; $INJECT_FOREIGN, $INJECT_PEER and
 * $INJECT_PEER6 (optional: the fuzzer again over IPv6) are its "IFACE
 * DMAC SRC_IP DST_IP" arguments.
 */
TEST_F_TIMEOUT(hardening, wire, 120)
{
	const char *foreign = getenv("INJECT_FOREIGN");
	const char *peer = getenv("INJECT_PEER");
	const char *secs = getenv("FUZZ_SECS");
	const char *peer6 = getenv("INJECT_PEER6");
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_wc wc = {};
	char args[512];
	int got;

	if (!getenv("INJECT") || !foreign || !peer || !secs)
		SKIP(goto out, "frames from the wire: INJECT, INJECT_FOREIGN, INJECT_PEER and FUZZ_SECS are not set (tests/rdma/hardening.sh sets them)");
	ASSERT_TRUE(a && b && ma && mb)
		TH_LOG("wire: buffers and MRs (%s)", strerror(errno));
	ASSERT_TRUE(connect_pair(&qa, &qb))
		TH_LOG("wire: a connected QP pair (%s)", strerror(errno));
	ASSERT_EQ(0, post_recv8(qa, ma, a, 500)) TH_LOG("wire: post a receive");
	memset(a, 0, 64);
	/* "send" DQPN PSN: A's QP expects PSN 100 (to_rts()) */
	snprintf(args, sizeof(args), "send %s %u 100 >/dev/null", foreign,
		 qa->qp_num);
	inject(args);
	got = !wait_wc(A.cq, &wc, 1);
	EXPECT_TRUE(!got && !memcmp(a, (uint8_t[8]){0}, 8))
	   TH_LOG("a SEND from an address that is not the QP's peer is dropped (%s)",
	   got ? "it completed a receive" : "no receive completion");
	snprintf(args, sizeof(args), "send %s %u 100 >/dev/null", peer,
		 qa->qp_num);
	inject(args);
	got = !wait_wc(A.cq, &wc, 5);
	EXPECT_TRUE(got && wc.wr_id == 500 && wc.status == IBV_WC_SUCCESS &&
	   !memcmp(a, "injected", 8))
	   TH_LOG("the same SEND from the peer's address is delivered (control: %s)",
	   got ? ibv_wc_status_str(wc.status) : "no completion");

	snprintf(args, sizeof(args), "fuzz %s %u %s 1 | sed 's/^/# /'", peer,
		 qa->qp_num, secs);
	EXPECT_TRUE(inject(args) == 0) TH_LOG("the frame fuzzer ran for %s s over IPv4", secs);
	if (peer6) {
		snprintf(args, sizeof(args), "fuzz %s %u %s 2 | sed 's/^/# /'",
			 peer6, qa->qp_num, secs);
		EXPECT_TRUE(inject(args) == 0) TH_LOG("the frame fuzzer ran for %s s over IPv6",
		   secs);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	qa = qb = NULL;
	while (ibv_poll_cq(A.cq, 1, &wc) > 0 || ibv_poll_cq(B.cq, 1, &wc) > 0)
		;
	EXPECT_TRUE(connect_pair(&qa, &qb) && write_ok(&A, qa, ma, mb, 5) &&
	   write_ok(&B, qb, mb, ma, 9))
	   TH_LOG("after the fuzzer, new QPs carry a WRITE each way");
out:
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}

/* An async event of @qp within @secs, acknowledged: its type, or -1. */
static int qp_event(struct ibv_context *ctx, struct ibv_qp *qp, double secs)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	double end = tu_now() + secs;
	struct ibv_async_event ev;
	int type, left;

	while ((left = (int)((end - tu_now()) * 1e3)) >= 0) {
		if (poll(&p, 1, left) != 1 || ibv_get_async_event(ctx, &ev))
			return -1;
		type = ev.event_type;
		ibv_ack_async_event(&ev);
		if (ev.element.qp == qp)
			return type;
	}
	return -1;
}

/*
 * The producer index moved backwards (N1 of the November review).  A
 * WRITE waits for its ACK (B's QP is still in INIT) and a type 1 bind
 * behind it has run: the engine has started both.  The process then
 * writes that bind into every slot of its send ring, moves the producer
 * index back to 1, behind the bind, and rings the doorbell.  An engine
 * that trusted the index ran binds round and round the ring (they take
 * no packets, so no window stops them) until its 32-bit counter wrapped,
 * in one doorbell with the device's lock held and BHs off: a soft lockup
 * of the whole device.  A lying producer is a fatal QP error: the
 * doorbell returns at once, the QP is in ERR with IBV_EVENT_QP_FATAL,
 * both started WQEs complete with a flush error (from the engine's
 * copies, so with their own wr_ids), and new QPs on the device work.
 */
TEST_F_TIMEOUT(hardening, prod_backwards, 120)
{
	uint8_t *a = aligned_alloc(4096, 8192), *b = aligned_alloc(4096, 8192);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 8192,
				       ACC_ALL | IBV_ACCESS_MW_BIND);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 8192, ACC_ALL);
	struct ibv_qp *qa = new_qp(&A), *qb = new_qp(&B), *qa2 = NULL, *qb2 = NULL;
	struct ibv_mw *mw = ibv_alloc_mw(A.pd, IBV_MW_TYPE_1);
	struct ibv_sge sg = { (uintptr_t)a, LEN, ma ? ma->lkey : 0 };
	struct ibv_send_wr wr = {
		.wr_id = WR_ID + 0x60, .sg_list = &sg, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)b,
			     .rkey = mb ? mb->rkey : 0 },
	}, *bad;
	struct ibv_mw_bind bind = {
		.wr_id = WR_ID + 0x61, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = ma, .addr = (uintptr_t)a, .length = 4096,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr = {};
	struct ibv_wc wc[2] = {};
	uintptr_t map[2], off;
	uint32_t *prod;
	struct gaudi_wqe *w;
	double took;
	int ret, n;

	ASSERT_TRUE(a && b && ma && mb && qa && qb && mw)
		TH_LOG("buffers, MRs, QPs and a type 1 window (%s)", strerror(errno));
	ASSERT_TRUE(!to_init(qa) && !to_init(qb) &&
		    !to_rts(&A, qa, &B, qb->qp_num))
		TH_LOG("A's QP to RTS, B's to INIT");
	ASSERT_EQ(0, ibv_post_send(qa, &wr, &bad)) TH_LOG("post the WRITE");
	ASSERT_EQ(0, ibv_bind_mw(qa, mw, &bind)) TH_LOG("bind the window behind it");
	usleep(20000);
	ASSERT_EQ(0, ibv_poll_cq(A.cq, 1, wc))
		TH_LOG("nothing completes while the WRITE waits for B");
	w = ring_find_wqe(bind.wr_id, GAUDI_WQE_BIND_MW, map);
	ASSERT_NE(NULL, w) TH_LOG("the bind's WQE is in the mmap'd ring");
	prod = (uint32_t *)map[0];
	ASSERT_EQ(2, __atomic_load_n(prod, __ATOMIC_ACQUIRE))
		TH_LOG("the producer index is 2, past the WRITE and the bind");
	for (off = map[0] + GAUDI_RING_HDR_SIZE; off + GAUDI_WQE_SIZE <= map[1];
	     off += GAUDI_WQE_SIZE)
		if ((struct gaudi_wqe *)off != w)
			memcpy((void *)off, w, sizeof(*w));
	__atomic_store_n(prod, 1, __ATOMIC_RELEASE);
	took = tu_now();
	ret = tu_raw_doorbell(qa, NULL);
	took = tu_now() - took;
	EXPECT_TRUE(!ret && took < 10)
		TH_LOG("the doorbell returns (%s, after %.1f s)", strerror(ret), took);
	for (n = 0; n < 2 && tu_poll(A.cq, &wc[n], 10) == 1; n++)
		;
	EXPECT_TRUE(n == 2 && wc[0].wr_id == wr.wr_id && wc[1].wr_id == bind.wr_id &&
		    wc[0].status == IBV_WC_WR_FLUSH_ERR &&
		    wc[1].status == IBV_WC_WR_FLUSH_ERR)
		TH_LOG("the WRITE and the bind complete in order with a flush error (%d completions: %s, %s)",
		       n, n > 0 ? ibv_wc_status_str(wc[0].status) : "-",
		       n > 1 ? ibv_wc_status_str(wc[1].status) : "-");
	EXPECT_EQ(0, ibv_poll_cq(A.cq, 1, wc))
		TH_LOG("nothing else completes: the binds written behind the index never ran");
	EXPECT_TRUE(!ibv_query_qp(qa, &attr, IBV_QP_STATE, &init) &&
		    attr.qp_state == IBV_QPS_ERR)
		TH_LOG("A's QP is in ERR (state %d)", attr.qp_state);
	EXPECT_EQ(IBV_EVENT_QP_FATAL, qp_event(A.ctx, qa, 5))
		TH_LOG("A's QP gets IBV_EVENT_QP_FATAL");
	EXPECT_TRUE(connect_pair(&qa2, &qb2) && write_ok(&A, qa2, ma, mb, 7))
		TH_LOG("afterwards a new QP pair carries a WRITE");
	ibv_dealloc_mw(mw);
	release((struct ibv_qp *[]){ qa, qb, qa2, qb2 }, 4, ma, mb, a, b);
}

/*
 * A CQ's producer index is in the mmap'd ring, so the process can move it
 * anywhere.  One more than a ring's worth ahead of the library's consumer
 * index cannot be the engine's: ibv_poll_cq() must say the CQ is broken
 * (-EIO, at once) rather than read round the ring (verbs_fuzz's seed
 * 1795831606 spun there for good).  An index moved by less is taken: the
 * entries it covers are the process's own memory.
 */
TEST_F_TIMEOUT(hardening, cq_prod_lie, 120)
{
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL;
	struct ibv_wc wc[4];
	uintptr_t map[2];
	uint32_t *prod, slots;
	double took;
	int ret;

	ASSERT_TRUE(a && b && ma && mb && connect_pair(&qa, &qb))
		TH_LOG("buffers, MRs and a connected pair (%s)", strerror(errno));
	ASSERT_TRUE(write_ok(&A, qa, ma, mb, 3)) TH_LOG("a WRITE completes");
	ASSERT_EQ(0, ring_find_cqe(77, qa->qp_num, map))
		TH_LOG("its completion is in the mmap'd CQ ring");
	prod = (uint32_t *)map[0];
	slots = (map[1] - map[0] - GAUDI_RING_HDR_SIZE) / GAUDI_CQE_SIZE;
	ASSERT_EQ(1, __atomic_load_n(prod, __ATOMIC_ACQUIRE));
	__atomic_store_n(prod, 1 + slots + 1, __ATOMIC_RELEASE);
	took = tu_now();
	ret = ibv_poll_cq(A.cq, 4, wc);
	took = tu_now() - took;
	EXPECT_TRUE(ret == -EIO && took < 1)
		TH_LOG("a producer index %u slots ahead: poll_cq %d (-EIO wanted) after %.3f s",
		       slots + 1, ret, took);
	EXPECT_EQ(-EIO, ibv_poll_cq(A.cq, 1, wc)) TH_LOG("and again");
	__atomic_store_n(prod, 1, __ATOMIC_RELEASE);
	EXPECT_EQ(0, ibv_poll_cq(A.cq, 1, wc))
		TH_LOG("the index put back, the CQ is empty again");
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * "lat ... N": the latency of an 8-byte RDMA WRITE the way ib_write_lat
 * measures it (A writes B's buffer, B sees it and writes back, half the
 * round trip), with clock_gettime() instead of perftest's cycle counter,
 * whose calibration fails on a loaded TCG guest.  Prints the median and
 * the spread over N round trips, in microseconds.
 */
static int bench_lat(int n)
{
	uint8_t *a = aligned_alloc(4096, 4096), *b = aligned_alloc(4096, 4096);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, 4096, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, 4096, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL;
	double *t = calloc(n, sizeof(*t));
	int i, ret = 1;

	if (!a || !b || !ma || !mb || !t || !connect_pair(&qa, &qb))
		goto out;
	memset(a, 0, 4096);
	memset(b, 0, 4096);
	for (i = 0; i < n; i++) {
		volatile uint32_t *ra = (uint32_t *)a, *rb = (uint32_t *)b;
		uint32_t seq = i + 1;
		struct ibv_sge sa = { (uintptr_t)a + 64, 8, ma->lkey };
		struct ibv_sge sb = { (uintptr_t)b + 64, 8, mb->lkey };
		struct ibv_send_wr wa = {
			.sg_list = &sa, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = (i % 64 == 63) ? IBV_SEND_SIGNALED : 0,
			.wr.rdma = { (uintptr_t)b, mb->rkey },
		}, wb = wa, *bad;
		struct ibv_wc wc;
		double t0;

		wb.sg_list = &sb;
		wb.wr.rdma.remote_addr = (uintptr_t)a;
		wb.wr.rdma.rkey = ma->rkey;
		memcpy(a + 64, &seq, 4);
		memcpy(b + 64, &seq, 4);
		t0 = tu_now();
		if (ibv_post_send(qa, &wa, &bad))
			goto out;
		while (*rb != seq)
			if (tu_now() - t0 > 10)
				goto out;
		if (ibv_post_send(qb, &wb, &bad))
			goto out;
		while (*ra != seq)
			if (tu_now() - t0 > 10)
				goto out;
		t[i] = (tu_now() - t0) / 2 * 1e6;
		if (wa.send_flags) {
			ibv_poll_cq(A.cq, 1, &wc);
			ibv_poll_cq(B.cq, 1, &wc);
		}
	}
	qsort(t, n, sizeof(*t), cmp_double);
	printf("lat_us median %.2f p10 %.2f p90 %.2f max %.2f n %d\n",
	       t[n / 2], t[n / 10], t[n * 9 / 10], t[n - 1], n);
	ret = 0;
out:
	if (ret)
		printf("lat: failed (%s)\n", strerror(errno));
	free(t);
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
	return ret;
}

/*
 * "readload ... SECS": B reads 256 MiB from A at MTU 256 (1 Mi responses
 * per READ), one READ after another, for SECS seconds; prints how many.
 */
static int bench_readload(int secs)
{
	size_t len = 256 << 20;
	uint8_t *a = aligned_alloc(4096, len), *b = aligned_alloc(4096, len);
	struct ibv_mr *ma = ibv_reg_mr(A.pd, a, len, ACC_ALL);
	struct ibv_mr *mb = ibv_reg_mr(B.pd, b, len, ACC_ALL);
	struct ibv_qp *qa = NULL, *qb = NULL;
	double end = tu_now() + secs, t0 = tu_now();
	int reads = 0, ret = 1;

	path_mtu = IBV_MTU_256;
	if (!a || !b || !ma || !mb || !connect_pair(&qa, &qb))
		goto out;
	memset(a, 1, len);
	printf("readload: connected, reading\n");
	fflush(stdout);
	while (tu_now() < end) {
		struct ibv_sge sg = { (uintptr_t)b, len, mb->lkey };
		struct ibv_send_wr wr = {
			.sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)a, ma->rkey },
		}, *bad;
		struct ibv_wc wc;

		if (ibv_post_send(qb, &wr, &bad) || wait_wc(B.cq, &wc, 120) ||
		    wc.status != IBV_WC_SUCCESS)
			goto out;
		reads++;
	}
	ret = 0;
out:
	printf("readload: %d READs of 256 MiB in %.1f s%s\n", reads,
	       tu_now() - t0, ret ? " (failed)" : "");
	release((struct ibv_qp *[]){ qa, qb }, 2, ma, mb, a, b);
	return ret;
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc == 7 && (!strcmp(argv[1], "lat") ||
			  !strcmp(argv[1], "readload"))) {
		if (open_side(&A, argv[2], atoi(argv[3])) ||
		    open_side(&B, argv[4], atoi(argv[5])))
			return 1;
		return argv[1][0] == 'l' ? bench_lat(atoi(argv[6])) :
		       bench_readload(atoi(argv[6]));
	}
	if (pair_args(argc, argv)) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n"
			"       %s lat|readload DEV_A GID_A DEV_B GID_B N|SECS\n",
			argv[0], argv[0]);
		return 2;
	}
	return test_harness_run(1, run);
}
