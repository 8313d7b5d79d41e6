/* session_cmd.c - `sbxrun session start|ls|stop|rm` and the client side of
 * `run --session` / `shell --session`. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/snapshot_cmd.h"
#include "term/pty.h"
#include "sandbox/supervise.h"
#include "sandbox/cgroup.h"
#include "session/control.h"
#include "session/session.h"
#include "session/session_client.h"
#include "undo/project.h"

static const char usage[] =
	"A session is a sandbox that outlives one command: 'run --session NAME' and\n"
	"'shell --session NAME' start their process inside it.\n";

static int check_name(const char *name, struct sbx_err *err)
{
	size_t n = strlen(name);
	if (n == 0 || n > 64 || name[0] == '.' || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n)
		return err_set(err, 0, "invalid session name '%s' (letters, digits, '.', '_', '-')", name);
	return 0;
}

static int do_start(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_config cfg;
	int rest;
	int r = cli_sandbox_config(argc, argv, SBX_CMD_SESSION_START, usage, &cfg, &rest, err);

	if (r == 0 && rest != argc - 1)
		r = err_set(err, 0, "session start: give exactly one NAME");
	if (r == 0 && check_name(argv[rest], err) < 0)
		r = -1;
	if (r == 0 && cfg.from)
		r = snapshot_cmd_fork(&cfg, err);
	if (r == 0)
		r = cfg.project ? project_session_start(&cfg, argv[rest], err) : session_start(&cfg, argv[rest], err);
	if (r == 0)
		printf("%s\n", argv[rest]);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}

static uint64_t rss_kb(const char *pid)
{
	char path[300], line[256];
	uint64_t kb = 0;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	FILE *f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kb += strtoull(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* Resident memory of the processes in a user namespace (inode ns): its
 * init (whose namespace links are not readable: it is non-dumpable) and
 * every other process found there. */
static void memory_in_use(int64_t ns, int init, char *buf, size_t size)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char ipid[32];
	snprintf(ipid, sizeof(ipid), "%d", init);
	uint64_t kb = init > 0 ? rss_kb(ipid) : 0;

	snprintf(buf, size, "-");
	if (!d || ns <= 0) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		char path[300];
		struct stat st;
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || !strcmp(e->d_name, ipid))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/user", e->d_name);
		if (stat(path, &st) == 0 && (int64_t)st.st_ino == ns)
			kb += rss_kb(e->d_name);
	}
	closedir(d);
	format_size(kb ? kb * 1024 : 0, buf, size);
	if (!kb)
		snprintf(buf, size, "-");
}

/* The session's cgroup counts everything it holds, tmpfs files included. */
static int cgroup_memory_in_use(const char *file, char *buf, size_t size)
{
	char num[64];

	if (cgroup_read_path(file, num, sizeof(num)) < 0)
		return -1;
	format_size(strtoull(num, NULL, 10), buf, size);
	return 0;
}

static void list_one(const char *sessions, const char *name)
{
	_cleanup_free_ char *dir = xasprintf("%s/%s", sessions, name);
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	struct json_object *o = json_object_from_file(info), *v;
	const char *image = "-", *profile = "-";
	char age[32] = "-", mem[32] = "-";

	if (o && json_object_object_get_ex(o, "image", &v))
		image = json_object_get_string(v);
	if (o && json_object_object_get_ex(o, "profile", &v))
		profile = json_object_get_string(v);
	if (o && json_object_object_get_ex(o, "started", &v))
		format_duration((uint64_t)(time(NULL) - json_object_get_int64(v)) * 1000, age, sizeof(age));
	int alive = session_alive(dir);
	struct json_object *ip;
	/* the session's cgroup where it has one, else its processes' RSS */
	int from_cgroup = alive && o && json_object_object_get_ex(o, "memory_file", &v) &&
			  cgroup_memory_in_use(json_object_get_string(v), mem, sizeof(mem)) == 0;
	if (alive && !from_cgroup && o && json_object_object_get_ex(o, "userns", &v))
		memory_in_use(json_object_get_int64(v),
			      json_object_object_get_ex(o, "init_pid", &ip) ? json_object_get_int(ip) : 0,
			      mem, sizeof(mem));
	printf("%-16s %-12s %-10s %-8s %-8s %s\n", name, image, profile, age, mem,
	       alive ? "running" : "dead (sbxrun session rm)");
	if (o)
		json_object_put(o);
}

