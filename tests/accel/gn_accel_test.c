// SPDX-License-Identifier: MIT
/*
 * gn-accel-test: kselftests of the gaudi_nic accel driver (the kernel's
 * kselftest_harness.h: fixtures, EXPECT_* and ASSERT_*, KTAP output), run in
 * the VM with gaudi_nic.ko and gaudi_nic_sim.ko loaded (num_devices >= 2)
 * and, for the import tests, gaudi_nic_test_importer.ko.  Each MODE runs the tests of one
 * fixture (errno: the fixture "errors").
 *
 *   gn-accel-test basic | errno | import | stress SECONDS NPROCS | teardown
 *   gn-accel-test hold SECONDS   (helper: keeps a dma-buf without its fd)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include <drm/gaudi_nic_accel.h>

#include "devlink_param.h"
#include "hlthunk.h"
#include "kselftest_harness.h"

#define SYSDEV "/sys/bus/platform/devices/gaudi_nic.%d/gaudi_nic/%s"
#define SYSDRV "/sys/bus/platform/drivers/gaudi_nic_sim/"
#define IMPORTER "/sys/kernel/debug/gaudi_nic_test/import"
#define PG 4096ULL

/* stress: how long, how many processes (from the command line) */
static double stress_secs;
static int stress_nproc;

/* ------------------------------------------------------------ helpers */

static long long sys_read(int dev, const char *attr)
{
	char path[256], buf[64];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), SYSDEV, dev, attr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* write @s to a sysfs/debugfs file; 0 or -errno */
static int file_write(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, strlen(s)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int mem(int fd, struct drm_gaudi_nic_memory *a)
{
	return ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, a) ? -errno : 0;
}

static int raw_alloc(int fd, uint64_t size, uint64_t page, uint32_t flags,
		     uint64_t *handle)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_ALLOC,
					  .flags = flags };
	int ret;

	a.in.alloc.size = size;
	a.in.alloc.page_size = page;
	ret = mem(fd, &a);
	if (!ret && handle)
		*handle = a.out.handle;
	return ret;
}

static int raw_free(int fd, uint64_t handle)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_FREE };

	a.in.free.handle = handle;
	return mem(fd, &a);
}

static int raw_map(int fd, uint64_t handle, uint64_t hint, uint64_t *va)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_MAP };
	int ret;

	a.in.map.handle = handle;
	a.in.map.hint_addr = hint;
	ret = mem(fd, &a);
	if (!ret && va)
		*va = a.out.device_virt_addr;
	return ret;
}

static int raw_unmap(int fd, uint64_t va)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_UNMAP };

	a.in.unmap.device_virt_addr = va;
	return mem(fd, &a);
}

static int raw_export(int fd, uint64_t va, uint64_t size, uint64_t off,
		      uint32_t flags)
{
	struct drm_gaudi_nic_memory a = { .op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD };
	int ret;

	a.in.export_dmabuf_fd.device_virt_addr = va;
	a.in.export_dmabuf_fd.size = size;
	a.in.export_dmabuf_fd.offset = off;
	a.in.export_dmabuf_fd.fd_flags = flags;
	ret = mem(fd, &a);
	return ret ? ret : (int)a.out.export_dmabuf_fd.fd;
}

static uint64_t fnv(const uint8_t *p, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void pattern(uint8_t *p, uint64_t len, uint32_t seed)
{
	for (uint64_t i = 0; i < len; i++)
		p[i] = (uint8_t)(seed + i * 131);
}

struct import_res {
	unsigned int nents, maxseg;
	unsigned long long len, lo, hi, fnv;
};

/* Ask the test importer to import @dmabuf with device @dev. */
static int import(int dmabuf, const char *dev, const char *extra,
		  struct import_res *r)
{
	char cmd[128], out[256];
	int fd, ret = 0;
	ssize_t n;

	fd = open(IMPORTER, O_RDWR);
	if (fd < 0)
		return -errno;
	snprintf(cmd, sizeof(cmd), "%s %d %s%s%s",
		 extra && !strcmp(extra, "nop2p") ? "import-nop2p" : "import",
		 dmabuf, dev, extra && strcmp(extra, "nop2p") ? " " : "",
		 extra && strcmp(extra, "nop2p") ? extra : "");
	if (write(fd, cmd, strlen(cmd)) < 0) {
		ret = -errno;
		goto out;
	}
	n = pread(fd, out, sizeof(out) - 1, 0);
	if (n <= 0) {
		ret = -EIO;
		goto out;
	}
	out[n] = '\0';
	if (r && sscanf(out, "nents=%u len=%llu maxseg=%u bus_lo=%llx bus_hi=%llx fnv=%llx",
			&r->nents, &r->len, &r->maxseg, &r->lo, &r->hi,
			&r->fnv) != 6)
		ret = -EPROTO;
out:
	close(fd);
	return ret;
}

/* fdinfo value of @key in bytes (KiB/MiB units resolved), or -1 */
static long long fdinfo(int fd, const char *key)
{
	char path[64], line[256], unit[8];
	long long v = -1, x;
	size_t kl = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, kl) || line[kl] != ':')
			continue;
		unit[0] = '\0';
		if (sscanf(line + kl + 1, "%lld %7s", &x, unit) >= 1) {
			v = x;
			if (!strcmp(unit, "KiB"))
				v <<= 10;
			else if (!strcmp(unit, "MiB"))
				v <<= 20;
			else if (!strcmp(unit, "GiB"))
				v <<= 30;
		} else {
			v = 0;	/* non-numeric value: present */
		}
	}
	fclose(f);
	return v;
}

static int fdinfo_has(int fd, const char *key, const char *val)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) &&
		    (!val || strstr(line, val)))
			found = 1;
	fclose(f);
	return found;
}

static sigjmp_buf sigbus_jmp;

static void on_sigbus(int sig)
{
	(void)sig;
	siglongjmp(sigbus_jmp, 1);
}

/* 1 if reading *p raises SIGBUS */
static int touch_sigbus(volatile uint8_t *p)
{
	struct sigaction sa = { .sa_handler = on_sigbus }, old;
	int got = 0;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(sigbus_jmp, 1))
		got = 1;
	else
		(void)*p;
	sigaction(SIGBUS, &old, NULL);
	return got;
}

/* ---------------------------------------------------------------- basic */

/*
 * Each test gets gaudi_nic.0 (fd) and gaudi_nic.1 (fd2) open, and
 * gaudi_nic.0's INFO.
 */
FIXTURE(basic) {
	int fd, fd2;
	struct gaudi_nic_info_device info;
};

FIXTURE_SETUP(basic)
{
	struct drm_gaudi_nic_info ia = { 0 };

	self->fd = hlthunk_open(HLTHUNK_DEVICE_GAUDI_NIC, "gaudi_nic.0");
	ASSERT_LE(0, self->fd) TH_LOG("hlthunk_open(gaudi_nic.0): %s", strerror(errno));
	self->fd2 = hlthunk_open_by_index(1);
	ASSERT_LE(0, self->fd2) TH_LOG("hlthunk_open_by_index(1): %s", strerror(errno));
	memset(&self->info, 0xa5, sizeof(self->info));
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.return_pointer = (uintptr_t)&self->info;
	ia.return_size = sizeof(self->info);
	ASSERT_EQ(0, ioctl(self->fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia))
		TH_LOG("INFO ioctl: %s", strerror(errno));
}

