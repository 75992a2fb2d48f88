/* SPDX-License-Identifier: MIT */
/*
 * libfabric transport: RDM endpoints (one per rail), registration cache,
 * eager tagged messages and receiver-driven rendezvous writes.
 *
 * Rendezvous: the receiver registers its destination, takes a slot and
 * injects a control entry (address, key, length, sequence, slot, segment
 * size) into the sender's mailbox - a tagged receive the sender posted for
 * exactly that (communicator, peer, sequence).  The sender then writes the
 * data with fi_writedata(), one write per segment, striped over the rails;
 * each write carries the 32-bit immediate gc_imm(chk, slot, segment).  The
 * receiver counts remote-CQ-data completions for the slot.  When the
 * provider runs in FI_RX_CQ_DATA mode (verbs), every such write consumes a
 * posted receive: a pool of zero-length receives is kept posted per rail
 * and reposted as they are consumed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "gc_internal.h"

#define GC_WRITE_WINDOW 16   /* outstanding writes per transfer */

gcoll_result_t gc_fi_err(int ret, const char *what)
{
	return gc_err(GCOLL_ERR_FABRIC, "%s: %s (%d)", what, fi_strerror(-ret), ret);
}

static uint64_t directed_recv_cap(const char *prov);

static struct fi_info *make_hints(const char *prov)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		return NULL;
	h->ep_attr->type = FI_EP_RDM;
	h->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_WRITE | FI_REMOTE_WRITE |
		  FI_SEND | FI_RECV | directed_recv_cap(prov);
	h->mode = FI_RX_CQ_DATA;
	h->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				  FI_MR_PROV_KEY;
	h->domain_attr->threading = FI_THREAD_DOMAIN;
	h->tx_attr->msg_order = FI_ORDER_SAS;
	h->rx_attr->msg_order = FI_ORDER_SAS;
	if (prov && *prov)
		h->fabric_attr->prov_name = strdup(gc_prov_is_gaudi(prov) ? GC_PROV_VERBS : prov);
	/* libfabric's verbs provider lists a RoCE device for any address
	 * format only on interfaces named by FI_VERBS_IFACE (default "ib");
	 * asking for IPv4 socket addresses lists every RoCE port */
	if (prov && gc_prov_is_verbs(prov) && !getenv("FI_VERBS_IFACE"))
		h->addr_format = FI_SOCKADDR_IN;
	return h;
}

bool gc_prov_is_gaudi(const char *prov)
{
	return prov && !strcmp(prov, "gaudi");
}

bool gc_prov_is_verbs(const char *prov)
{
	return prov && (gc_prov_is_gaudi(prov) || !strncmp(prov, "verbs", 5));
}

/* The fi_info gc_tp_open() uses: the domain GCOLL_IFACE names, else for
 * "gaudi" the first gaudi_N device, else for verbs a gaudi_N device if
 * there is one, else the first. */
static struct fi_info *pick_info(struct fi_info *info, const char *prov)
{
	const char *ifname = getenv("GCOLL_IFACE");

	for (struct fi_info *i = info; i; i = i->next) {
		const char *d = i->domain_attr->name;

		if (!d)
			continue;
		if (ifname ? !strcmp(d, ifname) : gc_prov_is_verbs(prov) && !strncmp(d, "gaudi_", 6))
			return i;
	}
	return ifname || gc_prov_is_gaudi(prov) ? NULL : info;
}

int gc_test_fail_pool_posts;

/* FI_DIRECTED_RECV if the provider has it with everything else we ask
 * for, else 0 (tagged receives then accept any source, as before): a probe
 * with make_hints()' own hints plus the capability. */
static __thread bool probing_directed;

static uint64_t directed_recv_cap(const char *prov)
{
	struct fi_info *h, *info = NULL;
	int ret;

	if (probing_directed)
		return FI_DIRECTED_RECV;
	probing_directed = true;
	h = make_hints(prov);
	probing_directed = false;
	if (!h)
		return 0;
	ret = fi_getinfo(FI_VERSION(1, 20), NULL, NULL, 0, h, &info);
	fi_freeinfo(h);
	fi_freeinfo(info);
	if (ret)
		GC_INFO("transport: provider '%s' lacks FI_DIRECTED_RECV; tagged receives accept any source",
			prov && *prov ? prov : "(any)");
	return ret ? 0 : FI_DIRECTED_RECV;
}

static int post_pool(struct gc_rail *r, struct gc_rxbuf *b)
{
	int ret = (int)fi_recv(r->ep, NULL, 0, NULL, FI_ADDR_UNSPEC, b);

	if (!ret)
		r->pool_posted++;
	return ret;
}

/* Put a consumed pool entry back.  Every entry must stay posted: in
 * FI_RX_CQ_DATA mode each remote-CQ-data write consumes one, and with the
 * pool empty rendezvous writes stall.  -FI_EAGAIN is retried from
 * gc_tp_progress(); any other failure breaks the transport for good, and
 * every communicator on it fails with GCOLL_ERR_FABRIC (see gc_progress_all()
 * in sched.c) instead of waiting for writes that cannot complete. */
static void pool_repost(struct gc_transport *tp, struct gc_rxbuf *b)
{
	struct gc_rail *r = &tp->rails[b->rail];
	int ret;

	if (tp->closing)
		return;
	if (gc_test_fail_pool_posts > 0) {
		gc_test_fail_pool_posts--;
		ret = -FI_EIO;
	} else {
		ret = post_pool(r, b);
	}
	if (!ret) {
		r->pool_retry &= ~(1ull << (b - r->pool));
		return;
	}
	r->pool_retry |= 1ull << (b - r->pool);
	if (ret != -FI_EAGAIN && !tp->fatal)
		tp->fatal = gc_fi_err(ret, "transport: reposting a remote CQ data receive");
}

static void pool_retry(struct gc_transport *tp, struct gc_rail *r)
{
	for (int k = 0; k < GC_RXPOOL && r->pool_retry && !tp->fatal; k++)
		if (r->pool_retry & (1ull << k))
			pool_repost(tp, &r->pool[k]);
}

/* Open an RDM endpoint with its own CQ and AV, enabled, and return its
 * address.  idx only makes shm region names unique (rails 0..7, the probe's
 * scratch endpoint GC_MAX_RAILS).  On failure the caller closes r. */
