/* SPDX-License-Identifier: MIT */
/* The registry of live communicators and the handle checks every entry
 * point makes (registry.c). */
#ifndef GC_REGISTRY_H
#define GC_REGISTRY_H

#include "gc_xfer.h"

void gc_registry_add(struct gcoll_comm *c);
void gc_registry_del(struct gcoll_comm *c);
/* comm is a live communicator (in the registry) */
gcoll_result_t gc_check_comm(struct gcoll_comm *c, const char *fn);
/* ... and not in error state */
gcoll_result_t gc_check_common(struct gcoll_comm *c, const char *fn);

#endif
