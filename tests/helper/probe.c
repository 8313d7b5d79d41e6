/* probe.c - the escape suite's one helper. `probe NAME [ARGS]` tries one
 * thing and reports by exit code: 0 it worked (the attack succeeded, the
 * action is permitted), 1 denied (the errno name on stderr), 2 usage error,
 * 3 not applicable on this kernel, 4 permitted but without its effect.
 * Static, plain syscalls, no libseccomp:
 * it runs inside the tiny test image and, as a positive control, on the host
 * (plainly or under `unshare -Urmpnf`, which gives the same namespaces as the
 * sandbox without its confinement). Arguments are chosen so that nothing
 * harmful happens even where the call is permitted: reboot gets a wrong
 * magic number, kexec invalid flags, swapon and acct a path that does not
 * exist; for these, an error other than EPERM/EACCES/ENOSYS means the call
 * got past every permission check ("reached"), which is what counts. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/keyctl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/quota.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { P_OK = 0, P_DENIED = 1, P_USAGE = 2, P_NA = 3, P_WRONG = 4 };
/* How an error counts: V_REACHED makes any errno but EPERM, EACCES and
 * ENOSYS a success (the arguments were meant to be rejected); V_NOSYS_NA
 * makes ENOSYS "not in this kernel" where the filter never answers ENOSYS. */
enum { V_EXACT = 0, V_REACHED = 1, V_NOSYS_NA = 2 };

#define FSOPEN_CLOEXEC_ 0x1
#define OPEN_TREE_CLONE_ 0x1
#define MOVE_MOUNT_F_EMPTY_PATH_ 0x4
#define UFFD_USER_MODE_ONLY_ 0x1
#define X32_BIT 0x40000000L
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static const char *probe_name = "probe";

static int note(const char *what, int e)
{
	const char *n = strerrorname_np(e);
	fprintf(stderr, "probe %s: %s: %s (%s)\n", probe_name, what, n ? n : "?", strerror(e));
	return 0;
}

static int verdict(long rc, int how)
{
	if (rc >= 0)
		return P_OK;
	int e = errno;
	if ((how & V_NOSYS_NA) && e == ENOSYS) {
		note("not in this kernel", e);
		return P_NA;
	}
	if ((how & V_REACHED) && e != EPERM && e != EACCES && e != ENOSYS) {
		note("reached the kernel", e);
		return P_OK;
	}
	note("denied", e);
	return P_DENIED;
}

/* Runs fn in a child; a child killed by SIGSYS (the filter's answer to a
 * foreign ABI) is denied, other exits pass through. */
static int in_child(int (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return verdict(-1, V_EXACT);
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "probe %s: denied: killed by signal %d (%s)\n", probe_name,
			WTERMSIG(st), strsignal(WTERMSIG(st)));
		return P_DENIED;
	}
	return WEXITSTATUS(st);
}

static long parse_num(const char *s)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 0);
	if (errno || end == s || *end) {
		fprintf(stderr, "probe %s: not a number: '%s'\n", probe_name, s);
		exit(P_USAGE);
	}
	return v;
}

/* ---- keyring, bpf, perf, userfaultfd, io_uring, kcmp, pidfd ---- */

static int p_keyctl(char **a)
{
	(void)a;
	return verdict(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1),
		       V_EXACT);
}

static int p_add_key(char **a)
{
	(void)a;
	return verdict(syscall(SYS_add_key, "user", "sbxrun-probe", "x", 1,
			       KEY_SPEC_PROCESS_KEYRING), V_EXACT);
}

static int p_request_key(char **a)
{
	(void)a;
	return verdict(syscall(SYS_request_key, "user", "sbxrun-probe-absent", NULL, 0), V_REACHED);
}

static int p_bpf(char **a)
{
	(void)a;
	union bpf_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_ARRAY;
	attr.key_size = 4;
	attr.value_size = 4;
	attr.max_entries = 1;
	return verdict(syscall(SYS_bpf, BPF_MAP_CREATE, &attr, sizeof(attr)), V_NOSYS_NA);
}

