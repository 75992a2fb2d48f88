/* SPDX-License-Identifier: MIT */
/* Logging, error strings, small helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gc_internal.h"

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
