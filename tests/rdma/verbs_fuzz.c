// SPDX-License-Identifier: GPL-2.0
/*
 * verbs_fuzz: random and boundary input to gaudi_ib and its engine for a
 * fixed time, then a check that the device still moves data.
 *
 *   verbs_fuzz IBDEV GID_INDEX SECONDS [SEED]
 *
 * Two kinds of input, interleaved at random:
 *
 * - uverbs commands written straight to the verbs file (the write() ABI of
 *   <rdma/ib_user_verbs.h>, as libibverbs would send them, but without its
 *   checks): every command the driver implements and unknown ones, with
 *   handles that are live, destroyed, someone else's or random, boundary
 *   sizes, non-zero reserved bytes and driver udata, response pointers that
 *   are NULL or unmapped, and in_words/out_words that do not match; mmap()
 *   of random offsets of the verbs file.
 *
 * - the mmap'd rings of live QPs: two RC pairs and a UD QP on the port's
 *   own GID (loopback), whose send and receive queues get WQEs with random
 *   opcodes, flags, SGE counts (up to 255), lengths, keys and address
 *   vectors, producer indices that jump past the ring or go backwards,
 *   bytes changed after the doorbell, and CQ consumer indices that lie;
 *   QPs are reset and reconnected under traffic.
 *
 * Every call may fail; none may crash this process or the kernel.  Then
 * the context is closed with everything the raw commands made still
 * alive, and a fresh RC pair writes and reads 64 KiB and checks the bytes.
 * The caller checks the kernel log and that nothing stayed allocated
 * (tests/rdma/hardening.sh).  Output: KTAP, through kselftest.h's helpers
 * (a fuzzer is one run, not a set of tests: no harness): point 1 is the
 * fuzzing, point 2 the check; a failure to set up fails point 1 and ends
 * the run, which then falls short of its plan.
 */
#define _GNU_SOURCE	/* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/gaudi-abi.h>

#include "kselftest.h"

#include "../lib/fuzz_rng.h"

#define NQP		5	/* 0<->1 and 2<->3: RC pairs; 4: UD */
#define SQ_DEPTH	64
#define RQ_DEPTH	16
#define BUF_LEN		(1 << 20)
#define NRAW		16	/* raw-created objects kept per type */
#define CHECK_LEN	(64 << 10)
#define NPOLL		1024	/* most work completions a raw POLL_CQ asks */

enum htype { H_PD, H_CQ, H_QP, H_AH, H_MR, H_SRQ, H_NTYPES };

struct ring {
	uint8_t *base;		/* the mapping: header, then entries */
	uint32_t n;		/* entries */
	uint32_t esize;
	uint32_t prod;		/* what this process last published */
};

struct fqp {
	struct ibv_qp *qp;
	struct ring sq, rq;
	int peer;		/* index of the RC peer, -1 for UD */
};

static struct {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_ah *ah;
	struct ring cqr;
	struct fqp q[NQP];
	struct gaudi_av av;	/* of the port's own GID, for UD WQEs */
	uint8_t *buf;
	union ibv_gid gid;
	int gidx;
	enum ibv_mtu mtu;
	uint32_t raw[H_NTYPES][NRAW];	/* handles the raw commands made */
	uint32_t own[H_NTYPES][NQP];	/* handles libibverbs owns */
	int nown[H_NTYPES];
	int pipe[2];		/* fuzz_mmap's window onto its mappings */
	unsigned long cmds, cmds_ok, wqes, doorbells, states, mmaps, polled, faults;
} F;

/* The point under way fails, and so does the run (its plan is not done). */
static void die(const char *what)
{
	ksft_test_result_fail("%s: %s (the seed is in the first lines)\n", what,
			      strerror(errno));
	ksft_exit_fail();
}

/* ------------------------------------------------------------ handles */

static void own(enum htype t, uint32_t h)
{
	F.own[t][F.nown[t]++] = h;
}

static bool is_own(enum htype t, uint32_t h)
{
	for (int i = 0; i < F.nown[t]; i++)
		if (F.own[t][i] == h)
			return true;
	return false;
}

/* a handle of type @t: one of ours, a raw one (live or destroyed), random */
static uint32_t pick(enum htype t, bool destroy)
{
	uint32_t h;

	switch (below(4)) {
	case 0:
		if (!destroy && F.nown[t])
			return F.own[t][below(F.nown[t])];
		/* fall through */
	case 1:
	case 2:
		h = F.raw[t][below(NRAW)];
		if (h != UINT32_MAX)
			return h;
		/* fall through */
	default:
		h = below(2) ? (uint32_t)below(64) : (uint32_t)edgy(0);
		/* never destroy what libibverbs will destroy at the end */
		return destroy && is_own(t, h) ? UINT32_MAX : h;
	}
}

static void keep_raw(enum htype t, uint32_t h)
{
	F.raw[t][below(NRAW)] = h;	/* an overwritten one leaks to close */
}

