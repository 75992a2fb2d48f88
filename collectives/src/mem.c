/* SPDX-License-Identifier: MIT */
/*
 * User memory registration.  dma-buf: fi_mr_regattr(FI_MR_DMABUF) when the
 * provider accepted it at init (probed with a memfd).  Otherwise the
 * fallback registers the caller's CPU mapping of the dma-buf (va) as ordinary
 * host memory, and if the provider refuses that too (device memory mapped
 * with VM_PFNMAP cannot be pinned by verbs), stages it: operations on the
 * region run on a registered host bounce buffer, with the inputs copied in
 * before and the outputs copied back after (see gc_stage() in stage.c).
 * shm is a case of its own: it accepts the dma-buf (as host memory) but its
 * peers copy with process_vm_readv/writev, which cannot reach a VM_PFNMAP
 * mapping (EIO or EFAULT): such regions are staged from the start.
 * Every registration here starts with send access only; the first
 * operation that receives into it adds a remote-writable one (gc_mr_role
 * in mr.c), so a region that is only sent from stays unwritable to peers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "gc_registry.h"
#include "gc_stage.h"

/* Can a peer process reach [va, va + len) with process_vm_readv (CMA)?
 * Asked of the first and the last byte, through this process's own pid. */
static bool cma_reachable(const void *va, size_t len)
{
	char b;
	struct iovec l = { &b, 1 };
	struct iovec r[2] = { { (void *)va, 1 }, { (char *)va + len - 1, 1 } };

	for (int i = 0; i < 2; i++)
		if (process_vm_readv(getpid(), &l, 1, &r[i], 1, 0) != 1)
			return false;
	return true;
}

GC_API gcoll_result_t gcoll_mem_register(gcoll_comm_t c, void *buf, size_t len, gcoll_mem_t *h)
{
	static const char fn[] = "gcoll_mem_register";
	struct gcoll_mem *m;
	gcoll_result_t rc;

	if ((rc = gc_check_comm(c, fn)))
		return rc;
	if (!buf)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: buf is NULL", fn);
	if (!len)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: len is 0", fn);
	if (!h)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: handle is NULL", fn);
	m = calloc(1, sizeof(*m));
	if (!m)
		return GCOLL_ERR_NOMEM;
	rc = gc_mr_reg(c->tp, buf, len, -1, 0, &m->mr);
	if (rc) {
		free(m);
		return rc;
	}
	gc_mr_pin(c->tp, m->mr);
	m->comm = c;
	*h = m;
	return GCOLL_SUCCESS;
}

/* Register the dma-buf itself (FI_MR_DMABUF, when the provider took it at
 * init) or, failing that, its CPU mapping as ordinary host memory.  An
 * error when neither works, or when GCOLL_DMABUF_STAGE=1 asks to stage. */
static gcoll_result_t reg_direct(struct gcoll_comm *c, struct gcoll_mem *m, int fd,
				 uint64_t offset, size_t len, void *va, const char *fn)
{
	gcoll_result_t rc;

	if (c->tp->dmabuf_native) {
		rc = gc_mr_reg(c->tp, va, len, fd, offset, &m->mr);
		if (!rc) {
			m->dmabuf = 1;
			return GCOLL_SUCCESS;
		}
		GC_INFO("%s: FI_MR_DMABUF failed, using the fallback", fn);
	}
	if (gc_env_u64("GCOLL_DMABUF_STAGE", 0))
		return GCOLL_ERR_UNSUPPORTED;
	return gc_mr_reg(c->tp, va, len, -1, 0, &m->mr);
}

/* The last resort: a registered host bounce buffer the operations on
 * [va, va + len) run on (stage.c).  On failure m->host is freed again. */
static gcoll_result_t reg_staged(struct gcoll_comm *c, struct gcoll_mem *m, int fd, size_t len,
				 void *va, const char *fn)
{
	gcoll_result_t rc;

	m->host = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (!m->host)
		return GCOLL_ERR_NOMEM;
	rc = gc_mr_reg(c->tp, m->host, len, -1, 0, &m->mr);
	if (rc) {
		free(m->host);
		return rc;
	}
	m->staged = true;
	m->va = va;
	m->len = len;
	m->next = c->staged;
	c->staged = m;
	GC_INFO("%s: dma-buf fd %d staged through a host bounce buffer", fn, fd);
	return GCOLL_SUCCESS;
}

GC_API gcoll_result_t gcoll_mem_register_dmabuf(gcoll_comm_t c, int fd, uint64_t offset,
						size_t len, void *va, gcoll_mem_t *h)
{
	static const char fn[] = "gcoll_mem_register_dmabuf";
	struct gcoll_mem *m;
	gcoll_result_t rc;

	if ((rc = gc_check_comm(c, fn)))
		return rc;
	if (fd < 0)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: fd %d is not a file descriptor", fn, fd);
	if (!len)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: len is 0", fn);
	if (!h)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: handle is NULL", fn);
	if (!va)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT,
			      "%s: va is NULL (the address collectives will use for this buffer)", fn);
	m = calloc(1, sizeof(*m));
	if (!m)
		return GCOLL_ERR_NOMEM;
	m->comm = c;
	/* peers that copy through this CPU mapping must be able to reach it,
	 * else it is staged from the start */
	if (c->tp->peer_cma && !cma_reachable(va, len)) {
		GC_INFO("%s: dma-buf fd %d: %s peers cannot read its CPU mapping (VM_PFNMAP), staging",
			fn, fd, c->tp->prov_name);
		rc = GCOLL_ERR_UNSUPPORTED;
	} else {
		rc = reg_direct(c, m, fd, offset, len, va, fn);
	}
	if (rc)
		rc = reg_staged(c, m, fd, len, va, fn);
	if (rc) {
		free(m);
		return rc;
	}
	gc_mr_pin(c->tp, m->mr);
	*h = m;
	return GCOLL_SUCCESS;
}

GC_API int gcoll_mem_is_staged(gcoll_mem_t h)
{
	return h ? h->staged : 0;
}

GC_API int gcoll_mem_is_dmabuf(gcoll_mem_t h)
{
	return h ? h->dmabuf : 0;
}

GC_API gcoll_result_t gcoll_mem_deregister(gcoll_comm_t c, gcoll_mem_t h)
{
	static const char fn[] = "gcoll_mem_deregister";
	gcoll_result_t rc;

	if ((rc = gc_check_comm(c, fn)))
		return rc;
	if (!h)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: handle is NULL", fn);
	if (h->comm != c)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: handle belongs to another communicator", fn);
	if (gc_mr_users(h->mr))
		return gc_err(GCOLL_ERR_INVALID_USAGE,
			      "%s: memory is in use by %d transfers; wait for them first", fn,
			      gc_mr_users(h->mr));
	if (h->staged) {
		for (struct gcoll_mem **pp = &c->staged; *pp; pp = &(*pp)->next)
			if (*pp == h) {
				*pp = h->next;
				break;
			}
	}
	gc_mr_unpin(c->tp, h->mr);
	free(h->host);
	free(h);
	return GCOLL_SUCCESS;
}
