/* landlock.c - the landlock tier (landlock.h). Landlock grants by
 * hierarchy and cannot carve an exception out of a grant, so "read
 * everywhere but $HOME" is built the other way round: every directory on
 * the way down to an excluded path is listed and each of its other
 * entries granted on its own, the excluded one left out. What is granted
 * read is the machine's own tree less what holds secrets (homes, /root,
 * the temporary directories, a CI runner's and Kubernetes' secrets, the
 * shadow files) and less /proc and /dev, of which a few machine-wide files
 * and the usual devices come back. The workspace and tmp, fresh and 0700
 * in a private directory, are the only writable places. TCP is Landlock's
 * from ABI 4; other sockets are a seccomp filter's, as the kernel has no
 * Landlock rule for them. */
#define _GNU_SOURCE
#include "sandbox/landlock.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "net/netns.h"
#include "sandbox/plan.h"
#include "sandbox/toolconf.h"

/* Debian 12's <linux/landlock.h> is Linux 6.1's (ABI 2): what later ABIs
 * added, as the kernel's UAPI defines it (stable, appended only). */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#define LANDLOCK_RULE_NET_PORT 2
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
struct ll_ruleset_attr { /* struct landlock_ruleset_attr of ABI 6 */
	uint64_t handled_access_fs, handled_access_net, scoped;
};
struct ll_net_port_attr { /* struct landlock_net_port_attr */
	uint64_t allowed_access, port;
};

#define FS_RO (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define FS_FILE_RO (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE)
/* ABI 1's rights; REFER (2), TRUNCATE (3) and IOCTL_DEV (5) are added by ABI */
#define FS_V1 ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1)

/* Never granted read: where a machine keeps what is not the sandbox's. */
static const char *const secret_paths[] = {
	"/root", "/home", "/tmp", "/var/tmp", "/proc", "/dev", "/run/secrets", "/var/run/secrets",
	"/run/credentials", "/run/user", "/etc/shadow", "/etc/gshadow", "/etc/shadow-",
	"/etc/gshadow-", "/__w/_temp", "/github/home", "/var/lib/kubelet",
};
/* /proc's files that describe the machine and name no process (as nestproc.c) */
static const char *const proc_files[] = { "/proc/cpuinfo", "/proc/meminfo", "/proc/stat",
					   "/proc/uptime", "/proc/loadavg", "/proc/version",
					   "/proc/filesystems" };
/* not /dev/pts: the caller's own terminal is there, and -t's terminal is
 * opened through its master (TIOCGPTPEER), by no path */
static const char *const dev_rw[] = { "/dev/null", "/dev/zero", "/dev/full", "/dev/tty",
				      "/dev/ptmx" };
static const char *const dev_ro[] = { "/dev/random", "/dev/urandom" };

int landlock_abi(void)
{
	return (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
}

static uint64_t fs_handled(int abi)
{
	uint64_t fs = FS_V1;

	if (abi >= 2)
		fs |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		fs |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return fs;
}

int landlock_check(const struct sbx_plan *plan, int abi, struct sbx_err *err)
{
	const char *what = plan->pid1_loop ? "a session" : plan->project.src ? "--project"
		: plan->nbinds ? "a bind (--bind, --ro-bind)" : plan->nsnaps ? "a snapshot"
		/* root's copies are made as the sandbox's own uid, which needs a mapping */
		: plan->ws_hook && geteuid() == 0 ? "--copy or --out as root" : NULL;

	if (abi < 1)
		return err_plain(err, EPERM, "no Landlock here either (%s), so no tier can confine a "
				 "command", errno == EOPNOTSUPP ? "disabled at boot: lsm=" : "not in this kernel");
	if (what)
		return err_plain(err, EPERM, "%s needs a user namespace, and the landlock tier, the "
				 "only one here, has none", what);
	if (plan->net.mode == SBX_EGRESS_PACKAGES && abi < 4)
		return err_plain(err, EPERM, "--net packages needs Landlock's TCP rules (ABI 4, Linux "
				 "6.7) in the landlock tier, and this kernel has ABI %d; --net none "
				 "holds without them", abi);
	return 0;
}

static int add_rule_at(int rs, const char *path, int follow, uint64_t dir_access,
		       uint64_t file_access, uint64_t handled)
{
	struct stat st;
	_cleanup_close_ int fd = open(path, O_PATH | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));

	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode))
		return 0; /* a symlink's target is granted where it lies; sockets never */
	/* a file takes a file's rights only (else EINVAL) */
	const uint64_t file_rights = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
				     LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |
				     LANDLOCK_ACCESS_FS_IOCTL_DEV;
	struct landlock_path_beneath_attr pb = {
		.allowed_access = (S_ISDIR(st.st_mode) ? dir_access : file_access & file_rights) & handled,
		.parent_fd = fd,
	};
	return pb.allowed_access ? (int)syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH,
						&pb, 0) : 0;
}

