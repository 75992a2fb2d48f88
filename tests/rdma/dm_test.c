// SPDX-License-Identifier: GPL-2.0
/*
 * dm_test - device memory (ibv_alloc_dm(), ibv_reg_dm_mr()) on gaudi_ib:
 * HBM of device A, reached by the CPU through ibv_memcpy_to/from_dm() and
 * by RDMA through zero-based DM MRs, with device B as the peer.  Checked:
 * the reported max_dm_size and the refusal of a bad size, alignment or
 * comp_mask; copies in 32-bit words, refused unaligned (EINVAL) or out of
 * range (EFAULT, offset overflow included); a new DM reads zeroes even
 * when it gets the HBM frames an earlier one wrote; DMs draw on the
 * device's HBM until it is full (ENOMEM), and a freed one gives its room
 * back; DM MRs refuse atomic access (EOPNOTSUPP) and ranges past the DM,
 * and hold their DM (free is EBUSY); a peer's RDMA WRITE and READ on a DM
 * MR at an offset into the DM, an out-of-range WRITE refused with the DM
 * untouched, the DM as the source of A's own WRITE; ibv_import_dm() in
 * a second context on the same file sees the same memory.
 * A kselftest: one test per area, each in its own process with both
 * devices opened anew; output KTAP.
 *
 * usage: dm_test DEV_A GID_A DEV_B GID_B
 *        dm_test --hold DEV
 * --hold keeps a DM, mapped and written, and a DM MR on it while verbs.sh
 * deletes DEV (plain TAP); on EOF on stdin it reads the old mapping and
 * frees both, which must not fail or crash.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "testutil.h"

#define LEN		8192
#define DM_ACC		(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

static struct tu_side A, B;
static struct ibv_qp *qa, *qb;
static uint8_t *bbuf;
static struct ibv_mr *bmr;
static uint64_t max_dm;

/* from the command line */
static const char *dev_a, *dev_b;
static int gid_a, gid_b;

static struct ibv_dm *dm_new(uint64_t len)
{
	struct ibv_alloc_dm_attr at = { .length = len };

	return ibv_alloc_dm(A.ctx, &at);
}

/* A connected RC pair qa (A) <-> qb (B). */
static int connect_pair(void)
{
	struct ibv_qp_cap cap = { .max_send_wr = 16, .max_recv_wr = 16,
				  .max_send_sge = 1, .max_recv_sge = 1 };
	struct tu_path p = TU_PATH_DEFAULT;

	qa = tu_qp(A.pd, A.cq, IBV_QPT_RC, &cap);
	qb = tu_qp(B.pd, B.cq, IBV_QPT_RC, &cap);
	if (!qa || !qb)
		return -1;
	return tu_qp_connect(qa, &A, &B, qb->qp_num, TU_ACC_ALL, &p) ||
	       tu_qp_connect(qb, &B, &A, qa->qp_num, TU_ACC_ALL, &p);
}

/*
 * Post one signaled RDMA @op on @qp from (@laddr, @lkey) to (@raddr,
 * @rkey), @len bytes; the completion's status, or -1 if none came.
 */
static int rdma_op(struct tu_side *s, struct ibv_qp *qp,
		   enum ibv_wr_opcode op, uint64_t laddr, uint32_t lkey,
		   uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { laddr, len, lkey };
	struct ibv_send_wr wr = {
		.wr_id = 1, .sg_list = &sg, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(qp, &wr, &bad))
		return -1;
	return tu_poll(s->cq, &wc, 10) == 1 ? (int)wc.status : -1;
}

static bool all_eq(const uint8_t *p, size_t n, uint8_t v)
{
	while (n--)
		if (*p++ != v)
			return false;
	return true;
}

FIXTURE(dm) {};

FIXTURE_SETUP(dm)
{
	struct ibv_device_attr_ex ax = {};

	bbuf = aligned_alloc(4096, LEN);
	ASSERT_NE(NULL, bbuf);
	ASSERT_EQ(0, tu_open(&A, dev_a, gid_a, 64))
		TH_LOG("open %s (GID index %d): %s", dev_a, gid_a, strerror(errno));
	ASSERT_EQ(0, tu_open(&B, dev_b, gid_b, 64))
		TH_LOG("open %s (GID index %d): %s", dev_b, gid_b, strerror(errno));
	bmr = ibv_reg_mr(B.pd, bbuf, LEN, TU_ACC_ALL);
	ASSERT_NE(NULL, bmr) TH_LOG("register B's buffer: %s", strerror(errno));
	for (int i = 0; i < LEN; i++)
		bbuf[i] = (uint8_t)(i * 13 + 1);
	ASSERT_EQ(0, ibv_query_device_ex(A.ctx, NULL, &ax));
	max_dm = ax.max_dm_size;
	ASSERT_GE(max_dm, 65536) TH_LOG("max_dm_size %llu",
					(unsigned long long)max_dm);
}

