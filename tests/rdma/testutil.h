/* SPDX-License-Identifier: GPL-2.0 */
/*
 * testutil.h - what the RDMA test programs share.  The tests proper are
 * kselftests (kselftest_harness.h, included first): a check is EXPECT_*()
 * or ASSERT_*().  tap_ok() is plain TAP for what runs outside the harness
 * (verbs_test --hold-ah; fault_xfer, which calls it ok()): it prints one
 * numbered point and counts failures; the program prints the plan
 * ("1..tap_n") and exits non-zero when tap_failed is set.  A kselftest has
 * no ok(), so a check written the old way does not build.
 */
#ifndef GAUDI_RDMA_TESTUTIL_H
#define GAUDI_RDMA_TESTUTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

static int tap_n, tap_failed;

static inline void tap_ok(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static inline void tap_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
}

#ifndef __KSELFTEST_HARNESS_H
#define ok tap_ok
#endif

/* The verbs device called @name, opened; NULL if there is none. */
static inline struct ibv_context *open_device_by_name(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	if (!list)
		return NULL;
	for (i = 0; list[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

#endif
