/* session_client.c - the caller's side of `run --session` and `shell
 * --session`: sends the request with its own stdin/stdout/stderr, forwards
 * signals, relays the terminal, and exits with the command's status. */
#define _GNU_SOURCE
#include "session/session_client.h"

#include <errno.h>
#include <json-c/json.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/log.h"
#include "base/outcome.h"
#include "base/util.h"
#include "term/pty.h"
#include "sandbox/record.h"
#include "sandbox/supervise.h"
#include "session/control.h"
#include "session/session.h"
#include "session/session_askterm.h"

int session_connect(const char *name, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };

	if (session_dir(name, &dir, err) < 0)
		return -1;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/control.sock", dir);
	_cleanup_close_ int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return err_sys(err, "session '%s': socket", name);
	/* only a live supervisor listens there: no need to test its lock first */
	if (connect(s, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED || !session_alive(dir))
			return err_plain(err, ENOENT, "session '%s' is not running", name);
		return err_sys(err, "session '%s': connect", name);
	}
	return steal_fd(s);
}

/* --user: root, or the session's [sandbox] user (the session checks). */
static const enum sbx_key per_command[] = { SBX_K_SESSION, SBX_K_USER, SBX_K_WORKDIR, SBX_K_ENV, SBX_K_TIMEOUT,
					    SBX_K_TTY, SBX_K_RAW_TTY, SBX_K_JSON, SBX_K_JSON_FD,
					    SBX_K_EVENTS, SBX_K_COPY, SBX_K_OUT };

static int check_options(const struct sbx_config *cfg, struct sbx_err *err)
{
	for (size_t i = 0; i < sbx_options_count; i++) {
		const struct sbx_option *o = &sbx_options[i];
		int ok = 0;
		for (size_t k = 0; k < ARRAY_SIZE(per_command); k++)
			ok |= o->key == per_command[k];
		const struct sbx_strlist *l = config_list(cfg, o);
		int given = l ? l->n && strcmp(l->origin[l->n - 1], "command line") == 0
			      : cfg->origin[o->key] && strcmp(cfg->origin[o->key], "command line") == 0;
		if (given && !ok)
			return err_set(err, 0, "--%s: does not apply to a command in a session "
				       "(the session's own settings hold)", o->lname);
	}
	return 0;
}

static struct json_object *build_request(const struct sbx_config *cfg, char *const *argv, int tty)
{
	static char *const shell[] = { "/bin/sh", "-c",
		"if command -v bash >/dev/null; then exec bash -l; else exec sh -l; fi", NULL };
	struct json_object *o = json_object_new_object(), *cmd = json_object_new_array();
	struct winsize ws = { 0 };

	json_object_object_add(o, "op", json_object_new_string("exec"));
	for (char *const *a = argv ? argv : shell; *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	json_object_object_add(o, "cmd", cmd);
	if (cfg->workdir && strcmp(cfg->origin[SBX_K_WORKDIR], "command line") == 0)
		json_object_object_add(o, "workdir", json_object_new_string(cfg->workdir));
	if (cfg->user && strcmp(cfg->origin[SBX_K_USER], "command line") == 0)
		json_object_object_add(o, "user", json_object_new_string(cfg->user));
	if (strcmp(cfg->origin[SBX_K_TIMEOUT], "command line") == 0)
		json_object_object_add(o, "timeout_ms", json_object_new_int64((int64_t)cfg->timeout_ms));
	struct json_object *env = json_object_new_array();
	for (size_t i = 0; i < cfg->env.n; i++)
		if (strcmp(cfg->env.origin[i], "command line") == 0)
			json_object_array_add(env, json_object_new_string(cfg->env.v[i]));
	json_object_object_add(o, "env", env);
	json_object_object_add(o, "tty", json_object_new_boolean(tty));
	if (tty && isatty(0) && ioctl(0, TIOCGWINSZ, &ws) == 0) {
		json_object_object_add(o, "rows", json_object_new_int(ws.ws_row));
		json_object_object_add(o, "cols", json_object_new_int(ws.ws_col));
	}
	return o;
}

/* Who a command of the session ran as, for its record: --user root, else
 * the session's default (its [sandbox] user, or root); NULL where the
 * session's info.json does not say (a session started by an older sbxrun). */
static struct json_object *ran_as(const struct sbx_config *cfg)
{
	_cleanup_free_ char *dir = NULL;
	struct sbx_err err;
	struct json_object *o, *v, *u = NULL;
	int root = cfg->user && strcmp(cfg->origin[SBX_K_USER], "command line") == 0 && !strcmp(cfg->user, "root");

