/* export_cmd.c - `sbxrun image export SESSION|IMAGE -o FILE`: finds the tree
 * (a live session's root, or an image's rootfs) and hands it to the store's
 * tarball writer (store/export.c) or its OCI/docker-archive writer
 * (store/oci_export.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/util.h"
#include "cmd/commands.h"
#include "cmd/copycap.h"
#include "session/session.h"
#include "session/session_client.h"
#include "store/export.h"
#include "store/oci_export.h"
#include "store/store.h"

static const char export_usage[] =
	"usage: sbxrun image export SESSION|IMAGE -o FILE [--workspace] [--mtime SECONDS]\n"
	"                           [--format tar|oci|docker] [--max-size SIZE]\n"
	"Writes a live session's filesystem (image plus writable layer and workspace),\n"
	"or only its workspace, or an image, as .tar, .tar.gz, .tar.xz or .tar.zst;\n"
	"--format oci writes an OCI image layout, --format docker a docker-archive\n"
	"(both one tarball that podman load and skopeo accept). Sparse files stay\n"
	"sparse; at most SIZE bytes of file data are written (default: a session's\n"
	"disk quota plus its image, or twice an image's size).\n";

enum { FMT_TAR = -1 };

struct export_req {
	struct sbx_export ex;
	int format; /* FMT_TAR or enum sbx_oci_format */
	int ws_only;
	const char *max_size; /* --max-size, or NULL for the default */
	struct sbx_copycap cap;
};

static int parse_format(const char *s, int *out, struct sbx_err *err)
{
	if (!strcmp(s, "tar"))
		*out = FMT_TAR;
	else if (!strcmp(s, "oci"))
		*out = SBX_OCI_FORMAT_OCI;
	else if (!strcmp(s, "docker"))
		*out = SBX_OCI_FORMAT_DOCKER;
	else
		return err_set(err, 0, "--format: unknown format '%s' (tar, oci or docker)", s);
	return 0;
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
	if (store_image_open(name, &img, err) < 0)
		return -1;
	if (!q->max_size)
		copycap_image(img.size, q->ex.output, &q->cap);
	q->ex.max_data = q->cap.max;
	q->ex.max_why = q->cap.why;
	int r = write_tree(img.rootfs_fd, "/", name, img.digest, NULL, q, err);
	store_image_close(&img);
	return r;
}

int cmd_image_export(int argc, char **argv, struct sbx_err *err)
{
	static const struct option lo[] = { { "output", required_argument, NULL, 'o' },
					    { "workspace", no_argument, NULL, 'W' },
					    { "mtime", required_argument, NULL, 'm' },
					    { "format", required_argument, NULL, 'f' },
					    { "max-size", required_argument, NULL, 'M' },
					    { "help", no_argument, NULL, 'h' }, { 0 } };
	struct export_req q = { .ex = { .mtime = -1 }, .format = FMT_TAR };
	int c;
	uint64_t mt;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'h') {
			printf("%s", export_usage);
			return 0;
		} else if (c == 'o') {
			q.ex.output = optarg;
		} else if (c == 'W') {
			q.ws_only = 1;
		} else if (c == 'm') {
			if (parse_count(optarg, 0, 1ULL << 40, &mt, err) < 0)
				return err_wrap(err, "--mtime");
			q.ex.mtime = (int64_t)mt;
		} else if (c == 'M') {
			q.max_size = optarg;
			if (copycap_option(optarg, &q.cap, err) < 0)
				return -1;
		} else if (c == 'f') {
			if (parse_format(optarg, &q.format, err) < 0)
				return -1;
		} else {
			return err_set(err, 0, "image export: bad option '%s' (see 'sbxrun image export --help')",
				       argv[optind - 1]);
		}
	}
	if (optind != argc - 1 || !q.ex.output)
		return err_set(err, 0, "usage: sbxrun image export SESSION|IMAGE -o FILE [--workspace] [--format tar|oci|docker]");
	if (q.ws_only && q.format != FMT_TAR)
		return err_set(err, 0, "--workspace: only with --format tar");
	const char *name = argv[optind];
	_cleanup_free_ char *dir = NULL;
	if (session_dir(name, &dir, err) < 0)
		return -1;
	if (session_alive(dir))
		return export_session(name, &q, err) < 0 ? -1 : 0;
	if (q.ws_only)
		return err_set(err, 0, "--workspace: '%s' is not a running session", name);
	return export_image(name, &q, err) < 0 ? -1 : 0;
}
