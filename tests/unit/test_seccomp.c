/* test_seccomp.c - the default seccomp filter against the real kernel: each
 * check forks a child that loads the filter and makes one syscall directly,
 * so the verdict is the filter's even where the kernel or the caller's
 * privileges could not show it (x32, syslog as root, ...). Runs as root and
 * as an unprivileged user. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/config.h"
#include "sandbox/seccomp.h"
#include "unit.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#define X32_BIT 0x40000000L
#define KILLED (-SIGSYS) /* expected verdict: killed by SIGSYS */

struct mode {
	int seccomp, ptrace, single_uid;
	int ns_maker; /* seccomp_apply_ns_maker, in a new user namespace (2: with userns) */
};
static const struct mode dflt = { SBX_ON, 1, 0 };
static const struct mode noptrace = { SBX_ON, 0, 0 };
static const struct mode single = { SBX_ON, 1, 1 };
static const struct mode off = { SBX_OFF, 1, 0 };
static const struct mode ns_maker = { SBX_ON, 1, 0, 1 };
static const struct mode ns_maker_user = { SBX_ON, 1, 0, 2 };

static char chown_path[] = "/tmp/sbx-unit-seccomp-XXXXXX";

/* 0 when the call succeeded, else its errno. */
static int res(long rc)
{
	return rc < 0 ? errno : 0;
}

/* The filter of a session's pid 1, in a user namespace of its own, where
 * the namespaces it may make can really be made. 77: no user namespaces. */
static int ns_maker_child(const struct sbx_config *cfg, int userns, int (*fn)(void))
{
	struct sbx_err err = { 0 };
	struct sbx_bpf bpf;

	uid_t uid = geteuid();
	gid_t gid = getegid();
	char map[64];

	if (unshare(CLONE_NEWUSER) < 0)
		return 77;
	/* mapped as a sandbox is (root to the caller): a nested user
	 * namespace is then the filter's to refuse, not the kernel's */
	int fd = open("/proc/self/setgroups", O_WRONLY);
	if (fd >= 0) {
		(void)!write(fd, "deny", 4);
		close(fd);
	}
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)uid);
	if ((fd = open("/proc/self/uid_map", O_WRONLY)) >= 0) {
		(void)!write(fd, map, strlen(map));
		close(fd);
	}
	snprintf(map, sizeof(map), "0 %u 1\n", (unsigned)gid);
	if ((fd = open("/proc/self/gid_map", O_WRONLY)) >= 0) {
		(void)!write(fd, map, strlen(map));
		close(fd);
	}
	if (seccomp_compile(cfg, 0, &bpf, &err) < 0 || seccomp_apply_ns_maker(&bpf, userns, &err) < 0) {
		fprintf(stderr, "seccomp_apply_ns_maker: %s (%d)\n", err.msg, err.errnum);
		return 251;
	}
	return fn();
}

/* Runs fn in a child under the filter of mode m; returns its errno
 * result, or minus the signal that killed it. */
static int under_filter(const struct mode *m, int (*fn)(void))
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		struct sbx_config cfg;
		struct sbx_err err = { 0 };
		config_init(&cfg);
		cfg.seccomp = m->seccomp;
		cfg.ptrace = m->ptrace;
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			_exit(250);
		if (m->ns_maker)
			_exit(ns_maker_child(&cfg, m->ns_maker == 2, fn));
		if (seccomp_install(&cfg, m->single_uid, &err) < 0) {
			fprintf(stderr, "seccomp_install: %s (%d)\n", err.msg, err.errnum);
			_exit(251);
		}
		_exit(fn());
	}
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		return 255;
	return WIFSIGNALED(st) ? -WTERMSIG(st) : WEXITSTATUS(st);
}

static void expect(const char *what, const struct mode *m, int (*fn)(void), int want)
{
	int got = under_filter(m, fn);
	if (m->ns_maker && got == 77)
		return; /* no user namespaces here: nothing to show */
	CHECK(got == want);
	if (got != want)
		fprintf(stderr, "    %s: expected %d, got %d\n", what, want, got);
}

