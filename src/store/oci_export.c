/* oci_export.c - an image or a session's tree as an OCI image layout or a
 * docker-archive, for engines that schedule containers across machines
 * (podman, Kubernetes). One uncompressed layer (written by export.c), a
 * config that carries what the image needs to run elsewhere (Env with the
 * image's own PATH, WorkingDir, Cmd, labels naming the source), and the
 * manifests and index around them, every blob named by its sha256. The
 * pieces are staged in a temporary directory beside the output, tarred, and
 * the tarball linked into place, so a failure or a signal leaves nothing
 * behind (base/hostfile.c). */
#define _GNU_SOURCE
#include "store/oci_export.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/util.h"
#include "store/digest.h"
#include "store/export.h"
#include "store/imgmeta.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define MT_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_LAYER "application/vnd.oci.image.layer.v1.tar"

/* A file staged in the temporary directory, with its digest and size. */
struct blob {
	char name[80];
	char hex[SBX_DIGEST_HEX + 1];
	uint64_t size;
};

struct stage {
	const char *dir;  /* the temporary directory */
	int dirfd;
	struct blob files[6];
	size_t n;
};

static const char *oci_arch(void)
{
	static const char *const map[][2] = { { "x86_64", "amd64" }, { "aarch64", "arm64" },
					      { "armv7l", "arm" }, { "i686", "386" },
					      { "ppc64le", "ppc64le" }, { "s390x", "s390x" },
					      { "riscv64", "riscv64" } };
	struct utsname u;
	if (uname(&u) == 0)
		for (size_t i = 0; i < ARRAY_SIZE(map); i++)
			if (strcmp(u.machine, map[i][0]) == 0)
				return map[i][1];
	return "amd64";
}

/* Hashes a staged file and records it. */
static int stage_add(struct stage *s, const char *name, struct sbx_err *err)
{
	_cleanup_close_ int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct blob *b = &s->files[s->n];

	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, "export: '%s/%s'", s->dir, name);
	if (digest_fd(fd, b->hex, err) < 0)
		return -1;
	snprintf(b->name, sizeof(b->name), "%s", name);
	b->size = (uint64_t)st.st_size;
	s->n++;
	return 0;
}

/* Writes a JSON document as a staged file and records it. */
static int stage_json(struct stage *s, const char *name, struct json_object *o, struct blob **out,
		      struct sbx_err *err)
{
	const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							     JSON_C_TO_STRING_NOSLASHESCAPE);
	_cleanup_close_ int fd = openat(s->dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);

	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "export: write '%s/%s'", s->dir, name);
	if (stage_add(s, name, err) < 0)
		return -1;
	if (out)
		*out = &s->files[s->n - 1];
	return 0;
}

static struct json_object *jstr(const char *s)
{
	return json_object_new_string(s);
}

static struct json_object *descriptor(const char *mt, const struct blob *b)
{
	struct json_object *d = json_object_new_object();
	_cleanup_free_ char *dg = xasprintf("sha256:%s", b->hex);
	json_object_object_add(d, "mediaType", jstr(mt));
	json_object_object_add(d, "digest", jstr(dg));
	json_object_object_add(d, "size", json_object_new_int64((int64_t)b->size));
	return d;
}

/* KEY=VALUE list: PATH and LANG first, then the image's /etc/environment
 * (which may replace them, e.g. a venv's PATH). */
static struct json_object *env_array(int rootfd)
{
	struct sbx_list env = { 0 }, hosts = { 0 };
	struct json_object *a = json_object_new_array();
	const char *keep[] = { "PATH=" DEFAULT_PATH, "LANG=C.UTF-8" };
	char *merged[64 + ARRAY_SIZE(keep)];
	size_t n = 0;

	struct sbx_err ignored; /* an unreadable environment file: the defaults */
	(void)imgmeta_read(rootfd, &env, &hosts, &ignored);
	for (size_t i = 0; i < ARRAY_SIZE(keep); i++)
		merged[n++] = (char *)keep[i];
	for (size_t i = 0; i < env.n && n < ARRAY_SIZE(merged); i++) {
		size_t k = strcspn(env.v[i], "=");
		size_t j = 0;
		if (!env.v[i][k])
			continue;
		while (j < n && !(strncmp(merged[j], env.v[i], k + 1) == 0))
			j++;
		merged[j] = env.v[i];
		n += j == n;
	}
	for (size_t i = 0; i < n; i++)
		json_object_array_add(a, jstr(merged[i]));
	imgmeta_list_free(env.v);
	imgmeta_list_free(hosts.v);
	return a;
}

