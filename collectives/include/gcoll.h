/* SPDX-License-Identifier: MIT */
/*
 * gcoll.h - collectives over libfabric (libgcoll).
 *
 * NCCL-shaped API: a unique id created by one process is handed to every
 * rank (out of band), each rank calls gcoll_comm_init_rank() with it, then
 * issues collectives in the same order on every rank.  Every operation takes
 * an optional request pointer: NULL means "block until done", non-NULL
 * returns a handle to be completed with gcoll_test()/gcoll_wait().
 *
 * See Documentation/collectives.md for the protocol and the environment.
 */
#ifndef GCOLL_H
#define GCOLL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define GCOLL_VERSION_MAJOR 0
#define GCOLL_VERSION_MINOR 1
#define GCOLL_VERSION_CODE (GCOLL_VERSION_MAJOR * 1000 + GCOLL_VERSION_MINOR)

#define GCOLL_UNIQUE_ID_BYTES 128

typedef struct {
	char internal[GCOLL_UNIQUE_ID_BYTES];
} gcoll_unique_id;

typedef struct gcoll_comm *gcoll_comm_t;
typedef struct gcoll_request *gcoll_request_t;
typedef struct gcoll_mem *gcoll_mem_t;

typedef enum {
	GCOLL_SUCCESS = 0,
	GCOLL_IN_PROGRESS = 1,            /* gcoll_test(): not finished yet */
	GCOLL_ERR_INVALID_ARGUMENT = 2,   /* a bad argument; the log names it */
	GCOLL_ERR_INVALID_USAGE = 3,      /* e.g. use after destroy, bad state */
	GCOLL_ERR_SYSTEM = 4,             /* a system call failed */
	GCOLL_ERR_NOMEM = 5,
	GCOLL_ERR_FABRIC = 6,             /* libfabric returned an error */
	GCOLL_ERR_TIMEOUT = 7,            /* the operation's deadline passed */
	GCOLL_ERR_ABORTED = 8,            /* the communicator was aborted */
	GCOLL_ERR_REMOTE = 9,             /* a peer failed / disconnected */
	GCOLL_ERR_BOOTSTRAP = 10,         /* bootstrap failed (connect, timeout) */
	GCOLL_ERR_MISMATCH = 11,          /* ranks disagree (nranks, rank taken) */
	GCOLL_ERR_VERSION = 12,           /* ranks run different gcoll versions */
	GCOLL_ERR_UNSUPPORTED = 13,
	GCOLL_NUM_RESULTS
} gcoll_result_t;

typedef enum {
	GCOLL_INT8 = 0,
	GCOLL_UINT8,
	GCOLL_INT32,
	GCOLL_UINT32,
	GCOLL_INT64,
	GCOLL_UINT64,
	GCOLL_FLOAT16,
	GCOLL_BFLOAT16,
	GCOLL_FLOAT32,
	GCOLL_FLOAT64,
	GCOLL_NUM_TYPES
} gcoll_datatype_t;

typedef enum {
	GCOLL_SUM = 0,
	GCOLL_PROD,
	GCOLL_MIN,
	GCOLL_MAX,
	GCOLL_AVG,
	GCOLL_NUM_OPS
} gcoll_redop_t;

/* Version of the library actually loaded (GCOLL_VERSION_CODE format). */
int gcoll_get_version(void);
const char *gcoll_get_error_string(gcoll_result_t r);
/* Last error message logged by the calling thread (never NULL). */
const char *gcoll_get_last_error(void);
size_t gcoll_type_size(gcoll_datatype_t t);

/* ---- bootstrap / communicators ---- */

/* Create a unique id and start the rendezvous server in this process (a
 * thread that lives until every rank of the communicator has connected, or
 * the bootstrap timeout). */
gcoll_result_t gcoll_get_unique_id(gcoll_unique_id *id);
/* Build a unique id from a known address (e.g. MASTER_ADDR/MASTER_PORT).
 * Exactly one process passes serve=1 and runs the rendezvous server. */
gcoll_result_t gcoll_unique_id_from_addr(gcoll_unique_id *id, const char *host,
					 int port, int serve);

gcoll_result_t gcoll_comm_init_rank(gcoll_comm_t *comm, int nranks,
				    gcoll_unique_id id, int rank);
/* Collective over comm: ranks with the same color form a new communicator,
 * ordered by (key, old rank).  color < 0 (GCOLL_SPLIT_NOCOLOR) returns NULL. */
#define GCOLL_SPLIT_NOCOLOR (-1)
gcoll_result_t gcoll_comm_split(gcoll_comm_t comm, int color, int key,
				gcoll_comm_t *newcomm);
gcoll_result_t gcoll_comm_destroy(gcoll_comm_t comm);
/* Tear the communicator down now, without talking to peers.  In-flight
 * operations complete with GCOLL_ERR_ABORTED. */
