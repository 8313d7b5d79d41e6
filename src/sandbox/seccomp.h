/* seccomp.h - the sandbox's default seccomp filter (libseccomp). */
#ifndef SBX_SECCOMP_H
#define SBX_SECCOMP_H

#include "base/config.h"
#include "base/err.h"

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

#endif
