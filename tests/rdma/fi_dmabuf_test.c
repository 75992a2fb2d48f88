// SPDX-License-Identifier: GPL-2.0
/*
 * fi_dmabuf - the collectives' data path through libfabric, checked end to
 * end (issue 14): the server allocates HBM on a gaudi_nic accelerator,
 * exports it as a dma-buf and registers the export with
 * fi_mr_regattr(FI_MR_DMABUF); the client fi_writedata()s a buffer larger
 * than the endpoint's inject size into it (from HBM exported the same way,
 * or from host memory), with 4 bytes of remote CQ data.  The server waits
 * for the remote-CQ-data completion, checks the data word, and checks every
 * byte through the accelerator's CPU mapping of the HBM (and that the bytes
 * around the written range are untouched).  Its verdict goes back to the
 * client over the out-of-band connection.
 *
 * A kselftest (kselftest_harness.h): each side is one test of the fixture
 * fi_dmabuf, run alone (the harness's -t filter), the server's checks in
 * fi_dmabuf.server, the client's in fi_dmabuf.client.  Output: KTAP.
 *
 *   fi_dmabuf_test server [options]            (prints its TCP port)
 *   fi_dmabuf_test client [options] SERVER_IP
 * options:
 *   -p PROV   provider (default "verbs;ofi_rxm"); -e rdm only
 *   -d DOMAIN domain name (e.g. gaudi_52)
 *   -s ADDR   the server's fabric source address (server side)
 *   -a ACC    accelerator index for HBM (gaudi_nic.ACC); without it, or
 *             with -H, host memory registered by address (for rdma_rxe,
 *             which cannot import dma-bufs)
 *   -P PORT   TCP port of the out-of-band exchange (default 47600)
 *   -n BYTES  bytes written (default 1 MiB)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <hlthunk.h>

#include "kselftest_harness.h"

#define CQ_DATA 0x5eed1234u
#define GUARD 4096

static const char *prov = "verbs;ofi_rxm";
static const char *domain_name;
static const char *src_addr;
static int acc = -1;
static const char *port = "47600";
static size_t nbytes = 1 << 20;
static const char *server_host;

static uint8_t pattern(size_t i, uint32_t seed)
{
	return (uint8_t)((i * 131u + seed + (i >> 12)) & 0xff);
}

/* ---- out-of-band exchange: one TCP connection */
struct oob_msg {
	uint64_t addr;		/* remote address of the target range */
	uint64_t key;
	uint64_t len;
	uint32_t seed;
	uint32_t name_len;
	uint8_t name[256];	/* the server endpoint's fi_getname() */
};

static int xfer(int fd, void *buf, size_t len, bool out)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = out ? write(fd, (char *)buf + done, len - done)
				: read(fd, (char *)buf + done, len - done);
		if (n <= 0)
			return -1;
		done += n;
	}
	return 0;
}

static int oob_listen(void)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai;
	int one = 1, s, c;

	if (getaddrinfo(NULL, port, &hints, &ai))
		return -1;
	/* AF_INET6 first when offered: it also takes IPv4 */
	s = socket(ai->ai_family, SOCK_STREAM, 0);
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (s < 0 || bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1)) {
		freeaddrinfo(ai);
		return -1;
	}
	freeaddrinfo(ai);
	c = accept(s, NULL, NULL);
	close(s);
	return c;
}

static int oob_connect(const char *host)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;
	int s = -1, i;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	for (i = 0; i < 100; i++) {	/* the server may not listen yet */
		s = socket(ai->ai_family, SOCK_STREAM, 0);
		if (s >= 0 && !connect(s, ai->ai_addr, ai->ai_addrlen))
			break;
		if (s >= 0)
			close(s);
		s = -1;
		usleep(100000);
	}
	freeaddrinfo(ai);
	return s;
}

/* ---- libfabric */
struct fab {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
};

