/* SPDX-License-Identifier: MIT */
/*
 * gcoll-perf: nccl-tests shaped benchmark for libgcoll.
 *
 *   gcoll-perf [-C allreduce|allgather|reducescatter|broadcast|reduce|alltoall]
 *              [-b 8] [-e 256M] [-f 2] [-o sum] [-d float] [-c 1] [-n 20]
 *              [-w 5] [-g nranks] [-r root] [-H accel[,accel...]]
 *
 * -I runs allreduce, broadcast and reduce in place (one buffer).
 * -A runs the whole matrix on one communicator, every result checked: every
 * collective, every type, every reduction of the reducing ones, out of
 * place and (allreduce, broadcast, reduce) in place, the root rotating,
 * at each size from -b to -e (-b 0: the zero-count call too); -C, -d, -o
 * and -I are ignored, nothing is timed, and rank 0 prints only the rows
 * with wrong elements or errors and a summary line
 * "# matrix: C combinations, R rows (Z of size 0), W wrong, F failed".
 * -H puts the send and receive buffers in device memory (HBM) of the
 * listed accel devices (rank r takes the (r mod n)-th), allocated through
 * hl-thunk, exported as dma-buf and registered with
 * gcoll_mem_register_dmabuf(); the data is filled and checked through the
 * accel CPU mapping.
 * Launch: with RANK/WORLD_SIZE (or OMPI_COMM_WORLD_RANK/SIZE) in the
 * environment it is one rank of an externally launched job and bootstraps
 * from MASTER_ADDR:MASTER_PORT (rank 0 serves); otherwise it forks -g ranks
 * itself.  Rank 0 prints: size (B), count, type, redop, root, time (us),
 * algbw and busbw (GB/s, nccl-tests factors) and #wrong (with -c 1).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <execinfo.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "gcoll.h"
#ifdef GCOLL_PERF_HBM
#include <hlthunk.h>
#endif

enum { C_AR, C_AG, C_RS, C_BC, C_RED, C_A2A };
static const char *cname[] = { "allreduce", "allgather", "reducescatter", "broadcast", "reduce",
			       "alltoall" };
static const char *tname[] = { "int8", "uint8", "int32", "uint32", "int64", "uint64",
			       "half", "bfloat16", "float", "double" };
static const char *oname[] = { "sum", "prod", "min", "max", "avg" };

static struct {
	int coll;
	size_t minb, maxb;
	double factor;
	gcoll_redop_t op;
	gcoll_datatype_t type;
	int check, iters, warmup, nranks, root;
	const char *hbm;   /* -H: accel indices, comma separated */
	int inplace;       /* -I: the receive buffer is the send buffer */
	int matrix;        /* -A */
} o = { C_AR, 8, 256u << 20, 2, GCOLL_SUM, GCOLL_FLOAT32, 1, 20, 5, 2, 0, NULL, 0, 0 };

/* A benchmark buffer: host memory, or HBM of an accel device exported as
 * dma-buf and used through its CPU mapping.  The buffer starts lead bytes
 * into its allocation (base). */
struct pbuf {
	void *cpu, *base;
	size_t len, lead;
	int acc_fd;        /* -1: host memory */
#ifdef GCOLL_PERF_HBM
	struct hlthunk_hbm_buf hbm;
#endif
	gcoll_mem_t mem;
};

#ifdef GCOLL_PERF_HBM
/* the accel index rank takes from -H's list */
static int hbm_index(int rank)
{
	int n = 0, idx[64];

	for (const char *p = o.hbm; p && *p && n < 64; ) {
		char *e;

		idx[n++] = (int)strtol(p, &e, 10);
		p = *e == ',' ? e + 1 : e + strlen(e);
	}
	return n ? idx[rank % n] : -1;
}
#endif

