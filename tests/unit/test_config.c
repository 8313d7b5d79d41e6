/* test_config.c - numbers, sizes, durations, the profile loader's strictness
 * (including Debian inih's two traps), lookup and precedence. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "base/config.h"
#include "base/profile.h"
#include "unit.h"
#include "base/util.h"

static void test_numbers(void)
{
	struct sbx_err err;
	uint64_t v;

	CHECK(parse_duration_ms("500ms", &v, &err) == 0 && v == 500);
	CHECK(parse_duration_ms("30s", &v, &err) == 0 && v == 30000);
	CHECK(parse_duration_ms("5m", &v, &err) == 0 && v == 300000);
	CHECK(parse_duration_ms("1h", &v, &err) == 0 && v == 3600000);
	CHECK(parse_duration_ms("7", &v, &err) == 0 && v == 7000);
	CHECK(parse_duration_ms("none", &v, &err) == 0 && v == 0);
	const char *bad_d[] = { "", "-1s", "1.5s", "5x", "s", " 5s", "5s ", "99999999999999999999s", "1d", "5 s" };
	for (size_t i = 0; i < ARRAY_SIZE(bad_d); i++)
		CHECK(parse_duration_ms(bad_d[i], &v, &err) < 0);
	CHECK_CONTAINS(err.msg, "invalid duration");
	CHECK(parse_size("512K", &v, &err) == 0 && v == 512 * 1024);
	CHECK(parse_size("64M", &v, &err) == 0 && v == 64ULL << 20);
	CHECK(parse_size("8G", &v, &err) == 0 && v == 8ULL << 30);
	CHECK(parse_size("100", &v, &err) == 0 && v == 100);
	const char *bad_s[] = { "", "-5M", "5Q", "1.5G", "M", "99999999999T", "0x10", "5MB" };
	for (size_t i = 0; i < ARRAY_SIZE(bad_s); i++)
		CHECK(parse_size(bad_s[i], &v, &err) < 0);
	CHECK(parse_count("10", 0, 100, &v, &err) == 0 && v == 10);
	CHECK(parse_count("101", 0, 100, &v, &err) < 0);
	CHECK(parse_count("1e3", 0, 10000, &v, &err) < 0);
	CHECK(parse_cpus_milli("1.5", &v, &err) == 0 && v == 1500);
	CHECK(parse_cpus_milli("2", &v, &err) == 0 && v == 2000);
	CHECK(parse_cpus_milli("0", &v, &err) < 0);
	CHECK(parse_cpus_milli("0.0001", &v, &err) < 0);
	char buf[32];
	format_duration(90000, buf, sizeof(buf));
	CHECK_STR(buf, "90s");
	format_size(3ULL << 30, buf, sizeof(buf));
	CHECK_STR(buf, "3G");
}

/* Loads text as a profile; returns the error message or NULL. */
static char *load(const char *text, struct sbx_config *cfg)
{
	static struct sbx_err err;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	config_init(cfg);
	int r = profile_load_stream(cfg, f, "t.ini", &err);
	fclose(f);
	return r < 0 ? err.msg : NULL;
}

static void expect_bad(const char *text, const char *needle)
{
	struct sbx_config cfg;
	char *msg = load(text, &cfg);
	CHECK(msg != NULL);
	if (msg)
		CHECK_CONTAINS(msg, needle);
	config_free(&cfg);
}

static void test_bad_profiles(void)
{
	char longline[400];
	snprintf(longline, sizeof(longline), "[sandbox]\nhostname = %0250d\n", 0);
	expect_bad(longline, "t.ini:2: line is longer than");
	expect_bad("[sandbox]\nenv = A=1\n  B=2\n", "t.ini:3: indented line");
	expect_bad("[sandbox]\n\timage = x\n", "t.ini:2: indented line");
	expect_bad("[nope]\nx = 1\n", "t.ini:2: unknown section [nope]");
	expect_bad("[limits]\ntimeoutt = 5s\n", "t.ini:2: timeoutt: unknown key");
	expect_bad("[limits]\ntimeout = 5s\ntimeout = 6s\n", "t.ini:3: timeout: set twice (first on line 2)");
	expect_bad("[limits]\ntimeout = 5x\n", "t.ini:2: timeout: invalid duration '5x'");
	expect_bad("[limits]\nmemory = lots\n", "t.ini:2: memory: invalid size");
	expect_bad("[limits]\npids = -3\n", "t.ini:2: pids: invalid number");
	expect_bad("[network]\negress = sometimes\n", "t.ini:2: egress: invalid value 'sometimes'");
	expect_bad("[network]\nallow = bad host\n", "t.ini:2: allow: invalid host");
	expect_bad("[network]\nallow = @nope\n", "unknown host set '@nope'");
	expect_bad("[mounts]\nbind = relative:/x\n", "t.ini:2: bind:");
	expect_bad("[mounts]\nbind = /a:b\n", "destination must be an absolute path");
	expect_bad("[mounts]\nbind = /a:/b:maybe\n", "mode must be rw or ro");
	expect_bad("[sandbox]\nenv = NOVALUE\n", "is not KEY=VALUE");
	expect_bad("[sandbox]\nworkdir = relative/dir\n", "not an absolute path");
	expect_bad("[sandbox]\nworkdir = /a/../b\n", "contains '..'");
	expect_bad("image = x\n", "t.ini:1: image: key outside a section");
	expect_bad("[sandbox]\nthis line has no equals sign\n", "t.ini:2: not a 'key = value'");
	expect_bad("[sandbox]\nimage = ../../etc\n", "invalid name");
	expect_bad("[download]\ntimeout = 0\n", "t.ini:2: timeout: '0' is refused (for no limit, write 'none')");
	expect_bad("[download]\nmin_speed_time = 0s\n", "t.ini:2: min_speed_time: '0s' is refused");
}

