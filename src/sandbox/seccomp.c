/* seccomp.c - the sandbox's default seccomp filter, in the spirit of Docker's
 * default profile and Flatpak's filter, loaded in the command child right
 * before execve.
 *
 * It is a denylist over a default of "allow", on purpose: the sandbox runs
 * whole Debian systems (compilers, JITs, language runtimes, package managers)
 * whose syscall needs grow with every kernel and libc, and an allowlist that
 * lags behind breaks them with errors nobody can debug. The command already
 * runs with no capabilities, no_new_privs, in its own user, mount, pid, net,
 * ipc and uts namespaces; what is denied here is the kernel surface that stays
 * reachable despite that (keyring, bpf, perf, userfaultfd, io_uring, nested
 * namespaces, exotic socket families, TIOCSTI), plus what would need a dropped
 * capability anyway (defence in depth). Every other syscall ABI (i386, x32)
 * kills the process: rules are written in native numbers, and a foreign ABI
 * must never slip past them. */
#define _GNU_SOURCE
#include "sandbox/seccomp.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

static const struct sbx_deny deny_always[] = {
	/* the kernel keyring is shared by uid with the host user's sessions */
	{ "keyctl", EPERM }, { "add_key", EPERM }, { "request_key", EPERM },
	/* large, often exploited kernel surface that needs no capability */
	{ "bpf", EPERM }, { "perf_event_open", EPERM }, { "userfaultfd", EPERM },
	{ "io_uring_setup", EPERM }, { "io_uring_enter", EPERM }, { "io_uring_register", EPERM },
	/* looking into other processes' kernel objects and file tables */
	{ "kcmp", EPERM }, { "pidfd_getfd", EPERM },
	/* the file system layout is sbxrun's to make: no mounts, no new roots */
	{ "mount", EPERM }, { "umount2", EPERM }, { "pivot_root", EPERM }, { "chroot", EPERM },
	/* the new mount API: ENOSYS so libmount falls back to mount(2), which
	 * then says "Operation not permitted" */
	{ "fsopen", ENOSYS }, { "fsconfig", ENOSYS }, { "fsmount", ENOSYS }, { "fspick", ENOSYS },
	{ "move_mount", ENOSYS }, { "open_tree", ENOSYS }, { "open_tree_attr", ENOSYS },
	{ "mount_setattr", ENOSYS },
	/* clone3 passes its flags in memory a filter cannot read, so the
	 * namespace rule below could not see them; ENOSYS makes glibc use clone */
	{ "clone3", ENOSYS },
	{ "setns", EPERM },
	/* the machine itself */
	{ "kexec_load", EPERM }, { "kexec_file_load", EPERM },
	{ "init_module", EPERM }, { "finit_module", EPERM }, { "delete_module", EPERM },
	{ "reboot", EPERM }, { "swapon", EPERM }, { "swapoff", EPERM }, { "acct", EPERM },
	{ "quotactl", EPERM }, { "quotactl_fd", EPERM }, { "syslog", EPERM },
	{ "open_by_handle_at", EPERM }, { "uselib", EPERM }, { "lookup_dcookie", EPERM },
	{ "iopl", EPERM }, { "ioperm", EPERM },
};

/* Reading and writing another process's memory is ptrace by another name. */
static const char *const ptrace_family[] = { "ptrace", "process_vm_readv", "process_vm_writev" };

/* Single-uid mode: only one id is mapped, so changing ownership can only fail
 * (EINVAL) and breaks dpkg's maintainer scripts; pretending it worked costs
 * nothing, since there is no other identity to give a file to. */
static const char *const chown_family[] = { "chown", "fchown", "lchown", "fchownat", "setgroups" };

/* Namespace flags of clone and unshare: no nested user namespace, nor any
 * other new namespace (CLONE_NEWTIME is only valid for unshare and clone3;
 * in clone's flags that bit belongs to the exit signal). */
static const uint64_t ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET,
	CLONE_NEWIPC, CLONE_NEWUTS, CLONE_NEWCGROUP,
};

/* personality() values allowed, exactly as Docker's and Flatpak's filters
 * allow them: the Linux and 32-bit Linux domains, their UNAME26 forms (old
 * build systems) and the query 0xffffffff; every other value is EPERM.
 * ADDR_NO_RANDOMIZE is refused with the rest: gdb warns that it cannot
 * disable address randomisation and carries on. The kernel reads the
 * argument as an unsigned int; the filter also refuses high bits. */
static const uint32_t persona_allowed[] = {
	PER_LINUX, PER_LINUX32, PER_LINUX | UNAME26, PER_LINUX32 | UNAME26, 0xffffffff,
};
/* The same set for seccomp_rules() (the OCI exporter): every combination
 * of these bits, or the query. */
