// SPDX-License-Identifier: GPL-2.0
/*
 * mw_test - memory windows, MR re-registration and parent domains on
 * gaudi_ib, two devices in one process (A is the target, B the peer that
 * writes): what rdma-core's suite runs of them, and what it does not
 * check.  Memory windows: type 1 (ibv_bind_mw) and type 2 (IBV_WR_BIND_MW)
 * grant exactly their range and access; a window bound and then unbound,
 * invalidated (LOCAL_INV, SEND_WITH_INV) or freed refuses its key with a
 * remote access error and leaves memory untouched; a type 2 window serves
 * only the QP it was bound on; binds of a bad MR or of a bound type 2
 * window fail with IBV_WC_MW_BIND_ERR; an MR with a window bound refuses
 * deregistration and re-registration (EBUSY).  Re-registration keeps the keys
 * and changes access, translation and PD; bad flags and access are
 * refused.  Parent domains carry traffic and hold their PD.  A context,
 * PD and MR imported from another descriptor (ibv_import_*) carry traffic.
 * UC QPs carry SENDs and WRITEs without
 * acknowledgement, and drop what the responder refuses.  RDMA FLUSH
 * (global) completes over a range or a whole MR and fails without access.
 * (CQs and SRQs resized, and what a QP's reset or destroy leaves on its
 * CQ, are queue_test.c's.)  A kselftest (kselftest_harness.h, the fixture
 * of mwutil.h): one test per area, each in its own process with both
 * devices opened anew; output KTAP.
 *
 * usage: mw_test DEV_A GID_A DEV_B GID_B
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "mwutil.h"

static int bind2(struct ibv_mw *mw, struct ibv_mr *mr, void *addr,
		 size_t len, int acc, uint32_t *key)
{
	struct ibv_send_wr wr = {
		.wr_id = 7, .opcode = IBV_WR_BIND_MW,
		.bind_mw = { .mw = mw, .rkey = ibv_inc_rkey(*key),
			     .bind_info = { .mr = mr,
					    .addr = (uintptr_t)addr,
					    .length = len,
					    .mw_access_flags = acc } },
	};
	struct ibv_wc wc = {};
	int st = a_post(&wr, &wc);

	if (st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW)
		*key = wr.bind_mw.rkey;
	return st == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW ? -2 : st;
}

static int local_inv(uint32_t key)
{
	struct ibv_send_wr wr = { .wr_id = 8, .opcode = IBV_WR_LOCAL_INV,
				  .invalidate_rkey = key };
	struct ibv_wc wc = {};
	int st = a_post(&wr, &wc);

	return st == IBV_WC_SUCCESS && wc.opcode != IBV_WC_LOCAL_INV ? -2 : st;
}

static void test_mw_type1(struct __test_metadata *_metadata, struct ibv_mr *mr)
{
	struct ibv_mw *mw = ibv_alloc_mw(A.pd, IBV_MW_TYPE_1);
	uint8_t *win = abuf + 4096;
	struct ibv_mw_bind bind = {
		.wr_id = 5, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)win, .length = 256,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_wc wc = {};
	uint32_t old;
	int st;

	EXPECT_TRUE(mw && mw->rkey != mr->rkey && mw->type == IBV_MW_TYPE_1)
		TH_LOG("type 1 MW allocated (rkey 0x%x, the MR's 0x%x)",
	   mw ? mw->rkey : 0, mr->rkey);
	if (!mw || reconnect())
		return;
	memset(abuf, 0xee, LEN);
	old = mw->rkey;
	st = ibv_bind_mw(qa, mw, &bind);
	EXPECT_TRUE(!st && wait_wc(A.cq, &wc) == IBV_WC_SUCCESS &&
	   wc.opcode == IBV_WC_BIND_MW && wc.wr_id == 5 && mw->rkey != old)
		TH_LOG("type 1 bind completes as IBV_WC_BIND_MW with a new rkey (%d, status %d)",
	   st, wc.status);
	st = bwrite((uintptr_t)win, mw->rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(win, bbuf, 64) &&
	   untouched(abuf, 4096))
		TH_LOG("a WRITE through the window lands in it");
	st = bwrite((uintptr_t)win, old);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR)
		TH_LOG("the window's key before the bind is refused (status %d)", st);
	reconnect();
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)win + 256 - 32, mw->rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a WRITE crossing the window's end is refused, memory untouched (status %d)",
	   st);
	reconnect();
	st = bwrite((uintptr_t)abuf, mw->rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a WRITE inside the MR but outside the window is refused (status %d)",
	   st);
	/* read-only window: writes refused */
	reconnect();
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
	st = ibv_bind_mw(qa, mw, &bind);
	EXPECT_TRUE(!st && wait_wc(A.cq, &wc) == IBV_WC_SUCCESS)
		TH_LOG("type 1 rebind, remote read only");
	st = bwrite((uintptr_t)win, mw->rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a WRITE through a read-only window is refused (status %d)", st);
	/* unbind: zero length */
	reconnect();
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	ibv_bind_mw(qa, mw, &bind);
	wait_wc(A.cq, &wc);
	bind.bind_info.length = 0;
	bind.bind_info.mw_access_flags = 0;
	st = ibv_bind_mw(qa, mw, &bind);
	EXPECT_TRUE(!st && wait_wc(A.cq, &wc) == IBV_WC_SUCCESS)
		TH_LOG("type 1 unbind (zero length) completes");
	st = bwrite((uintptr_t)win, mw->rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("the unbound window's key is refused (status %d)", st);
	EXPECT_TRUE(ibv_dealloc_mw(mw) == 0)
		TH_LOG("type 1 MW freed");
}

static void test_mw_type2(struct __test_metadata *_metadata, struct ibv_mr *mr, struct ibv_mr *nobind)
{
	struct ibv_mw *mw = ibv_alloc_mw(A.pd, IBV_MW_TYPE_2);
	struct ibv_qp *qa1, *qb1, *qa2 = NULL, *qb2 = NULL;
	struct ibv_mw_bind mwb = { .bind_info = { .mr = mr } };
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr swr, *sbad;
	struct ibv_sge sg;
	struct ibv_wc wc;
	uint32_t key;
	int st;

	EXPECT_TRUE(mw && mw->type == IBV_MW_TYPE_2)
		TH_LOG("type 2 MW allocated");
	if (!mw || reconnect())
		return;
	key = mw->rkey;
	errno = 0;
	EXPECT_TRUE(ibv_bind_mw(qa, mw, &mwb) == EINVAL)
		TH_LOG("ibv_bind_mw() of a type 2 MW is refused");
	memset(abuf, 0xee, LEN);
	st = bind2(mw, mr, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && key != mw->rkey)
		TH_LOG("IBV_WR_BIND_MW binds the type 2 MW to a new key (status %d)", st);
	st = bwrite((uintptr_t)abuf + 64, key);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf + 64, bbuf, 64))
		TH_LOG("a WRITE through the type 2 window lands");
	st = bind2(mw, mr, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
	EXPECT_TRUE(st == IBV_WC_MW_BIND_ERR)
		TH_LOG("binding a bound type 2 MW fails with IBV_WC_MW_BIND_ERR (status %d)",
	   st);

	/* only the QP it was bound on: a second pair is refused */
	reconnect();
	key = mw->rkey;
	qa1 = qa;
	qb1 = qb;
	qa = qb = NULL;
	if (!reconnect()) {
		/* bind on the new pair; write through the old pair */
		st = bind2(mw, mr, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
		qa2 = qa;
		qb2 = qb;
		memset(abuf, 0xee, LEN);
		EXPECT_TRUE(st == IBV_WC_SUCCESS &&
		   write_via(qb1, (uintptr_t)abuf, key) ==
		   IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a type 2 window refuses requests arriving on another QP");
		EXPECT_TRUE(write_via(qb2, (uintptr_t)abuf, key) == IBV_WC_SUCCESS)
		TH_LOG("and serves the QP it was bound on");
	}
	ibv_destroy_qp(qa1);
	ibv_destroy_qp(qb1);

	/* LOCAL_INV */
	qa = qa2;
	qb = qb2;
	st = local_inv(key);
	EXPECT_TRUE(st == IBV_WC_SUCCESS)
		TH_LOG("LOCAL_INV completes as IBV_WC_LOCAL_INV (status %d)", st);
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)abuf, key);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a window used after LOCAL_INV is refused, memory untouched (status %d)",
	   st);
	reconnect();
	st = local_inv(key);
	EXPECT_TRUE(st == IBV_WC_LOC_QP_OP_ERR)
		TH_LOG("LOCAL_INV of a window not bound fails (status %d)", st);

	/* SEND_WITH_INV from the peer */
	reconnect();
	st = bind2(mw, mr, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
	sg = (struct ibv_sge){ (uintptr_t)abuf + 4096, 64, mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 9, .sg_list = &sg, .num_sge = 1 };
	ibv_post_recv(qa, &rwr, &rbad);
	sg = (struct ibv_sge){ (uintptr_t)bbuf, 16, bmr->lkey };
	swr = (struct ibv_send_wr){ .wr_id = 10, .sg_list = &sg, .num_sge = 1,
				    .opcode = IBV_WR_SEND_WITH_INV,
				    .send_flags = IBV_SEND_SIGNALED,
				    .invalidate_rkey = key };
	memset(&wc, 0, sizeof(wc));
	if (st == IBV_WC_SUCCESS && !ibv_post_send(qb, &swr, &sbad) &&
	    wait_wc(B.cq, &wc) == IBV_WC_SUCCESS)
		st = wait_wc(A.cq, &wc);
	else
		st = -1;
	EXPECT_TRUE(st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV &&
	   (wc.wc_flags & IBV_WC_WITH_INV) && wc.invalidated_rkey == key &&
	   wc.byte_len == 16)
		TH_LOG("SEND_WITH_INV: the receive reports IBV_WC_WITH_INV and the key (0x%x, flags 0x%x)",
	   wc.invalidated_rkey, wc.wc_flags);
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)abuf, key);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("a window used after SEND_WITH_INV is refused (status %d)", st);

	/* bad binds */
	reconnect();
	st = bind2(mw, nobind, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
	EXPECT_TRUE(st == IBV_WC_MW_BIND_ERR)
		TH_LOG("binding to an MR without IBV_ACCESS_MW_BIND fails (status %d)", st);
	reconnect();
	st = bind2(mw, mr, abuf, LEN + 4096, IBV_ACCESS_REMOTE_WRITE, &key);
	EXPECT_TRUE(st == IBV_WC_MW_BIND_ERR)
		TH_LOG("binding past the MR's end fails (status %d)", st);

	/* freed while bound */
	reconnect();
	st = bind2(mw, mr, abuf, 512, IBV_ACCESS_REMOTE_WRITE, &key);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && ibv_dealloc_mw(mw) == 0)
		TH_LOG("a bound type 2 MW is freed");
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)abuf, key);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("the freed window's key is refused (status %d)", st);
}

