/* dlurl.h - one URL of `sbxrun download` (the first or a redirect's
 * target), checked against the profile's [download] allow list. */
#ifndef SBX_DLURL_H
#define SBX_DLURL_H

#include "base/err.h"
#include "net/hostmatch.h"

struct dlurl {
	char host[HOSTMATCH_MAX]; /* canonical */
	int port;                 /* 1..65535, the scheme's default if none */
	struct hostmatch_grant grant;
};

/* http or https, a host that is a name or a plain IP address, and host and
 * port on the allow list; profile names the list in the message. No
 * network access. Returns 0 or -1. */
int dlurl_check(const struct hostmatch_list *allow, const char *url, const char *profile,
		struct dlurl *out, struct sbx_err *err);

#endif