FIXTURE_TEARDOWN(dm)
{
	if (qa)
		ibv_destroy_qp(qa);
	if (qb)
		ibv_destroy_qp(qb);
}

TEST_F(dm, alloc_limits)
{
	struct ibv_alloc_dm_attr at = { .length = 4096 };
	struct ibv_dm *dm;

	errno = 0;
	EXPECT_EQ(NULL, dm_new(0)) TH_LOG("a DM of 0 bytes is refused");
	errno = 0;
	EXPECT_EQ(NULL, dm_new(max_dm + 1));
	EXPECT_EQ(EINVAL, errno) TH_LOG("max_dm_size + 1 bytes: EINVAL");
	at.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_dm(A.ctx, &at));
	EXPECT_EQ(EINVAL, errno) TH_LOG("an unknown comp_mask: EINVAL");
	at.comp_mask = 0;
	at.log_align_req = 13;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_dm(A.ctx, &at));
	EXPECT_EQ(EINVAL, errno) TH_LOG("alignment past a page: EINVAL");
	at.log_align_req = 12;
	dm = ibv_alloc_dm(A.ctx, &at);
	EXPECT_NE(NULL, dm) TH_LOG("page alignment: %s", strerror(errno));
	if (dm)
		EXPECT_EQ(0, ibv_free_dm(dm));
	dm = dm_new(max_dm);
	EXPECT_NE(NULL, dm) TH_LOG("max_dm_size bytes: %s", strerror(errno));
	if (dm)
		EXPECT_EQ(0, ibv_free_dm(dm));
}

TEST_F(dm, copy)
{
	const size_t len = 65536 + 100;
	uint8_t *in = malloc(len), *out = malloc(len);
	struct ibv_dm *dm = dm_new(len);

	ASSERT_TRUE(in && out);
	ASSERT_NE(NULL, dm) TH_LOG("alloc %zu bytes: %s", len, strerror(errno));
	EXPECT_EQ(0, ibv_memcpy_from_dm(out, dm, 0, len));
	EXPECT_TRUE(all_eq(out, len, 0)) TH_LOG("a new DM reads zeroes");
	for (size_t i = 0; i < len; i++)
		in[i] = (uint8_t)(i * 7 + 3);
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 0, in, len));
	memset(out, 0, len);
	EXPECT_EQ(0, ibv_memcpy_from_dm(out, dm, 0, len));
	EXPECT_EQ(0, memcmp(in, out, len)) TH_LOG("what was written reads back");
	EXPECT_EQ(0, ibv_memcpy_from_dm(out, dm, 4096 + 4, 8));
	EXPECT_EQ(0, memcmp(in + 4096 + 4, out, 8)) TH_LOG("a read at an offset");

	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(dm, 1, in, 4));
	EXPECT_EQ(EINVAL, ibv_memcpy_to_dm(dm, 4, in, 3));
	EXPECT_EQ(EINVAL, ibv_memcpy_from_dm(out, dm, 2, 4));
	EXPECT_EQ(EFAULT, ibv_memcpy_to_dm(dm, len - 4, in, 8));
	EXPECT_EQ(EFAULT, ibv_memcpy_from_dm(out, dm, len + 4, 4));
	EXPECT_EQ(EFAULT, ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 8))
		TH_LOG("an offset that wraps is out of range");
	EXPECT_EQ(0, ibv_free_dm(dm));

	/* the first-fit allocator hands the same frames out again */
	dm = dm_new(len);
	ASSERT_NE(NULL, dm);
	EXPECT_EQ(0, ibv_memcpy_from_dm(out, dm, 0, len));
	EXPECT_TRUE(all_eq(out, len, 0))
		TH_LOG("a DM after a freed one reads zeroes, not its data");
	EXPECT_EQ(0, ibv_free_dm(dm));
	free(in);
	free(out);
}