/* ------------------------------------------------------ raw commands */

static void put32(uint8_t *p, size_t off, uint32_t v) { memcpy(p + off, &v, 4); }
static void put64(uint8_t *p, size_t off, uint64_t v) { memcpy(p + off, &v, 8); }

/*
 * Write command @cmd with the @len bytes of @in (its own struct, whose
 * first 8 bytes are the response pointer if @resp_at0) and room for @out
 * response bytes.  Sometimes the header lies about the sizes, or the
 * response pointer is NULL or points nowhere.  Returns write()'s result.
 */
static long raw_cmd(uint32_t cmd, uint8_t *in, size_t len, bool resp_at0,
		    void *resp, size_t out)
{
	uint8_t msg[1024];
	struct ib_uverbs_cmd_hdr hdr = {
		.command = cmd,
		.in_words = (uint16_t)((sizeof(hdr) + len) / 4),
		.out_words = (uint16_t)(out / 4),
	};
	long rc;

	if (resp_at0) {
		switch (below(16)) {
		case 0:
			put64(in, 0, 0);
			break;
		case 1:
			put64(in, 0, 4096);	/* nothing is mapped there */
			break;
		default:
			put64(in, 0, (uintptr_t)resp);
		}
	}
	if (!below(16))
		hdr.in_words = (uint16_t)edgy(hdr.in_words);
	if (!below(16))
		hdr.out_words = (uint16_t)edgy(hdr.out_words);
	if (len > sizeof(msg) - sizeof(hdr))
		len = sizeof(msg) - sizeof(hdr);
	memcpy(msg, &hdr, sizeof(hdr));
	memcpy(msg + sizeof(hdr), in, len);
	rc = write(F.ctx->cmd_fd, msg, sizeof(hdr) + len);
	F.cmds++;
	if (rc >= 0)
		F.cmds_ok++;
	return rc;
}

/*
 * Where raw commands' responses go.  The kernel zero-fills whatever
 * out_words (and, with the extended flag, provider_out_words) claim
 * beyond the response, and the fuzzer lies about both: up to 65535
 * 4-byte words, or twice 65535 8-byte words.  A raw POLL_CQ writes ne
 * work completions whatever out_words says; ne is kept below NPOLL.
 */
static uint8_t resp_buf[(2 * 65535 + 1) * 8];

/* the command's own bytes: zero with a few random ones, or all random */
static void fill(uint8_t *in, size_t len)
{
	if (below(4)) {
		memset(in, 0, len);
		for (int i = below(3); i > 0; i--)
			in[below(len)] = (uint8_t)rnd();
	} else {
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)rnd();
	}
}

/*
 * An MR the raw commands register must lie inside F.buf, or start where
 * nothing can be pinned: fuzzed WQEs find its keys sooner or later, and
 * the engine would then write into this process wherever the MR says.
 */
static void mr_inside_buf(uint8_t *in, size_t o)
{
	static const uint64_t nowhere[] = { 0, 4096, 1ULL << 47, UINT64_MAX - 4095 };
	uint64_t start, len, lo = (uintptr_t)F.buf;

	memcpy(&start, in + o, 8);
	memcpy(&len, in + o + 8, 8);
	if (start < lo || start >= lo + BUF_LEN) {
		put64(in, o, nowhere[below(4)]);
		return;
	}
	if (len > lo + BUF_LEN - start)
		put64(in, o + 8, lo + BUF_LEN - start);
}

struct rawdef {
	uint32_t cmd;
	uint8_t len;		/* the command struct */
	bool resp;		/* response pointer at offset 0 */
	int8_t creates;		/* enum htype, the handle at resp[0]; -1 */
	uint8_t h_off[3];	/* handle fields: offset + 1 (0: none) */
	int8_t h_type[3];
	bool destroys;		/* h_off[0] names what it destroys */
};

