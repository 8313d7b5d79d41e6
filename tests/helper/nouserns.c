/* tests/helper/nouserns.c - nouserns [--none] CMD [ARG...]: runs CMD under a seccomp
 * filter that refuses user namespaces the way Docker's default profile
 * does (clone3 ENOSYS, so that libc falls back to clone; clone with
 * CLONE_NEWUSER, unshare and setns EPERM), so that sbxrun takes its
 * landlock tier on a machine that would give it full: bench/landlock.sh
 * times both tiers side by side on the same machine. --none loads a filter
 * that allows everything instead, so that the full side pays the same exec
 * and filter as the landlock side. Plain BPF, no
 * libseccomp: cc -O2 -o nouserns nouserns.c. Used by bench/landlock.sh and
 * tests/integration/47-landlock.sh (make builds it static: tests/helper/nouserns). */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define ERR(e) RET(SECCOMP_RET_ERRNO | (e))

int main(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
		ERR(ENOSYS),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 0, 1),
		ERR(EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setns, 0, 1),
		ERR(EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 1, 0),
		RET(SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_NEWUSER, 0, 1),
		ERR(EPERM),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_filter allow[] = { RET(SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (argc > 1 && strcmp(argv[1], "--none") == 0) {
		prog = (struct sock_fprog){ .len = 1, .filter = allow };
		argv++, argc--;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: nouserns CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		perror("nouserns: seccomp");
		return 125;
	}
	execvp(argv[1], argv + 1);
	perror(argv[1]);
	return 127;
}