/* fi_fabric, fi_domain, a CQ, an AV and an enabled RDM endpoint */
static void fab_open(struct __test_metadata *_metadata, struct fab *f, bool server)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA, .size = 256 };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fi_info *h = fi_allocinfo();
	int ret;

	ASSERT_NE(NULL, h);
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_RMA | FI_WRITE | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
	h->mode = FI_RX_CQ_DATA | FI_CONTEXT;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY;
	h->fabric_attr->prov_name = strdup(prov);
	if (domain_name)
		h->domain_attr->name = strdup(domain_name);
	ret = fi_getinfo(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION),
			 server ? src_addr : NULL, NULL, server && src_addr ? FI_SOURCE : 0,
			 h, &f->info);
	fi_freeinfo(h);
	ASSERT_EQ(0, ret)
		TH_LOG("fi_getinfo of provider %s, domain %s: %s", prov,
		       domain_name ?: "any", fi_strerror(-ret));
	ksft_print_msg("provider %s, domain %s, inject_size %zu, cq_data_size %zu, mode 0x%" PRIx64
		       ", mr_mode 0x%x\n", f->info->fabric_attr->prov_name,
		       f->info->domain_attr->name, f->info->tx_attr->inject_size,
		       f->info->domain_attr->cq_data_size, f->info->mode,
		       f->info->domain_attr->mr_mode);
	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_fabric: %s", fi_strerror(-ret));
	ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_domain: %s", fi_strerror(-ret));
	ret = fi_cq_open(f->domain, &cqa, &f->cq, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_cq_open: %s", fi_strerror(-ret));
	ret = fi_av_open(f->domain, &ava, &f->av, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_av_open: %s", fi_strerror(-ret));
	ret = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	ASSERT_EQ(0, ret) TH_LOG("fi_endpoint: %s", fi_strerror(-ret));
	ret = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	ASSERT_EQ(0, ret) TH_LOG("fi_ep_bind of the CQ: %s", fi_strerror(-ret));
	ret = fi_ep_bind(f->ep, &f->av->fid, 0);
	ASSERT_EQ(0, ret) TH_LOG("fi_ep_bind of the AV: %s", fi_strerror(-ret));
	ret = fi_enable(f->ep);
	ASSERT_EQ(0, ret) TH_LOG("fi_enable: %s", fi_strerror(-ret));
}

/* what fab_open() opened, in reverse */
static void fab_close(struct fab *f)
{
	if (f->ep)
		fi_close(&f->ep->fid);
	if (f->av)
		fi_close(&f->av->fid);
	if (f->cq)
		fi_close(&f->cq->fid);
	if (f->domain)
		fi_close(&f->domain->fid);
	if (f->fabric)
		fi_close(&f->fabric->fid);
	if (f->info)
		fi_freeinfo(f->info);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* wait_cq: one completion into *e within 60 s: 0, or the error's errno */
static int wait_cq(struct fab *f, struct fi_cq_data_entry *e)
{
	double t0 = now();
	ssize_t n;

	while (now() - t0 < 60) {
		n = fi_cq_read(f->cq, e, 1);
		if (n == 1)
			return 0;
		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(f->cq, &err, 0);
			ksft_print_msg("completion error: %s (prov %d: %s)\n",
				       fi_strerror(err.err), err.prov_errno,
				       fi_cq_strerror(f->cq, err.prov_errno, err.err_data,
						      NULL, 0));
			return err.err ? err.err : EIO;
		}
		if (n != -FI_EAGAIN)
			return (int)-n;
	}
	return ETIMEDOUT;
}

/* ---- memory: HBM exported as a dma-buf (acc >= 0), or host memory */
struct buf {
	uint8_t *cpu;		/* CPU view: the HBM's mapping, or the host buffer */
	size_t len;
	int acc_fd, dmabuf;
	uint64_t handle, va;
	struct fid_mr *mr;
};

static void buf_alloc(struct __test_metadata *_metadata, struct buf *b, size_t len)
{
	/* whole pages: HBM exports and mappings are made of pages */
	len = (len + 4095) & ~(size_t)4095;
	b->len = len;
	if (acc < 0) {
		b->cpu = aligned_alloc(4096, len);
		ASSERT_NE(NULL, b->cpu)
			TH_LOG("%zu bytes of host memory", len);
		return;
	}
	b->acc_fd = hlthunk_open_by_index(acc);
	ASSERT_LE(0, b->acc_fd)
		TH_LOG("open accel %d: %s", acc, strerror(errno));
	b->handle = hlthunk_device_memory_alloc(b->acc_fd, len, 0, true, false);
	ASSERT_NE(0, b->handle)
		TH_LOG("%zu bytes of HBM on accel %d: %s", len, acc, strerror(errno));
	b->va = hlthunk_device_memory_map(b->acc_fd, b->handle, 0);
	ASSERT_NE(0, b->va)
		TH_LOG("map the HBM on accel %d: %s", acc, strerror(errno));
	b->dmabuf = hlthunk_device_mapped_memory_export_dmabuf_fd(b->acc_fd, b->va,
								  len, 0, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, b->dmabuf)
		TH_LOG("export %zu bytes of HBM as a dma-buf: %s", len, strerror(errno));
	b->cpu = hlthunk_device_memory_mmap(b->acc_fd, b->handle, len);
	ASSERT_NE(NULL, b->cpu)
		TH_LOG("CPU mapping of the HBM: %s", strerror(errno));
	ksft_print_msg("%zu bytes of HBM on accel %d, exported as dma-buf fd %d, CPU-mapped\n",
		       len, acc, b->dmabuf);
}

static void buf_reg(struct __test_metadata *_metadata, struct fab *f, struct buf *b,
		    uint64_t access)
{
	struct iovec iov = { .iov_base = b->cpu, .iov_len = b->len };
	struct fi_mr_dmabuf db = { 0 };
	struct fi_mr_attr attr = { 0 };
	uint64_t flags = 0;
	int ret;

	attr.access = access;
	attr.iov_count = 1;
	attr.iface = FI_HMEM_SYSTEM;
	attr.requested_key = access & FI_REMOTE_WRITE ? 1 : 2;
	if (b->dmabuf >= 0) {
		/* the address the peer writes to is the CPU mapping's, as
		 * collectives/src/transport.c gc_mr_reg() does */
		db.fd = b->dmabuf;
		db.offset = 0;
		db.len = b->len;
		db.base_addr = b->cpu;
		attr.dmabuf = &db;
		flags = FI_MR_DMABUF;
	} else {
		attr.mr_iov = &iov;
	}
	ret = fi_mr_regattr(f->domain, &attr, flags, &b->mr);
	ASSERT_EQ(0, ret)
		TH_LOG("fi_mr_regattr(%s) of the %s buffer: %s",
		       flags ? "FI_MR_DMABUF" : "host iov",
		       access & FI_REMOTE_WRITE ? "target" : "source", fi_strerror(-ret));
}

static void buf_free(struct buf *b)
{
	if (b->mr)
		fi_close(&b->mr->fid);
	if (b->acc_fd < 0) {
		free(b->cpu);
		return;
	}
	if (b->dmabuf >= 0)
		close(b->dmabuf);
	if (b->cpu)
		hlthunk_device_memory_munmap(b->cpu, b->len);
	if (b->va)
		hlthunk_memory_unmap(b->acc_fd, b->va);
	if (b->handle)
		hlthunk_device_memory_free(b->acc_fd, b->handle);
	hlthunk_close(b->acc_fd);
}

/* one side: its fabric, its buffer, the out-of-band connection */
FIXTURE(fi_dmabuf) {
	struct fab f;
	struct buf b;
	int oob;
};

FIXTURE_SETUP(fi_dmabuf)
{
	memset(&self->f, 0, sizeof(self->f));
	memset(&self->b, 0, sizeof(self->b));
	self->b.acc_fd = -1;
	self->b.dmabuf = -1;
	self->oob = -1;
}

FIXTURE_TEARDOWN(fi_dmabuf)
{
	if (self->oob >= 0)
		close(self->oob);
	buf_free(&self->b);
	fab_close(&self->f);
}

/*
 * The target: HBM (or host memory) registered for remote writes; the
 * client's write arrives with its CQ data, every byte right, the guard
 * bytes around it untouched.  The verdict goes back to the client.
 */
TEST_F_TIMEOUT(fi_dmabuf, server, 170)
{
	struct fi_cq_data_entry e = { 0 };
	struct oob_msg m = { 0 };
	size_t name_len = sizeof(m.name), i, bad = 0, first_bad = 0;
	struct fab *f = &self->f;
	struct buf *b = &self->b;
	uint8_t verdict;
	int ret;

	fab_open(_metadata, f, true);
	buf_alloc(_metadata, b, nbytes + 2 * GUARD);
	memset(b->cpu, 0xa5, b->len);
	buf_reg(_metadata, f, b, FI_REMOTE_WRITE);
	ret = fi_getname(&f->ep->fid, m.name, &name_len);
	ASSERT_EQ(0, ret) TH_LOG("fi_getname: %s", fi_strerror(-ret));
	/* FI_RX_CQ_DATA: a write with remote CQ data consumes a receive */
	if (f->info->mode & FI_RX_CQ_DATA) {
		ret = (int)fi_recv(f->ep, NULL, 0, NULL, FI_ADDR_UNSPEC, &m);
		ASSERT_EQ(0, ret)
			TH_LOG("FI_RX_CQ_DATA mode: a zero-length receive: %s",
			       fi_strerror(-ret));
	}
	m.name_len = (uint32_t)name_len;
	m.addr = (f->info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uintptr_t)b->cpu : 0) +
		 GUARD;
	m.key = fi_mr_key(b->mr);
	m.len = nbytes;
	m.seed = (uint32_t)getpid();
	ksft_print_msg("listening on TCP port %s\n", port);
	self->oob = oob_listen();
	ASSERT_LE(0, self->oob) TH_LOG("listen on TCP port %s", port);
	ASSERT_EQ(0, xfer(self->oob, &m, sizeof(m), true))
		TH_LOG("out-of-band exchange with the client");
	/* the completion carrying the client's data word */
	do {
		ret = wait_cq(f, &e);
	} while (!ret && !(e.flags & FI_REMOTE_CQ_DATA));
	EXPECT_EQ(0, ret)
		TH_LOG("remote-CQ-data completion of the write: %s", strerror(ret));
	EXPECT_EQ(CQ_DATA, e.data)
		TH_LOG("CQ data of the write, flags 0x%" PRIx64, (uint64_t)e.flags);
	/* every byte, through the CPU mapping of the HBM */
	for (i = 0; i < nbytes; i++) {
		if (b->cpu[GUARD + i] != pattern(i, m.seed) && !bad++)
			first_bad = i;
	}
	EXPECT_EQ(0, bad)
		TH_LOG("%zu bytes written into the %s, checked through its CPU mapping: %zu wrong, the first at %zu",
		       nbytes, acc >= 0 ? "HBM" : "host buffer", bad, first_bad);
	for (i = 0, bad = 0; i < GUARD; i++)
		bad += (b->cpu[i] != 0xa5) + (b->cpu[GUARD + nbytes + i] != 0xa5);
	EXPECT_EQ(0, bad)
		TH_LOG("the %d bytes on each side of the written range: %zu changed",
		       GUARD, bad);
	ksft_print_msg("%zu bytes with CQ data 0x%" PRIx64 " landed in the %s\n",
		       nbytes, (uint64_t)e.data, acc >= 0 ? "HBM" : "host buffer");
	verdict = _metadata->exit_code == KSFT_PASS ? 0 : 1;
	EXPECT_EQ(0, xfer(self->oob, &verdict, 1, true))
		TH_LOG("the verdict sent to the client");
}