static void test_mw(struct __test_metadata *_metadata)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, acc);
	struct ibv_mr *nobind = ibv_reg_mr(A.pd, abuf, LEN,
					   IBV_ACCESS_LOCAL_WRITE);
	struct ibv_device_attr da = {};
	int qd = ibv_query_device(A.ctx, &da);
	struct ibv_mw *mw;

	/* (arguments are evaluated in no set order: query first) */
	EXPECT_TRUE(!qd && da.max_mw > 0 &&
	   (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW) &&
	   (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B))
		TH_LOG("the device reports memory windows, type 2B (max_mw %d)",
	   da.max_mw);
	EXPECT_TRUE(mr && nobind)
		TH_LOG("MR with IBV_ACCESS_MW_BIND registered");
	if (!mr || !nobind)
		return;
	errno = 0;
	mw = ibv_alloc_mw(A.pd, 3);
	EXPECT_TRUE(!mw && errno == EINVAL)
		TH_LOG("an MW of type 3 is refused with EINVAL (%s)",
	   strerror(errno));
	test_mw_type1(_metadata, mr);
	test_mw_type2(_metadata, mr, nobind);
	ibv_dereg_mr(mr);
	ibv_dereg_mr(nobind);
}

/*
 * N6 of the November review: an MR with a window bound to it refuses
 * ibv_dereg_mr() and ibv_rereg_mr() with EBUSY (IBTA), whether the window
 * is type 1 or type 2, and takes either once the window is unbound,
 * invalidated or freed.  Without that, a window outlived its MR and, the
 * MR's index reused, its rkey could reach a new buffer.  The last MR is
 * left with a bound window to the process's exit (verbs.sh checks that
 * nothing of it is left).
 */
