/* nproc.c - how RLIMIT_NPROC counts on this kernel (the fact src/sandbox/limits.c
 * relies on). Run as an unprivileged user and as root:
 *   cc -o nproc nproc.c && ./nproc
 * Holds HOST sleeping processes of the caller's uid on the host, then in a
 * child: unshare(CLONE_NEWUSER), map the caller to 0, set RLIMIT_NPROC=LIM
 * either before the unshare ("outside") or after it ("inside"), and count
 * how many forks succeed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define HOST 30
#define LIM 10

static void put(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, s, strlen(s)) < 0)
		perror(path);
	if (fd >= 0)
		close(fd);
}

/* The parent writes the maps, as sbxrun does; a root caller's sandbox is
 * mapped to an unprivileged host uid (SBX_ROOT_HOST_UID), as sbxrun does. */
static void write_maps(pid_t pid)
{
	char path[64], map[64];
	unsigned uid = getuid() ? getuid() : 2147000000u, gid = getgid() ? getgid() : 2147000000u;

	snprintf(path, sizeof(path), "/proc/%d/setgroups", pid);
	put(path, "deny");
	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1", uid);
	put(path, map);
	snprintf(path, sizeof(path), "/proc/%d/gid_map", pid);
	snprintf(map, sizeof(map), "0 %u 1", gid);
	put(path, map);
}

static int count_forks(int inside, int go[2], int done[2])
{
	struct rlimit rl = { LIM, LIM };
	pid_t kids[200];
	int n = 0;
	char c;

	if (!inside && setrlimit(RLIMIT_NPROC, &rl) < 0)
		return -1;
	if (unshare(CLONE_NEWUSER) < 0)
		return -2;
	(void)!write(done[1], "u", 1);
	(void)!read(go[0], &c, 1);
	if (setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return -4;
	if (inside && setrlimit(RLIMIT_NPROC, &rl) < 0)
		return -3;
	for (; n < 200; n++) {
		pid_t p = fork();
		if (p < 0)
			break;
		if (p == 0) {
			pause();
			_exit(0);
		}
		kids[n] = p;
	}
	for (int i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return n;
}

static int run(int inside)
{
	int pfd[2], go[2], n = -9;
	char c;
	if (pipe(pfd) < 0 || pipe(go) < 0)
		return -9;
	pid_t p = fork();
	if (p == 0) {
		n = count_forks(inside, go, pfd);
		(void)!write(pfd[1], &n, sizeof(n));
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &c, 1) == 1 && c == 'u') {
		write_maps(p);
		(void)!write(go[1], "g", 1);
	}
	(void)!read(pfd[0], &n, sizeof(n));
	close(pfd[0]);
	waitpid(p, NULL, 0);
	return n;
}

int main(void)
{
	pid_t host[HOST];
	struct rlimit cur;

	getrlimit(RLIMIT_NPROC, &cur);
	for (int i = 0; i < HOST; i++)
		if ((host[i] = fork()) == 0) {
			pause();
			_exit(0);
		}
	printf("uid %u, host RLIMIT_NPROC soft %lld, %d extra host processes of this uid\n",
	       getuid(), (long long)cur.rlim_cur, HOST);
	printf("limit %d set inside the new userns:  %d forks succeeded\n", LIM, run(1));
	printf("limit %d set before unshare:         %d forks succeeded\n", LIM, run(0));
	for (int i = 0; i < HOST; i++)
		kill(host[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	return 0;
}
