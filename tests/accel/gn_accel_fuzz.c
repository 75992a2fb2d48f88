// SPDX-License-Identifier: MIT
/*
 * gn-accel-fuzz: random and boundary calls into the gaudi_nic accel driver
 * for a fixed time, then a check that the device still works.
 *
 *   gn-accel-fuzz DEVICE_INDEX SECONDS [SEED]
 *
 * The calls: DRM_IOCTL_GAUDI_NIC_MEMORY with every op (and unknown ones),
 * random flags, reserved fields and union bytes, with handles and device
 * addresses that are live, freed, off by one or random; INFO with random
 * sizes and pointers; unknown driver ioctl numbers with random argument
 * bytes; mmap() of random offsets and lengths (touched when they succeed);
 * dma-buf exports that are closed at once or kept.  Several file
 * descriptors are open at once and closed at random with their objects
 * live.  Every call must either succeed or fail with an errno the driver
 * documents; anything else, a crash or a signal ends the run with the call
 * that did it.  Afterwards a fresh allocation is mapped, exported, written
 * and read back through the CPU mapping.  The kernel log is checked by the
 * caller (tests/accel/fuzz.sh).  Output: KTAP, through kselftest.h's
 * helpers (a fuzzer is one run, not a set of tests: no harness): point 1
 * is the fuzzing, point 2 the check; a failure to set up or an unexpected
 * result fails point 1 and ends the run, which then falls short of its
 * plan.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <xf86drm.h>
#include <drm/gaudi_nic_accel.h>

#include "hlthunk.h"
#include "kselftest.h"

#include "../lib/fuzz_rng.h"

#define NFD 3
#define NOBJ 32

struct obj {
	uint64_t handle, size, va;	/* va 0: not mapped */
};

static struct {
	int fd[NFD];
	struct obj o[NFD][NOBJ];
	int dmabufs[16];
	unsigned long calls, ok_calls, mmaps, exports, reopens;
	int dev;
} F;

/* The point under way fails, and so does the run (its plan is not done). */
static __noreturn void fail(const char *what, long rc, int err)
{
	ksft_test_result_fail("%s returned %ld (%s) after %lu calls (the seed is in the first lines)\n",
			      what, rc, strerror(err), F.calls);
	ksft_exit_fail();
}

/* errnos the driver may return for bad or unlucky input */
static void expect(const char *what, long rc)
{
	int e = errno;

	F.calls++;
	if (rc >= 0) {
		F.ok_calls++;
		return;
	}
	switch (e) {
	case EINVAL: case ENOENT: case ENOMEM: case EFAULT: case EDQUOT: case ENOSPC:
	case ENOTTY: case EBUSY: case EACCES: case EPERM: case E2BIG: case EOVERFLOW:
	case ENXIO: case EMFILE: case ENFILE: case EOPNOTSUPP:
		return;
	default:
		fail(what, rc, e);
	}
}

static int mem_ioctl(int fd, struct drm_gaudi_nic_memory *m)
{
	return ioctl(fd, DRM_IOCTL_GAUDI_NIC_MEMORY, m);
}

static struct obj *pick(int f)
{
	return &F.o[f][below(NOBJ)];
}

static void do_alloc(int f)
{
	struct drm_gaudi_nic_memory m = { .op = GAUDI_NIC_MEM_ALLOC };
	struct obj *o = pick(f);
	long rc;

	m.in.alloc.size = below(8) ? (below(64) + 1) * 4096 : edgy(4096);
	m.in.alloc.page_size = below(4) ? 0 : edgy(4096);
	if (!below(8))
		m.flags = (uint32_t)edgy(GAUDI_NIC_MEM_CONTIGUOUS);
	if (!below(16))
		m.reserved[below(2)] = rnd();
	rc = mem_ioctl(F.fd[f], &m);
	expect("MEMORY ALLOC", rc);
	if (!rc && !o->handle) {
		o->handle = m.out.handle;
		o->size = m.in.alloc.size;
		o->va = 0;
	}
}

static void do_free(int f)
{
	struct drm_gaudi_nic_memory m = { .op = GAUDI_NIC_MEM_FREE };
	struct obj *o = pick(f);
	long rc;

	m.in.free.handle = edgy(o->handle);
	rc = mem_ioctl(F.fd[f], &m);
	expect("MEMORY FREE", rc);
	if (!rc && m.in.free.handle == o->handle)
		o->handle = 0;
}