/* DMs come out of the HBM: the device fills up, and a free gives room. */
TEST_F(dm, hbm_full)
{
	struct ibv_dm *dms[256];
	int n = 0;

	errno = 0;
	while (n < 256 && (dms[n] = dm_new(max_dm)))
		n++;
	EXPECT_LT(n, 256) TH_LOG("%d DMs of %llu bytes: the HBM never filled",
				 n, (unsigned long long)max_dm);
	EXPECT_TRUE(errno == ENOMEM || errno == EDQUOT)
		TH_LOG("the DM that did not fit: %s", strerror(errno));
	EXPECT_GE(n, 1);
	if (n) {
		EXPECT_EQ(0, ibv_free_dm(dms[--n]));
		dms[n] = dm_new(max_dm);
		EXPECT_NE(NULL, dms[n]) TH_LOG("the room of a freed DM: %s",
					       strerror(errno));
		if (dms[n])
			n++;
	}
	while (n)
		EXPECT_EQ(0, ibv_free_dm(dms[--n]));
}

TEST_F(dm, register)
{
	struct ibv_dm *dm = dm_new(LEN);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(A.pd, dm, 0, LEN,
				      DM_ACC | IBV_ACCESS_REMOTE_ATOMIC));
	EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("atomic access: %s",
					    strerror(errno));
	EXPECT_EQ(NULL, ibv_reg_dm_mr(A.pd, dm, 0, LEN + 4, DM_ACC))
		TH_LOG("an MR longer than the DM is refused");
	EXPECT_EQ(NULL, ibv_reg_dm_mr(A.pd, dm, 4096, LEN - 4092, DM_ACC))
		TH_LOG("an MR past the DM's end is refused");
	EXPECT_EQ(NULL, ibv_reg_dm_mr(A.pd, dm, 0, LEN,
				      DM_ACC & ~IBV_ACCESS_ZERO_BASED))
		TH_LOG("a DM MR is zero-based");
	mr = ibv_reg_dm_mr(A.pd, dm, 0, 0, DM_ACC);
	EXPECT_NE(NULL, mr) TH_LOG("an MR of 0 bytes: %s", strerror(errno));
	if (mr)
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(A.pd, dm, LEN, 0, DM_ACC);
	EXPECT_NE(NULL, mr) TH_LOG("an MR of 0 bytes at the DM's end: %s",
				   strerror(errno));
	if (mr)
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(A.pd, dm, 8, LEN - 8, DM_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("reg_dm_mr: %s", strerror(errno));
	EXPECT_EQ(NULL, mr->addr);
	EXPECT_EQ(LEN - 8, mr->length);
	EXPECT_EQ(EBUSY, ibv_free_dm(dm)) TH_LOG("the MR holds its DM");
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * B writes into and reads from a DM MR that starts 4096 + 8 bytes into
 * the DM; A writes from the DM into B.
 */
TEST_F(dm, rdma)
{
	const uint32_t off = 4096 + 8, mlen = 12288;
	uint8_t *out = malloc(LEN * 3);
	struct ibv_dm *dm = dm_new(3 * LEN);
	struct ibv_mr *mr;

	ASSERT_NE(NULL, out);
	ASSERT_NE(NULL, dm);
	mr = ibv_reg_dm_mr(A.pd, dm, off, mlen, DM_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("reg_dm_mr: %s", strerror(errno));
	ASSERT_EQ(0, connect_pair());

	/* WRITE 6000 bytes at 100 into the MR: DM bytes off + 100 .. */
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&B, qb, IBV_WR_RDMA_WRITE, (uintptr_t)bbuf,
			  bmr->lkey, 6000, 100, mr->rkey));
	EXPECT_EQ(0, ibv_memcpy_from_dm(out, dm, 0, 3 * LEN));
	EXPECT_TRUE(all_eq(out, off + 100, 0))
		TH_LOG("nothing before the target was written");
	EXPECT_EQ(0, memcmp(out + off + 100, bbuf, 6000))
		TH_LOG("the WRITE landed at the MR's offset into the DM");
	EXPECT_TRUE(all_eq(out + off + 6100, 3 * LEN - off - 6100, 0))
		TH_LOG("nothing after it was written");

	/* READ it back into B */
	memset(bbuf + 6000, 0, 2000);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&B, qb, IBV_WR_RDMA_READ, (uintptr_t)bbuf + 6000,
			  bmr->lkey, 2000, 100, mr->rkey));
	EXPECT_EQ(0, memcmp(bbuf + 6000, bbuf, 2000)) TH_LOG("READ of the DM");

	/* A WRITEs 4000 bytes from the DM MR (lkey, address 100) into B */
	memset(bbuf + 4096, 0, 4000);
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_op(&A, qa, IBV_WR_RDMA_WRITE, 100, mr->lkey, 4000,
			  (uintptr_t)bbuf + 4096, bmr->rkey));
	EXPECT_EQ(0, memcmp(bbuf + 4096, out + off + 100, 4000))
		TH_LOG("the DM as the source of a WRITE");

	/* past the MR: a remote access error, the DM untouched */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_op(&B, qb, IBV_WR_RDMA_WRITE, (uintptr_t)bbuf,
			  bmr->lkey, 64, mlen - 32, mr->rkey));
	memset(out + LEN * 2, 0xee, LEN);
	EXPECT_EQ(0, ibv_memcpy_from_dm(out + 2 * LEN, dm, off + mlen - 32, 64));
	EXPECT_TRUE(all_eq(out + 2 * LEN, 64, 0))
		TH_LOG("an out-of-range WRITE left the DM as it was");

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(dm));
	free(out);
}

