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
 * around the written range are untouched).
 *
 *   fi_dmabuf server [options]            (prints its TCP port use)
 *   fi_dmabuf client [options] SERVER_IP
 * options:
 *   -p PROV   provider (default "verbs;ofi_rxm"); -e rdm only
 *   -d DOMAIN domain name (e.g. gaudi_52)
 *   -s ADDR   the server's fabric source address (server side)
 *   -a ACC    accelerator index for HBM (gaudi_nic.ACC); without it, or
 *             with -H, host memory registered by address (for rdma_rxe,
 *             which cannot import dma-bufs)
 *   -P PORT   TCP port of the out-of-band exchange (default 47600)
 *   -n BYTES  bytes written (default 1 MiB)
 * Output: "ok - ..." / "not ok - ..." lines; exit status 0 when all passed.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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

#define CQ_DATA 0x5eed1234u
#define GUARD 4096

static const char *prov = "verbs;ofi_rxm";
static const char *domain_name;
static const char *src_addr;
static int acc = -1;
static const char *port = "47600";
static size_t nbytes = 1 << 20;
static int failures;

static void ok(bool cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s - ", cond ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		failures++;
}

static void die(const char *what, int ret)
{
	ok(false, "%s: %s (%d)", what, fi_strerror(ret < 0 ? -ret : ret), ret);
	exit(1);
}

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

static void fab_open(struct fab *f, bool server)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA, .size = 256 };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	struct fi_info *h = fi_allocinfo();
	int ret;

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
	if (ret)
		die("fi_getinfo", ret);
	printf("# provider %s, domain %s, inject_size %zu, cq_data_size %zu, mode 0x%" PRIx64
	       ", mr_mode 0x%x\n", f->info->fabric_attr->prov_name, f->info->domain_attr->name,
	       f->info->tx_attr->inject_size, f->info->domain_attr->cq_data_size,
	       f->info->mode, f->info->domain_attr->mr_mode);
	ret = fi_fabric(f->info->fabric_attr, &f->fabric, NULL);
	if (!ret)
		ret = fi_domain(f->fabric, f->info, &f->domain, NULL);
	if (ret)
		die("fi_fabric/fi_domain", ret);
	ret = fi_cq_open(f->domain, &cqa, &f->cq, NULL);
	if (!ret)
		ret = fi_av_open(f->domain, &ava, &f->av, NULL);
	if (!ret)
		ret = fi_endpoint(f->domain, f->info, &f->ep, NULL);
	if (!ret)
		ret = fi_ep_bind(f->ep, &f->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(f->ep, &f->av->fid, 0);
	if (!ret)
		ret = fi_enable(f->ep);
	if (ret)
		die("endpoint setup", ret);
}

static void fab_close(struct fab *f)
{
	fi_close(&f->ep->fid);
	fi_close(&f->av->fid);
	fi_close(&f->cq->fid);
	fi_close(&f->domain->fid);
	fi_close(&f->fabric->fid);
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
			fprintf(stderr, "completion error: %s (prov %d: %s)\n",
				fi_strerror(err.err), err.prov_errno,
				fi_cq_strerror(f->cq, err.prov_errno, err.err_data, NULL, 0));
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

static void buf_alloc(struct buf *b, size_t len)
{
	/* whole pages: HBM exports and mappings are made of pages */
	len = (len + 4095) & ~(size_t)4095;
	b->len = len;
	b->dmabuf = -1;
	b->acc_fd = -1;
	if (acc < 0) {
		b->cpu = aligned_alloc(4096, len);
		ok(b->cpu != NULL, "%zu bytes of host memory", len);
		if (!b->cpu)
			exit(1);
		return;
	}
	b->acc_fd = hlthunk_open_by_index(acc);
	if (b->acc_fd >= 0)
		b->handle = hlthunk_device_memory_alloc(b->acc_fd, len, 0, true, false);
	if (b->handle)
		b->va = hlthunk_device_memory_map(b->acc_fd, b->handle, 0);
	if (b->va)
		b->dmabuf = hlthunk_device_mapped_memory_export_dmabuf_fd(b->acc_fd, b->va,
									  len, 0, 0);
	if (b->handle)
		b->cpu = hlthunk_device_memory_mmap(b->acc_fd, b->handle, len);
	ok(b->dmabuf >= 0 && b->cpu, "%zu bytes of HBM on accel %d, exported as dma-buf fd %d, CPU-mapped (%s)",
	   len, acc, b->dmabuf, b->dmabuf >= 0 && b->cpu ? "ok" : strerror(errno));
	if (b->dmabuf < 0 || !b->cpu)
		exit(1);
}

static void buf_reg(struct fab *f, struct buf *b, uint64_t access)
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
	ok(!ret, "fi_mr_regattr(%s) of the %s buffer: %s",
	   flags ? "FI_MR_DMABUF" : "host iov", access & FI_REMOTE_WRITE ? "target" : "source",
	   ret ? fi_strerror(-ret) : "ok");
	if (ret)
		exit(1);
}

static void buf_free(struct buf *b)
{
	if (b->mr)
		fi_close(&b->mr->fid);
	if (b->acc_fd < 0) {
		free(b->cpu);
		return;
	}
	close(b->dmabuf);
	hlthunk_device_memory_munmap(b->cpu, b->len);
	hlthunk_memory_unmap(b->acc_fd, b->va);
	hlthunk_device_memory_free(b->acc_fd, b->handle);
	hlthunk_close(b->acc_fd);
}