/*
 * lead staggers the buffers: the send buffer starts one page into its
 * allocation, the receive buffer two.  Two HBM mappings of the same size
 * land next to each other, so without it the operands of a reduction at
 * the same offset were exactly the buffer size, a power of two, apart.
 * Under QEMU's TCG that halved the reduction's speed: its software TLB is
 * direct-mapped, and such pages evict each other's entries on every
 * access.  With the leads they are one page more apart (two if mappings
 * grow upwards).  Host buffers were already staggered by malloc's
 * headers; this gives both kinds the same layout, as STREAM's OFFSET does,
 * and registers the HBM buffers at an offset into their dma-bufs.
 */
static int pbuf_alloc(gcoll_comm_t c, int rank, struct pbuf *b, size_t len, size_t lead,
		      const char *what)
{
	len = (len + 4095) & ~(size_t)4095;
	memset(b, 0, sizeof(*b));
	b->len = len;
	b->lead = lead;
	b->acc_fd = -1;
#ifdef GCOLL_PERF_HBM
	b->hbm = HLTHUNK_HBM_BUF_INIT;
#endif
	if (!o.hbm) {
		b->base = aligned_alloc(4096, len + lead);
		if (!b->base)
			fprintf(stderr, "rank %d: cannot allocate %zu bytes for the %s buffer\n", rank, len,
				what);
		b->cpu = b->base ? (char *)b->base + lead : NULL;
		return b->cpu ? 0 : -1;
	}
#ifdef GCOLL_PERF_HBM
	int acc = hbm_index(rank);
	gcoll_result_t rc;

	b->acc_fd = hlthunk_open_by_index((uint32_t)acc);
	if (b->acc_fd < 0) {
		fprintf(stderr, "rank %d: cannot open accel %d for the %s buffer: %s\n", rank, acc,
			what, strerror(-b->acc_fd));
		return -1;
	}
	if (hlthunk_hbm_buf_create(b->acc_fd, len + lead,
				   HLTHUNK_HBM_CONTIGUOUS | HLTHUNK_HBM_CPU_MAP, &b->hbm)) {
		fprintf(stderr, "rank %d: %zu bytes of HBM on accel %d for the %s buffer: %s failed: %s\n",
			rank, len + lead, acc, what, b->hbm.step, strerror(errno));
		return -1;
	}
	b->base = b->hbm.cpu;
	b->cpu = (char *)b->base + lead;
	rc = gcoll_mem_register_dmabuf(c, b->hbm.dmabuf_fd, lead, len, b->cpu, &b->mem);
	if (rc) {
		fprintf(stderr, "rank %d: registering the %s buffer (HBM of accel %d, dma-buf fd %d): %s\n",
			rank, what, acc, b->hbm.dmabuf_fd, gcoll_get_last_error());
		return -1;
	}
	return 0;
#else
	(void)c;
	fprintf(stderr, "gcoll-perf: -H needs hl-thunk, which this build did not find\n");
	return -1;
#endif
}

static void pbuf_free(gcoll_comm_t c, struct pbuf *b)
{
	if (b->acc_fd < 0) {
		free(b->base);
		return;
	}
#ifdef GCOLL_PERF_HBM
	if (b->mem)
		gcoll_mem_deregister(c, b->mem);
	hlthunk_hbm_buf_destroy(&b->hbm);
	hlthunk_close(b->acc_fd);
#else
	(void)c;
#endif
}

