/* fuzz_debindex.c - libFuzzer harness for what the gateway reads of a Debian
 * archive (pkg/deb_index.c): a Packages index from upstream, plain or
 * compressed (deb_unpack, into a memfd), read into stanzas (deb_index_each), and the
 * request paths apt sends (deb_path_norm, deb_classify, deb_index_root:
 * the input's first line). Release and InRelease are passed on unparsed
 * (apt checks their signatures), so the path handling is all of them
 * sbxrun reads. What a stanza hands over must be a clean path (normalised,
 * stable, no "..", no empty or "." segment, no leading '/') and a package
 * and version without '/' or control bytes; a path must normalise the same
 * twice, and its archive root must be a prefix of it. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pkg/deb_index.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void clean_path(const char *p)
{
	char again[DEB_PATH_MAX];
	size_t n = strlen(p);

	if (!n || p[0] == '/' || strstr(p, "//") || strstr(p, "/./") || strstr(p, "/../") ||
	    strncmp(p, "./", 2) == 0 || strncmp(p, "../", 3) == 0 || strcmp(p, ".") == 0 || strcmp(p, "..") == 0 ||
	    (n >= 2 && strcmp(p + n - 2, "/.") == 0) || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
		abort();
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			abort();
	/* stable, except that a '%' it decoded may start an escape again */
	if (!strchr(p, '%') && (deb_path_norm(p, n, again, sizeof(again)) < 0 || strcmp(again, p) != 0))
		abort();
}

static void stanza(void *arg, const struct deb_stanza *s)
{
	long *n = arg;

	clean_path(s->path);
	if (!s->package[0] || !s->version[0] || strchr(s->package, '/') || strchr(s->version, '/'))
		abort();
	for (const char *c = s->package; *c; c++)
		if (*c == '\n')
			abort();
	for (const char *c = s->version; *c; c++)
		if (*c == '\n')
			abort();
	(*n)++;
}

static void parse(const char *text, size_t len)
{
	struct sbx_err err;
	long seen = 0, r = deb_index_each(text, len, stanza, &seen, &err);

	if (r != (r < 0 ? -1 : seen) || (r < 0 && seen))
		abort();
}

static void path(const char *line, size_t len)
{
	char norm[DEB_PATH_MAX], hex[65], root[DEB_PATH_MAX];
	int packages;

	if (deb_path_norm(line, len, norm, sizeof(norm)) < 0)
		return;
	clean_path(norm);
	enum deb_kind k = deb_classify(norm, hex, &packages);
	if (k == DEB_BYHASH && (strlen(hex) != 64 || strspn(hex, "0123456789abcdefABCDEF") != 64))
		abort();
	if (k != DEB_BYHASH && packages)
		abort();
	deb_index_root(norm, root, sizeof(root));
	if (strncmp(norm, root, strlen(root)) != 0)
		abort();
}

/* What deb_unpack wrote to the file, read back whole. */
static char *unpacked(int fd, size_t len)
{
	char *p = malloc(len + 1);
	if (pread(fd, p, len, 0) != (ssize_t)len)
		abort();
	p[len] = '\0';
	return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_err err;
	char *text = malloc(size + 1);
	size_t plain_len;

	memcpy(text, data, size);
	text[size] = '\0';
	parse(text, size);
	path(text, strcspn(text, "\n"));
	/* compressed: what it unpacks to (less than 1 MiB here) is parsed too */
	if (size >= 2 && (uint8_t)text[0] != 'P') {
		int fd = memfd_create("unpacked", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		if (deb_unpack(data, size, 1 << 20, fd, &plain_len, &err) == 0) {
			struct stat st;
			if (plain_len >= (1 << 20) || fstat(fd, &st) < 0 || (size_t)st.st_size != plain_len)
				abort();
			char *plain = unpacked(fd, plain_len);
			parse(plain, plain_len);
			free(plain);
		}
		close(fd);
	}
	free(text);
	return 0;
}