#define PERSONA_OK_BITS (PER_LINUX32 | UNAME26)

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG0_LO (offsetof(struct seccomp_data, args[0]))
#define ARG0_HI (offsetof(struct seccomp_data, args[0]) + 4)
#else
#define ARG0_LO (offsetof(struct seccomp_data, args[0]) + 4)
#define ARG0_HI (offsetof(struct seccomp_data, args[0]))
#endif

static void filter_release(scmp_filter_ctx *ctx)
{
	if (*ctx)
		seccomp_release(*ctx);
}

/* Adds one rule; a syscall this architecture (or this libseccomp) does not
 * know is skipped, as there is nothing to deny. */
static int rule(scmp_filter_ctx ctx, const char *name, uint32_t action, unsigned n,
		const struct scmp_arg_cmp *cmp, struct sbx_err *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	if (nr < 0)
		return 0;
	int rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0)
		return err_set(err, -rc, "seccomp: rule for %s", name);
	return 0;
}

static int deny_list(scmp_filter_ctx ctx, struct sbx_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(deny_always); i++)
		if (rule(ctx, deny_always[i].name, SCMP_ACT_ERRNO(deny_always[i].errnum), 0, NULL,
			 err) < 0)
			return -1;
	return 0;
}

/* One rule per flag: libseccomp ORs rules, and a rule cannot test "any of
 * these bits" in one comparison. */
static int deny_namespaces(scmp_filter_ctx ctx, struct sbx_err *err)
{
	for (size_t i = 0; i < ARRAY_SIZE(ns_flags); i++) {
		struct scmp_arg_cmp c = SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]);
		if (rule(ctx, "clone", SCMP_ACT_ERRNO(EPERM), 1, &c, err) < 0 ||
		    rule(ctx, "unshare", SCMP_ACT_ERRNO(EPERM), 1, &c, err) < 0)
			return -1;
	}
	struct scmp_arg_cmp t = SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NEWTIME, CLONE_NEWTIME);
	return rule(ctx, "unshare", SCMP_ACT_ERRNO(EPERM), 1, &t, err);
}

/* "One of these values" is one comparison per value in BPF, but over a
 * default of "allow" libseccomp can only say it as many masked ranges (a
 * hundred rules and 0.5 ms of every start, measured). So personality gets
 * a tiny filter of its own, made from persona_allowed, put in front of the
 * compiled one: where it has no objection it jumps to the compiled filter's
 * first instruction (which allows personality), so one program is loaded
 * and run, not two. Foreign ABIs pass here: the main filter kills them. */
#define PERSONA_HEAD 9
#define PERSONA_LEN (PERSONA_HEAD + ARRAY_SIZE(persona_allowed) + 2)
/* on to the compiled filter, from instruction `at` of the prefix */
#define PERSONA_ON(at) BPF_JUMP(BPF_JMP | BPF_JA, (uint32_t)(PERSONA_LEN - (at) - 1), 0, 0)

static void personality_prefix(struct sock_filter f[PERSONA_LEN])
{
	const struct sock_filter head[PERSONA_HEAD] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 1, 0),
		PERSONA_ON(2),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_personality, 1, 0),
		PERSONA_ON(5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_HI),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (uint8_t)ARRAY_SIZE(persona_allowed) + 1),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
	};
	size_t n = ARRAY_SIZE(persona_allowed), i;

	memcpy(f, head, sizeof(head));
	/* value i jumps over the rest and the EPERM to the last instruction */
	for (i = 0; i < n; i++)
		f[PERSONA_HEAD + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								   persona_allowed[i], (uint8_t)(n - i), 0);
	f[PERSONA_HEAD + n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	f[PERSONA_HEAD + n + 1] = (struct sock_filter)PERSONA_ON(PERSONA_HEAD + n + 1);
}

/* TIOCSTI pushes keystrokes into a terminal (the caller's, if it leaked in);
 * TIOCLINUX can do the same on a virtual console. The kernel reads the
 * request as 32 bits, so only the low 32 bits are compared. */
static const uint64_t ioctl_reqs[] = { TIOCSTI, TIOCLINUX };

static int deny_ioctls(scmp_filter_ctx ctx, struct sbx_err *err)
{
	const uint64_t *req = ioctl_reqs;
	for (size_t i = 0; i < ARRAY_SIZE(ioctl_reqs); i++) {
		struct scmp_arg_cmp c = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, req[i]);
		if (rule(ctx, "ioctl", SCMP_ACT_ERRNO(EPERM), 1, &c, err) < 0)
			return -1;
	}
	return 0;
}