static size_t parse_size(const char *s)
{
	char *e;
	double v = strtod(s, &e);

	if (*e == 'K' || *e == 'k')
		v *= 1024;
	else if (*e == 'M' || *e == 'm')
		v *= 1024 * 1024;
	else if (*e == 'G' || *e == 'g')
		v *= 1024.0 * 1024 * 1024;
	return (size_t)v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* fp16 of a small integer (exact: normal numbers only) and back */
static uint16_t int_to_half(int v)
{
	int e = 0;

	if (!v)
		return 0;
	while ((v >> (e + 1)) > 0)
		e++;
	/* v = 1.m * 2^e: 10 mantissa bits hold v's bits below the top one */
	return (uint16_t)(((e + 15) << 10) | (((unsigned)v << (10 - e)) & 0x3ff));
}

static double half_to_double(uint16_t h)
{
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v;

	if (!e)
		v = ldexp(m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexp(1024 + m, e - 25);
	return h & 0x8000 ? -v : v;
}

static uint16_t int_to_bf16(int v)
{
	float f = (float)v;
	uint32_t x;

	memcpy(&x, &f, sizeof(x));
	return (uint16_t)(x >> 16);
}

static double bf16_to_double(uint16_t b)
{
	uint32_t x = (uint32_t)b << 16;
	float f;

	memcpy(&f, &x, sizeof(f));
	return f;
}

static double in_val(int rank, size_t i, size_t salt, gcoll_datatype_t t);

/* exactly representable small integers in every type */
static void fill(void *b, size_t n, gcoll_datatype_t t, int rank, size_t salt)
{
	for (size_t i = 0; i < n; i++) {
		int v = (int)in_val(rank, i, salt, t);

		switch (t) {
		case GCOLL_INT8: case GCOLL_UINT8: ((uint8_t *)b)[i] = (uint8_t)v; break;
		case GCOLL_INT32: case GCOLL_UINT32: ((uint32_t *)b)[i] = (uint32_t)v; break;
		case GCOLL_INT64: case GCOLL_UINT64: ((uint64_t *)b)[i] = (uint64_t)v; break;
		case GCOLL_FLOAT16: ((uint16_t *)b)[i] = int_to_half(v); break;
		case GCOLL_BFLOAT16: ((uint16_t *)b)[i] = int_to_bf16(v); break;
		case GCOLL_FLOAT32: ((float *)b)[i] = (float)v; break;
		case GCOLL_FLOAT64: ((double *)b)[i] = v; break;
		default: break;
		}
	}
}

static double val(const void *b, size_t i, gcoll_datatype_t t)
{
	switch (t) {
	case GCOLL_INT8: case GCOLL_UINT8: return ((const uint8_t *)b)[i];
	case GCOLL_INT32: case GCOLL_UINT32: return ((const uint32_t *)b)[i];
	case GCOLL_INT64: case GCOLL_UINT64: return (double)((const uint64_t *)b)[i];
	case GCOLL_FLOAT16: return half_to_double(((const uint16_t *)b)[i]);
	case GCOLL_BFLOAT16: return bf16_to_double(((const uint16_t *)b)[i]);
	case GCOLL_FLOAT32: return ((const float *)b)[i];
	case GCOLL_FLOAT64: return ((const double *)b)[i];
	default: return 0;
	}
}

static double in_val(int rank, size_t i, size_t salt, gcoll_datatype_t t)
{
	/* products stay within int8 up to 6 ranks */
	int m = (o.coll == C_AR || o.coll == C_RS || o.coll == C_RED) && o.op == GCOLL_PROD ? 3 : 5;

	(void)t;
	return (int)((i + salt + (size_t)rank * 3) % (size_t)m);
}

static gcoll_result_t run(gcoll_comm_t c, void *sb, void *rb, size_t count)
{
	switch (o.coll) {
	case C_AR: return gcoll_allreduce(sb, rb, count, o.type, o.op, c, NULL);
	case C_AG: return gcoll_allgather(sb, rb, count, o.type, c, NULL);
	case C_RS: return gcoll_reduce_scatter(sb, rb, count, o.type, o.op, c, NULL);
	case C_BC: return gcoll_broadcast(sb, rb, count, o.type, o.root, c, NULL);
	case C_RED: return gcoll_reduce(sb, rb, count, o.type, o.op, o.root, c, NULL);
	default: return gcoll_alltoall(sb, rb, count, o.type, c, NULL);
	}
}

static double red_expect(int n, size_t idx, gcoll_datatype_t t)
{
	double acc = in_val(0, idx, 0, t);

	for (int r = 1; r < n; r++) {
		double v = in_val(r, idx, 0, t);

		switch (o.op) {
		case GCOLL_SUM: case GCOLL_AVG: acc += v; break;
		case GCOLL_PROD: acc *= v; break;
		case GCOLL_MIN: acc = v < acc ? v : acc; break;
		default: acc = v > acc ? v : acc; break;
		}
	}
	if (o.op == GCOLL_AVG)
		acc = t >= GCOLL_FLOAT16 ? acc / n : (double)((long long)acc / n);
	return acc;
}

static long long check(int rank, int n, const void *rb, size_t count)
{
	long long wrong = 0;
	gcoll_datatype_t t = o.type;

	for (size_t i = 0; i < count; i++) {
		double want, got;

		switch (o.coll) {
		case C_AR: want = red_expect(n, i, t); break;
		case C_RED: if (rank != o.root) return 0; want = red_expect(n, i, t); break;
		case C_RS: want = red_expect(n, (size_t)rank * count + i, t); break;
		case C_AG: want = in_val((int)(i / (count / (size_t)n)), i % (count / (size_t)n), 0, t); break;
		case C_BC: want = in_val(o.root, i, 0, t); break;
		default: {
			size_t blk = count / (size_t)n;

			want = in_val((int)(i / blk), (size_t)rank * blk + i % blk, 0, t);
		}
		}
		got = val(rb, i, t);
		/* an average of floats need not be exact (a third in fp16) */
		if (got != want && !(o.op == GCOLL_AVG && t >= GCOLL_FLOAT16 && o.coll != C_AG &&
				     o.coll != C_BC && o.coll != C_A2A &&
				     fabs(got - want) <= fabs(want) * (t <= GCOLL_BFLOAT16 ? 1e-2 : 1e-6)))
			wrong++;
	}
	return wrong;
}

struct tally {
	double sum_bw;
	int nsz;
	long long rows, zrows, wrong;   /* matrix mode */
};

/* The current collective, type and op at every size from -b to -e; false
 * when an operation failed (the communicator is then of no further use). */
static bool sweep(gcoll_comm_t c, int rank, int n, void *sb, void *rb, struct tally *ty)
{
	size_t es = gcoll_type_size(o.type);
	gcoll_result_t rc = GCOLL_SUCCESS;
	bool ip = sb == rb;

	for (size_t bytes = o.minb; bytes <= o.maxb; ) {
		size_t count = bytes / es, arg = count, sbytes;
		double t0, t = 0, tmax = 0, algbw, busbw, f;
		long long wrong = 0, wsum = 0;

		if (o.coll == C_AG || o.coll == C_RS || o.coll == C_A2A) {
			count = count / (size_t)n * (size_t)n;
			arg = count / (size_t)n;
		}
		sbytes = count * es;
		/* a size too small for one element of each rank: skipped, but
		 * size 0 itself is a call with count 0 */
		if (!count && bytes)
			goto next;
		if (!o.matrix) {
			for (int i = 0; i < o.warmup && !rc; i++)
				rc = run(c, sb, rb, arg);
			if (!rc)
				rc = gcoll_barrier(c, NULL);
			t0 = now();
			for (int i = 0; i < o.iters && !rc; i++)
				rc = run(c, sb, rb, arg);
			t = (now() - t0) / o.iters;
		}
		if (!rc && o.check) {
			size_t incount = o.coll == C_AR || o.coll == C_BC || o.coll == C_RED ? count
					 : o.coll == C_AG ? count / (size_t)n : count;
			if (!ip)
				memset(rb, 0, sbytes);
			fill(sb, incount, o.type, rank, 0);
			rc = run(c, sb, rb, arg);
			if (!rc)
				wrong = check(rank, n, rb, o.coll == C_RS ? count / (size_t)n : count);
			memset(sb, 0, sbytes);
		}
		if (rc) {
			fprintf(stderr, "rank %d: %s %s %s%s of %zu bytes failed: %s (%s)\n", rank,
				cname[o.coll], tname[o.type], oname[o.op], ip ? " in place" : "",
				sbytes, gcoll_get_error_string(rc), gcoll_get_last_error());
			return false;
		}
		if (gcoll_allreduce(&t, &tmax, 1, GCOLL_FLOAT64, GCOLL_MAX, c, NULL) ||
		    gcoll_allreduce(&wrong, &wsum, 1, GCOLL_INT64, GCOLL_SUM, c, NULL)) {
			fprintf(stderr, "rank %d: gathering the results failed: %s\n", rank,
				gcoll_get_last_error());
			return false;
		}
		switch (o.coll) {
		case C_AR: f = 2.0 * (n - 1) / n; break;
		case C_AG: case C_RS: case C_A2A: f = (double)(n - 1) / n; break;
		default: f = 1;
		}
		algbw = tmax > 0 ? (double)sbytes / tmax / 1e9 : 0;
		busbw = algbw * f;
		ty->sum_bw += busbw;
		ty->nsz++;
		ty->rows++;
		ty->zrows += !count;
		ty->wrong += wsum;
		if (rank == 0 && (!o.matrix || wsum)) {
			printf("  %10zu %12zu %8s %6s %6d %10.2f %8.3f %8.3f %6lld", sbytes, count,
			       tname[o.type], o.coll == C_AR || o.coll == C_RS || o.coll == C_RED ? oname[o.op] : "none",
			       o.coll == C_BC || o.coll == C_RED ? o.root : -1, tmax * 1e6, algbw, busbw,
			       o.check ? wsum : 0);
			if (o.matrix)
				printf(" %s %s", cname[o.coll], ip ? "in-place" : "out-of-place");
			printf("\n");
			fflush(stdout);
		}
next:
		if (!bytes) {
			bytes = 1;
		} else {
			size_t nb = (size_t)((double)bytes * (o.factor > 1 ? o.factor : 2));

			bytes = nb > bytes ? nb : bytes + 1;
		}
	}
	return true;
}

static int rank_main(int rank, int n, gcoll_unique_id id)
{
	size_t es = gcoll_type_size(o.type);
	gcoll_comm_t c;
	gcoll_result_t rc;
	struct pbuf sbuf, rbuf;
	bool inplace = o.inplace && !o.matrix;
	void *sb, *rb;
	const char *prov = "?";
	int rails = 0, dmab = 0, rxd = 0;
	struct tally ty = { 0 };
	bool fail = false, staged = false;

	rc = gcoll_comm_init_rank(&c, n, id, rank);
	if (rc) {
		fprintf(stderr, "rank %d: init failed: %s\n", rank, gcoll_get_error_string(rc));
		return 1;
	}
	gcoll_comm_transport_info(c, &prov, &rails, &dmab, &rxd);
	memset(&rbuf, 0, sizeof(rbuf));
	rbuf.acc_fd = -1;
	if (pbuf_alloc(c, rank, &sbuf, o.maxb, 4096, "send") ||
	    (!inplace && pbuf_alloc(c, rank, &rbuf, o.maxb, 8192, "receive")))
		return 1;
	sb = sbuf.cpu;
	rb = inplace ? sb : rbuf.cpu;
	if (o.hbm) {
		dmab = sbuf.mem && gcoll_mem_is_dmabuf(sbuf.mem) &&
		       (inplace || (rbuf.mem && gcoll_mem_is_dmabuf(rbuf.mem)));
		staged = sbuf.mem && gcoll_mem_is_staged(sbuf.mem);
	}
	memset(sb, 0, o.maxb);
	memset(rb, 0, o.maxb);
	if (rank == 0) {
		printf("# gcoll-perf %s: nranks %d, provider %s, rails %d, buffers %s, dma-buf MR %s%s\n",
		       o.matrix ? "matrix" : cname[o.coll], n, prov, rails, o.hbm ? "HBM" : "host",
		       dmab ? "native" : staged ? "staged" : "fallback", rxd ? ", FI_RX_CQ_DATA" : "");
		printf("#\n# %10s %12s %8s %6s %6s %10s %8s %8s %6s\n", "size", "count", "type", "redop",
		       "root", "time", "algbw", "busbw", "#wrong");
		printf("# %10s %12s %8s %6s %6s %10s %8s %8s %6s\n", "(B)", "(elements)", "", "", "", "(us)",
		       "(GB/s)", "(GB/s)", "");
		fflush(stdout);
	}
	/* Warm up before the first size: the first operations of a
	 * communicator pay for connection setup and first touches, and the
	 * ranks start out of step; that made the first size of a run look 10
	 * to 30 times slower than the next.  Run the first size for 0.2 s
	 * (rank 0's clock; the others follow its verdict). */
	if (o.warmup > 0 && !o.matrix) {
		size_t wcount = o.minb / es ? o.minb / es : 1;
		double start = now();

		if (o.coll == C_AG || o.coll == C_RS || o.coll == C_A2A)
			wcount = 1;
		for (int go = 1; go && !rc; ) {
			int32_t mine;

			for (int i = 0; i < 50 && !rc; i++)
				rc = run(c, sb, rb, wcount);
			mine = rank == 0 && now() - start < 0.2;
			if (!rc)
				rc = gcoll_allreduce(&mine, &go, 1, GCOLL_INT32, GCOLL_MAX, c, NULL);
		}
		if (rc) {
			fprintf(stderr, "rank %d: warm-up %s failed: %s\n", rank, cname[o.coll],
				gcoll_get_error_string(rc));
			fail = true;
		}
	}
	if (!fail && !o.matrix) {
		fail = !sweep(c, rank, n, sb, rb, &ty);
	} else if (!fail) {
		int combos = 0;

		for (int cl = 0; cl < 6 && !fail; cl++)
			for (int t = 0; t < GCOLL_NUM_TYPES && !fail; t++)
				for (int op = 0; op < GCOLL_NUM_OPS && !fail; op++)
					for (int ip = 0; ip < 2 && !fail; ip++) {
						bool red = cl == C_AR || cl == C_RS || cl == C_RED;

						if ((!red && op) ||
						    (ip && cl != C_AR && cl != C_BC && cl != C_RED))
							continue;
						o.coll = cl;
						o.type = (gcoll_datatype_t)t;
						o.op = (gcoll_redop_t)op;
						o.inplace = ip;
						o.root = combos % n;
						combos++;
						fail = !sweep(c, rank, n, sb, ip ? sb : rbuf.cpu, &ty);
					}
		if (rank == 0)
			printf("# matrix: %d combinations, %lld rows (%lld of size 0), %lld wrong, %d failed\n",
			       combos, ty.rows, ty.zrows, ty.wrong, fail);
	}
	if (rank == 0 && !o.matrix)
		printf("# Avg bus bandwidth    : %g\n#\n", ty.nsz ? ty.sum_bw / ty.nsz : 0);
	fflush(stdout);   /* fork mode: ranks leave through _exit */
	pbuf_free(c, &sbuf);
	pbuf_free(c, &rbuf);
	gcoll_comm_destroy(c);
	return fail ? 1 : 0;
}

static int find(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

/*
 * A rank that dies of a signal says where: its stack, each frame as
 * object(+offset) for addr2line, on stderr, then dies of the same signal.
 * Collective tests keep the ranks' stderr in their reports, and their
 * machines rarely keep a core.
 */
static void fatal_signal(int sig)
{
	static const char head[] = "gcoll-perf: fatal signal, stack:\n";
	void *bt[48];
	int n = backtrace(bt, 48);

	if (write(2, head, sizeof(head) - 1) > 0)
		backtrace_symbols_fd(bt, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void fatal_signals_report(void)
{
	void *bt[1];

	backtrace(bt, 1);	/* loads the unwinder now, not in the handler */
	signal(SIGSEGV, fatal_signal);
	signal(SIGBUS, fatal_signal);
	signal(SIGILL, fatal_signal);
	signal(SIGFPE, fatal_signal);
	signal(SIGABRT, fatal_signal);
}

int main(int argc, char **argv)
{
	const char *er = getenv("RANK"), *ew = getenv("WORLD_SIZE");
	int opt;

	fatal_signals_report();
	while ((opt = getopt(argc, argv, "C:b:e:f:o:d:c:n:w:g:r:H:IAh")) != -1) {
		switch (opt) {
		case 'C':
			o.coll = find(optarg, cname, 6);
			if (o.coll < 0 && !strcmp(optarg, "all_reduce"))
				o.coll = C_AR;
			break;
		case 'b': o.minb = parse_size(optarg); break;
		case 'e': o.maxb = parse_size(optarg); break;
		case 'f': o.factor = atof(optarg); break;
		case 'o': o.op = (gcoll_redop_t)find(optarg, oname, 5); break;
		case 'd': {
			int t = find(optarg, tname, 10);

			if (t < 0 && !strcmp(optarg, "fp32")) t = GCOLL_FLOAT32;
			if (t < 0 && !strcmp(optarg, "fp16")) t = GCOLL_FLOAT16;
			if (t < 0 && !strcmp(optarg, "bf16")) t = GCOLL_BFLOAT16;
			o.type = (gcoll_datatype_t)t;
			break;
		}
		case 'c': o.check = atoi(optarg); break;
		case 'n': o.iters = atoi(optarg); break;
		case 'w': o.warmup = atoi(optarg); break;
		case 'g': o.nranks = atoi(optarg); break;
		case 'r': o.root = atoi(optarg); break;
		case 'H': o.hbm = optarg; break;
		case 'I': o.inplace = 1; break;
		case 'A': o.matrix = 1; break;
		default:
			fprintf(stderr,
				"usage: %s [-C coll] [-b minbytes] [-e maxbytes] [-f factor] [-o op] [-d type]\n"
				"          [-c check] [-n iters] [-w warmup] [-g nranks] [-r root]\n"
				"          [-H accel[,accel...]]   (buffers in HBM, dma-buf registered)\n"
				"          [-I]   (in place: allreduce, broadcast, reduce)\n"
				"          [-A]   (every collective, type, op, in and out of place, checked)\n",
				argv[0]);
			return 2;
		}
	}
	if (o.coll < 0 || (int)o.op < 0 || (int)o.type < 0 || o.iters < 1 || o.nranks < 1 ||
	    o.maxb < o.minb || o.root < 0 ||
	    (o.inplace && !o.matrix && o.coll != C_AR && o.coll != C_BC && o.coll != C_RED) ||
	    (o.matrix && !o.check)) {
		fprintf(stderr, "gcoll-perf: bad option value\n");
		return 2;
	}
	if (!er && getenv("OMPI_COMM_WORLD_RANK")) {
		er = getenv("OMPI_COMM_WORLD_RANK");
		ew = getenv("OMPI_COMM_WORLD_SIZE");
	}
	if (er && ew) {
		int rank = atoi(er), n = atoi(ew);
		const char *host = getenv("MASTER_ADDR");
		const char *port = getenv("MASTER_PORT");
		gcoll_unique_id id;

		if (gcoll_unique_id_from_addr(&id, host ? host : "127.0.0.1", port ? atoi(port) : 29500,
					      rank == 0)) {
			fprintf(stderr, "gcoll-perf: bootstrap address: %s\n", gcoll_get_last_error());
			return 1;
		}
		return rank_main(rank, n, id);
	}
	{
		gcoll_unique_id id;
		pid_t pids[256];
		int bad = 0;

		int pfd[256][2];

		if (o.nranks > 256) {
			fprintf(stderr, "gcoll-perf: at most 256 ranks in fork mode\n");
			return 2;
		}
		fflush(stdout);
		/* fork before the id exists: the id starts the bootstrap thread,
		 * and children are never forked from a threaded parent */
		for (int r = 0; r < o.nranks; r++) {
			if (pipe(pfd[r]))
				return 1;
			pids[r] = fork();
			if (pids[r] == 0) {
				close(pfd[r][1]);
				if (read(pfd[r][0], &id, sizeof(id)) != (ssize_t)sizeof(id))
					_exit(1);
				_exit(rank_main(r, o.nranks, id));
			}
			close(pfd[r][0]);
		}
		if (gcoll_get_unique_id(&id)) {
			fprintf(stderr, "gcoll-perf: cannot create unique id\n");
			memset(&id, 0, sizeof(id));
		}
		for (int r = 0; r < o.nranks; r++) {
			if (write(pfd[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
				bad++;
			close(pfd[r][1]);
		}
		for (int r = 0; r < o.nranks; r++) {
			int st;

			waitpid(pids[r], &st, 0);
			if (!WIFEXITED(st) || WEXITSTATUS(st))
				bad++;
		}
		return bad ? 1 : 0;
	}
}
