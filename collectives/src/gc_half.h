/* SPDX-License-Identifier: MIT */
/* IEEE binary16 and bfloat16 <-> binary32 conversions, round to nearest even. */
#ifndef GC_HALF_H
#define GC_HALF_H

#include <stdint.h>
#include <string.h>

static inline float gc_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff, x;
	float f;

	if (e == 0) {
		/* zero or subnormal: m * 2^-24, exact in binary32 */
		f = (float)m * 0x1p-24f;
		return sign ? -f : f;
	}
	if (e == 31)
		x = sign | 0x7f800000u | (m << 13);
	else
		x = sign | ((e + 112) << 23) | (m << 13);
	memcpy(&f, &x, sizeof(f));
	return f;
}

static inline uint16_t gc_f32_to_f16(float f)
{
	uint32_t x, sign, ax, r, h, rem;

	memcpy(&x, &f, sizeof(x));
	sign = (x >> 16) & 0x8000;
	ax = x & 0x7fffffffu;
	if (ax >= 0x7f800000u)              /* inf, or NaN (kept quiet) */
		return (uint16_t)(sign | 0x7c00 |
				  (ax > 0x7f800000u ? 0x200 | ((ax >> 13) & 0x3ff) : 0));
	if (ax < 0x38800000u) {             /* below 2^-14: subnormal or zero */
		uint32_t e = ax >> 23, m, shift, half;

		if (e < 102)                /* < 2^-25: rounds to zero */
			return (uint16_t)sign;
		m = (ax & 0x7fffffu) | 0x800000u;
		shift = 126 - e;            /* 14..24 */
		r = m >> shift;
		rem = m & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rem > half || (rem == half && (r & 1)))
			r++;
		return (uint16_t)(sign | r);
	}
	r = ax - 0x38000000u;               /* rebias 127 -> 15 */
	h = r >> 13;
	rem = r & 0x1fff;
	if (rem > 0x1000 || (rem == 0x1000 && (h & 1)))
		h++;
	if (h >= 0x7c00)                    /* overflow rounds to infinity */
		h = 0x7c00;
	return (uint16_t)(sign | h);
}

static inline float gc_bf16_to_f32(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

static inline uint16_t gc_f32_to_bf16(float f)
{
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	if ((x & 0x7fffffffu) > 0x7f800000u)  /* NaN: keep sign, force quiet */
		return (uint16_t)((x >> 16) | 0x40);
	x += 0x7fffu + ((x >> 16) & 1);
	return (uint16_t)(x >> 16);
}

#endif