static void test_bound_dereg(struct __test_metadata *_metadata)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND;
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, acc);
	struct ibv_mr *last = ibv_reg_mr(A.pd, abuf, LEN, acc);
	struct ibv_mw *mw1 = ibv_alloc_mw(A.pd, IBV_MW_TYPE_1);
	struct ibv_mw *mw2 = ibv_alloc_mw(A.pd, IBV_MW_TYPE_2);
	uint8_t *win = abuf + 4096;
	struct ibv_mw_bind bind = {
		.wr_id = 5, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)win, .length = 256,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	uint32_t key2 = mw2 ? mw2->rkey : 0;
	struct ibv_wc wc = {};
	int ret, st;

	ASSERT_TRUE(mr && last && mw1 && mw2 && !reconnect())
		TH_LOG("MRs, a type 1 and a type 2 window, a connection");
	st = ibv_bind_mw(qa, mw1, &bind) ? -1 : wait_wc(A.cq, &wc);
	ASSERT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 1 window bound");
	ret = ibv_dereg_mr(mr);
	EXPECT_EQ(EBUSY, ret)
		TH_LOG("ibv_dereg_mr() of an MR with a type 1 window bound: EBUSY (%d)",
	   ret);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   acc | IBV_ACCESS_REMOTE_READ);
	EXPECT_TRUE(ret && errno == EBUSY)
		TH_LOG("ibv_rereg_mr() of it: refused with EBUSY (%d, %s)", ret,
	   strerror(errno));
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)win, mw1->rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(win, bbuf, 64))
		TH_LOG("the window still works after both were refused (status %d)",
	   st);
	/* unbind the type 1 window, bind the type 2 one */
	bind.bind_info.length = 0;
	bind.bind_info.mw_access_flags = 0;
	st = ibv_bind_mw(qa, mw1, &bind) ? -1 : wait_wc(A.cq, &wc);
	EXPECT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 1 window unbound");
	st = bind2(mw2, mr, win, 256, IBV_ACCESS_REMOTE_WRITE, &key2);
	ASSERT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 2 window bound");
	ret = ibv_dereg_mr(mr);
	EXPECT_EQ(EBUSY, ret)
		TH_LOG("ibv_dereg_mr() with a type 2 window bound: EBUSY (%d)",
	   ret);
	st = local_inv(key2);
	EXPECT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 2 window invalidated");
	/* a type 1 window bound again, then freed */
	bind.bind_info.length = 256;
	bind.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_WRITE;
	st = ibv_bind_mw(qa, mw1, &bind) ? -1 : wait_wc(A.cq, &wc);
	EXPECT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 1 window bound again");
	EXPECT_EQ(0, ibv_dealloc_mw(mw1)) TH_LOG("the bound type 1 window freed");
	ret = ibv_dereg_mr(mr);
	EXPECT_EQ(0, ret)
		TH_LOG("ibv_dereg_mr() once no window is bound any more (%d)",
	   ret);
	/* a type 2 window bound through a QP that is then destroyed */
	st = bind2(mw2, last, win, 256, IBV_ACCESS_REMOTE_WRITE, &key2);
	EXPECT_EQ(IBV_WC_SUCCESS, st) TH_LOG("type 2 window bound to the last MR");
	EXPECT_EQ(0, reconnect()) TH_LOG("its QP destroyed (a new pair)");
	bind.bind_info.mr = last;
	st = ibv_bind_mw(qa, (mw1 = ibv_alloc_mw(A.pd, IBV_MW_TYPE_1)), &bind) ?
	     -1 : wait_wc(A.cq, &wc);
	EXPECT_EQ(IBV_WC_SUCCESS, st)
		TH_LOG("a new type 1 window bound to the last MR, left bound to the exit");
	ret = ibv_dereg_mr(last);
	EXPECT_EQ(EBUSY, ret)
		TH_LOG("the last MR refuses: its type 1 window, not the type 2 one of the destroyed QP (%d)",
	   ret);
}

