/* SPDX-License-Identifier: MIT */
/*
 * gcoll-hbm-allreduce: the product's main job in one small program, one
 * rank per process.  Each rank allocates a tensor in HBM of its accel
 * device through hl-thunk, exports it as dma-buf, fills it through the
 * accel CPU mapping, registers it with libgcoll (FI_MR_DMABUF when the
 * provider takes it), all-reduces it in place and checks the result
 * through the CPU mapping.
 *
 *   RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p \
 *       gcoll-hbm-allreduce ACCEL_INDEX [COUNT]
 *
 * Every rank prints what it did; the exit status is 0 only if its result
 * was right everywhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <hlthunk.h>

#include "gcoll.h"

static int die(int rank, const char *what, const char *why)
{
	fprintf(stderr, "rank %d: %s: %s\n", rank, what, why);
	return 1;
}

/* rank r's element i: small integers, exact in fp32 for any rank count */
static float input(int rank, size_t i)
{
	return (float)((i * 7 + (size_t)rank * 13) % 101);
}

int main(int argc, char **argv)
{
	const char *er = getenv("RANK"), *ew = getenv("WORLD_SIZE");
	const char *host = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
	int rank, n, acc, acc_fd, rails = 0, dmab = 0, rxd = 0, ret = 1;
	size_t count, len, wrong = 0;
	const char *prov = "?";
	struct hlthunk_hbm_buf hbm;
	gcoll_unique_id id;
	gcoll_mem_t mem;
	gcoll_comm_t c;
	struct timespec t0, t1;
	float *t;

	if (argc < 2 || !er || !ew) {
		fprintf(stderr, "usage: RANK=r WORLD_SIZE=n MASTER_ADDR=a MASTER_PORT=p %s ACCEL_INDEX [COUNT]\n",
			argv[0]);
		return 2;
	}
	rank = atoi(er);
	n = atoi(ew);
	acc = atoi(argv[1]);
	count = argc > 2 ? strtoull(argv[2], NULL, 0) : 1u << 20;
	len = (count * sizeof(float) + 4095) & ~(size_t)4095;

	acc_fd = hlthunk_open_by_index((uint32_t)acc);
	if (acc_fd < 0)
		return die(rank, "open the accel device", strerror(errno));
	/* allocated, mapped at a device address, exported, mapped for the CPU */
	if (hlthunk_hbm_buf_create(acc_fd, len, HLTHUNK_HBM_CONTIGUOUS | HLTHUNK_HBM_CPU_MAP, &hbm))
		return die(rank, hbm.step, strerror(errno));
	t = hbm.cpu;
	printf("rank %d: %zu floats (%zu KiB) in HBM of accel %d at device address 0x%" PRIx64
	       ", exported as dma-buf fd %d\n", rank, count, len >> 10, acc, hbm.device_va,
	       hbm.dmabuf_fd);
	for (size_t i = 0; i < count; i++)
		t[i] = input(rank, i);

	if (gcoll_unique_id_from_addr(&id, host ? host : "127.0.0.1", port ? atoi(port) : 29500,
				      rank == 0))
		return die(rank, "bootstrap address", gcoll_get_last_error());
	if (gcoll_comm_init_rank(&c, n, id, rank))
		return die(rank, "communicator", gcoll_get_last_error());
	gcoll_comm_transport_info(c, &prov, &rails, &dmab, &rxd);
	if (gcoll_mem_register_dmabuf(c, hbm.dmabuf_fd, 0, len, t, &mem))
		return die(rank, "register the dma-buf", gcoll_get_last_error());
	printf("rank %d: provider %s, dma-buf registered %s\n", rank, prov,
	       gcoll_mem_is_dmabuf(mem) ? "natively (FI_MR_DMABUF)" :
	       gcoll_mem_is_staged(mem) ? "through a host bounce buffer" : "by its CPU mapping");

	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (gcoll_allreduce(t, t, count, GCOLL_FLOAT32, GCOLL_SUM, c, NULL))
		return die(rank, "all-reduce", gcoll_get_last_error());
	clock_gettime(CLOCK_MONOTONIC, &t1);

	for (size_t i = 0; i < count; i++) {
		float want = 0;

		for (int r = 0; r < n; r++)
			want += input(r, i);
		if (t[i] != want && !wrong++)
			fprintf(stderr, "rank %d: element %zu is %g, want %g\n", rank, i, t[i], want);
	}
	printf("rank %d: all-reduce of %zu floats in %.1f ms; result read through the CPU mapping: %s\n",
	       rank, count, ((double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6),
	       wrong ? "WRONG" : "every element right");
	ret = wrong ? 1 : 0;
	gcoll_mem_deregister(c, mem);
	gcoll_comm_destroy(c);
	hlthunk_hbm_buf_destroy(&hbm);
	hlthunk_close(acc_fd);
	return ret;
}
