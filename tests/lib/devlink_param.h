/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A gaudi_nic device's devlink params, read and set with iproute2's
 * devlink as a user does (tests/rdma/limits_test.c: the per-context
 * limits; tests/accel/gn_accel_test.c: the HBM quota).
 */
#ifndef GN_TESTS_DEVLINK_PARAM_H
#define GN_TESTS_DEVLINK_PARAM_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The devlink handle (platform/gaudi_nic.N) of the device behind the
 * sysfs link @path, whose target is @up levels below the platform device
 * (0: it is the device; 1: one of its auxiliary devices).  0 or -1.
 */
static inline int dl_handle(const char *path, int up, char *buf, size_t len)
{
	char real[PATH_MAX], *slash;

	if (!realpath(path, real))
		return -1;
	for (; up > 0; up--) {
		slash = strrchr(real, '/');
		if (!slash)
			return -1;
		*slash = 0;
	}
	slash = strrchr(real, '/');
	if (!slash)
		return -1;
	snprintf(buf, len, "platform/%s", slash + 1);
	return 0;
}

/* The runtime value of param @name of @handle into @buf: 0 or -1. */
static inline int dl_param_get(const char *handle, const char *name,
			       char *buf, size_t len)
{
	static const char key[] = "cmode runtime value ";
	char cmd[384], line[256];
	int ret = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "devlink dev param show %s name %s 2>&1",
		 handle, name);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *v = strstr(line, key);

		if (v && ret) {
			snprintf(buf, len, "%s", v + strlen(key));
			buf[strcspn(buf, "\n")] = 0;
			ret = 0;
		}
	}
	if (pclose(p))
		ret = -1;
	if (ret)
		errno = ENOENT;
	return ret;
}

/* Set param @name of @handle to @val (a literal), runtime: 0 or EINVAL. */
static inline int dl_param_set(const char *handle, const char *name,
			       const char *val)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "devlink dev param set %s name %s value '%s' cmode runtime >/dev/null 2>&1",
		 handle, name, val);
	return system(cmd) ? EINVAL : 0;
}

#endif /* GN_TESTS_DEVLINK_PARAM_H */
