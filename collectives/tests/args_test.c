/* SPDX-License-Identifier: MIT */
/*
 * Argument validation: every bad argument is rejected with its own error
 * code and a message naming the argument; use after destroy is detected;
 * count 0 is a valid no-op.  Runs on a 1-rank communicator (plus a 2-rank
 * one for peer/root range checks).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tutil.h"

static void expect(gcoll_result_t rc, gcoll_result_t want, const char *word, const char *what)
{
	const char *msg = gcoll_get_last_error();

	tu_ok(rc == want && (!word || strstr(msg, word)), "%s: '%s' (want '%s'), message names '%s': \"%s\"",
	      what, gcoll_get_error_string(rc), gcoll_get_error_string(want), word ? word : "-", msg);
}

static int two_main(int rank, int n, gcoll_unique_id id, void *arg)
{
	int *out = arg;
	gcoll_comm_t c;
	float x = 0;

	if (gcoll_comm_init_rank(&c, n, id, rank))
		return 3;
	if (rank == 0) {
		out[0] = gcoll_broadcast(&x, &x, 1, GCOLL_FLOAT32, 2, c, NULL);
		out[1] = strstr(gcoll_get_last_error(), "root") != NULL;
		out[2] = gcoll_send(&x, 1, GCOLL_FLOAT32, 2, c, NULL);
		out[3] = strstr(gcoll_get_last_error(), "peer") != NULL;
		out[4] = gcoll_reduce(&x, &x, 1, GCOLL_FLOAT32, GCOLL_SUM, -1, c, NULL);
	}
	gcoll_comm_destroy(c);
	return 0;
}

int main(void)
{
	gcoll_unique_id id;
	gcoll_comm_t c = NULL, dead;
	gcoll_request_t rq;
	gcoll_mem_t mh;
	float a[4] = { 1, 2, 3, 4 }, b[4];
	gcoll_result_t rc;
	int *two, st[2];

	setenv("GCOLL_DEBUG", "0", 0);
	rc = gcoll_get_unique_id(&id);
	tu_ok(rc == GCOLL_SUCCESS, "get_unique_id");
	expect(gcoll_get_unique_id(NULL), GCOLL_ERR_INVALID_ARGUMENT, "id", "get_unique_id(NULL)");
	expect(gcoll_comm_init_rank(NULL, 1, id, 0), GCOLL_ERR_INVALID_ARGUMENT, "comm", "init: comm NULL");
	expect(gcoll_comm_init_rank(&c, 0, id, 0), GCOLL_ERR_INVALID_ARGUMENT, "nranks", "init: nranks 0");
	expect(gcoll_comm_init_rank(&c, 2, id, 2), GCOLL_ERR_INVALID_ARGUMENT, "rank", "init: rank 2 of 2");
	expect(gcoll_comm_init_rank(&c, 1, id, -1), GCOLL_ERR_INVALID_ARGUMENT, "rank", "init: rank -1");
	{
		gcoll_unique_id junk;

		memset(&junk, 0x42, sizeof(junk));
		expect(gcoll_comm_init_rank(&c, 1, junk, 0), GCOLL_ERR_INVALID_ARGUMENT, "id",
		       "init: garbage unique id");
	}
	rc = gcoll_comm_init_rank(&c, 1, id, 0);
	tu_ok(rc == GCOLL_SUCCESS, "1-rank communicator (%s)", gcoll_get_error_string(rc));
	if (rc)
		return tu_done();

	expect(gcoll_allreduce(NULL, b, 4, GCOLL_FLOAT32, GCOLL_SUM, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "sendbuf", "allreduce sendbuf NULL");
	expect(gcoll_allreduce(a, NULL, 4, GCOLL_FLOAT32, GCOLL_SUM, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "recvbuf", "allreduce recvbuf NULL");
	expect(gcoll_allreduce(a, b, 4, (gcoll_datatype_t)42, GCOLL_SUM, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "datatype", "allreduce bad datatype");
	expect(gcoll_allreduce(a, b, 4, GCOLL_FLOAT32, (gcoll_redop_t)9, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "op", "allreduce bad op");
	expect(gcoll_allreduce(a, b, SIZE_MAX / 2, GCOLL_FLOAT32, GCOLL_SUM, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "overflow", "allreduce count overflow");
	expect(gcoll_allgather(a, b, SIZE_MAX / 4 + 7, GCOLL_INT8, c, NULL), GCOLL_ERR_INVALID_ARGUMENT,
	       "overflow", "allgather count overflow");
	expect(gcoll_allreduce(a, b, 4, GCOLL_FLOAT32, GCOLL_SUM, NULL, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "comm", "allreduce comm NULL");
	expect(gcoll_reduce_scatter(a, NULL, 1, GCOLL_INT32, GCOLL_MAX, c, NULL),
	       GCOLL_ERR_INVALID_ARGUMENT, "recvbuf", "reduce_scatter recvbuf NULL");
	expect(gcoll_broadcast(a, b, 4, GCOLL_FLOAT32, 1, c, NULL), GCOLL_ERR_INVALID_ARGUMENT, "root",
	       "broadcast root 1 of 1");
	expect(gcoll_reduce(a, b, 4, GCOLL_FLOAT32, GCOLL_SUM, 5, c, NULL), GCOLL_ERR_INVALID_ARGUMENT,
	       "root", "reduce root 5 of 1");
	expect(gcoll_send(a, 4, GCOLL_FLOAT32, 0, c, NULL), GCOLL_ERR_INVALID_ARGUMENT, "peer",
	       "send to self");
	expect(gcoll_recv(b, 4, GCOLL_FLOAT32, 3, c, NULL), GCOLL_ERR_INVALID_ARGUMENT, "peer",
	       "recv from rank 3 of 1");
	expect(gcoll_alltoall(a, b, 1, (gcoll_datatype_t)-1, c, NULL), GCOLL_ERR_INVALID_ARGUMENT,
	       "datatype", "alltoall datatype -1");
	expect(gcoll_wait(NULL), GCOLL_ERR_INVALID_ARGUMENT, "req", "wait(NULL)");
	expect(gcoll_test(NULL), GCOLL_ERR_INVALID_ARGUMENT, "req", "test(NULL)");
	expect(gcoll_group_end(), GCOLL_ERR_INVALID_USAGE, "group", "group_end without start");
	expect(gcoll_mem_register(c, NULL, 16, &mh), GCOLL_ERR_INVALID_ARGUMENT, "buf",
	       "mem_register buf NULL");
	expect(gcoll_mem_register_dmabuf(c, -1, 0, 16, a, &mh), GCOLL_ERR_INVALID_ARGUMENT, "fd",
	       "mem_register_dmabuf fd -1");
	expect(gcoll_comm_get_async_error(c, NULL), GCOLL_ERR_INVALID_ARGUMENT, "async_error",
	       "get_async_error(NULL)");
	expect(gcoll_comm_split(c, 0, 0, NULL), GCOLL_ERR_INVALID_ARGUMENT, "newcomm", "split newcomm NULL");

	/* count 0 with NULL buffers is a valid no-op; 1 rank copies */
	expect(gcoll_allreduce(NULL, NULL, 0, GCOLL_FLOAT32, GCOLL_SUM, c, NULL), GCOLL_SUCCESS, NULL,
	       "allreduce count 0 NULL buffers");
	rc = gcoll_allreduce(a, b, 4, GCOLL_FLOAT32, GCOLL_AVG, c, &rq);
	if (!rc)
		rc = gcoll_wait(rq);
	tu_ok(rc == GCOLL_SUCCESS && !memcmp(a, b, sizeof(a)), "1-rank nonblocking allreduce copies");

	/* error codes and strings are distinct */
	{
		bool distinct = true;

		for (int i = 0; i < GCOLL_NUM_RESULTS; i++)
			for (int j = 0; j < i; j++)
				if (!strcmp(gcoll_get_error_string((gcoll_result_t)i),
					    gcoll_get_error_string((gcoll_result_t)j)))
					distinct = false;
		tu_ok(distinct, "every result code has its own error string");
	}

	dead = c;
	tu_ok(gcoll_comm_destroy(c) == GCOLL_SUCCESS, "destroy");
	expect(gcoll_allreduce(a, b, 4, GCOLL_FLOAT32, GCOLL_SUM, dead, NULL), GCOLL_ERR_INVALID_USAGE,
	       "not a live communicator", "allreduce after destroy");
	expect(gcoll_comm_destroy(dead), GCOLL_ERR_INVALID_USAGE, "not a live", "double destroy");
	expect(gcoll_comm_abort(dead), GCOLL_ERR_INVALID_USAGE, "not a live", "abort after destroy");

	/* range checks that need 2 ranks */
	two = tu_shared(sizeof(int) * 8);
	tu_run(2, two_main, two, 30, st);
	tu_ok(two[0] == GCOLL_ERR_INVALID_ARGUMENT && two[1], "2 ranks: broadcast root 2 rejected, names root");
	tu_ok(two[2] == GCOLL_ERR_INVALID_ARGUMENT && two[3], "2 ranks: send to peer 2 rejected, names peer");
	tu_ok(two[4] == GCOLL_ERR_INVALID_ARGUMENT, "2 ranks: reduce root -1 rejected");
	tu_ok(st[0] == 0 && st[1] == 0, "2 ranks: both exit cleanly");
	return tu_done();
}