static void do_map(int f)
{
	struct drm_gaudi_nic_memory m = { .op = GAUDI_NIC_MEM_MAP };
	struct obj *o = pick(f);
	long rc;

	m.in.map.handle = edgy(o->handle);
	m.in.map.hint_addr = below(4) ? 0 : edgy(0);
	rc = mem_ioctl(F.fd[f], &m);
	expect("MEMORY MAP", rc);
	if (!rc && m.in.map.handle == o->handle && o->handle && !o->va)
		o->va = m.out.device_virt_addr;
}

static void do_unmap(int f)
{
	struct drm_gaudi_nic_memory m = { .op = GAUDI_NIC_MEM_UNMAP };
	struct obj *o = pick(f);
	long rc;

	m.in.unmap.device_virt_addr = edgy(o->va);
	rc = mem_ioctl(F.fd[f], &m);
	expect("MEMORY UNMAP", rc);
	if (!rc && m.in.unmap.device_virt_addr == o->va)
		o->va = 0;
}

static void do_export(int f)
{
	struct drm_gaudi_nic_memory m = { .op = GAUDI_NIC_MEM_EXPORT_DMABUF_FD };
	struct obj *o = pick(f);
	int *keep = &F.dmabufs[below(16)];
	long rc;

	m.in.export_dmabuf_fd.device_virt_addr = edgy(o->va);
	m.in.export_dmabuf_fd.size = below(2) ? o->size : edgy(o->size);
	m.in.export_dmabuf_fd.offset = below(2) ? 0 : edgy(4096);
	m.in.export_dmabuf_fd.fd_flags = below(4) ? O_CLOEXEC | O_RDWR : (uint32_t)rnd();
	if (!below(16))
		m.in.export_dmabuf_fd.pad = (uint32_t)rnd();
	rc = mem_ioctl(F.fd[f], &m);
	expect("MEMORY EXPORT_DMABUF_FD", rc);
	if (!rc) {
		F.exports++;
		if (*keep >= 0)
			close(*keep);
		*keep = (int)m.out.export_dmabuf_fd.fd;
		if (below(2)) {
			close(*keep);
			*keep = -1;
		}
	}
}

static void do_raw_memory(int f)
{
	struct drm_gaudi_nic_memory m;
	uint64_t *w = (uint64_t *)&m;

	for (size_t i = 0; i < sizeof(m) / 8; i++)
		w[i] = below(2) ? rnd() : 0;
	m.op = (uint32_t)below(8);
	if (!below(4))
		m.op = (uint32_t)rnd();
	/* random bytes never name memory of ours on purpose, but a random
	 * handle or address can hit a live one: forget ours on success */
	if (!mem_ioctl(F.fd[f], &m)) {
		memset(F.o[f], 0, sizeof(F.o[f]));
		F.calls++;
		F.ok_calls++;
		return;
	}
	expect("MEMORY with random bytes", -1);
}

static void do_info(int f)
{
	struct drm_gaudi_nic_info in = {};
	char buf[512];

	in.op = below(4) ? GAUDI_NIC_INFO_DEVICE : (uint32_t)edgy(1);
	in.return_size = (uint32_t)(below(2) ? below(sizeof(buf)) : edgy(64));
	if (in.return_size > sizeof(buf) || !below(8))
		in.return_pointer = edgy(0);	/* kernel copies to a bad pointer */
	else
		in.return_pointer = (uintptr_t)buf;
	if (!below(16))
		in.reserved[below(2)] = rnd();
	expect("INFO", ioctl(F.fd[f], DRM_IOCTL_GAUDI_NIC_INFO, &in));
}

static void do_unknown_ioctl(int f)
{
	uint64_t arg[8];
	unsigned long nr = DRM_COMMAND_BASE + 2 + below(0x60 - 2);
	unsigned long req;

	for (int i = 0; i < 8; i++)
		arg[i] = rnd();
	req = below(2) ? DRM_IOWR(nr, uint64_t[8]) : DRM_IOW(nr, uint64_t[4]);
	expect("unknown driver ioctl", ioctl(F.fd[f], req, arg));
}

static sigjmp_buf fault_jmp;

static void on_fault(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static void do_mmap(int f)
{
	struct obj *o = pick(f);
	/* volatile: used after the sigsetjmp() below */
	volatile uint64_t off = below(2) ? o->handle << GAUDI_NIC_MMAP_HANDLE_SHIFT :
					   edgy(0) & ~4095ULL;
	volatile size_t len = (size_t)(below(2) ? o->size : edgy(4096));
	volatile char *p;
	int sig;

	if (!len || len > (1ULL << 30))
		len = 4096;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, F.fd[f], (off_t)off);
	if (p == MAP_FAILED) {
		expect("mmap", -1);
		return;
	}
	F.calls++;
	F.ok_calls++;
	F.mmaps++;
	/* a mapping that succeeds must be usable over its whole length */
	sig = sigsetjmp(fault_jmp, 1);
	if (sig) {
		munmap((void *)p, len);
		ksft_test_result_fail("mmap at offset 0x%" PRIx64 ", %zu bytes: signal %d on access\n",
				      off, len, sig);
		ksft_exit_fail();
	}
	p[0] = 1;
	p[len - 1] = p[0];
	munmap((void *)p, len);
}

