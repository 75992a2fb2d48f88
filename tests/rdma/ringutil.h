/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ringutil.h - what a test needs to play the hostile process: the WQEs
 * it posted and the completions it got, found in its own mmap'd rings (include/uapi/rdma/
 * gaudi-abi.h gives their format), and the delay injector
 * gaudi_nic_test_delay (tests/kmod), which holds one thread at a kernel
 * function so that a window can be opened on purpose rather than hoped
 * for.  Used by hardening_test.c, rewrite_test.c and ud_test.c.
 */
#ifndef GAUDI_TESTS_RINGUTIL_H
#define GAUDI_TESTS_RINGUTIL_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <rdma/gaudi-abi.h>

/*
 * The next writable mapping of /dev/infiniband/uverbsN in @f (this
 * process's /proc/self/maps): its first and end address; false at the end.
 */
static inline bool ring_next_map(FILE *f, uintptr_t *lo, uintptr_t *hi)
{
	char line[512], perms[8];

	while (fgets(line, sizeof(line), f))
		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %7s", lo, hi,
			   perms) == 3 && !strncmp(perms, "rw", 2))
			return true;
	return false;
}

/*
 * The WQE with @wr_id and @opcode in one of this process's mmap'd gaudi
 * rings, or NULL.  If @map is not NULL, it gets the first and the end
 * address of that ring's mapping: its header (struct gaudi_ring_hdr),
 * then its entries.
 */
static inline struct gaudi_wqe *ring_find_wqe(uint64_t wr_id, uint8_t opcode,
					      uintptr_t *map)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t lo, hi, off;

	if (!f)
		return NULL;
	while (ring_next_map(f, &lo, &hi))
		for (off = GAUDI_RING_HDR_SIZE; lo + off + GAUDI_WQE_SIZE <= hi;
		     off += GAUDI_WQE_SIZE) {
			struct gaudi_wqe *w = (struct gaudi_wqe *)(lo + off);

			if (w->wr_id == wr_id && w->opcode == opcode) {
				if (map) {
					map[0] = lo;
					map[1] = hi;
				}
				fclose(f);
				return w;
			}
		}
	fclose(f);
	return NULL;
}

/*
 * The mapping of the CQ ring holding the completion of @wr_id on QP
 * @qp_num (a WQE of that wr_id has no QP number where a CQE has it), as
 * ring_find_wqe() finds a WQE: @map gets its first and end address (the
 * header, then the CQEs).  0 if found, -1 if not.
 */
static inline int ring_find_cqe(uint64_t wr_id, uint32_t qp_num,
				uintptr_t *map)
{
	FILE *f = fopen("/proc/self/maps", "r");
	uintptr_t lo, hi, off;

	if (!f)
		return -1;
	while (ring_next_map(f, &lo, &hi))
		for (off = GAUDI_RING_HDR_SIZE; lo + off + GAUDI_CQE_SIZE <= hi;
		     off += GAUDI_CQE_SIZE) {
			struct gaudi_cqe *c = (struct gaudi_cqe *)(lo + off);

			if (c->wr_id == wr_id && c->qp_num == qp_num) {
				map[0] = lo;
				map[1] = hi;
				fclose(f);
				return 0;
			}
		}
	fclose(f);
	return -1;
}

#define DELAY_ARM "/sys/kernel/debug/gaudi_nic_test_delay/arm"

/*
 * Hold thread @tid for @ms milliseconds the next time it enters kernel
 * function @fn (once).  0, or -1 with errno set.
 */
static inline int delay_arm(const char *fn, pid_t tid, unsigned int ms)
{
	FILE *arm = fopen(DELAY_ARM, "w");
	int ok;

	if (!arm)
		return -1;
	ok = fprintf(arm, "%s %d %u\n", fn, (int)tid, ms) > 0;
	return fclose(arm) || !ok ? -1 : 0;
}

/* Has the armed delay fired (1), not yet (0)?  -1 if it cannot be read. */
static inline int delay_fired(void)
{
	FILE *arm = fopen(DELAY_ARM, "r");
	int fired;

	if (!arm)
		return -1;
	if (fscanf(arm, "%d", &fired) != 1)
		fired = -1;
	fclose(arm);
	return fired;
}

static inline void delay_off(void)
{
	FILE *arm = fopen(DELAY_ARM, "w");

	if (arm) {
		fputs("off\n", arm);
		fclose(arm);
	}
}

#endif /* GAUDI_TESTS_RINGUTIL_H */
