/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzers' random numbers (tests/accel/gn_accel_fuzz.c,
 * tests/rdma/verbs_fuzz.c): xorshift64*, reproducible from the seed a
 * fuzzer prints first (it sets fuzz_rng, never 0), and values that are
 * often at a boundary.
 */
#ifndef GN_TESTS_FUZZ_RNG_H
#define GN_TESTS_FUZZ_RNG_H

#include <stdint.h>

static uint64_t fuzz_rng = 1;

static inline uint64_t rnd(void)
{
	fuzz_rng ^= fuzz_rng >> 12;
	fuzz_rng ^= fuzz_rng << 25;
	fuzz_rng ^= fuzz_rng >> 27;
	return fuzz_rng * 2685821657736338717ULL;
}

static inline uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* @valid, one off it, a boundary of the usual integer and page sizes, or noise */
static inline uint64_t edgy(uint64_t valid)
{
	static const uint64_t e[] = { 0, 1, 255, 256, 4095, 4096, 4097, 1ULL << 20,
				      1ULL << 31, 1ULL << 32, UINT32_MAX, INT64_MAX,
				      UINT64_MAX, UINT64_MAX - 4095 };

	switch (below(4)) {
	case 0:
		return valid;
	case 1:
		return valid + (below(2) ? 1 : -1);
	case 2:
		return e[below(sizeof(e) / sizeof(e[0]))];
	default:
		return rnd();
	}
}

#endif /* GN_TESTS_FUZZ_RNG_H */