static int t_keyctl(void) { return res(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)); }
static int t_add_key(void) { return res(syscall(SYS_add_key, "user", "sbx", "x", 1, KEY_SPEC_PROCESS_KEYRING)); }
static int t_bpf(void) { return res(syscall(SYS_bpf, 0, NULL, 0)); }
static int t_perf(void) { return res(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0)); }
static int t_uffd(void) { return res(syscall(SYS_userfaultfd, O_CLOEXEC)); }
static int t_io_uring(void) { return res(syscall(SYS_io_uring_setup, 1, NULL)); }
static int t_kcmp(void) { return res(syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0)); }
static int t_pidfd_getfd(void) { return res(syscall(SYS_pidfd_getfd, -1, 0, 0)); }
static int t_mount(void) { return res(mount("none", "/tmp", "tmpfs", 0, NULL)); }
static int t_fsopen(void) { return res(syscall(SYS_fsopen, "tmpfs", 0)); }
static int t_open_tree(void) { return res(syscall(SYS_open_tree, AT_FDCWD, "/", 1)); }
static int t_move_mount(void) { return res(syscall(SYS_move_mount, -1, "", AT_FDCWD, "/", 0)); }
static int t_pivot_root(void) { return res(syscall(SYS_pivot_root, "/", "/")); }
static int t_chroot(void) { return res(chroot("/")); }
static int t_setns(void) { return res(setns(-1, 0)); }
static int t_reboot(void) { return res(syscall(SYS_reboot, 0, 0, 0, NULL)); }
static int t_syslog(void) { return res(syscall(SYS_syslog, 10, NULL, 0)); }
static int t_kexec(void) { return res(syscall(SYS_kexec_load, 0, 0, NULL, 0x8000)); }
static int t_finit_module(void) { return res(syscall(SYS_finit_module, -1, "", 0)); }
static int t_open_by_handle(void) { return res(syscall(SYS_open_by_handle_at, -1, NULL, 0)); }

static int t_unshare_user(void) { return res(unshare(CLONE_NEWUSER)); }
static int t_unshare_net(void) { return res(unshare(CLONE_NEWNET)); }
static int t_unshare_time(void) { return res(unshare(CLONE_NEWTIME)); }
static int t_unshare_files(void) { return res(unshare(CLONE_FILES)); }

static int raw_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	waitpid(pid, NULL, 0);
	return 0;
}
static int t_clone_user(void) { return raw_clone(CLONE_NEWUSER); }
static int t_clone_pid(void) { return raw_clone(CLONE_NEWPID); }
static int t_clone_plain(void) { return raw_clone(0); }
static int t_clone_pid_net(void) { return raw_clone(CLONE_NEWPID | CLONE_NEWNET); }
static int t_clone_pid_user(void) { return raw_clone(CLONE_NEWPID | CLONE_NEWUSER); }
static int t_unshare_ns(void) { return res(unshare(CLONE_NEWNS)); }
static int t_unshare_ns_net(void) { return res(unshare(CLONE_NEWNS | CLONE_NEWNET)); }
/* In a mount namespace of its own: what a command's init does to its /proc */
static int t_unshare_ns_mount(void)
{
	if (unshare(CLONE_NEWNS) < 0)
		return 254;
	return res(mount("none", "/tmp", "tmpfs", 0, NULL));
}
static int t_clone3(void)
{
	uint64_t args[11] = { 0 };
	args[4] = SIGCHLD; /* exit_signal */
	long pid = syscall(SYS_clone3, args, 88);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return res(pid);
}

static int t_pers_rie(void) { return res(personality(READ_IMPLIES_EXEC)); }
static int t_pers_bsd(void) { return res(personality(PER_BSD)); }
static int t_pers_fffe(void) { return res(syscall(SYS_personality, 0xfffffffeUL)); }
static int t_pers_high(void) { return res(syscall(SYS_personality, 0x100000000UL)); }
static int t_pers_query(void) { return res(personality(0xffffffff)); }
static int t_pers_norand(void) { return res(personality(ADDR_NO_RANDOMIZE)); }
static int t_pers_linux32(void) { return res(personality(PER_LINUX32)); }
static int t_pers_all_bits(void) { return res(personality(PER_LINUX32 | UNAME26 | ADDR_NO_RANDOMIZE)); }
static int t_pers_linux(void) { return res(personality(PER_LINUX)); }
static int t_pers_uname26(void) { return res(personality(PER_LINUX | UNAME26)); }
static int t_pers_uname26_32(void) { return res(personality(PER_LINUX32 | UNAME26)); }
static int t_pers_page_zero(void) { return res(personality(MMAP_PAGE_ZERO)); }
static int t_pers_bit31(void) { return res(syscall(SYS_personality, 0x80000000UL)); }
static int t_pers_query_high(void) { return res(syscall(SYS_personality, 0x1ffffffffUL)); }

