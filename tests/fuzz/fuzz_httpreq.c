/* fuzz_httpreq.c - libFuzzer harness for the proxy's request parser: bytes
 * from inside a sandbox must never crash the host side. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hostmatch.h"
#include "httpreq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_http_req r;
	struct sbx_err err;
	int status;
	const char *why;
	char host[256];

	if (httpreq_parse((const char *)data, size, &r, &status, &why) == 1) {
		host_canon(r.host, host, sizeof(host), &err);
		httpreq_free(&r);
	}
	return 0;
}