static const struct rawdef rawdefs[] = {
	{ IB_USER_VERBS_CMD_QUERY_DEVICE, 8, true, -1, {0}, {0}, false },
	{ IB_USER_VERBS_CMD_QUERY_PORT, 16, true, -1, {0}, {0}, false },
	{ IB_USER_VERBS_CMD_ALLOC_PD, 8, true, H_PD, {0}, {0}, false },
	{ IB_USER_VERBS_CMD_DEALLOC_PD, 4, false, -1, {1}, {H_PD}, true },
	{ IB_USER_VERBS_CMD_CREATE_AH, 56, true, H_AH, {17}, {H_PD}, false },
	{ IB_USER_VERBS_CMD_DESTROY_AH, 4, false, -1, {1}, {H_AH}, true },
	{ IB_USER_VERBS_CMD_REG_MR, 40, true, H_MR, {33}, {H_PD}, false },
	{ IB_USER_VERBS_CMD_REREG_MR, 48, true, -1, {9, 41}, {H_MR, H_PD}, false },
	{ IB_USER_VERBS_CMD_DEREG_MR, 4, false, -1, {1}, {H_MR}, true },
	{ IB_USER_VERBS_CMD_ALLOC_MW, 16, true, -1, {9}, {H_PD}, false },
	{ IB_USER_VERBS_CMD_CREATE_CQ, 32, true, H_CQ, {0}, {0}, false },
	{ IB_USER_VERBS_CMD_RESIZE_CQ, 16, true, -1, {9}, {H_CQ}, false },
	{ IB_USER_VERBS_CMD_DESTROY_CQ, 16, true, -1, {9}, {H_CQ}, true },
	{ IB_USER_VERBS_CMD_POLL_CQ, 16, true, -1, {9}, {H_CQ}, false },
	{ IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, 8, false, -1, {1}, {H_CQ}, false },
	{ IB_USER_VERBS_CMD_CREATE_QP, 56, true, H_QP, {17, 21, 25},
	  {H_PD, H_CQ, H_CQ}, false },
	{ IB_USER_VERBS_CMD_QUERY_QP, 16, true, -1, {9}, {H_QP}, false },
	{ IB_USER_VERBS_CMD_MODIFY_QP, 112, false, -1, {65}, {H_QP}, false },
	{ IB_USER_VERBS_CMD_DESTROY_QP, 16, true, -1, {9}, {H_QP}, true },
	{ IB_USER_VERBS_CMD_CREATE_SRQ, 32, true, H_SRQ, {17}, {H_PD}, false },
	{ IB_USER_VERBS_CMD_MODIFY_SRQ, 16, false, -1, {1}, {H_SRQ}, false },
	{ IB_USER_VERBS_CMD_QUERY_SRQ, 16, true, -1, {9}, {H_SRQ}, false },
	{ IB_USER_VERBS_CMD_DESTROY_SRQ, 16, true, -1, {9}, {H_SRQ}, true },
	{ IB_USER_VERBS_CMD_GET_CONTEXT, 8, true, -1, {0}, {0}, false },
};

/* plausible values for the fields that matter, when they are not random */
static void shape(uint32_t cmd, uint8_t *in)
{
	switch (cmd) {
	case IB_USER_VERBS_CMD_QUERY_PORT:
		in[8] = (uint8_t)edgy(1);
		break;
	case IB_USER_VERBS_CMD_REG_MR:
	case IB_USER_VERBS_CMD_REREG_MR: {
		size_t o = cmd == IB_USER_VERBS_CMD_REG_MR ? 8 : 16;
		uint64_t off = below(BUF_LEN);

		put64(in, o, (uintptr_t)F.buf + off);
		put64(in, o + 8, below(4) ? below(BUF_LEN - off) + 1 : edgy(4096));
		put64(in, o + 16, below(2) ? (uintptr_t)F.buf + off : rnd());
		put32(in, o + 28, below(2) ? IBV_ACCESS_LOCAL_WRITE |
		      IBV_ACCESS_REMOTE_WRITE : (uint32_t)rnd());
		if (cmd == IB_USER_VERBS_CMD_REREG_MR)
			put32(in, 12, (uint32_t)below(16));	/* flags */
		break;
	}
	case IB_USER_VERBS_CMD_CREATE_CQ:
		put32(in, 16, (uint32_t)edgy(64));		/* cqe */
		put32(in, 20, (uint32_t)edgy(0));		/* comp_vector */
		put32(in, 24, below(4) ? UINT32_MAX : (uint32_t)rnd());
		break;
	case IB_USER_VERBS_CMD_RESIZE_CQ:
		put32(in, 12, (uint32_t)edgy(128));
		break;
	case IB_USER_VERBS_CMD_POLL_CQ:
		put32(in, 12, (uint32_t)edgy(4));
		break;
	case IB_USER_VERBS_CMD_CREATE_QP:
		for (int o = 32; o <= 48; o += 4)
			put32(in, o, (uint32_t)edgy(o < 40 ? 16 : 1));
		in[53] = below(2) ? IBV_QPT_RC : below(2) ? IBV_QPT_UD : (uint8_t)rnd();
		break;
	case IB_USER_VERBS_CMD_MODIFY_QP:
		put32(in, 68, (uint32_t)(below(2) ? rnd() : rnd() & 0x1fffff));
		in[96] = (uint8_t)below(8);			/* qp_state */
		in[98] = (uint8_t)edgy(IBV_MTU_1024);		/* path_mtu */
		in[104] = (uint8_t)edgy(1);			/* port_num */
		break;
	case IB_USER_VERBS_CMD_CREATE_SRQ:
		put32(in, 20, (uint32_t)edgy(16));
		put32(in, 24, (uint32_t)edgy(1));
		break;
	case IB_USER_VERBS_CMD_CREATE_AH:
		memcpy(in + 24, F.gid.raw, 16);			/* attr.grh.dgid */
		in[44] = (uint8_t)edgy(F.gidx);			/* sgid_index */
		in[53] = (uint8_t)below(2);			/* is_global */
		in[54] = (uint8_t)edgy(1);			/* port_num */
		break;
	}
}

