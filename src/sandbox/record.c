/* record.c - the --json result record: what ran, how it ended (the
 * outcome's JSON form, base/outcome.h), and the limits in force with their
 * mechanism. It goes
 * to a file or an fd of its own, never into the command's output; the file
 * is written atomically and never through a symlink (base/hostfile.c). */
#define _GNU_SOURCE
#include "sandbox/record.h"

#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/outcome.h"
#include "base/util.h"
#include "sandbox/landlock.h"
#include "sandbox/tier.h"

static struct json_object *limits(const struct sbx_config *cfg, const struct sbx_plan *plan,
				  const struct sbx_result *res)
{
	struct json_object *l = json_object_new_object();
	static const enum sbx_key keys[] = { SBX_K_TIMEOUT, SBX_K_MEMORY, SBX_K_DISK, SBX_K_PIDS,
					     SBX_K_CPUS, SBX_K_FILE_SIZE, SBX_K_OPEN_FILES };
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const struct sbx_option *o = options_by_key(keys[i]);
		struct json_object *e = json_object_new_object();
		char buf[64];
		config_format(cfg, o, buf, sizeof(buf));
		/* on disk storage one file is capped at the quota (limits_cap_file_size) */
		if (keys[i] == SBX_K_FILE_SIZE && plan->lim.file_size)
			format_size(plan->lim.file_size, buf, sizeof(buf));
		/* the caller's hard RLIMIT_NOFILE caps what the profile asks for */
		if (keys[i] == SBX_K_OPEN_FILES && plan->lim.open_files)
			snprintf(buf, sizeof(buf), "%" PRIu64, plan->lim.open_files);
		json_object_object_add(e, "value", json_object_new_string(buf));
		json_object_object_add(e, "mechanism",
				       json_object_new_string(res->mechanism[keys[i]] ? res->mechanism[keys[i]] : "none"));
		json_object_object_add(l, o->pkey, e);
	}
	return l;
}

/* "tier", and in the nested tier what it gave up (sandbox/tier.h): the
 * host name kept ("container"), /proc as "subset=pid" or "none". */
static void tier(struct json_object *o, unsigned gave_up)
{
	char why[512];

	json_object_object_add(o, "tier", json_object_new_string(tier_name(tier_of(gave_up))));
	if (!gave_up)
		return;
	struct json_object *n = json_object_new_object();
	tier_describe(gave_up, why, sizeof(why));
	if (gave_up & TIER_LANDLOCK) { /* no namespace at all (sandbox/landlock.h) */
		json_object_object_add(n, "abi", json_object_new_int(landlock_abi()));
		json_object_object_add(n, "why", json_object_new_string(why));
		json_object_object_add(o, "landlock", n);
		return;
	}
	json_object_object_add(n, "hostname", json_object_new_string(gave_up & TIER_HOSTNAME_KEPT
								      ? "container" : "own"));
	json_object_object_add(n, "proc", json_object_new_string(gave_up & TIER_PROC_NONE ? "none"
								  : gave_up & TIER_PROC_PID ? "subset=pid" : "own"));
	json_object_object_add(n, "why", json_object_new_string(why));
	json_object_object_add(o, "nested", n);
}

/* "user": who the command ran as, and how (nonroot.h). */
struct json_object *record_user(const struct sbx_plan *plan, int as_user)
{
	const struct sbx_nonroot *u = &plan->user;
	struct json_object *n = json_object_new_object();

	json_object_object_add(n, "name", json_object_new_string(as_user ? u->name : "root"));
	json_object_object_add(n, "uid", json_object_new_int(as_user ? (int)u->uid : 0));
	json_object_object_add(n, "gid", json_object_new_int(as_user ? (int)u->gid : 0));
	json_object_object_add(n, "home", json_object_new_string(as_user ? u->home : plan->home));
	if (as_user) {
		json_object_object_add(n, "made", json_object_new_boolean(u->create));
		json_object_object_add(n, "how", json_object_new_string(
			"a user namespace of its own mapping it to the sandbox's root; "
			"read-only but for HOME, /tmp, /var/tmp, /dev, the workspace and writable binds"));
	}
	return n;
}

