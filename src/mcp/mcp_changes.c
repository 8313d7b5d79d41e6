/* mcp_changes.c - the project tools. When the server's sandbox works on
 * the user's checkout (`sbxrun mcp --project DIR`: DIR under an overlay,
 * never written), an agent lists what it changed there (list_changes) and
 * reads it as a diff (diff_changes). Applying the changes to DIR is the
 * user's decision (`sbxrun changes apply`), never a tool's. Each call walks
 * the change set as it is now (undo/project.h); the text is bounded. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "base/util.h"
#include "mcp/mcp_job.h"
#include "mcp/mcp_proto.h"
#include "mcp/mcp_server.h"
#include "session/session_client.h"
#include "undo/csdiff.h"
#include "undo/project.h"

#define LIST_MAX 1000 /* entries listed; the counts cover all */

/* The change set of the server's own sandbox, loaded (0), or -1 with why. */
static int sandbox_changes(struct mcp_server *srv, struct changeset *cs, char *why, size_t size)
{
	struct sbx_err err = { 0 };
	_cleanup_free_ char *cid = srv->session ? session_info_string(srv->session, "changes") : NULL;

	memset(cs, 0, sizeof(*cs));
	if (!cid) {
		snprintf(why, size, "this sandbox works on no project: the user starts the server with "
			 "'sbxrun mcp --project DIR' for that");
		return -1;
	}
	if (project_load(cid, cs, &err) < 0) {
		snprintf(why, size, "%s", err.msg);
		return -1;
	}
	return 0;
}

static struct json_object *entry_json(const struct cs_entry *e)
{
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "kind", json_object_new_string(changeset_kind_name(e->kind)));
	json_object_object_add(o, "type", json_object_new_string(changeset_type_name(e->type)));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)e->size));
	json_object_object_add(o, "path", json_object_new_string(e->path));
	return o;
}

void mcp_list_changes(struct mcp_server *srv, struct json_object *id)
{
	struct changeset cs;
	char why[600];

	if (sandbox_changes(srv, &cs, why, sizeof(why)) < 0) {
		changeset_free(&cs);
		return mcp_tool_error(srv, id, "list_changes: %s", why);
	}
	struct json_object *st = json_object_new_object(), *list = json_object_new_array();
	struct mcp_out out = { 0 };
	char line[128];
	int n = snprintf(line, sizeof(line), "%zu added, %zu changed, %zu deleted in the project\n",
			 cs.added, cs.changed, cs.deleted);
	mcp_out_add(&out, line, (size_t)n);
	for (size_t i = 0; i < cs.n && i < LIST_MAX; i++) {
		_cleanup_free_ char *q = changeset_escape(cs.e[i].path);
		_cleanup_free_ char *l = xasprintf("%s %s: %s\n", changeset_kind_name(cs.e[i].kind),
						   changeset_type_name(cs.e[i].type), q);
		mcp_out_add(&out, l, strlen(l));
		json_object_array_add(list, entry_json(&cs.e[i]));
	}
	if (cs.n > LIST_MAX) {
		_cleanup_free_ char *l = xasprintf("... and %zu more\n", cs.n - LIST_MAX);
		mcp_out_add(&out, l, strlen(l));
	}
	json_object_object_add(st, "id", json_object_new_string(cs.id));
	json_object_object_add(st, "added", json_object_new_int64((int64_t)cs.added));
	json_object_object_add(st, "changed", json_object_new_int64((int64_t)cs.changed));
	json_object_object_add(st, "deleted", json_object_new_int64((int64_t)cs.deleted));
	json_object_object_add(st, "entries", list);
	json_object_object_add(st, "truncated", json_object_new_boolean(cs.n > LIST_MAX));
	_cleanup_free_ char *text = mcp_out_text(&out);
	mcp_out_free(&out);
	changeset_free(&cs);
	mcp_reply(srv, id, mcp_tool_text(text, 0, st));
}

/* The diff goes through a stream whose bytes past the cap are counted,
 * not kept. */
static ssize_t out_write(void *cookie, const char *buf, size_t size)
{
	mcp_out_add(cookie, buf, size);
	return (ssize_t)size;
}

void mcp_diff_changes(struct mcp_server *srv, struct json_object *id, const struct mcp_args *a)
{
	struct changeset cs;
	struct sbx_err err = { 0 };
	struct mcp_out out = { 0 };
	char why[600];
	size_t n = 0;

	if (sandbox_changes(srv, &cs, why, sizeof(why)) < 0) {
		changeset_free(&cs);
		return mcp_tool_error(srv, id, "diff_changes: %s", why);
	}
	while (a->cmd && a->cmd[n])
		n++;
	FILE *f = fopencookie(&out, "w", (cookie_io_functions_t){ .write = out_write });
	int r = f ? changeset_diff(&cs, (char *const *)a->cmd, n, f, &err) : -1;
	if (f)
		fclose(f);
	changeset_free(&cs);
	if (r < 0) {
		mcp_out_free(&out);
		return mcp_tool_error(srv, id, "diff_changes: %s", f ? err.msg : "out of memory");
	}
	_cleanup_free_ char *text = out.len ? mcp_out_text(&out) : xstrdup("no changes");
	mcp_out_free(&out);
	mcp_reply(srv, id, mcp_tool_text(text, 0, NULL));
}
