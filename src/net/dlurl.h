/* dlurl.h - one URL fetched over libcurl: split into scheme, host and port
 * (dlurl_split, for `sbxrun download` and the package gateway's fetches
 * alike), and for download checked against the profile's [download] allow
 * list (the first URL or a redirect's target). */
#ifndef SBX_DLURL_H
#define SBX_DLURL_H

#include <stdbool.h>

#include "base/err.h"
#include "net/hostmatch.h"

struct dlurl {
	bool https;               /* else http: no other scheme passes */
	char host[HOSTMATCH_MAX]; /* canonical */
	int port;                 /* 1..65535, the scheme's default if none */
	struct hostmatch_grant grant; /* dlurl_check's */
};

/* http or https, a host that is a name or a plain IP address, a port: as
 * libcurl's own parser (the one that fetches it) splits the URL, so what is
 * checked is what is fetched. Fills all of out but grant. No network
 * access. Returns 0 or -1 (the message names url). */
int dlurl_split(const char *url, struct dlurl *out, struct sbx_err *err);
/* dlurl_split, then host and port on the allow list; profile names the
 * list in the message. Returns 0 or -1. */
int dlurl_check(const struct hostmatch_list *allow, const char *url, const char *profile,
		struct dlurl *out, struct sbx_err *err);

#endif
