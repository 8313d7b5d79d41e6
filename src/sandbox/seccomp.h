/* seccomp.h - the sandbox's default seccomp filter (libseccomp). */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "base/err.h"

#include <linux/filter.h>

/* Installs the default filter on the calling thread: a denylist of kernel
 * attack surface (keyring, bpf, perf, userfaultfd, io_uring, mounts, new
 * namespaces, kexec/modules, TIOCSTI/TIOCLINUX, exotic socket families,
 * personality values but PER_LINUX, PER_LINUX32, their UNAME26 forms and the
 * query, other syscall ABIs), ptrace when cfg->ptrace is 0, and in single-uid mode
 * (single_uid != 0) the chown family and setgroups made to succeed without
 * effect. Sets no_new_privs. Does nothing when cfg->seccomp is SBX_OFF (the
 * caller warns). Call it last, right before execve: after it, mount,
 * pivot_root, setns and the like fail. */
int seccomp_install(const struct sbx_config *cfg, int single_uid, struct sbx_err *err);

/* The filter's rules as data, read by the OCI seccomp export
 * (sandbox/seccomp_export.c) so that both say the same. */
struct sbx_deny {
	const char *name;
	int errnum;
};

struct sbx_seccomp_rules {
	const struct sbx_deny *deny;      /* denied whatever the arguments */
	size_t n_deny;
	const uint64_t *ns_flags;         /* clone/unshare arg 0: any of these bits -> EPERM */
	size_t n_ns_flags;
	uint64_t ns_unshare_only;         /* one more bit, for unshare only */
	const uint64_t *ioctls;           /* ioctl arg 1 (low 32 bits) -> EPERM */
	size_t n_ioctls;
	const char *const *socket_calls;  /* socket families: arg 0 > af_max, or in a block */
	size_t n_socket_calls;
	uint64_t af_max;
	const uint64_t (*af_blocks)[2];   /* (mask, value) -> EAFNOSUPPORT */
	size_t n_af_blocks;
	const char *const *ptrace_family; /* EPERM unless ptrace = yes */
	size_t n_ptrace;
	const char *const *chown_family;  /* single-uid mode: succeed without effect */
	size_t n_chown;
	uint32_t personality_ok_bits;     /* personality: only these bits, or 0xffffffff */
};

void seccomp_rules(struct sbx_seccomp_rules *r);

/* The filter as a BPF program: what seccomp_install loads, compiled once
 * (and cached, seccomp_cache.h) on the host side, loaded in the child. */
struct sbx_bpf {
	struct sock_filter *insns;
	unsigned short len; /* 0: no filter (seccomp = off) */
};

/* Builds the filter of cfg with libseccomp and exports it. */
int seccomp_compile(const struct sbx_config *cfg, int single_uid, struct sbx_bpf *out,
		    struct sbx_err *err);
/* Sets no_new_privs and loads bpf as seccomp_install would; nothing when
 * bpf is empty. Call it last, right before execve. */
int seccomp_apply(const struct sbx_bpf *bpf, struct sbx_err *err);
void seccomp_bpf_free(struct sbx_bpf *bpf);
/* The same program for an init that still makes a pid namespace and a
 * mount namespace with a fresh /proc for each of its commands (a session's
 * pid 1): with a prefix that allows clone with CLONE_NEWPID, unshare with
 * CLONE_NEWNS (and CLONE_NEWUSER alone when userns: a session with
 * [sandbox] user, whose command inits make the user's own, nonroot.h),
 * mount and mount_setattr, and nothing more. Each command's init loads the
 * plain filter on top before its command runs. */
int seccomp_apply_ns_maker(const struct sbx_bpf *bpf, int userns, struct sbx_err *err);

/* The fuse-overlayfs daemon's filter (fuselayer.c): the sandbox's denylist
 * (ptrace always denied), plus every socket, unshare, and what acts on other
 * processes. Compiled on the host side, before the fork. */
int seccomp_compile_daemon(struct sbx_bpf *out, struct sbx_err *err);
/* In the daemon, after no_new_privs, right before execve: loads it, and a
 * filter that lets signals go to `self` (its pid) only. 0 or -1 (errno). */
int seccomp_apply_daemon(const struct sbx_bpf *bpf, pid_t self);

#endif