FIXTURE_TEARDOWN(basic)
{
	if (self->fd2 >= 0)
		hlthunk_close(self->fd2);
	if (self->fd >= 0)
		hlthunk_close(self->fd);
}

/* INFO, hlthunk_get_hw_ip_info, the DRM version and sysfs agree */
TEST_F(basic, device_info)
{
	struct gaudi_nic_info_device info = self->info;
	struct hlthunk_hw_ip_info hw;
	int fd = self->fd;
	drmVersionPtr v;

	EXPECT_TRUE(hlthunk_get_device_name_from_fd(fd) == HLTHUNK_DEVICE_GAUDI_NIC)
	   TH_LOG("device name from fd");
	v = drmGetVersion(fd);
	EXPECT_TRUE(v && !strcmp(v->name, "gaudi_nic")) TH_LOG("DRM driver name is gaudi_nic");
	drmFreeVersion(v);

	EXPECT_TRUE(info.device_id == 0 && info.num_ports == 2 &&
	   info.hbm_size == 64ULL << 20 && info.page_size == PG &&
	   info.max_page_size == 2ULL << 20 && info.hbm_free <= info.hbm_size &&
	   info.driver_version == 0x10000 && info.pad == 0 &&
	   !strncmp(info.serial, "GNSIM0000", 9) && !info.reserved[0] &&
	   !info.reserved[3])
	   TH_LOG("INFO: id %u ports %u hbm %llu free %llu page %llu serial %.32s ver %#x",
	   info.device_id, info.num_ports, (unsigned long long)info.hbm_size,
	   (unsigned long long)info.hbm_free, (unsigned long long)info.page_size,
	   info.serial, info.driver_version);
	EXPECT_TRUE(!hlthunk_get_hw_ip_info(fd, &hw) && hw.dram_size == info.hbm_size &&
	   hw.num_nic_ports == 2 && hw.device_id == 0 &&
	   !strcmp(hw.serial, info.serial)) TH_LOG("hlthunk_get_hw_ip_info");
	EXPECT_TRUE(sys_read(0, "hbm_size") == (long long)info.hbm_size &&
	   sys_read(0, "num_ports") == 2) TH_LOG("sysfs hbm_size / num_ports");
	{
		char buf[64];

		snprintf(buf, sizeof(buf), "/sys/bus/platform/devices/gaudi_nic.0/gaudi_nic/serial");
		FILE *f = fopen(buf, "r");

		EXPECT_TRUE(f && fgets(buf, sizeof(buf), f) && !strncmp(buf, info.serial, strlen(info.serial)))
		   TH_LOG("sysfs serial matches INFO");
		if (f)
			fclose(f);
	}
}

/* alloc, CPU mmap, device map, dma-buf export, free; sysfs and fdinfo */
TEST_F(basic, alloc_map_export)
{
	struct gaudi_nic_info_device info = self->info;
	uint64_t h, va, size = 1 << 20;
	int fd = self->fd, fd2 = self->fd2, dbuf;
	long long used0, allocs0;
	uint8_t *p, *zero;

	used0 = sys_read(0, "hbm_used");
	allocs0 = sys_read(0, "mem_allocs");
	h = hlthunk_device_memory_alloc(fd, size, 0, false, false);
	EXPECT_TRUE(h != 0) TH_LOG("alloc 1 MiB non-contiguous -> handle %" PRIu64, h);
	EXPECT_TRUE(sys_read(0, "hbm_used") == used0 + (long long)size &&
	   sys_read(0, "mem_allocs") == allocs0 + 1) TH_LOG("sysfs accounting follows alloc");
	EXPECT_TRUE(fdinfo_has(fd, "drm-driver:", "gaudi_nic") &&
	   fdinfo_has(fd, "drm-client-id:", NULL)) TH_LOG("fdinfo drm-driver / drm-client-id");
	EXPECT_TRUE(fdinfo(fd, "drm-total-hbm") == (long long)size &&
	   fdinfo(fd, "drm-resident-hbm") == (long long)size &&
	   fdinfo(fd2, "drm-total-hbm") == 0) TH_LOG("fdinfo drm-total-hbm / drm-resident-hbm per client");

	p = hlthunk_device_memory_mmap(fd, h, size);
	EXPECT_TRUE(p != NULL) TH_LOG("CPU mmap of the allocation");
	zero = calloc(1, size);
	EXPECT_TRUE(p && zero && !memcmp(p, zero, size)) TH_LOG("fresh device memory reads as zeroes");
	free(zero);
	if (p) {
		pattern(p, size, 7);
		EXPECT_TRUE(sys_read(0, "mem_mmaps") >= 1) TH_LOG("sysfs counts the CPU mapping");
	}
	va = hlthunk_device_memory_map(fd, h, 0);
	EXPECT_TRUE(va >= info.device_va_base && va % PG == 0) TH_LOG("map -> device VA %#" PRIx64, va);
	dbuf = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0,
							     O_RDWR | O_CLOEXEC);
	EXPECT_TRUE(dbuf >= 0) TH_LOG("export dma-buf (whole mapping)");
	EXPECT_TRUE(fdinfo(fd, "drm-shared-hbm") == (long long)size) TH_LOG("fdinfo drm-shared-hbm counts the export");
	EXPECT_TRUE(sys_read(0, "mem_exports") >= 1) TH_LOG("sysfs counts the export");
	EXPECT_TRUE(fcntl(dbuf, F_GETFD) & FD_CLOEXEC) TH_LOG("O_CLOEXEC honoured on the dma-buf fd");
	EXPECT_TRUE(lseek(dbuf, 0, SEEK_END) == (off_t)size) TH_LOG("dma-buf size is the exported size");
	close(dbuf);
	dbuf = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, 2 * PG, size - 2 * PG, O_RDWR);
	EXPECT_TRUE(dbuf >= 0 && lseek(dbuf, 0, SEEK_END) == 2 * PG &&
	   !(fcntl(dbuf, F_GETFD) & FD_CLOEXEC)) TH_LOG("export with an offset, no O_CLOEXEC");
	close(dbuf);
	EXPECT_TRUE(!hlthunk_memory_unmap(fd, va)) TH_LOG("unmap");
	EXPECT_TRUE(hlthunk_device_memory_free(fd, h) == -1 && errno == EBUSY)
	   TH_LOG("free while CPU-mapped -> EBUSY");
	munmap(p, size);
	EXPECT_TRUE(!hlthunk_device_memory_free(fd, h)) TH_LOG("free");
	EXPECT_TRUE(sys_read(0, "hbm_used") == used0 && sys_read(0, "mem_allocs") == allocs0 &&
	   fdinfo(fd, "drm-total-hbm") == 0) TH_LOG("accounting back to start");
}

