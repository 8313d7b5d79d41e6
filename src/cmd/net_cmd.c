/* net_cmd.c - `sbxrun net allow|deny SESSION HOST[:PORT]`: a running
 * session's live rules, through its control socket (session/control.h;
 * the rules themselves: net/proxy.h). --for always also writes the host
 * into the session's profile, when that profile is the user's own file. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/hostentry.h"
#include "base/paths.h"
#include "base/profile.h"
#include "base/profwrite.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "session/session_client.h"

static const char usage[] =
	"Changes the network rules of a running session without restarting it: an\n"
	"allow never lifts a deny, an address class sbxrun never reaches or the\n"
	"administrator's policy (docs/egress.md, 'Live rules').\n";

/* The profile file --for always writes into: the session's, when it is
 * the user's own (base/profwrite.c). */
static int own_profile(const char *session, char **path, struct sbx_err *err)
{
	_cleanup_free_ char *name = session_profile(session);

	if (!name)
		return err_set(err, 0, "session '%s': its profile is not recorded; --for always cannot name a file",
			       session);
	return profwrite_own(name, path, err) < 0 ? err_wrap(err, "--for always") : 0;
}

static int write_always(const char *path, const char *session, const char *host, struct sbx_err *err)
{
	_cleanup_free_ char *by = xasprintf("'sbxrun net allow --for always' for session '%s'", session);
	return profwrite_allow(path, by, host, err) < 0 ? err_wrap(err, "--for always") : 0;
}

/* The held connections of one session: "SESSION HOST:PORT WAITEDs LEFTs". */
static int pending_of(const char *session, bool quiet_dead, struct sbx_err *err)
{
	struct json_object *req = json_object_new_object(), *reply, *list;

	json_object_object_add(req, "op", json_object_new_string("pending"));
	if (session_ask(session, req, &reply, err) < 0)
		return quiet_dead ? 0 : -1;
	if (json_object_object_get_ex(reply, "pending", &list) && json_object_is_type(list, json_type_array))
		for (size_t i = 0; i < json_object_array_length(list); i++) {
			struct json_object *e = json_object_array_get_idx(list, i), *h, *pt, *w, *l;
			if (!json_object_object_get_ex(e, "host", &h) || !json_object_object_get_ex(e, "port", &pt) ||
			    !json_object_object_get_ex(e, "waited_ms", &w) || !json_object_object_get_ex(e, "left_ms", &l))
				continue;
			printf("%-16s %s:%d waited %.1fs, refused in %.1fs\n", session, json_object_get_string(h),
			       json_object_get_int(pt), json_object_get_int64(w) / 1000.0,
			       json_object_get_int64(l) / 1000.0);
		}
	json_object_put(reply);
	return 0;
}

static int do_pending(int nops, char **ops, struct sbx_err *err)
{
	_cleanup_free_ char *state = NULL;
	struct dirent *e;

	if (nops > 1)
		return err_set(err, 0, "net pending: give at most one SESSION");
	if (nops == 1)
		return pending_of(ops[0], false, err);
	if (paths_state_dir(&state, err) < 0)
		return -1;
	_cleanup_free_ char *sessions = xasprintf("%s/sessions", state);
	DIR *d = opendir(sessions);
	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			pending_of(e->d_name, true, err);
	closedir(d);
	return 0;
}

int cmd_net(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	struct hostentry e;
	int r = cli_verb(argc, argv, "net", usage, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	r = cli_parse(argc - 1, argv + 1, verb->mask, usage, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	int nops = argc - 1 - a.rest;
	char **ops = argv + 1 + a.rest;
	if (verb->mask == SBX_CMD_NET_PENDING)
		return do_pending(nops, ops, err);
	if (nops != 2)
		return err_set(err, 0, "net %s: give a SESSION and a HOST[:PORT] (see 'sbxrun net %s --help')",
			       verb->name, verb->name);
	if (hostentry_parse(ops[1], &e, err) < 0)
		return err_wrap(err, "net %s", verb->name);
	const char *when = a.v[SBX_K_NET_FOR] ? a.v[SBX_K_NET_FOR] : "session";
	bool always = strcmp(when, "always") == 0;
	_cleanup_free_ char *path = NULL;
	if (always && own_profile(ops[0], &path, err) < 0)
		return -1;

	struct json_object *req = json_object_new_object(), *reply;
	json_object_object_add(req, "op", json_object_new_string("net"));
	json_object_object_add(req, "action", json_object_new_string(verb->mask == SBX_CMD_NET_DENY ? "deny" : "allow"));
	json_object_object_add(req, "host", json_object_new_string(ops[1]));
	json_object_object_add(req, "for", json_object_new_string(always ? "session" : when));
	if (session_ask(ops[0], req, &reply, err) < 0)
		return -1;
	json_object_put(reply);
	if (always && write_always(path, ops[0], ops[1], err) < 0)
		return -1;
	return 0;
}
