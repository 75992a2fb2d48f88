/* SPDX-License-Identifier: MIT */
/* Test helpers: fork N ranks, TAP output, shared result area. */
#ifndef TUTIL_H
#define TUTIL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gcoll.h"

typedef int (*tu_rank_fn)(int rank, int nranks, gcoll_unique_id id, void *arg);

/* Fork nranks children running fn (exit code = return value); kill them all
 * after timeout_s.  status[r] = exit code, or 128+signal, or -1 on timeout.
 * Returns the number of ranks that did not exit 0. */
int tu_run(int nranks, tu_rank_fn fn, void *arg, int timeout_s, int *status);
/* Shared (MAP_SHARED) zeroed memory visible to forked children. */
void *tu_shared(size_t len);

void tu_plan_lazy(void);
void tu_ok(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void tu_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int tu_done(void);   /* prints the plan, returns exit code */
double tu_now(void);
#endif
