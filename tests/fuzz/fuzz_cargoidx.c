/* fuzz_cargoidx.c - libFuzzer harness for Cargo's sparse registry as the
 * gateway reads it (pkg/cargoidx.c): the input is tried as a request's
 * index path, as an index file (filtered, a version looked up) and as
 * config.json. A name accepted is lower case and maps back to exactly the
 * path given; every line a filter keeps parses again, is the crate's and
 * is a line of the input; a download URL built never holds a byte no URL
 * has. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "pkg/cargoidx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int keep_odd(void *arg, const struct cargoidx_line *l)
{
	(void)arg;
	return l->vers[strlen(l->vers) - 1] & 1 ? 0 : -1;
}

static void check_kept(const char *s, size_t size, const char *name, const struct cargoidx_filtered *f)
{
	struct cargoidx_line l;
	const char *why;

	for (const char *p = f->out, *end = f->out + f->len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl || cargoidx_line(p, (size_t)(nl - p), &l, &why) < 0 || strcasecmp(l.name, name) != 0 ||
		    !(l.vers[strlen(l.vers) - 1] & 1) || !memmem(s, size, p, (size_t)(nl - p)))
			abort();
		p = nl + 1;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *why;
	char name[CARGOIDX_NAME_MAX + 1], back[CARGOIDX_PATH_MAX + 1], dl[CARGOIDX_DL_MAX + 1], url[2048];
	struct cargoidx_filtered f;
	struct cargoidx_line l;

	if (cargoidx_path_name(s, size, name, sizeof(name)) == 0) {
		cargoidx_path(name, back, sizeof(back));
		if (strlen(back) != size || memcmp(back, s, size) != 0 || strpbrk(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ./"))
			abort();
	}
	/* the crate named by the first line, if any */
	const char *nl = memchr(s, '\n', size);
	if (cargoidx_line(s, nl ? (size_t)(nl - s) : size, &l, &why) == 0) {
		char lower[CARGOIDX_NAME_MAX + 1];
		if (cargoidx_name(l.name, strlen(l.name), lower, sizeof(lower)) < 0)
			abort();
		if (cargoidx_filter(s, size, lower, keep_odd, NULL, &f, &why) == 0) {
			check_kept(s, size, lower, &f);
			free(f.out);
		}
		struct cargoidx_line found;
		if (cargoidx_find(s, size, lower, l.vers, &found, &why) == 1 && strcmp(found.vers, l.vers) != 0)
			abort();
	}
	if (cargoidx_config_dl(s, size, dl, sizeof(dl), &why) == 0) {
		struct cargoidx_line x = { .name = "Caps_Crate", .vers = "1.0.0-rc.1+b", .cksum = "00" };
		if (cargoidx_dl_url(dl, &x, url, sizeof(url)) == 0)
			for (const char *c = url; *c; c++)
				if ((unsigned char)*c <= ' ' || *c == 0x7f || *c == '"')
					abort();
	}
	return 0;
}
