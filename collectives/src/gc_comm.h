/* SPDX-License-Identifier: MIT */
/* Communicators (comm.c): what the white-box tests reach of split. */
#ifndef GC_COMM_H
#define GC_COMM_H

#include "gc_util.h"

#define GC_COMM_MAGIC 0x67636f6dU

/* What each rank contributes to gcoll_comm_split (comm.c). */
struct split_info {
	int32_t color, key, rank;
	uint32_t next_ctx;
};
/* Check every rank's contribution before it is used as an index. */
gcoll_result_t gc_split_check(const struct split_info *all, int n);
/* Tests only: added to this rank's rank in its split contribution. */
extern int gc_test_split_forge;
/* tests: a rank's closing round starts this late; < 0: the rank exits
 * instead, as one that dies between its last barrier and the round */
extern int gc_test_quiesce_delay_ms;

#endif