static int ep_open(struct gc_transport *tp, int idx, struct gc_rail *r, char *addr,
		   size_t *alen)
{
	struct fi_cq_attr cqa = { .format = FI_CQ_FORMAT_DATA, .size = 4096,
				  .wait_obj = FI_WAIT_NONE };
	struct fi_av_attr ava = { .type = FI_AV_TABLE };
	int ret;

	ret = fi_endpoint(tp->domain, tp->ep_info ? tp->ep_info : tp->info, &r->ep, NULL);
	if (ret)
		return ret;
	ret = fi_cq_open(tp->domain, &cqa, &r->cq, NULL);
	if (!ret)
		ret = fi_av_open(tp->domain, &ava, &r->av, NULL);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->cq->fid, FI_TRANSMIT | FI_RECV);
	if (!ret)
		ret = fi_ep_bind(r->ep, &r->av->fid, 0);
	if (!ret && !strcmp(tp->prov_name, "shm")) {
		/* shm names its shared-memory region after the endpoint;
		 * the default (pid based) collides with regions left by
		 * killed processes when pids are reused (containers) */
		char name[96];
		uint64_t rnd = gc_now_ms() ^ ((uint64_t)getpid() << 32) ^ (uintptr_t)tp;
		const char *pfx = getenv("GCOLL_SHM_PREFIX");

		/* fixed width: every rank's address has the same length */
		snprintf(name, sizeof(name), "%.40s_%010d_%016llx_%d", pfx && *pfx ? pfx : "gcoll",
			 (int)getpid(),
			 (unsigned long long)(rnd * 0x9e3779b97f4a7c15ull), idx);
		ret = fi_setname(&r->ep->fid, name, strlen(name) + 1);
		if (ret)
			GC_INFO("shm: fi_setname failed (%s), using the default name",
				fi_strerror(-ret));
		ret = 0;
	}
	if (!ret)
		ret = fi_enable(r->ep);
	if (!ret)
		ret = fi_getname(&r->ep->fid, addr, alen);
	if (!ret && tp->ep_info && idx < GC_MAX_RAILS) {
		/* listening on every port: publish the rail's own address */
		if (*alen != sizeof(struct sockaddr_in))
			return -FI_EINVAL;
		memcpy(&((struct sockaddr_in *)addr)->sin_addr,
		       &tp->ident[idx % tp->nident].sin_addr, sizeof(struct in_addr));
	}
	return ret;
}

/* verbs: the rails' addresses and the endpoint info they listen with.
 *
 * An endpoint bound to one address is bound to the one port that holds it
 * (rdma_cm binds a cm_id to a port), and would neither accept nor connect
 * through the device's other ports.  So the endpoints listen on the
 * wildcard address, rdma_cm resolves every peer through the routing table
 * to the port that faces it, and each rail publishes one of the device's
 * addresses: rail i the i-th distinct IPv4 address fi_getinfo lists for
 * the device (Documentation/collectives.md, "Addressing").  One address
 * on every port with a host route per peer makes a full mesh; one subnet
 * per port makes rails that stripe over the ports. */
static int ident_cmp(const void *a, const void *b)
{
	uint32_t x = ntohl(((const struct sockaddr_in *)a)->sin_addr.s_addr);
	uint32_t y = ntohl(((const struct sockaddr_in *)b)->sin_addr.s_addr);

	return x < y ? -1 : x > y;
}

static int verbs_rails_setup(struct gc_transport *tp, struct fi_info *list)
{
	struct sockaddr_in *any;

	for (struct fi_info *i = list; i && tp->nident < GC_MAX_RAILS; i = i->next) {
		const struct sockaddr_in *sin = i->src_addr;
		bool seen = false;

		if (!i->domain_attr->name || strcmp(i->domain_attr->name, tp->info->domain_attr->name) ||
		    i->addr_format != FI_SOCKADDR_IN || !sin || i->src_addrlen != sizeof(*sin))
			continue;
		for (int k = 0; k < tp->nident; k++)
			seen |= tp->ident[k].sin_addr.s_addr == sin->sin_addr.s_addr;
		if (!seen)
			tp->ident[tp->nident++] = *sin;
	}
	if (!tp->nident)
		return 0;   /* not IPv4: bind as the provider chose */
	/* in address order, so that rail i of every rank is on the same
	 * subnet (the same cable) whatever order the ports were listed in */
	qsort(tp->ident, (size_t)tp->nident, sizeof(tp->ident[0]), ident_cmp);
	tp->ep_info = fi_dupinfo(tp->info);
	if (!tp->ep_info)
		return -FI_ENOMEM;
	any = tp->ep_info->src_addr;
	any->sin_addr.s_addr = htonl(INADDR_ANY);
	any->sin_port = 0;
	return 0;
}

/* Close what ep_open opened; the endpoint first, it holds the others. */
static void ep_close(struct gc_rail *r)
{
	if (r->ep)
		fi_close(&r->ep->fid);
	if (r->av)
		fi_close(&r->av->fid);
	if (r->cq)
		fi_close(&r->cq->fid);
	r->ep = NULL;
	r->av = NULL;
	r->cq = NULL;
}

/* Probe FI_MR_DMABUF with a memfd stand-in.  Accepting the registration is
 * not enough (some providers take the flag and then treat the attribute as
 * an iovec): the probe RDMA-writes a pattern into the region through an
 * endpoint of ours addressed to itself and checks it arrived.
 *
 * That endpoint is a scratch one with its own CQ and AV, closed before any
 * peer is known - never a rail.  A rail must not connect to itself: the tcp
 * provider (libfabric 2.1) recycles its connection objects without clearing
 * the peer's pid, and the loopback connection leaves our own pid behind in
 * the object the rail's first real connection then gets.  When that peer's
 * crossing connection request is handled after ours has connected but
 * before the CONNECTED event, the stale pid makes the provider take it for
 * a restarted peer and replace the live connection, dropping what the peer
 * had already sent on it (a hang on the first operation, seen under load). */