TEST_F(basic, contiguous_and_hints)
{
	struct gaudi_nic_info_device info = self->info;
	uint64_t h, h2, h3, va, va2, va3;
	int fd = self->fd;

	h = hlthunk_device_memory_alloc(fd, 4 << 20, 2 << 20, true, false);
	EXPECT_TRUE(h != 0) TH_LOG("alloc 4 MiB contiguous, 2 MiB pages");
	va = hlthunk_device_memory_map(fd, h, 0);
	EXPECT_TRUE(va && va % (2 << 20) == 0) TH_LOG("map of 2 MiB pages is 2 MiB aligned (%#" PRIx64 ")", va);
	h2 = hlthunk_device_memory_alloc(fd, 8 * PG, 0, false, false);
	va2 = hlthunk_device_memory_map(fd, h2, info.device_va_base + (1ULL << 40));
	EXPECT_TRUE(va2 == info.device_va_base + (1ULL << 40)) TH_LOG("map honours a free hint");
	h3 = hlthunk_device_memory_alloc(fd, 8 * PG, 0, false, false);
	va3 = hlthunk_device_memory_map(fd, h3, va2);
	EXPECT_TRUE(va3 && va3 != va2) TH_LOG("map with a busy hint picks another address");
	EXPECT_TRUE(!hlthunk_memory_unmap(fd, va) && !hlthunk_memory_unmap(fd, va2) &&
	   !hlthunk_memory_unmap(fd, va3)) TH_LOG("unmap all");
	EXPECT_TRUE(!hlthunk_device_memory_free(fd, h) && !hlthunk_device_memory_free(fd, h2) &&
	   !hlthunk_device_memory_free(fd, h3)) TH_LOG("free all");
}

/* isolation between two opens of the same device */
TEST_F(basic, contexts_isolated)
{
	{
		int fa = hlthunk_open_by_index(0), fb = hlthunk_open_by_index(0);
		uint64_t ha = hlthunk_device_memory_alloc(fa, 16 * PG, 0, false, false);
		uint64_t hb;
		uint8_t *pa = hlthunk_device_memory_mmap(fa, ha, 16 * PG);

		EXPECT_TRUE(fa >= 0 && fb >= 0 && ha && pa) TH_LOG("two contexts on one device");
		if (pa)
			memset(pa, 0x5a, 16 * PG);
		EXPECT_TRUE(hlthunk_device_memory_free(fb, ha) == -1 && errno == ENOENT)
		   TH_LOG("a context cannot free another's handle (ENOENT)");
		EXPECT_TRUE(hlthunk_device_memory_map(fb, ha, 0) == 0 && errno == ENOENT)
		   TH_LOG("a context cannot map another's handle (ENOENT)");
		EXPECT_TRUE(hlthunk_device_memory_mmap(fb, ha, PG) == NULL && errno == ENOENT)
		   TH_LOG("a context cannot mmap another's handle (ENOENT)");
		if (pa)
			munmap(pa, 16 * PG);
		hlthunk_device_memory_free(fa, ha);
		hb = hlthunk_device_memory_alloc(fb, 16 * PG, 0, false, false);
		pa = hlthunk_device_memory_mmap(fb, hb, 16 * PG);
		EXPECT_TRUE(pa && !memchr(pa, 0x5a, 16 * PG)) TH_LOG("memory freed by one context reads as zeroes in the next");
		if (pa)
			munmap(pa, 16 * PG);
		hlthunk_device_memory_free(fb, hb);
		hlthunk_close(fa);
		hlthunk_close(fb);
	}
}

TEST_F(basic, close_frees)
{
	uint64_t h, size = 1 << 20;
	int fd2 = self->fd2;

	/* the fd was closed with live allocations: all freed */
	h = hlthunk_device_memory_alloc(fd2, size, 0, false, false);
	hlthunk_close(fd2);
	EXPECT_TRUE(sys_read(1, "hbm_used") == 0) TH_LOG("closing an fd frees its allocations");
	self->fd2 = -1;
	EXPECT_NE(0, h);
}

/* ---------------------------------------------------------------- errno */

/* ---------------------------------------------------------- HBM quota */

/*
 * The quota is the devlink param max_hbm_mb_per_ctx of accel0's device
 * (platform/gaudi_nic.N).
 */
#define QUOTA_DEV	"/sys/class/accel/accel0/device"
#define QUOTA_PARAM	"max_hbm_mb_per_ctx"

static int quota_get(char *buf, size_t len)
{
	char handle[128];

	if (dl_handle(QUOTA_DEV, 0, handle, sizeof(handle)))
		return -1;
	return dl_param_get(handle, QUOTA_PARAM, buf, len);
}

/* @mb: a literal */
static int quota_set(const char *mb)
{
	char handle[128];

	if (dl_handle(QUOTA_DEV, 0, handle, sizeof(handle)))
		return -1;
	return dl_param_set(handle, QUOTA_PARAM, mb);
}

/*
 * Another open file of device 0 (another process): it allocates and maps
 * its own 16 MiB while the parent's file is at its quota, and no more.
 */
static int quota_child(void)
{
	uint64_t h, va;
	int fd = hlthunk_open_by_index(0), ret = 1;

	if (fd < 0)
		return 1;
	if (raw_alloc(fd, 16 << 20, 0, 0, &h) == 0 &&
	    raw_map(fd, h, 0, &va) == 0 &&
	    raw_alloc(fd, PG, 0, 0, NULL) == -EDQUOT &&
	    raw_unmap(fd, va) == 0 && raw_free(fd, h) == 0)
		ret = 0;
	hlthunk_close(fd);
	return ret;
}

/*
 * max_hbm_mb_per_ctx=16: one open file holds at most 16 MiB of the device's 64;
 * another process's file gets its own 16 meanwhile; a freed allocation
 * makes room again; a new file has a quota of its own while a closed
 * one's dma-buf still holds its memory.  Values that are not a count are
 * refused.  The parameter gets its value back.
 */