static void test_rereg(struct __test_metadata *_metadata)
{
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, IBV_ACCESS_LOCAL_WRITE);
	uint8_t *nbuf = aligned_alloc(4096, LEN);
	struct ibv_pd *pd2 = ibv_alloc_pd(A.ctx);
	uint32_t lkey, rkey;
	int ret, st;

	ASSERT_FALSE(!mr || !nbuf || !pd2 || reconnect())
		TH_LOG("rereg: set up");
	lkey = mr->lkey;
	rkey = mr->rkey;
	memset(abuf, 0xee, LEN);
	st = bwrite((uintptr_t)abuf, rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("WRITE to an MR without remote write is refused (status %d)", st);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   ACC_ALL);
	EXPECT_TRUE(!ret && mr->lkey == lkey && mr->rkey == rkey)
		TH_LOG("rereg CHANGE_ACCESS adds remote write, keys unchanged (%d)", ret);
	reconnect();
	st = bwrite((uintptr_t)abuf + 128, rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf + 128, bbuf, 64))
		TH_LOG("the same rkey now writes (status %d)", st);

	memset(abuf, 0xee, LEN);
	memset(nbuf, 0xee, LEN);
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, nbuf,
			   LEN, 0);
	st = bwrite((uintptr_t)nbuf + 64, rkey);
	EXPECT_TRUE(!ret && mr->rkey == rkey && st == IBV_WC_SUCCESS &&
	   !memcmp(nbuf + 64, bbuf, 64) && untouched(abuf, LEN))
		TH_LOG("rereg CHANGE_TRANSLATION: WRITEs land in the new buffer only (%d, status %d)",
	   ret, st);
	st = bwrite((uintptr_t)abuf, rkey);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR && untouched(abuf, LEN))
		TH_LOG("the old range is refused (status %d)", st);

	reconnect();
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	st = bwrite((uintptr_t)nbuf, rkey);
	EXPECT_TRUE(!ret && mr->pd == pd2 && st == IBV_WC_REM_ACCESS_ERR)
		TH_LOG("rereg CHANGE_PD: a QP of the old PD is refused (%d, status %d)",
	   ret, st);
	reconnect();
	EXPECT_TRUE(ibv_dealloc_pd(pd2) == EBUSY)
		TH_LOG("the new PD is busy with the MR");
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, A.pd, NULL, 0, 0);
	st = bwrite((uintptr_t)nbuf, rkey);
	EXPECT_TRUE(!ret && st == IBV_WC_SUCCESS)
		TH_LOG("rereg back to the QP's PD writes (%d, status %d)",
	   ret, st);
	EXPECT_TRUE(ibv_dealloc_pd(pd2) == 0)
		TH_LOG("the other PD is free again");

	/* bad input */
	errno = 0;
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	EXPECT_TRUE(ret == IBV_REREG_MR_ERR_CMD && errno == EINVAL)
		TH_LOG("rereg without flags: EINVAL (%d, %s)", ret, strerror(errno));
	ret = ibv_rereg_mr(mr, 1 << 8, NULL, NULL, 0, 0);
	EXPECT_TRUE(ret == IBV_REREG_MR_ERR_INPUT)
		TH_LOG("rereg with an unknown flag refused (%d)",
	   ret);
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	EXPECT_TRUE(ret == IBV_REREG_MR_ERR_CMD && errno == EINVAL)
		TH_LOG("rereg to remote write without local write: EINVAL (%s)",
	   strerror(errno));
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   ACC_ALL | IBV_ACCESS_REMOTE_ATOMIC);
	EXPECT_TRUE(ret == IBV_REREG_MR_ERR_CMD && errno == EOPNOTSUPP)
		TH_LOG("rereg adding remote atomic (no atomics): EOPNOTSUPP (%s)",
	   strerror(errno));
	reconnect();
	memset(nbuf, 0xee, LEN);
	st = bwrite((uintptr_t)nbuf, rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(nbuf, bbuf, 64))
		TH_LOG("the MR is unchanged by the refused reregs (status %d)", st);
	ibv_dereg_mr(mr);
	free(nbuf);
}