static bool probe_dmabuf(struct gc_transport *tp)
{
	struct fi_mr_dmabuf db = { 0 };
	struct fi_mr_attr attr = { 0 };
	struct fid_mr *mr = NULL, *smr = NULL;
	struct gc_rail scratch = { 0 }, *r = &scratch;
	char self_addr[GC_ADDR_MAX];
	size_t alen = sizeof(self_addr);
	long pg = sysconf(_SC_PAGESIZE);
	char src[64];
	fi_addr_t self;
	bool ok = false;
	void *va;
	int fd, ret;

	if (gc_env_u64("GCOLL_DMABUF", 1) == 0)
		return false;
	fd = memfd_create("gcoll-probe", MFD_CLOEXEC);
	if (fd < 0)
		return false;
	if (ftruncate(fd, pg)) {
		close(fd);
		return false;
	}
	va = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (va == MAP_FAILED) {
		close(fd);
		return false;
	}
	ret = ep_open(tp, GC_MAX_RAILS, r, self_addr, &alen);
	if (ret) {
		GC_INFO("FI_MR_DMABUF probe: scratch endpoint: %s", fi_strerror(-ret));
		goto out;
	}
	memset(va, 0, (size_t)pg);
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (char)(0xa5 ^ i);
	db.fd = fd;
	db.offset = 0;
	db.len = (size_t)pg;
	db.base_addr = va;
	attr.dmabuf = &db;
	attr.iov_count = 1;
	attr.access = FI_WRITE | FI_REMOTE_WRITE | FI_SEND | FI_RECV;
	attr.requested_key = tp->next_key++;
	attr.iface = FI_HMEM_SYSTEM;
	ret = fi_mr_regattr(tp->domain, &attr, FI_MR_DMABUF, &mr);
	if (ret)
		goto out;
	if (tp->mr_local) {
		struct iovec iov = { src, sizeof(src) };
		struct fi_mr_attr a2 = { .mr_iov = &iov, .iov_count = 1,
					 .access = FI_WRITE | FI_SEND,
					 .requested_key = tp->next_key++ };

		if (fi_mr_regattr(tp->domain, &a2, 0, &smr))
			goto out;
	}
	if (fi_av_insert(r->av, self_addr, 1, &self, 0, NULL) != 1)
		goto out;
	for (uint64_t end = gc_now_ms() + 2000;;) {
		struct fi_cq_data_entry e;

		ret = (int)fi_write(r->ep, src, sizeof(src), smr ? fi_mr_desc(smr) : NULL, self,
				    tp->mr_virt ? (uint64_t)(uintptr_t)va : 0, fi_mr_key(mr), NULL);
		if (ret != -FI_EAGAIN || gc_now_ms() > end)
			break;
		fi_cq_read(r->cq, &e, 0);
	}
	if (ret) {
		GC_INFO("FI_MR_DMABUF probe: fi_write: %s", fi_strerror(-ret));
		goto out;
	}
	for (uint64_t end = gc_now_ms() + 2000; gc_now_ms() < end;) {
		struct fi_cq_data_entry e;
		ssize_t n = fi_cq_read(r->cq, &e, 1);

		if (n == -FI_EAVAIL) {
			struct fi_cq_err_entry err = { 0 };

			fi_cq_readerr(r->cq, &err, 0);
			GC_INFO("FI_MR_DMABUF probe: write failed: %s", fi_strerror(err.err));
			break;
		}
		if (n == 1 && !(e.flags & FI_REMOTE_CQ_DATA)) {
			/* local completion; give the target side a moment */
			for (uint64_t e2 = gc_now_ms() + 500; gc_now_ms() < e2;) {
				fi_cq_read(r->cq, &e, 0);
				if (!memcmp(va, src, sizeof(src)))
					break;
			}
			ok = !memcmp(va, src, sizeof(src));
			break;
		}
	}
out:
	/* closing the endpoint ends a write still in flight */
	ep_close(r);
	if (smr)
		fi_close(&smr->fid);
	if (mr)
		fi_close(&mr->fid);
	munmap(va, (size_t)pg);
	close(fd);
	GC_INFO("FI_MR_DMABUF probe on %s: %s", tp->prov_name, ok ? "works" : "not supported");
	return ok;
}

