/* session.c - the session supervisor: a detached host-side process that
 * keeps a sandbox (namespaces, writable layer, workspace) alive and serves
 * its control socket. Each command joins the session's namespaces and runs
 * as pid 1's child in a pid namespace of its own below the session's, so
 * that its timeout ends everything it started. */
#define _GNU_SOURCE
#include "session/session.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/paths.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "sandbox/init.h"
#include "sandbox/record.h"
#include "sandbox/sandbox.h"
#include "sandbox/supervise.h"
#include "sandbox/userns.h"
#include "session/control.h"
#include "session/session_exec.h"
#include "session/session_init.h"

int session_dir(const char *name, char **out, struct sbx_err *err)
{
	_cleanup_free_ char *state = NULL;

	if (paths_state_dir(&state, err) < 0)
		return -1;
	*out = xasprintf("%s/sessions/%s", state, name);
	return 0;
}

int session_alive(const char *dir)
{
	_cleanup_free_ char *lock = xasprintf("%s/lock", dir);
	_cleanup_close_ int fd = open(lock, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
		flock(fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

static int listen_control(const char *dir, struct sbx_err *err)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/control.sock", dir) >=
	    (int)sizeof(addr.sun_path))
		return err_set(err, ENAMETOOLONG, "control socket path under '%s'", dir);
	unlink(addr.sun_path);
	mode_t old = umask(0177);
	int r = bind(s, (struct sockaddr *)&addr, sizeof(addr));
	umask(old);
	if (r < 0 || listen(s, 16) < 0)
		return err_sys(err, "listen on '%s'", addr.sun_path);
	return steal_fd(s);
}

static int write_info(const struct sbx_session *s, const char *dir, const char *name, int userns,
		      pid_t init, struct sbx_err *err)
{
	const struct sbx_config *cfg = s->cfg;
	char memfile[PATH_MAX + 32];
	struct stat st = { 0 };
	struct json_object *o = json_object_new_object();
	_cleanup_free_ char *tmp = xasprintf("%s/info.json.tmp", dir);
	_cleanup_free_ char *path = xasprintf("%s/info.json", dir);

	json_object_object_add(o, "name", json_object_new_string(name));
	json_object_object_add(o, "image", json_object_new_string(cfg->image));
	json_object_object_add(o, "profile", json_object_new_string(cfg->profile ? cfg->profile : "default"));
	json_object_object_add(o, "pid", json_object_new_int(getpid()));
	json_object_object_add(o, "started", json_object_new_int64((int64_t)time(NULL)));
	/* what a copy out of the session may write on the host (cp, image export) */
	json_object_object_add(o, "disk", json_object_new_int64((int64_t)cfg->disk));
	json_object_object_add(o, "image_size", json_object_new_int64((int64_t)s->plan.img.size));
	/* `session ls` finds the session's processes by their user namespace */
	if (fstat(userns, &st) == 0)
		json_object_object_add(o, "userns", json_object_new_int64((int64_t)st.st_ino));
	json_object_object_add(o, "init_pid", json_object_new_int(init));
	/* one cgroup holds the session and every command in it */
	json_object_object_add(o, "cgroup", json_object_new_string(limits_cgroup_desc(&s->plan.lim)));
	if (limits_memory_file(&s->plan.lim, memfile, sizeof(memfile)) == 0)
		json_object_object_add(o, "memory_file", json_object_new_string(memfile));
	/* [network] ask: its clients' terminals ask (session_askterm.c) */
	if (s->px && s->plan.ask_ms)
		json_object_object_add(o, "ask", json_object_new_string("yes"));
	/* who its commands run as (the record of run --session): the session's
	 * [sandbox] user by default, and root (--user root) */
	json_object_object_add(o, "user", record_user(&s->plan, s->plan.user.name != NULL));
	json_object_object_add(o, "root", record_user(&s->plan, 0));
	/* --project: its change set (`session stop` reports it) */
	if (cfg->project_set.id)
		json_object_object_add(o, "changes", json_object_new_string(cfg->project_set.id));
	/* storage = disk: what `session rm` removes if the supervisor dies */
	if (s->plan.run_dir)
		json_object_object_add(o, "run_dir", json_object_new_string(s->plan.run_dir));
	int r = json_object_to_file_ext(tmp, o, JSON_C_TO_STRING_PLAIN);
	json_object_put(o);
	if (r < 0 || rename(tmp, path) < 0)
		return err_sys(err, "write '%s'", path);
	return 0;
}

/* The detached supervisor: brings the sandbox up, reports readiness on
 * ready_fd, then serves until stopped. */
static __attribute__((noreturn)) void supervisor_main(const struct sbx_config *cfg, const char *name,
						      const char *dir, int lock_fd, int ready_fd)
{
	struct sbx_err err = { 0 };
	struct sbx_session s = { .cfg = cfg, .name = name, .dir = dir, .listen = -1 };
	sigset_t set;

	supervise_block_signals(&set);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	if (sandbox_plan(cfg, NULL, &s.plan, &err) == 0) {
		s.plan.argv = NULL;
		s.plan.tty = 0;
		s.plan.pid1_loop = session_init_loop;
	}
	if (err.msg[0] || sandbox_start(&s.plan, &s.sb, &err) < 0 ||
	    (s.sb.proxy_fd >= 0 && sandbox_proxy(&s.plan, s.sb.proxy_fd, &s.px, &err) < 0) ||
	    (s.sb.dns_fd >= 0 && sandbox_dns(&s.plan, s.sb.dns_fd, &s.dns, &err) < 0) ||
	    (s.listen = listen_control(dir, &err)) < 0 || write_info(&s, dir, name, s.sb.fds.fd[SBX_FD_USER], s.sb.pid, &err) < 0) {
		(void)!write(ready_fd, err.msg, strlen(err.msg) + 1);
		_exit(125);
	}
	(void)!write(ready_fd, "", 1);
	close(ready_fd);
	/* a session can be asked: sbxrun net pending / net allow reach it */
	if (s.px && cfg->net_ask)
		proxy_set_ask(s.px, cfg->ask_timeout_ms ? cfg->ask_timeout_ms : 30000);
	s.started = s.last_active = now_ms();
	int code = session_serve(&s, &set);
	supervise_kill(s.sb.pid, s.sb.pidfd);
	proxy_free(s.px);
	dnsstub_free(s.dns);
	sandbox_release(&s.sb);
	sandbox_plan_free(&s.plan);
	struct sbx_err e2;
	rm_rf_at(AT_FDCWD, dir, &e2);
	(void)lock_fd;
	_exit(code);
}

/* The writable layer on disk of a session whose supervisor died: only a
 * run-XXXXXX directory below the data directory's run/, and only if no
 * live run holds its lock. */
static int remove_run_dir(const char *dir, struct sbx_err *err)
{
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir), *data = NULL, *runs = NULL;
	struct json_object *o = json_object_from_file(info), *v;
	int r = 0;

	if (!o)
		return 0;
	const char *run = json_object_object_get_ex(o, "run_dir", &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
	if (run && paths_data_dir(&data, err) == 0) {
		runs = xasprintf("%s/run/", data);
		const char *base = run + strlen(runs);
		_cleanup_close_ int fd = -1;
		if (strncmp(run, runs, strlen(runs)) == 0 && strncmp(base, "run-", 4) == 0 && !strchr(base, '/'))
			fd = open(run, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			r = rm_rf_at(AT_FDCWD, run, err);
	} else if (run) {
		r = -1;
	}
	json_object_put(o);
	return r;
}

int session_remove_dead(const char *dir, struct sbx_err *err)
{
	if (session_alive(dir))
		return err_plain(err, EBUSY, "session '%s' is running", strrchr(dir, '/') + 1);
	if (remove_run_dir(dir, err) < 0)
		return -1;
	return rm_rf_at(AT_FDCWD, dir, err);
}

static int prepare_dir(const char *dir, int *lock_fd, struct sbx_err *err)
{
	_cleanup_free_ char *parent = xstrdup(dir);
	*strrchr(parent, '/') = '\0';
	if (mkdir_p(parent, 0700, err) < 0)
		return -1;
	if (session_alive(dir))
		return err_plain(err, EEXIST, "session '%s' is already running", strrchr(dir, '/') + 1);
	struct sbx_err e2;
	session_remove_dead(dir, &e2); /* what a crashed supervisor left */
	if (mkdir(dir, 0700) < 0)
		return err_sys(err, "create '%s'", dir);
	_cleanup_free_ char *lock = xasprintf("%s/lock", dir);
	*lock_fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (*lock_fd < 0 || flock(*lock_fd, LOCK_EX | LOCK_NB) < 0)
		return err_sys(err, "lock '%s'", lock);
	return 0;
}

/* Detaches like a daemon: a new session, stdio on /dev/null and the log. */
static void detach(const char *dir)
{
	_cleanup_free_ char *log = xasprintf("%s/log", dir);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int lfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);

	setsid();
	dup2(null, 0);
	dup2(null, 1);
	dup2(lfd >= 0 ? lfd : null, 2);
	if (null > 2)
		close(null);
	if (lfd > 2)
		close(lfd);
}

/* The supervisor keeps none of its starter's other fds (an MCP server's
 * connections and its watchdog's pipe among them): only these two. */
static void close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3)
		syscall(SYS_close_range, 3, lo - 1, 0);
	if (hi > lo + 1)
		syscall(SYS_close_range, lo + 1, hi - 1, 0);
	syscall(SYS_close_range, hi + 1, ~0U, 0);
}

int session_start(const struct sbx_config *cfg, const char *name, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;
	int lock_fd = -1, pipefd[2];
	char msg[sizeof(err->msg)];

	if (session_dir(name, &dir, err) < 0 || prepare_dir(dir, &lock_fd, err) < 0)
		return -1;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return err_sys(err, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		return err_sys(err, "fork");
	if (pid == 0) {
		close(pipefd[0]);
		detach(dir);
		close_others(lock_fd, pipefd[1]);
		if (fork() != 0)
			_exit(0);
		supervisor_main(cfg, name, dir, lock_fd, pipefd[1]);
	}
	close(pipefd[1]);
	close(lock_fd);
	waitpid(pid, NULL, 0);
	ssize_t n = read(pipefd[0], msg, sizeof(msg) - 1);
	close(pipefd[0]);
	if (n <= 0)
		return err_set(err, 0, "session '%s': the supervisor died while starting (see %s/log)", name, dir);
	msg[n] = '\0';
	if (msg[0])
		return err_set(err, 0, "session '%s': %s", name, msg);
	return 0;
}
