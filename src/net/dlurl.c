/* dlurl.c - see dlurl.h. The URL is split by libcurl's own parser, the one
 * that will fetch it, so what is checked is what is fetched. curl gives an
 * IPv6 host as "[addr]", the form hostmatch_canon takes (bare, it would be
 * refused). */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include "net/dlurl.h"

#include <curl/curl.h>
#include <string.h>

#include "base/util.h"

int dlurl_split(const char *url, struct dlurl *out, struct sbx_err *err)
{
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *port = NULL;
	uint64_t p = 0;
	struct sbx_err e2;
	int r = -1;

	if (!u)
		return err_set(err, 0, "out of memory");
	if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK) {
		err_set(err, 0, "'%s' is not a URL", url);
	} else if (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0) {
		err_set(err, 0, "'%s': only http and https are fetched", url);
	} else if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK ||
		   curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) != CURLUE_OK ||
		   parse_count(port, 1, 65535, &p, &e2) < 0) {
		err_set(err, 0, "'%s' is not a URL with a host and port", url);
	} else if (hostmatch_canon(host, out->host, sizeof(out->host)) < 0) {
		err_set(err, 0, "'%s': '%s' is neither a host name nor a plain IP address", url, host);
	} else {
		out->https = strcmp(scheme, "https") == 0;
		out->port = (int)p;
		r = 0;
	}
	curl_free(scheme);
	curl_free(host);
	curl_free(port);
	curl_url_cleanup(u);
	return r;
}

int dlurl_check(const struct hostmatch_list *allow, const char *url, const char *profile,
		struct dlurl *out, struct sbx_err *err)
{
	if (dlurl_split(url, out, err) < 0)
		return -1;
	if (hostmatch_check(allow, out->host, out->port, &out->grant) != HOSTMATCH_OK)
		return err_set(err, 0, "'%s': host '%s' port %d is not in [download] allow of profile '%s'",
			       url, out->host, out->port, profile ? profile : "default");
	return 0;
}
