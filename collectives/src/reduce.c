/* SPDX-License-Identifier: MIT */
/*
 * Reduction kernels.  Plain counted loops over restrict pointers so GCC
 * vectorises them at -O2/-O3.  Signed integer sum/prod use unsigned
 * arithmetic (wrap-around instead of undefined behaviour).  fp16/bf16 are
 * widened to binary32, combined, and rounded back to nearest even.
 */
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

#include "gc_util.h"
#include "gc_half.h"

#define SUM_I(U) (T)((U)x + (U)y)
#define PROD_I(U) (T)((U)x * (U)y)
#define MIN_X (x < y ? x : y)
#define MAX_X (x > y ? x : y)

#define DEF(name, TT, EXPR)                                                    \
	static void name##3(void *restrict dv, const void *restrict av,       \
			    const void *restrict bv, size_t n)                 \
	{                                                                      \
		typedef TT T;                                                  \
		T *restrict d = dv;                                            \
		const T *restrict a = av, *restrict b = bv;                    \
		for (size_t i = 0; i < n; i++) {                               \
			T x = a[i], y = b[i];                                  \
			d[i] = EXPR;                                           \
		}                                                              \
	}                                                                      \
	static void name##2(void *restrict dv, const void *restrict bv,       \
			    size_t n)                                          \
	{                                                                      \
		typedef TT T;                                                  \
		T *restrict d = dv;                                            \
		const T *restrict b = bv;                                      \
		for (size_t i = 0; i < n; i++) {                               \
			T x = d[i], y = b[i];                                  \
			d[i] = EXPR;                                           \
		}                                                              \
	}

