/* SPDX-License-Identifier: MIT */
/*
 * Public entry points of the collectives, point-to-point operations, groups
 * and requests: check the arguments, then hand over to the algorithm that
 * builds the request (algo.c) or to the request engine (sched.c).
 * Communicators are managed in comm.c.
 */
#include "gc_algo.h"
#include "gc_registry.h"

/* ------------------------------------------------------------ validation */

static gcoll_result_t check_type(gcoll_datatype_t t, const char *fn)
{
	if ((unsigned)t >= GCOLL_NUM_TYPES)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: datatype %d is not a gcoll_datatype_t",
			      fn, (int)t);
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_op(gcoll_redop_t op, const char *fn)
{
	if ((unsigned)op >= GCOLL_NUM_OPS)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: op %d is not a gcoll_redop_t", fn, (int)op);
	return GCOLL_SUCCESS;
}

static gcoll_result_t check_buf(const void *p, size_t count, const char *name, const char *fn)
{
	if (!p && count)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, name);
	if (gc_is_scr(p))
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: %s is not a user-space address", fn, name);
	return GCOLL_SUCCESS;
}

/* bytes = count * es * mult, rejecting overflow and absurd sizes */
static gcoll_result_t check_count(size_t count, gcoll_datatype_t t, size_t mult,
				  const char *fn, size_t *bytes)
{
	size_t es = gc_type_size(t), b;

	if (__builtin_mul_overflow(count, es, &b) || __builtin_mul_overflow(b, mult, &b) ||
	    b > (1ull << 56))
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT,
			      "%s: count %zu of %zu-byte elements (x%zu) overflows", fn, count, es, mult);
	*bytes = b;
	return GCOLL_SUCCESS;
}
static gcoll_result_t check_root(struct gcoll_comm *c, int root, const char *fn)
{
	if (root < 0 || root >= c->nranks)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: root %d out of range [0, %d)", fn, root,
			      c->nranks);
	return GCOLL_SUCCESS;
}

/* ------------------------------------------------------------ collectives */

GC_API gcoll_result_t gcoll_allreduce(const void *sendbuf, void *recvbuf, size_t count,
				      gcoll_datatype_t type, gcoll_redop_t op,
				      gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_allreduce";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_allreduce(c, sendbuf, recvbuf, count, bytes, type, op, req);
}

GC_API gcoll_result_t gcoll_reduce_scatter(const void *sendbuf, void *recvbuf, size_t rcount,
					   gcoll_datatype_t type, gcoll_redop_t op,
					   gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_reduce_scatter";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_buf(sendbuf, rcount, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, rcount, "recvbuf", fn)) ||
	    (rc = check_count(rcount, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_reduce_scatter(c, sendbuf, recvbuf, rcount, bytes, type, op, req);
}

GC_API gcoll_result_t gcoll_allgather(const void *sendbuf, void *recvbuf, size_t scount,
				      gcoll_datatype_t type, gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_allgather";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(sendbuf, scount, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, scount, "recvbuf", fn)) ||
	    (rc = check_count(scount, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_allgather(c, sendbuf, recvbuf, scount, bytes, type, req);
}

GC_API gcoll_result_t gcoll_broadcast(const void *sendbuf, void *recvbuf, size_t count,
				      gcoll_datatype_t type, int root, gcoll_comm_t c,
				      gcoll_request_t *req)
{
	static const char fn[] = "gcoll_broadcast";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_root(c, root, fn)) ||
	    (c->rank == root && (rc = check_buf(sendbuf, count, "sendbuf", fn))) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_broadcast(c, sendbuf, recvbuf, bytes, type, root, req);
}

GC_API gcoll_result_t gcoll_reduce(const void *sendbuf, void *recvbuf, size_t count,
				   gcoll_datatype_t type, gcoll_redop_t op, int root,
				   gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_reduce";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) || (rc = check_op(op, fn)) ||
	    (rc = check_root(c, root, fn)) || (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (c->rank == root && (rc = check_buf(recvbuf, count, "recvbuf", fn))) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_reduce(c, sendbuf, recvbuf, count, bytes, type, op, root, req);
}

GC_API gcoll_result_t gcoll_alltoall(const void *sendbuf, void *recvbuf, size_t count,
				     gcoll_datatype_t type, gcoll_comm_t c, gcoll_request_t *req)
{
	static const char fn[] = "gcoll_alltoall";
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(sendbuf, count, "sendbuf", fn)) ||
	    (rc = check_buf(recvbuf, count, "recvbuf", fn)) ||
	    (rc = check_count(count, type, (size_t)c->nranks, fn, &bytes)))
		return rc;
	if (c->nranks == 1)
		return gc_algo_local_copy(c, recvbuf, sendbuf, bytes, req);
	return gc_algo_alltoall(c, sendbuf, recvbuf, bytes, type, req);
}

GC_API gcoll_result_t gcoll_barrier(gcoll_comm_t c, gcoll_request_t *req)
{
	gcoll_result_t rc;

	if ((rc = gc_check_common(c, "gcoll_barrier")))
		return rc;
	return gc_algo_barrier(c, req);
}

/* ------------------------------------------------------- point to point */

static gcoll_result_t p2p(int kind, void *buf, size_t count, gcoll_datatype_t type, int peer,
			  gcoll_comm_t c, gcoll_request_t *req, const char *fn)
{
	gcoll_result_t rc;
	size_t bytes = 0;

	if ((rc = gc_check_common(c, fn)) || (rc = check_type(type, fn)) ||
	    (rc = check_buf(buf, count, kind ? "recvbuf" : "sendbuf", fn)) ||
	    (rc = check_count(count, type, 1, fn, &bytes)))
		return rc;
	if (peer < 0 || peer >= c->nranks || peer == c->rank)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: peer %d invalid (nranks %d, self %d)",
			      fn, peer, c->nranks, c->rank);
	return gc_algo_p2p(c, kind, buf, bytes, type, peer, req);
}

GC_API gcoll_result_t gcoll_send(const void *sendbuf, size_t count, gcoll_datatype_t type,
				 int peer, gcoll_comm_t c, gcoll_request_t *req)
{
	return p2p(0, (void *)sendbuf, count, type, peer, c, req, "gcoll_send");
}

GC_API gcoll_result_t gcoll_recv(void *recvbuf, size_t count, gcoll_datatype_t type, int peer,
				 gcoll_comm_t c, gcoll_request_t *req)
{
	return p2p(1, recvbuf, count, type, peer, c, req, "gcoll_recv");
}

/* ---------------------------------------------------------------- groups */


GC_API gcoll_result_t gcoll_group_start(void)
{
	return gc_group_open();
}

GC_API gcoll_result_t gcoll_group_end(void)
{
	return gc_group_close();
}

/* ------------------------------------------------------------- requests */

/* A request the user may test or wait on: not NULL, and started. */
static gcoll_result_t req_usable(gcoll_request_t r, const char *fn)
{
	if (!r)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: req is NULL", fn);
	if (r->in_group)
		return gc_err(GCOLL_ERR_INVALID_USAGE, "%s: request not started (group still open)", fn);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_test(gcoll_request_t r)
{
	gcoll_result_t rc = req_usable(r, "gcoll_test");

	if (rc)
		return rc;
	rc = gc_req_test(r);
	if (rc == GCOLL_IN_PROGRESS)
		return rc;
	gc_req_free(r);
	return rc;
}

GC_API gcoll_result_t gcoll_wait(gcoll_request_t r)
{
	gcoll_result_t rc = req_usable(r, "gcoll_wait");

	if (rc)
		return rc;
	rc = gc_req_wait(r);
	gc_req_free(r);
	return rc;
}

