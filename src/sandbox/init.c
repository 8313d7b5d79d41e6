/* init.c - the sandbox's pid 1 and the command it starts. pid 1 only
 * reaps and forwards, so once it has set up it hides the caller's command
 * line and confines itself as the command will be (every capability
 * dropped, no_new_privs, the same seccomp filter), and the command inherits
 * that; both walk their rows of the containment list (contain.c). */
#define _GNU_SOURCE
#include "sandbox/init.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "sandbox/contain.h"
#include "term/pty.h"

extern char **environ;

static const char init_title[] = "sbxrun-init";

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static void noop(int sig)
{
	(void)sig;
}

struct exec_report {
	int errnum;
	int code;
	char text[400];
};

static __attribute__((noreturn)) void exec_fail(int fd, int code, int errnum, const char *what)
{
	struct exec_report r = { .errnum = errnum, .code = code };
	snprintf(r.text, sizeof(r.text), "%s", what);
	(void)!write(fd, &r, sizeof(r));
	_exit(code);
}

/* The command child: its rows of the containment list, up to exec; what
 * failed goes to its init over the report pipe. */
static __attribute__((noreturn)) void command_exec(const struct sbx_plan *plan, int report,
						   int slave)
{
	struct sbx_err err = { 0 };
	struct contain c = { .plan = plan, .fd = report, .slave = slave, .signals = forwarded,
			     .nsignals = ARRAY_SIZE(forwarded) };

	contain_walk(&c, CONTAIN_COMMAND, &err);
	exec_fail(report, c.code, err.errnum, err.msg);
}

/* Fields 48 to 51 of /proc/self/stat: where the kernel reads this
 * process's /proc/PID/cmdline and /proc/PID/environ from (arg_start,
 * arg_end, env_start, env_end). execve lays the strings out one after the
 * other: argv's from argv[0] (glibc's program_invocation_name), envp's
 * from envp[0] (environ: sbxrun never changes it), then the executable's
 * name (AT_EXECFN). Taken from there (reading the file costs 0.1 ms here,
 * bench/README.md); the file is read only where they do not fit. */
static int arg_area_in_memory(unsigned long a[4])
{
	unsigned long fn = getauxval(AT_EXECFN);

	a[0] = (unsigned long)program_invocation_name;
	a[1] = a[2] = environ && environ[0] ? (unsigned long)environ[0] : fn;
	a[3] = fn;
	return fn && a[0] < a[1] && a[1] <= a[3] && a[3] - a[0] <= (256UL << 20) &&
	       ((const char *)a[1])[-1] == '\0' ? 0 : -1;
}

static int read_arg_area(unsigned long a[4], struct sbx_err *err)
{
	if (arg_area_in_memory(a) == 0)
		return 0;

	char buf[2048];
	_cleanup_close_ int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (n <= 0)
		return err_sys(err, "init: read /proc/self/stat");
	buf[n] = '\0';
	char *p = strrchr(buf, ')'); /* the end of field 2, the name, which may hold anything */
	for (int field = 3; p && field <= 48; field++)
		p = strchr(p + 1, ' ');
	for (int i = 0; i < 4 && p; i++) {
		errno = 0;
		a[i] = strtoul(p, &p, 10);
		if (errno || (*p != ' ' && *p != '\n'))
			p = NULL;
	}
	if (!p || a[0] > a[1] || a[1] != a[2] || a[2] > a[3] || a[3] - a[0] > (256UL << 20))
		return err_set(err, EINVAL, "init: no argument area in /proc/self/stat");
	return 0;
}

/* pid 1 is a copy of the host's sbxrun process: its /proc/1/cmdline (which
 * every process in the sandbox may read) and /proc/1/environ would be the
 * caller's command line (bind sources, -e values, the --events path) and
 * environment. The kernel reads both from the original argument area, so
 * it is zeroed in place and "sbxrun-init" written at its start; a last
 * argument byte that is not zero then makes the kernel read the command
 * line only up to the first zero (what setproctitle relies on), so that it
 * is exactly "sbxrun-init". Nothing may point into the area after this
 * (the plan holds a copy of the command's argv); environ is emptied. */
static int hide_command_line(struct sbx_err *err)
{
	static char *no_env[] = { NULL };
	unsigned long a[4];

	if (read_arg_area(a, err) < 0)
		return -1;
	prctl(PR_SET_NAME, init_title, 0, 0, 0);
	if (a[3] == a[0])
		return 0;
	char *area = (char *)a[0];
	size_t len = a[3] - a[0], args = a[1] - a[0];
	size_t t = sizeof(init_title) - 1 < len - 1 ? sizeof(init_title) - 1 : len - 1;
	memset(area, 0, len);
	memcpy(area, init_title, t);
	if (args > t + 1)
		area[args - 1] = ' ';
	environ = no_env;
	return 0;
}

static int setup_signals(sigset_t *set)
{
	struct sigaction sa = { .sa_handler = noop };

	/* pid 1 ignores signals it has no handler for, even blocked ones:
	 * install one so that signalfd sees them. */
	sigemptyset(set);
	sigaddset(set, SIGCHLD);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++) {
		sigaction(forwarded[i], &sa, NULL);
		sigaddset(set, forwarded[i]);
	}
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_BLOCK, set, NULL);
	return signalfd(-1, set, SFD_CLOEXEC);
}

static void report_exec_failure(int sync, const struct exec_report *r)
{
	struct sbx_msg m = { .type = SBX_MSG_EXEC_FAILED, .errnum = r->errnum, .code = r->code };
	if (r->code == 127)
		snprintf(m.text, sizeof(m.text), "'%s': command not found", r->text);
	else if (r->code == 126)
		snprintf(m.text, sizeof(m.text), "'%s': cannot execute", r->text);
	else
		snprintf(m.text, sizeof(m.text), "%s", r->text);
	msg_send(sync, &m, NULL, 0);
}

