/* SPDX-License-Identifier: MIT */
/*
 * TCP bootstrap.  The unique id carries the root's IPv4 address, port, a
 * magic, the library version and a random nonce.  The process that created
 * the id runs a small rendezvous server (a detached thread): every rank
 * connects, says hello (magic, version, nonce, rank, nranks); once all ranks
 * are in, the server answers OK - or the same error to every rank if they
 * disagree - and then serves allgather rounds used to exchange host ids and
 * fabric addresses.  Every step is bounded by the bootstrap timeout.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "gc_bootstrap.h"

#define GC_UID_MAGIC 0x47434944u   /* "GCID" */
#define GC_HELLO_MAGIC 0x4743484cu /* "GCHL" */

struct gc_uid {
	uint32_t magic;
	uint32_t version;
	uint32_t ip;        /* network order */
	uint16_t port;      /* network order */
	uint16_t pad;
	uint64_t nonce;
	uint64_t timeout_ms;
};

struct gc_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t nonce;
	int32_t rank;
	int32_t nranks;
};

struct gc_boot {
	int fd;
	int rank, nranks;
	uint64_t timeout_ms;
};

_Static_assert(sizeof(struct gc_uid) <= GCOLL_UNIQUE_ID_BYTES, "uid too big");

static uint64_t boot_timeout(void)
{
	return gc_env_u64("GCOLL_BOOTSTRAP_TIMEOUT_MS", 60000);
}