/* --json: one object per line; a running session's rules asked of it. */
static void list_one_json(const char *sessions, const char *name)
{
	_cleanup_free_ char *dir = xasprintf("%s/%s", sessions, name);
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	struct json_object *o = json_object_from_file(info), *out = json_object_new_object(), *v, *reply;
	struct sbx_err err;
	int alive = session_alive(dir);

	json_object_object_add(out, "name", json_object_new_string(name));
	static const char *const keys[] = { "image", "profile", "started" };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (o && json_object_object_get_ex(o, keys[i], &v))
			json_object_object_add(out, keys[i], json_object_get(v));
	json_object_object_add(out, "state", json_object_new_string(alive ? "running" : "dead"));
	struct json_object *req = json_object_new_object();
	json_object_object_add(req, "op", json_object_new_string("rules"));
	if (alive && session_ask(name, req, &reply, &err) == 0) {
		if (json_object_object_get_ex(reply, "egress", &v))
			json_object_object_add(out, "egress", json_object_get(v));
		if (json_object_object_get_ex(reply, "rules", &v))
			json_object_object_add(out, "rules", json_object_get(v));
		json_object_put(reply);
	} else if (!alive) {
		json_object_put(req);
	}
	printf("%s\n", json_object_to_json_string_ext(out, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(out);
	if (o)
		json_object_put(o);
}

static int do_ls(bool json, struct sbx_err *err)
{
	_cleanup_free_ char *state = NULL, *sessions = NULL;
	DIR *d;
	struct dirent *e;

	if (paths_state_dir(&state, err) < 0)
		return -1;
	sessions = xasprintf("%s/sessions", state);
	if (!json)
		printf("%-16s %-12s %-10s %-8s %-8s %s\n", "NAME", "IMAGE", "PROFILE", "AGE", "MEMORY", "STATE");
	if (!(d = opendir(sessions)))
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && json)
			list_one_json(sessions, e->d_name);
		else if (e->d_name[0] != '.')
			list_one(sessions, e->d_name);
	closedir(d);
	return 0;
}

/* A session on a project (--project): once it has ended, its change set
 * is captured and said in one line, as a run's is. */
static void report_changes(const char *id)
{
	struct changeset cs;
	struct sbx_err e2;

	if (project_load(id, &cs, &e2) < 0) {
		log_warn("%s", e2.msg);
	} else if (cs.n == 0 && !cs.live) {
		if (changeset_remove(&cs, &e2) < 0)
			log_warn("change set %s: %s", cs.id, e2.msg);
		else if (sbx_log_level > SBX_LOG_QUIET)
			fprintf(stderr, "sbxrun: changes: none, the project is as it was\n");
	} else {
		changes_kept_print(&cs);
	}
	changeset_free(&cs);
}

static int do_stop(const char *name, struct sbx_err *err)
{
	_cleanup_free_ char *changes = session_info_string(name, "changes");

	if (session_stop(name, err) < 0)
		return -1;
	if (changes)
		report_changes(changes);
	return 0;
}

/* The supervisor's pid, from info.json; 0 if unknown. */
static pid_t supervisor_pid(const char *dir)
{
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	struct json_object *o = json_object_from_file(info), *v;
	pid_t pid = o && json_object_object_get_ex(o, "pid", &v) ? (pid_t)json_object_get_int(v) : 0;

	if (o)
		json_object_put(o);
	return pid;
}

/* Whether pid has ended: gone, or a zombie its reaper has yet to collect.
 * (The supervisor removes its directory, which ends session_alive, just
 * before it exits.) */
static int ended(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	if (n <= 0)
		return 1;
	buf[n] = '\0';
	const char *paren = strrchr(buf, ')');
	return !paren || paren[1] != ' ' || paren[2] == 'Z' || paren[2] == 'X';
}

static int stop_and_wait(const char *name, const char *dir, struct sbx_err *err)
{
	pid_t pid = supervisor_pid(dir);

	if (session_stop(name, err) < 0)
		return -1;
	for (int i = 0; pid > 0 && i < 400 && !ended(pid); i++)
		usleep(25000);
	if (pid > 0 && !ended(pid))
		return err_plain(err, EBUSY, "session '%s': its supervisor (pid %d) did not exit", name, (int)pid);
	return 0;
}

/* -f: a running session is stopped first, as `docker rm -f` does. */
static int do_rm(const char *name, int force, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;

	if (session_dir(name, &dir, err) < 0)
		return -1;
	if (access(dir, F_OK) < 0)
		return err_plain(err, ENOENT, "no session '%s'", name);
	if (session_alive(dir) && !force)
		return err_plain(err, EBUSY, "session '%s' is running (stop it with 'sbxrun session stop %s', "
				 "or stop and remove it with 'sbxrun session rm -f %s')", name, name, name);
	_cleanup_free_ char *changes = session_info_string(name, "changes");
	if (session_alive(dir) && stop_and_wait(name, dir, err) < 0)
		return -1;
	if (changes)
		report_changes(changes);
	if (access(dir, F_OK) < 0)
		return 0; /* the supervisor took its directory with it */
	return session_remove_dead(dir, err);
}

/* The snapshot verbs: operands counted and names checked here (125). */
static int do_snapshots(const struct sbx_command *verb, int nops, char **ops, struct sbx_err *err)
{
	enum { TAKE, LIST, RM, RESTORE } m = !strcmp(verb->name, "snapshots") ? LIST
		: !strcmp(verb->name, "snapshot-rm") ? RM : !strcmp(verb->name, "restore") ? RESTORE : TAKE;
	int lo = m == LIST ? 0 : m == RESTORE ? 2 : 1;
	int hi = m == TAKE ? 2 : lo;

	if (nops < lo || nops > hi)
		return err_set(err, 0, "session %s: expected %s (see 'sbxrun session %s --help')", verb->name,
			       verb->operands[0] ? verb->operands : "no argument", verb->name);
	if (m == LIST)
		return snapshot_cmd_list(err) < 0 ? -1 : 0;
	if (m == RM)
		return snapshot_cmd_rm(ops[0], err) < 0 ? -1 : 0;
	if (check_name(ops[0], err) < 0)
		return -1;
	if (m == RESTORE)
		return snapshot_cmd_restore(ops[0], ops[1], usage, err) < 0 ? -1 : 0;
	return snapshot_cmd_take(ops[0], nops == 2 ? ops[1] : NULL, err) < 0 ? -1 : 0;
}

int cmd_session(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	int r = cli_verb(argc, argv, "session", usage, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (verb->mask == SBX_CMD_SESSION_START)
		return do_start(argc - 1, argv + 1, err);
	r = cli_parse(argc - 1, argv + 1, verb->mask, NULL, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	int nops = argc - 1 - a.rest;
	const char *name = argv[1 + a.rest];
	if (verb->mask == SBX_CMD_SESSION_LS)
		return nops ? err_set(err, 0, "session ls: unexpected argument '%s'", name)
			    : do_ls(a.v[SBX_K_LS_JSON] != NULL, err) < 0 ? -1 : 0;
	if (verb->mask & SBX_CMD_SESSION_SNAP) {
		/* options end at the first operand; a '--' after it ends them
		 * too, as it does before it: never an operand (issue 40) */
		char **ops = argv + 1 + a.rest;
		_cleanup_free_ char **v = xcalloc((size_t)nops + 1, sizeof(char *));
		int k = 0;
		bool dashes = false;
		for (int i = 0; i < nops; i++) {
			if (i > 0 && !dashes && !strcmp(ops[i], "--")) {
				dashes = true;
				continue;
			}
			v[k++] = ops[i];
		}
		return do_snapshots(verb, k, v, err);
	}
	if (nops != 1)
		return err_set(err, 0, "session %s: give exactly one NAME (see 'sbxrun session %s --help')",
			       verb->name, verb->name);
	if (check_name(name, err) < 0)
		return -1;
	r = verb->mask == SBX_CMD_SESSION_STOP ? do_stop(name, err)
					       : do_rm(name, a.v[SBX_K_FORCE] != NULL, err);
	return r < 0 ? -1 : 0;
}