/* Only AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK. AF_VSOCK matters most: CI
 * runners are VMs, and vsock talks to the hypervisor. The other families
 * below AF_NETLINK are aligned blocks (mask, value): 0, 3, 4-7, 8-9, 11,
 * 12-15; everything above it is one comparison. Values are 64-bit: any high
 * bit makes them greater than AF_NETLINK, so no garbage above 32 bits can
 * alias an allowed family. */
static const char *const socket_calls[] = { "socket", "socketpair" };
static const uint64_t af_blocks[][2] = {
	{ ~0ULL, 0 }, { ~0ULL, 3 }, { ~3ULL, 4 }, { ~1ULL, 8 }, { ~0ULL, 11 }, { ~3ULL, 12 },
};

static int deny_socket_families(scmp_filter_ctx ctx, struct sbx_err *err)
{
	const char *const *calls = socket_calls;
	const uint64_t(*blocks)[2] = af_blocks;
	for (size_t i = 0; i < ARRAY_SIZE(socket_calls); i++) {
		struct scmp_arg_cmp gt = SCMP_A0(SCMP_CMP_GT, AF_NETLINK);
		if (rule(ctx, calls[i], SCMP_ACT_ERRNO(EAFNOSUPPORT), 1, &gt, err) < 0)
			return -1;
		for (size_t j = 0; j < ARRAY_SIZE(af_blocks); j++) {
			struct scmp_arg_cmp m = SCMP_A0(SCMP_CMP_MASKED_EQ, blocks[j][0], blocks[j][1]);
			if (rule(ctx, calls[i], SCMP_ACT_ERRNO(EAFNOSUPPORT), 1, &m, err) < 0)
				return -1;
		}
	}
	return 0;
}

static int names_rule(scmp_filter_ctx ctx, const char *const *names, size_t n, uint32_t action,
		      struct sbx_err *err)
{
	for (size_t i = 0; i < n; i++)
		if (rule(ctx, names[i], action, 0, NULL, err) < 0)
			return -1;
	return 0;
}

static int build(scmp_filter_ctx ctx, const struct sbx_config *cfg, int single_uid,
		 struct sbx_err *err)
{
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return err_set(err, -rc, "seccomp: bad-architecture action");
	/* a binary tree of syscall numbers: the rule count would otherwise
	 * make every allowed syscall walk a long chain */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (deny_list(ctx, err) < 0 || deny_namespaces(ctx, err) < 0 || deny_ioctls(ctx, err) < 0 ||
	    deny_socket_families(ctx, err) < 0)
		return -1;
	if (!cfg->ptrace &&
	    names_rule(ctx, ptrace_family, ARRAY_SIZE(ptrace_family), SCMP_ACT_ERRNO(EPERM), err) < 0)
		return -1;
	if (single_uid &&
	    names_rule(ctx, chown_family, ARRAY_SIZE(chown_family), SCMP_ACT_ERRNO(0), err) < 0)
		return -1;
	return 0;
}

/* Exports what libseccomp would load: the same program seccomp_load()
 * generates, read back from a memfd so that it can be cached and loaded
 * later without libseccomp (seccomp_cache.c). */
static int export_filter(scmp_filter_ctx ctx, struct sbx_bpf *out, struct sbx_err *err)
{
	_cleanup_close_ int fd = memfd_create("sbxrun-bpf", MFD_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "seccomp: memfd");
	int rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0)
		return err_set(err, -rc, "seccomp: cannot export the filter");
	off_t size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS)
		return err_set(err, EINVAL, "seccomp: exported filter has a bad size (%lld)", (long long)size);
	out->insns = xmalloc((size_t)size);
	if (pread(fd, out->insns, (size_t)size, 0) != size) {
		seccomp_bpf_free(out);
		return err_sys(err, "seccomp: read the exported filter back");
	}
	out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	return 0;
}

