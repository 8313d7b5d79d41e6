/* fuzz_httpreq.c - libFuzzer harness for the proxy's request parser and the
 * host canonicaliser it feeds: any bytes from inside must parse or fail. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/hostmatch.h"
#include "net/httpreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct httpreq req;
	int status;
	const char *why;
	char canon[HOSTMATCH_MAX + 8];
	/* A private copy, so reads past the end are caught exactly. */
	char *buf = malloc(size ? size : 1);

	memcpy(buf, data, size);
	if (httpreq_parse(buf, size, &req, &status, &why) == 1) {
		if (req.kind == HTTPREQ_ABSOLUTE && (!req.upstream || strlen(req.upstream) != req.upstream_len))
			abort();
		if (req.head_len > size || req.port < 1 || req.port > 65535)
			abort();
		if (hostmatch_canon(req.host, canon, sizeof(canon)) == 0 && strlen(canon) > HOSTMATCH_MAX + 2)
			abort();
		httpreq_free(&req);
	} else if (httpreq_parse(buf, size, &req, &status, &why) < 0 && !why) {
		abort();
	}
	free(buf);
	return 0;
}