static void t_quota(struct __test_metadata *_metadata)
{
	uint64_t h1 = 0, h2 = 0, h3 = 0, va = 0;
	char saved[32], now[32];
	int fd, st = -1, refused, d = -1;
	pid_t pid;

	if (quota_get(saved, sizeof(saved))) {
		EXPECT_TRUE(0) TH_LOG("devlink dev param show ... max_hbm_mb_per_ctx: no value");
		return;
	}
	if (quota_set("16")) {
		EXPECT_TRUE(0) TH_LOG("devlink dev param set ... max_hbm_mb_per_ctx value 16: refused");
		return;
	}
	fd = hlthunk_open_by_index(0);
	if (fd < 0) {
		EXPECT_TRUE(0) TH_LOG("open: %s", strerror(errno));
		goto out;
	}
	EXPECT_TRUE(raw_alloc(fd, 17 << 20, 0, 0, NULL) == -EDQUOT)
	   TH_LOG("max_hbm_mb_per_ctx=16: an allocation of 17 MiB -> EDQUOT");
	EXPECT_TRUE(raw_alloc(fd, 8 << 20, 0, 0, &h1) == 0 &&
	   raw_alloc(fd, 8 << 20, 2 << 20, GAUDI_NIC_MEM_CONTIGUOUS, &h2) == 0)
	   TH_LOG("max_hbm_mb_per_ctx=16: two allocations of 8 MiB fit");
	EXPECT_TRUE(raw_alloc(fd, PG, 0, 0, NULL) == -EDQUOT)
	   TH_LOG("max_hbm_mb_per_ctx=16: one more page -> EDQUOT");
	pid = fork();
	if (pid == 0)
		_exit(quota_child());
	if (pid > 0)
		waitpid(pid, &st, 0);
	EXPECT_TRUE(pid > 0 && WIFEXITED(st) && !WEXITSTATUS(st))
	   TH_LOG("meanwhile another process's file allocates and maps its own 16 MiB, and no more");
	EXPECT_TRUE(raw_free(fd, h2) == 0 && raw_alloc(fd, 8 << 20, 0, 0, &h2) == 0)
	   TH_LOG("after a free of 8 MiB, 8 MiB fit again");
	EXPECT_TRUE(raw_free(fd, h2) == 0 && raw_map(fd, h1, 0, &va) == 0 &&
	   (d = raw_export(fd, va, 8 << 20, 0, O_RDWR | O_CLOEXEC)) >= 0)
	   TH_LOG("export one allocation of 8 MiB");
	hlthunk_close(fd);
	fd = hlthunk_open_by_index(0);
	EXPECT_TRUE(fd >= 0 && raw_alloc(fd, 16 << 20, 0, 0, &h3) == 0)
	   TH_LOG("close the file: a new one allocates its own 16 MiB while the dma-buf holds 8");
	if (fd >= 0)
		raw_free(fd, h3);
	if (d >= 0)
		close(d);

	refused = !!quota_set("-1") + !!quota_set("lots") +
		  !!quota_set("4294967296");
	EXPECT_TRUE(refused == 3 && !quota_get(now, sizeof(now)) && !strcmp(now, "16"))
	   TH_LOG("max_hbm_mb_per_ctx: -1, lots and 2^32 are refused (%d of 3), the value stays 16", refused);
	if (fd >= 0)
		hlthunk_close(fd);
out:
	if (quota_set(saved)) {
		EXPECT_TRUE(0) TH_LOG("restore max_hbm_mb_per_ctx to %s: refused", saved);
	}
	EXPECT_TRUE(sys_read(0, "hbm_used") == 0) TH_LOG("max_hbm_mb_per_ctx: HBM fully free again");
}

FIXTURE(errors) {};
FIXTURE_SETUP(errors) {}
FIXTURE_TEARDOWN(errors) {}

