/* oci_import.c - importing an OCI image layout or a docker-archive (what
 * `skopeo copy ... oci-archive:` or `podman save` write, or a registry
 * mirror's export): the outer tarball is unpacked with the same checks as a
 * rootfs, its manifest names the layers, each OCI layer's digest is
 * verified, and the layers are applied in order into the rootfs. Before a
 * layer's entries go in, its whiteouts (.wh.NAME, .wh..wh..opq) remove what
 * the lower layers left, through directory fds that never follow a
 * symlink. The layout is removed before the image is committed. */
#define _GNU_SOURCE
#include "store/oci_import.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <locale.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "store/digest.h"

#define MAX_LAYERS 128
#define MAX_JSON (4 << 20)

/* pax headers carry UTF-8 names, which libarchive refuses under the C
 * locale: the scans below run under C.UTF-8, as import_extract_fd does. */
static locale_t utf8_begin(void)
{
	locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	if (utf8)
		uselocale(utf8);
	return utf8;
}

static void utf8_end(locale_t utf8)
{
	if (utf8) {
		uselocale(LC_GLOBAL_LOCALE);
		freelocale(utf8);
	}
}

static struct archive *reader(int fd)
{
	struct archive *a = archive_read_new();
	archive_read_support_format_tar(a);
	archive_read_support_filter_none(a);
	archive_read_support_filter_gzip(a);
	archive_read_support_filter_xz(a);
	archive_read_support_filter_zstd(a);
	if (archive_read_open_fd(a, fd, 1 << 16) != ARCHIVE_OK) {
		archive_read_free(a);
		return NULL;
	}
	return a;
}

int oci_import_detect(int fd, struct sbx_err *err)
{
	struct archive *a = reader(fd);
	struct archive_entry *e;
	int layout = 0, manifest = 0, etc = 0;

	if (!a)
		return 0; /* not a tarball: the rootfs import says so */
	locale_t utf8 = utf8_begin();
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		p = p ? import_rel_path(p) : "";
		layout |= !strcmp(p, "oci-layout");
		manifest |= !strcmp(p, "manifest.json");
		etc |= !strcmp(p, "etc") || !strcmp(p, "etc/");
	}
	archive_read_free(a);
	utf8_end(utf8);
	if (lseek(fd, 0, SEEK_SET) < 0)
		return err_sys(err, "seek");
	return layout ? OCI_IMPORT_OCI : manifest && !etc ? OCI_IMPORT_DOCKER : OCI_IMPORT_PLAIN;
}

static int open_beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags | O_NOFOLLOW | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

static struct json_object *read_json(int dirfd, const char *path, struct sbx_err *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len;
	if (read_file_beneath(dirfd, path, MAX_JSON, &text, &len, err) < 0)
		return NULL;
	struct json_object *j = json_tokener_parse(text);
	if (!j)
		err_set(err, 0, "'%s' is not JSON", path);
	return j;
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : NULL;
}

static struct json_object *jget(struct json_object *o, const char *key, json_type t)
{
	struct json_object *v;
	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, t) ? v : NULL;
}

/* "sha256:HEX" -> "blobs/sha256/HEX", refusing anything else. */
static char *blob_path(const char *digest, struct sbx_err *err)
{
	if (!digest || strncmp(digest, "sha256:", 7) != 0 || !digest_valid(digest + 7)) {
		err_set(err, 0, "bad digest '%s'", digest ? digest : "(none)");
		return NULL;
	}
	return xasprintf("blobs/sha256/%s", digest + 7);
}

/* The first manifest that index.json lists. */
static struct json_object *oci_manifest(int lfd, struct sbx_err *err)
{
	struct json_object *idx = read_json(lfd, "index.json", err), *man = NULL;
	struct json_object *list = jget(idx, "manifests", json_type_array);

	if (!idx)
		return NULL;
	if (!list || json_object_array_length(list) < 1) {
		err_set(err, 0, "index.json lists no manifest");
	} else {
		char *mp = blob_path(jstr(json_object_array_get_idx(list, 0), "digest"), err);
		man = mp ? read_json(lfd, mp, err) : NULL;
		free(mp);
	}
	json_object_put(idx);
	return man;
}

/* The layers of an OCI layout, as blob paths in *out (NULL-ended); each is
 * checked against its digest when applied. */
static int oci_layers(int lfd, char ***out, struct sbx_err *err)
{
	struct json_object *man = oci_manifest(lfd, err);
	struct json_object *layers = jget(man, "layers", json_type_array);
	size_t n = layers ? json_object_array_length(layers) : 0;
	int r = 0;

	if (!man)
		return -1;
	if (n < 1 || n > MAX_LAYERS)
		r = err_set(err, 0, "the manifest has %zu layers (1 to %d)", n, MAX_LAYERS);
	else
		*out = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; r == 0 && i < n; i++)
		if (!((*out)[i] = blob_path(jstr(json_object_array_get_idx(layers, i), "digest"), err)))
			r = -1;
	json_object_put(man);
	return r;
}

static int docker_layers(int lfd, char ***out, struct sbx_err *err)
{
	struct json_object *m = read_json(lfd, "manifest.json", err);
	struct json_object *first = m && json_object_is_type(m, json_type_array) &&
		json_object_array_length(m) > 0 ? json_object_array_get_idx(m, 0) : NULL;
	struct json_object *layers = jget(first, "Layers", json_type_array);
	size_t n = layers ? json_object_array_length(layers) : 0;
	int r = -1;

	if (!m)
		return -1;
	if (n < 1 || n > MAX_LAYERS) {
		err_set(err, 0, "manifest.json has %zu layers (1 to %d)", n, MAX_LAYERS);
		goto out;
	}
	*out = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		struct json_object *l = json_object_array_get_idx(layers, i);
		const char *p = json_object_is_type(l, json_type_string) ? json_object_get_string(l) : "";
		if (import_check_name(p, "layer", 8, err) < 0 || !*import_rel_path(p))
			goto out;
		(*out)[i] = xstrdup(p);
	}
	r = 0;
