/* SPDX-License-Identifier: MIT */
/* The TCP rendezvous behind gcoll_unique_id (bootstrap.c): a
 * communicator's init exchanges its addresses through it. */
#ifndef GC_BOOTSTRAP_H
#define GC_BOOTSTRAP_H

#include "gc_util.h"

struct gc_boot;
/* Connect to the root, send hello; fails with MISMATCH/VERSION/BOOTSTRAP. */
gcoll_result_t gc_boot_connect(const gcoll_unique_id *id, int rank, int nranks,
			       uint64_t timeout_ms, struct gc_boot **out);
/* All ranks contribute len bytes; out receives nranks*len bytes. */
gcoll_result_t gc_boot_allgather(struct gc_boot *b, const void *in, size_t len,
				 void *out);
bool gc_boot_quiesce(struct gc_boot *b, uint64_t max_ms);
void gc_boot_close(struct gc_boot *b);
uint64_t gc_host_id(void);

#endif