gcoll_result_t gc_tp_open(int nrails, const char *prov, struct gc_transport **out)
{
	struct fi_info *hints, *info = NULL, *pick;
	struct gc_transport *tp;
	gcoll_result_t rc;
	int ret;

	hints = make_hints(prov);
	if (!hints)
		return GCOLL_ERR_NOMEM;
	ret = fi_getinfo(FI_VERSION(1, 20), NULL, NULL, 0, hints, &info);
	fi_freeinfo(hints);
	if (ret || !info)
		return gc_err(GCOLL_ERR_UNSUPPORTED,
			      "transport: no RDM endpoint with tagged+RMA for provider '%s': %s",
			      prov ? prov : "(any)", fi_strerror(-ret));
	pick = pick_info(info, prov);
	if (!pick) {
		fi_freeinfo(info);
		return gc_err(GCOLL_ERR_UNSUPPORTED,
			      "transport: provider '%s' has no domain %s%s (is a gaudi port up, with an IPv4 address?)",
			      prov, getenv("GCOLL_IFACE") ? "named " : "gaudi_N",
			      getenv("GCOLL_IFACE") ? getenv("GCOLL_IFACE") : "");
	}
	tp = calloc(1, sizeof(*tp));
	if (!tp) {
		fi_freeinfo(info);
		return GCOLL_ERR_NOMEM;
	}
	tp->refcnt = 1;
	tp->info = fi_dupinfo(pick);
	if (tp->info && gc_prov_is_verbs(prov) && !getenv("FI_VERBS_IFACE") &&
	    verbs_rails_setup(tp, info)) {
		fi_freeinfo(tp->info);
		tp->info = NULL;
	}
	fi_freeinfo(info);
	if (!tp->info) {
		free(tp);
		return GCOLL_ERR_NOMEM;
	}
	info = tp->info;
	snprintf(tp->prov_name, sizeof(tp->prov_name), "%s", info->fabric_attr->prov_name);
	if (info->domain_attr->cq_data_size < 4) {
		rc = gc_err(GCOLL_ERR_UNSUPPORTED, "transport: provider %s has %zu bytes of CQ data, need 4",
			    tp->prov_name, info->domain_attr->cq_data_size);
		goto fail;
	}
	/* verbs;ofi_rxm injects only what fits inline after its own header
	 * (32 bytes on gaudi_N): control entries are then sent, not injected */
	tp->ctrl_inject = info->tx_attr->inject_size >= sizeof(struct gc_ctrl) &&
			  !gc_env_u64("GCOLL_FORCE_CTRL_SEND", 0);
	tp->rx_cq_data = (info->mode & FI_RX_CQ_DATA) || gc_env_u64("GCOLL_FORCE_RX_CQ_DATA", 0);
	tp->peer_cma = !strcmp(tp->prov_name, "shm");
	tp->mr_local = info->domain_attr->mr_mode & FI_MR_LOCAL;
	tp->mr_virt = info->domain_attr->mr_mode & FI_MR_VIRT_ADDR;
	tp->mr_prov_key = info->domain_attr->mr_mode & FI_MR_PROV_KEY;
	tp->max_msg = info->ep_attr->max_msg_size;
	tp->next_key = 1 + ((uint64_t)getpid() << 20);
	tp->cache_max = (int)gc_env_u64("GCOLL_MR_CACHE_SIZE", 64);
	tp->slots = calloc(GC_NSLOTS, sizeof(*tp->slots));
	if (!tp->slots) {
		rc = GCOLL_ERR_NOMEM;
		goto fail;
	}
	ret = fi_fabric(info->fabric_attr, &tp->fabric, NULL);
	if (ret) {
		rc = gc_fi_err(ret, "fi_fabric");
		goto fail;
	}
	ret = fi_domain(tp->fabric, info, &tp->domain, NULL);
	if (ret) {
		rc = gc_fi_err(ret, "fi_domain");
		goto fail;
	}
	if (nrails < 1)
		nrails = 1;
	if (nrails > GC_MAX_RAILS)
		nrails = GC_MAX_RAILS;
	for (int i = 0; i < nrails; i++) {
		struct gc_rail *r = &tp->rails[i];
		size_t alen = GC_ADDR_MAX;

		ret = ep_open(tp, i, r, tp->addr[i], &alen);
		if (ret && !r->ep && i > 0)
			break;   /* fewer rails than asked for */
		if (ret) {
			tp->nrails = i + 1;
			rc = gc_fi_err(ret, r->ep ? "endpoint setup" : "fi_endpoint");
			goto fail;
		}
		if (i == 0)
			tp->addrlen = alen;
		else if (alen != tp->addrlen) {
			tp->nrails = i + 1;
			rc = gc_err(GCOLL_ERR_FABRIC, "transport: rails have different address sizes");
			goto fail;
		}
		tp->nrails = i + 1;
		if (tp->rx_cq_data) {
			for (int k = 0; k < GC_RXPOOL; k++) {
				r->pool[k].type = GC_CTX_RXPOOL;
				r->pool[k].rail = i;
				ret = post_pool(r, &r->pool[k]);
				if (ret) {
					rc = gc_fi_err(ret, "fi_recv (remote CQ data pool)");
					goto fail;
				}
			}
		}
	}
	/* verbs hands FI_MR_DMABUF to the kernel (ibv_reg_dmabuf_mr), which
	 * imports the dma-buf or refuses it; a refusal falls back per
	 * registration (gcoll_mem_register_dmabuf).  Other providers may
	 * accept the flag and ignore it: probe them. */
	if (gc_prov_is_verbs(tp->prov_name))
		tp->dmabuf_native = gc_env_u64("GCOLL_DMABUF", 1) != 0;
	else
		tp->dmabuf_native = probe_dmabuf(tp);
	GC_INFO("transport: provider %s domain %s rails %d rx_cq_data %d mr_local %d virt %d dmabuf %d",
		tp->prov_name, info->domain_attr->name, tp->nrails, tp->rx_cq_data,
		tp->mr_local, tp->mr_virt, tp->dmabuf_native);
	*out = tp;
	return GCOLL_SUCCESS;
fail:
	gc_tp_put(tp);
	return rc;
}

gcoll_result_t gc_tp_set_peers(struct gc_transport *tp, int npeers, int myrank,
			       const char *addrs)
{
	tp->npeers = npeers;
	tp->myrank = myrank;
	for (int i = 0; i < tp->nrails; i++) {
		struct gc_rail *r = &tp->rails[i];

		r->peers = calloc((size_t)npeers, sizeof(fi_addr_t));
		if (!r->peers)
			return GCOLL_ERR_NOMEM;
		for (int p = 0; p < npeers; p++) {
			const char *a = addrs + ((size_t)p * (size_t)tp->nrails + (size_t)i) * tp->addrlen;
			int ret = fi_av_insert(r->av, a, 1, &r->peers[p], 0, NULL);

			if (ret != 1)
				return gc_err(GCOLL_ERR_FABRIC, "fi_av_insert of rank %d rail %d failed (%d)",
					      p, i, ret);
		}
	}
	return GCOLL_SUCCESS;
}

/* Connect every pair of ranks before any traffic, the lower rank first.
 *
 * verbs;ofi_rxm connects on first use, and when two ranks connect to each
 * other at once it keeps the connection of the rank with the larger
 * address.  Our endpoints listen on the wildcard address, so each rank
 * sees its own name as 0.0.0.0: both keep the other's connection, close
 * their own, and the first messages hang.  Here rank r sends a zero-byte
 * hello to every higher rank and waits for one from every lower rank, so
 * only the lower rank of a pair ever starts a connection. */
