/* export_cmd.c - `sbxrun image export SESSION|IMAGE -o FILE`: finds the tree
 * (a live session's root, or an image's rootfs) and hands it to the store's
 * tarball writer (store/export.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/util.h"
#include "cmd/commands.h"
#include "session/session.h"
#include "session/session_client.h"
#include "store/export.h"
#include "store/store.h"

static const char export_usage[] =
	"usage: sbxrun image export SESSION|IMAGE -o FILE [--workspace] [--mtime SECONDS]\n"
	"Writes a live session's filesystem (image plus writable layer and workspace),\n"
	"or only its workspace, or an image, as .tar, .tar.gz, .tar.xz or .tar.zst.\n";

static int export_session(const char *name, int ws_only, struct sbx_export *ex, struct sbx_err *err)
{
	_cleanup_free_ char *ws = NULL;
	int rootfd;
	struct stat st;

	if (session_root(name, &rootfd, &ws, err) < 0)
		return -1;
	if (ws_only && !ws[0]) {
		close(rootfd);
		return err_set(err, 0, "session '%s' has no workspace", name);
	}
	_cleanup_close_ int wsfd = ws[0] ? inroot_open(rootfd, ws, O_PATH | O_DIRECTORY, 0, err) : -1;
	if (wsfd >= 0 && fstat(wsfd, &st) == 0)
		ex->extra_dev = st.st_dev;
	int r = export_tree(rootfd, ws_only ? ws : "/", ex, err);
	close(rootfd);
	return r;
}

static int export_image(const char *name, struct sbx_export *ex, struct sbx_err *err)
{
	struct sbx_image img;
	if (store_image_open(name, &img, err) < 0)
		return -1;
	int r = export_tree(img.rootfs_fd, "/", ex, err);
	store_image_close(&img);
	return r;
}

int cmd_image_export(int argc, char **argv, struct sbx_err *err)
{
	static const struct option lo[] = { { "output", required_argument, NULL, 'o' },
					    { "workspace", no_argument, NULL, 'W' },
					    { "mtime", required_argument, NULL, 'm' },
					    { "help", no_argument, NULL, 'h' }, { 0 } };
	struct sbx_export ex = { .mtime = -1 };
	int c, ws_only = 0;
	uint64_t mt;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
		if (c == 'h') {
			printf("%s", export_usage);
			return 0;
		} else if (c == 'o') {
			ex.output = optarg;
		} else if (c == 'W') {
			ws_only = 1;
		} else if (c == 'm') {
			if (parse_count(optarg, 0, 1ULL << 40, &mt, err) < 0)
				return err_wrap(err, "--mtime");
			ex.mtime = (int64_t)mt;
		} else {
			return err_set(err, 0, "image export: bad option '%s' (see 'sbxrun image export --help')",
				       argv[optind - 1]);
		}
	}
	if (optind != argc - 1 || !ex.output)
		return err_set(err, 0, "usage: sbxrun image export SESSION|IMAGE -o FILE [--workspace]");
	const char *name = argv[optind];
	_cleanup_free_ char *dir = NULL;
	if (session_dir(name, &dir, err) < 0)
		return -1;
	if (session_alive(dir))
		return export_session(name, ws_only, &ex, err) < 0 ? -1 : 0;
	if (ws_only)
		return err_set(err, 0, "--workspace: '%s' is not a running session", name);
	return export_image(name, &ex, err) < 0 ? -1 : 0;
}