/* Waits for the command; returns its wait status. */
static int wait_command(pid_t cmd, int sfd)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(sfd, &si, sizeof(si));
		if (n != sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			/* Only signals from outside the sandbox (sender pid 0 as seen
			 * from here) are forwarded: the command cannot steer its init. */
			if (si.ssi_pid == 0)
				kill(cmd, (int)si.ssi_signo);
			continue;
		}
		int status;
		pid_t p;
		while ((p = waitpid(-1, &status, WNOHANG)) > 0)
			if (p == cmd)
				return status;
	}
}

/* The terminal is made inside (the sandbox's devpts); the host side gets
 * the master, the command the peer. Returns the peer, or -1 without -t. */
static int open_terminal(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };
	struct sbx_msg m = { .type = SBX_MSG_PTY };
	int master, slave;

	if (!plan->tty)
		return -1;
	if (pty_open(&plan->ws, &master, &slave, &err) < 0) {
		msg_send_error(sync, &err, SBX_ORIGIN_INIT);
		_exit(125);
	}
	msg_send(sync, &m, &master, 1);
	close(master);
	return slave;
}

struct child_args {
	const struct sbx_plan *plan;
	int close_fds[3]; /* the init's: sync socket, signalfd, the report pipe's read end */
	int report, slave;
};

static int command_child(void *arg)
{
	const struct child_args *a = arg;
	for (int i = 0; i < 3; i++)
		close(a->close_fds[i]);
	command_exec(a->plan, a->report, a->slave);
}

/* The child shares the init's memory until it execs, as glibc's
 * posix_spawn does, on a stack of its own, with the init suspended
 * meanwhile: no page tables to copy, nor to tear down at exec (the init is
 * a copy of the large sbxrun process). Its fd table, working directory,
 * signal handlers, credentials, rlimits and seccomp filter are its own (no
 * CLONE_FILES, CLONE_FS, CLONE_SIGHAND, CLONE_THREAD); the capabilities,
 * no_new_privs and the filter it inherits from the init, which confined
 * itself first (its CONTAIN_INIT rows, or a session's command init made
 * ahead: plan->confined). In memory it leaves only what the init
 * never reads again: environ; nothing is allocated. */
static pid_t start_child(struct child_args *a)
{
	int share = 1;
#ifdef __SANITIZE_ADDRESS__
	share = 0; /* ASan warns on every switch to another stack, into the command's stderr */
#endif
	if (!share) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(command_child(a));
		return pid;
	}
	const size_t size = 256 << 10;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	pid_t pid = clone(command_child, (char *)stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, a);
	munmap(stack, size);
	return pid;
}

static __attribute__((noreturn)) void init_fail(int sync, const struct sbx_err *err)
{
	msg_send_error(sync, err, SBX_ORIGIN_INIT);
	_exit(125);
}

void init_run(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };
	sigset_t set;
	int pipefd[2];
	struct exec_report r;

	/* The sandbox's own pid 1 (a run's, or a session's); a session's
	 * command init (plan->confined) inherits all this from the latter. */
	if (!plan->confined && hide_command_line(&err) < 0)
		init_fail(sync, &err);
	int sfd = setup_signals(&set);
	if (sfd < 0)
		_exit(125);
	if (plan->pid1_loop) { /* it confines itself: it still makes namespaces */
		plan->pid1_loop(plan, sync, sfd);
		_exit(125);
	}
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		_exit(125);
	int slave = open_terminal(plan, sync);
	/* Set up: its rows of the containment list (a session's command init
	 * walked them before its request came). */
	if (!plan->confined) {
		struct contain c = { .plan = plan, .fd = sync, .slave = -1 };
		if (contain_walk(&c, CONTAIN_INIT, &err) < 0)
			init_fail(sync, &err);
	}
	struct child_args a = { plan, { sync, sfd, pipefd[0] }, pipefd[1], slave };
	pid_t cmd = start_child(&a);
	if (cmd < 0)
		_exit(125);
	if (slave >= 0)
		close(slave);
	close(pipefd[1]);
	ssize_t n;
	do
		n = read(pipefd[0], &r, sizeof(r));
	while (n < 0 && errno == EINTR);
	close(pipefd[0]);
	if (n == sizeof(r)) {
		r.text[sizeof(r.text) - 1] = '\0';
		report_exec_failure(sync, &r);
		_exit(r.code);
	}
	int status = wait_command(cmd, sfd);
	log_trace("init: command ended");
	/* What else the command started goes now and is reaped before the
	 * result is sent, as the kernel would do after our exit: whoever gets
	 * the result may rely on the command's processes being gone, and need
	 * not wait for the namespaces' own teardown (a session replies here). */
	if (!plan->ll) /* the landlock tier has no pid namespace: its host side ends them */
		kill(-1, SIGKILL);
	while (!plan->ll && (waitpid(-1, NULL, 0) > 0 || errno == EINTR))
		;
	for (int fd = 0; fd < 3; fd++) /* a session's capture pipes end here */
		close(fd);
	struct sbx_msg m = { .type = SBX_MSG_EXIT };
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		m.peak_kb = ru.ru_maxrss;
	if (WIFSIGNALED(status)) {
		m.kind = SBX_EXIT_SIGNAL;
		m.code = WTERMSIG(status);
	} else {
		m.kind = SBX_EXIT_CODE;
		m.code = WEXITSTATUS(status);
	}
	msg_send(sync, &m, NULL, 0);
	log_trace("init: exit sent, ending");
	_exit(m.kind == SBX_EXIT_SIGNAL ? 128 + m.code : m.code);
}