/* every ioctl refuses bad input with the errno the uAPI documents */
TEST_F(errors, ioctls)
{
	struct drm_gaudi_nic_memory a;
	struct drm_gaudi_nic_info ia;
	struct gaudi_nic_info_device info;
	uint64_t h = 0, hc = 0, va = 0, hu = 0, vu = 0;
	int fd, d;

	fd = hlthunk_open_by_index(0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));

	memset(&ia, 0, sizeof(ia));
	ia.op = 77;
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = sizeof(info);
	EXPECT_TRUE(ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && errno == EINVAL) TH_LOG("INFO unknown op -> EINVAL");
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.reserved[1] = 1;
	EXPECT_TRUE(ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && errno == EINVAL) TH_LOG("INFO reserved != 0 -> EINVAL");
	ia.reserved[1] = 0;
	ia.return_pointer = 8;
	EXPECT_TRUE(ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && errno == EFAULT) TH_LOG("INFO bad pointer -> EFAULT");
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = 0;
	EXPECT_TRUE(ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && errno == EINVAL) TH_LOG("INFO size 0 -> EINVAL");
	ia.return_size = 8;
	memset(&info, 0xff, sizeof(info));
	EXPECT_TRUE(!ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && info.device_id == 0 &&
	   info.hbm_free == ~0ULL) TH_LOG("INFO short buffer: only return_size bytes written");

	memset(&a, 0, sizeof(a));
	a.op = 99;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("MEMORY unknown op -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, 0, 0, 0, NULL) == -EINVAL) TH_LOG("alloc size 0 -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, 1ULL << 40, 0, 0, NULL) == -ENOMEM) TH_LOG("alloc larger than HBM -> ENOMEM");
	EXPECT_TRUE(raw_alloc(fd, ~0ULL & ~(PG - 1), 0, 0, NULL) == -ENOMEM) TH_LOG("alloc of 2^64-4096 -> ENOMEM");
	EXPECT_TRUE(raw_alloc(fd, 65 << 20, 0, 0, NULL) == -ENOMEM) TH_LOG("alloc above free HBM -> ENOMEM");
	EXPECT_TRUE(raw_alloc(fd, PG + 1, 0, 0, NULL) == -EINVAL) TH_LOG("alloc unaligned size -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, PG, 3 * PG, 0, NULL) == -EINVAL) TH_LOG("alloc page size not a power of 2 -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, 4 << 20, 4 << 20, 0, NULL) == -EINVAL) TH_LOG("alloc page size above max -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, 2 << 20, 1024, 0, NULL) == -EINVAL) TH_LOG("alloc page size below min -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, 3 * PG, 2 << 20, 0, NULL) == -EINVAL) TH_LOG("alloc size not multiple of page size -> EINVAL");
	EXPECT_TRUE(raw_alloc(fd, PG, 0, 0x80, NULL) == -EINVAL) TH_LOG("alloc unknown flag -> EINVAL");
	memset(&a, 0, sizeof(a));
	a.op = GAUDI_NIC_MEM_ALLOC;
	a.in.alloc.size = PG;
	a.in.raw[3] = 1;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("alloc non-zero unused input -> EINVAL");
	a.in.raw[3] = 0;
	a.reserved[0] = 1;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("alloc reserved != 0 -> EINVAL");
	a.reserved[0] = 0;
	EXPECT_TRUE(mem(fd, &a) == 0) TH_LOG("the same args with reserved cleared succeed");
	raw_free(fd, a.out.handle);

	EXPECT_TRUE(raw_free(fd, 0) == -ENOENT) TH_LOG("free handle 0 -> ENOENT");
	EXPECT_TRUE(raw_free(fd, 12345) == -ENOENT) TH_LOG("free unknown handle -> ENOENT");
	EXPECT_TRUE(raw_free(fd, 1ULL << 40) == -ENOENT) TH_LOG("free huge handle -> ENOENT");
	EXPECT_TRUE(raw_alloc(fd, 8 * PG, 0, 0, &h) == 0) TH_LOG("alloc");
	memset(&a, 0, sizeof(a));
	a.op = GAUDI_NIC_MEM_FREE;
	a.in.free.handle = h;
	a.flags = 1;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("free with flags -> EINVAL");
	a.flags = 0;
	a.in.raw[1] = 5;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("free non-zero unused input -> EINVAL");
	EXPECT_TRUE(raw_map(fd, 999999, 0, NULL) == -ENOENT) TH_LOG("map bad handle -> ENOENT");
	EXPECT_TRUE(raw_map(fd, h, 0x1000000000123ULL, NULL) == -EINVAL) TH_LOG("map unaligned hint -> EINVAL");
	EXPECT_TRUE(raw_map(fd, h, 0, &va) == 0) TH_LOG("map");
	EXPECT_TRUE(raw_map(fd, h, 0, NULL) == -EBUSY) TH_LOG("map twice -> EBUSY");
	EXPECT_TRUE(raw_free(fd, h) == -EBUSY) TH_LOG("free while mapped -> EBUSY");
	EXPECT_TRUE(raw_unmap(fd, va + 1) == -EINVAL) TH_LOG("unmap unaligned -> EINVAL");
	EXPECT_TRUE(raw_unmap(fd, va + PG) == -ENOENT) TH_LOG("unmap inside a mapping -> ENOENT");
	EXPECT_TRUE(raw_unmap(fd, 0x1000) == -ENOENT) TH_LOG("unmap unknown address -> ENOENT");

	EXPECT_TRUE(raw_export(fd, va, 0, 0, O_RDWR) == -EINVAL) TH_LOG("export size 0 -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va + 8, PG, 0, O_RDWR) == -EINVAL) TH_LOG("export unaligned address -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, PG + 8, 0, O_RDWR) == -EINVAL) TH_LOG("export unaligned size -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, PG, 8, O_RDWR) == -EINVAL) TH_LOG("export unaligned offset -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, 8 * PG, PG, O_RDWR) == -EINVAL) TH_LOG("export offset+size past the end -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, 16 * PG, 0, O_RDWR) == -EINVAL) TH_LOG("export size past the end -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, PG, ~0ULL & ~(PG - 1), O_RDWR) == -EINVAL) TH_LOG("export offset+size overflow -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, ~0ULL & ~(PG - 1), 2 * PG, O_RDWR) == -EINVAL) TH_LOG("export size+offset overflow (huge size) -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, PG, 0, O_RDWR | O_NONBLOCK) == -EINVAL) TH_LOG("export bad fd flags -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va, PG, 0, O_ACCMODE) == -EINVAL) TH_LOG("export invalid access mode -> EINVAL");
	EXPECT_TRUE(raw_export(fd, va + 64 * PG, PG, 0, O_RDWR) == -ENOENT) TH_LOG("export unmapped address -> ENOENT");
	memset(&a, 0, sizeof(a));
	a.op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD;
	a.in.export_dmabuf_fd.device_virt_addr = va;
	a.in.export_dmabuf_fd.size = PG;
	a.in.export_dmabuf_fd.pad = 1;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("export pad != 0 -> EINVAL");
	a.in.export_dmabuf_fd.pad = 0;
	a.flags = GAUDI_NIC_MEM_CONTIGUOUS;
	EXPECT_TRUE(mem(fd, &a) == -EINVAL) TH_LOG("export with flags -> EINVAL");

	d = raw_export(fd, va, 8 * PG, 0, O_RDWR | O_CLOEXEC);
	EXPECT_TRUE(d >= 0) TH_LOG("export");
	EXPECT_TRUE(raw_unmap(fd, va) == -EBUSY) TH_LOG("unmap while exported -> EBUSY");
	EXPECT_TRUE(raw_free(fd, h) == -EBUSY) TH_LOG("free while exported (and mapped) -> EBUSY");
	close(d);
	EXPECT_TRUE(raw_unmap(fd, va) == 0) TH_LOG("unmap after the dma-buf is closed");
	EXPECT_TRUE(raw_export(fd, va, PG, 0, O_RDWR) == -ENOENT) TH_LOG("export of unmapped memory -> ENOENT");
	EXPECT_TRUE(raw_free(fd, h) == 0) TH_LOG("free");
	EXPECT_TRUE(raw_free(fd, h) == -ENOENT) TH_LOG("double free -> ENOENT");
	EXPECT_TRUE(raw_map(fd, h, 0, NULL) == -ENOENT) TH_LOG("map of freed handle -> ENOENT");
	EXPECT_TRUE(raw_export(fd, va, PG, 0, O_RDWR) == -ENOENT) TH_LOG("export of freed memory -> ENOENT");

	/* free while exported when the mapping is gone is impossible: export
	 * pins the mapping; a dma-buf outliving the fd is tested in teardown
	 */
	EXPECT_TRUE(raw_alloc(fd, 4 * PG, 0, 0, &hu) == 0 && raw_map(fd, hu, 0, &vu) == 0) TH_LOG("alloc+map");
	EXPECT_TRUE(mmap(NULL, PG, PROT_READ, MAP_PRIVATE, fd, hu << GAUDI_NIC_MMAP_HANDLE_SHIFT) == MAP_FAILED &&
	   errno == EINVAL) TH_LOG("mmap MAP_PRIVATE -> EINVAL");
	EXPECT_TRUE(mmap(NULL, 8 * PG, PROT_READ, MAP_SHARED, fd, hu << GAUDI_NIC_MMAP_HANDLE_SHIFT) == MAP_FAILED &&
	   errno == EINVAL) TH_LOG("mmap longer than the allocation -> EINVAL");
	EXPECT_TRUE(mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, (hu << GAUDI_NIC_MMAP_HANDLE_SHIFT) + PG) == MAP_FAILED &&
	   errno == EINVAL) TH_LOG("mmap at an offset that is not a handle -> EINVAL");
	EXPECT_TRUE(mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, 4242ULL << GAUDI_NIC_MMAP_HANDLE_SHIFT) == MAP_FAILED &&
	   errno == ENOENT) TH_LOG("mmap of an unknown handle -> ENOENT");
	raw_unmap(fd, vu);
	raw_free(fd, hu);

	/* contiguous allocation of more than is free in one piece fails cleanly */
	EXPECT_TRUE(raw_alloc(fd, 64 << 20, 0, GAUDI_NIC_MEM_CONTIGUOUS, &hc) == 0) TH_LOG("contiguous alloc of all HBM");
	EXPECT_TRUE(raw_alloc(fd, PG, 0, 0, NULL) == -ENOMEM) TH_LOG("HBM exhausted -> ENOMEM");
	EXPECT_TRUE(raw_free(fd, hc) == 0) TH_LOG("free it");
	EXPECT_TRUE(sys_read(0, "hbm_used") == 0) TH_LOG("HBM fully free again");

	hlthunk_close(fd);
}

TEST_F(errors, hbm_quota)
{
	t_quota(_metadata);
}

/* --------------------------------------------------------------- import */

FIXTURE(import) {};
FIXTURE_SETUP(import)
{
	if (access(IMPORTER, W_OK))
		SKIP(return, "test importer not loaded");
}
FIXTURE_TEARDOWN(import) {}

/*
 * hl-thunk's one-call HBM buffer (hlthunk_hbm_buf_create): allocated,
 * mapped, exported and CPU-mapped as one; what the CPU writes is what an
 * importer reads; destroy undoes all of it; a create that fails leaves
 * nothing behind and names its step.
 */
