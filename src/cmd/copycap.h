/* copycap.h - how many data bytes a copy out of a sandbox (cp, image
 * export) may write on the host. */
#ifndef SBX_COPYCAP_H
#define SBX_COPYCAP_H

#include <stdint.h>

#include "base/err.h"

struct sbx_copycap {
	uint64_t max;   /* data bytes (holes not counted); 0: no cap */
	char why[192];  /* max and where it comes from: "256M (--max-size)" */
};

/* --max-size SIZE ("unlimited": no cap; 0 is refused). */
int copycap_option(const char *arg, struct sbx_copycap *c, struct sbx_err *err);
/* The default for a live session: its disk quota plus its image (all the
 * data it can hold); for an image: twice its size (hard links are written
 * once per name). Where neither is known, or the quota is unlimited: the
 * free space of dest's filesystem less 5% of its size. */
void copycap_session(const char *name, const char *dest, struct sbx_copycap *c);
/* For run --out: the disk quota (all the workspace can hold), or where it
 * is unlimited the free space of dest's filesystem less 5% of its size. */
void copycap_quota(uint64_t disk, const char *dest, struct sbx_copycap *c);
void copycap_image(uint64_t image_size, const char *dest, struct sbx_copycap *c);
/* The one-line error for a copy stopped at the cap. */
int copycap_exceeded(const struct sbx_copycap *c, const char *what, const char *path,
		     struct sbx_err *err);

#endif