static int ioctl_null(unsigned long req)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	char c = 'x';
	return res(syscall(SYS_ioctl, fd, req, &c));
}
static int t_tiocsti(void) { return ioctl_null(TIOCSTI); }
static int t_tiocsti_high(void) { return ioctl_null(TIOCSTI | (1UL << 32)); }
static int t_tioclinux(void) { return ioctl_null(TIOCLINUX); }
static int t_tcgets(void) { return ioctl_null(TCGETS); }

static int sock(unsigned long family, int type)
{
	return res(syscall(SYS_socket, family, type | SOCK_CLOEXEC, 0));
}
static int t_vsock(void) { return sock(AF_VSOCK, SOCK_STREAM); }
static int t_packet(void) { return sock(AF_PACKET, SOCK_DGRAM); }
static int t_alg(void) { return sock(AF_ALG, SOCK_SEQPACKET); }
static int t_unix_high(void) { return sock(AF_UNIX | (1UL << 32), SOCK_STREAM); }
static int t_unix(void) { return sock(AF_UNIX, SOCK_STREAM); }
static int t_inet(void) { return sock(AF_INET, SOCK_DGRAM); }
static int t_netlink(void) { return sock(AF_NETLINK, SOCK_RAW); }
/* Every family but the four allowed ones is refused by the filter; returns
 * the first family (+1) that is not. */
static int t_all_other_families(void)
{
	for (unsigned long f = 0; f < 64; f++) {
		if (f == AF_UNIX || f == AF_INET || f == AF_INET6 || f == AF_NETLINK)
			continue;
		if (sock(f, SOCK_DGRAM) != EAFNOSUPPORT || sock(f, SOCK_STREAM) != EAFNOSUPPORT)
			return (int)f + 1;
	}
	return 0;
}
static int t_pair_tipc(void)
{
	int sv[2];
	return res(socketpair(AF_TIPC, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv));
}
static int t_pair_unix(void)
{
	int sv[2];
	return res(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
}

static int t_traceme(void) { return res(ptrace(PTRACE_TRACEME, 0, NULL, NULL)); }
static int t_vm_readv(void) { return res(syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0)); }

/* Succeeds without effect in single-uid mode: the owner must not change. */
static int t_chown(void)
{
	struct stat a, b;
	if (stat(chown_path, &a) < 0)
		return 254;
	int e = res(chown(chown_path, a.st_uid + 4242, a.st_gid + 4242));
	if (stat(chown_path, &b) < 0 || b.st_uid != a.st_uid)
		return 253;
	return e;
}
static int t_setgroups(void) { return res(syscall(SYS_setgroups, 0, NULL)); }

static int t_x32(void) { return res(syscall(X32_BIT | SYS_getpid)); }
static int t_i386(void)
{
#if defined(__x86_64__)
	long ret;
	/* the kernel's own SIGSEGV where there is no i386 ABI, not ASan's
	 * handler (its report, then exit 1, in every sanitizer run's log) */
	signal(SIGSEGV, SIG_DFL);
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
	return ret < 0 ? (int)-ret : 0;
#else
	return 0;
#endif
}
static int t_seccomp_mode(void) { return prctl(PR_GET_SECCOMP, 0, 0, 0, 0); }