gcoll_result_t gcoll_comm_abort(gcoll_comm_t comm);
gcoll_result_t gcoll_comm_get_async_error(gcoll_comm_t comm,
					  gcoll_result_t *async_error);
gcoll_result_t gcoll_comm_count(gcoll_comm_t comm, int *nranks);
gcoll_result_t gcoll_comm_user_rank(gcoll_comm_t comm, int *rank);
/* Per-operation timeout for operations issued later on comm (0 = none). */
gcoll_result_t gcoll_comm_set_timeout(gcoll_comm_t comm, uint64_t timeout_ms);
/* Transport actually chosen: provider name, number of rails, whether the
 * provider accepted FI_MR_DMABUF, whether FI_RX_CQ_DATA is in effect. */
gcoll_result_t gcoll_comm_transport_info(gcoll_comm_t comm, const char **provider,
					 int *nrails, int *dmabuf_native,
					 int *rx_cq_data);

/* ---- memory registration ---- */

/* Register host memory for zero-copy use (optional: the library registers
 * on demand through its cache). */
gcoll_result_t gcoll_mem_register(gcoll_comm_t comm, void *buf, size_t len,
				  gcoll_mem_t *handle);
/* Register [offset, offset+len) of a dma-buf whose CPU/device mapping is at
 * va.  Uses fi_mr_regattr(FI_MR_DMABUF) when the provider supports it,
 * otherwise stages through a host mapping of the buffer. */
gcoll_result_t gcoll_mem_register_dmabuf(gcoll_comm_t comm, int fd,
					 uint64_t offset, size_t len, void *va,
					 gcoll_mem_t *handle);
/* 1 if the handle is a native dma-buf MR, 0 if it uses a fallback. */
int gcoll_mem_is_dmabuf(gcoll_mem_t handle);
/* 1 if operations on the region are staged through a host bounce buffer
 * (the provider could register neither the dma-buf nor its CPU mapping;
 * GCOLL_DMABUF_STAGE=1 forces this). */
int gcoll_mem_is_staged(gcoll_mem_t handle);
gcoll_result_t gcoll_mem_deregister(gcoll_comm_t comm, gcoll_mem_t handle);

/* ---- collectives (req == NULL: blocking) ---- */

gcoll_result_t gcoll_allreduce(const void *sendbuf, void *recvbuf, size_t count,
			       gcoll_datatype_t type, gcoll_redop_t op,
			       gcoll_comm_t comm, gcoll_request_t *req);
/* recvbuf holds nranks*sendcount elements. */
gcoll_result_t gcoll_allgather(const void *sendbuf, void *recvbuf,
			       size_t sendcount, gcoll_datatype_t type,
			       gcoll_comm_t comm, gcoll_request_t *req);
/* sendbuf holds nranks*recvcount elements. */
gcoll_result_t gcoll_reduce_scatter(const void *sendbuf, void *recvbuf,
				    size_t recvcount, gcoll_datatype_t type,
				    gcoll_redop_t op, gcoll_comm_t comm,
				    gcoll_request_t *req);
gcoll_result_t gcoll_broadcast(const void *sendbuf, void *recvbuf, size_t count,
			       gcoll_datatype_t type, int root,
			       gcoll_comm_t comm, gcoll_request_t *req);
gcoll_result_t gcoll_reduce(const void *sendbuf, void *recvbuf, size_t count,
			    gcoll_datatype_t type, gcoll_redop_t op, int root,
			    gcoll_comm_t comm, gcoll_request_t *req);
/* count elements go to each peer: buffers hold nranks*count elements. */
gcoll_result_t gcoll_alltoall(const void *sendbuf, void *recvbuf, size_t count,
			      gcoll_datatype_t type, gcoll_comm_t comm,
			      gcoll_request_t *req);
gcoll_result_t gcoll_barrier(gcoll_comm_t comm, gcoll_request_t *req);
gcoll_result_t gcoll_send(const void *sendbuf, size_t count,
			  gcoll_datatype_t type, int peer, gcoll_comm_t comm,
			  gcoll_request_t *req);
gcoll_result_t gcoll_recv(void *recvbuf, size_t count, gcoll_datatype_t type,
			  int peer, gcoll_comm_t comm, gcoll_request_t *req);

/* Operations issued between group_start and group_end are started together
 * by group_end (so matching send/recv pairs cannot deadlock); group_end then
 * waits for those issued with req == NULL.  Groups nest. */
gcoll_result_t gcoll_group_start(void);
gcoll_result_t gcoll_group_end(void);

/* GCOLL_SUCCESS (done, handle freed), GCOLL_IN_PROGRESS, or an error (handle
 * freed). */
gcoll_result_t gcoll_test(gcoll_request_t req);
gcoll_result_t gcoll_wait(gcoll_request_t req);

#ifdef __cplusplus
}
#endif
#endif /* GCOLL_H */