/* A software clock on itself, user space only: what perf_event_paranoid 2
 * still lets an unprivileged process do. */
static int p_perf_event_open(char **a)
{
	(void)a;
	struct perf_event_attr attr;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	attr.exclude_kernel = 1;
	attr.exclude_hv = 1;
	return verdict(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0), V_NOSYS_NA);
}

static int p_userfaultfd(char **a)
{
	(void)a;
	long rc = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY_);
	if (rc < 0 && errno == EINVAL) /* before 5.11: no user-mode-only flag */
		rc = syscall(SYS_userfaultfd, O_CLOEXEC);
	return verdict(rc, V_NOSYS_NA);
}

static int p_io_uring_setup(char **a)
{
	(void)a;
	struct io_uring_params p;
	memset(&p, 0, sizeof(p));
	return verdict(syscall(SYS_io_uring_setup, 1, &p), V_NOSYS_NA);
}

static int p_kcmp(char **a)
{
	(void)a;
	return verdict(syscall(SYS_kcmp, getpid(), getpid(), 1 /* KCMP_VM */, 0, 0), V_NOSYS_NA);
}

static int p_pidfd_getfd(char **a)
{
	(void)a;
	long pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0) {
		note("pidfd_open", errno);
		return P_NA;
	}
	return verdict(syscall(SYS_pidfd_getfd, pidfd, pidfd, 0), V_NOSYS_NA);
}

/* ---- mounts and roots ---- */

static int p_mount(char **a)
{
	(void)a;
	char dir[] = "/tmp/sbxrun-probe-XXXXXX";
	if (!mkdtemp(dir)) { /* a failed preparation is no verdict on mount */
		note("cannot make a mount point in /tmp", errno);
		return P_NA;
	}
	int rc = verdict(mount("none", dir, "tmpfs", 0, "size=4k"), V_EXACT);
	if (rc == P_OK)
		umount2(dir, MNT_DETACH);
	rmdir(dir);
	return rc;
}

static int p_fsopen(char **a)
{
	(void)a;
	return verdict(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC_), V_EXACT);
}

static int p_open_tree(char **a)
{
	(void)a;
	return verdict(syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLONE_ | O_CLOEXEC),
		       V_REACHED);
}

static int p_move_mount(char **a)
{
	(void)a;
	return verdict(syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH_),
		       V_REACHED);
}

static int p_pivot_root(char **a)
{
	(void)a;
	return verdict(syscall(SYS_pivot_root, "/sbxrun-probe-absent", "/sbxrun-probe-absent"),
		       V_REACHED);
}

static int p_chroot(char **a)
{
	(void)a;
	return verdict(chroot("/"), V_EXACT);
}

/* ---- namespaces ---- */

static int p_unshare_user(char **a)
{
	(void)a;
	return verdict(unshare(CLONE_NEWUSER), V_EXACT);
}

static int p_unshare_net(char **a)
{
	(void)a;
	return verdict(unshare(CLONE_NEWNET), V_EXACT);
}

static int p_setns(char **a)
{
	(void)a;
	int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		note("cannot open /proc/self/ns/net", errno);
		return P_NA;
	}
	return verdict(setns(fd, CLONE_NEWNET), V_EXACT);
}

static int p_clone_newuser(char **a)
{
	(void)a;
	long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return verdict(pid, V_EXACT);
}

