/* SPDX-License-Identifier: MIT */
/* Memory registrations and their cache (mr.c).  One layer with the
 * transport: mr.c reads the transport's domain and cache, transport.c
 * registers its own buffers here. */
#ifndef GC_MR_H
#define GC_MR_H

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>

#include "gc_util.h"

struct gc_transport;

struct gc_mr {
	struct gc_mr *next;
	uintptr_t base;
	size_t len;
	struct fid_mr *mr;
	void *desc;
	uint64_t key;
	uint64_t access;   /* FI_* access bits it was registered with */
	int pinned;        /* user registration: never evicted */
	int users;         /* in-flight transfers using it */
	uint64_t last_use;
	/* a registration for every role (gc_mr_reg): registered for sends
	 * only; its remote-writable twin is added when the range is first
	 * received into (gc_mr_role), from the same memory (dma-buf: its own
	 * duplicate of the fd) */
	struct gc_mr *twin;
	int dmabuf_fd;     /* owned duplicate, or -1 */
	uint64_t dmabuf_off;
};

/* Access a registration gets: only what the buffer's role needs.  Sources
 * of sends and RDMA writes get no remote access at all; receive targets get
 * remote write (rendezvous) but never remote read; the sender's control
 * mailbox only FI_RECV.  User, scratch and dma-buf registrations serve
 * both roles with two registrations: GC_ACC_SRC from the start, GC_ACC_DST
 * (the twin) once the range is received into; a buffer that is only sent
 * from is never remote-writable. */
#define GC_ACC_SRC (FI_SEND | FI_WRITE | FI_READ)
#define GC_ACC_DST (FI_RECV | FI_REMOTE_WRITE)
#define GC_ACC_MAILBOX FI_RECV
/* Find (or make and cache) a registration covering [buf, buf+len) with
 * exactly access, or the registration for that role of a pinned one. */
gcoll_result_t gc_mr_lookup(struct gc_transport *tp, const void *buf, size_t len,
			    uint64_t access, struct gc_mr **out);
/* A registration for every role (user, scratch, dma-buf): GC_ACC_SRC now,
 * the twin later (gc_mr_role).  A dma-buf fd is duplicated and kept. */
gcoll_result_t gc_mr_reg(struct gc_transport *tp, void *buf, size_t len,
			 int dmabuf_fd, uint64_t dmabuf_off, struct gc_mr **out);
/* The registration of m's range for access (m itself, or its twin,
 * registered on first use), with a user taken; GCOLL_ERR_INVALID_USAGE if
 * neither can have it. */
gcoll_result_t gc_mr_role(struct gc_transport *tp, struct gc_mr *m, uint64_t access,
			  struct gc_mr **out);
/* Transfers using m or its twin. */
int gc_mr_users(const struct gc_mr *m);
/* Register host memory, or a dma-buf whose CPU mapping starts at buf: 0
 * or a negative libfabric error, nothing logged (mr.c only builds these). */
int gc_mr_reg_host(struct gc_transport *tp, void *buf, size_t len, uint64_t access,
		   struct fid_mr **out);
int gc_mr_reg_dmabuf(struct gc_transport *tp, int fd, uint64_t off, void *buf, size_t len,
		     uint64_t access, struct fid_mr **out);
gcoll_result_t gc_mr_reg_access(struct gc_transport *tp, void *buf, size_t len,
				int dmabuf_fd, uint64_t dmabuf_off, uint64_t access,
				struct gc_mr **out);
void gc_mr_free(struct gc_transport *tp, struct gc_mr *m);
void gc_mr_unpin(struct gc_transport *tp, struct gc_mr *m);
void gc_mr_pin(struct gc_transport *tp, struct gc_mr *m);

#endif
