/* discover.c - @npm is what the image's npm answers to `npm config get
 * registry`, @pypi what its pip uses as index (and, for the default index,
 * its file host): asked once at import, in a sandbox, so that a lab that
 * points its image at its own mirror gets that mirror and nothing else. No
 * registry host is written here: the tools in the image name them. */
#define _GNU_SOURCE
#include "store/discover.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/hostaddr.h"
#include "base/log.h"
#include "base/util.h"
#include "store/imgmeta.h"
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
	"' 2>/dev/null; break; done\n";

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
		if (!url || strspn(url + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:/._-~%@[]+")
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
	parse(out, &npm, &pypi, &dropped);
	if (!npm[0] && !pypi[0] && !dropped.n)
		return 0;
	if ((system ? store_open_system_locked(&s, err) : store_open_locked(&s, err)) < 0)
		return -1;
	_cleanup_close_ int dir = image_dir(&s, name, &img, err);
	if (dir >= 0 && store_meta_read(dir, &m, err) == 0) {
		free(m.npm_registry);
		free(m.pypi_index);
		m.npm_registry = steal_ptr(npm);
		m.pypi_index = steal_ptr(pypi);
		for (char **d = m.dropped; d && *d; d++)
			imgmeta_list_add(&dropped, *d, strlen(*d));
		imgmeta_list_free(m.dropped);
		m.dropped = steal_ptr(dropped.v);
		r = store_meta_write(dir, &m, err);
		log_verbose("image '%s': npm registry '%s', pip index '%s'", name, m.npm_registry, m.pypi_index);
		store_meta_free(&m);
	}
	imgmeta_list_free(dropped.v);
	store_image_close(&img);
	store_close(&s);
	return r;
}