TEST_F(import, hbm_buf_helper)
{
	long long used0 = sys_read(0, "hbm_used"), exports0 = sys_read(0, "mem_exports");
	uint64_t size = 256 * PG;
	struct hlthunk_hbm_buf b;
	struct import_res r;
	int fd;

	fd = hlthunk_open_by_index(0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	ASSERT_EQ(0, hlthunk_hbm_buf_create(fd, size, HLTHUNK_HBM_CPU_MAP, &b))
		TH_LOG("create: %s at its %s", strerror(errno), b.step);
	EXPECT_TRUE(b.handle && b.device_va && b.dmabuf_fd >= 0 && b.cpu && b.size == size &&
		    !b.step) TH_LOG("every part made");
	EXPECT_TRUE(lseek(b.dmabuf_fd, 0, SEEK_END) == (off_t)size &&
		    (fcntl(b.dmabuf_fd, F_GETFD) & FD_CLOEXEC)) TH_LOG("the whole buffer, close-on-exec");
	EXPECT_TRUE(sys_read(0, "hbm_used") == used0 + (long long)size) TH_LOG("HBM accounted");
	pattern(b.cpu, size, 11);
	EXPECT_TRUE(import(b.dmabuf_fd, "gaudi_nic.1", NULL, &r) == 0 && r.fnv == fnv(b.cpu, size))
		TH_LOG("an importer reads what the CPU wrote");
	EXPECT_EQ(0, hlthunk_hbm_buf_destroy(&b)) TH_LOG("destroy: %s", strerror(errno));
	EXPECT_TRUE(b.dmabuf_fd == -1 && !b.cpu && !b.handle && !b.device_va) TH_LOG("cleared");
	EXPECT_TRUE(sys_read(0, "hbm_used") == used0 && sys_read(0, "mem_exports") == exports0)
		TH_LOG("HBM and export given back");
	errno = 0;
	EXPECT_TRUE(hlthunk_hbm_buf_create(fd, 1ULL << 40, HLTHUNK_HBM_CPU_MAP, &b) == -1 &&
		    errno && b.step && !strcmp(b.step, "allocation") && b.dmabuf_fd == -1 &&
		    !b.handle) TH_LOG("1 TiB fails at its allocation (%s), nothing made", strerror(errno));
	EXPECT_TRUE(sys_read(0, "hbm_used") == used0) TH_LOG("no HBM left behind");
	hlthunk_close(fd);
}

TEST_F(import, peer_to_peer)
{
	uint64_t size = 256 * PG, h, va, hc, vac, bus0;
	struct import_res r;
	int fd, d, dc, ret;
	uint8_t *p, *pc;

	fd = hlthunk_open_by_index(0);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	bus0 = (uint64_t)sys_read(0, "bus_base");

	h = hlthunk_device_memory_alloc(fd, size, 0, false, false);
	p = hlthunk_device_memory_mmap(fd, h, size);
	va = hlthunk_device_memory_map(fd, h, 0);
	ASSERT_TRUE(h && p && va) TH_LOG("alloc/mmap/map: %s", strerror(errno));
	pattern(p, size, 3);
	d = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0, O_RDWR);
	EXPECT_TRUE(d >= 0) TH_LOG("export non-contiguous 1 MiB");
	ret = import(d, "gaudi_nic.1", NULL, &r);
	EXPECT_TRUE(ret == 0) TH_LOG("gaudi_nic.1 imports the dma-buf (dynamic P2P attach + map): %d", ret);
	EXPECT_TRUE(!ret && r.len == size) TH_LOG("sg table covers the export (%llu bytes, %u segments, max %u)",
	   r.len, r.nents, r.maxseg);
	EXPECT_TRUE(!ret && r.lo >= bus0 && r.hi <= bus0 + (64ULL << 20))
	   TH_LOG("bus addresses are inside gaudi_nic.0's window [%#llx, %#llx)", r.lo, r.hi);
	EXPECT_TRUE(!ret && r.fnv == fnv(p, size)) TH_LOG("bytes read through the bus addresses match the CPU mapping");
	EXPECT_TRUE(import(d, "gaudi_nic.0", NULL, &r) == 0 && r.fnv == fnv(p, size)) TH_LOG("the exporting device may import too");
	ret = import(d, "foreign", NULL, NULL);
	EXPECT_TRUE(ret == -EOPNOTSUPP) TH_LOG("attach from a foreign (non-gaudi) device refused: %d", ret);
	ret = import(d, "gaudi_nic.1", "nop2p", NULL);
	EXPECT_TRUE(ret == -EPERM) TH_LOG("map for an importer without peer-to-peer refused (EPERM): %d", ret);
	ret = import(d, "gaudi_nic.1", "fill 77", &r);
	EXPECT_TRUE(ret == 0) TH_LOG("importer writes a pattern through the bus addresses");
	{
		uint8_t *expect = malloc(size);

		pattern(expect, size, 77);
		EXPECT_TRUE(!ret && !memcmp(p, expect, size) && r.fnv == fnv(expect, size))
		   TH_LOG("the CPU mapping sees the bytes written by the importer");
		free(expect);
	}
	close(d);

	d = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, 16 * PG, 100 * PG, O_RDWR);
	ret = import(d, "gaudi_nic.1", NULL, &r);
	EXPECT_TRUE(d >= 0 && !ret && r.len == 16 * PG && r.fnv == fnv(p + 100 * PG, 16 * PG))
	   TH_LOG("export at an offset: the importer sees exactly that window");
	close(d);

	hc = hlthunk_device_memory_alloc(fd, 2 << 20, 0, true, false);
	pc = hlthunk_device_memory_mmap(fd, hc, 2 << 20);
	vac = hlthunk_device_memory_map(fd, hc, 0);
	ASSERT_TRUE(hc && pc && vac) TH_LOG("contiguous alloc: %s", strerror(errno));
	pattern(pc, 2 << 20, 9);
	dc = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, vac, 2 << 20, 0, O_RDWR);
	ret = import(dc, "gaudi_nic.1", NULL, &r);
	EXPECT_TRUE(!ret && r.nents == 1 && r.maxseg == 2 << 20 && r.fnv == fnv(pc, 2 << 20))
	   TH_LOG("contiguous 2 MiB export is one merged segment (%u)", r.nents);
	ret = import(dc, "gaudi_nic.1", "maxseg 65536", &r);
	EXPECT_TRUE(!ret && r.nents == 32 && r.maxseg == 65536 && r.fnv == fnv(pc, 2 << 20))
	   TH_LOG("importer max segment 64 KiB: 32 segments of 64 KiB (%u, max %u)", r.nents, r.maxseg);
	ret = import(dc, "gaudi_nic.1", "maxseg 6000", &r);
	EXPECT_TRUE(!ret && r.nents == 512 && r.maxseg == 4096)
	   TH_LOG("importer max segment 6000 bytes: page-sized segments (%u)", r.nents);
	close(dc);

	EXPECT_TRUE(!hlthunk_memory_unmap(fd, va) && !hlthunk_memory_unmap(fd, vac)) TH_LOG("unmap");
	munmap(p, size);
	munmap(pc, 2 << 20);
	EXPECT_TRUE(!hlthunk_device_memory_free(fd, h) && !hlthunk_device_memory_free(fd, hc)) TH_LOG("free");
	EXPECT_TRUE(sys_read(0, "mem_exports") == 0 && sys_read(0, "hbm_used") == 0) TH_LOG("no export or memory left");
	hlthunk_close(fd);
}

