/* SPDX-License-Identifier: MIT */
/*
 * dma-buf registration with a memfd standing in for an exported dma-buf:
 * the native FI_MR_DMABUF path (when the provider accepts it), the
 * host-mapping fallback (forced with GCOLL_DMABUF=0) and host staging
 * through a bounce buffer (GCOLL_DMABUF_STAGE=1), each followed by
 * collectives and send/recv whose data land in the registered region.
 *
 *   dmabuf_test [--provider tcp|shm]
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tutil.h"

#define REGION (4u << 20)
#define OFF (64u << 10)
#define LEN (2u << 20)

struct res {
	int init, native_tp, is_dmabuf, is_staged, reg, ar, ar_ok, bc_ok, ag_ok, p2p_ok, dereg;
};
static struct res *R;

static int rank_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	struct res *me = &R[rank];
	gcoll_comm_t c;
	gcoll_mem_t h = NULL;
	char *map;
	float *buf;
	size_t cnt = (LEN / 2) / sizeof(float);
	int fd, native = 0;

	(void)arg;
	me->init = gcoll_comm_init_rank(&c, n, id, rank);
	if (me->init)
		return 3;
	gcoll_comm_transport_info(c, NULL, NULL, &native, NULL);
	me->native_tp = native;
	fd = memfd_create("fake-dmabuf", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, REGION))
		return 4;
	map = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return 5;
	me->reg = gcoll_mem_register_dmabuf(c, fd, OFF, LEN, map + OFF, &h);
	me->is_dmabuf = gcoll_mem_is_dmabuf(h);
	me->is_staged = gcoll_mem_is_staged(h);
	/* the buffers live inside the registered region: sendbuf first half,
	 * recvbuf second half */
	buf = (float *)(map + OFF);
	for (size_t i = 0; i < cnt; i++)
		buf[i] = (float)(rank + 1) * (float)(i % 17);
	me->ar = gcoll_allreduce(buf, buf + cnt, cnt, GCOLL_FLOAT32, GCOLL_SUM, c, NULL);
	me->ar_ok = 1;
	for (size_t i = 0; i < cnt && !me->ar; i++)
		if (buf[cnt + i] != (float)(n * (n + 1) / 2) * (float)(i % 17)) {
			me->ar_ok = 0;
			break;
		}
	/* broadcast from the last rank into the region (in place) */
	if (rank == n - 1)
		for (size_t i = 0; i < cnt; i++)
			buf[i] = (float)i;
	me->bc_ok = !gcoll_broadcast(buf, buf, cnt, GCOLL_FLOAT32, n - 1, c, NULL);
	for (size_t i = 0; i < cnt && me->bc_ok; i++)
		if (buf[i] != (float)i)
			me->bc_ok = 0;
	/* in-place allgather inside the region */
	for (size_t i = 0; i < 1000; i++)
		buf[(size_t)rank * 1000 + i] = (float)(rank * 1000 + (int)i);
	me->ag_ok = !gcoll_allgather(buf + (size_t)rank * 1000, buf, 1000, GCOLL_FLOAT32, c, NULL);
	for (size_t i = 0; i < (size_t)n * 1000 && me->ag_ok; i++)
		if (buf[i] != (float)i)
			me->ag_ok = 0;
	/* send/recv between the regions of rank 0 and 1 (rendezvous) */
	{
		size_t pc = 100000;
		gcoll_result_t e;

		if (rank == 0) {
			for (size_t i = 0; i < pc; i++)
				buf[i] = (float)(3 * i);
			e = gcoll_send(buf, pc, GCOLL_FLOAT32, 1, c, NULL);
		} else if (rank == 1) {
			memset(buf, 0, pc * sizeof(float));
			e = gcoll_recv(buf, pc, GCOLL_FLOAT32, 0, c, NULL);
		} else {
			e = GCOLL_SUCCESS;
		}
		me->p2p_ok = !e;
		for (size_t i = 0; i < pc && rank == 1 && me->p2p_ok; i++)
			if (buf[i] != (float)(3 * i))
				me->p2p_ok = 0;
	}
	me->dereg = h ? (int)gcoll_mem_deregister(c, h) : -1;
	gcoll_comm_destroy(c);
	munmap(map, REGION);
	close(fd);
	return 0;
}

static void run(const char *prov, bool force_fallback, bool force_stage)
{
	int st[2], n = 2;

	memset(R, 0, sizeof(*R) * 2);
	if (force_fallback)
		setenv("GCOLL_DMABUF", "0", 1);
	else
		unsetenv("GCOLL_DMABUF");
	if (force_stage)
		setenv("GCOLL_DMABUF_STAGE", "1", 1);
	else
		unsetenv("GCOLL_DMABUF_STAGE");
	tu_run(n, rank_main, NULL, 60, st);
	for (int r = 0; r < n; r++) {
		const char *mode = force_stage ? "staged" : force_fallback ? "fallback" : "native-if-supported";

		tu_ok(R[r].init == 0 && st[r] == 0, "%s %s rank %d: init and clean exit", prov, mode, r);
		if (force_stage)
			tu_ok(R[r].reg == 0 && !R[r].is_dmabuf && R[r].is_staged,
			      "%s %s rank %d: registered with a host bounce buffer", prov, mode, r);
		else if (force_fallback)
			tu_ok(R[r].reg == 0 && !R[r].is_dmabuf && !R[r].is_staged && !R[r].native_tp,
			      "%s %s rank %d: registered through the host-memory fallback", prov, mode, r);
		else
			tu_ok(R[r].reg == 0 && R[r].is_dmabuf == R[r].native_tp,
			      "%s %s rank %d: registered (FI_MR_DMABUF %s)", prov, mode, r,
			      R[r].native_tp ? "accepted by the provider" : "not supported: fallback");
		tu_ok(R[r].ar == 0 && R[r].ar_ok, "%s %s rank %d: allreduce into the region correct", prov,
		      mode, r);
		tu_ok(R[r].bc_ok, "%s %s rank %d: broadcast into the region correct", prov, mode, r);
		tu_ok(R[r].ag_ok, "%s %s rank %d: in-place allgather in the region correct", prov, mode, r);
		tu_ok(R[r].p2p_ok, "%s %s rank %d: send/recv between regions correct", prov, mode, r);
		tu_ok(R[r].dereg == 0, "%s %s rank %d: deregister", prov, mode, r);
	}
}

int main(int argc, char **argv)
{
	const char *prov = "tcp";

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--provider") && i + 1 < argc)
			prov = argv[++i];
	setenv("GCOLL_PROVIDER", prov, 1);
	setenv("GCOLL_EAGER_MAX", "1024", 1);   /* everything through rendezvous */
	R = tu_shared(sizeof(*R) * 2);
	run(prov, false, false);
	run(prov, true, false);
	run(prov, true, true);
	return tu_done();
}