/* Transfer exactly len bytes before the deadline.  0 or -errno. */
static int io_full(int fd, void *buf, size_t len, uint64_t deadline, bool wr)
{
	char *p = buf;

	while (len) {
		struct pollfd pfd = { .fd = fd, .events = wr ? POLLOUT : POLLIN };
		uint64_t now = gc_now_ms();
		ssize_t n;
		int r;

		if (now >= deadline)
			return -ETIMEDOUT;
		r = poll(&pfd, 1, (int)(deadline - now > 1000 ? 1000 : deadline - now));
		if (r < 0 && errno != EINTR)
			return -errno;
		if (r <= 0)
			continue;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---------------------------------------------------------- server */

struct srv {
	int lfd;
	uint64_t nonce;
	uint64_t timeout_ms;
	int n;              /* expected ranks (from the first hello) */
	int *fds;           /* by rank */
	/* the starter's flag: set once the thread is up (safe to fork).  It
	 * lives on the starter's stack, not in the srv, which this thread may
	 * free (a short bootstrap timeout) before the starter looks again */
	int *ready;
};

static void srv_reply_all(struct srv *s, int32_t status)
{
	int32_t msg[2] = { status, 0 };

	for (int i = 0; i < s->n; i++)
		if (s->fds[i] >= 0)
			io_full(s->fds[i], msg, sizeof(msg), gc_now_ms() + 2000, true);
}

/* Hello handling state of the accept phase. */
struct srv_acc {
	int connected, err, seen;
};

/* A complete hello on fd: validate it, keep fd as that rank's, or answer
 * the error and close.  Returns -1 on allocation failure. */
static int srv_hello(struct srv *s, struct srv_acc *a, int fd, const struct gc_hello *h)
{
	int e = 0;

	a->seen++;
	if (h->magic != GC_HELLO_MAGIC || h->nonce != s->nonce) {
		e = GCOLL_ERR_BOOTSTRAP;     /* not ours: do not count */
		a->seen--;
	} else if (h->version != GCOLL_VERSION_CODE) {
		e = GCOLL_ERR_VERSION;
	} else if (h->nranks <= 0 || h->nranks > GC_MAX_RANKS ||
		   (s->n && h->nranks != s->n)) {
		e = GCOLL_ERR_MISMATCH;
	}
	if (!s->n && h->nranks > 0 && h->nranks <= GC_MAX_RANKS && e != GCOLL_ERR_BOOTSTRAP) {
		s->n = h->nranks;
		s->fds = malloc(sizeof(int) * (size_t)s->n);
		if (!s->fds) {
			close(fd);
			return -1;
		}
		for (int i = 0; i < s->n; i++)
			s->fds[i] = -1;
	}
	if (!e && (h->rank < 0 || h->rank >= s->n || s->fds[h->rank] >= 0))
		e = GCOLL_ERR_MISMATCH;
	if (e || a->err) {
		int32_t msg[2] = { e ? e : a->err, 0 };

		io_full(fd, msg, sizeof(msg), gc_now_ms() + 2000, true);
		close(fd);
		if (e && e != GCOLL_ERR_BOOTSTRAP && !a->err) {
			a->err = e;
			srv_reply_all(s, a->err);  /* everyone fails the same way */
		}
		return 0;
	}
	s->fds[h->rank] = fd;
	a->connected++;
	return 0;
}

/* A connection that has not said hello yet. */
struct srv_pend {
	int fd;
	size_t got;
	struct gc_hello h;
	uint64_t deadline;
};

/* Connections that have not said hello yet are kept up to SRV_HELLO_MS
 * each; when SRV_MAX_PENDING of them are open, a new one evicts the oldest.
 * A rank says hello as soon as it is connected, so idle connections cannot
 * lock it out: its hello is read long before 255 newer connections have
 * pushed it out, and a rank that is evicted anyway connects again. */
#define SRV_MAX_PENDING 256
#define SRV_HELLO_MS 10000

/* Read what a pending connection has sent, without blocking.  Returns 1
 * when the hello is complete, 0 to keep waiting, -1 to drop it. */
static int pend_read(struct srv_pend *p)
{
	ssize_t n = recv(p->fd, (char *)&p->h + p->got, sizeof(p->h) - p->got, MSG_DONTWAIT);

	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	if (n == 0)
		return -1;
	p->got += (size_t)n;
	return p->got == sizeof(p->h);
}

/* The table of pending connections is full: close the one accepted first. */
static void pend_evict(struct srv_pend *pend, int *np, uint64_t *evicted)
{
	int old = 0;

	for (int i = 1; i < *np; i++)
		if (pend[i].deadline < pend[old].deadline)
			old = i;
	close(pend[old].fd);
	pend[old] = pend[--*np];
	if (!(*evicted)++)
		GC_INFO("bootstrap: %d connections without a hello; evicting the oldest for each new one",
			SRV_MAX_PENDING);
}

/* Accept every rank's connection and hello.  Connections are read without
 * blocking, each with its own deadline, so a client that connects and says
 * nothing (a port scanner, a stuck process) delays nobody else; a flood of
 * them evicts its own oldest members, not the ranks. */
static void srv_accept_all(struct srv *s, struct srv_acc *a, uint64_t deadline)
{
	struct srv_pend *pend = calloc(SRV_MAX_PENDING, sizeof(*pend));
	struct pollfd *pfd = calloc(SRV_MAX_PENDING + 1, sizeof(*pfd));
	uint64_t evicted = 0;
	int np = 0;

	if (!pend || !pfd)
		goto out;
	while ((s->n == 0 || a->seen < s->n) && gc_now_ms() < deadline) {
		uint64_t now = gc_now_ms();
		int r;

		pfd[0] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		for (int i = 0; i < np; i++)
			pfd[i + 1] = (struct pollfd){ .fd = pend[i].fd, .events = POLLIN };
		r = poll(pfd, (nfds_t)np + 1, 100);
		if (r < 0 && errno != EINTR)
			break;
		now = gc_now_ms();
		for (int i = np - 1; i >= 0; i--) {
			int st = pfd[i + 1].revents ? pend_read(&pend[i]) : 0;

			if (st == 0 && now < pend[i].deadline)
				continue;
			if (st == 1) {
				if (srv_hello(s, a, pend[i].fd, &pend[i].h))
					goto out;
			} else {
				close(pend[i].fd);   /* silent, gone or short */
			}
			pend[i] = pend[--np];
		}
		if (pfd[0].revents & POLLIN) {
			int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

			if (fd >= 0 && np == SRV_MAX_PENDING)
				pend_evict(pend, &np, &evicted);
			if (fd >= 0)
				pend[np++] = (struct srv_pend){ .fd = fd,
					.deadline = now + SRV_HELLO_MS };
		}
	}
out:
	if (evicted)
		GC_INFO("bootstrap: %llu connections without a hello evicted",
			(unsigned long long)evicted);
	for (int i = 0; i < np; i++)
		close(pend[i].fd);
	free(pend);
	free(pfd);
}

/* Between rounds: wait, without a deadline, until some rank sends.  0
 * when a round begins; -1 when a rank closed its socket or failed, so the
 * others' next round fails at once instead of at their timeout. */
static int srv_idle(struct srv *s)
{
	struct pollfd *p;
	int ret = -1;

	if (s->n <= 0)
		return -1;
	p = calloc((size_t)s->n, sizeof(*p));
	if (!p)
		return -1;
	for (int i = 0; i < s->n; i++)
		p[i] = (struct pollfd){ .fd = s->fds[i], .events = POLLIN };
	for (;;) {
		int r = poll(p, (nfds_t)s->n, -1);
		bool data = false;
		char c;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		for (int i = 0; i < s->n; i++) {
			if (!p[i].revents)
				continue;
			if (recv(p[i].fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) != 1)
				goto out;
			data = true;
		}
		if (data) {
			ret = 0;
			break;
		}
	}
out:
	free(p);
	return ret;
}

static void *srv_main(void *arg)
{
	struct srv *s = arg;
	struct srv_acc a = { 0 };
	char *buf = NULL;
	int *ready = s->ready;

	s->ready = NULL;
	__atomic_store_n(ready, 1, __ATOMIC_RELEASE);

	srv_accept_all(s, &a, gc_now_ms() + s->timeout_ms);
	if (a.err || a.connected != s->n || !s->n) {
		if (!a.err && s->fds)
			srv_reply_all(s, GCOLL_ERR_BOOTSTRAP);
		goto out;
	}
	srv_reply_all(s, GCOLL_SUCCESS);

	/* allgather rounds until a rank disconnects: the communicator's
	 * init, then its last destroy (gc_boot_quiesce()), however long it
	 * lives in between */
	for (;;) {
		uint64_t len = 0, l;
		int32_t st[2] = { 0, 0 };
		uint64_t dl;

		if (srv_idle(s))
			goto out;
		dl = gc_now_ms() + s->timeout_ms;
		for (int i = 0; i < s->n; i++) {
			if (io_full(s->fds[i], &l, sizeof(l), dl, false))
				goto out;
			if (i == 0) {
				len = l;
				if (len > (64u << 20) / (uint64_t)s->n)
					goto out;
				free(buf);
				buf = malloc(len * (uint64_t)s->n + 1);
				if (!buf)
					goto out;
			} else if (l != len) {
				goto out;
			}
			if (io_full(s->fds[i], buf + len * (uint64_t)i, len, dl, false))
				goto out;
		}
		for (int i = 0; i < s->n; i++) {
			if (io_full(s->fds[i], st, sizeof(st), dl, true) ||
			    io_full(s->fds[i], buf, len * (uint64_t)s->n, dl, true))
				goto out;
		}
	}
out:
	free(buf);
	if (s->fds)
		for (int i = 0; i < s->n; i++)
			if (s->fds[i] >= 0)
				close(s->fds[i]);
	free(s->fds);
	close(s->lfd);
	free(s);
	return NULL;
}

static gcoll_result_t srv_start(uint16_t port, uint64_t nonce, uint16_t *bound)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_ANY) };
	socklen_t sl = sizeof(sa);
	pthread_attr_t attr;
	pthread_t th;
	struct srv *s;
	int one = 1, fd, ready = 0;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return gc_err(GCOLL_ERR_SYSTEM, "bootstrap: socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 1024) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		int e = errno;

		close(fd);
		return gc_err(GCOLL_ERR_BOOTSTRAP, "bootstrap: cannot listen on port %u: %s",
			      port, strerror(e));
	}
	*bound = ntohs(sa.sin_port);
	s = calloc(1, sizeof(*s));
	if (!s) {
		close(fd);
		return GCOLL_ERR_NOMEM;
	}
	s->lfd = fd;
	s->nonce = nonce;
	s->timeout_ms = boot_timeout();
	s->ready = &ready;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &attr, srv_main, s)) {
		pthread_attr_destroy(&attr);
		close(fd);
		free(s);
		return gc_err(GCOLL_ERR_SYSTEM, "bootstrap: cannot start server thread");
	}
	pthread_attr_destroy(&attr);
	/* do not return while the new thread may still hold allocator or
	 * thread-start locks: callers typically fork() right after this */
	while (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
		usleep(100);
	usleep(1000);
	return GCOLL_SUCCESS;
}