static void test_parent_domain(struct __test_metadata *_metadata)
{
	struct ibv_parent_domain_init_attr pa = { .pd = A.pd };
	struct ibv_td_init_attr ta = {};
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_pd *par, *par2;
	struct ibv_cq_ex *cq;
	struct ibv_mr *mr;
	struct ibv_td *td;
	int st;

	par = ibv_alloc_parent_domain(A.ctx, &pa);
	EXPECT_TRUE(par && par != A.pd)
		TH_LOG("parent domain allocated");
	if (!par)
		return;
	pa.pd = par;
	errno = 0;
	par2 = ibv_alloc_parent_domain(A.ctx, &pa);
	EXPECT_TRUE(!par2 && errno == EINVAL)
		TH_LOG("a parent domain of a parent domain is refused (%s)", strerror(errno));
	td = ibv_alloc_td(A.ctx, &ta);
	EXPECT_TRUE(!td && errno == EOPNOTSUPP)
		TH_LOG("thread domains: EOPNOTSUPP (%s)",
	   strerror(errno));
	EXPECT_TRUE(ibv_dealloc_pd(A.pd) == EBUSY)
		TH_LOG("a PD with a parent domain on it is busy");
	ca.parent_domain = par;
	cq = ibv_create_cq_ex(A.ctx, &ca);
	EXPECT_TRUE(cq != NULL)
		TH_LOG("extended CQ with the parent domain");
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	ca.parent_domain = A.pd;
	errno = 0;
	cq = ibv_create_cq_ex(A.ctx, &ca);
	EXPECT_TRUE(!cq && errno == EINVAL)
		TH_LOG("extended CQ with a PD that is no parent domain: EINVAL (%s)",
	   strerror(errno));
	if (cq)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cq));
	mr = ibv_reg_mr(par, abuf, LEN, ACC_ALL);
	memset(abuf, 0xee, LEN);
	st = mr && !connect_in(par) ? bwrite((uintptr_t)abuf, mr->rkey) : -1;
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf, bbuf, 64))
		TH_LOG("a QP and an MR in the parent domain carry a WRITE (status %d)", st);
	reconnect();
	if (mr)
		ibv_dereg_mr(mr);
	EXPECT_TRUE(ibv_dealloc_pd(par) == 0)
		TH_LOG("parent domain freed");
}

