/* SPDX-License-Identifier: MIT */
/*
 * libfabric transport: RDM endpoints (one per rail), their pools of
 * receives, the dma-buf probe, peer addresses and the connection
 * handshake.  The registration cache is in mr.c; eager tagged messages,
 * receiver-driven rendezvous writes and completions in xfer.c.
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
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>

#include "gc_transport.h"

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
 * gc_tp_progress() (xfer.c); any other failure breaks the transport for good, and
 * every communicator on it fails with GCOLL_ERR_FABRIC (see gc_progress_all()
 * in sched.c) instead of waiting for writes that cannot complete. */
void gc_rail_repost(struct gc_transport *tp, struct gc_rxbuf *b)
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

void gc_rail_retry(struct gc_transport *tp, struct gc_rail *r)
{
	for (int k = 0; k < GC_RXPOOL && r->pool_retry && !tp->fatal; k++)
		if (r->pool_retry & (1ull << k))
			gc_rail_repost(tp, &r->pool[k]);
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
	ret = gc_mr_reg_dmabuf(tp, fd, 0, va, (size_t)pg,
			       FI_WRITE | FI_REMOTE_WRITE | FI_SEND | FI_RECV, &mr);
	if (ret)
		goto out;
	if (tp->mr_local && gc_mr_reg_host(tp, src, sizeof(src), FI_WRITE | FI_SEND, &smr))
		goto out;
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

/* Open up to nrails endpoints (at least one; fewer if the provider runs
 * out) with their pools of remote-CQ-data receives posted.  tp->nrails
 * counts the rails to close, also on failure. */
static gcoll_result_t rails_open(struct gc_transport *tp, int nrails)
{
	int ret;

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
			return gc_fi_err(ret, r->ep ? "endpoint setup" : "fi_endpoint");
		}
		if (i == 0)
			tp->addrlen = alen;
		else if (alen != tp->addrlen) {
			tp->nrails = i + 1;
			return gc_err(GCOLL_ERR_FABRIC, "transport: rails have different address sizes");
		}
		tp->nrails = i + 1;
		if (tp->rx_cq_data) {
			for (int k = 0; k < GC_RXPOOL; k++) {
				r->pool[k].type = GC_CTX_RXPOOL;
				r->pool[k].rail = i;
				ret = post_pool(r, &r->pool[k]);
				if (ret)
					return gc_fi_err(ret, "fi_recv (remote CQ data pool)");
			}
		}
	}
	return GCOLL_SUCCESS;
}

/*
 * Which instance of RDMA device @name user space is talking to: the inode
 * number of its uverbs device's sysfs directory, 0 if it has none.  The
 * RDMA core deletes that device before it flushes the users' queues when
 * the device goes (reset or removal), and a device registered anew gets
 * a new one, so a failure that a reset caused sees another number.
 */
static unsigned long rdma_dev_instance(const char *name)
{
	char path[300], ibdev[64];
	unsigned long ino = 0;
	struct dirent *de;
	struct stat st;
	FILE *f;
	DIR *d;

	if (!name || !(d = opendir("/sys/class/infiniband_verbs")))
		return 0;
	while (!ino && (de = readdir(d))) {
		if (strncmp(de->d_name, "uverbs", 6))
			continue;
		snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s/ibdev", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(ibdev, sizeof(ibdev), f)) {
			ibdev[strcspn(ibdev, "\n")] = 0;
			snprintf(path, sizeof(path), "/sys/class/infiniband_verbs/%s", de->d_name);
			if (!strcmp(ibdev, name) && !stat(path, &st))
				ino = (unsigned long)st.st_ino;
		}
		fclose(f);
	}
	closedir(d);
	return ino;
}

