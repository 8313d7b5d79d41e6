/* store.h - TEMPORARY stand-in until the image store branch lands. */
#ifndef SBX_STORE_H
#define SBX_STORE_H

#include <stdint.h>

#include "err.h"

struct sbx_image {
	char *name;
	char *digest;
	char *dir;
	int rootfs_fd;
	int use_lock_fd;
	char **env;
	char **apt_hosts;
	char *npm_registry;
	char *pypi_index;
	uint64_t size;
};

int store_image_open(const char *name, struct sbx_image *img, struct sbx_err *err);
void store_image_close(struct sbx_image *img);

#endif
