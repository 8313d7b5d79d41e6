/* store_tmp.c - TEMPORARY: images unpacked by hand under $SBX_TMP_IMAGES/NAME. */
#define _GNU_SOURCE
#include "store.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

int store_image_open(const char *name, struct sbx_image *img, struct sbx_err *err)
{
	const char *base = getenv("SBX_TMP_IMAGES");
	memset(img, 0, sizeof(*img));
	img->use_lock_fd = -1;
	img->dir = xasprintf("%s/%s", base ? base : "/var/tmp/sbx/images", name);
	img->name = xstrdup(name);
	_cleanup_free_ char *r = xasprintf("%s/rootfs", img->dir);
	img->rootfs_fd = open(r, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (img->rootfs_fd < 0)
		return err_sys(err, "image '%s'", name);
	img->env = xcalloc(2, sizeof(char *));
	img->env[0] = xstrdup("PATH=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	return 0;
}

void store_image_close(struct sbx_image *img)
{
	if (img->rootfs_fd >= 0)
		close(img->rootfs_fd);
	free(img->dir);
	free(img->name);
	util_strvfreep(&img->env);
}
