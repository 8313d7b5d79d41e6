/* fuzz_profile.c - libFuzzer harness: the bytes are a profile for the
 * strict INI loader (through fmemopen, as a file would come in). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "base/config.h"
#include "base/profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_config cfg;
	struct sbx_err err = { 0 };

	if (size == 0)
		return 0; /* fmemopen refuses an empty buffer */
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	config_init(&cfg);
	(void)profile_load_stream(&cfg, f, "fuzz", &err);
	fclose(f);
	config_free(&cfg);
	return 0;
}