/* Another context on A's kernel context: its PD and an MR, imported. */
static void test_import(struct __test_metadata *_metadata)
{
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL), *imr = NULL;
	int fd = dup(A.ctx->cmd_fd), nfd = open("/dev/null", O_RDWR);
	struct ibv_context *ctx;
	struct ibv_cq *cq = NULL;
	struct ibv_pd *ipd = NULL;
	struct ibv_qp *q = NULL;
	int st = -1;

	EXPECT_TRUE(nfd >= 0 && !ibv_import_device(nfd))
		TH_LOG("importing a descriptor that is no verbs device fails");
	if (nfd >= 0)
		close(nfd);
	ctx = mr && fd >= 0 ? ibv_import_device(fd) : NULL;
	EXPECT_TRUE(ctx != NULL)
		TH_LOG("context imported from a duplicate of A's descriptor (%s)",
	   ctx ? "" : strerror(errno));
	if (!ctx) {
		if (fd >= 0)
			close(fd);
		goto out;
	}
	ipd = ibv_import_pd(ctx, A.pd->handle);
	imr = ipd ? ibv_import_mr(ipd, mr->handle) : NULL;
	EXPECT_TRUE(imr && imr->lkey == mr->lkey && imr->rkey == mr->rkey &&
	   imr->length == LEN)
		TH_LOG("its PD and MR imported: same keys and length");
	EXPECT_TRUE(!ipd || !ibv_import_mr(ipd, mr->handle + 1000))
		TH_LOG("importing an MR handle that does not exist fails");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	q = ipd && cq ? new_qp(ipd, cq) : NULL;
	memset(abuf, 0xee, LEN);
	if (q && !fresh_qb() && !to_rts(&A, q, &B, qb->qp_num) &&
	    !to_rts(&B, qb, &A, q->qp_num))
		st = bwrite((uintptr_t)abuf + 256, imr ? imr->rkey : 0);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf + 256, bbuf, 64))
		TH_LOG("a QP of the imported context in the imported PD carries a WRITE (status %d)",
	   st);
	if (q)
		ibv_destroy_qp(q);
	if (cq)
		ibv_destroy_cq(cq);
	if (imr)
		ibv_unimport_mr(imr);
	if (ipd)
		ibv_unimport_pd(ipd);
	EXPECT_TRUE(ibv_close_device(ctx) == 0 && ibv_dereg_mr(mr) == 0)
		TH_LOG("the imported context closes; the original MR is still there");
	mr = NULL;
	reconnect();
out:
	if (mr)
		ibv_dereg_mr(mr);
}