gcoll_result_t gc_tp_connect_all(struct gc_transport *tp, uint64_t timeout_ms)
{
	int n = tp->npeers, me = tp->myrank, want = 0, got = 0;
	struct gc_ctx hello = { .type = 0 };
	uint64_t end = gc_now_ms() + timeout_ms;
	bool *posted;

	posted = calloc((size_t)n * (size_t)tp->nrails, sizeof(*posted));
	if (!posted)
		return GCOLL_ERR_NOMEM;
	for (int i = 0; i < tp->nrails; i++)
		for (int p = 0; p < n; p++)
			want += p != me;
	while (got < want) {
		for (int i = 0; i < tp->nrails; i++) {
			struct gc_rail *r = &tp->rails[i];
			struct fi_cq_data_entry e;
			ssize_t ret;

			for (int p = 0; p < n; p++) {
				bool *done = &posted[(size_t)i * (size_t)n + (size_t)p];

				if (p == me || *done)
					continue;
				if (p > me)
					ret = fi_tsend(r->ep, NULL, 0, NULL, r->peers[p],
						       gc_tag(GC_TAG_HELLO, 0, me, 0), &hello);
				else
					ret = fi_trecv(r->ep, NULL, 0, NULL, FI_ADDR_UNSPEC,
						       gc_tag(GC_TAG_HELLO, 0, p, 0), 0, &hello);
				if (ret && ret != -FI_EAGAIN) {
					free(posted);
					return gc_fi_err((int)ret, p > me ? "fi_tsend (connect)"
									  : "fi_trecv (connect)");
				}
				*done = !ret;
			}
			ret = fi_cq_read(r->cq, &e, 1);
			if (ret == 1 && e.op_context == &hello)
				got++;
			if (ret == -FI_EAVAIL) {
				struct fi_cq_err_entry err = { 0 };

				fi_cq_readerr(r->cq, &err, 0);
				free(posted);
				return gc_err(GCOLL_ERR_FABRIC, "transport: connecting rail %d: %s", i,
					      fi_strerror(err.err));
			}
		}
		if (gc_now_ms() > end) {
			free(posted);
			return gc_err(GCOLL_ERR_TIMEOUT,
				      "transport: rank %d connected %d of its %d connections within %llu ms",
				      me, got, want, (unsigned long long)timeout_ms);
		}
	}
	free(posted);
	return GCOLL_SUCCESS;
}

static void free_zombie(struct gc_transport *tp, struct gc_xfer *x)
{
	struct gc_xfer **pp;

	for (pp = &tp->zombies; *pp; pp = &(*pp)->znext)
		if (*pp == x) {
			*pp = x->znext;
			break;
		}
	free(x);
}

void gc_tp_put(struct gc_transport *tp)
{
	if (!tp || --tp->refcnt > 0)
		return;
	/* closing the endpoints ends every operation still posted */
	tp->closing = true;
	for (int i = 0; i < tp->nrails; i++) {
		ep_close(&tp->rails[i]);
		free(tp->rails[i].peers);
	}
	while (tp->zombies)
		free_zombie(tp, tp->zombies);
	while (tp->cache) {
		struct gc_mr *m = tp->cache;

		tp->cache = m->next;
		if (m->mr)
			fi_close(&m->mr->fid);
		free(m);
	}
	if (tp->domain)
		fi_close(&tp->domain->fid);
	if (tp->fabric)
		fi_close(&tp->fabric->fid);
	fi_freeinfo(tp->info);
	fi_freeinfo(tp->ep_info);
	free(tp->slots);
	free(tp->slot_gen);
	free(tp->slot_chk);
	free(tp);
}

/* ------------------------------------------------------------ MR cache */

gcoll_result_t gc_mr_reg(struct gc_transport *tp, void *buf, size_t len, int dmabuf_fd,
			 uint64_t dmabuf_off, struct gc_mr **out)
{
	return gc_mr_reg_access(tp, buf, len, dmabuf_fd, dmabuf_off, GC_ACC_BOTH, out);
}

gcoll_result_t gc_mr_reg_access(struct gc_transport *tp, void *buf, size_t len, int dmabuf_fd,
				uint64_t dmabuf_off, uint64_t access, struct gc_mr **out)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	struct fi_mr_dmabuf db = { 0 };
	struct fi_mr_attr attr = { 0 };
	uint64_t flags = 0;
	struct gc_mr *m;
	int ret;

	m = calloc(1, sizeof(*m));
	if (!m)
		return GCOLL_ERR_NOMEM;
	attr.access = access;
	attr.requested_key = tp->next_key++;
	attr.iface = FI_HMEM_SYSTEM;
	attr.iov_count = 1;
	if (dmabuf_fd >= 0) {
		db.fd = dmabuf_fd;
		db.offset = dmabuf_off;
		db.len = len;
		db.base_addr = (char *)buf - dmabuf_off;
		attr.dmabuf = &db;
		flags = FI_MR_DMABUF;
	} else {
		attr.mr_iov = &iov;
	}
	ret = fi_mr_regattr(tp->domain, &attr, flags, &m->mr);
	if (ret) {
		free(m);
		return gc_fi_err(ret, dmabuf_fd >= 0 ? "fi_mr_regattr(FI_MR_DMABUF)" : "fi_mr_regattr");
	}
	m->base = (uintptr_t)buf;
	m->len = len;
	m->access = access;
	m->desc = fi_mr_desc(m->mr);
	m->key = fi_mr_key(m->mr);
	*out = m;
	return GCOLL_SUCCESS;
}

void gc_mr_free(struct gc_transport *tp, struct gc_mr *m)
{
	(void)tp;
	if (!m)
		return;
	if (m->mr)
		fi_close(&m->mr->fid);
	free(m);
}

static void cache_insert(struct gc_transport *tp, struct gc_mr *m)
{
	m->next = tp->cache;
	tp->cache = m;
	tp->cache_n++;
	/* evict least recently used idle entries beyond the limit */
	while (tp->cache_n > tp->cache_max) {
		struct gc_mr **pp, **victim = NULL;

		for (pp = &tp->cache; *pp; pp = &(*pp)->next)
			if (!(*pp)->pinned && !(*pp)->users && *pp != m &&
			    (!victim || (*pp)->last_use < (*victim)->last_use))
				victim = pp;
		if (!victim)
			break;
		struct gc_mr *v = *victim;

		*victim = v->next;
		tp->cache_n--;
		gc_mr_free(tp, v);
	}
}

/* Find (or create) a registration covering [buf, buf+len) with access.
 * The cache is keyed by access too: a send buffer never borrows a receive
 * target's registration (and its remote write), only a pinned one serves
 * every role it was registered for. */