#define DEF_INT(tn, TT, UU)                                                    \
	DEF(sum_##tn, TT, SUM_I(UU))                                           \
	DEF(prod_##tn, TT, PROD_I(UU))                                         \
	DEF(min_##tn, TT, MIN_X)                                               \
	DEF(max_##tn, TT, MAX_X)

DEF_INT(i8, int8_t, uint8_t)
DEF_INT(u8, uint8_t, uint8_t)
DEF_INT(i32, int32_t, uint32_t)
DEF_INT(u32, uint32_t, uint32_t)
DEF_INT(i64, int64_t, uint64_t)
DEF_INT(u64, uint64_t, uint64_t)

#define DEF_FLT(tn, TT)                                                        \
	DEF(sum_##tn, TT, x + y)                                               \
	DEF(prod_##tn, TT, x * y)                                              \
	DEF(min_##tn, TT, MIN_X)                                               \
	DEF(max_##tn, TT, MAX_X)
DEF_FLT(f32, float)
DEF_FLT(f64, double)

#define HF(FROM, TO, E) TO(E)
#define DEF_HALF(tn, FROM, TO)                                                 \
	DEF(sum_##tn, uint16_t, TO(FROM(x) + FROM(y)))                         \
	DEF(prod_##tn, uint16_t, TO(FROM(x) * FROM(y)))                        \
	DEF(min_##tn, uint16_t, (FROM(x) < FROM(y) ? x : y))                   \
	DEF(max_##tn, uint16_t, (FROM(x) > FROM(y) ? x : y))
DEF_HALF(f16, gc_f16_to_f32, gc_f32_to_f16)
DEF_HALF(bf16, gc_bf16_to_f32, gc_f32_to_bf16)

typedef void (*red3_fn)(void *restrict, const void *restrict,
			const void *restrict, size_t);
typedef void (*red2_fn)(void *restrict, const void *restrict, size_t);

#define ROW(tn) { sum_##tn##3, prod_##tn##3, min_##tn##3, max_##tn##3 }
#define ROW2(tn) { sum_##tn##2, prod_##tn##2, min_##tn##2, max_##tn##2 }
static const red3_fn red3[GCOLL_NUM_TYPES][4] = {
	ROW(i8), ROW(u8), ROW(i32), ROW(u32), ROW(i64), ROW(u64),
	ROW(f16), ROW(bf16), ROW(f32), ROW(f64),
};
static const red2_fn red2[GCOLL_NUM_TYPES][4] = {
	ROW2(i8), ROW2(u8), ROW2(i32), ROW2(u32), ROW2(i64), ROW2(u64),
	ROW2(f16), ROW2(bf16), ROW2(f32), ROW2(f64),
};

size_t gc_type_size(gcoll_datatype_t t)
{
	static const size_t sz[GCOLL_NUM_TYPES] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

	return (unsigned)t < GCOLL_NUM_TYPES ? sz[t] : 0;
}

GC_API size_t gcoll_type_size(gcoll_datatype_t t)
{
	return gc_type_size(t);
}

/*
 * The kernels leave the calling thread's floating-point environment as
 * they found it, as a reduction on a device would: the flags they raise
 * (inexact, overflow, ...) are not the caller's business.  On x86 they
 * run with MXCSR's inexact flag set when the caller has inexact masked
 * (the default): a sticky flag, so the results are the same bits, but
 * QEMU's TCG, which emulates SSE arithmetic in software, takes its
 * host-FPU fast path only once that flag is set.  Measured in the test
 * guest, fp32 d = a + b on exact operands: 14.9 ns per element with the
 * flag clear, 7.8 with it set.  Elsewhere nothing is changed.
 * fp_enter(t) goes before a kernel of type t and fp_leave(t, what it
 * returned) after; both do nothing for integer types.
 */
#if defined(__x86_64__) || defined(__i386__)
#define MXCSR_PE 0x0020u	/* precision (inexact) flag */
#define MXCSR_PM 0x1000u	/* precision exception mask */
typedef unsigned int fp_saved_t;

static bool is_float(gcoll_datatype_t t)
{
	return t == GCOLL_FLOAT16 || t == GCOLL_BFLOAT16 ||
	       t == GCOLL_FLOAT32 || t == GCOLL_FLOAT64;
}

static fp_saved_t fp_enter(gcoll_datatype_t t)
{
	unsigned int csr;

	if (!is_float(t))
		return 0;
	csr = _mm_getcsr();
	if ((csr & MXCSR_PM) && !(csr & MXCSR_PE))
		_mm_setcsr(csr | MXCSR_PE);
	return csr;
}

static void fp_leave(gcoll_datatype_t t, fp_saved_t csr)
{
	if (is_float(t))
		_mm_setcsr(csr);
}
#else
typedef int fp_saved_t;

static fp_saved_t fp_enter(gcoll_datatype_t t)
{
	(void)t;
	return 0;
}

static void fp_leave(gcoll_datatype_t t, fp_saved_t saved)
{
	(void)t;
	(void)saved;
}
#endif

void gc_reduce(void *dst, const void *a, const void *b, size_t count,
	       gcoll_datatype_t t, gcoll_redop_t op)
{
	int o = op == GCOLL_AVG ? GCOLL_SUM : (int)op;
	fp_saved_t saved;

	if (!count)
		return;
	saved = fp_enter(t);
	/* every op is commutative, so an aliased operand becomes the
	 * in/out operand of the two-operand kernel */
	if (dst == a)
		red2[t][o](dst, b, count);
	else if (dst == b)
		red2[t][o](dst, a, count);
	else
		red3[t][o](dst, a, b, count);
	fp_leave(t, saved);
}

#define SCALE(TT, EXPR)                                                        \
	do {                                                                   \
		TT *restrict p = buf;                                          \
		for (size_t i = 0; i < count; i++) {                           \
			TT x = p[i];                                           \
			p[i] = EXPR;                                           \
		}                                                              \
	} while (0)

void gc_scale_avg(void *buf, size_t count, gcoll_datatype_t t, int n)
{
	fp_saved_t saved = fp_enter(t);

	switch (t) {
	case GCOLL_INT8: SCALE(int8_t, (int8_t)(x / n)); break;
	case GCOLL_UINT8: SCALE(uint8_t, (uint8_t)(x / (unsigned)n)); break;
	case GCOLL_INT32: SCALE(int32_t, x / n); break;
	case GCOLL_UINT32: SCALE(uint32_t, x / (uint32_t)n); break;
	case GCOLL_INT64: SCALE(int64_t, x / n); break;
	case GCOLL_UINT64: SCALE(uint64_t, x / (uint64_t)n); break;
	case GCOLL_FLOAT16: SCALE(uint16_t, gc_f32_to_f16(gc_f16_to_f32(x) / (float)n)); break;
	case GCOLL_BFLOAT16: SCALE(uint16_t, gc_f32_to_bf16(gc_bf16_to_f32(x) / (float)n)); break;
	case GCOLL_FLOAT32: SCALE(float, x / (float)n); break;
	case GCOLL_FLOAT64: SCALE(double, x / (double)n); break;
	default: break;
	}
	fp_leave(t, saved);
}