int seccomp_compile(const struct sbx_config *cfg, int single_uid, struct sbx_bpf *out,
		    struct sbx_err *err)
{
	memset(out, 0, sizeof(*out));
	__attribute__((cleanup(filter_release))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: cannot create a filter");
	if (build(ctx, cfg, single_uid, err) < 0)
		return -1;
	return export_filter(ctx, out, err);
}

void seccomp_bpf_free(struct sbx_bpf *bpf)
{
	free(bpf->insns);
	bpf->insns = NULL;
	bpf->len = 0;
}

/* What an init that still makes one pid namespace and one mount namespace
 * with a fresh /proc per command needs beyond the filter (a session's pid 1,
 * session_init.c): clone with CLONE_NEWPID and no other namespace flag,
 * unshare(CLONE_NEWNS) alone, mount and mount_setattr (for the /proc and
 * its masks). A prefix in front of the same program allows exactly these
 * and sends everything else on to it; the command's own init then loads
 * the whole filter on top, before any command runs, and of two filters the
 * stricter verdict wins. clone's flags are in its low 32 bits (the kernel
 * ignores the rest); unshare refuses high bits itself (EINVAL). */
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#define NS_MAKER_LEN 14
#define NS_MAKER_ALLOW(at) (uint8_t)(NS_MAKER_LEN - 1 - (at) - 1)
#define NS_MAKER_ON(at) (uint8_t)(NS_MAKER_LEN - (at) - 1)

static void ns_maker_prefix(struct sock_filter f[NS_MAKER_LEN], int userns)
{
	/* [sandbox] user: a command init also makes the user's own user
	 * namespace (sandbox/nonroot.c); else the same test twice */
	uint32_t also = userns ? CLONE_NEWUSER : CLONE_NEWNS;
	uint32_t ns_mask = 0;
	for (size_t i = 0; i < ARRAY_SIZE(ns_flags); i++)
		ns_mask |= (uint32_t)ns_flags[i];
	const struct sock_filter p[NS_MAKER_LEN] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 0, NS_MAKER_ON(1)),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount, NS_MAKER_ALLOW(3), 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mount_setattr, NS_MAKER_ALLOW(4), 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_unshare, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 3, NS_MAKER_ON(6)),
		/* 7: unshare */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLONE_NEWNS, NS_MAKER_ALLOW(8), 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, also, NS_MAKER_ALLOW(9), NS_MAKER_ON(9)),
		/* 10: clone */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ns_mask),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CLONE_NEWPID, NS_MAKER_ALLOW(12), NS_MAKER_ON(12)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	memcpy(f, p, sizeof(p));
}

/* Loads prefix (n instructions), the personality prefix and the compiled
 * filter as one program, as seccomp_load() would (no flags), after
 * no_new_privs. An empty program means seccomp = off. */
static int load(const struct sock_filter *prefix, size_t n, const struct sbx_bpf *bpf,
		struct sbx_err *err)
{
	if (!bpf->len)
		return 0;
	if (bpf->len > BPF_MAXINSNS - PERSONA_LEN - n)
		return err_set(err, E2BIG, "seccomp: the filter is too long (%u instructions)", bpf->len);
	/* on the stack (at most BPF_MAXINSNS, 32 KiB): nothing is allocated */
	struct sock_filter f[n + PERSONA_LEN + bpf->len];
	if (n)
		memcpy(f, prefix, n * sizeof(*f));
	personality_prefix(f + n);
	memcpy(f + n + PERSONA_LEN, bpf->insns, bpf->len * sizeof(*f));
	struct sock_fprog prog = { .len = (unsigned short)(n + PERSONA_LEN + bpf->len), .filter = f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, "seccomp: no_new_privs");
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return err_sys(err, "seccomp: cannot load the filter");
	return 0;
}

int seccomp_apply(const struct sbx_bpf *bpf, struct sbx_err *err)
{
	return load(NULL, 0, bpf, err);
}

int seccomp_apply_ns_maker(const struct sbx_bpf *bpf, int userns, struct sbx_err *err)
{
	struct sock_filter prefix[NS_MAKER_LEN];

	ns_maker_prefix(prefix, userns);
	return load(prefix, NS_MAKER_LEN, bpf, err);
}

int seccomp_install(const struct sbx_config *cfg, int single_uid, struct sbx_err *err)
{
	struct sbx_bpf bpf = { 0 };

	if (cfg->seccomp == SBX_OFF)
		return 0;
	if (seccomp_compile(cfg, single_uid, &bpf, err) < 0)
		return -1;
	int r = seccomp_apply(&bpf, err);
	seccomp_bpf_free(&bpf);
	return r;
}

void seccomp_rules(struct sbx_seccomp_rules *r)
{
	*r = (struct sbx_seccomp_rules){
		.deny = deny_always, .n_deny = ARRAY_SIZE(deny_always),
		.ns_flags = ns_flags, .n_ns_flags = ARRAY_SIZE(ns_flags), .ns_unshare_only = CLONE_NEWTIME,
		.ioctls = ioctl_reqs, .n_ioctls = ARRAY_SIZE(ioctl_reqs),
		.socket_calls = socket_calls, .n_socket_calls = ARRAY_SIZE(socket_calls),
		.af_max = AF_NETLINK, .af_blocks = af_blocks, .n_af_blocks = ARRAY_SIZE(af_blocks),
		.ptrace_family = ptrace_family, .n_ptrace = ARRAY_SIZE(ptrace_family),
		.chown_family = chown_family, .n_chown = ARRAY_SIZE(chown_family),
		.personality_ok_bits = PERSONA_OK_BITS,
	};
}