/*
 * The source: an fi_writedata() larger than the inject size, with 4 bytes
 * of CQ data, completes; the server finds it right.
 */
TEST_F_TIMEOUT(fi_dmabuf, client, 170)
{
	struct fi_cq_data_entry e = { 0 };
	struct oob_msg m = { 0 };
	fi_addr_t peer = FI_ADDR_UNSPEC;
	struct fab *f = &self->f;
	struct buf *b = &self->b;
	uint8_t verdict = 1;
	double t0;
	size_t i;
	int ret;

	self->oob = oob_connect(server_host);
	ASSERT_LE(0, self->oob)
		TH_LOG("TCP connection to %s port %s", server_host, port);
	ASSERT_EQ(0, xfer(self->oob, &m, sizeof(m), false))
		TH_LOG("out-of-band exchange with the server");
	ASSERT_EQ(nbytes, m.len) TH_LOG("the server's length");
	ASSERT_GE(sizeof(m.name), m.name_len) TH_LOG("the server's name length");
	fab_open(_metadata, f, false);
	EXPECT_LT(f->info->tx_attr->inject_size, nbytes)
		TH_LOG("the write must be larger than the inject size");
	EXPECT_LE(4, f->info->domain_attr->cq_data_size)
		TH_LOG("4 bytes of remote CQ data");
	ret = fi_av_insert(f->av, m.name, 1, &peer, 0, NULL);
	ASSERT_EQ(1, ret)
		TH_LOG("fi_av_insert of the server's address: %s",
		       ret < 0 ? fi_strerror(-ret) : "not inserted");
	buf_alloc(_metadata, b, nbytes);
	for (i = 0; i < nbytes; i++)
		b->cpu[i] = pattern(i, m.seed);
	buf_reg(_metadata, f, b, FI_WRITE);
	t0 = now();
	do {
		ret = (int)fi_writedata(f->ep, b->cpu, nbytes, fi_mr_desc(b->mr), CQ_DATA,
					peer, m.addr, m.key, &m);
		if (ret == -FI_EAGAIN)
			fi_cq_read(f->cq, &e, 0);	/* progress (rxm connects) */
	} while (ret == -FI_EAGAIN && now() - t0 < 60);
	EXPECT_EQ(0, ret)
		TH_LOG("fi_writedata of %zu bytes with CQ data 0x%x: %s", nbytes, CQ_DATA,
		       fi_strerror(-ret));
	if (!ret) {
		ret = wait_cq(f, &e);
		EXPECT_EQ(0, ret)
			TH_LOG("the write's completion at the client: %s", strerror(ret));
		ksft_print_msg("fi_writedata of %zu bytes completed in %.3f s\n",
			       nbytes, now() - t0);
	}
	/* the server's verdict; a server that ended early sent none */
	if (xfer(self->oob, &verdict, 1, false))
		verdict = 1;
	EXPECT_EQ(0, verdict)
		TH_LOG("the server's verdict on the data and the CQ data (its output says more)");
}

