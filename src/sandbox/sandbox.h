/* sandbox.h - one sandbox: started from its plan (plan.h), run and
 * supervised to its result, or started for a session to supervise. */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "base/config.h"
#include "base/outcome.h"
#include "sandbox/fuselayer.h"
#include "sandbox/landlock.h"
#include "sandbox/limits.h"
#include "sandbox/plan.h"

struct sbx_result {
	struct sbx_outcome out; /* how the command ended (sandbox/watch.c) */
	const char *mechanism[SBX_K__COUNT]; /* how each limit was enforced */
	uint64_t egress_allowed, egress_refused, egress_bytes_up, egress_bytes_down;
	unsigned gave_up; /* what the nested tier gave up, 0 in full (sandbox/tier.h) */
};

/* Host-side handles the child sent before it became non-dumpable. STAGING
 * is the staging directory that holds the writable layer (layer/upper, or
 * disk/upper on disk) and the workspace (ws, disk/ws): after pivot_root no
 * path inside reaches it, and a session's snapshot reads the layer there. */
enum sbx_run_fd { SBX_FD_USER, SBX_FD_MNT, SBX_FD_NET, SBX_FD_PID, SBX_FD_IPC, SBX_FD_UTS,
		  SBX_FD_CGROUP, SBX_FD_ROOT, SBX_FD_STAGING, SBX_FD__COUNT };
struct sbx_run_fds {
	int fd[SBX_FD__COUNT]; /* enum sbx_run_fd */
	size_t n;
};

/* A started sandbox: its pid 1 on the host side. */
struct sbx_sandbox {
	pid_t pid;
	int pidfd;
	int sync;
	int proxy_fd;        /* packages egress: the door the sandbox made, or -1 */
	int dns_fd;          /* egress none|packages: the DNS stub's socket, or -1 */
	struct sbx_run_fds fds;
	struct sbx_fuselayer fuse; /* plan->fuse_bin: its fuse-overlayfs */
	unsigned gave_up;    /* from READY: what the nested tier gave up (sandbox/tier.h) */
	/* The landlock tier (no user namespace could be made): its domain and
	 * private directory, and the copy of the plan its processes read. */
	struct sbx_landlock *ll;  /* plan->ll_state */
	struct sbx_plan *ll_plan; /* NULL in the other tiers */
};

/* Creates the sandbox, runs the command, supervises it to the end. */
int sandbox_run(const struct sbx_plan *plan, struct sbx_result *res, struct sbx_err *err);
/* Creates the sandbox up to its init (sessions supervise it themselves). */
int sandbox_start(const struct sbx_plan *plan, struct sbx_sandbox *sb, struct sbx_err *err);
struct sbx_proxy;
/* packages egress: the proxy behind the door the sandbox handed over. */
int sandbox_proxy(const struct sbx_plan *plan, int door, struct sbx_proxy **px, struct sbx_err *err);
struct sbx_dnsstub;
/* egress none|packages: the DNS stub behind the socket the sandbox made. */
int sandbox_dns(const struct sbx_plan *plan, int sock, struct sbx_dnsstub **dns, struct sbx_err *err);
void sandbox_release(struct sbx_sandbox *sb);

#endif