/* ibv_import_dm(): a second context on the same file sees the DM. */
TEST_F(dm, import)
{
	struct ibv_context *ctx2;
	struct ibv_dm *dm = dm_new(LEN), *dm2;
	uint32_t w = 0x5a5aa5a5, r = 0;
	int fd;

	ASSERT_NE(NULL, dm);
	fd = dup(A.ctx->cmd_fd);
	ASSERT_GE(fd, 0);
	ctx2 = ibv_import_device(fd);
	ASSERT_NE(NULL, ctx2) TH_LOG("import_device: %s", strerror(errno));
	dm2 = ibv_import_dm(ctx2, dm->handle);
	ASSERT_NE(NULL, dm2) TH_LOG("import_dm: %s", strerror(errno));
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 4096, &w, 4));
	EXPECT_EQ(0, ibv_memcpy_from_dm(&r, dm2, 4096, 4));
	EXPECT_EQ(w, r) TH_LOG("the imported DM reads what the first wrote");
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_dm(ctx2, dm->handle + 1000))
		TH_LOG("a handle that is no DM");
	ibv_unimport_dm(dm2);
	EXPECT_EQ(0, ibv_free_dm(dm));
	ibv_close_device(ctx2);
}

static int hold(const char *dev)
{
	uint32_t w = 0xa5a5a5a5, r = 0;
	struct ibv_dm *dm = NULL;
	struct ibv_mr *mr = NULL;
	int r1, r2;
	char buf[64];

	printf("TAP version 13\n");
	A.ctx = open_device_by_name(dev);
	A.pd = A.ctx ? ibv_alloc_pd(A.ctx) : NULL;
	if (A.pd)
		dm = dm_new(1 << 20);
	if (dm && !ibv_memcpy_to_dm(dm, 65536, &w, 4))
		mr = ibv_reg_dm_mr(A.pd, dm, 0, 1 << 20, DM_ACC);
	tap_ok(mr != NULL, "a DM of 1 MiB, written, and a DM MR on it held on %s",
	       dev);
	printf("ready\n");
	fflush(stdout);
	while (fgets(buf, sizeof(buf), stdin))
		;
	if (!mr) {
		printf("1..%d\n", tap_n);
		return 1;
	}
	/* the pages stay mapped; the device is gone, so any value will do */
	r1 = ibv_memcpy_from_dm(&r, dm, 65536, 4);
	tap_ok(r1 == 0, "after the device is gone the mapping reads (%d)", r1);
	r1 = ibv_dereg_mr(mr);
	r2 = ibv_free_dm(dm);
	/* EIO: the core destroyed them (0 with RDMAV_ALLOW_DISASSOC_DESTROY) */
	tap_ok((r1 == 0 || r1 == EIO) && (r2 == 0 || r2 == EIO),
	       "after the device is gone: dereg DM MR %d, free DM %d", r1, r2);
	ibv_dealloc_pd(A.pd);
	ibv_close_device(A.ctx);
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (argc == 3 && !strcmp(argv[1], "--hold"))
		return hold(argv[2]);
	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	return test_harness_run(1, run);
}