/* A path as it lies, for the walk (a symlink's target is granted where it
 * lies, or not at all). */
static int add_rule(int rs, const char *path, uint64_t dir_access, uint64_t file_access,
		    uint64_t handled)
{
	return add_rule_at(rs, path, 0, dir_access, file_access, handled);
}

/* A device or /proc file named by its usual path, which may be a symlink
 * (a container's /dev/ptmx is pts/ptmx): what it resolves to. */
static int add_file_rule(int rs, const char *path, uint64_t access, uint64_t handled)
{
	return add_rule_at(rs, path, 1, 0, access, handled);
}

struct walk {
	int rs;
	uint64_t handled;
	const char *ex[ARRAY_SIZE(secret_paths) + 4];
	size_t nex;
};

static int below(const char *dir, const char *path)
{
	size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);
	return strncmp(path, dir, n) == 0 && path[n] == '/' && path[n + 1];
}

/* Read and execute beneath path, less the excluded paths. */
static void grant_read(struct walk *w, const char *path, int depth)
{
	int partial = 0;

	for (size_t i = 0; i < w->nex; i++) {
		if (strcmp(w->ex[i], path) == 0)
			return;
		partial |= below(path, w->ex[i]);
	}
	if (!partial) {
		if (add_rule(w->rs, path, FS_RO, FS_FILE_RO, w->handled) < 0)
			log_verbose("landlock: '%s' not granted: %s", path, strerror(errno));
		return;
	}
	if (depth > 32) /* an excluded path that deep: nothing on its way granted */
		return;
	/* Listing is granted beneath too: a directory is listed only where
	 * nothing excluded below it is a directory (/etc, less its shadow
	 * files), so that no name in a home or in /proc is listed. */
	struct stat st;
	int dirs_below = 0;
	for (size_t i = 0; i < w->nex; i++)
		if (below(path, w->ex[i]) && (stat(w->ex[i], &st) < 0 || S_ISDIR(st.st_mode)))
			dirs_below = 1;
	if (!dirs_below)
		add_rule(w->rs, path, LANDLOCK_ACCESS_FS_READ_DIR, 0, w->handled);
	DIR *d = opendir(path);
	struct dirent *e;
	char child[PATH_MAX];
	while (d && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 || e->d_type == DT_LNK)
			continue;
		snprintf(child, sizeof(child), "%s/%s", strcmp(path, "/") ? path : "", e->d_name);
		grant_read(w, child, depth + 1);
	}
	if (d)
		closedir(d);
}

/* The excluded paths as they resolve (/var/run is /run), and the caller's
 * $HOME wherever it is. */
static void exclusions(struct walk *w)
{
	const char *home = getenv("HOME");
	char real[PATH_MAX];

	for (size_t i = 0; i <= ARRAY_SIZE(secret_paths); i++) {
		const char *p = i < ARRAY_SIZE(secret_paths) ? secret_paths[i] : home;
		/* what the caller cannot open or enter needs no exclusion (/root and
		 * the shadow files to all but root): each one costs a walk */
		if (p && p[0] == '/' && (access(p, R_OK) == 0 || access(p, X_OK) == 0) &&
		    realpath(p, real) && strcmp(real, "/") != 0 && w->nex < ARRAY_SIZE(w->ex))
			w->ex[w->nex++] = xstrdup(real);
	}
}