static int p_clone3(char **a)
{
	(void)a;
	uint64_t args[11] = { 0 }; /* struct clone_args, version 2 */
	args[4] = SIGCHLD;         /* exit_signal */
	long pid = syscall(SYS_clone3, args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return verdict(pid, V_EXACT);
}

/* ---- the machine ---- */

static int p_kexec_load(char **a)
{
	(void)a;
	return verdict(syscall(SYS_kexec_load, 0, 0, NULL, 0x8000UL /* no such flag */),
		       V_REACHED | V_NOSYS_NA);
}

static int p_init_module(char **a)
{
	(void)a;
	return verdict(syscall(SYS_init_module, NULL, 0, ""), V_REACHED | V_NOSYS_NA);
}

static int p_finit_module(char **a)
{
	(void)a;
	return verdict(syscall(SYS_finit_module, -1, "", 0), V_REACHED | V_NOSYS_NA);
}

static int p_reboot(char **a)
{
	(void)a;
	/* magic numbers 0: the kernel answers EINVAL after its permission check */
	return verdict(syscall(SYS_reboot, 0, 0, 0, NULL), V_REACHED);
}

static int p_swapon(char **a)
{
	(void)a;
	return verdict(syscall(SYS_swapon, "/sbxrun-probe-absent", 0), V_REACHED | V_NOSYS_NA);
}

static int p_acct(char **a)
{
	(void)a;
	return verdict(syscall(SYS_acct, "/sbxrun-probe-absent"), V_REACHED | V_NOSYS_NA);
}

static int p_quotactl(char **a)
{
	(void)a;
	return verdict(syscall(SYS_quotactl, QCMD(Q_SYNC, USRQUOTA), NULL, 0, NULL),
		       V_REACHED | V_NOSYS_NA);
}

/* A real handle for / where the file system gives one (overlayfs often does
 * not); otherwise a made-up one, which a permitted call rejects as stale. */
static int p_open_by_handle_at(char **a)
{
	(void)a;
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h;
	int mount_id, how = V_EXACT;
	memset(&h, 0, sizeof(h));
	h.fh.handle_bytes = MAX_HANDLE_SZ;
	if (name_to_handle_at(AT_FDCWD, "/", &h.fh, &mount_id, 0) < 0) {
		h.fh.handle_bytes = 8;
		h.fh.handle_type = 1;
		how = V_REACHED;
	}
	int mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return verdict(open_by_handle_at(mfd, &h.fh, O_RDONLY | O_CLOEXEC), how);
}

static int p_syslog(char **a)
{
	(void)a;
	return verdict(syscall(SYS_syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0), V_EXACT);
}

/* Sets the persona and, unless VALUE is the query, reads it back: a
 * permitted value must really have taken effect. */
static int p_personality(char **a)
{
	unsigned long v = a[0] ? (unsigned long)parse_num(a[0]) : 0x0400000 /* READ_IMPLIES_EXEC */;
	int r = verdict(syscall(SYS_personality, v), V_EXACT);
	if (r != P_OK || v == 0xffffffffUL)
		return r;
	long now = syscall(SYS_personality, 0xffffffffUL);
	if (now != (long)v) {
		fprintf(stderr, "probe personality: set %#lx but reads back %#lx\n", v, now);
		return P_WRONG;
	}
	return P_OK;
}

/* ---- terminals ---- */

/* A new pseudo-terminal's slave, made the controlling terminal of a new
 * session (TIOCSTI needs that, or CAP_SYS_ADMIN); -1 if there is none. */
static int own_tty(int *master)
{
	*master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (*master < 0 || grantpt(*master) < 0 || unlockpt(*master) < 0)
		return -1;
	const char *name = ptsname(*master);
	if (!name || setsid() < 0)
		return -1;
	return open(name, O_RDWR | O_CLOEXEC);
}

static int tiocsti_child(void)
{
	int master, fd = own_tty(&master);
	if (fd < 0) {
		note("no pseudo-terminal", errno);
		return P_NA;
	}
	char c = 'x';
	return verdict(ioctl(fd, TIOCSTI, &c), V_EXACT);
}

/* With an fd number: that terminal (e.g. one sbxrun handed in); without,
 * a pseudo-terminal of its own, so the host control types into nothing. */
static int p_tiocsti(char **a)
{
	if (!a[0])
		return in_child(tiocsti_child);
	char c = '\0';
	return verdict(ioctl((int)parse_num(a[0]), TIOCSTI, &c), V_EXACT);
}

/* TIOCLINUX on a pseudo-terminal: a permitted call gets ENOTTY from the
 * tty layer (it is a console-only request); the filter answers EPERM. */
static int p_tioclinux(char **a)
{
	(void)a;
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master < 0) {
		note("no pseudo-terminal", errno);
		return P_NA;
	}
	char sub = 6; /* TIOCL_GETSHIFTSTATE */
	return verdict(ioctl(master, TIOCLINUX, &sub), V_REACHED);
}