out:
	json_object_put(m);
	return r;
}

/* Empties a directory (an opaque whiteout): its children from lower layers. */
static int clear_one(int dfd, const char *name, void *arg)
{
	return rm_rf_at(dfd, name, arg);
}

static int clear_dir(int dfd, struct sbx_err *err)
{
	return dir_each(dfd, clear_one, err, err) < 0 ? err_wrap(err, "opaque whiteout") : 0;
}

/* One whiteout entry: .wh..wh..opq empties its directory, .wh.NAME removes
 * NAME. Parents are resolved beneath the root without symlinks; a missing
 * parent means there is nothing to hide. */
static int apply_whiteout(int rootfd, const char *raw, unsigned max_depth, struct sbx_err *err)
{
	if (import_check_name(raw, "whiteout", max_depth, err) < 0)
		return -1;
	const char *path = import_rel_path(raw), *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	_cleanup_free_ char *parent = slash ? xasprintf("%.*s", (int)(slash - path), path) : xstrdup(".");
	_cleanup_close_ int pfd = open_beneath(rootfd, parent, O_RDONLY | O_DIRECTORY);

	if (pfd < 0 && errno == ENOENT)
		return 0;
	if (pfd < 0)
		return err_set(err, errno == ELOOP || errno == EXDEV ? 0 : errno,
			       "whiteout '%s' goes through a symlink or cannot be resolved", raw);
	if (!strcmp(base, ".wh..wh..opq"))
		return clear_dir(pfd, err);
	const char *name = base + 4;
	if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
		return err_set(err, 0, "whiteout '%s' names nothing", raw);
	return rm_rf_at(pfd, name, err);
}

/* The whiteouts of a layer, against the lower layers only: before any of
 * the layer's own entries is written. */
static int whiteouts(int fd, int rootfd, const struct sbx_import_limits *lim, struct sbx_err *err)
{
	struct archive *a = reader(fd);
	struct archive_entry *e;
	int r = 0, rr;

	if (!a)
		return err_set(err, 0, "a layer is not a tarball");
	locale_t utf8 = utf8_begin();
	while (r == 0 && (rr = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *p = archive_entry_pathname(e);
		const char *b = p ? strrchr(p, '/') : NULL;
		if (p && str_has_prefix(b ? b + 1 : p, ".wh."))
			r = apply_whiteout(rootfd, p, lim->max_depth, err);
	}
	if (r == 0 && rr != ARCHIVE_EOF)
		r = err_set(err, 0, "a layer is not a readable tarball: %s", archive_error_string(a));
	archive_read_free(a);
	utf8_end(utf8);
	if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = err_sys(err, "seek");
	return r;
}

static int apply_layer(int lfd, const char *path, int kind, int rootfd,
		       const struct sbx_import_limits *lim, struct sbx_import_stats *st,
		       struct sbx_err *err)
{
	_cleanup_close_ int fd = open_beneath(lfd, path, O_RDONLY);
	char hex[SBX_DIGEST_HEX + 1];
	struct sbx_import_limits layer = *lim;

	layer.layer = true;
	if (fd < 0)
		return err_sys(err, "layer '%s'", path);
	if (kind == OCI_IMPORT_OCI) { /* blobs/sha256/HEX must hash to HEX */
		if (digest_fd(fd, hex, err) < 0 || lseek(fd, 0, SEEK_SET) < 0)
			return err_wrap(err, "layer '%s'", path);
		if (strcmp(hex, strrchr(path, '/') + 1) != 0)
			return err_set(err, 0, "layer '%s' does not match its digest", path);
	}
	if (whiteouts(fd, rootfd, &layer, err) < 0 ||
	    import_extract_fd(fd, rootfd, &layer, st, err) < 0)
		return err_wrap(err, "layer '%s'", path);
	return 0;
}

int oci_import_layers(int archive_fd, int kind, int stagingfd, int rootfd,
		      const struct sbx_import_limits *lim, struct sbx_import_stats *st,
		      struct sbx_err *err)
{
	struct sbx_import_stats outer = { 0 };
	_cleanup_strv_ char **layers = NULL;
	int r = -1;

	if (mkdirat(stagingfd, "layout", 0700) < 0)
		return err_sys(err, "mkdir 'layout' in the staging directory");
	int lfd = openat(stagingfd, "layout", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lfd < 0)
		return err_sys(err, "open 'layout'");
	if (import_extract_fd(archive_fd, lfd, lim, &outer, err) < 0) {
		err_wrap(err, "image archive");
		goto out;
	}
	if ((kind == OCI_IMPORT_OCI ? oci_layers(lfd, &layers, err) : docker_layers(lfd, &layers, err)) < 0)
		goto out;
	r = 0;
	for (size_t i = 0; r == 0 && layers[i]; i++)
		r = apply_layer(lfd, layers[i], kind, rootfd, lim, st, err);
out:
	close(lfd);
	struct sbx_err ignored;
	if (rm_rf_at(stagingfd, "layout", &ignored) < 0 && r == 0)
		r = err_set(err, ignored.errnum, "remove the layout: %s", ignored.msg);
	return r;
}
