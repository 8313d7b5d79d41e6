/* fuzz_gomod.c - libFuzzer harness for the Go module proxy's names and
 * documents (pkg/gomod.c): the input is tried as a request path below
 * /go/, as an @v/list body and as an .info document. A path or version
 * accepted must escape back to exactly what was asked (the escaped form is
 * unique), hold no ".." element, NUL, control byte, '%' or capital in its
 * escaped form,
 * and every version a list yields must itself be accepted again. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/gomod.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_req(const char *p, size_t n)
{
	struct gomod_req r;
	char back[GOMOD_PATH_MAX * 2];

	if (gomod_request(p, n, &r, NULL) < 0)
		return;
	size_t pl = strlen(r.path);
	if (gomod_escape(r.path, back, sizeof(back)) < 0 || strcmp(back, r.esc) != 0 || strstr(r.path, "/../") ||
	    strncmp(r.path, "../", 3) == 0 || (pl >= 3 && strcmp(r.path + pl - 3, "/..") == 0) || memchr(p, '\0', n) ||
	    strchr(r.esc, '%') || strpbrk(r.esc, "ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
		abort();
	for (const char *c = r.path; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || *c == '\\' || *c == ':')
			abort();
	if (r.version[0] && (gomod_escape(r.version, back, sizeof(back)) < 0 || strcmp(back, r.vesc) != 0 ||
			     r.version[0] != 'v' || strchr(r.version, '/')))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	char (*v)[GOMOD_VER_MAX] = malloc(64 * GOMOD_VER_MAX), esc[GOMOD_VER_MAX * 2], out[GOMOD_VER_MAX];
	size_t n, dropped;

	check_req(s, size);
	if (gomod_list(s, size, v, 64, &n, &dropped) == 0)
		for (size_t i = 0; i < n; i++)
			if (gomod_escape(v[i], esc, sizeof(esc)) < 0 ||
			    gomod_version(esc, strlen(esc), out, sizeof(out), NULL) < 0 || strcmp(out, v[i]) != 0)
				abort();
	free(v);
	if (gomod_info_version(s, size, out, sizeof(out)) == 0 &&
	    (gomod_escape(out, esc, sizeof(esc)) < 0 || gomod_version(esc, strlen(esc), out, sizeof(out), NULL) < 0))
		abort();
	return 0;
}