/* The fuse-overlayfs daemon's filter (fuselayer.c). It serves the sandbox's
 * root from the host's pid namespace, as the sandbox's identity, so what it
 * must not do is reach out: the same denylist as the sandbox's (keyring,
 * bpf, perf, userfaultfd, io_uring, mounts and new roots, new namespaces,
 * kexec and modules, TIOCSTI), plus every socket, ptrace and its kin, and
 * anything that acts on another process of the same host uid (which, from
 * the host's pid namespace, could be the user's own shell). A denylist
 * rather than an allowlist for the reason given at the top: the daemon is
 * the host's fuse-overlayfs, whatever its version and libc, and an
 * allowlist written against one build fails another in ways nobody can
 * debug (the layer just stops working); what it really calls, traced on
 * Debian 12 (fuse-overlayfs 1.10, libfuse 3.14), touches none of this. */
static const struct sbx_deny deny_daemon[] = {
	{ "socket", EPERM }, { "socketpair", EPERM },
	{ "unshare", EPERM },
	{ "process_madvise", EPERM }, { "migrate_pages", EPERM }, { "move_pages", EPERM },
	{ "pidfd_open", EPERM }, { "pidfd_send_signal", EPERM }, { "tkill", EPERM },
};

static int build_daemon(scmp_filter_ctx ctx, struct sbx_err *err)
{
	int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		return err_set(err, -rc, "seccomp: bad-architecture action");
	if (deny_list(ctx, err) < 0 || deny_namespaces(ctx, err) < 0 || deny_ioctls(ctx, err) < 0 ||
	    names_rule(ctx, ptrace_family, ARRAY_SIZE(ptrace_family), SCMP_ACT_ERRNO(EPERM), err) < 0)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(deny_daemon); i++)
		if (rule(ctx, deny_daemon[i].name, SCMP_ACT_ERRNO(deny_daemon[i].errnum), 0, NULL,
			 err) < 0)
			return -1;
	/* its own limits only (glibc's setrlimit passes pid 0) */
	struct scmp_arg_cmp other = SCMP_A0(SCMP_CMP_NE, 0);
	return rule(ctx, "prlimit64", SCMP_ACT_ERRNO(EPERM), 1, &other, err);
}

int seccomp_compile_daemon(struct sbx_bpf *out, struct sbx_err *err)
{
	memset(out, 0, sizeof(*out));
	__attribute__((cleanup(filter_release))) scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return err_set(err, ENOMEM, "seccomp: cannot create a filter");
	if (build_daemon(ctx, err) < 0)
		return -1;
	return export_filter(ctx, out, err);
}

/* Signals only to itself: kill, tgkill and the sigqueue calls with arg 0
 * (a pid_t, 32 bits to the kernel) other than its own pid are EPERM. The
 * pid is known only in the forked daemon, so this is a second, tiny filter
 * made there, as the personality filter is. */
static const int self_signal_nrs[] = { __NR_kill, __NR_tgkill, __NR_rt_sigqueueinfo,
				       __NR_rt_tgsigqueueinfo };
#define SELF_HEAD 4
#define SELF_MAX (SELF_HEAD + ARRAY_SIZE(self_signal_nrs) + 5)

static int load_self_signal_filter(pid_t self)
{
	const struct sock_filter head[SELF_HEAD] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	};
	struct sock_filter f[SELF_MAX];
	size_t n = ARRAY_SIZE(self_signal_nrs), i;

	memcpy(f, head, sizeof(head));
	/* call i jumps over the rest and the ALLOW to the pid check */
	for (i = 0; i < n; i++)
		f[SELF_HEAD + i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
								(uint32_t)self_signal_nrs[i], (uint8_t)(n - i), 0);
	f[SELF_HEAD + n] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[SELF_HEAD + n + 1] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG0_LO);
	f[SELF_HEAD + n + 2] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)self, 0, 1);
	f[SELF_HEAD + n + 3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[SELF_HEAD + n + 4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	struct sock_fprog prog = { .len = (unsigned short)SELF_MAX, .filter = f };
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

int seccomp_apply_daemon(const struct sbx_bpf *bpf, pid_t self)
{
	struct sock_fprog prog = { .len = bpf->len, .filter = bpf->insns };

	if (!bpf->len || syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -1;
	return load_self_signal_filter(self);
}
