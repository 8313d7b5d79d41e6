/* plan.h - what one sandbox will be, decided on the host side before any
 * namespace exists (plan.c) and read-only after: every step (the child,
 * mounts, init, confinement, supervision) reads it. */
#ifndef SBX_PLAN_H
#define SBX_PLAN_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "base/config.h"
#include "gateway/gateway.h"
#include "net/netplan.h"
#include "sandbox/credplan.h"
#include "sandbox/landlock.h"
#include "sandbox/limits.h"
#include "sandbox/nonroot.h"
#include "sandbox/seccomp.h"
#include "sandbox/userns.h"
#include "store/store.h"

struct sbx_plan_bind {
	char *src;   /* absolute host path, checked on the host side */
	char *dst;   /* absolute path inside */
	int rw;
	int is_dir;
};

/* Everything the sandbox needs, decided before clone; read-only after. */
struct sbx_plan {
	/* The package gateway's settings ([packages], the allow list after the
	 * policy, the upstreams); the events fd and the image's sets are added
	 * where it starts (sandbox_gateway). */
	struct sbx_gateway_conf gw;
	char *gw_pypi;         /* gw.pypi_upstream's storage (owned) */
	const char *hostname;
	const char *workspace; /* inside, or NULL */
	const char *profile;   /* its name, for events and messages, or NULL */
	uint64_t disk;         /* the disk quota in bytes, 0: none (the other limits: lim) */
	uint64_t timeout_ms;   /* the command's wall-clock limit, 0: none */
	int raw_tty;           /* the command's output reaches the terminal unfiltered */
	uint64_t ask_ms;       /* [network] ask: how long a held request waits (0: not asked) */
	struct sbx_image img;
	uid_t uid_in;        /* the caller's identity inside */
	gid_t gid_in;
	uid_t host_uid;      /* what that identity is on the host */
	gid_t host_gid;
	char *home;          /* inside: root's */
	/* [sandbox] user (nonroot.h): whom the commands run as beside the
	 * sandbox's root (name NULL: root), and whether this command (a
	 * session's: the command init made ahead) runs as that user */
	struct sbx_nonroot user;
	int as_user;
	char *workdir;       /* inside */
	char **envp;
	char *const *argv;   /* the command */
	char **argv_copy;    /* argv's strings, copied: pid 1 overwrites the caller's (init.c) */
	char *shell_argv[3]; /* the login shell, when no command was given */
	char *lower;         /* the image's rootfs directory on the host */
	/* session start --from: the snapshot's layers, top first, above lower;
	 * the workspace is then the overlay's own directory, not a bind */
	char *const *snaps;
	size_t nsnaps;
	int *snap_locks;     /* a shared flock on each, held while it runs */
	int storage;         /* effective enum sbx_storage */
	char *run_dir;       /* storage = disk: host dir holding upper, work, ws */
	char *fuse_bin;      /* fuse-overlayfs serves the root over the staging tmpfs, or NULL */
	int run_lock;        /* flock'ed fd of run_dir while it is in use, or -1 */
	struct sbx_plan_bind *binds;
	size_t nbinds;
	int stdin_tty;       /* the caller's stdin is a terminal */
	int tty;             /* give the command a pseudo-terminal */
	/* Set by a session: pid 1 runs this loop instead of starting one command
	 * (the session's commands join later). The layer above passes it down,
	 * so init never depends on the session code. Never returns. */
	void (*pid1_loop)(const struct sbx_plan *plan, int sync, int sfd);
	int confined;        /* a session's command init: it walked CONTAIN_AHEAD (contain.h) */
	/* Set by run/shell for --copy and --out: called on the host side with
	 * the workspace (an O_PATH fd, valid for the call; dup it to keep it
	 * past the sandbox's end) once the sandbox is built and before its
	 * command starts. Failing ends the sandbox: nothing ran. */
	int (*ws_hook)(void *arg, int wsfd, struct sbx_err *err);
	void *ws_hook_arg;
	/* Set by run for --project (the layer above makes the change set):
	 * the host directory, the lower layer of an overlay at the workspace,
	 * opened by the child and checked to be the same inode; its upper and
	 * work directories below layer (on disk, kept after the run). */
	struct sbx_plan_project {
		char *src;     /* absolute host path of DIR, or NULL */
		char *layer;   /* host directory holding upper/ and work/ */
		dev_t dev;
		ino_t ino;
		int upper_fd;  /* layer/upper, read by the disk quota's walk, or -1 */
		int lock_fd;   /* layer, share-locked while the sandbox may write it, or -1 */
		/* after the run, for --json: the change set and what became of it */
		const char *id;
		const char *fate; /* "kept", "applied", "discarded", "empty" */
		uint64_t added, changed, deleted;
	} project;
	struct sbx_netplan net; /* what the egress mode means here (net/netplan.h) */
	struct sbx_credplan *cred; /* [credentials] (sandbox/credplan.h), or NULL */
	struct sbx_limits lim; /* the mechanism of each limit, cgroups made */
	int events_fd;       /* --events FILE, or -1 */
	struct winsize ws;   /* the caller's terminal size, if any */
	uint64_t ws_seed;    /* bytes the image holds at the workspace path, copied in */
	struct sbx_bpf seccomp; /* the compiled filter, loaded by each command */
	struct sbx_ucounts ucounts; /* inotify and fanotify counts of the sandbox's namespace */
	int tier_min;        /* enum sbx_tier: the lowest the profile, policy and enforce accept */
	char tier_why[192];  /* what requires it, for the refusal (sandbox/tier.h) */
	/* The landlock tier's (sandbox/landlock.h), set in the copy of the plan
	 * its processes read; NULL in the tiers with namespaces. */
	const struct sbx_landlock *ll;
	/* Where sandbox_start keeps that tier's state, should it be taken:
	 * its private directory lives until sandbox_plan_free (after --out). */
	struct sbx_landlock *ll_state;
};

int sandbox_plan(const struct sbx_config *cfg, char *const *argv, struct sbx_plan *plan,
		 struct sbx_err *err);
void sandbox_plan_free(struct sbx_plan *plan);
/* The image's package sources as host sets (@apt ... @maven), pointing
 * into img (valid while it is open). */
struct hostmatch_sets plan_image_sets(const struct sbx_image *img);
/* How the writable layer is kept: "tmpfs", "fuse-overlayfs+tmpfs" (an
 * exact quota either way) or "disk" (sbxrun's walk and kill). */
const char *sandbox_storage_name(const struct sbx_plan *plan);

#endif
