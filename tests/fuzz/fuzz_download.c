/* fuzz_download.c - libFuzzer harness for download's checks of what the
 * user (or a redirecting server) hands it: the bytes up to the first
 * newline are a URL for dlurl_check against a fixed allow list, the rest a
 * DEST for relpath_split. An accepted URL must name an allowed host and a
 * valid port; an accepted DEST must be relative, free of '..' and split
 * back into exactly itself. Anything else is a crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/relpath.h"
#include "net/dlurl.h"
#include "net/hostmatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct hostmatch_list allow;

static void setup(void)
{
	static char *hosts[] = { "example.test", "*.files.example.test", "10.1.2.3", "[2001:db8::1]",
				 "host.sbxrun.internal:8080", "dl.example.test:8443" };
	struct sbx_strlist l = { hosts, NULL, sizeof(hosts) / sizeof(hosts[0]) };
	struct sbx_err err;
	if (hostmatch_compile(&l, NULL, &allow, &err) < 0)
		abort();
}

static void check_url(const char *url)
{
	struct dlurl u;
	struct sbx_err err;
	struct hostmatch_grant g;
	char again[HOSTMATCH_MAX];

	err.msg[0] = '\0';
	if (dlurl_check(&allow, url, "fuzz", &u, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (u.port < 1 || u.port > 65535 || !u.host[0] || strlen(u.host) >= sizeof(u.host))
		abort();
	if (hostmatch_check(&allow, u.host, u.port, &g) != HOSTMATCH_OK)
		abort();
	/* canonical is a fixed point (an IPv6 address is kept bare, and taken
	 * back in brackets) */
	char in[HOSTMATCH_MAX + 2];
	snprintf(in, sizeof(in), strchr(u.host, ':') ? "[%s]" : "%s", u.host);
	if (hostmatch_canon(in, again, sizeof(again)) < 0 || strcmp(again, u.host) != 0)
		abort();
}

static void check_dest(const char *dest)
{
	char dir[4096];
	const char *name;
	struct sbx_err err;

	err.msg[0] = '\0';
	if (relpath_split(dest, "DEST", dir, sizeof(dir), &name, &err) < 0) {
		if (!err.msg[0])
			abort();
		return;
	}
	if (dest[0] == '/' || !name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		abort();
	for (const char *p = dest; *p;) {
		size_t n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			abort();
		p += n + (p[n] == '/');
	}
	if (name == dest ? strcmp(dir, ".") != 0
			 : strncmp(dir, dest, (size_t)(name - dest - 1)) || strlen(dir) != (size_t)(name - dest - 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!allow.v)
		setup();
	/* private NUL-terminated copies, so reads past the end are caught */
	const uint8_t *nl = memchr(data, '\n', size);
	size_t ulen = nl ? (size_t)(nl - data) : size;
	char *url = malloc(ulen + 1), *dest = NULL;
	memcpy(url, data, ulen);
	url[ulen] = '\0';
	if (nl) {
		size_t dlen = size - ulen - 1;
		dest = malloc(dlen + 1);
		memcpy(dest, nl + 1, dlen);
		dest[dlen] = '\0';
	}
	if (strlen(url) == ulen)
		check_url(url);
	if (dest && strlen(dest) == size - ulen - 1)
		check_dest(dest);
	free(url);
	free(dest);
	return 0;
}