static uint32_t local_ip(void)
{
	const char *e = getenv("GCOLL_BOOTSTRAP_ADDR");
	struct ifaddrs *ifa, *i;
	uint32_t ip = htonl(INADDR_LOOPBACK);
	struct in_addr a;

	if (e && inet_pton(AF_INET, e, &a) == 1)
		return a.s_addr;
	if (getifaddrs(&ifa))
		return ip;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		break;
	}
	freeifaddrs(ifa);
	return ip;
}

GC_API gcoll_result_t gcoll_get_unique_id(gcoll_unique_id *id)
{
	struct gc_uid u = { .magic = GC_UID_MAGIC, .version = GCOLL_VERSION_CODE };
	uint16_t port;
	gcoll_result_t r;

	gc_log_init();
	if (!id)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_get_unique_id: id is NULL");
	/* the nonce is what keeps other processes out of the rendezvous: no
	 * guessable fallback (pid and time) if the kernel cannot give one */
	for (;;) {
		ssize_t n = getrandom(&u.nonce, sizeof(u.nonce), 0);

		if (n == (ssize_t)sizeof(u.nonce))
			break;
		if (n < 0 && errno == EINTR)
			continue;
		return gc_err(GCOLL_ERR_SYSTEM,
			      "gcoll_get_unique_id: getrandom failed (%s); refusing to make an id with a predictable nonce",
			      n < 0 ? strerror(errno) : "short read");
	}
	r = srv_start(0, u.nonce, &port);
	if (r)
		return r;
	u.ip = local_ip();
	u.port = htons(port);
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &u, sizeof(u));
	return GCOLL_SUCCESS;
}