static void check_denied(void)
{
	expect("keyctl", &dflt, t_keyctl, EPERM);
	expect("add_key", &dflt, t_add_key, EPERM);
	expect("bpf", &dflt, t_bpf, EPERM);
	expect("perf_event_open", &dflt, t_perf, EPERM);
	expect("userfaultfd", &dflt, t_uffd, EPERM);
	expect("io_uring_setup", &dflt, t_io_uring, EPERM);
	expect("kcmp", &dflt, t_kcmp, EPERM);
	expect("pidfd_getfd", &dflt, t_pidfd_getfd, EPERM);
	expect("mount", &dflt, t_mount, EPERM);
	expect("fsopen", &dflt, t_fsopen, ENOSYS);
	expect("open_tree", &dflt, t_open_tree, ENOSYS);
	expect("move_mount", &dflt, t_move_mount, ENOSYS);
	expect("pivot_root", &dflt, t_pivot_root, EPERM);
	expect("chroot", &dflt, t_chroot, EPERM);
	expect("setns", &dflt, t_setns, EPERM);
	expect("reboot", &dflt, t_reboot, EPERM);
	expect("syslog", &dflt, t_syslog, EPERM);
	expect("kexec_load", &dflt, t_kexec, EPERM);
	expect("finit_module", &dflt, t_finit_module, EPERM);
	expect("open_by_handle_at", &dflt, t_open_by_handle, EPERM);
}

static void check_namespaces(void)
{
	expect("unshare user", &dflt, t_unshare_user, EPERM);
	expect("unshare net", &dflt, t_unshare_net, EPERM);
	expect("unshare time", &dflt, t_unshare_time, EPERM);
	expect("unshare files", &dflt, t_unshare_files, 0);
	expect("clone newuser", &dflt, t_clone_user, EPERM);
	expect("clone newpid", &dflt, t_clone_pid, EPERM);
	expect("clone plain", &dflt, t_clone_plain, 0);
	expect("clone3", &dflt, t_clone3, ENOSYS);
	expect("clone newuser, filter off", &off, t_clone_user, 0);
}

static void check_personality_ioctl(void)
{
	expect("personality READ_IMPLIES_EXEC", &dflt, t_pers_rie, EPERM);
	expect("personality PER_BSD", &dflt, t_pers_bsd, EPERM);
	expect("personality 0xfffffffe", &dflt, t_pers_fffe, EPERM);
	expect("personality high bits", &dflt, t_pers_high, EPERM);
	expect("personality query", &dflt, t_pers_query, 0);
	/* only Docker's and Flatpak's values: 0, 8, their UNAME26 forms, the query */
	expect("personality ADDR_NO_RANDOMIZE", &dflt, t_pers_norand, EPERM);
	expect("personality LINUX32|UNAME26|ADDR_NO_RANDOMIZE", &dflt, t_pers_all_bits, EPERM);
	expect("personality PER_LINUX", &dflt, t_pers_linux, 0);
	expect("personality PER_LINUX32", &dflt, t_pers_linux32, 0);
	expect("personality UNAME26", &dflt, t_pers_uname26, 0);
	expect("personality PER_LINUX32|UNAME26", &dflt, t_pers_uname26_32, 0);
	expect("personality MMAP_PAGE_ZERO", &dflt, t_pers_page_zero, EPERM);
	expect("personality 0x80000000", &dflt, t_pers_bit31, EPERM);
	expect("personality query with high bits", &dflt, t_pers_query_high, EPERM);
	expect("TIOCSTI", &dflt, t_tiocsti, EPERM);
	expect("TIOCSTI with high bits", &dflt, t_tiocsti_high, EPERM);
	expect("TIOCLINUX", &dflt, t_tioclinux, EPERM);
	expect("TCGETS passes", &dflt, t_tcgets, ENOTTY);
}

static void check_sockets(void)
{
	expect("socket AF_VSOCK", &dflt, t_vsock, EAFNOSUPPORT);
	expect("socket, every other family below 64", &dflt, t_all_other_families, 0);
	expect("socket AF_PACKET", &dflt, t_packet, EAFNOSUPPORT);
	expect("socket AF_ALG", &dflt, t_alg, EAFNOSUPPORT);
	expect("socket AF_UNIX with high bits", &dflt, t_unix_high, EAFNOSUPPORT);
	expect("socketpair AF_TIPC", &dflt, t_pair_tipc, EAFNOSUPPORT);
	expect("socket AF_UNIX", &dflt, t_unix, 0);
	expect("socket AF_INET", &dflt, t_inet, 0);
	expect("socket AF_NETLINK", &dflt, t_netlink, 0);
	expect("socketpair AF_UNIX", &dflt, t_pair_unix, 0);
}