	if (!cfg->json_file && !cfg->json_fd)
		return NULL;
	if (session_dir(cfg->session, &dir, &err) < 0)
		return NULL;
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	if (!(o = json_object_from_file(info)))
		return NULL;
	if (json_object_object_get_ex(o, root ? "root" : "user", &v) && json_object_is_type(v, json_type_object))
		u = json_object_get(v);
	json_object_put(o);
	return u;
}

/* Returns 1 when the final reply arrived (out filled in), 0 to go on, -1
 * if the session went away. */
static int on_message(int s, struct sbx_pty_relay *relay, struct sbx_outcome *out)
{
	struct json_object *o = NULL, *v;
	int fds[4];
	size_t nfds = 0;

	if (control_recv(s, &o, fds, &nfds, 4) != 0)
		return -1;
	if (json_object_object_get_ex(o, "event", &v)) {
		if (nfds == 1 && relay->master < 0)
			pty_relay_start(relay, fds[0]);
		else
			for (size_t i = 0; i < nfds; i++)
				close(fds[i]);
		json_object_put(o);
		return 0;
	}
	if (outcome_from_json(o, out) < 0)
		outcome_error(out, SBX_ORIGIN_SESSION, "the session's reply cannot be read");
	json_object_put(o);
	return 1;
}

static void forward_signal(int s, int sig)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("signal"));
	json_object_object_add(o, "signal", json_object_new_int(sig));
	control_send(s, o, NULL, 0);
	json_object_put(o);
}