/* The nonce of an id built from an address.  Every process builds the id
 * on its own, so the nonce cannot be random: without a shared secret it is
 * a function of the port alone and only keeps apart jobs on different
 * ports.  GCOLL_BOOTSTRAP_SECRET, set to the same string on every rank (the
 * launcher can pass a random one), makes it unpredictable to outsiders. */
static uint64_t addr_nonce(int port)
{
	const char *secret = getenv("GCOLL_BOOTSTRAP_SECRET");
	uint64_t h = 0x67636f6c6cull ^ ((uint64_t)port << 32);

	if (!secret || !*secret)
		return h;
	for (const unsigned char *p = (const unsigned char *)secret; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h ^= h >> 31;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 29);
}

GC_API gcoll_result_t gcoll_unique_id_from_addr(gcoll_unique_id *id, const char *host,
						int port, int serve)
{
	struct gc_uid u = { .magic = GC_UID_MAGIC, .version = GCOLL_VERSION_CODE };
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai;
	uint16_t bound;

	gc_log_init();
	if (!id)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_unique_id_from_addr: id is NULL");
	if (!host)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT, "gcoll_unique_id_from_addr: host is NULL");
	if (port <= 0 || port > 65535)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT,
			      "gcoll_unique_id_from_addr: port %d out of range", port);
	if (getaddrinfo(host, NULL, &hints, &ai) || !ai)
		return gc_err(GCOLL_ERR_BOOTSTRAP, "bootstrap: cannot resolve host '%s'", host);
	u.ip = ((struct sockaddr_in *)ai->ai_addr)->sin_addr.s_addr;
	freeaddrinfo(ai);
	u.port = htons((uint16_t)port);
	u.nonce = addr_nonce(port);
	if (serve) {
		gcoll_result_t r = srv_start((uint16_t)port, u.nonce, &bound);

		if (r)
			return r;
	}
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, &u, sizeof(u));
	return GCOLL_SUCCESS;
}

/* Connect to the root, with retries until the deadline. */
static gcoll_result_t boot_dial(const struct sockaddr_in *sa, int rank, uint64_t deadline,
				int *fdp)
{
	int one = 1;

	for (;;) {
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0)
			return gc_err(GCOLL_ERR_SYSTEM, "bootstrap: rank %d: socket: %s", rank,
				      strerror(errno));
		if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa))) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			*fdp = fd;
			return GCOLL_SUCCESS;
		}
		close(fd);
		if (gc_now_ms() >= deadline)
			return gc_err(GCOLL_ERR_BOOTSTRAP,
				      "bootstrap: rank %d cannot reach root %s:%u: %s", rank,
				      inet_ntoa(sa->sin_addr), ntohs(sa->sin_port), strerror(errno));
		usleep(20000);
	}
}

/* Say hello and wait for the root's answer (st).  A root that closes the
 * connection without an answer has dropped it before reading the hello
 * (evicted among idle connections): connect again until the deadline. */
static gcoll_result_t boot_hello(const struct sockaddr_in *sa, const struct gc_hello *h,
				 uint64_t deadline, uint64_t timeout_ms, int32_t st[2], int *fdp)
{
	for (;;) {
		gcoll_result_t rc = boot_dial(sa, h->rank, deadline, fdp);
		int r;

		if (rc)
			return rc;
		r = io_full(*fdp, (void *)h, sizeof(*h), deadline, true);
		if (!r)
			r = io_full(*fdp, st, sizeof(int32_t) * 2, deadline, false);
		if (!r)
			return GCOLL_SUCCESS;
		close(*fdp);
		if ((r != -ECONNRESET && r != -EPIPE) || gc_now_ms() >= deadline)
			return gc_err(GCOLL_ERR_BOOTSTRAP,
				      "bootstrap: rank %d: no answer from root: %s (not all %d ranks arrived in %llu ms?)",
				      h->rank, strerror(-r), h->nranks,
				      (unsigned long long)timeout_ms);
		GC_INFO("bootstrap: rank %d: root closed the connection before answering; connecting again",
			h->rank);
		usleep(20000);
	}
}

