/* seccomp.h - the sandbox's default seccomp filter (libseccomp). */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include "base/config.h"
#include "base/err.h"

#include <linux/filter.h>

/* Installs the default filter on the calling thread: a denylist of kernel
 * attack surface (keyring, bpf, perf, userfaultfd, io_uring, mounts, new
 * namespaces, kexec/modules, TIOCSTI/TIOCLINUX, exotic socket families, other
 * syscall ABIs), ptrace when cfg->ptrace is 0, and in single-uid mode
 * (single_uid != 0) the chown family and setgroups made to succeed without
 * effect. Sets no_new_privs. Does nothing when cfg->seccomp is SBX_OFF (the
 * caller warns). Call it last, right before execve: after it, mount,
 * pivot_root, setns and the like fail. */
int seccomp_install(const struct sbx_config *cfg, int single_uid, struct sbx_err *err);

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

#endif