static void test_download_limits(void)
{
	struct sbx_config cfg;
	struct sbx_err err;
	char *msg = load("[sandbox]\nimage = x\n", &cfg);
	CHECK(msg == NULL);
	CHECK(cfg.dl_timeout_ms == 600000 && cfg.dl_min_speed == 1024 && cfg.dl_min_speed_ms == 30000);
	config_free(&cfg);
	msg = load("[download]\ntimeout = none\nmin_speed = 10K\nmin_speed_time = none\n", &cfg);
	CHECK(msg == NULL);
	CHECK(cfg.dl_timeout_ms == 0 && cfg.dl_min_speed == 10240 && cfg.dl_min_speed_ms == 0);
	CHECK(config_check(&cfg, &err) == 0);
	config_free(&cfg);
	const char *zero[] = { "0", "unlimited" };
	for (size_t i = 0; i < ARRAY_SIZE(zero); i++) {
		char text[64];
		snprintf(text, sizeof(text), "[download]\nmin_speed = %s\n", zero[i]);
		CHECK(load(text, &cfg) == NULL);
		CHECK(config_check(&cfg, &err) < 0);
		CHECK_CONTAINS(err.msg, "t.ini:2: [download] min_speed: at least 1 byte a second");
		config_free(&cfg);
	}
}

static void test_good_profile(void)
{
	struct sbx_config cfg;
	char *msg = load("; comment\n[sandbox]\nimage = full\nenv = A=1\nenv = B=2\n"
			 "[limits]\ntimeout = 90s\nmemory = 1G\ncpus = 1.5\n"
			 "[network]\negress = packages\nallow = @apt\nallow = *.example.test\n", &cfg);
	CHECK(msg == NULL);
	CHECK_STR(cfg.image, "full");
	CHECK(cfg.env.n == 2);
	CHECK(cfg.timeout_ms == 90000);
	CHECK(cfg.memory == 1ULL << 30);
	CHECK(cfg.cpus_milli == 1500);
	CHECK(cfg.egress == SBX_EGRESS_PACKAGES);
	CHECK(cfg.allow.n == 2);
	CHECK_STR(cfg.origin[SBX_K_TIMEOUT], "t.ini:7");
	config_free(&cfg);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

static void test_lookup_and_precedence(void)
{
	char dir[] = "/tmp/sbxunit.XXXXXX";
	struct sbx_config cfg;
	struct sbx_err err;
	int rest;

	CHECK(mkdtemp(dir) != NULL);
	char *profiles = xasprintf("%s/sbxrun/profiles", dir);
	CHECK(mkdir_p(profiles, 0700, &err) == 0);
	setenv("XDG_CONFIG_HOME", dir, 1);
	char *p = xasprintf("%s/base.ini", profiles);
	write_file(p, "[limits]\ntimeout = 10s\nmemory = 1G\n[sandbox]\nhostname = base\n");
	free(p);
	p = xasprintf("%s/child.ini", profiles);
	write_file(p, "inherit = base\n[limits]\ntimeout = 20s\n");
	free(p);
	p = xasprintf("%s/loop1.ini", profiles);
	write_file(p, "inherit = loop2\n");
	free(p);
	p = xasprintf("%s/loop2.ini", profiles);
	write_file(p, "inherit = loop1\n");
	free(p);

	char *argv[] = { "run", "-p", "child", "--memory", "2G", "--", "true", NULL };
	CHECK(cli_sandbox_config(7, argv, SBX_CMD_RUN, "", &cfg, &rest, &err) == 0);
	CHECK(cfg.timeout_ms == 20000);        /* child over base */
	CHECK(cfg.memory == 2ULL << 30);       /* command line over profiles */
	CHECK_STR(cfg.hostname, "base");       /* inherited */
	CHECK_STR(cfg.origin[SBX_K_MEMORY], "command line");
	CHECK_CONTAINS(cfg.origin[SBX_K_TIMEOUT], "child.ini:3");
	CHECK(rest == 6);
	config_free(&cfg);

	/* mcp takes --profile, --image and --session, not the limits */
	char *mcp_ok[] = { "mcp", "-p", "child", "--image", "tiny", "--session", "box", NULL };
	CHECK(cli_sandbox_config(7, mcp_ok, SBX_CMD_MCP, "", &cfg, &rest, &err) == 0);
	CHECK_STR(cfg.image, "tiny");
	CHECK_STR(cfg.session, "box");
	CHECK(rest == 7);
	config_free(&cfg);
	char *mcp_bad[] = { "mcp", "--memory", "1G", NULL };
	CHECK(cli_sandbox_config(3, mcp_bad, SBX_CMD_MCP, "", &cfg, &rest, &err) < 0);
	CHECK_CONTAINS(err.msg, "unknown option: '--memory'");
	config_free(&cfg);

	config_init(&cfg);
	CHECK(profile_load(&cfg, "loop1", &err) < 0);
	CHECK_CONTAINS(err.msg, "inherit loop");
	config_free(&cfg);

	/* never the current directory */
	char *cwd = get_current_dir_name();
	CHECK(chdir(dir) == 0);
	write_file("mine.ini", "[limits]\ntimeout = 1s\n");
	char *found = NULL;
	CHECK(profile_find("mine", &found, &err) < 0);
	CHECK(profile_find("./mine.ini", &found, &err) == 0); /* a path is a path */
	free(found);
	CHECK(chdir(cwd) == 0);
	free(cwd);
	free(profiles);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
}

int main(void)
{
	test_numbers();
	test_bad_profiles();
	test_good_profile();
	test_download_limits();
	test_lookup_and_precedence();
	return unit_done("test_config");
}
