/* sandbox.h - one sandbox: the plan decided on the host side before any
 * namespace exists, and the steps that carry it out. */
#ifndef SBX_SANDBOX_H
#define SBX_SANDBOX_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

#include "base/config.h"
#include "sandbox/fuselayer.h"
#include "sandbox/limits.h"
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
	const struct sbx_config *cfg;
	struct sbx_image img;
	uid_t uid_in;        /* the caller's identity inside */
	gid_t gid_in;
	uid_t host_uid;      /* what that identity is on the host */
	gid_t host_gid;
	char *home;          /* inside */
	char *workdir;       /* inside */
	char **envp;
	char *const *argv;   /* the command */
	char *shell_argv[3]; /* the login shell, when no command was given */
	char *lower;         /* the image's rootfs directory on the host */
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
	int confined;        /* pid 1 already ran confine_ahead (a session's command init) */
	/* Set by run/shell for --copy and --out: called on the host side with
	 * the workspace (an O_PATH fd, valid for the call; dup it to keep it
	 * past the sandbox's end) once the sandbox is built and before its
	 * command starts. Failing ends the sandbox: nothing ran. */
	int (*ws_hook)(void *arg, int wsfd, struct sbx_err *err);
	void *ws_hook_arg;
	char *ca_file;       /* the host's CA bundle, bound in for packages egress */
	struct sbx_limits lim; /* the mechanism of each limit, cgroups made */
	int events_fd;       /* --events FILE, or -1 */
	struct winsize ws;   /* the caller's terminal size, if any */
	uint64_t ws_seed;    /* bytes the image holds at the workspace path, copied in */
	struct sbx_bpf seccomp; /* the compiled filter, loaded by each command */
	struct sbx_ucounts ucounts; /* inotify and fanotify counts of the sandbox's namespace */
};

struct sbx_result {
	int exit_status;     /* what sbxrun exits with */
	int kind;            /* enum sbx_exit_kind, or 0 if the command never ran */
	int code;            /* exit code or signal */
	int timed_out;
	uint64_t duration_ms;
	char message[900];   /* why the command did not run (126/127), if so */
	char reason[16];     /* "oom", "pids" when a limit ended it, else empty */
	int init_died;       /* the sandbox's init ended without reporting the command */
	uint64_t peak_memory;
	const char *mechanism[SBX_K__COUNT]; /* how each limit was enforced */
	uint64_t egress_allowed, egress_refused, egress_bytes_up, egress_bytes_down;
};

/* Host-side handles the child sent before it became non-dumpable. */
enum sbx_run_fd { SBX_FD_USER, SBX_FD_MNT, SBX_FD_NET, SBX_FD_PID, SBX_FD_IPC, SBX_FD_UTS,
		  SBX_FD_CGROUP, SBX_FD_ROOT, SBX_FD__COUNT };
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
};

int sandbox_plan(const struct sbx_config *cfg, char *const *argv, struct sbx_plan *plan,
		 struct sbx_err *err);
void sandbox_plan_free(struct sbx_plan *plan);
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
/* How the writable layer is kept: "tmpfs", "fuse-overlayfs+tmpfs" (an
 * exact quota either way) or "disk" (sbxrun's walk and kill). */
const char *sandbox_storage_name(const struct sbx_plan *plan);

#endif