void gc_tp_explain_failure(struct gc_transport *tp, int rank, gcoll_result_t rc)
{
	const char *dev = tp->info->domain_attr->name;

	if (!tp->dev_ino || rdma_dev_instance(dev) == tp->dev_ino)
		return;
	gc_err(rc, "device reset: %s, the RDMA device of rank %d, was reset (devlink dev reload) or removed under the communicator, and its memory registrations and connections with it; destroy the communicator, and create a new one once the device is back",
	       dev, rank);
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
	rc = rails_open(tp, nrails);
	if (rc != GCOLL_SUCCESS)
		goto fail;
	/* verbs hands FI_MR_DMABUF to the kernel (ibv_reg_dmabuf_mr), which
	 * imports the dma-buf or refuses it; a refusal falls back per
	 * registration (gcoll_mem_register_dmabuf).  Other providers may
	 * accept the flag and ignore it: probe them. */
	if (gc_prov_is_verbs(tp->prov_name)) {
		tp->dmabuf_native = gc_env_u64("GCOLL_DMABUF", 1) != 0;
		tp->dev_ino = rdma_dev_instance(info->domain_attr->name);
	} else {
		tp->dmabuf_native = probe_dmabuf(tp);
	}
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
 * their own, and the first messages hang.  Here rank r sends a hello to
 * every higher rank and waits for one from every lower rank, so only the
 * lower rank of a pair ever starts a connection.
 *
 * A hello is taken only from the rank it names: the receive is directed
 * to that rank's address (FI_DIRECTED_RECV), and the hello carries a token
 * only the job's ranks can make (gc_hello_token() of the key rank 0 handed
 * out over the bootstrap).  A hello from anyone else, or with a wrong
 * token, is counted in stray_hellos and the receive posted again: another
 * process cannot stand in for a rank whose connection is still to come. */
uint64_t gc_hello_token(uint64_t key, int from, int to, int rail)
{
	uint64_t h = key ^ ((uint64_t)(uint32_t)from << 32 | (uint32_t)to);

	for (int round = 0; round < 2; round++) {
		h ^= (uint64_t)rail << 56 ^ (round ? key >> 17 | key << 47 : 0);
		h *= 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
		h *= 0x94d049bb133111ebull;
		h ^= h >> 29;
	}
	return h;
}

static gcoll_result_t hello_setup(struct gc_transport *tp)
{
	size_t nh = (size_t)tp->nrails * (size_t)tp->npeers;

	if (tp->hellos)
		return GCOLL_SUCCESS;
	tp->hellos = calloc(nh, sizeof(*tp->hellos));
	if (!tp->hellos)
		return GCOLL_ERR_NOMEM;
	for (size_t k = 0; k < nh; k++)
		tp->hellos[k].type = GC_CTX_HELLO;
	if (tp->mr_local && gc_mr_reg_access(tp, tp->hellos, nh * sizeof(*tp->hellos), -1, 0,
					     FI_SEND | FI_RECV, &tp->hello_mr)) {
		free(tp->hellos);
		tp->hellos = NULL;
		return GCOLL_ERR_FABRIC;
	}
	return GCOLL_SUCCESS;
}

/* Post hello h of rail i: to peer p above us, or the receive of p's. */
static ssize_t hello_post(struct gc_transport *tp, int i, int p, struct gc_conn_hello *h)
{
	struct gc_rail *r = &tp->rails[i];
	void *desc = tp->hello_mr ? tp->hello_mr->desc : NULL;
	int me = tp->myrank;
	ssize_t ret;

	if (p > me) {
		h->token = gc_hello_token(tp->hello_key, me, p, i);
		ret = fi_tsend(r->ep, &h->token, sizeof(h->token), desc, r->peers[p],
			       gc_tag(GC_TAG_HELLO, 0, me, 0), h);
	} else {
		h->token = 0;
		ret = fi_trecv(r->ep, &h->token, sizeof(h->token), desc,
			       tp->info->caps & FI_DIRECTED_RECV ? r->peers[p] : FI_ADDR_UNSPEC,
			       gc_tag(GC_TAG_HELLO, 0, p, 0), 0, h);
	}
	h->posted = !ret;
	return ret;
}

/* The hello of a completion (entry or error), or NULL. */
static struct gc_conn_hello *hello_of(struct gc_transport *tp, void *ctx, int *i, int *p)
{
	size_t nh = (size_t)tp->nrails * (size_t)tp->npeers;
	uintptr_t a = (uintptr_t)ctx, lo = (uintptr_t)tp->hellos;
	size_t k;

	if (a < lo || a >= lo + nh * sizeof(*tp->hellos))
		return NULL;
	k = (a - lo) / sizeof(*tp->hellos);
	*i = (int)(k / (size_t)tp->npeers);
	*p = (int)(k % (size_t)tp->npeers);
	return &tp->hellos[k];
}

/* A hello received from the wrong process, or with the wrong token: drop
 * it and post the receive again. */