static int private_dirs(struct sbx_landlock *ll, struct sbx_err *err)
{
	const char *base = getenv("TMPDIR");
	char *tmpl = xasprintf("%s/sbxrun-landlock.XXXXXX", base && base[0] == '/' ? base : "/tmp");

	if (!mkdtemp(tmpl)) {
		err_sys(err, "the landlock tier's private directory '%s'", tmpl);
		free(tmpl);
		return -1;
	}
	ll->dir = tmpl;
	ll->ws = xasprintf("%s/ws", tmpl);
	ll->tmp = xasprintf("%s/tmp", tmpl);
	if (mkdir(ll->ws, 0700) < 0 || mkdir(ll->tmp, 0700) < 0)
		return err_sys(err, "the landlock tier's workspace in '%s'", tmpl);
	return 0;
}

/* packages egress: the proxy's door on the loopback, its usual port when
 * free (the environment names it), and the only port connect may reach. */
static int proxy_door(struct sbx_landlock *ll, struct sbx_err *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SBX_PROXY_PORT) };
	socklen_t len = sizeof(a);

	inet_pton(AF_INET, SBX_PROXY_ADDR, &a.sin_addr);
	ll->door = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ll->door < 0 || bind(ll->door, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(ll->door, 128) < 0 || getsockname(ll->door, (struct sockaddr *)&a, &len) < 0)
		return err_sys(err, "the proxy's socket on %s:%d (the landlock tier shares the "
			       "machine's loopback: is another sandbox's proxy there?)", SBX_PROXY_ADDR,
			       SBX_PROXY_PORT);
	ll->port = ntohs(a.sin_port);
	struct ll_net_port_attr np = { .allowed_access = LANDLOCK_ACCESS_NET_CONNECT_TCP,
					     .port = ll->port };
	if (syscall(SYS_landlock_add_rule, ll->ruleset, LANDLOCK_RULE_NET_PORT, &np, 0) < 0)
		return err_sys(err, "landlock: the proxy's port");
	return 0;
}

static int ruleset(struct sbx_landlock *ll, struct sbx_err *err)
{
	struct ll_ruleset_attr attr = { .handled_access_fs = fs_handled(ll->abi) };

	if (ll->abi >= 4 && ll->egress != SBX_EGRESS_FULL)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (ll->abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	size_t size = ll->abi >= 6 ? sizeof(attr) : ll->abi >= 4 ? offsetof(struct ll_ruleset_attr, scoped)
		: offsetof(struct ll_ruleset_attr, handled_access_net);
	ll->ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (ll->ruleset < 0)
		return err_sys(err, "landlock: create a ruleset (ABI %d)", ll->abi);
	return 0;
}

int landlock_prepare(const struct sbx_plan *plan, struct sbx_landlock *ll, struct sbx_err *err)
{
	const uint64_t dev = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
			     LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV;
	struct walk w = { 0 };

	ll->egress = plan->net.mode;
	ll->abi = landlock_abi(); /* its errno is landlock_check's when it fails */
	if (landlock_check(plan, ll->abi, err) < 0)
		return -1;
	if (private_dirs(ll, err) < 0 || ruleset(ll, err) < 0)
		return -1;
	w.rs = ll->ruleset;
	w.handled = fs_handled(ll->abi);
	exclusions(&w);
	grant_read(&w, "/", 0);
	for (size_t i = 0; i < w.nex; i++)
		free((char *)w.ex[i]);
	for (size_t i = 0; i < ARRAY_SIZE(proc_files); i++)
		add_file_rule(ll->ruleset, proc_files[i], LANDLOCK_ACCESS_FS_READ_FILE, w.handled);
	for (size_t i = 0; i < ARRAY_SIZE(dev_rw); i++)
		add_file_rule(ll->ruleset, dev_rw[i], dev, w.handled);
	for (size_t i = 0; i < ARRAY_SIZE(dev_ro); i++)
		add_file_rule(ll->ruleset, dev_ro[i], LANDLOCK_ACCESS_FS_READ_FILE, w.handled);
	if (add_rule(ll->ruleset, ll->ws, w.handled, w.handled, w.handled) < 0 ||
	    add_rule(ll->ruleset, ll->tmp, w.handled, w.handled, w.handled) < 0)
		return err_sys(err, "landlock: grant the workspace '%s'", ll->ws);
	if (ll->egress == SBX_EGRESS_PACKAGES && proxy_door(ll, err) < 0)
		return -1;
	/* Cargo, Maven and Gradle to the gateway: files in the private HOME */
	if (toolconf_write_home(plan, ll->ws, ll->port, err) < 0)
		return -1;
	log_trace("host: landlock domain built (ABI %d)", ll->abi);
	return 0;
}

void landlock_close(struct sbx_landlock *ll)
{
	if (ll->ruleset >= 0)
		close(ll->ruleset);
	if (ll->door >= 0)
		close(ll->door);
	ll->ruleset = ll->door = -1;
}

void landlock_release(struct sbx_landlock *ll)
{
	struct sbx_err err = { 0 };

	landlock_close(ll);
	if (ll->dir) {
		char *slash = strrchr(ll->dir, '/');
		*slash = '\0';
		_cleanup_close_ int parent = open(slash == ll->dir ? "/" : ll->dir,
						  O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (parent < 0 || rm_rf_at(parent, slash + 1, &err) < 0)
			log_warn("cannot remove the landlock tier's workspace '%s/%s': %s", ll->dir,
				 slash + 1, err.msg[0] ? err.msg : strerror(errno));
	}
	free(ll->dir);
	free(ll->ws);
	free(ll->tmp);
	ll->dir = ll->ws = ll->tmp = NULL;
}

int landlock_restrict(const struct sbx_landlock *ll, struct sbx_err *err)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, "landlock: no_new_privs");
	if (syscall(SYS_landlock_restrict_self, ll->ruleset, 0) < 0)
		return err_sys(err, "landlock: restrict to the domain");
	return 0;
}