/* --------------------------------------------------------------- stress */

static int stress_child(int dev, double secs, unsigned int seed)
{
	struct timespec t0, t;
	int fd = hlthunk_open_by_index(dev), errors = 0;
	unsigned long cycles = 0;

	if (fd < 0)
		return 1;
	srand(seed);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		uint64_t pages = 1 + rand() % 64, size = pages * PG, h, va;
		bool contig = rand() % 4 == 0;
		int d;

		h = hlthunk_device_memory_alloc(fd, size, 0, contig, false);
		if (!h) {
			errors += errno != ENOMEM;
			continue;
		}
		va = hlthunk_device_memory_map(fd, h, 0);
		if (!va) {
			errors++;
			hlthunk_device_memory_free(fd, h);
			continue;
		}
		d = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0, O_RDWR);
		if (d < 0)
			errors++;
		if (d >= 0 && hlthunk_device_memory_free(fd, h) == 0)
			errors++;	/* must be EBUSY */
		if (d >= 0)
			close(d);
		errors += hlthunk_memory_unmap(fd, va) != 0;
		errors += hlthunk_device_memory_free(fd, h) != 0;
		cycles++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	/* leave something behind for close() to clean up */
	hlthunk_device_memory_alloc(fd, 4 * PG, 0, false, false);
	hlthunk_close(fd);
	fprintf(stderr, "child %u: %lu cycles, %d errors\n", seed, cycles, errors);
	return errors ? 1 : 0;
}

FIXTURE(stress) {};
FIXTURE_SETUP(stress) {}
FIXTURE_TEARDOWN(stress) {}

