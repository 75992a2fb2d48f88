/* SPDX-License-Identifier: MIT */
/* The bottom layer of libgcoll: logging and errors (log.c), clocks, the
 * environment, random numbers, and the reduction kernels (reduce.c).
 * Every other file builds on it. */
#ifndef GC_UTIL_H
#define GC_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gcoll.h"

#define GC_API __attribute__((visibility("default")))
#define GC_MAX_RANKS 4096          /* 12 bits of the tag */

/* ---- logging (log.c) ---- */
enum { GC_LOG_NONE = 0, GC_LOG_ERR = 1, GC_LOG_INFO = 2, GC_LOG_TRACE = 3 };
/* read and written through gc_log_lvl() / gc_log_init() only: every
 * gcoll_comm_init_rank re-reads GCOLL_DEBUG while other threads may be
 * logging on their own communicators */
extern int gc_log_level;
static inline int gc_log_lvl(void)
{
	return __atomic_load_n(&gc_log_level, __ATOMIC_RELAXED);
}
void gc_log_init(void);
void gc_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Log an error (always recorded for gcoll_get_last_error) and return r. */
/* > 0: gc_err() logs at INFO level (a failure the caller expects and
 * handles, like probing for a provider) */
extern _Thread_local int gc_err_quiet;
gcoll_result_t gc_err(gcoll_result_t r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A libfabric call `what` failed with ret (< 0): GCOLL_ERR_FABRIC, logged. */
gcoll_result_t gc_fi_err(int ret, const char *what);
#define GC_TRACE(...) do { if (gc_log_lvl() >= GC_LOG_TRACE) gc_log(GC_LOG_TRACE, __VA_ARGS__); } while (0)
#define GC_INFO(...) do { if (gc_log_lvl() >= GC_LOG_INFO) gc_log(GC_LOG_INFO, __VA_ARGS__); } while (0)

uint64_t gc_now_ms(void);
uint64_t gc_now_ns(void);
uint64_t gc_env_u64(const char *name, uint64_t def);
/* len random bytes: getrandom(), or if the kernel cannot give them a hash
 * of the time, pid and a counter (distinct, but guessable) */
void gc_random_fill(void *buf, size_t len);
uint64_t gc_random_u64(void);

/* ---- reduction kernels (reduce.c) ---- */
size_t gc_type_size(gcoll_datatype_t t);
/* dst = a op b; dst may be exactly a or b (never a partial overlap). */
void gc_reduce(void *dst, const void *a, const void *b, size_t count,
	       gcoll_datatype_t t, gcoll_redop_t op);
/* buf /= n (for GCOLL_AVG). */
void gc_scale_avg(void *buf, size_t count, gcoll_datatype_t t, int n);

/* A vector of base * n + rem elements cut into n chunks that differ by at
 * most one element (the first rem chunks have one more): where chunk i
 * starts and how long it is, in elements.  The ring and the fast path's
 * slices cut the same way. */
struct gc_chunks {
	size_t base, rem;
};
static inline size_t gc_ck_off(const struct gc_chunks *k, int i)
{
	return (size_t)i * k->base + ((size_t)i < k->rem ? (size_t)i : k->rem);
}
static inline size_t gc_ck_len(const struct gc_chunks *k, int i)
{
	return k->base + ((size_t)i < k->rem ? 1 : 0);
}

#endif
