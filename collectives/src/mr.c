/* SPDX-License-Identifier: MIT */
/*
 * Registration cache of the libfabric transport: registrations with only
 * the access a buffer's role needs (GC_ACC_*), cached by address range;
 * user, scratch and dma-buf registrations are pinned in it.  Those serve
 * every role with two registrations of the same range: one for sends
 * (no remote access) from the start, and a remote-writable twin made the
 * first time the range is received into.  A buffer that is only sent from
 * never has a registration a peer may write.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rdma/fi_domain.h>

#include "gc_mr.h"
#include "gc_transport.h"

gcoll_result_t gc_mr_reg(struct gc_transport *tp, void *buf, size_t len, int dmabuf_fd,
			 uint64_t dmabuf_off, struct gc_mr **out)
{
	gcoll_result_t rc;
	int fd = -1;

	/* the twin is registered later, from this fd: the caller may close
	 * its own, and the number may be reused for another file by then */
	if (dmabuf_fd >= 0) {
		fd = fcntl(dmabuf_fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0)
			return gc_err(GCOLL_ERR_SYSTEM,
				      "registration: cannot duplicate dma-buf fd %d: %s (raise the open file limit?)",
				      dmabuf_fd, strerror(errno));
	}
	rc = gc_mr_reg_access(tp, buf, len, fd, dmabuf_off, GC_ACC_SRC, out);
	if (rc) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	(*out)->dmabuf_fd = fd;
	(*out)->dmabuf_off = dmabuf_off;
	return GCOLL_SUCCESS;
}

gcoll_result_t gc_mr_role(struct gc_transport *tp, struct gc_mr *m, uint64_t access,
			  struct gc_mr **out)
{
	gcoll_result_t rc;

	if ((m->access & access) == access) {
		*out = m;
	} else if ((GC_ACC_DST & access) == access) {
		if (!m->twin) {
			rc = gc_mr_reg_access(tp, (void *)m->base, m->len, m->dmabuf_fd,
					      m->dmabuf_off, GC_ACC_DST, &m->twin);
			if (rc)
				return gc_err(rc, "registration: %zu bytes at %p are registered for sends; registering them to receive into failed%s",
					      m->len, (void *)m->base,
					      m->dmabuf_fd >= 0 ? " (a dma-buf exported read-only? export it O_RDWR to receive into it)" : "");
			m->twin->pinned = m->pinned;
		}
		*out = m->twin;
	} else {
		return gc_err(GCOLL_ERR_INVALID_USAGE,
			      "registration: no role of %p has access 0x%llx", (void *)m->base,
			      (unsigned long long)access);
	}
	(*out)->users++;
	return GCOLL_SUCCESS;
}

int gc_mr_users(const struct gc_mr *m)
{
	return m->users + (m->twin ? m->twin->users : 0);
}

/* The one place that builds libfabric registrations: of host memory, and
 * of a dma-buf (fd, offset) whose CPU mapping starts at buf.  Both return 0
 * or a negative libfabric error and log nothing, so that transport.c's
 * probe can try a registration the provider may refuse. */
int gc_mr_reg_host(struct gc_transport *tp, void *buf, size_t len, uint64_t access,
		   struct fid_mr **out)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_mr_attr attr = { .mr_iov = &iov, .iov_count = 1, .access = access,
				   .requested_key = tp->next_key++,
				   .iface = FI_HMEM_SYSTEM };

	return fi_mr_regattr(tp->domain, &attr, 0, out);
}

int gc_mr_reg_dmabuf(struct gc_transport *tp, int fd, uint64_t off, void *buf, size_t len,
		     uint64_t access, struct fid_mr **out)
{
	struct fi_mr_dmabuf db = { .fd = fd, .offset = off, .len = len,
				   .base_addr = (char *)buf - off };
	struct fi_mr_attr attr = { .dmabuf = &db, .iov_count = 1, .access = access,
				   .requested_key = tp->next_key++,
				   .iface = FI_HMEM_SYSTEM };

	return fi_mr_regattr(tp->domain, &attr, FI_MR_DMABUF, out);
}