int session_client_run(const struct sbx_config *cfg, char *const *argv, struct sbx_err *err)
{
	int tty = argv ? cfg->tty : isatty(0);
	struct sbx_pty_relay relay;
	int done = 0, io[3] = { 0, 1, 2 };
	struct sbx_outcome out = { 0 };
	char text[1600];
	sigset_t set;

	if (check_options(cfg, err) < 0)
		return -1;
	_cleanup_close_ int s = session_connect(cfg->session, err);
	if (s < 0)
		return -1;
	supervise_block_signals(&set);
	_cleanup_close_ int sfd = signalfd(-1, &set, SFD_CLOEXEC);
	/* the command holds the caller's stdin: its terminal settings are put
	 * back at the end; its output reaches a terminal through the filter */
	pty_term_save();
	pty_relay_init(&relay, cfg->raw_tty);
	if (!tty && pty_relay_pipes(&relay, io, err) < 0)
		return -1;
	struct json_object *req = build_request(cfg, argv, tty);
	log_trace("client: connected");
	int r = control_send(s, req, io, 3);
	json_object_put(req);
	pty_relay_close_writers(&relay);
	if (r < 0) {
		pty_relay_end(&relay);
		return err_sys(err, "session '%s': send", cfg->session);
	}
	struct session_askterm asked;
	session_askterm_init(&asked, cfg->session, tty);
	while (!done) {
		struct pollfd p[4] = { { s, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		int n = 2 + pty_relay_pollfds(&relay, p + 2);
		if (poll(p, (nfds_t)n, session_askterm_wait_ms(&asked)) < 0 && errno != EINTR)
			break;
		if (p[0].revents & (POLLIN | POLLHUP)) {
			int m = on_message(s, &relay, &out);
			done = m != 0;
			if (m < 0)
				outcome_error(&out, SBX_ORIGIN_SESSION, "session '%s' ended while the command ran",
					      cfg->session);
		}
		struct signalfd_siginfo si;
		if ((p[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGWINCH && relay.master >= 0)
				pty_relay_winch(&relay);
			else
				forward_signal(s, (int)si.ssi_signo);
		}
		pty_relay_handle(&relay, p + 2, n - 2);
		if (!done)
			session_askterm_step(&asked, &relay);
	}
	session_askterm_free(&asked);
	pty_relay_end(&relay);
	pty_term_restore();
	log_trace("client: reply received");
	outcome_render(&out, text, sizeof(text));
	fputs(text, stderr);
	if (record_write_session(cfg, argv, &out, ran_as(cfg), err) < 0)
		return -1;
	return outcome_status(&out);
}

/* Asks the session name for op, whose answer carries want fds (into fds)
 * and a JSON object (*reply, owned by the caller); what names the answer
 * in the error. */
static int ask_fds(const char *name, const char *op, int *fds, size_t want, struct json_object **reply,
		   const char *what, struct sbx_err *err)
{
	_cleanup_close_ int s = session_connect(name, err);
	struct json_object *o, *v;
	int got[4];
	size_t n = 0;

	*reply = NULL;
	if (s < 0)
		return -1;
	o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string(op));
	int r = control_send(s, o, NULL, 0);
	json_object_put(o);
	if (r < 0 || control_recv(s, reply, got, &n, 4) != 0 || n != want) {
		for (size_t i = 0; i < n; i++)
			close(got[i]);
		r = *reply && json_object_object_get_ex(*reply, "error", &v)
			? err_plain(err, EPROTO, "session '%s': %s", name, json_object_get_string(v))
			: err_plain(err, EPROTO, "session '%s': no answer for its %s", name, what);
		if (*reply)
			json_object_put(*reply);
		*reply = NULL;
		return r;
	}
	memcpy(fds, got, want * sizeof(*fds));
	return 0;
}

int session_ask(const char *name, struct json_object *req, struct json_object **reply, struct sbx_err *err)
{
	_cleanup_close_ int s = session_connect(name, err);
	struct json_object *v;
	int got[4];
	size_t n = 0;

	*reply = NULL;
	if (s < 0) {
		json_object_put(req);
		return -1;
	}
	int r = control_send(s, req, NULL, 0);
	json_object_put(req);
	if (r == 0 && control_recv(s, reply, got, &n, 4) != 0)
		r = -1;
	for (size_t i = 0; i < n; i++)
		close(got[i]);
	if (r == 0 && !json_object_object_get_ex(*reply, "error", &v))
		return 0;
	r = *reply && json_object_object_get_ex(*reply, "error", &v)
		? err_set(err, 0, "session '%s': %s", name, json_object_get_string(v))
		: err_plain(err, EPROTO, "session '%s': no answer", name);
	if (*reply)
		json_object_put(*reply);
	*reply = NULL;
	return r;
}

int session_root(const char *name, int *rootfd, char **workspace, struct sbx_err *err)
{
	struct json_object *reply, *v;

	if (ask_fds(name, "root", rootfd, 1, &reply, "root", err) < 0)
		return -1;
	*workspace = xstrdup(json_object_object_get_ex(reply, "workspace", &v) ? json_object_get_string(v) : "");
	json_object_put(reply);
	return 0;
}

int session_layer(const char *name, int fds[2], struct json_object **info, struct sbx_err *err)
{
	return ask_fds(name, "layer", fds, 2, info, "writable layer", err);
}

char *session_info_string(const char *name, const char *key)
{
	_cleanup_free_ char *dir = NULL;
	struct sbx_err err;
	struct json_object *o, *v;
	char *p = NULL;

	if (session_dir(name, &dir, &err) < 0)
		return NULL;
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	o = json_object_from_file(info);
	if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
		p = xstrdup(json_object_get_string(v));
	if (o)
		json_object_put(o);
	return p;
}

char *session_profile(const char *name)
{
	return session_info_string(name, "profile");
}

int session_sizes(const char *name, uint64_t *disk, uint64_t *image_size)
{
	_cleanup_free_ char *dir = NULL;
	struct sbx_err err;
	struct json_object *o, *d, *i;
	int r = -1;

	if (session_dir(name, &dir, &err) < 0)
		return -1;
	_cleanup_free_ char *info = xasprintf("%s/info.json", dir);
	o = json_object_from_file(info);
	if (o && json_object_object_get_ex(o, "disk", &d) && json_object_is_type(d, json_type_int) &&
	    json_object_object_get_ex(o, "image_size", &i) && json_object_is_type(i, json_type_int)) {
		*disk = (uint64_t)json_object_get_int64(d);
		*image_size = (uint64_t)json_object_get_int64(i);
		r = 0;
	}
	if (o)
		json_object_put(o);
	return r;
}

int session_stop(const char *name, struct sbx_err *err)
{
	_cleanup_close_ int s = session_connect(name, err);
	struct json_object *o, *reply = NULL;
	_cleanup_free_ char *dir = NULL;

	if (s < 0)
		return -1;
	o = json_object_new_object();
	json_object_object_add(o, "op", json_object_new_string("stop"));
	control_send(s, o, NULL, 0);
	json_object_put(o);
	control_recv(s, &reply, NULL, NULL, 0);
	if (reply)
		json_object_put(reply);
	if (session_dir(name, &dir, err) < 0)
		return -1;
	/* the supervisor removes the writable layer before it lets go of its
	 * lock: on disk (Linux < 6.6) a big layer takes seconds on a slow machine */
	for (int i = 0; i < 1200 && session_alive(dir); i++)
		usleep(50000);
	return session_alive(dir) ? err_set(err, 0, "session '%s' did not stop", name) : 0;
}