gcoll_result_t gc_mr_lookup(struct gc_transport *tp, const void *buf, size_t len,
			    uint64_t access, struct gc_mr **out)
{
	static uint64_t tick;
	uintptr_t a = (uintptr_t)buf, pg = 4096, lo, hi;
	struct gc_mr *m;
	gcoll_result_t rc;

	for (m = tp->cache; m; m = m->next)
		if (a >= m->base && a + len <= m->base + m->len &&
		    (m->access == access || (m->pinned && (m->access & access) == access))) {
			m->users++;
			m->last_use = ++tick;
			*out = m;
			return GCOLL_SUCCESS;
		}
	lo = a & ~(pg - 1);
	hi = (a + len + pg - 1) & ~(pg - 1);
	rc = gc_mr_reg_access(tp, (void *)lo, hi - lo, -1, 0, access, &m);
	if (rc)
		return rc;
	m->users = 1;
	m->last_use = ++tick;
	cache_insert(tp, m);
	*out = m;
	return GCOLL_SUCCESS;
}

/* A pinned registration made by the user or the arena. */
void gc_mr_unpin(struct gc_transport *tp, struct gc_mr *m)
{
	struct gc_mr **pp;

	for (pp = &tp->cache; *pp; pp = &(*pp)->next)
		if (*pp == m) {
			*pp = m->next;
			tp->cache_n--;
			break;
		}
	gc_mr_free(tp, m);
}

static void mr_put(struct gc_xfer *x)
{
	if (x->mr) {
		x->mr->users--;
		x->mr = NULL;
	}
}

static gcoll_result_t xfer_mr(struct gcoll_comm *c, struct gc_xfer *x, bool need)
{
	if (x->mr || !need)
		return GCOLL_SUCCESS;
	if (x->own_mr) {
		x->mr = x->own_mr;
		x->mr->users++;
		return GCOLL_SUCCESS;
	}
	return gc_mr_lookup(c->tp, x->buf, x->len, gc_xfer_access(x), &x->mr);
}

uint64_t gc_xfer_access(const struct gc_xfer *x)
{
	return x->kind == 0 ? GC_ACC_SRC : GC_ACC_DST;
}

/* ----------------------------------------------------------- transfers */

static fi_addr_t peer_addr(struct gcoll_comm *c, int rail, int peer)
{
	return c->tp->rails[rail].peers[c->tpeer[peer]];
}

/* Source a tagged receive from peer accepts: only that peer when the
 * provider filters by source (FI_DIRECTED_RECV).  The tag names the sender's
 * rank in the communicator, but nothing stops another process - a faulty
 * rank, or one of another communicator with the same id - from sending
 * the same tag. */
static fi_addr_t recv_src(struct gcoll_comm *c, int rail, int peer)
{
	if (!(c->tp->info->caps & FI_DIRECTED_RECV))
		return FI_ADDR_UNSPEC;
	return peer_addr(c, rail, peer);
}

static void xfer_done(struct gc_xfer *x)
{
	if (x->state == GX_ACTIVE)
		x->state = GX_DONE;
}

static void xfer_fail(struct gc_xfer *x, gcoll_result_t e)
{
	if (x->state == GX_ACTIVE || x->state == GX_IDLE) {
		x->state = GX_FAILED;
		x->err = e;
	}
}

static void slot_free(struct gc_transport *tp, struct gc_xfer *x)
{
	if (x->has_slot) {
		tp->slots[x->slot] = NULL;
		tp->slots_used--;
		x->has_slot = false;
	}
}

/* The check byte of a slot's new owner: a hash of everything that
 * identifies the transfer (whole communicator id, peer, sequence) and of the
 * slot's generation, never equal to the previous owner's.  A write meant for
 * that previous owner - a late one after an abort, or one for another
 * communicator whose id has the same low bits - therefore never counts for
 * the new one. */
static uint8_t slot_check(struct gc_transport *tp, uint32_t s, uint16_t ctx, int peer,
			  uint32_t seq)
{
	uint8_t chk;

	do {
		uint64_t h = ((uint64_t)ctx << 48) ^ ((uint64_t)(uint32_t)peer << 32) ^ seq;

		h ^= (uint64_t)++tp->slot_gen[s] << 56;
		h *= 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
		h *= 0xbf58476d1ce4e5b9ull;
		chk = (uint8_t)(h >> 56);
	} while (chk == tp->slot_chk[s]);
	tp->slot_chk[s] = chk;
	return chk;
}

static gcoll_result_t slot_alloc(struct gc_transport *tp, struct gcoll_comm *c,
				 struct gc_xfer *x)
{
	if (tp->slots_used >= GC_NSLOTS - 1)
		return gc_err(GCOLL_ERR_NOMEM, "transport: out of rendezvous slots");
	if (!tp->slot_gen) {
		tp->slot_gen = calloc(GC_NSLOTS, 1);
		tp->slot_chk = calloc(GC_NSLOTS, 1);
		if (!tp->slot_gen || !tp->slot_chk)
			return GCOLL_ERR_NOMEM;
	}
	for (;;) {
		uint32_t s = tp->slot_hint++ & (GC_NSLOTS - 1);

		if (!tp->slots[s]) {
			tp->slots[s] = x;
			tp->slots_used++;
			x->slot = s;
			x->chk = slot_check(tp, s, c->ctx, c->tpeer[x->peer], x->seq);
			x->has_slot = true;
			return GCOLL_SUCCESS;
		}
	}
}

/* The descriptor for x->ctrl with access (NULL without FI_MR_LOCAL): a
 * cached registration of its heap page, not held (the xfer lives there). */
static gcoll_result_t ctrl_desc(struct gc_transport *tp, struct gc_xfer *x, uint64_t access,
				void **desc)
{
	struct gc_mr *cm;
	gcoll_result_t rc;

	*desc = NULL;
	if (!tp->mr_local)
		return GCOLL_SUCCESS;
	rc = gc_mr_lookup(tp, &x->ctrl, sizeof(x->ctrl), access, &cm);
	if (rc)
		return rc;
	cm->users--;
	*desc = cm->desc;
	return GCOLL_SUCCESS;
}

/* The receiver's control entry as a tagged send from x->ctrl, for
 * providers whose inject size is smaller than an entry; x stays alive
 * until the send completes (inflight). */