gcoll_result_t gc_mr_reg_access(struct gc_transport *tp, void *buf, size_t len, int dmabuf_fd,
				uint64_t dmabuf_off, uint64_t access, struct gc_mr **out)
{
	struct gc_mr *m;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return GCOLL_ERR_NOMEM;
	m->dmabuf_fd = -1;
	ret = dmabuf_fd >= 0
		? gc_mr_reg_dmabuf(tp, dmabuf_fd, dmabuf_off, buf, len, access, &m->mr)
		: gc_mr_reg_host(tp, buf, len, access, &m->mr);
	if (ret) {
		free(m);
		return gc_fi_err(ret, dmabuf_fd >= 0 ? "fi_mr_regattr(FI_MR_DMABUF)" : "fi_mr_regattr");
	}
	m->base = (uintptr_t)buf;
	m->len = len;
	m->access = access;
	m->desc = fi_mr_desc(m->mr);
	m->key = fi_mr_key(m->mr);
	*out = m;
	return GCOLL_SUCCESS;
}

void gc_mr_free(struct gc_transport *tp, struct gc_mr *m)
{
	if (!m)
		return;
	gc_mr_free(tp, m->twin);
	if (m->mr)
		fi_close(&m->mr->fid);
	if (m->dmabuf_fd >= 0)
		close(m->dmabuf_fd);
	free(m);
}

static void cache_insert(struct gc_transport *tp, struct gc_mr *m)
{
	m->next = tp->cache;
	tp->cache = m;
	tp->cache_n++;
	/* evict least recently used idle entries beyond the limit */
	while (tp->cache_n > tp->cache_max) {
		struct gc_mr **pp, **victim = NULL;

		for (pp = &tp->cache; *pp; pp = &(*pp)->next)
			if (!(*pp)->pinned && !(*pp)->users && *pp != m &&
			    (!victim || (*pp)->last_use < (*victim)->last_use))
				victim = pp;
		if (!victim)
			break;
		struct gc_mr *v = *victim;

		*victim = v->next;
		tp->cache_n--;
		gc_mr_free(tp, v);
	}
}

/* Find (or create) a registration covering [buf, buf+len) with access.
 * The cache is keyed by access too: a send buffer never borrows a receive
 * target's registration (and its remote write).  A pinned one serves every
 * role, through its twin for receives. */
gcoll_result_t gc_mr_lookup(struct gc_transport *tp, const void *buf, size_t len,
			    uint64_t access, struct gc_mr **out)
{
	static uint64_t tick;
	uintptr_t a = (uintptr_t)buf, pg = 4096, lo, hi;
	struct gc_mr *m;
	gcoll_result_t rc;

	for (m = tp->cache; m; m = m->next) {
		if (a < m->base || a + len > m->base + m->len)
			continue;
		if (m->pinned) {
			m->last_use = ++tick;
			return gc_mr_role(tp, m, access, out);
		}
		if (m->access == access) {
			m->users++;
			m->last_use = ++tick;
			*out = m;
			return GCOLL_SUCCESS;
		}
	}
	lo = a & ~(pg - 1);
	hi = (a + len + pg - 1) & ~(pg - 1);
	rc = gc_mr_reg_access(tp, (void *)lo, hi - lo, -1, 0, access, &m);
	if (rc)
		return rc;
	m->users = 1;
	m->last_use = ++tick;
	cache_insert(tp, m);
	*out = m;
	return GCOLL_SUCCESS;
}

/* A pinned registration made by the user or the arena. */
void gc_mr_unpin(struct gc_transport *tp, struct gc_mr *m)
{
	struct gc_mr **pp;

	for (pp = &tp->cache; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			tp->cache_n--;
			break;
		}
	gc_mr_free(tp, m);
}

void gc_mr_pin(struct gc_transport *tp, struct gc_mr *m)
{
	m->pinned = 1;
	m->next = tp->cache;
	tp->cache = m;
	tp->cache_n++;
}
