/* discover.c - @npm is what the image's npm answers to `npm config get
 * registry`, @pypi what its pip uses as index (and, for the default index,
 * its file host): asked once at import, in a sandbox, so that a lab that
 * points its image at its own mirror gets that mirror and nothing else. No
 * registry host is written here: the tools in the image name them. */
#define _GNU_SOURCE
#include "store/discover.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hostaddr.h"
#include "base/inroot.h"
#include "base/log.h"
#include "base/util.h"
#include "store/imgmeta.h"
#include "store/imgsrc.h"
#include "store/store.h"

static const char script[] =
	"if command -v npm >/dev/null 2>&1; then r=$(npm config get registry 2>/dev/null) && echo \"npm $r\"; fi\n"
	"for py in python3 python; do command -v $py >/dev/null 2>&1 || continue\n"
	"$py -c '\n"
	"import os, subprocess, sys\n"
	"try:\n"
	"    from pip._internal.models.index import PyPI\n"
	"except Exception:\n"
	"    sys.exit(0)\n"
	"def get(k):\n"
	"    try:\n"
	"        r = subprocess.run([sys.executable, \"-m\", \"pip\", \"config\", \"get\", k],\n"
	"                           capture_output=True, text=True, timeout=30)\n"
	"        return r.stdout.strip() if r.returncode == 0 else \"\"\n"
	"    except Exception:\n"
	"        return \"\"\n"
	"idx = os.environ.get(\"PIP_INDEX_URL\") or get(\"global.index-url\") or PyPI.simple_url\n"
	"print(\"pypi\", idx)\n"
	"for e in (os.environ.get(\"PIP_EXTRA_INDEX_URL\") or get(\"global.extra-index-url\")).split():\n"
	"    print(\"pypi\", e)\n"
	"if idx == PyPI.simple_url:\n"
	"    print(\"pypi\", \"https://\" + PyPI.file_storage_domain)\n"
	"' 2>/dev/null; break; done\n"
	/* go: its proxy and checksum database, and the key its binary carries
	 * for that database's name (GOSUMDB names it alone by default) */
	"if command -v go >/dev/null 2>&1; then g=$(go env GOPROXY GOSUMDB 2>/dev/null) && {\n"
	"  echo \"$g\" | sed -n '1s/^/go-proxy /p;2s/^/go-sumdb /p'\n"
	"  n=$(echo \"$g\" | sed -n '2{s/[+ ].*//;p;}' | grep -x '[a-z0-9.-]*' | sed 's/[.]/[.]/g')\n"
	"  k=\"$n[+][0-9a-f]{8}[+][A-Za-z0-9+/]{44}\"; b=$(command -v go)\n"
	"  [ -n \"$n\" ] && { grep -aoE \"$k\" \"$b\" 2>/dev/null || tr '\\000' '\\n' < \"$b\" | grep -oE \"$k\"; } | head -1 | sed 's/^/go-key /'; }; fi\n"
	/* cargo: the config files its home holds (source replacement) */
	"if command -v cargo >/dev/null 2>&1 || [ -x \"${CARGO_HOME:-/usr/local/cargo}/bin/cargo\" ] || [ -x \"$HOME/.cargo/bin/cargo\" ]; then\n"
	"  for f in ${CARGO_HOME:+\"$CARGO_HOME/config.toml\" \"$CARGO_HOME/config\"} /usr/local/cargo/config.toml /usr/local/cargo/config \\\n"
	"    \"$HOME/.cargo/config.toml\" \"$HOME/.cargo/config\"; do [ -f \"$f\" ] || continue\n"
	"    echo \"cargo-file $f\"; head -c 16384 \"$f\" | sed 's/^/cargo| /'; echo; done; fi\n"
	/* maven: settings.xml, the user's first, and its super POM's jar */
	"if m=$(command -v mvn 2>/dev/null); then h=${MAVEN_HOME:-$(dirname \"$(dirname \"$(readlink -f \"$m\")\")\")}\n"
	"  for f in \"$HOME/.m2/settings.xml\" \"$h/conf/settings.xml\" /etc/maven/settings.xml; do [ -f \"$f\" ] || continue\n"
	"    echo \"maven-file $f\"; head -c 32768 \"$f\" | sed 's/^/maven| /'; echo; done\n"
	"  for j in \"$h\"/lib/maven-model-builder*.jar; do [ -f \"$j\" ] && echo \"maven-jar $(readlink -f \"$j\")\"; break; done; fi\n";