int main(int argc, char **argv)
{
	const char *role = argc > 1 ? argv[1] : "";
	/* the harness's arguments: -t ROLE, the one test to run */
	char *hargv[] = { argv[0], "-t", NULL, NULL };
	int opt;

	optind = 2;
	while ((opt = getopt(argc, argv, "p:d:s:a:HP:n:e:")) != -1) {
		switch (opt) {
		case 'p': prov = optarg; break;
		case 'd': domain_name = optarg; break;
		case 's': src_addr = optarg; break;
		case 'a': acc = atoi(optarg); break;
		case 'H': acc = -1; break;
		case 'P': port = optarg; break;
		case 'n': nbytes = strtoull(optarg, NULL, 0); break;
		case 'e':
			if (strcmp(optarg, "rdm")) {
				fprintf(stderr, "only -e rdm is supported\n");
				return 2;
			}
			break;
		default:
			goto usage;
		}
	}
	if (!nbytes)
		goto usage;
	if (!strcmp(role, "server") && optind == argc) {
		hargv[2] = "server";
	} else if (!strcmp(role, "client") && optind == argc - 1) {
		server_host = argv[optind];
		hargv[2] = "client";
	} else {
		goto usage;
	}
	/* the harness parses its own arguments with getopt() from the start */
	optind = 0;
	return test_harness_run(3, hargv);
usage:
	fprintf(stderr, "usage: %s server|client [-p PROV] [-d DOMAIN] [-s SRC_ADDR] [-a ACC|-H] "
		"[-P PORT] [-n BYTES] [SERVER_IP]\n", argv[0]);
	return 2;
}