static int uc_to_rts(struct tu_side *s, struct ibv_qp *qp, struct tu_side *peer,
		     uint32_t dqpn)
{
	struct ibv_qp_attr a = {};

	if (tu_qp_init(qp, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 5;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = peer->gid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = s->gid_index;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 5;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* B sends @len bytes on @q (UC); its completion's status, or -1. */
static int uc_send(struct ibv_qp *q, uint32_t len)
{
	struct ibv_sge sg = { (uintptr_t)bbuf, len, bmr->lkey };
	struct ibv_send_wr wr = { .wr_id = 600, .sg_list = &sg, .num_sge = 1,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (ibv_post_send(q, &wr, &bad))
		return -1;
	return wait_wc(B.cq, &wc);
}

/*
 * UC: SENDs (one and several packets) and WRITEs arrive and complete
 * without acknowledgement; a WRITE with a bad rkey and a SEND with no
 * receive posted are dropped by the responder, touch nothing and leave
 * both QPs working; READs are refused.
 */
static void test_uc(struct __test_metadata *_metadata)
{
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL);
	struct ibv_qp_init_attr ia = {
		.send_cq = A.cq, .recv_cq = A.cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UC,
	};
	struct ibv_qp *ua = ibv_create_qp(A.pd, &ia), *ub;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_send_wr *sbad;
	struct ibv_qp_attr qa_attr;
	struct ibv_qp_init_attr qi;
	struct ibv_sge sg;
	struct ibv_wc wc;
	int st;

	ia.send_cq = ia.recv_cq = B.cq;
	ub = ibv_create_qp(B.pd, &ia);
	EXPECT_TRUE(mr && ua && ub && !ibv_query_qp(ua, &qa_attr, IBV_QP_STATE, &qi) &&
	   qi.qp_type == IBV_QPT_UC)
		TH_LOG("UC QPs created");
	ASSERT_FALSE(!mr || !ua || !ub || uc_to_rts(&A, ua, &B, ub->qp_num) ||
	    uc_to_rts(&B, ub, &A, ua->qp_num))
		TH_LOG("UC QPs to RTS");
	while (ibv_poll_cq(A.cq, 1, &wc) > 0)
		;
	memset(abuf, 0xee, LEN);
	st = write_via(ub, (uintptr_t)abuf + 64, mr->rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf + 64, bbuf, 64))
		TH_LOG("a UC WRITE completes and lands (status %d)", st);
	sg = (struct ibv_sge){ (uintptr_t)abuf + 4096, 4096, mr->lkey };
	rwr = (struct ibv_recv_wr){ .wr_id = 601, .sg_list = &sg, .num_sge = 1 };
	ibv_post_recv(ua, &rwr, &rbad);
	st = uc_send(ub, 3000);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && wait_wc(A.cq, &wc) == IBV_WC_SUCCESS &&
	   wc.wr_id == 601 && wc.byte_len == 3000 &&
	   !memcmp(abuf + 4096, bbuf, 3000))
		TH_LOG("a UC SEND of 3 packets arrives whole (status %d)", st);
	memset(abuf, 0xee, LEN);
	st = write_via(ub, (uintptr_t)abuf, mr->rkey ^ 0x80);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && untouched(abuf, LEN))
		TH_LOG("a UC WRITE with a bad rkey completes at the sender, touches nothing (status %d)",
	   st);
	st = uc_send(ub, 32);
	usleep(200000);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && ibv_poll_cq(A.cq, 1, &wc) == 0)
		TH_LOG("a UC SEND with no receive posted is dropped");
	ibv_post_recv(ua, &rwr, &rbad);
	st = write_via(ub, (uintptr_t)abuf + 128, mr->rkey);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && !memcmp(abuf + 128, bbuf, 64))
		TH_LOG("after the drops the UC pair still carries WRITEs");
	st = uc_send(ub, 16);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && wait_wc(A.cq, &wc) == IBV_WC_SUCCESS &&
	   wc.byte_len == 16)
		TH_LOG("and SENDs");
	sg = (struct ibv_sge){ (uintptr_t)bbuf, 64, bmr->lkey };
	{
		struct ibv_send_wr rd = {
			.wr_id = 602, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ,
			.wr.rdma = { (uintptr_t)abuf, mr->rkey },
		};

		EXPECT_TRUE(ibv_post_send(ub, &rd, &sbad) == EINVAL)
		TH_LOG("a READ on a UC QP is refused (EINVAL)");
	}
	if (ua)
		ibv_destroy_qp(ua);
	if (ub)
		ibv_destroy_qp(ub);
	if (mr)
		ibv_dereg_mr(mr);
}

/* One ibv_wr_flush on @x: its completion's status (-1: none). */
static int flush1(struct ibv_qp_ex *x, uint32_t rkey, uint64_t addr,
		  size_t len, uint8_t type, uint8_t level, struct ibv_wc *wc)
{
	ibv_wr_start(x);
	x->wr_id = 800;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(x, rkey, addr, len, type, level);
	if (ibv_wr_complete(x))
		return -1;
	return wait_wc(B.cq, wc);
}

/*
 * RDMA FLUSH (global placement) from B to an MR of A with flush access:
 * a range and the whole MR complete as IBV_WC_FLUSH; a persistent flush
 * (no MR can have that access: the device has no persistent memory) and
 * a flush of an MR without flush access are remote access errors.
 */