static struct json_object *build(const struct sbx_config *cfg, const struct sbx_plan *plan,
				 const struct sbx_result *res)
{
	struct json_object *o = json_object_new_object(), *cmd = json_object_new_array();

	for (char *const *a = plan->argv; a && *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	json_object_object_add(o, "command", cmd);
	json_object_object_add(o, "image", json_object_new_string(cfg->image));
	json_object_object_add(o, "profile", json_object_new_string(cfg->profile ? cfg->profile : "default"));
	outcome_to_json(&res->out, o);
	json_object_object_add(o, "network", json_object_new_string(plan->net.mode_name));
	json_object_object_add(o, "user", record_user(plan, plan->as_user));
	tier(o, res->gave_up);
	json_object_object_add(o, "limits", limits(cfg, plan, res));
	json_object_object_add(o, "cgroup", json_object_new_string(limits_cgroup_desc(&plan->lim)));
	struct json_object *eg = json_object_new_object();
	json_object_object_add(eg, "allowed", json_object_new_int64((int64_t)res->egress_allowed));
	json_object_object_add(eg, "refused", json_object_new_int64((int64_t)res->egress_refused));
	json_object_object_add(eg, "bytes_up", json_object_new_int64((int64_t)res->egress_bytes_up));
	json_object_object_add(eg, "bytes_down", json_object_new_int64((int64_t)res->egress_bytes_down));
	json_object_object_add(o, "egress", eg);
	if (plan->project.id) {
		struct json_object *c = json_object_new_object();
		json_object_object_add(c, "id", json_object_new_string(plan->project.id));
		json_object_object_add(c, "project", json_object_new_string(plan->project.src));
		json_object_object_add(c, "state", json_object_new_string(plan->project.fate));
		json_object_object_add(c, "added", json_object_new_int64((int64_t)plan->project.added));
		json_object_object_add(c, "changed", json_object_new_int64((int64_t)plan->project.changed));
		json_object_object_add(c, "deleted", json_object_new_int64((int64_t)plan->project.deleted));
		json_object_object_add(o, "changes", c);
	}
	return o;
}

static int write_record(const struct sbx_config *cfg, struct json_object *o, struct sbx_err *err)
{
	_cleanup_free_ char *line = xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	if (cfg->json_fd)
		return write_all((int)cfg->json_fd, line, strlen(line)) < 0
			? err_sys(err, "--json-fd %d", (int)cfg->json_fd) : 0;
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };
	if (hostfile_open(&hf, AT_FDCWD, cfg->json_file, 0644, err) < 0)
		return err_wrap(err, "--json");
	if (write_all(hf.fd, line, strlen(line)) < 0)
		return err_sys(err, "--json '%s'", cfg->json_file);
	return hostfile_commit(&hf, true, err) < 0 ? err_wrap(err, "--json") : 0;
}

int record_write(const struct sbx_config *cfg, const struct sbx_plan *plan,
		 const struct sbx_result *res, struct sbx_err *err)
{
	if (!cfg->json_file && !cfg->json_fd)
		return 0;
	return write_record(cfg, build(cfg, plan, res), err);
}

int record_write_session(const struct sbx_config *cfg, char *const *argv, const struct sbx_outcome *out,
			 struct json_object *user, struct sbx_err *err)
{
	if (!cfg->json_file && !cfg->json_fd) {
		if (user)
			json_object_put(user);
		return 0;
	}
	struct json_object *o = json_object_new_object(), *cmd = json_object_new_array();
	for (char *const *a = argv; a && *a; a++)
		json_object_array_add(cmd, json_object_new_string(*a));
	json_object_object_add(o, "command", cmd);
	json_object_object_add(o, "session", json_object_new_string(cfg->session));
	outcome_to_json(out, o);
	if (user)
		json_object_object_add(o, "user", user);
	return write_record(cfg, o, err);
}

int record_prepare(const struct sbx_config *cfg, int *events_fd, struct sbx_err *err)
{
	if (cfg->json_file && hostfile_check(AT_FDCWD, cfg->json_file, "--json", err) < 0)
		return -1;
	if (cfg->events_file && (*events_fd = hostfile_open_append(cfg->events_file, "--events", err)) < 0)
		return -1;
	return 0;
}
