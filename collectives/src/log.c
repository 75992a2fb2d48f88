/* SPDX-License-Identifier: MIT */
/* Logging, error strings, small helpers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <rdma/fi_errno.h>

#include "gc_util.h"

int gc_log_level = GC_LOG_ERR;
_Thread_local int gc_err_quiet;
static _Thread_local char last_error[512];

void gc_log_init(void)
{
	const char *e = getenv("GCOLL_DEBUG");

	if (e && *e)
		__atomic_store_n(&gc_log_level, atoi(e), __ATOMIC_RELAXED);
}

static void vlog(int level, const char *fmt, va_list ap)
{
	static const char *const names[] = { "", "ERROR", "INFO", "TRACE" };
	char buf[640];
	int n;

	n = snprintf(buf, sizeof(buf), "gcoll[%d] %s: ", (int)getpid(),
		     names[level > 3 ? 3 : level]);
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", buf);
}

void gc_log(int level, const char *fmt, ...)
{
	va_list ap;

	if (level > gc_log_lvl())
		return;
	va_start(ap, fmt);
	vlog(level, fmt, ap);
	va_end(ap);
}

gcoll_result_t gc_err(gcoll_result_t r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	gc_log(gc_err_quiet ? GC_LOG_INFO : GC_LOG_ERR, "%s (%s)", last_error,
	       gcoll_get_error_string(r));
	return r;
}

/* A libfabric call failed with ret (a negative fi_errno).  Here, beside
 * gc_err, so that every layer that talks to libfabric (mr.c, transport.c,
 * xfer.c) reports its failures the same way without calling up. */
gcoll_result_t gc_fi_err(int ret, const char *what)
{
	return gc_err(GCOLL_ERR_FABRIC, "%s: %s (%d)", what, fi_strerror(-ret), ret);
}

GC_API const char *gcoll_get_last_error(void)
{
	return last_error;
}

GC_API const char *gcoll_get_error_string(gcoll_result_t r)
{
	switch (r) {
	case GCOLL_SUCCESS: return "success";
	case GCOLL_IN_PROGRESS: return "operation in progress";
	case GCOLL_ERR_INVALID_ARGUMENT: return "invalid argument";
	case GCOLL_ERR_INVALID_USAGE: return "invalid usage";
	case GCOLL_ERR_SYSTEM: return "system call failed";
	case GCOLL_ERR_NOMEM: return "out of memory";
	case GCOLL_ERR_FABRIC: return "libfabric error";
	case GCOLL_ERR_TIMEOUT: return "operation timed out";
	case GCOLL_ERR_ABORTED: return "communicator aborted";
	case GCOLL_ERR_REMOTE: return "remote peer failed";
	case GCOLL_ERR_BOOTSTRAP: return "bootstrap failed";
	case GCOLL_ERR_MISMATCH: return "ranks disagree on communicator parameters";
	case GCOLL_ERR_VERSION: return "library version mismatch between ranks";
	case GCOLL_ERR_UNSUPPORTED: return "unsupported";
	default: return "unknown error code";
	}
}

GC_API int gcoll_get_version(void)
{
	return GCOLL_VERSION_CODE;
}

uint64_t gc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t gc_now_ms(void)
{
	return gc_now_ns() / 1000000;
}

uint64_t gc_env_u64(const char *name, uint64_t def)
{
	const char *e = getenv(name);
	char *end;
	unsigned long long v;

	if (!e || !*e)
		return def;
	v = strtoull(e, &end, 0);
	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	else if (*end == 'g' || *end == 'G')
		v <<= 30;
	return v;
}

void gc_random_fill(void *buf, size_t len)
{
	static uint64_t ctr;
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		p += n;
		len -= (size_t)n;
	}
	/* no randomness from the kernel: splitmix64 over time, pid and a counter */
	for (uint64_t h = gc_now_ns() ^ ((uint64_t)getpid() << 40) ^
			  __atomic_add_fetch(&ctr, 1, __ATOMIC_RELAXED) * 0x9e3779b97f4a7c15ull;
	     len; len--) {
		uint64_t z = (h += 0x9e3779b97f4a7c15ull);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		*p++ = (unsigned char)(z ^ (z >> 31));
	}
}

uint64_t gc_random_u64(void)
{
	uint64_t v;

	gc_random_fill(&v, sizeof(v));
	return v;
}
