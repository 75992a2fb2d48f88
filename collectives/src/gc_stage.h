/* SPDX-License-Identifier: MIT */
/* dma-buf staging (stage.c): operations on a staged region run on its
 * registered host bounce buffer, with copies before and after. */
#ifndef GC_STAGE_H
#define GC_STAGE_H

#include "gc_sched.h"

/* A user registration (mem.c).  Staged dma-bufs keep a registered host
 * bounce buffer; operations on addresses inside [va, va+len) run on the
 * bounce buffer with copies before (inputs) and after (outputs). */
struct gcoll_mem {
	struct gcoll_comm *comm;
	struct gc_mr *mr;
	int dmabuf;
	bool staged;
	void *va, *host;
	size_t len;
	struct gcoll_mem *next;     /* comm's list of staged regions */
};

/* The staged region holding [p, p+len), or NULL. */
struct gcoll_mem *gc_stage_find(struct gcoll_comm *c, const void *p, size_t len);
/* If [buf, buf+len) lies in a staged dma-buf region, the matching address
 * in its bounce buffer (copies queued on r); else buf. */
void *gc_stage(struct gcoll_request *r, const void *buf, size_t len, bool in, bool out);
/* Run n queued copies. */
void gc_stage_copy(const struct gc_copy *cp, int n);

#endif