int landlock_scope_command(const struct sbx_landlock *ll, struct sbx_err *err)
{
	struct ll_ruleset_attr attr = {
		.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL,
	};

	if (ll->abi < 6)
		return 0;
	_cleanup_close_ int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0);
	if (rs < 0 || syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		return err_sys(err, "landlock: the command's own domain");
	return 0;
}

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]))
#else
#define ARG_LO(n) (offsetof(struct seccomp_data, args[n]) + 4)
#endif
#define DENY (SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA))

int landlock_socket_filter(const struct sbx_landlock *ll, struct sbx_err *err)
{
	/* socket() only: socketpair makes AF_UNIX pairs alone, which reach
	 * nothing outside. A family is an int: its low 32 bits are all the
	 * kernel reads. Under packages, TCP stream sockets of AF_INET and
	 * AF_INET6 (Landlock keeps their connect to the proxy's port). */
	const int inet = ll->egress == SBX_EGRESS_PACKAGES;
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, seccomp_arch_native(), 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, inet ? AF_INET : ~0U, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, inet ? AF_INET6 : ~0U, 0, 6),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, ~(unsigned)(SOCK_NONBLOCK | SOCK_CLOEXEC)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SOCK_STREAM, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, DENY),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(f), .filter = f };

	if (ll->egress == SBX_EGRESS_FULL)
		return 0;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return err_sys(err, "seccomp: the landlock tier's socket filter");
	return 0;
}

/* The children of every thread of ours (/proc/self/task/T/children). */
static size_t our_children(pid_t *pids, size_t max)
{
	size_t n = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	char path[96], buf[4096];

	while (d && (e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t len = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		for (char *p = buf, *end; n < max && *p; p = end) {
			long v = strtol(p, &end, 10);
			if (end == p)
				break;
			pids[n++] = (pid_t)v;
		}
	}
	if (d)
		closedir(d);
	return n;
}

void landlock_reap_all(void)
{
	pid_t pids[512];

	/* each round kills what is ours now; what they had comes to us */
	for (int round = 0; round < 100000; round++) {
		size_t n = our_children(pids, ARRAY_SIZE(pids));
		if (!n)
			return;
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		for (size_t i = 0; i < n; i++)
			while (waitpid(pids[i], NULL, __WALL) < 0 && errno == EINTR)
				;
	}
}

const char *landlock_describe(const struct sbx_landlock *ll, char *buf, size_t size)
{
	const char *net = ll->egress == SBX_EGRESS_FULL ? "the machine's network"
		: ll->egress == SBX_EGRESS_PACKAGES ? "TCP to the proxy's port alone" : "no network";

	snprintf(buf, size, "no user namespace: the machine's own file system under Landlock "
		 "(ABI %d): read-only, no home, /root, /tmp, secrets or processes, a private "
		 "workspace; %s", ll->abi, net);
	return buf;
}
