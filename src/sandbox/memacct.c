/* memacct.c - where memory falls back to RLIMIT_DATA (per process), the
 * supervisor keeps the sandbox's total near the limit itself, as it does
 * for the disk: it walks the sandbox's process tree from its pid 1 (every
 * process of a pid namespace descends from its init, orphans included),
 * adds up what each holds and what /dev/shm holds, and ends the sandbox
 * when the sum passes the limit.
 *
 * Counted per process: Pss_Anon + Pss_Shmem + SwapPss from smaps_rollup,
 * proportional, so pages shared after a fork count once. Shared anonymous
 * mappings, which RLIMIT_DATA does not see, are shmem and count. A
 * process the host cannot read that way (sbxrun's own inits, which are
 * non-dumpable) counts by /proc/PID/status (RssAnon + RssShmem + VmSwap).
 * /dev/shm is a tmpfs of the limit's size (mounts.c): its used blocks count
 * too, so a /dev/shm file that is also mapped counts twice, on the safe
 * side. Not counted: kernel memory (page tables, socket and pipe buffers),
 * memfds and System V segments that no process maps, and the storage tmpfs,
 * which --disk bounds exactly. */
#define _GNU_SOURCE
#include "sandbox/memacct.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"

void memacct_init(struct sbx_memacct *a, uint64_t limit)
{
	memset(a, 0, sizeof(*a));
	a->limit = limit;
	a->shm = -1;
}

void memacct_free(struct sbx_memacct *a)
{
	if (a->shm >= 0)
		close(a->shm);
	free(a->pids);
	memacct_init(a, a->limit);
}

/* The number after "key:" on a line of text. */
static int field(const char *text, const char *key, uint64_t *v)
{
	size_t n = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, key, n) != 0 || l[n] != ':')
			continue;
		char *end;
		unsigned long long x = strtoull(l + n + 1, &end, 10);
		if (end == l + n + 1)
			return -1;
		*v = (uint64_t)x;
		return 0;
	}
	return -1;
}

static int sum_fields(const char *text, const char *const keys[3], uint64_t *bytes)
{
	uint64_t v;
	int found = 0;

	*bytes = 0;
	for (int i = 0; i < 3; i++)
		if (field(text, keys[i], &v) == 0) {
			*bytes += v * 1024;
			found |= i == 0;
		}
	return found ? 0 : -1;
}

int memacct_parse_rollup(const char *text, uint64_t *bytes)
{
	static const char *const keys[3] = { "Pss_Anon", "Pss_Shmem", "SwapPss" };
	return sum_fields(text, keys, bytes);
}

int memacct_parse_status(const char *text, uint64_t *bytes)
{
	static const char *const keys[3] = { "RssAnon", "RssShmem", "VmSwap" };
	return sum_fields(text, keys, bytes);
}

static ssize_t read_small(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, size - 1) : -1;

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* Proportional: smaps_rollup, a walk of the page tables; where the host
 * cannot read it, the resident figure. */
static uint64_t process_pss(pid_t pid)
{
	char path[64], buf[4096];
	uint64_t v;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && memacct_parse_rollup(buf, &v) == 0)
		return v;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) > 0 && memacct_parse_status(buf, &v) == 0)
		return v;
	return 0; /* gone meanwhile, or a zombie */
}

static void push(struct sbx_memacct *a, pid_t pid)
{
	if (a->npids == a->cap) {
		a->cap = a->cap ? a->cap * 2 : 64;
		a->pids = xrealloc(a->pids, a->cap * sizeof(pid_t));
	}
	a->pids[a->npids++] = pid;
}

/* Pushes the children listed in one /proc/.../children file. */
static void push_listed(struct sbx_memacct *a, const char *path)
{
	char buf[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t have = 0;
	ssize_t n;

	if (fd < 0)
		return;
	/* the list may be longer than one buffer: keep a cut number */
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		buf[have + (size_t)n] = '\0';
		char *p = buf, *end;
		for (;;) {
			long v = strtol(p, &end, 10);
			if (end == p || (*end != ' ' && *end != '\n'))
				break;
			push(a, (pid_t)v);
			p = end;
		}
		have = strlen(p);
		memmove(buf, p, have);
	}
	close(fd);
}

