/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - TAP output of the RDMA test programs (verbs_test, fault_xfer):
 * ok() prints one numbered point and counts failures; the program prints
 * the plan ("1..tap_n") and exits non-zero when tap_failed is set.
 */
#ifndef GAUDI_RDMA_TESTS_TAP_H
#define GAUDI_RDMA_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

static int tap_n, tap_failed;

static void ok(bool cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
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

#endif