static void fuzz_raw(void)
{
	const struct rawdef *d = &rawdefs[below(sizeof(rawdefs) / sizeof(rawdefs[0]))];
	uint8_t *out = resp_buf, in[256];
	size_t len = d->len;
	uint32_t cmd = d->cmd;
	long rc;

	fill(in, sizeof(in));
	if (below(4))
		shape(cmd, in);
	for (int i = 0; i < 3 && d->h_off[i]; i++) {
		uint32_t h = pick(d->h_type[i], d->destroys && !i);

		if (h == UINT32_MAX)
			return;
		put32(in, d->h_off[i] - 1, h);
	}
	if (!below(8))		/* driver udata after the command: must be zero */
		len += 8 * (1 + below(4));
	if (!below(32)) {	/* a command number nobody implements */
		cmd = (uint32_t)(below(2) ? 37 + below(219) : rnd());
		len = below(sizeof(in));
	}
	if ((cmd & IB_USER_VERBS_CMD_COMMAND_MASK) == IB_USER_VERBS_CMD_REG_MR)
		mr_inside_buf(in, 8);
	if ((cmd & IB_USER_VERBS_CMD_COMMAND_MASK) == IB_USER_VERBS_CMD_REREG_MR)
		mr_inside_buf(in, 16);
	if ((cmd & IB_USER_VERBS_CMD_COMMAND_MASK) == IB_USER_VERBS_CMD_POLL_CQ)
		/* the kernel writes ne work completions without looking at
		 * the response's length: keep them inside resp_buf */
		put32(in, 12, (uint32_t)(below(2) ? edgy(4) % NPOLL : below(NPOLL)));
	memset(out, 0, 512);
	rc = raw_cmd(cmd, in, len, d->resp, out, below(8) ? 512 : below(64));
	if (rc > 0 && d->creates >= 0 && cmd == d->cmd) {
		uint32_t h;

		memcpy(&h, out, 4);
		keep_raw(d->creates, h);
	}
}

/*
 * POST_SEND / POST_RECV with random work requests on a live QP: the core
 * parses them; for a user QP the driver takes the send as the doorbell.
 */
static void fuzz_post(void)
{
	uint8_t in[512], *out = resp_buf;
	bool send = below(2);
	uint32_t wr_count = below(8) ? (uint32_t)below(4) : (uint32_t)edgy(1);
	uint32_t sge_count = below(2) ? 0 : (uint32_t)edgy(1);
	uint32_t wqe_size = below(4) ? (send ? sizeof(struct ib_uverbs_send_wr) :
				sizeof(struct ib_uverbs_recv_wr)) : (uint32_t)edgy(48);
	size_t len = 24 + below(sizeof(in) - 24);

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)rnd();
	put32(in, 8, below(2) ? F.q[below(NQP)].qp->handle : pick(H_QP, false));
	put32(in, 12, wr_count);
	put32(in, 16, sge_count);
	put32(in, 20, wqe_size);
	if (send && below(2)) {		/* a UD AH the core can look up */
		const size_t wsz = sizeof(struct ib_uverbs_send_wr);

		for (size_t o = 24; o + wsz <= len; o += wsz) {
			put32(in, o + 8, (uint32_t)below(2));	/* num_sge */
			put32(in, o + 12, (uint32_t)below(16));	/* opcode */
			put32(in, o + 24, below(2) ? F.ah->handle : pick(H_AH, false));
		}
	}
	raw_cmd(send ? IB_USER_VERBS_CMD_POST_SEND : IB_USER_VERBS_CMD_POST_RECV,
		in, len, true, out, 64);
}

/* ------------------------------------------------------------- rings */

/* the uverbs mappings of this process: start addresses and lengths */
static int uverbs_maps(uintptr_t *start, size_t *len, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;

		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) == 2) {
			start[n] = lo;
			len[n++] = hi - lo;
		}
	}
	fclose(f);
	return n;
}

/* the mappings that appeared since @n0 entries of @s0 were taken */
static int new_maps(const uintptr_t *s0, int n0, uintptr_t *s, size_t *l, int max)
{
	uintptr_t s1[64];
	size_t l1[64];
	int n1 = uverbs_maps(s1, l1, 64), k = 0;

	for (int i = 0; i < n1 && k < max; i++) {
		int j;

		for (j = 0; j < n0 && s0[j] != s1[i]; j++)
			;
		if (j == n0) {
			s[k] = s1[i];
			l[k++] = l1[i];
		}
	}
	return k;
}

