/* fuzz_mavenmeta.c - libFuzzer harness for Maven through the package
 * gateway (pkg/mavenmeta.c): the input is tried as a request path
 * below /maven/, as a checksum file and as a maven-metadata.xml from
 * upstream. A path accepted names no "..", '%', NUL or control byte, and
 * its file is its artifact's and version's; a document read is written
 * again (all versions, and every other one) as XML that reads back to the
 * same versions, with latest and release among those written. */
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkg/mavenmeta.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_req(const char *p, size_t n)
{
	struct maven_req r;
	char prefix[2 * MAVEN_SEG_MAX + 2];

	if (maven_request(p, n, &r, NULL) < 0)
		return;
	if (strstr(r.path, "..") || strchr(r.path, '%') || memchr(p, '\0', n) || strchr(r.name, '/') ||
	    r.path[0] == '/' || strncmp(p, r.path, strlen(r.path)) != 0)
		abort();
	for (const char *c = r.path; *c; c++)
		if ((unsigned char)*c <= ' ' || (unsigned char)*c >= 0x7f || *c == '\\')
			abort();
	if (r.kind == MAVEN_FILE) {
		snprintf(prefix, sizeof(prefix), "/%s-%s", r.artifact, r.version);
		if (!strstr(r.path, prefix) || strstr(r.version, "SNAPSHOT"))
			abort();
	}
}

static void check_doc(const struct mavenmeta *m, const bool *keep)
{
	struct mavenmeta back;
	size_t len, w = 0;
	char *out = mavenmeta_write(m, keep, &len);

	if (!out || mavenmeta_parse(out, len, &back, NULL) < 0)
		abort();
	for (size_t i = 0; i < m->n; i++) {
		if (keep && !keep[i])
			continue;
		if (w >= back.n || strcmp(back.versions[w++], m->versions[i]) != 0)
			abort();
	}
	if (w != back.n || back.dropped || back.versioning != m->versioning || back.nplugins != m->nplugins)
		abort();
	bool latest = !back.latest[0], release = !back.release[0];
	for (size_t i = 0; i < back.n; i++) {
		latest |= strcmp(back.latest, back.versions[i]) == 0;
		release |= strcmp(back.release, back.versions[i]) == 0;
	}
	if (!latest || !release)
		abort();
	mavenmeta_free(&back);
	free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	struct mavenmeta m;
	struct sri sum;

	check_req(s, size);
	if (maven_checksum(s, size, SRI_SHA1, &sum) == 0 && strlen(sum.hex) != 40)
		abort();
	if (mavenmeta_parse(s, size, &m, NULL) < 0)
		return 0;
	bool *keep = calloc(m.n + 1, sizeof(*keep));
	for (size_t i = 0; i < m.n; i++)
		keep[i] = i % 2;
	check_doc(&m, NULL);
	check_doc(&m, keep);
	free(keep);
	mavenmeta_free(&m);
	return 0;
}
