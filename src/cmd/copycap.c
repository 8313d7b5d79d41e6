/* copycap.c - the cap on what a copy out of a sandbox writes on the host
 * (issue 26: a sparse 1T file came out as 9 GB of zeros): --max-size, or a
 * default from what the sandbox can really hold. Holes are never counted:
 * cp and image export keep them holes. */
#define _GNU_SOURCE
#include "cmd/copycap.h"

#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

#include "base/util.h"
#include "session/session_client.h"

/* A size for a message: exact when round ("256M"), else to a tenth. */
static void human(uint64_t n, char *buf, size_t size)
{
	static const char units[] = "KMGT";
	double v = (double)n;
	int u = -1;

	if (n % 1024 == 0 || n < 1024) {
		format_size(n, buf, size);
		return;
	}
	while (v >= 1024 && u < 3)
		v /= 1024, u++;
	snprintf(buf, size, "%.1f%c", v, units[u]);
}

int copycap_option(const char *arg, struct sbx_copycap *c, struct sbx_err *err)
{
	if (parse_size(arg, &c->max, err) < 0)
		return err_wrap(err, "--max-size");
	if (c->max == 0 && strcmp(arg, "unlimited") != 0)
		return err_set(err, 0, "--max-size: 0 would copy nothing (use 'unlimited' for no cap)");
	snprintf(c->why, sizeof(c->why), "%s (--max-size)", arg);
	return 0;
}

/* The free space of dest's filesystem less 5% of its size: a copy never
 * fills the host's disk. */
static void free_space(const char *dest, struct sbx_copycap *c)
{
	_cleanup_free_ char *copy = xstrdup(dest);
	struct statvfs vfs;
	char f[32];

	if (statvfs(dest, &vfs) < 0 && statvfs(dirname(copy), &vfs) < 0) {
		c->max = 0; /* no cap to compute: a full disk still ends the copy (ENOSPC) */
		return;
	}
	uint64_t avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
	uint64_t keep = (uint64_t)vfs.f_blocks * vfs.f_frsize / 20;
	c->max = avail > keep + 1 ? avail - keep : 1;
	human(c->max, f, sizeof(f));
	snprintf(c->why, sizeof(c->why), "%s (the free space at the destination less 5%%; --max-size SIZE sets another)", f);
}

void copycap_session(const char *name, const char *dest, struct sbx_copycap *c)
{
	uint64_t disk, image;
	char d[32], i[32];

	if (session_sizes(name, &disk, &image) < 0 || disk == 0) {
		free_space(dest, c);
		return;
	}
	char m[32];
	c->max = disk + image;
	human(c->max, m, sizeof(m));
	human(disk, d, sizeof(d));
	human(image, i, sizeof(i));
	snprintf(c->why, sizeof(c->why), "%s (session '%s': its disk quota %s plus its image %s; --max-size SIZE sets another)",
		 m, name, d, i);
}

void copycap_quota(uint64_t disk, const char *dest, struct sbx_copycap *c)
{
	char d[32];

	if (disk == 0) {
		free_space(dest, c);
		return;
	}
	c->max = disk;
	human(disk, d, sizeof(d));
	snprintf(c->why, sizeof(c->why), "%s (the sandbox's disk quota)", d);
}

void copycap_image(uint64_t image_size, const char *dest, struct sbx_copycap *c)
{
	char s[32];

	if (image_size == 0) {
		free_space(dest, c);
		return;
	}
	char m[32];
	c->max = 2 * image_size + (16u << 20);
	human(c->max, m, sizeof(m));
	human(image_size, s, sizeof(s));
	snprintf(c->why, sizeof(c->why), "%s (twice the image's size %s, plus 16M; --max-size SIZE sets another)", m, s);
}

int copycap_exceeded(const struct sbx_copycap *c, const char *what, const char *path,
		     struct sbx_err *err)
{
	return err_set(err, 0, "%s: '%s': stopped at the cap of %s", what, path, c->why);
}
