/* test_caps.c - caps_drop_all and caps_keep_only against the real kernel:
 * inside a new user namespace (full capabilities there, as in the sandbox's
 * init) and as the calling process itself (root or not), each in a forked
 * child. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/caps.h"
#include "unit.h"

/* The hex value of a "CapXxx:" line of /proc/self/status, or ~0 if absent. */
static unsigned long long cap_line(const char *name)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long v = ~0ULL;
	size_t n = strlen(name);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, 16);
	if (f)
		fclose(f);
	return v;
}

/* Child exit code: bit 0 drop failed, 1 eff/prm/inh left, 2 ambient left,
 * 3 bounding left (only checked when want_bounding), 4 no no_new_privs. */
static int drop_and_report(int want_bounding)
{
	struct sbx_err err = { 0 };
	int r = 0;
	if (caps_drop_all(&err) < 0) {
		fprintf(stderr, "caps_drop_all: %s\n", err.msg);
		r |= 1;
	}
	if (cap_line("CapEff") || cap_line("CapPrm") || cap_line("CapInh"))
		r |= 2;
	if (cap_line("CapAmb"))
		r |= 4;
	if (want_bounding && cap_line("CapBnd"))
		r |= 8;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		r |= 16;
	return r;
}

/* A session's pid 1 keeps CAP_SYS_ADMIN and CAP_SETPCAP: exactly those in
 * the effective, permitted and bounding sets, none inheritable or ambient,
 * no_new_privs; and a child of it can still drop everything (code as for
 * drop_and_report, plus 32 if the kept set is wrong, 64 if the child's drop
 * failed). */
static int keep_and_report(int want_bounding)
{
	static const unsigned keep[] = { CAP_SYS_ADMIN, CAP_SETPCAP };
	const unsigned long long want = (1ULL << CAP_SYS_ADMIN) | (1ULL << CAP_SETPCAP);
	struct sbx_err err = { 0 };
	int r = 0;

	if (caps_keep_only(keep, 2, &err) < 0) {
		fprintf(stderr, "caps_keep_only: %s\n", err.msg);
		return 1;
	}
	if (cap_line("CapEff") != want || cap_line("CapPrm") != want || cap_line("CapInh"))
		r |= 32;
	if (cap_line("CapAmb"))
		r |= 4;
	if (want_bounding && cap_line("CapBnd") != want)
		r |= 8;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		r |= 16;
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(drop_and_report(want_bounding));
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st))
		r |= 64;
	return r;
}

/* in_userns: 1 new user namespace, 0 as is. Returns the child's code. */
static int run(int in_userns, int (*fn)(int want_bounding))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		int bounding = geteuid() == 0;
		if (in_userns) {
			if (unshare(CLONE_NEWUSER) < 0)
				_exit(errno == EPERM || errno == ENOSPC ? 77 : 32);
			bounding = 1;
		}
		_exit(fn(bounding));
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return 255;
	return WEXITSTATUS(st);
}

int main(void)
{
	int r = run(1, keep_and_report);
	CHECK(r == 0 || r == 77);
	if (r && r != 77)
		fprintf(stderr, "    caps_keep_only in a user namespace: code %d\n", r);
	r = run(1, drop_and_report);
	if (r == 77)
		fprintf(stderr, "test_caps: no user namespaces here, skipping that case\n");
	else
		CHECK(r == 0);
	if (r && r != 77)
		fprintf(stderr, "    in a user namespace: code %d\n", r);
	r = run(0, drop_and_report);
	CHECK(r == 0);
	if (r)
		fprintf(stderr, "    as the caller: code %d\n", r);
	/* the caller's own sets are untouched (the work happened in children) */
	if (geteuid() == 0)
		CHECK(cap_line("CapEff") != 0);
	return unit_done("test_caps");
}