static void test_flush(struct __test_metadata *_metadata)
{
	struct ibv_mr *mr = ibv_reg_mr(A.pd, abuf, LEN,
				       ACC_ALL | IBV_ACCESS_FLUSH_GLOBAL);
	struct ibv_mr *nof = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL);
	struct ibv_qp_init_attr_ex ia = {
		.send_cq = B.cq, .recv_cq = B.cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC, .pd = B.pd,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = IBV_QP_EX_WITH_FLUSH |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct ibv_mr *bad;
	struct ibv_qp_ex *x;
	struct ibv_qp *q;
	struct ibv_wc wc = {};
	int st;

	errno = 0;
	bad = ibv_reg_mr(A.pd, abuf, LEN, ACC_ALL | IBV_ACCESS_FLUSH_PERSISTENT);
	EXPECT_TRUE(!bad)
		TH_LOG("an MR with persistent flush access is refused (%s)",
	   strerror(errno));
	if (bad)
		ibv_dereg_mr(bad);
	q = ibv_create_qp_ex(B.ctx, &ia);
	ASSERT_FALSE(!mr || !nof || !q || fresh_qa() || to_rts(&B, q, &A, qa->qp_num) ||
	    to_rts(&A, qa, &B, q->qp_num))
		TH_LOG("flush: set up (%s)", strerror(errno));
	x = ibv_qp_to_qp_ex(q);
	st = write_via(q, (uintptr_t)abuf, mr->rkey);
	if (st == IBV_WC_SUCCESS)
		st = flush1(x, mr->rkey, (uintptr_t)abuf, 64,
			    IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE, &wc);
	EXPECT_TRUE(st == IBV_WC_SUCCESS && wc.opcode == IBV_WC_FLUSH && wc.wr_id == 800)
		TH_LOG("WRITE then FLUSH of its range: IBV_WC_FLUSH (status %d)", st);
	st = flush1(x, mr->rkey, (uintptr_t)abuf, 1 << 30, IBV_FLUSH_GLOBAL,
		    IBV_FLUSH_MR, &wc);
	EXPECT_TRUE(st == IBV_WC_SUCCESS)
		TH_LOG("FLUSH of the whole MR (the length is not looked at) (status %d)", st);
	st = flush1(x, mr->rkey, (uintptr_t)abuf, 1 << 30, IBV_FLUSH_GLOBAL,
		    IBV_FLUSH_RANGE, &wc);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR)
		TH_LOG("FLUSH of a range past the MR: remote access error (status %d)", st);
	/* both ends afresh: the failed FLUSH left them in ERR */
	if (fresh_qa())
		goto out;
	ibv_destroy_qp(q);
	q = ibv_create_qp_ex(B.ctx, &ia);
	ASSERT_FALSE(!q || to_rts(&B, q, &A, qa->qp_num) ||
	    to_rts(&A, qa, &B, q->qp_num))
		TH_LOG("flush: reconnect");
	x = ibv_qp_to_qp_ex(q);
	st = flush1(x, mr->rkey, (uintptr_t)abuf, 64, IBV_FLUSH_PERSISTENT,
		    IBV_FLUSH_RANGE, &wc);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR)
		TH_LOG("a persistent FLUSH: remote access error (status %d)", st);
	/* both ends afresh: the failed FLUSH left them in ERR */
	if (fresh_qa())
		goto out;
	ibv_destroy_qp(q);
	q = ibv_create_qp_ex(B.ctx, &ia);
	ASSERT_FALSE(!q || to_rts(&B, q, &A, qa->qp_num) ||
	    to_rts(&A, qa, &B, q->qp_num))
		TH_LOG("flush: reconnect");
	x = ibv_qp_to_qp_ex(q);
	st = flush1(x, nof->rkey, (uintptr_t)abuf, 64, IBV_FLUSH_GLOBAL,
		    IBV_FLUSH_RANGE, &wc);
	EXPECT_TRUE(st == IBV_WC_REM_ACCESS_ERR)
		TH_LOG("FLUSH of an MR without flush access: remote access error (status %d)",
	   st);
out:
	if (q)
		ibv_destroy_qp(q);
	if (mr)
		ibv_dereg_mr(mr);
	if (nof)
		ibv_dereg_mr(nof);
	reconnect();
}

MW_FIXTURE(mw);

TEST_F_TIMEOUT(mw, memory_windows, 120)
{
	test_mw(_metadata);
}

TEST_F_TIMEOUT(mw, bound_dereg, 120)
{
	test_bound_dereg(_metadata);
}

TEST_F_TIMEOUT(mw, rereg_mr, 120)
{
	test_rereg(_metadata);
}

TEST_F_TIMEOUT(mw, parent_domain, 120)
{
	test_parent_domain(_metadata);
}

TEST_F_TIMEOUT(mw, import, 120)
{
	test_import(_metadata);
}

TEST_F_TIMEOUT(mw, uc, 120)
{
	test_uc(_metadata);
}

TEST_F_TIMEOUT(mw, flush, 120)
{
	test_flush(_metadata);
}

int main(int argc, char **argv)
{
	char *run[] = { argv[0], NULL };

	if (tu_two_dev_args(argc, argv, &dev_a, &gid_a, &dev_b, &gid_b))
		return 2;
	return test_harness_run(1, run);
}