static void ring_init(struct ring *r, uintptr_t base, size_t len, uint32_t esize)
{
	uint32_t n = 1;

	while ((uint64_t)n * 2 * esize + GAUDI_RING_HDR_SIZE <= len)
		n *= 2;
	r->base = (uint8_t *)base;
	r->n = n;
	r->esize = esize;
	r->prod = ((struct gaudi_ring_hdr *)r->base)->prod;
}

static struct gaudi_ring_hdr *hdr(struct ring *r)
{
	return (struct gaudi_ring_hdr *)r->base;
}

static void *entry(struct ring *r, uint32_t i)
{
	return r->base + GAUDI_RING_HDR_SIZE + (size_t)(i & (r->n - 1)) * r->esize;
}

static int modify(struct ibv_qp *qp, int peer_qpn, enum ibv_qp_state to)
{
	struct ibv_qp_attr a = { .qp_state = to };
	int mask = IBV_QP_STATE;
	bool ud = qp->qp_type == IBV_QPT_UD;

	switch (to) {
	case IBV_QPS_INIT:
		a.port_num = 1;
		mask |= IBV_QP_PKEY_INDEX | IBV_QP_PORT;
		if (ud) {
			a.qkey = 0x1234;
			mask |= IBV_QP_QKEY;
		} else {
			a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
					    IBV_ACCESS_REMOTE_READ;
			mask |= IBV_QP_ACCESS_FLAGS;
		}
		break;
	case IBV_QPS_RTR:
		if (ud)
			break;
		a.path_mtu = F.mtu;
		a.dest_qp_num = peer_qpn;
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = F.gid;
		a.ah_attr.grh.sgid_index = F.gidx;
		a.ah_attr.grh.hop_limit = 64;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		break;
	case IBV_QPS_RTS:
		mask |= IBV_QP_SQ_PSN;
		if (!ud) {
			a.timeout = 8;
			a.retry_cnt = 1;
			a.rnr_retry = 1;
			a.max_rd_atomic = 4;
			mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				IBV_QP_MAX_QP_RD_ATOMIC;
		}
		break;
	default:
		break;
	}
	return ibv_modify_qp(qp, &a, mask);
}

static int bring_up(struct ibv_qp *qp, int peer_qpn)
{
	return modify(qp, peer_qpn, IBV_QPS_INIT) || modify(qp, peer_qpn, IBV_QPS_RTR) ||
	       modify(qp, peer_qpn, IBV_QPS_RTS);
}

/* create QP @i and find its two rings among the new uverbs mappings */
static void make_qp(int i, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = F.cq, .recv_cq = F.cq, .qp_type = type,
		.cap = { .max_send_wr = SQ_DEPTH, .max_recv_wr = RQ_DEPTH,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uintptr_t s0[64], s[4];
	size_t l0[64], l[4];
	int n0 = uverbs_maps(s0, l0, 64), big;

	F.q[i].qp = ibv_create_qp(F.pd, &ia);
	if (!F.q[i].qp)
		die("ibv_create_qp");
	own(H_QP, F.q[i].qp->handle);
	if (new_maps(s0, n0, s, l, 4) != 2) {
		errno = ENOENT;
		die("finding the QP's two ring mappings in /proc/self/maps");
	}
	if (l[0] == l[1]) {
		errno = EINVAL;
		die("telling the send queue from the receive queue by size");
	}
	big = l[1] > l[0];		/* the send queue is the deeper one */
	ring_init(&F.q[i].sq, s[big], l[big], GAUDI_WQE_SIZE);
	ring_init(&F.q[i].rq, s[!big], l[!big], GAUDI_WQE_SIZE);
}

static void setup(const char *ibdev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	uintptr_t s0[64], s[2];
	size_t l0[64], l[2];
	uint8_t in[64] = { 0 }, out[64] = { 0 };
	int n0;

	for (int i = 0; list && list[i] && !F.ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), ibdev))
			F.ctx = ibv_open_device(list[i]);
	if (list)	/* NULL when there are no verbs devices at all */
		ibv_free_device_list(list);
	if (!F.ctx)
		die("opening the device");
	if (ibv_query_port(F.ctx, 1, &pa) || ibv_query_gid(F.ctx, 1, F.gidx, &F.gid))
		die("querying port 1 and its GID");
	F.mtu = pa.active_mtu;
	F.buf = aligned_alloc(4096, BUF_LEN);
	if (!F.buf)
		die("allocating the buffer");
	memset(F.buf, 0xa5, BUF_LEN);
	F.pd = ibv_alloc_pd(F.ctx);
	F.mr = F.pd ? ibv_reg_mr(F.pd, F.buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ) : NULL;
	n0 = uverbs_maps(s0, l0, 64);
	F.cq = F.mr ? ibv_create_cq(F.ctx, 256, NULL, NULL, 0) : NULL;
	if (!F.cq)
		die("creating the PD, MR and CQ");
	if (new_maps(s0, n0, s, l, 2) != 1) {
		errno = ENOENT;
		die("finding the CQ's ring mapping in /proc/self/maps");
	}
	ring_init(&F.cqr, s[0], l[0], GAUDI_CQE_SIZE);
	own(H_PD, F.pd->handle);
	own(H_MR, F.mr->handle);
	own(H_CQ, F.cq->handle);
	for (int i = 0; i < NQP; i++)
		make_qp(i, i < 4 ? IBV_QPT_RC : IBV_QPT_UD);
	for (int i = 0; i < 4; i++) {
		F.q[i].peer = i ^ 1;
		if (bring_up(F.q[i].qp, F.q[i ^ 1].qp->qp_num))
			die("connecting the RC QPs to each other on the port's own GID");
	}
	F.q[4].peer = -1;
	if (bring_up(F.q[4].qp, 0))
		die("bringing up the UD QP");
	aa.grh.dgid = F.gid;
	aa.grh.sgid_index = F.gidx;
	aa.grh.hop_limit = 64;
	F.ah = ibv_create_ah(F.pd, &aa);
	if (!F.ah)
		die("creating an AH to the port's own GID");
	own(H_AH, F.ah->handle);
	/* the address vector the driver makes for that GID, for UD WQEs */
	put32(in, 16, F.pd->handle);
	memcpy(in + 24, F.gid.raw, 16);
	in[44] = (uint8_t)F.gidx;
	in[45] = 64;
	in[53] = 1;			/* attr.is_global */
	in[54] = 1;			/* attr.port_num */
	put64(in, 0, (uintptr_t)out);
	{
		struct ib_uverbs_cmd_hdr h = { IB_USER_VERBS_CMD_CREATE_AH, (8 + 56) / 4,
					       (4 + sizeof(struct gaudi_create_ah_resp) + 4) / 4 };
		uint8_t msg[8 + 56];

		memcpy(msg, &h, 8);
		memcpy(msg + 8, in, 56);
		if (write(F.ctx->cmd_fd, msg, sizeof(msg)) < 0)
			die("CREATE_AH through the write() ABI");
		memcpy(&F.av, out + 4, sizeof(F.av));
	}
	for (int t = 0; t < H_NTYPES; t++)
		for (int i = 0; i < NRAW; i++)
			F.raw[t][i] = UINT32_MAX;
}

