/* test_seccomp_export.c - the OCI seccomp JSON of `profile export --format
 * seccomp` makes the same decisions as sbxrun's own filter: each probe runs
 * twice in a child, once under seccomp_install and once under a filter
 * compiled from the JSON the way an OCI runtime compiles it (libseccomp,
 * default allow, each rule's errno and argument comparisons), and the
 * verdicts must be equal. Foreign ABIs are left out: the runtime decides
 * those. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "sandbox/seccomp.h"
#include "sandbox/seccomp_export.h"
#include "unit.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static int res(long rc)
{
	return rc < 0 ? errno : 0;
}

static int raw_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return res(pid);
}

static int ioctl_null(unsigned long req)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char c = 'x';
	return res(syscall(SYS_ioctl, fd, req, &c));
}

/* Every socket family below 64 with two types, folded into one number. */
static int all_families(void)
{
	unsigned h = 0;
	for (unsigned long f = 0; f < 64; f++)
		for (int t = 1; t <= 2; t++)
			h = h * 31 + (unsigned)res(syscall(SYS_socket, f, t | SOCK_CLOEXEC, 0));
	return (int)(h % 250);
}

static int probe(int i)
{
	int sv[2];
	switch (i) {
	case 0: return res(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
	case 1: return res(syscall(SYS_bpf, 0, NULL, 0));
	case 2: return res(syscall(SYS_userfaultfd, O_CLOEXEC));
	case 3: return res(syscall(SYS_io_uring_setup, 1, NULL));
	case 4: return res(syscall(SYS_fsopen, "tmpfs", 0));
	case 5: return res(setns(-1, 0));
	case 6: return res(chroot("/"));
	case 7: return res(unshare(CLONE_NEWUSER));
	case 8: return res(unshare(CLONE_NEWNET));
	case 9: return res(unshare(CLONE_NEWTIME));
	case 10: return res(unshare(CLONE_FILES));
	case 11: return raw_clone(CLONE_NEWUSER);
	case 12: return raw_clone(CLONE_NEWPID);
	case 13: return raw_clone(0);
	case 14: return res(syscall(SYS_clone3, NULL, 0));
	case 15: return res(personality(READ_IMPLIES_EXEC));
	case 16: return res(personality(PER_BSD));
	case 17: return res(syscall(SYS_personality, 0xfffffffeUL));
	case 18: return res(syscall(SYS_personality, 0x100000000UL));
	case 19: return res(personality(0xffffffff));
	case 20: return res(personality(ADDR_NO_RANDOMIZE));
	case 21: return res(personality(PER_LINUX32 | UNAME26 | ADDR_NO_RANDOMIZE));
	case 22: return res(personality(MMAP_PAGE_ZERO));
	case 23: return res(syscall(SYS_personality, 0x80000000UL));
	case 24: return res(syscall(SYS_personality, 0x1ffffffffUL));
	case 25: return ioctl_null(TIOCSTI);
	case 26: return ioctl_null(TIOCSTI | (1UL << 32));
	case 27: return ioctl_null(TIOCLINUX);
	case 28: return ioctl_null(TCGETS);
	case 29: return all_families();
	case 30: return res(syscall(SYS_socket, AF_UNIX | (1UL << 32), SOCK_STREAM, 0));
	case 31: return res(socketpair(AF_TIPC, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
	case 32: return res(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	case 33: return res(ptrace(PTRACE_TRACEME, 0, NULL, NULL));
	case 34: return res(syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0));
	case 35: return res(syscall(SYS_getpid));
	case 36: return res(syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL));
	default: return -1;
	}
}
#define NPROBES 37

static enum scmp_compare op_of(const char *s)
{
	static const struct { const char *name; enum scmp_compare op; } ops[] = {
		{ "SCMP_CMP_NE", SCMP_CMP_NE }, { "SCMP_CMP_LT", SCMP_CMP_LT },
		{ "SCMP_CMP_LE", SCMP_CMP_LE }, { "SCMP_CMP_EQ", SCMP_CMP_EQ },
		{ "SCMP_CMP_GE", SCMP_CMP_GE }, { "SCMP_CMP_GT", SCMP_CMP_GT },
		{ "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
	};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (!strcmp(s, ops[i].name))
			return ops[i].op;
	return _SCMP_CMP_MIN;
}

static struct json_object *field(struct json_object *o, const char *k)
{
	struct json_object *v = NULL;
	json_object_object_get_ex(o, k, &v);
	return v;
}

/* What an OCI runtime does with the profile. */
static int install_json(struct json_object *p)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	struct json_object *calls = field(p, "syscalls");

	if (!ctx || strcmp(json_object_get_string(field(p, "defaultAction")), "SCMP_ACT_ALLOW"))
		return -1;
	for (size_t i = 0; i < json_object_array_length(calls); i++) {
		struct json_object *r = json_object_array_get_idx(calls, i);
		struct json_object *names = field(r, "names"), *args = field(r, "args");
		struct scmp_arg_cmp c[6];
		unsigned n = 0;
		if (strcmp(json_object_get_string(field(r, "action")), "SCMP_ACT_ERRNO"))
			return -1;
		for (size_t a = 0; args && a < json_object_array_length(args) && n < 6; a++, n++) {
			struct json_object *x = json_object_array_get_idx(args, a);
			c[n] = (struct scmp_arg_cmp){
				.arg = (unsigned)json_object_get_int(field(x, "index")),
				.op = op_of(json_object_get_string(field(x, "op"))),
				.datum_a = json_object_get_uint64(field(x, "value")),
				.datum_b = json_object_get_uint64(field(x, "valueTwo")),
			};
		}
		uint32_t act = SCMP_ACT_ERRNO((uint32_t)json_object_get_int(field(r, "errnoRet")));
		for (size_t k = 0; k < json_object_array_length(names); k++) {
			int nr = seccomp_syscall_resolve_name(
				json_object_get_string(json_object_array_get_idx(names, k)));
			if (nr >= 0 && seccomp_rule_add_array(ctx, act, nr, n, c) < 0)
				return -1;
		}
	}
	return seccomp_load(ctx) < 0 ? -1 : 0;
}

/* The probe's verdict in a child under one filter: its errno result, 251
 * when the filter could not be installed, or 128 + the killing signal. */
static int verdict(const struct sbx_config *cfg, struct json_object *json, int i)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct sbx_err err;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(250);
		if (json ? install_json(json) < 0 : seccomp_install(cfg, 0, &err) < 0)
			_exit(251);
		_exit(probe(i));
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 255;
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

static void compare(int ptrace)
{
	struct sbx_config cfg;
	config_init(&cfg);
	cfg.ptrace = ptrace;
	struct json_object *j = seccomp_export_json(&cfg);
	int denied = 0;
	for (int i = 0; i < NPROBES; i++) {
		int real = verdict(&cfg, NULL, i), exported = verdict(&cfg, j, i);
		CHECK(real != 251 && exported != 251);
		CHECK(real == exported);
		if (real != exported)
			fprintf(stderr, "    probe %d (ptrace=%d): sbxrun %d, exported %d\n", i, ptrace,
				real, exported);
		denied += real == EPERM || real == ENOSYS || real == EAFNOSUPPORT;
	}
	CHECK(denied > 20); /* the probes do reach the filter */
	json_object_put(j);
	config_free(&cfg);
}

int main(void)
{
	compare(1);
	compare(0);
	return unit_done("test_seccomp_export");
}