/* ---- sockets ---- */

/* Not a probe: a fork-and-exit chain, for 61-snapshot's pause. Each
 * generation appends its number and the time (CLOCK_REALTIME, in us) to
 * DIR/log, makes DIR/n/NUMBER, forks the
 * next and exits: one process at a time, each an orphan of the one
 * before. Runs until killed. */
static int p_fork_chain(char **a)
{
	char path[4096];

	for (unsigned long n = 1;; n++) {
		snprintf(path, sizeof(path), "%s/log", a[0]);
		int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		struct timespec t;
		clock_gettime(CLOCK_REALTIME, &t);
		if (fd < 0 || dprintf(fd, "%lu %lld\n", n, (long long)t.tv_sec * 1000000 + t.tv_nsec / 1000) < 0)
			return P_USAGE;
		close(fd);
		snprintf(path, sizeof(path), "%s/n/%lu", a[0], n);
		if ((fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644)) < 0)
			return P_USAGE;
		close(fd);
		pid_t pid;
		while ((pid = fork()) < 0)
			usleep(1000);
		if (pid > 0)
			_exit(0);
	}
}

/* Not a probe: DIR/f0..f31 swapped with FIFOs (RENAME_EXCHANGE) as fast as
 * it goes, so that a reader that stats a regular file opens a FIFO: a
 * snapshot's copy must not block on one. Runs until killed. */
static int p_swap_fifo(char **a)
{
	char f[4096], p[4096];

	for (int i = 0; i < 32; i++) {
		snprintf(f, sizeof(f), "%s/f%d", a[0], i);
		snprintf(p, sizeof(p), "%s/p%d", a[0], i);
		int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "x\n", 2) != 2 || (unlink(p), mknod(p, S_IFIFO | 0644, 0)) < 0)
			return P_USAGE;
		close(fd);
	}
	for (unsigned i = 0;; i = (i + 1) % 32) {
		snprintf(f, sizeof(f), "%s/f%u", a[0], i);
		snprintf(p, sizeof(p), "%s/p%u", a[0], i);
		if (syscall(SYS_renameat2, AT_FDCWD, f, AT_FDCWD, p, 2 /* RENAME_EXCHANGE */) < 0)
			return P_USAGE;
	}
}

static const struct {
	const char *name;
	int family, type, proto;
} families[] = {
	{ "vsock", AF_VSOCK, SOCK_STREAM, 0 },
	{ "packet", AF_PACKET, SOCK_DGRAM, 0 },
	{ "bluetooth", AF_BLUETOOTH, SOCK_RAW, 1 /* BTPROTO_HCI */ },
	{ "alg", AF_ALG, SOCK_SEQPACKET, 0 },
	{ "unix", AF_UNIX, SOCK_STREAM, 0 },
	{ "inet", AF_INET, SOCK_STREAM, 0 },
	{ "inet6", AF_INET6, SOCK_STREAM, 0 },
	{ "netlink", AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */ },
};

static int p_socket(char **a)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (strcmp(a[0], families[i].name) == 0)
			return verdict(socket(families[i].family, families[i].type | SOCK_CLOEXEC,
					      families[i].proto), V_EXACT);
	fprintf(stderr, "probe socket: unknown family '%s'\n", a[0]);
	return P_USAGE;
}

/* "@name" (abstract unix) or "IPv4:PORT". */
static socklen_t parse_addr(const char *s, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (s[0] == '@') {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		size_t n = strlen(s + 1);
		if (n == 0 || n >= sizeof(un->sun_path) - 1)
			exit(P_USAGE);
		un->sun_family = AF_UNIX;
		memcpy(un->sun_path + 1, s + 1, n);
		return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	}
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	char host[64];
	const char *colon = strrchr(s, ':');
	if (!colon || (size_t)(colon - s) >= sizeof(host))
		exit(P_USAGE);
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	in->sin_family = AF_INET;
	in->sin_port = htons((uint16_t)parse_num(colon + 1));
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		exit(P_USAGE);
	return sizeof(*in);
}