/* the doorbell: an empty post_send command, as the provider rings it */
static void doorbell(struct fqp *q)
{
	uint8_t in[24 + sizeof(struct ib_uverbs_send_wr)] = { 0 }, out[8];
	bool ud = q->qp->qp_type == IBV_QPT_UD;

	put32(in, 8, q->qp->handle);
	put32(in, 12, 1);
	put32(in, 20, sizeof(struct ib_uverbs_send_wr));
	put32(in, 24 + 12, IB_UVERBS_WR_SEND);
	if (ud)
		put32(in, 24 + 24, F.ah->handle);
	put64(in, 0, (uintptr_t)out);
	{
		struct ib_uverbs_cmd_hdr h = { IB_USER_VERBS_CMD_POST_SEND,
					       (8 + sizeof(in)) / 4, sizeof(out) / 4 };
		uint8_t msg[8 + sizeof(in)];

		memcpy(msg, &h, 8);
		memcpy(msg + 8, in, sizeof(in));
		if (write(F.ctx->cmd_fd, msg, sizeof(msg)) >= 0)
			F.doorbells++;
	}
}

/* a valid WQE for @q, then up to three of its fields changed */
static void make_wqe(struct fqp *q, struct gaudi_wqe *w, bool recv)
{
	bool ud = q->peer < 0;
	uint32_t len = (uint32_t)below(4096) + 1;
	uint64_t off = below(BUF_LEN - len);
	struct gaudi_sge *sge = ud && !recv ? w->data.ud.sge : w->data.sge;

	memset(w, 0, sizeof(*w));
	w->wr_id = rnd();
	w->opcode = recv ? GAUDI_WQE_RECV : (uint8_t)(ud ? GAUDI_WQE_SEND : below(5));
	w->flags = GAUDI_WQE_F_SIGNALED;
	w->num_sge = 1;
	w->rkey = ud ? 0x1234 : F.mr->rkey;
	w->remote_addr = ud ? F.q[4].qp->qp_num : (uintptr_t)F.buf + below(BUF_LEN - len);
	if (ud && !recv)
		w->data.ud.av = F.av;
	sge->addr = (uintptr_t)F.buf + off;
	sge->length = len;
	sge->lkey = F.mr->lkey;
	for (int i = below(4); i > 0; i--) {
		switch (below(10)) {
		case 0:
			w->opcode = (uint8_t)rnd();
			break;
		case 1:
			w->flags = (uint8_t)rnd();
			break;
		case 2:
			w->num_sge = (uint8_t)(below(2) ? below(8) : rnd());
			break;
		case 3:
			sge[below(4)].length = (uint32_t)edgy(len);
			break;
		case 4:
			sge[below(4)].addr = edgy(sge->addr);
			break;
		case 5:
			sge[below(4)].lkey = (uint32_t)edgy(F.mr->lkey);
			break;
		case 6:
			w->inline_len = (uint32_t)edgy(64);
			break;
		case 7:
			w->rkey = (uint32_t)edgy(w->rkey);
			w->remote_addr = edgy(w->remote_addr);
			break;
		case 8:
			((uint8_t *)w)[below(sizeof(*w))] = (uint8_t)rnd();
			break;
		default:	/* the address vector or the reserved byte */
			((uint8_t *)&w->data.ud.av)[below(sizeof(w->data.ud.av))] =
				(uint8_t)rnd();
			w->rsvd0 = (uint8_t)below(2);
			break;
		}
	}
}