/* stress_nproc processes for stress_secs seconds (run.list: 10 s, 6) */
TEST_F_TIMEOUT(stress, alloc_map_export_free, 600)
{
	double secs = stress_secs;
	int nproc = stress_nproc;
	long long used0[2], allocs0[2], exp0[2];
	int i, status, bad = 0;

	for (i = 0; i < 2; i++) {
		used0[i] = sys_read(i, "hbm_used");
		allocs0[i] = sys_read(i, "mem_allocs");
		exp0[i] = sys_read(i, "mem_exports");
	}
	for (i = 0; i < nproc; i++) {
		pid_t pid = fork();

		if (pid == 0)
			_exit(stress_child(i % 2, secs, i + 1));
	}
	for (i = 0; i < nproc; i++) {
		if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	EXPECT_TRUE(!bad) TH_LOG("%d processes on 2 devices ran alloc/map/export/free for %.0f s without errors", nproc, secs);
	for (i = 0; i < 2; i++) {
		EXPECT_TRUE(sys_read(i, "hbm_used") == used0[i] &&
		   sys_read(i, "mem_allocs") == allocs0[i] &&
		   sys_read(i, "mem_exports") == exp0[i] &&
		   sys_read(i, "mem_contexts") == 0)
		   TH_LOG("gaudi_nic.%d accounting back to its start (used %lld allocs %lld)", i,
		   sys_read(i, "hbm_used"), sys_read(i, "mem_allocs"));
	}
}

/* ------------------------------------------------------------- teardown */

FIXTURE(teardown) {};
FIXTURE_SETUP(teardown) {}
FIXTURE_TEARDOWN(teardown) {}

/*
 * One test: its steps share the device created with new_device and must
 * run in order.
 */
TEST_F_TIMEOUT(teardown, removal, 120)
{
	uint64_t size = 64 * PG, h, va, h2, va2;
	struct drm_gaudi_nic_info ia = { 0 };
	struct gaudi_nic_info_device info;
	struct import_res r;
	uint64_t want;
	int fd, d, d2, ret, dev = 7;
	uint8_t *p, *p2;
	char path[128];

	/* 1. accel fd closed before its dma-buf */
	fd = hlthunk_open_by_index(0);
	h = hlthunk_device_memory_alloc(fd, size, 0, false, false);
	p = hlthunk_device_memory_mmap(fd, h, size);
	va = hlthunk_device_memory_map(fd, h, 0);
	ASSERT_TRUE(fd >= 0 && h && p && va) TH_LOG("setup: %s", strerror(errno));
	pattern(p, size, 11);
	want = fnv(p, size);
	d = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0, O_RDWR);
	munmap(p, size);
	EXPECT_TRUE(!hlthunk_close(fd)) TH_LOG("accel fd closed while its dma-buf lives");
	EXPECT_TRUE(sys_read(0, "hbm_used") == (long long)size && sys_read(0, "mem_exports") == 1)
	   TH_LOG("the exported memory stays allocated");
	if (!access(IMPORTER, W_OK)) {
		EXPECT_TRUE(import(d, "gaudi_nic.1", NULL, &r) == 0 && r.fnv == want)
		   TH_LOG("the dma-buf still imports and holds the data");
	}
	close(d);
	EXPECT_TRUE(sys_read(0, "hbm_used") == 0 && sys_read(0, "mem_exports") == 0 &&
	   sys_read(0, "mem_contexts") == 0) TH_LOG("closing the dma-buf frees the memory and the context");

	/* 2. del_device with live fd, mmap and dma-buf */
	snprintf(path, sizeof(path), "%d 1 16", dev);
	ret = file_write(SYSDRV "new_device", path);
	EXPECT_TRUE(ret == 0) TH_LOG("new_device \"%s\"", path);
	EXPECT_TRUE(file_write(SYSDRV "new_device", path) == -EEXIST) TH_LOG("new_device of an existing id -> EEXIST");
	EXPECT_TRUE(file_write(SYSDRV "new_device", "300") == -EINVAL) TH_LOG("new_device id out of range -> EINVAL");
	EXPECT_TRUE(file_write(SYSDRV "new_device", "8 99") == -EINVAL) TH_LOG("new_device too many ports -> EINVAL");
	EXPECT_TRUE(file_write(SYSDRV "new_device", "bogus") == -EINVAL) TH_LOG("new_device garbage -> EINVAL");
	EXPECT_TRUE(file_write(SYSDRV "del_device", "123") == -ENOENT) TH_LOG("del_device unknown id -> ENOENT");
	EXPECT_TRUE(sys_read(dev, "hbm_size") == 16 << 20 && sys_read(dev, "num_ports") == 1)
	   TH_LOG("new device has 16 MiB HBM and 1 port");
	snprintf(path, sizeof(path), "gaudi_nic.%d", dev);
	fd = hlthunk_open(HLTHUNK_DEVICE_GAUDI_NIC, path);
	EXPECT_TRUE(fd >= 0) TH_LOG("open gaudi_nic.%d by bus id", dev);
	h = hlthunk_device_memory_alloc(fd, size, 0, false, false);
	p = hlthunk_device_memory_mmap(fd, h, size);
	va = hlthunk_device_memory_map(fd, h, 0);
	h2 = hlthunk_device_memory_alloc(fd, 2 * PG, 0, false, false);
	p2 = hlthunk_device_memory_mmap(fd, h2, 2 * PG);
	va2 = hlthunk_device_memory_map(fd, h2, 0);
	ASSERT_TRUE(fd >= 0 && h && p && va && h2 && p2 && va2)
		TH_LOG("setup on the new device: %s", strerror(errno));
	pattern(p, size, 21);
	d = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, size, 0, O_RDWR);
	d2 = hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va2, PG, 0, O_RDWR);
	EXPECT_TRUE(d >= 0 && d2 >= 0) TH_LOG("exports on the new device");

	snprintf(path, sizeof(path), "%d", dev);
	EXPECT_TRUE(file_write(SYSDRV "del_device", path) == 0) TH_LOG("del_device with a live fd, mmaps and dma-bufs");
	snprintf(path, sizeof(path), "/sys/bus/platform/devices/gaudi_nic.%d", dev);
	EXPECT_TRUE(access(path, F_OK) && errno == ENOENT) TH_LOG("the platform device is gone");
	ia.op = GAUDI_NIC_INFO_DEVICE;
	ia.return_pointer = (uintptr_t)&info;
	ia.return_size = sizeof(info);
	EXPECT_TRUE(ioctl(fd, DRM_IOCTL_GAUDI_NIC_INFO, &ia) && errno == ENODEV) TH_LOG("INFO after removal -> ENODEV");
	EXPECT_TRUE(hlthunk_device_memory_alloc(fd, PG, 0, false, false) == 0 && errno == ENODEV)
	   TH_LOG("ALLOC after removal -> ENODEV");
	EXPECT_TRUE(hlthunk_device_memory_free(fd, h) == -1 && errno == ENODEV) TH_LOG("FREE after removal -> ENODEV");
	EXPECT_TRUE(touch_sigbus(p) && touch_sigbus(p + size - 1) && touch_sigbus(p2))
	   TH_LOG("CPU mappings are zapped: access raises SIGBUS");
	EXPECT_TRUE(mmap(NULL, PG, PROT_READ, MAP_SHARED, fd, h << GAUDI_NIC_MMAP_HANDLE_SHIFT) == MAP_FAILED &&
	   errno == ENODEV) TH_LOG("new mmap after removal -> ENODEV");
	if (!access(IMPORTER, W_OK)) {
		ret = import(d, "gaudi_nic.1", NULL, &r);
		EXPECT_TRUE(ret == -ENODEV)
		   TH_LOG("a dma-buf of the removed device is revoked: no importer can pin or map it (%d)",
			  ret);
	}
	snprintf(path, sizeof(path), "%d", dev);
	EXPECT_TRUE(file_write(SYSDRV "new_device", path) == -EBUSY)
	   TH_LOG("new_device of the id while its memory is still referenced -> EBUSY");
	EXPECT_TRUE(munmap(p, size) == 0 && munmap(p2, 2 * PG) == 0) TH_LOG("munmap the zapped mappings");
	EXPECT_TRUE(close(fd) == 0) TH_LOG("close the accel fd of the removed device");
	EXPECT_TRUE(file_write(SYSDRV "new_device", path) == -EBUSY) TH_LOG("still EBUSY while dma-bufs live");
	close(d);
	close(d2);
	EXPECT_TRUE(file_write(SYSDRV "new_device", path) == 0)
	   TH_LOG("after the last dma-buf, the id can be created again");
	EXPECT_TRUE(sys_read(dev, "hbm_used") == 0) TH_LOG("the new instance starts with free HBM");
	EXPECT_TRUE(file_write(SYSDRV "del_device", path) == 0) TH_LOG("del_device of the idle device");

	/* 3. del_device while a process sits in a loop of ioctls */
	snprintf(path, sizeof(path), "%d", dev);
	EXPECT_TRUE(file_write(SYSDRV "new_device", path) == 0) TH_LOG("new_device again");
	{
		pid_t pid = fork();
		int status;

		if (pid == 0) {
			char bus[32];
			int f, e = 0;

			snprintf(bus, sizeof(bus), "gaudi_nic.%d", dev);
			f = hlthunk_open(HLTHUNK_DEVICE_GAUDI_NIC, bus);
			if (f < 0)
				_exit(2);
			for (int i = 0; i < 100000; i++) {
				uint64_t hh = hlthunk_device_memory_alloc(f, PG, 0, false, false);
				uint64_t vv = hh ? hlthunk_device_memory_map(f, hh, 0) : 0;
				int dd = vv ? hlthunk_device_mapped_memory_export_dmabuf_fd(f, vv, PG, 0, 0) : -1;

				if (dd >= 0)
					close(dd);
				if (vv)
					hlthunk_memory_unmap(f, vv);
				if (hh)
					hlthunk_device_memory_free(f, hh);
				if (!hh && errno == ENODEV && ++e > 3)
					break;
			}
			_exit(e ? 0 : 3);
		}
		usleep(300000);
		EXPECT_TRUE(file_write(SYSDRV "del_device", path) == 0) TH_LOG("del_device while another process is busy in ioctls");
		EXPECT_TRUE(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		   TH_LOG("that process sees ENODEV and exits cleanly");
	}
}

/* Export a dma-buf, close the accel fd, report "ready", keep the dma-buf. */
static int t_hold(double secs)
{
	uint64_t h, va;
	int fd, d;

	fd = hlthunk_open_by_index(0);
	h = fd >= 0 ? hlthunk_device_memory_alloc(fd, 4 * PG, 0, false, false) : 0;
	va = h ? hlthunk_device_memory_map(fd, h, 0) : 0;
	d = va ? hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, 4 * PG, 0, 0) : -1;
	if (d < 0)
		return 1;
	hlthunk_close(fd);
	printf("ready\n");
	fflush(stdout);
	usleep((useconds_t)(secs * 1e6));
	close(d);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const fixture[][2] = {
		{ "basic", "basic" }, { "errno", "errors" },
		{ "import", "import" }, { "stress", "stress" },
		{ "teardown", "teardown" },
	};
	char *run[] = { argv[0], "-f", NULL, NULL };
	unsigned int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 3 && !strcmp(argv[1], "hold"))
		return t_hold(atof(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "stress")) {
		stress_secs = atof(argv[2]);
		stress_nproc = atoi(argv[3]);
		argc = 2;
	}
	/* MODE runs the tests of one fixture: gn-accel-test -f FIXTURE */
	for (i = 0; argc == 2 && i < ARRAY_SIZE(fixture); i++) {
		if (strcmp(argv[1], fixture[i][0]))
			continue;
		run[2] = (char *)fixture[i][1];
		return test_harness_run(3, run);
	}
	fprintf(stderr, "usage: %s basic|errno|import|stress SECS NPROC|teardown|hold SECS\n", argv[0]);
	return 2;
}