/* Runs the script in a sandbox of the image; returns its output. */
static char *ask_image(const char *name)
{
	int p[2];
	char *out = NULL;
	size_t size = 0;

	if (pipe2(p, O_CLOEXEC) < 0)
		return NULL;
	pid_t pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(p[1], 1);
		dup2(null, 2);
		execl("/proc/self/exe", "sbxrun", "-q", "run", "--image", name, "--net", "none",
		      "--timeout", "2m", "--", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	FILE *f = fdopen(p[0], "r"), *m = open_memstream(&out, &size);
	char line[1024];
	while (f && fgets(line, sizeof(line), f) && size < 65536)
		fputs(line, m);
	fclose(m);
	if (f)
		fclose(f);
	int st = 0;
	if (pid < 0 || waitpid(pid, &st, 0) < 0)
		st = -1;
	/* the sources are read only now: an image whose tools could not be
	 * asked works, but with no @npm/@pypi, and the user should know why */
	if (st == -1)
		log_warn("image '%s': cannot ask its package tools for their sources", name);
	else if (WIFEXITED(st) && WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 127) /* 127: no shell */
		log_warn("image '%s': asking its package tools for their sources ended with status %d; "
			 "@npm and @pypi may be empty", name, WEXITSTATUS(st));
	else if (WIFSIGNALED(st))
		log_warn("image '%s': asking its package tools for their sources was killed by signal %d; "
			 "@npm and @pypi may be empty", name, WTERMSIG(st));
	return out;
}

/* "npm URL" / "pypi URL" lines → space-separated lists; a URL that names
 * what an image may not grant goes to dropped instead. */
static void parse(const char *out, char **npm, char **pypi, struct sbx_list *dropped)
{
	_cleanup_free_ char *copy = xstrdup(out ? out : "");
	size_t nn = 0, np = 0;
	char nbuf[4096] = "", pbuf[4096] = "";

	for (char *save = NULL, *l = strtok_r(copy, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *url = strchr(l, ' ');
		if (!url || (strncmp(l, "npm ", 4) != 0 && strncmp(l, "pypi ", 5) != 0))
			continue; /* the other tools' lines: imgsrc.c */
		if (strspn(url + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:/._-~%@[]+")
			    != strlen(url + 1) || !url[1])
			continue; /* only plain URLs are taken from the image */
		*url++ = '\0';
		const char *why = hostaddr_image_refusal(url);
		if (why) {
			_cleanup_free_ char *line = xasprintf("%s %s: %s", l, url, why);
			log_warn("package source left out (an image may not grant it): %s", line);
			imgmeta_list_add(dropped, line, strlen(line));
			continue;
		}
		if (!strcmp(l, "npm"))
			nn += (size_t)snprintf(nbuf + nn, sizeof(nbuf) - nn, "%s%s", nn ? " " : "", url);
		else if (!strcmp(l, "pypi"))
			np += (size_t)snprintf(pbuf + np, sizeof(pbuf) - np, "%s%s", np ? " " : "", url);
		if (nn >= sizeof(nbuf) || np >= sizeof(pbuf))
			break;
	}
	*npm = xstrdup(nbuf);
	*pypi = xstrdup(pbuf);
}

/* Maven's super POM, from maven-model-builder's jar in the image (a zip
 * read with libarchive beneath the rootfs): central's URL into buf. */
static const char *superpom(int dirfd, const char *jar, char *buf, size_t size)
{
	_cleanup_close_ int root = openat(dirfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct sbx_err ignore = { 0 };
	_cleanup_close_ int fd = root < 0 ? -1 : inroot_open(root, jar, O_RDONLY | O_CLOEXEC, 0, &ignore);
	struct archive *a = fd < 0 ? NULL : archive_read_new();
	struct archive_entry *e;
	const char *r = NULL;

	if (!a)
		return NULL;
	archive_read_support_format_zip_seekable(a);
	if (archive_read_open_fd(a, fd, 65536) == ARCHIVE_OK)
		while (!r && archive_read_next_header(a, &e) == ARCHIVE_OK) {
			if (strcmp(archive_entry_pathname(e), "org/apache/maven/model/pom-4.0.0.xml") != 0 ||
			    archive_entry_size(e) <= 0 || archive_entry_size(e) > (1 << 20))
				continue;
			size_t n = (size_t)archive_entry_size(e);
			_cleanup_free_ char *xml = xmalloc(n);
			if (archive_read_data(a, xml, n) == (la_ssize_t)n)
				r = imgsrc_maven_superpom(xml, n, buf, size);
			break;
		}
	archive_read_free(a);
	return r;
}

/* One of the tool's sources into *field, unless an image may not grant it. */
static void take(char **field, const char *tool, const char *url, struct sbx_list *dropped)
{
	const char *sp = strrchr(url, ' ');  /* go's "KEY URL": its URL */
	const char *why = url[0] ? hostaddr_image_refusal(sp ? sp + 1 : url) : NULL;
	if (why) {
		_cleanup_free_ char *line = xasprintf("%s %s: %s", tool, url, why);
		log_warn("package source left out (an image may not grant it): %s", line);
		imgmeta_list_add(dropped, line, strlen(line));
		url = "";
	}
	free(*field);
	*field = xstrdup(url);
}

/* @go, @cargo and @maven into m (the image's directory dirfd). */
static void tool_sources(const char *name, int dirfd, const struct imgsrc *src, struct sbx_meta *m,
			 struct sbx_list *dropped)
{
	char buf[1024];
	const char *maven = src->maven_repo;

	if (!maven[0] && src->maven_jar[0])
		maven = superpom(dirfd, src->maven_jar, buf, sizeof(buf)) ?: "";
	take(&m->go_proxy, "go", src->go_proxy, dropped);
	take(&m->go_sumdb, "go", src->go_sumdb, dropped);
	if (m->go_sumdb[0] && !m->go_sumdb[strcspn(m->go_sumdb, " +")])
		log_warn("image '%s': go's checksum database '%s' has no key sbxrun could read: "
			 "[packages] go = @go needs go_sumdb", name, m->go_sumdb);
	take(&m->cargo_index, "cargo", src->cargo_index, dropped);
	if (src->note)
		log_warn("image '%s': %s: @cargo is empty", name, src->note);
	take(&m->maven_repo, "maven", maven, dropped);
	log_verbose("image '%s': go proxy '%s', sumdb '%s', cargo index '%s', maven repository '%s'", name,
		    m->go_proxy, m->go_sumdb, m->cargo_index, m->maven_repo);
}

/* The image directory NAME names in the store s (the user's: as a sandbox
 * finds it, holding its use-lock in img; the system's: by its name there). */
static int image_dir(struct sbx_store *s, const char *name, struct sbx_image *img,
		     struct sbx_err *err)
{
	char digest[SBX_DIGEST_HEX + 1];
	int r;

	if (!s->system)
		return store_image_open(name, img, err) < 0 ? -1 : open(img->dir, O_PATH | O_DIRECTORY |
									 O_CLOEXEC);
	r = store_digest_of(s, name, digest, err);
	if (r <= 0)
		return r < 0 ? -1 : err_set(err, 0, "no image '%s' in %s", name, s->path);
	return openat(s->fd, digest, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static bool sources_known(struct sbx_store *s, const char *name)
{
	struct sbx_image img = { .rootfs_fd = -1, .use_lock_fd = -1 };
	struct sbx_meta m = { 0 };
	struct sbx_err ignore = { 0 };
	_cleanup_close_ int dir = image_dir(s, name, &img, &ignore);
	bool known = dir >= 0 && store_meta_read(dir, &m, &ignore) == 0 &&
		     ((m.npm_registry && m.npm_registry[0]) || (m.pypi_index && m.pypi_index[0]));

	store_meta_free(&m);
	store_image_close(&img);
	return known;
}

int discover_sources(const char *name, bool system, struct sbx_err *err)
{
	struct sbx_image img = { .rootfs_fd = -1, .use_lock_fd = -1 };
	struct sbx_meta m = { 0 };
	struct sbx_store s;
	int r = -1;

	/* asked once per image: an unchanged re-import stays instant */
	if ((system ? store_open_system_locked(&s, err) : store_open_locked(&s, err)) < 0)
		return -1;
	bool known = sources_known(&s, name);
	store_close(&s);
	if (known)
		return 0;
	_cleanup_free_ char *out = ask_image(name), *npm = NULL, *pypi = NULL;
	struct sbx_list dropped = { 0 };
	struct imgsrc src;
	parse(out, &npm, &pypi, &dropped);
	imgsrc_parse(out, &src);
	if (!npm[0] && !pypi[0] && !dropped.n && !src.go_proxy[0] && !src.go_sumdb[0] && !src.cargo_index[0] &&
	    !src.maven_repo[0] && !src.maven_jar[0]) {
		imgsrc_free(&src);
		return 0;
	}
	if ((system ? store_open_system_locked(&s, err) : store_open_locked(&s, err)) < 0)
		return -1;
	_cleanup_close_ int dir = image_dir(&s, name, &img, err);
	if (dir >= 0 && store_meta_read(dir, &m, err) == 0) {
		free(m.npm_registry);
		free(m.pypi_index);
		m.npm_registry = steal_ptr(npm);
		m.pypi_index = steal_ptr(pypi);
		tool_sources(name, dir, &src, &m, &dropped);
		for (char **d = m.dropped; d && *d; d++)
			imgmeta_list_add(&dropped, *d, strlen(*d));
		imgmeta_list_free(m.dropped);
		m.dropped = steal_ptr(dropped.v);
		r = store_meta_write(dir, &m, err);
		log_verbose("image '%s': npm registry '%s', pip index '%s'", name, m.npm_registry, m.pypi_index);
		store_meta_free(&m);
	}
	imgmeta_list_free(dropped.v);
	imgsrc_free(&src);
	store_image_close(&img);
	store_close(&s);
	return r;
}