/* the next producer index: usually right, sometimes far off */
static uint32_t next_prod(struct ring *r, uint32_t k)
{
	switch (below(24)) {
	case 0:
		return (uint32_t)rnd();
	case 1:
		return r->prod + r->n + (uint32_t)below(4);
	case 2:
		return r->prod - 1 - (uint32_t)below(4);
	default:
		return r->prod + k;
	}
}

static void fuzz_ring(void)
{
	struct fqp *q = &F.q[below(NQP)];
	bool recv = !below(4);
	struct ring *r = recv ? &q->rq : &q->sq;
	uint32_t k = (uint32_t)below(8) + 1;
	struct gaudi_wqe w;

	for (uint32_t i = 0; i < k; i++) {
		make_wqe(q, &w, recv);
		memcpy(entry(r, r->prod + i), &w, sizeof(w));
		F.wqes++;
	}
	r->prod = next_prod(r, k);
	__atomic_store_n(&hdr(r)->prod, r->prod, __ATOMIC_RELEASE);
	if (!recv)
		doorbell(q);
	if (!below(4)) {	/* change bytes the engine may be reading now */
		uint8_t *e = entry(r, r->prod - 1 - (uint32_t)below(k));

		e[8 + below(GAUDI_WQE_SIZE - 8)] = (uint8_t)rnd();
	}
}

static void poll_cq(void)
{
	struct ibv_wc wc[16];
	int n;

	if (!below(16)) {	/* a consumer index that lies */
		__atomic_store_n(&hdr(&F.cqr)->cons, (uint32_t)edgy(hdr(&F.cqr)->cons),
				 __ATOMIC_RELEASE);
		return;
	}
	while ((n = ibv_poll_cq(F.cq, 16, wc)) > 0)
		F.polled += n;
}

/* reset a QP (or move it to error) and bring it back up */
static void fuzz_state(void)
{
	struct fqp *q = &F.q[below(NQP)];
	int peer = q->peer >= 0 ? (int)F.q[q->peer].qp->qp_num : 0;

	modify(q->qp, peer, below(2) ? IBV_QPS_ERR : IBV_QPS_RESET);
	poll_cq();
	modify(q->qp, peer, IBV_QPS_RESET);
	bring_up(q->qp, peer);
	q->sq.prod = hdr(&q->sq)->prod;
	q->rq.prod = hdr(&q->rq)->prod;
	F.states++;
}

/*
 * mmap() of a random offset of the verbs file; a mapping that succeeds is
 * touched through a pipe, so the kernel takes the fault and a page that
 * cannot be there is an EFAULT, not a signal
 */
static void fuzz_mmap(void)
{
	size_t len = below(2) ? 4096 * (below(4) + 1) : (size_t)edgy(4096);
	off_t off = (off_t)(below(2) ? 4096 * below(64) : edgy(4096) & ~4095ULL);
	bool wr = below(2);
	uint8_t *p, c;

	if (len > (1 << 24))
		len = 4096;
	p = mmap(NULL, len, PROT_READ | (wr ? PROT_WRITE : 0), MAP_SHARED,
		 F.ctx->cmd_fd, off);
	F.mmaps++;
	if (p == MAP_FAILED)
		return;
	/* the pipe is empty before and after: a byte the kernel could not
	 * take or give is drained */
	if (write(F.pipe[1], p + below(len), 1) != 1)
		F.faults++;
	else if (read(F.pipe[0], &c, 1) == 1 && wr && write(F.pipe[1], &c, 1) == 1 &&
		 read(F.pipe[0], p + below(len), 1) != 1) {
		F.faults++;
		while (read(F.pipe[0], &c, 1) == 1)
			;
	}
	munmap(p, len);
}

/* ----------------------------------------------- the device still works */