static void reopen(int f)
{
	/* objects, mappings and exports of the old fd go with it */
	close(F.fd[f]);
	memset(F.o[f], 0, sizeof(F.o[f]));
	F.fd[f] = hlthunk_open_by_index((uint32_t)F.dev);
	if (F.fd[f] < 0) {
		errno = -F.fd[f];
		fail("reopening the device", F.fd[f], errno);
	}
	F.reopens++;
}

/* after the storm: a fresh allocation works end to end */
static bool still_works(void)
{
	int fd = hlthunk_open_by_index((uint32_t)F.dev), buf;
	uint64_t h, va;
	volatile uint32_t *p;
	bool good;

	if (fd < 0)
		return false;
	h = hlthunk_device_memory_alloc(fd, 1 << 20, 0, false, false);
	va = h ? hlthunk_device_memory_map(fd, h, 0) : 0;
	buf = va ? hlthunk_device_mapped_memory_export_dmabuf_fd(fd, va, 1 << 20, 0,
								  O_RDWR | O_CLOEXEC) : -1;
	p = h ? hlthunk_device_memory_mmap(fd, h, 1 << 20) : NULL;
	good = h && va && buf >= 0 && p;
	if (good) {
		for (int i = 0; i < (1 << 18); i += 997)
			p[i] = (uint32_t)i * 2654435761u;
		for (int i = 0; i < (1 << 18); i += 997)
			good &= p[i] == (uint32_t)i * 2654435761u;
		munmap((void *)p, 1 << 20);
	}
	if (buf >= 0)
		close(buf);
	hlthunk_close(fd);
	return good;
}

int main(int argc, char **argv)
{
	void (*const ops[])(int) = { do_alloc, do_alloc, do_free, do_map, do_map, do_unmap,
				     do_export, do_export, do_raw_memory, do_info,
				     do_unknown_ioctl, do_mmap, do_mmap };
	struct sigaction sa = { .sa_handler = on_fault };
	time_t end;
	int secs;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEVICE_INDEX SECONDS [SEED]\n", argv[0]);
		return 2;
	}
	F.dev = atoi(argv[1]);
	secs = atoi(argv[2]);
	fuzz_rng = argc > 3 ? strtoull(argv[3], NULL, 0) : (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ULL;
	if (!fuzz_rng)
		fuzz_rng = 1;
	ksft_print_header();
	ksft_set_plan(2);
	ksft_print_msg("seed 0x%" PRIx64 " (gn-accel-fuzz %d %d 0x%" PRIx64 " repeats this run)\n",
		       fuzz_rng, F.dev, secs, fuzz_rng);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	for (int i = 0; i < 16; i++)
		F.dmabufs[i] = -1;
	for (int f = 0; f < NFD; f++) {
		F.fd[f] = hlthunk_open_by_index((uint32_t)F.dev);
		if (F.fd[f] < 0)
			fail("opening the device", F.fd[f], -F.fd[f]);
	}
	end = time(NULL) + secs;
	while (time(NULL) < end) {
		for (int k = 0; k < 256; k++) {
			int f = (int)below(NFD);

			ops[below(sizeof(ops) / sizeof(ops[0]))](f);
			if (!below(2048))
				reopen(f);
		}
	}
	for (int i = 0; i < 16; i++)
		if (F.dmabufs[i] >= 0)
			close(F.dmabufs[i]);
	for (int f = 0; f < NFD; f++)
		close(F.fd[f]);
	ksft_test_result_pass("%lu calls in %d s (%lu succeeded; %lu mmaps, %lu dma-buf exports, %lu reopens), every failure a documented errno\n",
			      F.calls, secs, F.ok_calls, F.mmaps, F.exports, F.reopens);
	if (still_works())
		ksft_test_result_pass("gaudi_nic.%d still allocates, maps, exports and holds data\n",
				      F.dev);
	else
		ksft_test_result_fail("gaudi_nic.%d still allocates, maps, exports and holds data\n",
				      F.dev);
	ksft_finished();
}
