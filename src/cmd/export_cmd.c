/* export_cmd.c - `sbxrun image export SESSION|IMAGE|--snapshot SNAP -o FILE`:
 * finds the tree (a live session's root, a snapshot's through a session
 * forked from it, or an image's rootfs) and hands it to the store's
 * tarball writer (store/export.c) or its OCI/docker-archive writer
 * (store/oci_export.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/copycap.h"
#include "cmd/snapshot_cmd.h"
#include "session/session.h"
#include "session/session_client.h"
#include "store/export.h"
#include "store/oci_export.h"
#include "store/import.h"
#include "store/store.h"

static const char export_about[] =
	"Writes a live session's filesystem (image plus writable layer and workspace),\n"
	"or only its workspace, or an image. Sparse files stay sparse.\n";

enum { FMT_TAR = -1 };

struct export_req {
	struct sbx_export ex;
	int format; /* FMT_TAR or enum sbx_oci_format */
	int ws_only;
	const char *max_size; /* --max-size, or NULL for the default */
	struct sbx_copycap cap;
};

static int parse_format(const char *s)
{
	return !strcmp(s, "oci") ? SBX_OCI_FORMAT_OCI : !strcmp(s, "docker") ? SBX_OCI_FORMAT_DOCKER : FMT_TAR;
}

/* The tree as a tarball, or as an OCI layout / docker-archive. */
static int write_tree(int rootfd, const char *top, const char *name, const char *digest,
		      const char *ws, const struct export_req *q, struct sbx_err *err)
{
	if (q->format == FMT_TAR)
		return export_tree(rootfd, top, &q->ex, err);
	_cleanup_free_ char *ref = xasprintf("localhost/%s:latest", name);
	_cleanup_free_ char *src = xasprintf("%s %s", digest ? "image" : "session", name);
	struct sbx_oci_export o = { .output = q->ex.output, .format = q->format, .name = name,
				    .ref = ref, .source = src, .digest = digest,
				    .workdir = ws && ws[0] ? ws : "/workspace",
				    .mtime = q->ex.mtime, .extra_dev = q->ex.extra_dev,
				    .max_data = q->ex.max_data, .max_why = q->ex.max_why };
	return oci_export(rootfd, top, &o, err);
}

static int export_session(const char *name, struct export_req *q, struct sbx_err *err)
{
	_cleanup_free_ char *ws = NULL;
	int rootfd;
	struct stat st;

	if (session_root(name, &rootfd, &ws, err) < 0)
		return -1;
	if (!q->max_size)
		copycap_session(name, q->ex.output, &q->cap);
	q->ex.max_data = q->cap.max;
	q->ex.max_why = q->cap.why;
	if (q->ws_only && !ws[0]) {
		close(rootfd);
		return err_set(err, 0, "session '%s' has no workspace", name);
	}
	_cleanup_close_ int wsfd = ws[0] ? inroot_open(rootfd, ws, O_PATH | O_DIRECTORY, 0, err) : -1;
	if (wsfd >= 0 && fstat(wsfd, &st) == 0)
		q->ex.extra_dev = st.st_dev;
	int r = write_tree(rootfd, q->ws_only ? ws : "/", name, NULL, ws, q, err);
	close(rootfd);
	return r;
}

static int export_image(const char *name, struct export_req *q, struct sbx_err *err)
{
	struct sbx_image img;
	if (import_image_open(name, &img, err) < 0)
		return -1;
	if (!q->max_size)
		copycap_image(img.size, q->ex.output, &q->cap);
	q->ex.max_data = q->cap.max;
	q->ex.max_why = q->cap.why;
	int r = write_tree(img.rootfs_fd, "/", name, img.digest, NULL, q, err);
	store_image_close(&img);
	return r;
}

/* A snapshot's whole file system, as a session forked from it sees it:
 * the image under the snapshot's layers, a project snapshot's workspace
 * the project with its writes (cmd/snapshot_cmd.c). */
static int export_snapshot(const char *snap, struct export_req *q, struct sbx_err *err)
{
	_cleanup_free_ char *session = NULL;

	if (snapshot_cmd_export_start(snap, &session, err) < 0)
		return err_wrap(err, "image export --snapshot '%s'", snap);
	int r = export_session(session, q, err);
	snapshot_cmd_export_end(session);
	return r;
}

/* The options, from the table (cli_parse checked --format's value). */
static int export_options(const struct cli_args *a, struct export_req *q, struct sbx_err *err)
{
	uint64_t mt;

	q->ex.output = a->v[SBX_K_EXPORT_OUTPUT];
	q->ws_only = a->v[SBX_K_EXPORT_WORKSPACE] != NULL;
	if (a->v[SBX_K_EXPORT_FORMAT])
		q->format = parse_format(a->v[SBX_K_EXPORT_FORMAT]);
	if (a->v[SBX_K_MTIME]) {
		if (parse_count(a->v[SBX_K_MTIME], 0, 1ULL << 40, &mt, err) < 0)
			return err_wrap(err, "--mtime");
		q->ex.mtime = (int64_t)mt;
	}
	q->max_size = a->v[SBX_K_MAX_SIZE];
	if (q->max_size && copycap_option(q->max_size, &q->cap, err) < 0)
		return -1;
	if (!q->ex.output)
		return err_set(err, 0, "image export: which FILE? (-o FILE; see 'sbxrun image export --help')");
	if (q->ws_only && q->format != FMT_TAR)
		return err_set(err, 0, "--workspace: only with --format tar");
	return 0;
}

int cmd_image_export(int argc, char **argv, struct sbx_err *err)
{
	struct export_req q = { .ex = { .mtime = -1 }, .format = FMT_TAR };
	struct cli_args a;
	int r = cli_parse(argc, argv, SBX_CMD_IMAGE_EXPORT, export_about, &a, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (a.rest != argc - 1)
		return err_set(err, 0, "image export: give one SESSION or IMAGE (see 'sbxrun image export --help')");
	if (export_options(&a, &q, err) < 0)
		return -1;
	const char *name = argv[a.rest];
	_cleanup_free_ char *dir = NULL;
	if (a.v[SBX_K_EXPORT_SNAPSHOT])
		return export_snapshot(name, &q, err) < 0 ? -1 : 0;
	if (session_dir(name, &dir, err) < 0)
		return -1;
	if (session_alive(dir))
		return export_session(name, &q, err) < 0 ? -1 : 0;
	if (q.ws_only)
		return err_set(err, 0, "--workspace: '%s' is not a running session", name);
	return export_image(name, &q, err) < 0 ? -1 : 0;
}