static int server(void)
{
	struct fi_cq_data_entry e = { 0 };
	struct oob_msg m = { 0 };
	size_t name_len = sizeof(m.name), i, bad = 0, first_bad = 0;
	struct fab f = { 0 };
	struct buf b = { 0 };
	uint8_t verdict;
	int c, ret;

	fab_open(&f, true);
	buf_alloc(&b, nbytes + 2 * GUARD);
	memset(b.cpu, 0xa5, b.len);
	buf_reg(&f, &b, FI_REMOTE_WRITE);
	ret = fi_getname(&f.ep->fid, m.name, &name_len);
	if (ret)
		die("fi_getname", ret);
	/* FI_RX_CQ_DATA: a write with remote CQ data consumes a receive */
	if (f.info->mode & FI_RX_CQ_DATA) {
		ret = (int)fi_recv(f.ep, NULL, 0, NULL, FI_ADDR_UNSPEC, &m);
		ok(!ret, "FI_RX_CQ_DATA mode: a zero-length receive posted (%s)",
		   ret ? fi_strerror(-ret) : "ok");
	}
	m.name_len = (uint32_t)name_len;
	m.addr = (f.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR ? (uintptr_t)b.cpu : 0) + GUARD;
	m.key = fi_mr_key(b.mr);
	m.len = nbytes;
	m.seed = (uint32_t)getpid();
	printf("# listening on TCP port %s\n", port);
	fflush(stdout);
	c = oob_listen();
	if (c < 0 || xfer(c, &m, sizeof(m), true))
		die("out-of-band exchange", -FI_EIO);
	/* the completion carrying the client's data word */
	do {
		ret = wait_cq(&f, &e);
	} while (!ret && !(e.flags & FI_REMOTE_CQ_DATA));
	ok(!ret, "remote-CQ-data completion of the write (%s)", ret ? strerror(ret) : "ok");
	ok(!ret && e.data == CQ_DATA, "CQ data 0x%" PRIx64 " (expected 0x%x), flags 0x%" PRIx64,
	   (uint64_t)e.data, CQ_DATA, (uint64_t)e.flags);
	/* every byte, through the CPU mapping of the HBM */
	for (i = 0; i < nbytes; i++) {
		if (b.cpu[GUARD + i] != pattern(i, m.seed) && !bad++)
			first_bad = i;
	}
	ok(!bad, "%zu bytes landed in the %s, checked through its CPU mapping (%zu wrong, first at %zu)",
	   nbytes, acc >= 0 ? "HBM" : "host buffer", bad, first_bad);
	for (i = 0, bad = 0; i < GUARD; i++)
		bad += (b.cpu[i] != 0xa5) + (b.cpu[GUARD + nbytes + i] != 0xa5);
	ok(!bad, "the %d bytes on each side of the written range are untouched (%zu changed)",
	   GUARD, bad);
	verdict = failures ? 1 : 0;
	xfer(c, &verdict, 1, true);
	close(c);
	buf_free(&b);
	fab_close(&f);
	return failures ? 1 : 0;
}

static int client(const char *host)
{
	struct fi_cq_data_entry e = { 0 };
	struct oob_msg m = { 0 };
	fi_addr_t peer = FI_ADDR_UNSPEC;
	uint8_t verdict = 1;
	struct fab f = { 0 };
	struct buf b = { 0 };
	double t0;
	size_t i;
	int c, ret;

	c = oob_connect(host);
	if (c < 0 || xfer(c, &m, sizeof(m), false))
		die("out-of-band exchange with the server", -FI_EIO);
	if (m.len != nbytes || m.name_len > sizeof(m.name))
		die("the server's parameters", -FI_EINVAL);
	fab_open(&f, false);
	ok(nbytes > f.info->tx_attr->inject_size,
	   "the write (%zu bytes) is larger than the inject size (%zu)", nbytes,
	   f.info->tx_attr->inject_size);
	ok(f.info->domain_attr->cq_data_size >= 4, "4 bytes of remote CQ data (cq_data_size %zu)",
	   f.info->domain_attr->cq_data_size);
	ret = fi_av_insert(f.av, m.name, 1, &peer, 0, NULL);
	if (ret != 1)
		die("fi_av_insert of the server's address", ret < 0 ? ret : -FI_EINVAL);
	buf_alloc(&b, nbytes);
	for (i = 0; i < nbytes; i++)
		b.cpu[i] = pattern(i, m.seed);
	buf_reg(&f, &b, FI_WRITE);
	t0 = now();
	do {
		ret = (int)fi_writedata(f.ep, b.cpu, nbytes, fi_mr_desc(b.mr), CQ_DATA, peer,
					m.addr, m.key, &m);
		if (ret == -FI_EAGAIN)
			fi_cq_read(f.cq, &e, 0);	/* progress (rxm connects) */
	} while (ret == -FI_EAGAIN && now() - t0 < 60);
	ok(!ret, "fi_writedata of %zu bytes with CQ data 0x%x posted (%s)", nbytes, CQ_DATA,
	   ret ? fi_strerror(-ret) : "ok");
	if (!ret) {
		ret = wait_cq(&f, &e);
		ok(!ret, "the write completed at the client (%s, %.3f s)",
		   ret ? strerror(ret) : "ok", now() - t0);
	}
	/* the server's verdict; keep progressing meanwhile (rxm) */
	if (xfer(c, &verdict, 1, false))
		verdict = 1;
	ok(!verdict, "the server found the data and the CQ data right");
	close(c);
	buf_free(&b);
	fab_close(&f);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *role = argc > 1 ? argv[1] : "";
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
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(role, "server") && optind == argc)
		return server();
	if (!strcmp(role, "client") && optind == argc - 1)
		return client(argv[optind]);
usage:
	fprintf(stderr, "usage: %s server|client [-p PROV] [-d DOMAIN] [-s SRC_ADDR] [-a ACC|-H] "
		"[-P PORT] [-n BYTES] [SERVER_IP]\n", argv[0]);
	return 2;
}