static ssize_t ctrl_send(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	void *desc;
	ssize_t ret;

	if (ctrl_desc(tp, x, GC_ACC_SRC, &desc))
		return -FI_ENOMEM;
	x->c_main.type = GC_CTX_CTRL_SEND;
	ret = fi_tsend(tp->rails[x->rail].ep, &x->ctrl, sizeof(x->ctrl), desc,
		       peer_addr(c, x->rail, x->peer), gc_tag(GC_TAG_CTRL, c->ctx, c->rank, x->seq),
		       &x->c_main);
	if (!ret)
		x->inflight++;
	return ret;
}

/* Post what is pending for x.  -FI_EAGAIN leaves it for the next call. */
gcoll_result_t gc_xfer_advance(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;
	struct gc_rail *r = &tp->rails[x->rail];
	gcoll_result_t rc;
	ssize_t ret;

	if (x->state != GX_ACTIVE)
		return GCOLL_SUCCESS;
	if (!x->rndv) {
		if (x->posted)
			return GCOLL_SUCCESS;
		rc = xfer_mr(c, x, tp->mr_local);
		if (rc)
			return rc;
		if (x->kind == 0) {
			x->c_main.type = GC_CTX_EAGER_SEND;
			ret = fi_tsend(r->ep, x->buf, x->len, x->mr ? x->mr->desc : NULL,
				       peer_addr(c, x->rail, x->peer),
				       gc_tag(GC_TAG_DATA, c->ctx, c->rank, x->seq), &x->c_main);
		} else {
			x->c_main.type = GC_CTX_EAGER_RECV;
			ret = fi_trecv(r->ep, x->buf, x->len, x->mr ? x->mr->desc : NULL,
				       recv_src(c, x->rail, x->peer),
				       gc_tag(GC_TAG_DATA, c->ctx, x->peer, x->seq), 0, &x->c_main);
		}
		if (ret == -FI_EAGAIN)
			return GCOLL_SUCCESS;
		if (ret)
			return gc_fi_err((int)ret, x->kind == 0 ? "fi_tsend" : "fi_trecv");
		x->posted = true;
		x->inflight++;
		return GCOLL_SUCCESS;
	}
	if (x->kind == 1) {
		/* receiver: register, take a slot, inject the control entry */
		if (x->posted)
			return GCOLL_SUCCESS;
		if (!x->has_slot) {
			rc = xfer_mr(c, x, true);
			if (rc)
				return rc;
			rc = slot_alloc(tp, c, x);
			if (rc)
				return rc;
			x->ctrl.addr = tp->mr_virt ? (uint64_t)(uintptr_t)x->buf
						   : (uint64_t)((uintptr_t)x->buf - x->mr->base);
			x->ctrl.key = x->mr->key;
			x->ctrl.len = x->len;
			x->ctrl.seq = x->seq;
			x->ctrl.slot = x->slot;
			x->ctrl.wsize = (uint32_t)c->wsize;
			x->ctrl.chk = x->chk;
			x->nseg = (x->len + c->wsize - 1) / c->wsize;
		}
		if (tp->ctrl_inject)
			ret = fi_tinject(r->ep, &x->ctrl, sizeof(x->ctrl),
					 peer_addr(c, x->rail, x->peer),
					 gc_tag(GC_TAG_CTRL, c->ctx, c->rank, x->seq));
		else
			ret = ctrl_send(c, x);
		if (ret == -FI_EAGAIN)
			return GCOLL_SUCCESS;
		if (ret)
			return gc_fi_err((int)ret, tp->ctrl_inject ? "fi_tinject (rendezvous control)"
								    : "fi_tsend (rendezvous control)");
		x->posted = true;
		return GCOLL_SUCCESS;
	}
	/* sender: wait for the control entry, then write segments */
	if (!x->posted) {
		void *desc;

		rc = ctrl_desc(tp, x, GC_ACC_MAILBOX, &desc);
		if (rc)
			return rc;
		x->c_main.type = GC_CTX_CTRL_RECV;
		ret = fi_trecv(r->ep, &x->ctrl, sizeof(x->ctrl), desc,
			       recv_src(c, x->rail, x->peer),
			       gc_tag(GC_TAG_CTRL, c->ctx, x->peer, x->seq), 0,
			       &x->c_main);
		if (ret == -FI_EAGAIN)
			return GCOLL_SUCCESS;
		if (ret)
			return gc_fi_err((int)ret, "fi_trecv (rendezvous mailbox)");
		x->posted = true;
		x->inflight++;
		return GCOLL_SUCCESS;
	}
	if (!x->ctrl_ready)
		return GCOLL_SUCCESS;
	if (!x->nseg) {
		if (x->ctrl.len != x->len || x->ctrl.seq != x->seq || !x->ctrl.wsize)
			return gc_err(GCOLL_ERR_INVALID_USAGE,
				      "send to rank %d: receiver expects %llu bytes, sender has %zu (seq %u)",
				      x->peer, (unsigned long long)x->ctrl.len, x->len, x->seq);
		x->nseg = (x->len + x->ctrl.wsize - 1) / x->ctrl.wsize;
		rc = xfer_mr(c, x, tp->mr_local);
		if (rc)
			return rc;
	}
	x->c_write.type = GC_CTX_WRITE;
	while (x->seg_posted < x->nseg &&
	       x->seg_posted - x->seg_done < GC_WRITE_WINDOW) {
		size_t off = x->seg_posted * x->ctrl.wsize;
		size_t n = x->len - off < x->ctrl.wsize ? x->len - off : x->ctrl.wsize;
		int rail = (int)((x->seg_posted + x->seq) % (size_t)tp->nrails);

		ret = fi_writedata(tp->rails[rail].ep, (char *)x->buf + off, n,
				   x->mr ? x->mr->desc : NULL,
				   gc_imm(x->ctrl.chk, x->ctrl.slot, x->seg_posted),
				   peer_addr(c, rail, x->peer), x->ctrl.addr + off, x->ctrl.key,
				   &x->c_write);
		if (ret == -FI_EAGAIN)
			break;
		if (ret)
			return gc_fi_err((int)ret, "fi_writedata");
		x->seg_posted++;
		x->inflight++;
	}
	return GCOLL_SUCCESS;
}

gcoll_result_t gc_xfer_start(struct gcoll_comm *c, struct gc_xfer *x)
{
	x->state = GX_ACTIVE;
	x->rail = (int)(x->seq % (uint32_t)c->tp->nrails);
	x->rndv = x->len > c->eager_max;
	x->c_main.x = x;
	x->c_write.x = x;
	x->comm = c;
	return gc_xfer_advance(c, x);
}