/* Connects with a 3 s limit; ENETUNREACH, ECONNREFUSED and ETIMEDOUT are
 * named on stderr, so a test can tell "no route" from "nobody there". */
static int p_connect(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(a[0], &ss);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return verdict(fd, V_EXACT);
	if (connect(fd, (struct sockaddr *)&ss, len) == 0)
		return P_OK;
	if (errno != EINPROGRESS)
		return verdict(-1, V_EXACT);
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	if (poll(&p, 1, 3000) == 0) {
		errno = ETIMEDOUT;
		return verdict(-1, V_EXACT);
	}
	int e = 0;
	socklen_t el = sizeof(e);
	getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
	errno = e;
	return verdict(e ? -1 : 0, V_EXACT);
}

/* A listener for the host-side controls: prints "ready", accepts forever. */
static int p_listen(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len = parse_addr(a[0], &ss);
	int one = 1, fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 16) < 0)
		return verdict(-1, V_EXACT);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (c >= 0)
			close(c);
	}
}

/* ---- other ABIs ---- */

static int x32_child(void)
{
	long rc = syscall(X32_BIT | SYS_getpid);
	return rc < 0 && errno == ENOSYS ? (note("x32 not enabled", errno), P_NA) : verdict(rc, V_EXACT);
}

static int i386_child(void)
{
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L /* getpid */)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret == -ENOSYS) {
		note("i386 syscalls not enabled", ENOSYS);
		return P_NA;
	}
	errno = ret < 0 ? (int)-ret : 0;
	return verdict(ret < 0 ? -1 : 0, V_EXACT);
#else
	return P_NA;
#endif
}

static int p_x32(char **a)
{
	(void)a;
#if defined(__x86_64__)
	return in_child(x32_child);
#else
	return P_NA;
#endif
}

static int p_i386(char **a)
{
	(void)a;
	return in_child(i386_child);
}

/* ---- processes ---- */

static int p_ptrace_child(char **a)
{
	(void)a;
	pid_t pid = fork();
	if (pid == 0) {
		for (;;)
			pause();
	}
	int rc = verdict(ptrace(PTRACE_SEIZE, pid, NULL, NULL), V_EXACT);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc;
}

static int p_ptrace_attach(char **a)
{
	return verdict(ptrace(PTRACE_SEIZE, (pid_t)parse_num(a[0]), NULL, NULL), V_EXACT);
}

static int p_kill(char **a)
{
	int sig = a[1] ? (int)parse_num(a[1]) : 0;
	return verdict(kill((pid_t)parse_num(a[0]), sig), V_EXACT);
}

/* ---- files ---- */