/* Pushes the children of every thread of pid: a thread's children are
 * listed under that thread only. The resident figure of pid (its status,
 * read anyway, says how many threads it has) is returned. */
static uint64_t visit(struct sbx_memacct *a, pid_t pid)
{
	char path[64], buf[4096];
	uint64_t bytes = 0, threads = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_small(path, buf, sizeof(buf)) <= 0)
		return 0;
	memacct_parse_status(buf, &bytes);
	if (field(buf, "Threads", &threads) == 0 && threads == 1) {
		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
		push_listed(a, path);
		return bytes;
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid, e->d_name);
		push_listed(a, path);
	}
	if (d)
		closedir(d);
	return bytes;
}

/* The sandbox's /dev/shm, through a process of the sandbox (not an init
 * of sbxrun's, which the host cannot look into): only a tmpfs of exactly
 * the limit's size, reached without a symlink, is taken. */
static void find_shm(struct sbx_memacct *a, pid_t pid)
{
	char path[64];
	struct statfs sf;
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH };

	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return;
	int fd = (int)syscall(SYS_openat2, root, "dev/shm", &how, sizeof(how));
	close(root);
	if (fd < 0)
		return;
	uint64_t pages = (a->limit + 4095) / 4096;
	if (fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC &&
	    (uint64_t)sf.f_blocks * (uint64_t)sf.f_bsize == pages * 4096) {
		a->shm = fd;
		return;
	}
	close(fd);
}

static int cmp_pid(const void *x, const void *y)
{
	pid_t a = *(const pid_t *)x, b = *(const pid_t *)y;
	return (a > b) - (a < b);
}

static int is_root(pid_t pid, const pid_t *roots, size_t nroots)
{
	for (size_t i = 0; i < nroots; i++)
		if (roots[i] == pid)
			return 1;
	return 0;
}

uint64_t memacct_sample(struct sbx_memacct *a, const pid_t *roots, size_t nroots)
{
	uint64_t sum = 0, shm = 0;
	struct statfs sf;
	int tries = 0;

	/* breadth first into one list, summing the resident figures, an upper
	 * bound (a process that moved to another parent during the walk may be
	 * listed, and counted, twice) */
	a->npids = 0;
	for (size_t i = 0; i < nroots; i++)
		if (roots[i] > 0)
			push(a, roots[i]);
	for (size_t i = 0; i < a->npids; i++) {
		sum += visit(a, a->pids[i]);
		if (a->shm < 0 && tries < 4 && !is_root(a->pids[i], roots, nroots)) {
			find_shm(a, a->pids[i]);
			tries++;
		}
	}
	if (a->shm >= 0 && fstatfs(a->shm, &sf) == 0)
		shm = (uint64_t)(sf.f_blocks - sf.f_bfree) * (uint64_t)sf.f_bsize;
	sum += shm;
	/* past the limit, the proportional figures decide, each process once */
	if (sum > a->limit) {
		qsort(a->pids, a->npids, sizeof(pid_t), cmp_pid);
		sum = shm;
		for (size_t i = 0; i < a->npids; i++)
			if (!i || a->pids[i] != a->pids[i - 1])
				sum += process_pss(a->pids[i]);
	}
	if (sum > a->peak)
		a->peak = sum;
	return sum;
}

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

uint64_t memacct_next_ms(uint64_t cost_us, uint64_t used, uint64_t limit)
{
	uint64_t next = used >= limit / 2 ? 100 : 250;
	uint64_t floor = cost_us * 20 / 1000;

	return floor > next ? (floor > 2000 ? 2000 : floor) : next;
}

int memacct_check(struct sbx_memacct *a, const pid_t *roots, size_t nroots, uint64_t *next_ms)
{
	uint64_t t0 = now_us();
	uint64_t used = memacct_sample(a, roots, nroots);
	uint64_t cost = now_us() - t0;
	char u[32], l[32];

	log_trace("memory: %" PRIu64 " bytes in use, summed in %" PRIu64 " us", used, cost);
	if (used > a->limit) {
		format_size(used, u, sizeof(u));
		format_size(a->limit, l, sizeof(l));
		log_verbose("memory: %s in use (processes and /dev/shm), past the limit of %s", u, l);
		return 1;
	}
	*next_ms = memacct_next_ms(cost, used, a->limit);
	return 0;
}