static void hello_stray(struct gc_transport *tp, struct gc_conn_hello *h, int i, int p,
			const char *why)
{
	tp->stray_hellos++;
	h->posted = false;
	GC_INFO("transport: rail %d: connection hello claiming rank %d dropped (%s)", i, p, why);
}

/* Read up to 8 completions of rail i; -1 on an error that is not a hello's. */
static int hello_poll(struct gc_transport *tp, int i)
{
	struct gc_rail *r = &tp->rails[i];
	struct fi_cq_data_entry e[8];
	struct gc_conn_hello *h;
	ssize_t n = fi_cq_read(r->cq, e, 8);
	int hi, p;

	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err = { 0 };

		fi_cq_readerr(r->cq, &err, 0);
		h = hello_of(tp, err.op_context, &hi, &p);
		if (h && p < tp->myrank && err.err == FI_ETRUNC) {
			hello_stray(tp, h, hi, p, "longer than a hello");
			return 0;
		}
		gc_err(GCOLL_ERR_FABRIC, "transport: rank %d connecting rail %d%s: %s", tp->myrank,
		       i, h ? (p > tp->myrank ? " (hello sent)" : " (hello received)") : "",
		       fi_strerror(err.err));
		return -1;
	}
	for (ssize_t k = 0; k < n; k++) {
		h = hello_of(tp, e[k].op_context, &hi, &p);
		if (!h)
			continue;
		if (p > tp->myrank)
			h->done = true;
		else if (e[k].len != sizeof(h->token) ||
			 h->token != gc_hello_token(tp->hello_key, p, tp->myrank, hi))
			hello_stray(tp, h, hi, p, "wrong token");
		else
			h->done = true;
	}
	return 0;
}

gcoll_result_t gc_tp_connect_all(struct gc_transport *tp, uint64_t timeout_ms)
{
	int n = tp->npeers, me = tp->myrank, want = (n - 1) * tp->nrails, got = 0;
	uint64_t end = gc_now_ms() + timeout_ms;
	gcoll_result_t rc = hello_setup(tp);

	if (rc)
		return gc_err(rc, "transport: rank %d: cannot set up its %d connection hellos",
			      me, want);
	while (got < want) {
		for (int i = 0; i < tp->nrails; i++) {
			for (int p = 0; p < n; p++) {
				struct gc_conn_hello *h = &tp->hellos[(size_t)i * (size_t)n + (size_t)p];
				ssize_t ret;

				if (p == me || h->posted || h->done)
					continue;
				ret = hello_post(tp, i, p, h);
				if (ret && ret != -FI_EAGAIN)
					return gc_fi_err((int)ret, p > me ? "fi_tsend (connect)"
									  : "fi_trecv (connect)");
			}
			if (hello_poll(tp, i))
				return GCOLL_ERR_FABRIC;
		}
		got = 0;
		for (size_t k = 0; k < (size_t)n * (size_t)tp->nrails; k++)
			got += tp->hellos[k].done;
		if (got < want && gc_now_ms() > end)
			return gc_err(GCOLL_ERR_TIMEOUT,
				      "transport: rank %d connected %d of its %d connections within %llu ms (%llu hellos from unexpected sources dropped); are all ranks up, on the same fabric?",
				      me, got, want, (unsigned long long)timeout_ms,
				      (unsigned long long)tp->stray_hellos);
	}
	return GCOLL_SUCCESS;
}

void gc_tp_free_zombie(struct gc_transport *tp, struct gc_zombie *z)
{
	struct gc_zombie **pp;

	for (pp = &tp->zombies; *pp; pp = &(*pp)->next)
		if (*pp == z) {
			*pp = z->next;
			break;
		}
	free(z);
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
		gc_tp_free_zombie(tp, tp->zombies);
	while (tp->cache) {
		struct gc_mr *m = tp->cache;

		tp->cache = m->next;
		gc_mr_free(tp, m);
	}
	/* the hellos' buffers: only now that no endpoint can write them */
	gc_mr_free(tp, tp->hello_mr);
	free(tp->hellos);
	if (tp->domain)
		fi_close(&tp->domain->fid);
	if (tp->fabric)
		fi_close(&tp->fabric->fid);
	fi_freeinfo(tp->info);
	fi_freeinfo(tp->ep_info);
	free(tp->slots);
	free(tp->slot_gen);
	free(tp);
}
