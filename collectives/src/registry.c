/* SPDX-License-Identifier: MIT */
/*
 * The registry of live communicators, which every entry point checks a
 * handle against before it touches it.  It sits below the public files
 * (comm.c, coll.c, mem.c) so that they all validate handles the same way
 * without calling each other: comm.c adds and removes communicators, the
 * others only look them up.
 */
#include <pthread.h>

#include "gc_registry.h"

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gcoll_comm *registry;

void gc_registry_add(struct gcoll_comm *c)
{
	pthread_mutex_lock(&reg_lock);
	c->reg_next = registry;
	registry = c;
	pthread_mutex_unlock(&reg_lock);
}

void gc_registry_del(struct gcoll_comm *c)
{
	struct gcoll_comm **pp;

	pthread_mutex_lock(&reg_lock);
	for (pp = &registry; *pp; pp = &(*pp)->reg_next)
		if (*pp == c) {
			*pp = c->reg_next;
			break;
		}
	pthread_mutex_unlock(&reg_lock);
}

gcoll_result_t gc_check_comm(struct gcoll_comm *c, const char *fn)
{
	struct gcoll_comm *i;

	if (!c)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "%s: comm is NULL", fn);
	pthread_mutex_lock(&reg_lock);
	for (i = registry; i && i != c; i = i->reg_next)
		;
	pthread_mutex_unlock(&reg_lock);
	if (!i)
		return gc_err(GCOLL_ERR_INVALID_USAGE,
			      "%s: comm %p is not a live communicator (destroyed or aborted?)",
			      fn, (void *)c);
	return GCOLL_SUCCESS;
}

gcoll_result_t gc_check_common(struct gcoll_comm *c, const char *fn)
{
	gcoll_result_t rc = gc_check_comm(c, fn);

	if (rc)
		return rc;
	if (!c->async_err && c->tp->fatal)
		c->async_err = c->tp->fatal;
	if (c->async_err)
		return gc_err(c->async_err, "%s: communicator is in error state (%s); abort or destroy it",
			      fn, gcoll_get_error_string(c->async_err));
	return GCOLL_SUCCESS;
}
