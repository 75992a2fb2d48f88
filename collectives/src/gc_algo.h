/* SPDX-License-Identifier: MIT */
/* The collective algorithms (algo.c): each builds a request's schedules;
 * the all-reduce also chooses between the fast path and the fabric. */
#ifndef GC_ALGO_H
#define GC_ALGO_H

#include "gc_sched.h"

/* Build the request of one collective from checked arguments (bytes: the
 * whole buffer's size, as the entry point computed it) and gc_submit() it.
 * Communicators of one rank use gc_algo_local_copy(). */
gcoll_result_t gc_algo_local_copy(struct gcoll_comm *c, void *dst, const void *src,
				  size_t bytes, gcoll_request_t *req);
gcoll_result_t gc_algo_allreduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t count, size_t bytes, gcoll_datatype_t type,
				 gcoll_redop_t op, gcoll_request_t *req);
gcoll_result_t gc_algo_reduce_scatter(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				      size_t rcount, size_t bytes, gcoll_datatype_t type,
				      gcoll_redop_t op, gcoll_request_t *req);
gcoll_result_t gc_algo_allgather(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t scount, size_t bytes, gcoll_datatype_t type,
				 gcoll_request_t *req);
gcoll_result_t gc_algo_broadcast(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				 size_t bytes, gcoll_datatype_t type, int root,
				 gcoll_request_t *req);
gcoll_result_t gc_algo_reduce(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
			      size_t count, size_t bytes, gcoll_datatype_t type,
			      gcoll_redop_t op, int root, gcoll_request_t *req);
gcoll_result_t gc_algo_alltoall(struct gcoll_comm *c, const void *sendbuf, void *recvbuf,
				size_t bytes, gcoll_datatype_t type, gcoll_request_t *req);
gcoll_result_t gc_algo_barrier(struct gcoll_comm *c, gcoll_request_t *req);
/* kind 0 = send, 1 = recv */
gcoll_result_t gc_algo_p2p(struct gcoll_comm *c, int kind, void *buf, size_t bytes,
			   gcoll_datatype_t type, int peer, gcoll_request_t *req);

#endif