static struct json_object *make_config(int rootfd, const struct sbx_oci_export *o,
				       const struct blob *layer)
{
	struct json_object *c = json_object_new_object(), *cfg = json_object_new_object();
	struct json_object *labels = json_object_new_object(), *cmd = json_object_new_array();
	struct json_object *rootfs = json_object_new_object(), *ids = json_object_new_array();
	char when[32];
	time_t t = o->mtime >= 0 ? (time_t)o->mtime : time(NULL);
	_cleanup_free_ char *diff = xasprintf("sha256:%s", layer->hex);

	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	json_object_object_add(c, "created", jstr(when));
	json_object_object_add(c, "architecture", jstr(oci_arch()));
	json_object_object_add(c, "os", jstr("linux"));
	json_object_object_add(cfg, "Env", env_array(rootfd));
	json_object_array_add(cmd, jstr("/bin/bash"));
	json_object_object_add(cfg, "Cmd", cmd);
	json_object_object_add(cfg, "WorkingDir", jstr(o->workdir ? o->workdir : "/"));
	json_object_object_add(labels, "org.opencontainers.image.title", jstr(o->name));
	json_object_object_add(labels, "org.opencontainers.image.created", jstr(when));
	json_object_object_add(labels, "io.sbxrun.source", jstr(o->source));
	if (o->digest)
		json_object_object_add(labels, "io.sbxrun.image.digest", jstr(o->digest));
	json_object_object_add(cfg, "Labels", labels);
	json_object_object_add(c, "config", cfg);
	json_object_array_add(ids, jstr(diff));
	json_object_object_add(rootfs, "type", jstr("layers"));
	json_object_object_add(rootfs, "diff_ids", ids);
	json_object_object_add(c, "rootfs", rootfs);
	return c;
}

static int write_oci_index(struct stage *s, const struct sbx_oci_export *o, struct blob *config,
			   struct blob *layer, struct sbx_err *err)
{
	struct json_object *m = json_object_new_object(), *layers = json_object_new_array();
	struct json_object *idx = json_object_new_object(), *list = json_object_new_array();
	struct json_object *ann = json_object_new_object(), *lay = json_object_new_object();
	struct blob *mb;

	json_object_object_add(m, "schemaVersion", json_object_new_int(2));
	json_object_object_add(m, "mediaType", jstr(MT_MANIFEST));
	json_object_object_add(m, "config", descriptor(MT_CONFIG, config));
	json_object_array_add(layers, descriptor(MT_LAYER, layer));
	json_object_object_add(m, "layers", layers);
	int r = stage_json(s, "manifest", m, &mb, err);
	json_object_put(m);
	if (r == 0) {
		struct json_object *d = descriptor(MT_MANIFEST, mb);
		json_object_object_add(ann, "org.opencontainers.image.ref.name", jstr(o->ref));
		json_object_object_add(d, "annotations", ann);
		json_object_array_add(list, d);
		json_object_object_add(idx, "schemaVersion", json_object_new_int(2));
		json_object_object_add(idx, "manifests", list);
		r = stage_json(s, "index.json", idx, NULL, err);
		json_object_object_add(lay, "imageLayoutVersion", jstr("1.0.0"));
		if (r == 0)
			r = stage_json(s, "oci-layout", lay, NULL, err);
	} else {
		json_object_put(ann);
		json_object_put(list);
	}
	json_object_put(idx);
	json_object_put(lay);
	return r;
}

static int write_docker_manifest(struct stage *s, const struct sbx_oci_export *o,
				 const struct blob *config, const struct blob *layer,
				 struct sbx_err *err)
{
	struct json_object *top = json_object_new_array(), *one = json_object_new_object();
	struct json_object *tags = json_object_new_array(), *layers = json_object_new_array();
	_cleanup_free_ char *cname = xasprintf("%s.json", config->hex);
	_cleanup_free_ char *lname = xasprintf("%s/layer.tar", layer->hex);

	json_object_object_add(one, "Config", jstr(cname));
	json_object_array_add(tags, jstr(o->ref));
	json_object_object_add(one, "RepoTags", tags);
	json_object_array_add(layers, jstr(lname));
	json_object_object_add(one, "Layers", layers);
	json_object_array_add(top, one);
	int r = stage_json(s, "manifest.json", top, NULL, err);
	json_object_put(top);
	return r;
}