static void check_modes(void)
{
	expect("ptrace allowed", &dflt, t_traceme, 0);
	expect("ptrace = no", &noptrace, t_traceme, EPERM);
	expect("process_vm_readv, ptrace = no", &noptrace, t_vm_readv, EPERM);
	expect("chown in single-uid mode", &single, t_chown, 0);
	expect("setgroups in single-uid mode", &single, t_setgroups, 0);
	expect("seccomp = default loads a filter", &dflt, t_seccomp_mode, 2);
	expect("seccomp = off loads nothing", &off, t_seccomp_mode, 0);
	if (geteuid() != 0)
		expect("chown outside single-uid mode", &dflt, t_chown, EPERM);
}

/* A session's pid 1 may make each command's pid namespace, and its mount
 * namespace with a fresh /proc; nothing else moves. */
static void check_ns_maker(void)
{
	expect("ns maker: clone CLONE_NEWPID", &ns_maker, t_clone_pid, 0);
	expect("ns maker: unshare CLONE_NEWNS", &ns_maker, t_unshare_ns, 0);
	expect("ns maker: mount in its mount namespace", &ns_maker, t_unshare_ns_mount, 0);
	expect("ns maker: plain clone", &ns_maker, t_clone_plain, 0);
	expect("ns maker: clone CLONE_NEWUSER", &ns_maker, t_clone_user, EPERM);
	expect("ns maker: clone CLONE_NEWPID|CLONE_NEWNET", &ns_maker, t_clone_pid_net, EPERM);
	expect("ns maker: clone CLONE_NEWPID|CLONE_NEWUSER", &ns_maker, t_clone_pid_user, EPERM);
	expect("ns maker: unshare CLONE_NEWNET", &ns_maker, t_unshare_net, EPERM);
	expect("ns maker: unshare CLONE_NEWNS|CLONE_NEWNET", &ns_maker, t_unshare_ns_net, EPERM);
	expect("ns maker: unshare CLONE_NEWUSER", &ns_maker, t_unshare_user, EPERM);
	expect("ns maker: clone3", &ns_maker, t_clone3, ENOSYS);
	expect("ns maker: fsopen", &ns_maker, t_fsopen, ENOSYS);
	expect("ns maker: keyctl", &ns_maker, t_keyctl, EPERM);
	expect("ns maker: personality READ_IMPLIES_EXEC", &ns_maker, t_pers_rie, EPERM);
	expect("ns maker: TIOCSTI", &ns_maker, t_tiocsti, EPERM);
	expect("ns maker: a filter", &ns_maker, t_seccomp_mode, 2);
#if defined(__x86_64__)
	expect("ns maker: x32 getpid", &ns_maker, t_x32, KILLED);
#endif
	/* a session with [sandbox] user: unshare(CLONE_NEWUSER) alone, nothing more */
	expect("ns maker, user: unshare CLONE_NEWUSER", &ns_maker_user, t_unshare_user, 0);
	expect("ns maker, user: unshare CLONE_NEWNS", &ns_maker_user, t_unshare_ns, 0);
	expect("ns maker, user: clone CLONE_NEWUSER", &ns_maker_user, t_clone_user, EPERM);
	expect("ns maker, user: unshare CLONE_NEWNS|CLONE_NEWNET", &ns_maker_user, t_unshare_ns_net, EPERM);
	expect("ns maker, user: unshare CLONE_NEWNET", &ns_maker_user, t_unshare_net, EPERM);
}

/* Other ABIs kill: the x32 bit on a native number, and int 0x80. */
static void check_abis(void)
{
#if defined(__x86_64__)
	expect("x32 getpid", &dflt, t_x32, KILLED);
	/* a kernel without the i386 ABI (ia32_emulation off) kills int 0x80
	 * with SIGSEGV itself, without a filter too; with it, the filter kills */
	int bare = under_filter(&off, t_i386);
	expect("i386 getpid", &dflt, t_i386, bare == 0 ? KILLED : bare);
#endif
}

int main(void)
{
	int fd = mkostemp(chown_path, O_CLOEXEC);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	close(fd);
	check_denied();
	check_namespaces();
	check_personality_ioctl();
	check_sockets();
	check_modes();
	check_abis();
	check_ns_maker();
	unlink(chown_path);
	return unit_done("test_seccomp");
}
