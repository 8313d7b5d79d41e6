/* fuzz_policy.c - libFuzzer harness: the administrator's ceiling. The bytes
 * are a policy, a NUL, then a profile: both go through the strict INI
 * reader, the policy is applied to the loaded profile, and the result is
 * checked and formatted as `profile show` and `doctor` would. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void each_cap(void *arg, const char *path, const char *cap)
{
	*(size_t *)arg += strlen(path) + strlen(cap);
}

static void show(const struct sbx_config *cfg)
{
	char buf[4096];

	for (size_t i = 0; i < sbx_options_count; i++)
		if (!config_list(cfg, &sbx_options[i]))
			config_format(cfg, &sbx_options[i], buf, sizeof(buf));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, '\0', size);
	size_t plen = nul ? (size_t)(nul - data) : size;
	const char *prof = nul ? (const char *)nul + 1 : "[limits]\nmemory = 1G\n";
	size_t rlen = nul ? size - plen - 1 : strlen(prof);
	struct sbx_policy pol;
	struct sbx_config cfg;
	struct sbx_err err = { 0 };
	size_t total = 0;

	memset(&pol, 0, sizeof(pol));
	config_init(&cfg);
	cfg.profile = xstrdup("fuzz");
	if (policy_add_text(&pol, (const char *)data, plen, "/fuzz-policy.ini", &err) == 0) {
		policy_each_cap(&pol, each_cap, &total);
		FILE *f = rlen ? fmemopen((void *)prof, rlen, "r") : NULL;
		if (f && profile_load_stream(&cfg, f, "fuzz", &err) == 0 &&
		    policy_apply(&pol, &cfg, &err) == 0 && config_check(&cfg, &err) == 0)
			show(&cfg);
		if (f)
			fclose(f);
	}
	policy_free(&pol);
	config_free(&cfg);
	return 0;
}