gcoll_result_t gc_boot_connect(const gcoll_unique_id *id, int rank, int nranks,
			       uint64_t timeout_ms, struct gc_boot **out)
{
	struct gc_uid u;
	struct gc_hello h = { .magic = GC_HELLO_MAGIC, .rank = rank, .nranks = nranks };
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint64_t deadline = gc_now_ms() + timeout_ms;
	int32_t st[2];
	struct gc_boot *b;
	gcoll_result_t rc;
	int fd = -1;

	memcpy(&u, id->internal, sizeof(u));
	if (u.magic != GC_UID_MAGIC)
		return gc_err(GCOLL_ERR_INVALID_ARGUMENT,
			      "gcoll_comm_init_rank: id is not a gcoll unique id");
	if (u.version != GCOLL_VERSION_CODE)
		return gc_err(GCOLL_ERR_VERSION,
			      "bootstrap: unique id made by gcoll version %u, this is %u",
			      u.version, GCOLL_VERSION_CODE);
	h.nonce = u.nonce;
	h.version = (uint32_t)gc_env_u64("GCOLL_TEST_FAKE_VERSION", GCOLL_VERSION_CODE);
	sa.sin_addr.s_addr = u.ip;
	sa.sin_port = u.port;
	rc = boot_hello(&sa, &h, deadline, timeout_ms, st, &fd);
	if (rc)
		return rc;
	if (st[0] != GCOLL_SUCCESS) {
		close(fd);
		if (st[0] == GCOLL_ERR_VERSION)
			return gc_err(GCOLL_ERR_VERSION,
				      "bootstrap: rank %d: ranks run different gcoll versions", rank);
		if (st[0] == GCOLL_ERR_MISMATCH)
			return gc_err(GCOLL_ERR_MISMATCH,
				      "bootstrap: rank %d: ranks disagree on nranks (this rank says %d) or a rank number is used twice",
				      rank, nranks);
		return gc_err(GCOLL_ERR_BOOTSTRAP, "bootstrap: rank %d: root refused (code %d)",
			      rank, st[0]);
	}
	b = calloc(1, sizeof(*b));
	if (!b) {
		close(fd);
		return GCOLL_ERR_NOMEM;
	}
	b->fd = fd;
	b->rank = rank;
	b->nranks = nranks;
	b->timeout_ms = timeout_ms;
	*out = b;
	return GCOLL_SUCCESS;
}

gcoll_result_t gc_boot_allgather(struct gc_boot *b, const void *in, size_t len, void *out)
{
	uint64_t l = len, dl = gc_now_ms() + b->timeout_ms;
	int32_t st[2];

	if (io_full(b->fd, &l, sizeof(l), dl, true) ||
	    io_full(b->fd, (void *)in, len, dl, true) ||
	    io_full(b->fd, st, sizeof(st), dl, false) ||
	    io_full(b->fd, out, len * (size_t)b->nranks, dl, false))
		return gc_err(GCOLL_ERR_BOOTSTRAP,
			      "bootstrap: rank %d: address exchange failed or timed out", b->rank);
	return GCOLL_SUCCESS;
}

/* The closing round (comm.c, close_quiesce()): an allgather of one byte,
 * bounded by @max_ms or the bootstrap timeout, whichever is shorter.  true
 * when every rank took part; a failure is no error of the caller's, so it
 * leaves gcoll_get_last_error() alone. */
bool gc_boot_quiesce(struct gc_boot *b, uint64_t max_ms)
{
	uint64_t l = 1, dl = gc_now_ms() + (b->timeout_ms < max_ms ? b->timeout_ms : max_ms);
	char one = 1, *all = malloc((size_t)b->nranks);
	int32_t st[2];
	bool ok;

	if (!all)
		return false;
	ok = !io_full(b->fd, &l, sizeof(l), dl, true) &&
	     !io_full(b->fd, &one, 1, dl, true) &&
	     !io_full(b->fd, st, sizeof(st), dl, false) &&
	     !io_full(b->fd, all, (size_t)b->nranks, dl, false);
	free(all);
	return ok;
}

void gc_boot_close(struct gc_boot *b)
{
	if (!b)
		return;
	close(b->fd);
	free(b);
}

uint64_t gc_host_id(void)
{
	char buf[256 + 64] = { 0 };
	uint64_t h = 1469598103934665603ull;
	FILE *f;

	gethostname(buf, 256);
	f = fopen("/proc/sys/kernel/random/boot_id", "r");
	if (f) {
		if (!fgets(buf + strlen(buf), 60, f))
			buf[0] = buf[0];
		fclose(f);
	}
	for (const char *p = buf; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	return h;
}