static bool check_device(const char *ibdev, char *why, size_t whylen)
{
	struct ibv_qp *a, *b;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;
	uint8_t *src, *dst;
	time_t end;
	int n = 0;

	int gidx = F.gidx;

	memset(&F, 0, sizeof(F));
	F.gidx = gidx;
	fuzz_rng = 1;
	setup(ibdev);
	src = F.buf;
	dst = F.buf + BUF_LEN / 2;
	ia.send_cq = ia.recv_cq = F.cq;
	a = ibv_create_qp(F.pd, &ia);
	b = ibv_create_qp(F.pd, &ia);
	if (!a || !b || bring_up(a, b->qp_num) || bring_up(b, a->qp_num)) {
		snprintf(why, whylen, "creating and connecting two RC QPs failed");
		return false;
	}
	for (int i = 0; i < CHECK_LEN; i++) {
		src[i] = (uint8_t)(i * 7 + 3);
		dst[i] = 0;
	}
	for (int op = 0; op < 2; op++) {
		/* WRITE src -> dst, then READ dst -> src + CHECK_LEN */
		sge = (struct ibv_sge){ (uintptr_t)(op ? src + CHECK_LEN : src), CHECK_LEN,
					F.mr->lkey };
		wr.opcode = op ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = F.mr->rkey;
		if (ibv_post_send(a, &wr, &bad)) {
			snprintf(why, whylen, "post_send: %s", strerror(errno));
			return false;
		}
		end = time(NULL) + 30;
		while ((n = ibv_poll_cq(F.cq, 1, &wc)) == 0 && time(NULL) < end)
			;
		if (n != 1 || wc.status != IBV_WC_SUCCESS) {
			snprintf(why, whylen, "%s completed with %s",
				 op ? "READ" : "WRITE",
				 n == 1 ? ibv_wc_status_str(wc.status) : "nothing in 30 s");
			return false;
		}
	}
	if (memcmp(src, dst, CHECK_LEN) || memcmp(src, src + CHECK_LEN, CHECK_LEN)) {
		snprintf(why, whylen, "the bytes written or read back differ");
		return false;
	}
	return true;
}

int main(int argc, char **argv)
{
	unsigned long secs;
	uint64_t seed;
	time_t end;
	char why[160];

	if (argc < 4) {
		fprintf(stderr, "usage: %s IBDEV GID_INDEX SECONDS [SEED]\n", argv[0]);
		return 2;
	}
	F.gidx = atoi(argv[2]);
	secs = strtoul(argv[3], NULL, 0);
	seed = argc > 4 ? strtoull(argv[4], NULL, 0) : (uint64_t)time(NULL) ^ getpid();
	fuzz_rng = seed ? seed : 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	ksft_print_header();
	ksft_set_plan(2);
	ksft_print_msg("seed %" PRIu64 " (verbs_fuzz %s %d %lu %" PRIu64
		       " repeats this run)\n", seed, argv[1], F.gidx, secs, seed);
	if (pipe2(F.pipe, O_NONBLOCK))
		die("creating a pipe");
	setup(argv[1]);
	end = time(NULL) + (time_t)secs;
	while (time(NULL) < end) {
		for (int i = 0; i < 64; i++) {
			switch (below(16)) {
			case 0 ... 5:
				fuzz_raw();
				break;
			case 6:
				fuzz_post();
				break;
			case 7 ... 11:
				fuzz_ring();
				break;
			case 12:
			case 13:
				poll_cq();
				break;
			case 14:
				if (!below(8))
					fuzz_state();
				else
					fuzz_mmap();
				break;
			default:
				fuzz_mmap();
			}
		}
	}
	ksft_test_result_pass("%lus on %s: %lu raw uverbs commands (%lu succeeded), %lu WQEs in %lu doorbells, %lu completions, %lu QP resets, %lu mmaps (%lu touches refused); no crash\n",
			      secs, argv[1], F.cmds, F.cmds_ok, F.wqes,
			      F.doorbells, F.polled, F.states, F.mmaps, F.faults);
	fflush(stdout);
	/*
	 * Destroy what libibverbs made (its ring mappings go with it; a PD or
	 * CQ a raw object still uses stays), then close the context with
	 * everything the raw commands made still alive: the kernel frees it.
	 */
	ibv_destroy_ah(F.ah);
	for (int i = 0; i < NQP; i++)
		ibv_destroy_qp(F.q[i].qp);
	ibv_destroy_cq(F.cq);
	ibv_dereg_mr(F.mr);
	ibv_dealloc_pd(F.pd);
	ibv_close_device(F.ctx);
	free(F.buf);
	if (check_device(argv[1], why, sizeof(why)))
		ksft_test_result_pass("afterwards a fresh RC pair on %s writes and reads %d KiB, the bytes match\n",
				      argv[1], CHECK_LEN >> 10);
	else
		ksft_test_result_fail("afterwards a fresh RC pair on %s writes and reads %d KiB: %s\n",
				      argv[1], CHECK_LEN >> 10, why);
	ksft_finished();
}