void gc_xfer_cancel(struct gcoll_comm *c, struct gc_xfer *x)
{
	struct gc_transport *tp = c->tp;

	slot_free(tp, x);
	if (x->inflight && x->posted &&
	    (x->c_main.type == GC_CTX_EAGER_RECV || x->c_main.type == GC_CTX_CTRL_RECV))
		fi_cancel(&tp->rails[x->rail].ep->fid, &x->c_main);
	xfer_fail(x, GCOLL_ERR_ABORTED);
}

bool gc_xfer_release(struct gc_transport *tp, struct gc_xfer *x)
{
	slot_free(tp, x);
	mr_put(x);
	return x->inflight == 0;
}

void gc_tp_adopt_zombie(struct gc_transport *tp, struct gc_xfer *x)
{
	x->comm = NULL;
	x->znext = tp->zombies;
	tp->zombies = x;
}

/* ------------------------------------------------------------ progress */

static void ctx_finish(struct gc_transport *tp, struct gc_xfer *x)
{
	x->inflight--;
	if (!x->comm && x->inflight == 0)
		free_zombie(tp, x);
}

static void handle_cq_data(struct gc_transport *tp, uint64_t data)
{
	uint32_t imm = (uint32_t)data, slot = (imm >> 8) & 0xffff;
	struct gc_xfer *x = tp->slots[slot];

	/* the slot's owner must be live and the check byte its own: a write
	 * for an aborted transfer, for a slot since reused, or for another
	 * communicator is counted and dropped */
	if (!x || !x->comm || x->chk != imm >> 24) {
		tp->stray_writes++;
		GC_TRACE("stray rendezvous write imm 0x%08x dropped", imm);
		return;
	}
	x->seg_done++;
	if (x->seg_done >= x->nseg) {
		slot_free(tp, x);
		xfer_done(x);
	}
}

static void handle_entry(struct gc_transport *tp, struct fi_cq_data_entry *e)
{
	struct gc_ctx *ctx = e->op_context;
	struct gc_xfer *x;

	if (e->flags & FI_REMOTE_CQ_DATA) {
		handle_cq_data(tp, e->data);
		if (tp->rx_cq_data && ctx && ctx->type == GC_CTX_RXPOOL) {
			struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

			tp->rails[b->rail].pool_posted--;
			pool_repost(tp, b);
		}
		return;
	}
	if (!ctx)
		return;
	if (ctx->type == GC_CTX_RXPOOL) {   /* an unexpected untagged message */
		struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

		tp->rails[b->rail].pool_posted--;
		pool_repost(tp, b);
		return;
	}
	x = ctx->x;
	switch (ctx->type) {
	case GC_CTX_EAGER_SEND:
		xfer_done(x);
		break;
	case GC_CTX_EAGER_RECV:
		if (e->len != x->len)
			xfer_fail(x, GCOLL_ERR_INVALID_USAGE);
		else
			xfer_done(x);
		break;
	case GC_CTX_CTRL_RECV:
		x->ctrl_ready = true;
		break;
	case GC_CTX_CTRL_SEND:
		break;
	case GC_CTX_WRITE:
		x->seg_done++;
		if (x->seg_done >= x->nseg)
			xfer_done(x);
		break;
	default:
		return;
	}
	ctx_finish(tp, x);
}

static void handle_error(struct gc_transport *tp, struct fid_cq *cq)
{
	struct fi_cq_err_entry err = { 0 };
	struct gc_ctx *ctx;

	if (fi_cq_readerr(cq, &err, 0) != 1)
		return;
	ctx = err.op_context;
	if (ctx && ctx->type == GC_CTX_RXPOOL) {
		struct gc_rxbuf *b = (struct gc_rxbuf *)ctx;

		/* a pool entry ends in error when an unexpected untagged
		 * message lands in it (truncated to 0 bytes): it is as
		 * consumed as by a write and must go back, or a peer sending
		 * GC_RXPOOL such messages drains the pool.  Cancelled means
		 * the endpoint is closing. */
		tp->rails[b->rail].pool_posted--;
		if (err.err != FI_ECANCELED) {
			GC_INFO("transport: rail %d: pool receive ended with %s; reposted",
				b->rail, fi_strerror(err.err));
			pool_repost(tp, b);
		}
		return;
	}
	if (!ctx) {
		if (err.err != FI_ECANCELED)
			gc_log(GC_LOG_ERR, "transport: completion error without owner: %s",
			       fi_strerror(err.err));
		return;
	}
	if (err.err == FI_ECANCELED) {
		xfer_fail(ctx->x, GCOLL_ERR_ABORTED);
	} else if (err.err == FI_ETRUNC) {
		xfer_fail(ctx->x, GCOLL_ERR_INVALID_USAGE);
		gc_log(GC_LOG_ERR, "transport: message from rank %d truncated (sizes differ)",
		       ctx->x->peer);
	} else {
		gc_log(GC_LOG_ERR, "transport: operation with rank %d failed: %s (prov %d)",
		       ctx->x->peer, fi_strerror(err.err), err.prov_errno);
		xfer_fail(ctx->x, GCOLL_ERR_REMOTE);
	}
	ctx_finish(tp, ctx->x);
}

int gc_tp_progress(struct gc_transport *tp)
{
	struct fi_cq_data_entry e[16];
	int total = 0;

	for (int i = 0; i < tp->nrails; i++) {
		if (tp->rails[i].pool_retry)
			pool_retry(tp, &tp->rails[i]);
		for (;;) {
			ssize_t n = fi_cq_read(tp->rails[i].cq, e, 16);

			if (n == -FI_EAVAIL) {
				handle_error(tp, tp->rails[i].cq);
				total++;
				continue;
			}
			if (n <= 0)
				break;
			for (ssize_t k = 0; k < n; k++)
				handle_entry(tp, &e[k]);
			total += (int)n;
			if (n < 16)
				break;
		}
	}
	return total;
}

void gc_mr_pin(struct gc_transport *tp, struct gc_mr *m)
{
	m->pinned = 1;
	m->next = tp->cache;
	tp->cache = m;
	tp->cache_n++;
}
