/* SPDX-License-Identifier: MIT */
/*
 * Staging of dma-bufs the provider cannot register (mem.c decides which):
 * an operation on an address inside a staged region runs on the region's
 * registered host bounce buffer instead, with its inputs copied in before
 * the request starts and its outputs copied back after it completes.  The
 * algorithms and the fast path ask gc_stage() for the address to use; the
 * request engine (sched.c) runs the copies it queued.
 */
#include <stdlib.h>
#include <string.h>

#include "gc_stage.h"

struct gcoll_mem *gc_stage_find(struct gcoll_comm *c, const void *p, size_t len)
{
	uintptr_t a = (uintptr_t)p;

	for (struct gcoll_mem *m = c->staged; m; m = m->next)
		if (a >= (uintptr_t)m->va && a + len <= (uintptr_t)m->va + m->len)
			return m;
	return NULL;
}

void gc_stage_copy(const struct gc_copy *cp, int n)
{
	for (int i = 0; i < n; i++)
		memcpy(cp[i].dst, cp[i].src, cp[i].len);
}

static int add_copy(struct gc_copy **arr, int *n, void *dst, const void *src, size_t len)
{
	struct gc_copy *a = realloc(*arr, sizeof(**arr) * (size_t)(*n + 1));

	if (!a)
		return -1;
	a[*n] = (struct gc_copy){ dst, src, len };
	*arr = a;
	(*n)++;
	return 0;
}

/* If [buf, buf+len) lies in a staged dma-buf region, return the matching
 * address in its host bounce buffer and queue the copies: inputs before the
 * request starts, outputs after it completes. */
void *gc_stage(struct gcoll_request *r, const void *buf, size_t len, bool in, bool out)
{
	struct gcoll_mem *m;
	char *h;

	if (!buf || !len || !r->comm->staged || !(m = gc_stage_find(r->comm, buf, len)))
		return (void *)buf;
	h = (char *)m->host + ((const char *)buf - (const char *)m->va);
	if ((in && add_copy(&r->pre, &r->npre, h, buf, len)) ||
	    (out && add_copy(&r->post, &r->npost, (void *)buf, h, len)))
		return (void *)buf;   /* out of memory: fall back to the CPU mapping */
	return h;
}
