/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tutil.h"

static int tap_n, tap_fail;

double tu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void *tu_shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	return p;
}

/* Killed ranks leave their shm provider regions behind: give every run its
 * own name prefix and remove what is left once all ranks are gone. */
static void shm_cleanup(const char *pfx)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	size_t n = strlen(pfx);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, pfx, n) && e->d_name[n] == '_') {
			char path[512];

			snprintf(path, sizeof(path), "/dev/shm/%s", e->d_name);
			unlink(path);
		}
	closedir(d);
}

/* The threads this process has now, from /proc/self/status; 0 if unknown. */
static int thread_count(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[128];
	int n = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Threads: %d", &n) == 1)
			break;
	fclose(f);
	return n;
}

/*
 * fork() copies only the calling thread.  A lock another thread holds at
 * that moment stays held in the child forever; glibc's fork takes its own
 * malloc locks first, but the sanitizers' allocators (GCC 14's libasan has
 * no fork handler) do not.  The bootstrap server thread of a communicator
 * the caller just destroyed frees its memory and exits right then, so
 * wait for such threads to be gone.  Servers nobody connected to sleep in
 * poll() until their timeout; after a short wait fork anyway.
 */
static void wait_single_threaded(void)
{
	double end = tu_now() + 2.0;

	while (thread_count() > 1 && tu_now() < end)
		usleep(1000);
}

int tu_run(int nranks, tu_rank_fn fn, void *arg, int timeout_s, int *status)
{
	static unsigned runs;
	char pfx[64];
	gcoll_unique_id id;
	pid_t pids[64];
	int bad = 0, left = nranks;
	double end;

	int pfd[64][2];

	snprintf(pfx, sizeof(pfx), "gctest%d-%u-%lx", (int)getpid(), runs++,
		 (unsigned long)(tu_now() * 1e6));
	setenv("GCOLL_SHM_PREFIX", pfx, 1);
	fflush(stdout);
	fflush(stderr);
	wait_single_threaded();
	/* fork first, then create the id (which starts the bootstrap thread)
	 * and hand it over a pipe: no child is forked while that thread runs */
	for (int r = 0; r < nranks; r++) {
		if (pipe(pfd[r])) {
			perror("pipe");
			exit(2);
		}
		pids[r] = fork();
		if (pids[r] == 0) {
			size_t got = 0;

			alarm((unsigned)timeout_s + 5);
			close(pfd[r][1]);
			while (got < sizeof(id)) {
				ssize_t n = read(pfd[r][0], (char *)&id + got, sizeof(id) - got);

				if (n <= 0)
					_exit(99);
				got += (size_t)n;
			}
			close(pfd[r][0]);
			int rc = fn(r, nranks, id, arg);

			fflush(stdout);
			fflush(stderr);
			_exit(rc);
		}
		close(pfd[r][0]);
		status[r] = -1;
	}
	if (gcoll_get_unique_id(&id)) {
		fprintf(stderr, "gcoll_get_unique_id failed\n");
		memset(&id, 0, sizeof(id));
	}
	for (int r = 0; r < nranks; r++) {
		if (write(pfd[r][1], &id, sizeof(id)) != (ssize_t)sizeof(id))
			fprintf(stderr, "tutil: cannot pass the id to rank %d\n", r);
		close(pfd[r][1]);
	}
	end = tu_now() + timeout_s;
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p > 0) {
			for (int r = 0; r < nranks; r++)
				if (pids[r] == p) {
					status[r] = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
					pids[r] = 0;
					left--;
				}
			continue;
		}
		if (tu_now() > end) {
			for (int r = 0; r < nranks; r++)
				if (pids[r] > 0) {
					fprintf(stderr, "tutil: rank %d hung, killing it\n", r);
					kill(pids[r], SIGKILL);
					waitpid(pids[r], NULL, 0);
					pids[r] = 0;
					left--;
				}
			break;
		}
		usleep(2000);
	}
	shm_cleanup(pfx);
	for (int r = 0; r < nranks; r++)
		bad += status[r] != 0;
	return bad;
}

void tu_ok(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d - ", ok ? "ok" : "not ok", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		tap_fail++;
}

void tu_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	printf("ok %d - ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

int tu_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_fail ? 1 : 0;
}