/* Copies a staged file into the outer tarball under the name `path`. */
static int tar_file(struct archive *a, struct stage *s, const char *name, const char *path,
		    int64_t mtime, struct sbx_err *err)
{
	_cleanup_close_ int fd = openat(s->dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct archive_entry *e = archive_entry_new();
	struct stat st;
	char buf[65536];
	int r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		archive_entry_free(e);
		return err_sys(err, "export: '%s/%s'", s->dir, name);
	}
	archive_entry_set_pathname(e, path);
	archive_entry_set_filetype(e, S_ISDIR(st.st_mode) ? AE_IFDIR : AE_IFREG);
	archive_entry_set_perm(e, S_ISDIR(st.st_mode) ? 0755 : 0644);
	archive_entry_set_mtime(e, mtime, 0);
	archive_entry_set_size(e, S_ISDIR(st.st_mode) ? 0 : st.st_size);
	if (archive_write_header(a, e) < ARCHIVE_WARN)
		r = err_set(err, 0, "export: '%s': %s", path, archive_error_string(a));
	archive_entry_free(e);
	for (ssize_t n; r == 0 && S_ISREG(st.st_mode) && (n = read(fd, buf, sizeof(buf))) != 0;) {
		if (n < 0 || archive_write_data(a, buf, (size_t)n) < 0)
			r = err_set(err, n < 0 ? errno : 0, "export: '%s': write failed", path);
	}
	return r;
}

static int tar_all(struct archive *a, struct stage *s, const struct sbx_oci_export *o, int64_t mt,
		   struct sbx_err *err)
{
	int r = 0;

	if (o->format == SBX_OCI_FORMAT_OCI) {
		r = tar_file(a, s, ".", "blobs", mt, err);
		if (r == 0)
			r = tar_file(a, s, ".", "blobs/sha256", mt, err);
	}
	for (size_t i = 0; r == 0 && i < s->n; i++) {
		const struct blob *b = &s->files[i];
		_cleanup_free_ char *p = NULL;
		if (o->format == SBX_OCI_FORMAT_OCI)
			p = !strcmp(b->name, "index.json") || !strcmp(b->name, "oci-layout")
				    ? xstrdup(b->name) : xasprintf("blobs/sha256/%s", b->hex);
		else if (!strcmp(b->name, "layer.tar") && (r = tar_file(a, s, ".", b->hex, mt, err)) == 0)
			p = xasprintf("%s/layer.tar", b->hex);
		else
			p = !strcmp(b->name, "config") ? xasprintf("%s.json", b->hex) : xstrdup(b->name);
		if (r == 0)
			r = tar_file(a, s, b->name, p, mt, err);
	}
	return r;
}

/* The outer tarball: every staged file under its place in the layout. */
static int write_outer(struct stage *s, const struct sbx_oci_export *o, struct sbx_err *err)
{
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };
	int64_t mt = o->mtime >= 0 ? o->mtime : time(NULL);

	if (hostfile_open(&hf, AT_FDCWD, o->output, 0644, err) < 0)
		return err_wrap(err, "export");
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_none(a);
	int r = archive_write_open_fd(a, hf.fd) != ARCHIVE_OK
		? err_set(err, 0, "'%s': %s", o->output, archive_error_string(a)) : 0;
	if (r == 0)
		r = tar_all(a, s, o, mt, err);
	if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
		r = err_set(err, 0, "'%s': %s", o->output, archive_error_string(a));
	archive_write_free(a);
	return r == 0 ? hostfile_commit(&hf, true, err) : -1;
}

static int stage_all(int rootfd, const char *top, struct stage *s, const struct sbx_oci_export *o,
		     struct sbx_err *err)
{
	_cleanup_free_ char *lpath = xasprintf("%s/layer.tar", s->dir);
	struct sbx_export ex = { .output = lpath, .mtime = o->mtime, .extra_dev = o->extra_dev,
				 .max_data = o->max_data, .max_why = o->max_why };
	struct blob *config;

	if (export_tree(rootfd, top, &ex, err) < 0 || stage_add(s, "layer.tar", err) < 0)
		return -1;
	struct blob *layer = &s->files[0];
	struct json_object *c = make_config(rootfd, o, layer);
	int r = stage_json(s, "config", c, &config, err);
	json_object_put(c);
	if (r < 0)
		return -1;
	if (o->format == SBX_OCI_FORMAT_OCI)
		return write_oci_index(s, o, config, layer, err);
	return write_docker_manifest(s, o, config, layer, err);
}

int oci_export(int rootfd, const char *top, const struct sbx_oci_export *o, struct sbx_err *err)
{
	struct sbx_hostdir d = { 0 };
	int r = -1;

	if (hostfile_dir_make(&d, o->output, err) < 0)
		return err_wrap(err, "export");
	struct stage s = { .dir = d.path, .dirfd = d.fd };
	if (stage_all(rootfd, top, &s, o, err) == 0)
		r = write_outer(&s, o, err);
	hostfile_dir_remove(&d);
	return r;
}