static int p_read(char **a)
{
	char buf[1];
	int fd = open(a[0], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return verdict(fd, V_EXACT);
	return verdict(read(fd, buf, sizeof(buf)), V_EXACT);
}

/* Opens (creating if absent, never truncating) and writes DATA if given:
 * the tests choose DATA so that a permitted write is harmless. */
static int p_write(char **a)
{
	int fd = open(a[0], O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0 || !a[1])
		return verdict(fd, V_EXACT);
	return verdict(write(fd, a[1], strlen(a[1])), V_EXACT);
}

static int p_open(char **a)
{
	return verdict(open(a[0], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), V_EXACT);
}

/* ---- privileges and what crossed over ---- */

/* Success if any capability set of this process is not empty. */
static int p_caps(char **a)
{
	(void)a;
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	int any = 0;
	while (f && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Cap", 3) != 0 && strncmp(line, "NoNewPrivs", 10) != 0)
			continue;
		fputs(line, stderr);
		char *colon = strchr(line, ':');
		if (strncmp(line, "Cap", 3) == 0 && colon && strtoull(colon + 1, NULL, 16) != 0)
			any = 1;
	}
	if (!f) {
		note("cannot read /proc/self/status", errno);
		return P_NA;
	}
	return any ? P_OK : P_DENIED;
}

/* Run from a setuid or setgid copy: success if the exec changed identity. */
static int p_setuid_gain(char **a)
{
	(void)a;
	fprintf(stderr, "probe setuid-gain: uid %d euid %d gid %d egid %d\n", (int)getuid(),
		(int)geteuid(), (int)getgid(), (int)getegid());
	return geteuid() != getuid() || getegid() != getgid() ? P_OK : P_DENIED;
}

static int p_fd(char **a)
{
	return verdict(fcntl((int)parse_num(a[0]), F_GETFD), V_EXACT);
}

static int p_env(char **a)
{
	if (getenv(a[0]))
		return P_OK;
	fprintf(stderr, "probe env: %s is not set\n", a[0]);
	return P_DENIED;
}

/* ---- per-user counts ---- */

/* Opens inotify instances until the kernel refuses one; past this process's
 * fd limit, a child holds more (closing its copies: the parent's keep the
 * instances). Prints "inotify-fill: N ERRNO" and holds them SECONDS, so a
 * second probe can try for one meanwhile. Success: the refusal was EMFILE
 * before any fd limit, i.e. a per-user count. */
static int p_inotify_fill(char **a)
{
	struct rlimit rl = { 0, 0 };
	long held = 0;
	int e = 0, fds[4096];

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (int level = 0; level < 16; level++) {
		int fd, mine = 0, st = 0;
		while (mine < 4096 && (fd = inotify_init1(IN_CLOEXEC)) >= 0) {
			fds[mine++] = fd;
			held++;
		}
		e = mine < 4096 ? errno : EMFILE;
		if (e != EMFILE || (rl.rlim_cur > (rlim_t)mine + 8 && mine < 4096))
			break;
		/* this process's fds are full: a child holds more */
		pid_t pid = fork();
		if (pid > 0) {
			waitpid(pid, &st, 0);
			return WIFEXITED(st) ? WEXITSTATUS(st) : P_DENIED;
		}
		if (pid < 0)
			break;
		for (int i = 0; i < mine; i++)
			close(fds[i]);
	}
	printf("inotify-fill: %ld %s\n", held, strerrorname_np(e) ? strerrorname_np(e) : "?");
	fflush(stdout);
	sleep(a[0] ? (unsigned)parse_num(a[0]) : 0);
	return e == EMFILE ? P_OK : P_DENIED;
}

static int p_inotify(char **a)
{
	(void)a;
	return verdict(inotify_init1(IN_CLOEXEC), V_EXACT);
}

/* Maps MIB MiB (private, or "shared": shmem, which RLIMIT_DATA does not
 * see), touches every page, says so on stdout, holds it SECONDS. */
static int p_alloc(char **a)
{
	size_t len = (size_t)parse_num(a[0]) << 20;
	int shared = a[1] && a[2] && strcmp(a[2], "shared") == 0;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_ANONYMOUS | (shared ? MAP_SHARED : MAP_PRIVATE), -1, 0);
	if (m == MAP_FAILED)
		return verdict(-1, V_EXACT);
	for (size_t i = 0; i < len; i += 4096)
		m[i] = 1;
	printf("allocated %s\n", a[0]);
	fflush(stdout);
	sleep(a[1] ? (unsigned)parse_num(a[1]) : 0);
	return P_OK;
}

/* Not a probe: runs CMD with every mount call refused with EPERM (a seccomp
 * filter written out by hand, x86_64's numbers), as AppArmor's
 * unprivileged_userns profile refuses them: 41-doctor lays out a machine
 * that restricts user namespaces with it. */
static int p_deny_mount(char **a)
{
#define DENY(nr) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), \
		 BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		DENY(165 /* mount */), DENY(428 /* open_tree */), DENY(429 /* move_mount */),
		DENY(430 /* fsopen */), DENY(431 /* fsconfig */), DENY(432 /* fsmount */),
		DENY(442 /* mount_setattr */),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
#undef DENY
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0) {
		perror("probe deny-mount: seccomp");
		return P_USAGE;
	}
	execvp(a[0], a);
	perror(a[0]);
	return 127;
}

static const struct {
	const char *name;
	int (*fn)(char **args);
	int min_args;
	const char *args;
} probes[] = {
	{ "keyctl", p_keyctl, 0, "" }, { "add_key", p_add_key, 0, "" },
	{ "request_key", p_request_key, 0, "" }, { "bpf", p_bpf, 0, "" },
	{ "perf_event_open", p_perf_event_open, 0, "" }, { "userfaultfd", p_userfaultfd, 0, "" },
	{ "io_uring_setup", p_io_uring_setup, 0, "" }, { "kcmp", p_kcmp, 0, "" },
	{ "pidfd_getfd", p_pidfd_getfd, 0, "" }, { "mount", p_mount, 0, "" },
	{ "fsopen", p_fsopen, 0, "" }, { "open_tree", p_open_tree, 0, "" },
	{ "move_mount", p_move_mount, 0, "" }, { "pivot_root", p_pivot_root, 0, "" },
	{ "chroot", p_chroot, 0, "" }, { "unshare-user", p_unshare_user, 0, "" },
	{ "unshare-net", p_unshare_net, 0, "" }, { "setns", p_setns, 0, "" },
	{ "clone-newuser", p_clone_newuser, 0, "" }, { "clone3", p_clone3, 0, "" },
	{ "kexec_load", p_kexec_load, 0, "" }, { "init_module", p_init_module, 0, "" },
	{ "finit_module", p_finit_module, 0, "" }, { "reboot", p_reboot, 0, "" },
	{ "swapon", p_swapon, 0, "" }, { "acct", p_acct, 0, "" },
	{ "quotactl", p_quotactl, 0, "" }, { "open_by_handle_at", p_open_by_handle_at, 0, "" },
	{ "syslog", p_syslog, 0, "" }, { "personality", p_personality, 0, "[VALUE]" },
	{ "tiocsti", p_tiocsti, 0, "[FD]" }, { "tioclinux", p_tioclinux, 0, "" },
	{ "socket", p_socket, 1, "vsock|packet|bluetooth|alg|unix|inet|inet6|netlink" },
	{ "x32", p_x32, 0, "" }, { "i386", p_i386, 0, "" },
	{ "ptrace-child", p_ptrace_child, 0, "" }, { "ptrace-attach", p_ptrace_attach, 1, "PID" },
	{ "kill", p_kill, 1, "PID [SIG]" }, { "read", p_read, 1, "FILE" },
	{ "write", p_write, 1, "FILE [DATA]" }, { "open", p_open, 1, "FILE" },
	{ "caps", p_caps, 0, "" }, { "setuid-gain", p_setuid_gain, 0, "" },
	{ "connect", p_connect, 1, "@ABSTRACT|IPV4:PORT" },
	{ "listen", p_listen, 1, "@ABSTRACT|IPV4:PORT" },
	{ "fd", p_fd, 1, "N" }, { "env", p_env, 1, "VAR" },
	{ "inotify-fill", p_inotify_fill, 0, "[SECONDS]" }, { "inotify", p_inotify, 0, "" },
	{ "alloc", p_alloc, 1, "MIB [SECONDS [shared]]" },
	{ "deny-mount", p_deny_mount, 1, "CMD [ARG...]" },
	{ "fork-chain", p_fork_chain, 1, "DIR" }, { "swap-fifo", p_swap_fifo, 1, "DIR" },
};

static int usage(void)
{
	fprintf(stderr, "usage: probe NAME [ARGS]; exit 0 worked, 1 denied, 2 usage, 3 n/a\n");
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
		fprintf(stderr, "  %s %s\n", probes[i].name, probes[i].args);
	return P_USAGE;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		if (strcmp(argv[1], probes[i].name) != 0)
			continue;
		if (argc - 2 < probes[i].min_args)
			return usage();
		probe_name = probes[i].name;
		return probes[i].fn(argv + 2);
	}
	return usage();
}
