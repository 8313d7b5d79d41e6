/* test_config.c - numbers, sizes, durations, the profile loader's strictness
 * (including Debian inih's two traps), lookup and precedence, zero limits,
 * what a profile file may be, and the administrator's ceiling. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cli.h"
#include "base/config.h"
#include "base/pkgrule.h"
#include "base/policy.h"
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
	CHECK(parse_duration_ms("7d", &v, &err) == 0 && v == 7 * 86400000ULL);
	CHECK(parse_duration_ms("366d", &v, &err) == 0);
	CHECK(parse_duration_ms("367d", &v, &err) < 0);
	/* too long: the message says how long may be (issue 34, point 10) */
	CHECK_STR(err.msg, "invalid duration '367d': longer than the maximum of 366d");
	CHECK(parse_duration_ms("8785h", &v, &err) < 0);
	CHECK_STR(err.msg, "invalid duration '8785h': longer than the maximum of 366d");
	CHECK(parse_duration_ms("8784h", &v, &err) == 0 && v == 366 * 86400000ULL);
	CHECK(parse_duration_ms("99999999999999999999s", &v, &err) < 0);
	CHECK_STR(err.msg, "invalid duration '99999999999999999999s': longer than the maximum of 366d");
	CHECK(parse_duration_ms("5x", &v, &err) < 0);
	CHECK_STR(err.msg, "invalid duration '5x' (use e.g. 500ms, 30s, 5m, 1h, 7d, or none)");
	CHECK(parse_duration_ms("none", &v, &err) == 0 && v == 0);
	const char *bad_d[] = { "", "-1s", "1.5s", "5x", "s", " 5s", "5s ", "99999999999999999999s", "1D", "5 s", "1.5d" };
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
	format_duration(2 * 86400000ULL, buf, sizeof(buf));
	CHECK_STR(buf, "2d");
	format_duration(36 * 3600000ULL, buf, sizeof(buf));
	CHECK_STR(buf, "36h");
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

/* The min_age the profile gives eco (NULL: the one for all), in ms. */
static uint64_t age_of(const struct sbx_config *cfg, const char *eco)
{
	return pkgrule_age_for((const char *const *)cfg->pkg_min_age.v, cfg->pkg_min_age.n, eco, NULL);
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
	/* the host's loopback by name without its port would grant nothing */
	expect_bad("[network]\nallow = Host.Sbxrun.Internal.\n",
		   "t.ini:2: allow: 'Host.Sbxrun.Internal.': host.sbxrun.internal needs its port");
	expect_bad("[download]\nallow = host.sbxrun.internal\n", "needs its port");
	expect_bad("[mounts]\nbind = relative:/x\n", "t.ini:2: bind:");
	expect_bad("[mounts]\nbind = /a:b\n", "destination must be an absolute path");
	expect_bad("[mounts]\nbind = /a:/b:maybe\n", "mode must be rw or ro");
	expect_bad("[sandbox]\nenv = NOVALUE\n", "is not KEY=VALUE");
	expect_bad("[sandbox]\nworkdir = relative/dir\n", "not an absolute path");
	expect_bad("[sandbox]\nworkdir = /a/../b\n", "contains '..'");
	expect_bad("image = x\n", "t.ini:1: image: key outside a section");
	expect_bad("[sandbox]\nthis line has no equals sign\n", "t.ini:2: not a 'key = value'");
	expect_bad("[sandbox]\nimage = ../../etc\n", "invalid name");
	expect_bad("[download]\ntimeout = 0\n", "t.ini:2: timeout: '0': zero is not a limit (use 'none' for no limit)");
	expect_bad("[download]\nmin_speed_time = 0s\n", "t.ini:2: min_speed_time: '0s': zero is not a limit");
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
	expect_bad("[download]\nmin_speed = 0\n", "t.ini:2: min_speed: '0': zero is not a limit");
	CHECK(load("[download]\nmin_speed = unlimited\n", &cfg) == NULL);
	CHECK(config_check(&cfg, &err) < 0);
	CHECK_CONTAINS(err.msg, "t.ini:2: [download] min_speed: at least 1 byte a second");
	config_free(&cfg);
}

/* [packages]: the gateway's upstream is https (or a mirror on this host) */
static void test_packages(void)
{
	static const struct { const char *url; int ok; } t[] = {
		{ "https://npm.example.org/", 1 }, { "https://npm.example.org", 1 },
		{ "http://host.sbxrun.internal:8080/", 1 }, { "http://npm.example.org/", 0 },
		{ "https:///x", 0 }, { "https://", 0 }, { "ftp://x/", 0 }, { "https://a b/", 0 },
		{ "http://host.sbxrun.internal:", 0 }, { "file:///etc/passwd", 0 },
		{ "http://HOST.sbxrun.internal:8080/", 1 }, { "https://npm.example.org:8443/x", 1 },
		/* the host's loopback needs its port: refused here, not when fetched */
		{ "http://host.sbxrun.internal:/", 0 }, { "https://host.sbxrun.internal/", 0 },
		{ "http://host.sbxrun.internal:x/", 0 }, { "https://npm.example.org:/", 0 },
		{ "https://npm.example.org:99999/", 0 }, { "https://0x7f.1/", 0 },
	};
	struct sbx_config cfg;
	struct sbx_err err;
	char ini[256];

	CHECK(load("[sandbox]\nimage = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_npm == NULL && cfg.pkg_pypi == NULL && cfg.pkg_timeout_ms == 30000);
	config_free(&cfg);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(ini, sizeof(ini), "[packages]\nnpm = %s\ntimeout = 5s\n", t[i].url);
		CHECK(load(ini, &cfg) == NULL);
		int r = config_check(&cfg, &err);
		CHECK(t[i].ok ? r == 0 : r < 0);
		if (!t[i].ok)
			CHECK_CONTAINS(err.msg, "t.ini:2: [packages] npm:");
		config_free(&cfg);
	}
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		snprintf(ini, sizeof(ini), "[packages]\npypi = %s\n", t[i].url);
		CHECK(load(ini, &cfg) == NULL);
		int r = config_check(&cfg, &err);
		CHECK(t[i].ok ? r == 0 && strcmp(cfg.pkg_pypi, t[i].url) == 0 : r < 0);
		if (!t[i].ok)
			CHECK_CONTAINS(err.msg, "t.ini:2: [packages] pypi:");
		config_free(&cfg);
	}
	static const char *const portless[] = { "npm = http://host.sbxrun.internal:/",
						"pypi = https://host.sbxrun.internal/" };
	for (size_t i = 0; i < ARRAY_SIZE(portless); i++) {
		snprintf(ini, sizeof(ini), "[packages]\n%s\n", portless[i]);
		CHECK(load(ini, &cfg) == NULL);
		CHECK(config_check(&cfg, &err) < 0);
		CHECK_CONTAINS(err.msg, "t.ini:2: [packages] ");
		CHECK_CONTAINS(err.msg, ": host.sbxrun.internal needs its port (host.sbxrun.internal:PORT)");
		config_free(&cfg);
	}
	CHECK(load("[packages]\ntimeout = none\n", &cfg) == NULL);
	CHECK(config_check(&cfg, &err) < 0);
	CHECK_CONTAINS(err.msg, "[packages] timeout");
	config_free(&cfg);
	/* Go: a proxy needs a checksum database, given by its verifier key and URL */
	static const struct { const char *ini, *msg; } gos[] = {
		{ "go = https://goproxy.example.org/\ngo_sumdb = sum.example.org+0123abcd+AQID https://sum.example.org/", NULL },
		{ "go = https://goproxy.example.org/", "t.ini:2: [packages] go: needs go_sumdb" },
		{ "go = http://goproxy.example.org/\ngo_sumdb = s+0123abcd+AQID https://s.example.org/", "[packages] go:" },
		{ "go = https://g.example.org/\ngo_sumdb = sum.example.org https://s.example.org/", "not a verifier key" },
		{ "go = https://g.example.org/\ngo_sumdb = s+0123ABCD+AQID https://s.example.org/", "not a verifier key" },
		{ "go = https://g.example.org/\ngo_sumdb = s+0123abcd+AQID", "no URL after the verifier key" },
		{ "go = https://g.example.org/\ngo_sumdb = s+0123abcd+AQID http://s.example.org/", "t.ini:3: [packages] go_sumdb:" },
		{ "go = https://g.example.org/\ngo_sumdb = s+0123abcd+AQID https://a/ https://b/", "no URL after" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(gos); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "[packages]\n%s\n", gos[i].ini);
		CHECK(load(buf, &cfg) == NULL);
		int r = config_check(&cfg, &err);
		CHECK(gos[i].msg ? r < 0 : r == 0);
		if (gos[i].msg && r < 0)
			CHECK_CONTAINS(err.msg, gos[i].msg);
		config_free(&cfg);
	}
	CHECK(strcmp(config_go_sumdb_url("k+0123abcd+AQID  https://s/"), "https://s/") == 0);
	CHECK(config_go_sumdb_url("k+0123abcd+AQID") == NULL);
	expect_bad("[packages]\nmirror = x\n", "t.ini:2: mirror: unknown key in [packages]");

	/* the rules: [ECO:]GLOB, a duration, yes|no */
	CHECK(load("[packages]\nallow = pypi:numpy\nallow = npm:@types/*\nallow = left-pad\n"
		   "deny = npm:@types/evil*\nmin_age = 7d\noffline = yes\n", &cfg) == NULL);
	CHECK(cfg.pkg_allow.n == 3 && cfg.pkg_deny.n == 1);
	CHECK_STR(cfg.pkg_allow.v[1], "npm:@types/*");
	CHECK_STR(cfg.pkg_allow.origin[2], "t.ini:4");
	CHECK(age_of(&cfg, "npm") == 7 * 86400000ULL && cfg.pkg_offline == SBX_ON);
	CHECK(cfg.pkg_min_age.n == 1);
	CHECK_STR(cfg.pkg_min_age.v[0], "7d");
	config_free(&cfg);
	CHECK(load("[sandbox]\nimage = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_allow.n == 0 && cfg.pkg_min_age.n == 0 && cfg.pkg_offline == SBX_OFF);
	config_free(&cfg);
	/* min_age per ecosystem: ECO:DURATION wins for ECO, the last of each kind counts */
	CHECK(load("[packages]\nmin_age = 7d\nmin_age = deb:0\nmin_age = npm:3d\nmin_age = npm:1h\n", &cfg) == NULL);
	CHECK(age_of(&cfg, "deb") == 0 && age_of(&cfg, "npm") == 3600000ULL && age_of(&cfg, "pypi") == 7 * 86400000ULL);
	CHECK(age_of(&cfg, NULL) == 7 * 86400000ULL);
	config_free(&cfg);
	CHECK(load("[packages]\nmin_age = go:none\nmin_age = cargo:2d\n", &cfg) == NULL);
	CHECK(age_of(&cfg, "go") == 0 && age_of(&cfg, "cargo") == 2 * 86400000ULL && age_of(&cfg, "npm") == 0);
	config_free(&cfg);
	expect_bad("[packages]\nmin_age = gem:1d\n", "t.ini:2: min_age: 'gem:1d': unknown ecosystem 'gem'");
	expect_bad("[packages]\nmin_age = deb:\n", "t.ini:2: min_age: 'deb:' is not [ECO:]DURATION");
	expect_bad("[packages]\nmin_age = deb:1d:2\n", "is not [ECO:]DURATION");
	expect_bad("[packages]\nallow = gem:rails\n", "t.ini:2: allow: 'gem:rails': unknown ecosystem 'gem'");
	expect_bad("[packages]\ndeny = npm:\n", "t.ini:2: deny: 'npm:' is not [ECO:]GLOB");
	expect_bad("[packages]\nallow = a b\n", "t.ini:2: allow: 'a b': ' ' is not a package name");
	expect_bad("[packages]\nmin_age = 7 days\n", "t.ini:2: min_age: '7 days' is not [ECO:]DURATION");
	expect_bad("[packages]\noffline = maybe\n", "t.ini:2: offline: invalid value 'maybe' (one of: no, yes)");
	/* how long an index is served unasked: 2 minutes unless said, none: never */
	CHECK(load("[sandbox]\nimage = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_age_ms == 120000);
	config_free(&cfg);
	CHECK(load("[packages]\nindex_max_age = 10m\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_age_ms == 600000);
	config_free(&cfg);
	CHECK(load("[packages]\nindex_max_age = none\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_age_ms == 0);
	config_free(&cfg);
	expect_bad("[packages]\nindex_max_age = 2 min\n", "t.ini:2: index_max_age: invalid duration '2 min'");
	expect_bad("[packages]\nindex_max_age = 0\n", "t.ini:2: index_max_age: '0': zero is not a limit");
	/* and stale while revalidated behind: a day unless said, none: never */
	CHECK(load("[sandbox]\nimage = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_stale_ms == 86400000);
	config_free(&cfg);
	CHECK(load("[packages]\nindex_max_stale = none\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_stale_ms == 0);
	config_free(&cfg);
	/* the cache: a cap (10G unless said; 0 is no cap), the system cache's path */
	CHECK(load("[sandbox]\nimage = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_cache_max == 10ULL << 30 && strcmp(cfg.pkg_cache, "/var/cache/sbxrun/packages") == 0);
	config_free(&cfg);
	CHECK(load("[packages]\ncache_max = unlimited\ncache = none\n", &cfg) == NULL);
	CHECK(cfg.pkg_cache_max == 0 && config_check(&cfg, &err) == 0);
	config_free(&cfg);
	expect_bad("[packages]\ncache_max = 0\n", "t.ini:2: cache_max");
	CHECK(load("[packages]\ncache = lab/cache\n", &cfg) == NULL);
	CHECK(config_check(&cfg, &err) < 0);
	CHECK_CONTAINS(err.msg, "t.ini:2: [packages] cache: 'lab/cache' is not an absolute path");
	config_free(&cfg);
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
	/* --raw-tty: run and shell, never a profile key nor another command's */
	char *raw[] = { "shell", "-p", "child", "--raw-tty", NULL };
	CHECK(cli_sandbox_config(4, raw, SBX_CMD_SHELL, "", &cfg, &rest, &err) == 0);
	CHECK(cfg.raw_tty == 1);
	config_free(&cfg);
	CHECK(cli_sandbox_config(4, raw, SBX_CMD_MCP, "", &cfg, &rest, &err) < 0);
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


/* A zero used to lift a limit silently; now only the word does. */
static void test_zero_refused(void)
{
	static const enum sbx_key limits[] = { SBX_K_TIMEOUT, SBX_K_MEMORY, SBX_K_DISK, SBX_K_PIDS,
		SBX_K_CPUS, SBX_K_FILE_SIZE, SBX_K_OPEN_FILES, SBX_K_IDLE, SBX_K_LIFETIME,
		SBX_K_DL_MAX_SIZE };
	static const char *const zeros[] = { "0", "00", "0s", "0ms", "0K", "0.0" };
	struct sbx_config cfg;
	struct sbx_err err;

	config_init(&cfg);
	for (size_t i = 0; i < ARRAY_SIZE(limits); i++) {
		const struct sbx_option *o = options_by_key(limits[i]);
		const char *word = config_unlimited_word(o);
		uint64_t *v = (uint64_t *)((char *)&cfg + o->offset);
		int refused = 0;
		for (size_t z = 0; z < ARRAY_SIZE(zeros); z++) {
			err.msg[0] = '\0';
			if (config_set(&cfg, o, zeros[z], "t", 1, &err) < 0)
				refused++;
			if (strstr(err.msg, "zero is not a limit"))
				CHECK_CONTAINS(err.msg, word);
		}
		CHECK(refused == (int)ARRAY_SIZE(zeros));
		CHECK(word != NULL);
		*v = 5;
		CHECK(config_set(&cfg, o, word, "t", 1, &err) == 0 && *v == 0);
	}
	CHECK(config_set(&cfg, options_by_key(SBX_K_MEMORY), "0", "t", 1, &err) < 0);
	CHECK_STR(err.msg, "'0': zero is not a limit (use 'unlimited' for no limit)");
	CHECK(config_set(&cfg, options_by_key(SBX_K_TIMEOUT), "0s", "t", 1, &err) < 0);
	CHECK_STR(err.msg, "'0s': zero is not a limit (use 'none' for no limit)");
	CHECK(config_set(&cfg, options_by_key(SBX_K_CPUS), "0.5", "t", 1, &err) == 0 &&
	      cfg.cpus_milli == 500);
	config_free(&cfg);
	expect_bad("[limits]\ndisk = 0\n", "t.ini:2: disk: '0': zero is not a limit (use 'unlimited'");
	expect_bad("[limits]\nidle = 0m\n", "t.ini:2: idle: '0m': zero is not a limit (use 'none'");
}

/* Profile files: regular files under 64 KiB only, errors naming the path. */
static void test_profile_files(void)
{
	char dir[] = "/tmp/sbxunit.XXXXXX";
	struct sbx_config cfg;
	struct sbx_err err;

	CHECK(mkdtemp(dir) != NULL);
	char *p = xasprintf("%s/zero.ini", dir);
	write_file(p, "inherit = /dev/zero\n");
	config_init(&cfg);
	CHECK(profile_load(&cfg, p, &err) < 0);
	CHECK_CONTAINS(err.msg, "zero.ini:1: inherit: profile: '/dev/zero' is not a regular file");
	config_free(&cfg);
	free(p);
	p = xasprintf("%s/dir.ini", dir);
	write_file(p, "inherit = /tmp\n");
	config_init(&cfg);
	CHECK(profile_load(&cfg, p, &err) < 0);
	CHECK_CONTAINS(err.msg, "dir.ini:1: inherit: profile: '/tmp'");
	CHECK(err.errnum == EISDIR);
	config_free(&cfg);
	free(p);
	p = xasprintf("%s/big.ini", dir);
	FILE *f = fopen(p, "w");
	fputs("[sandbox]\n", f);
	for (int i = 0; i < 7000; i++)
		fputs("; padding\n", f);
	fclose(f);
	config_init(&cfg);
	CHECK(profile_load(&cfg, p, &err) < 0);
	CHECK_CONTAINS(err.msg, "big.ini': larger than 64 KiB");
	config_free(&cfg);
	free(p);
	p = xasprintf("%s/empty.ini", dir);
	write_file(p, "");
	config_init(&cfg);
	CHECK(profile_load(&cfg, p, &err) == 0);
	config_free(&cfg);
	free(p);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
}

/* Applies the policy texts to a profile text; returns the error or NULL. */
static char *capped(const char *const *policies, size_t n, const char *profile,
		    struct sbx_config *cfg)
{
	static struct sbx_err err;
	struct sbx_policy pol;
	char label[32];
	int r = 0;

	memset(&pol, 0, sizeof(pol));
	for (size_t i = 0; i < n && r == 0; i++) {
		snprintf(label, sizeof(label), "/p%zu.ini", i + 1);
		r = policy_add_text(&pol, policies[i], strlen(policies[i]), label, &err);
	}
	char *msg = r < 0 ? err.msg : load(profile, cfg);
	if (!msg) {
		cfg->profile = xstrdup("t");
		msg = policy_apply(&pol, cfg, &err) < 0 ? err.msg : NULL;
	}
	policy_free(&pol);
	return msg;
}

static void expect_capped(const char *const *policies, size_t n, const char *profile,
			  const char *needle)
{
	struct sbx_config cfg;
	char *msg = capped(policies, n, profile, &cfg);
	CHECK(msg != NULL);
	if (msg)
		CHECK_CONTAINS(msg, needle);
	config_free(&cfg);
}

static void test_policy_values(void)
{
	const char *one[] = { "[limits]\nmemory = 4G\ntimeout = 1h\n[network]\negress = packages\n"
			      "[sandbox]\nseccomp = default\nptrace = no\n" };
	const char *two[] = { one[0], "[limits]\nmemory = 2G\n[network]\negress = none\n" };
	struct sbx_config cfg;

	/* unset values take the ceiling; set ones under it stay */
	CHECK(capped(one, 1, "[limits]\nmemory = 1G\n", &cfg) == NULL);
	CHECK(cfg.memory == 1ULL << 30);
	CHECK(cfg.timeout_ms == 3600000);
	CHECK_STR(cfg.origin[SBX_K_TIMEOUT], "policy /p1.ini:3");
	CHECK(cfg.ptrace == SBX_OFF);
	CHECK(cfg.seccomp == 1);
	config_free(&cfg);
	/* two files: the intersection (the lower cap, wherever it is) */
	CHECK(capped(two, 2, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(cfg.memory == 2ULL << 30);
	CHECK_STR(cfg.origin[SBX_K_MEMORY], "policy /p2.ini:2");
	CHECK(cfg.timeout_ms == 3600000);
	config_free(&cfg);
	expect_capped(two, 2, "[limits]\nmemory = 3G\n",
		      "profile 't' asks for memory = 3G (t.ini:2); /p2.ini caps [limits] memory at 2G");
	expect_capped(two, 2, "[limits]\nmemory = 8G\n", "/p1.ini caps [limits] memory at 4G");
	expect_capped(one, 1, "[limits]\nmemory = unlimited\n", "asks for memory = unlimited");
	expect_capped(one, 1, "[limits]\ntimeout = none\n", "asks for timeout = none");
	expect_capped(one, 1, "[network]\negress = full\n", "/p1.ini caps [network] egress at packages");
	expect_capped(two, 2, "[network]\negress = packages\n", "/p2.ini caps [network] egress at none");
	expect_capped(one, 1, "[sandbox]\nseccomp = off\n", "/p1.ini caps [sandbox] seccomp at default");
	expect_capped(one, 1, "[sandbox]\nptrace = yes\n", "/p1.ini caps [sandbox] ptrace at no");

	/* the command line is held too, and named as such */
	struct sbx_policy pol;
	struct sbx_err err;
	memset(&pol, 0, sizeof(pol));
	CHECK(policy_add_text(&pol, two[1], strlen(two[1]), "/etc/x.ini", &err) == 0);
	config_init(&cfg);
	CHECK(config_set(&cfg, options_by_key(SBX_K_MEMORY), "3G", "command line", 1, &err) == 0);
	CHECK(policy_apply(&pol, &cfg, &err) < 0);
	CHECK_STR(err.msg, "--memory asks for memory = 3G; /etc/x.ini caps [limits] memory at 2G");
	config_free(&cfg);
	policy_free(&pol);
}

static void test_policy_lists(void)
{
	const char *hosts[] = { "[network]\nallow = *.example.org\nallow = mirror.lab\n"
				"allow = @apt\n[download]\nallow = none\n" };
	struct sbx_config cfg;

	CHECK(capped(hosts, 1, "[network]\negress = packages\nallow = a.example.org\n"
		     "allow = *.b.example.org\nallow = MIRROR.lab.\nallow = @apt\n", &cfg) == NULL);
	CHECK(cfg.allow.n == 4);
	config_free(&cfg);
	expect_capped(hosts, 1, "[network]\nallow = example.org\n",
		      "asks for allow = example.org (t.ini:2); /p1.ini caps [network] allow at "
		      "*.example.org, mirror.lab, @apt");
	expect_capped(hosts, 1, "[network]\nallow = mirror.lab:8080\n", "allow = mirror.lab:8080");
	/* a policy entry without a port covers the ports an entry without one
	 * opens (80, 443), named; a port the policy names covers only itself */
	CHECK(capped(hosts, 1, "[network]\nallow = mirror.lab:443\nallow = a.example.org:80\n", &cfg) == NULL);
	config_free(&cfg);
	const char *port443[] = { "[network]\nallow = mirror.lab:443\n" };
	expect_capped(port443, 1, "[network]\nallow = mirror.lab\n", "allow = mirror.lab");
	CHECK(capped(port443, 1, "[network]\nallow = mirror.lab:443\n", &cfg) == NULL);
	config_free(&cfg);
	expect_capped(hosts, 1, "[network]\nallow = @npm\n", "allow = @npm");
	expect_capped(hosts, 1, "[network]\nallow = *.org\n", "allow = *.org");
	expect_capped(hosts, 1, "[network]\nallow = host.sbxrun.internal:5432\n", "host.sbxrun.internal");
	expect_capped(hosts, 1, "[download]\nallow = files.example.org\n",
		      "/p1.ini caps [download] allow at none");
	/* entries are read once into the canonical form every comparison
	 * reads (base/hostentry.c): what the policy let through is what the
	 * proxy and the package rules see */
	CHECK(capped(hosts, 1, "[network]\nallow = MIRROR.lab.:443\nallow = *.B.Example.Org.\n", &cfg) == NULL);
	CHECK(cfg.allow.n == 2);
	CHECK_STR(cfg.allow.v[0], "mirror.lab:443");
	CHECK_STR(cfg.allow.v[1], "*.b.example.org");
	config_free(&cfg);
	const char *v6[] = { "[network]\nallow = [2001:db8::5]\nallow = 192.0.2.7:443\n" };
	CHECK(capped(v6, 1, "[network]\nallow = [2001:DB8:0:0::5]:443\nallow = [::ffff:192.0.2.7]:443\n", &cfg) == NULL);
	CHECK(cfg.allow.n == 2);
	CHECK_STR(cfg.allow.v[0], "[2001:db8::5]:443");
	CHECK_STR(cfg.allow.v[1], "192.0.2.7:443");
	config_free(&cfg);
	expect_capped(v6, 1, "[network]\nallow = [2001:db8::6]\n", "allow = [2001:db8::6]");
	expect_capped(v6, 1, "[network]\nallow = 192.0.2.7\n", "allow = 192.0.2.7");
	/* no other spelling of an address is a name */
	expect_capped(v6, 1, "[network]\nallow = 3221225991\n", "t.ini:2: allow: invalid host '3221225991'");
	expect_capped(v6, 1, "[network]\nallow = 0xc0.0.2.7\n", "t.ini:2: allow: invalid host '0xc0.0.2.7'");
	expect_capped(v6, 1, "[network]\nallow = *.192.0.2.7\n", "t.ini:2: allow: '*.192.0.2.7': '*.' needs a name, not an address");

	/* defaults not covered are dropped, not refused (the proxy's sets) */
	struct sbx_policy pol;
	struct sbx_err err;
	memset(&pol, 0, sizeof(pol));
	CHECK(policy_add_text(&pol, hosts[0], strlen(hosts[0]), "/p.ini", &err) == 0);
	config_init(&cfg);
	config_set(&cfg, options_by_key(SBX_K_ALLOW), "@apt", "default", 0, &err);
	config_set(&cfg, options_by_key(SBX_K_ALLOW), "@pypi", "default", 0, &err);
	CHECK(policy_apply(&pol, &cfg, &err) == 0);
	CHECK(cfg.allow.n == 1);
	CHECK_STR(cfg.allow.v[0], "@apt");
	config_free(&cfg);
	policy_free(&pol);

	char dir[] = "/tmp/sbxunit.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *work = xasprintf("%s/work", dir), *secret = xasprintf("%s/secret", dir);
	char *link = xasprintf("%s/work/link", dir);
	char *sub = xasprintf("%s/sub", work);
	CHECK(mkdir(work, 0700) == 0 && mkdir(secret, 0700) == 0 && symlink(secret, link) == 0);
	CHECK(mkdir(sub, 0700) == 0);
	free(sub);
	char *pbind = xasprintf("[mounts]\nbind = %s:rw\nbind = /usr/share\n", work);
	const char *binds[] = { pbind };
	char *prof = xasprintf("[mounts]\nbind = %s/sub:/w:rw\nbind = /usr/share/doc:/d\n", work);
	CHECK(capped(binds, 1, prof, &cfg) == NULL);
	CHECK(cfg.binds.n == 2);
	config_free(&cfg);
	free(prof);
	prof = xasprintf("[mounts]\nbind = %s:/s\n", secret);
	expect_capped(binds, 1, prof, "asks for bind = ");
	free(prof);
	prof = xasprintf("[mounts]\nbind = %s:/s\n", link); /* the real path counts */
	expect_capped(binds, 1, prof, "caps [mounts] bind at ");
	free(prof);
	prof = xasprintf("[mounts]\nbind = %s/../secret:/s\n", work);
	expect_capped(binds, 1, prof, "caps [mounts] bind at ");
	free(prof);
	expect_capped(binds, 1, "[mounts]\nbind = /usr/share/doc:/d:rw\n", "bind = /usr/share/doc:/d:rw");
	const char *nobind[] = { "[mounts]\nbind = none\n" };
	expect_capped(nobind, 1, "[mounts]\nbind = /usr:/u\n", "caps [mounts] bind at none");
	expect_capped(nobind, 1, "[mounts]\nbind = /nonexistent-sbx:/u\n",
		      "bind '/nonexistent-sbx:/u': source '/nonexistent-sbx'");
	const char *glob[] = { "[mounts]\nbind = /usr/*/doc\n" };
	CHECK(capped(glob, 1, "[mounts]\nbind = /usr/share/doc:/u\n", &cfg) == NULL);
	config_free(&cfg);
	expect_capped(glob, 1, "[mounts]\nbind = /usr/share:/u\n", "caps [mounts] bind at /usr/*/doc");
	free(pbind);
	free(work);
	free(secret);
	free(link);
	struct sbx_err rerr;
	CHECK(rm_rf_at(AT_FDCWD, dir, &rerr) == 0);
}

static void expect_bad_policy(const char *text, const char *needle)
{
	struct sbx_policy pol;
	struct sbx_err err;
	memset(&pol, 0, sizeof(pol));
	CHECK(policy_add_text(&pol, text, strlen(text), "/pol.ini", &err) < 0);
	CHECK_CONTAINS(err.msg, needle);
	policy_free(&pol);
}

/* [packages]: allow within the policy's, its deny always, min_age at
 * least, offline when it says so */
static void test_policy_packages(void)
{
	const char *one[] = { "[packages]\nallow = npm:@types/*\nallow = npm:express\nallow = pypi:num*\n"
			      "deny = npm:@types/evil\nmin_age = 7d\noffline = yes\n" };
	const char *two[] = { one[0], "[packages]\nallow = npm:@types/node\nallow = npm:left-pad\n" };
	const char *apart[] = { one[0], "[packages]\nallow = pypi:pandas\n" };
	struct sbx_config cfg;

	CHECK(capped(one, 1, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_allow.n == 3);
	CHECK_STR(cfg.pkg_allow.v[2], "pypi:num*");
	CHECK_STR(cfg.pkg_allow.origin[0], "policy /p1.ini:2");
	CHECK(cfg.pkg_deny.n == 1);
	CHECK_STR(cfg.pkg_deny.origin[0], "policy /p1.ini:5");
	CHECK(age_of(&cfg, "deb") == 7 * 86400000ULL && cfg.pkg_offline == SBX_ON);
	CHECK_STR(cfg.pkg_min_age.origin[0], "policy /p1.ini:6");
	config_free(&cfg);
	CHECK(capped(one, 1, "[packages]\nallow = npm:@types/node\nallow = npm:@types/n*\nallow = pypi:NumPy\n"
		     "deny = npm:x\nmin_age = 30d\noffline = yes\n", &cfg) == NULL);
	CHECK(cfg.pkg_allow.n == 3 && cfg.pkg_deny.n == 2);
	CHECK_STR(cfg.pkg_allow.origin[0], "t.ini:2");
	CHECK(age_of(&cfg, "npm") == 30 * 86400000ULL);
	config_free(&cfg);
	expect_capped(one, 1, "[packages]\nallow = npm:left-pad\n",
		      "profile 't' asks for allow = npm:left-pad (t.ini:2); /p1.ini caps [packages] allow at "
		      "npm:@types/*, npm:express, pypi:num*");
	expect_capped(one, 1, "[packages]\nallow = express\n", "asks for allow = express");
	expect_capped(one, 1, "[packages]\nallow = npm:*\n", "asks for allow = npm:*");
	expect_capped(one, 1, "[packages]\nallow = npm:expres?\n", "asks for allow = npm:expres?");
	expect_capped(one, 1, "[packages]\nallow = npm:@type*\n", "asks for allow = npm:@type*");
	expect_capped(one, 1, "[packages]\nmin_age = 1d\n",
		      "asks for min_age = 1d (t.ini:2); /p1.ini caps [packages] min_age at 7d or more");
	/* per ecosystem: a floor in each; the profile's deb:0 only where the policy's allows it */
	expect_capped(one, 1, "[packages]\nmin_age = 30d\nmin_age = deb:0\n",
		      "asks for min_age = deb:0 (t.ini:3); /p1.ini caps [packages] min_age at 7d or more in deb");
	const char *debfree[] = { "[packages]\nmin_age = 7d\nmin_age = deb:0\n" };
	CHECK(capped(debfree, 1, "[packages]\nmin_age = 30d\nmin_age = deb:0\n", &cfg) == NULL);
	CHECK(age_of(&cfg, "deb") == 0 && age_of(&cfg, "npm") == 30 * 86400000ULL);
	config_free(&cfg);
	expect_capped(debfree, 1, "[packages]\nmin_age = deb:1d\nmin_age = npm:1d\n",
		      "asks for min_age = npm:1d (t.ini:3); /p1.ini caps [packages] min_age at 7d, deb:0 or more in npm");
	CHECK(capped(debfree, 1, "[packages]\nmin_age = deb:1d\n", &cfg) == NULL);
	CHECK(age_of(&cfg, "deb") == 86400000ULL && age_of(&cfg, "npm") == 7 * 86400000ULL);
	CHECK(age_of(&cfg, "maven") == 7 * 86400000ULL);
	config_free(&cfg);
	CHECK(capped(debfree, 1, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(age_of(&cfg, "deb") == 0 && age_of(&cfg, "cargo") == 7 * 86400000ULL);
	config_free(&cfg);
	expect_capped(one, 1, "[packages]\noffline = no\n", "/p1.ini caps [packages] offline at yes");
	/* index_max_age: at most the policy's (none, ask every time, is the lowest) */
	const char *fresh[] = { "[packages]\nindex_max_age = 1m\n" };
	CHECK(capped(fresh, 1, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_age_ms == 60000);
	CHECK_STR(cfg.origin[SBX_K_PKG_INDEX_MAX_AGE], "policy /p1.ini:2");
	config_free(&cfg);
	CHECK(capped(fresh, 1, "[packages]\nindex_max_age = none\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_age_ms == 0);
	config_free(&cfg);
	expect_capped(fresh, 1, "[packages]\nindex_max_age = 10m\n",
		      "asks for index_max_age = 10m (t.ini:2); /p1.ini caps [packages] index_max_age at 1m");
	/* index_max_stale the same: a policy of none turns stale answers off */
	const char *nostale[] = { "[packages]\nindex_max_stale = none\n" };
	CHECK(capped(nostale, 1, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_index_max_stale_ms == 0);
	config_free(&cfg);
	expect_capped(nostale, 1, "[packages]\nindex_max_stale = 1h\n",
		      "asks for index_max_stale = 1h (t.ini:2); /p1.ini caps [packages] index_max_stale at none");
	/* two files: what both allow */
	CHECK(capped(two, 2, "[sandbox]\nhostname = x\n", &cfg) == NULL);
	CHECK(cfg.pkg_allow.n == 1);
	CHECK_STR(cfg.pkg_allow.v[0], "npm:@types/node");
	CHECK_STR(cfg.pkg_allow.origin[0], "policy /p2.ini:2");
	config_free(&cfg);
	expect_capped(apart, 2, "[sandbox]\nhostname = x\n",
		      "/p2.ini caps [packages] allow at pypi:pandas, which leaves nothing of what /p1.ini:2 allows");
	/* every ecosystem: covered only where each is */
	const char *each[] = { "[packages]\nallow = npm:*\nallow = pypi:*\nallow = deb:*\nallow = go:*\nallow = cargo:*\nallow = maven:*\n" };
	CHECK(capped(each, 1, "[packages]\nallow = left-pad\nallow = *\n", &cfg) == NULL);
	config_free(&cfg);
	const char *some[] = { "[packages]\nallow = npm:*\nallow = pypi:*\n" };
	expect_capped(some, 1, "[packages]\nallow = left-pad\n", "asks for allow = left-pad");
}

static void test_policy_files(void)
{
	struct sbx_policy pol;
	struct sbx_err err;

	expect_bad_policy("[limits]\nmemroy = 2G\n", "/pol.ini:2: memroy: unknown key in [limits]");
	expect_bad_policy("[nope]\nx = 1\n", "/pol.ini:2: unknown section [nope]");
	expect_bad_policy("[sandbox]\nimage = x\n", "/pol.ini:2: image: not a ceiling");
	expect_bad_policy("memory = 2G\n", "/pol.ini:1: memory: key outside a section");
	expect_bad_policy("[limits]\nmemory = 0\n", "/pol.ini:2: memory: '0': zero is not a limit");
	expect_bad_policy("[limits]\nmemory = 1G\nmemory = 2G\n", "/pol.ini:3: memory: set twice");
	expect_bad_policy("[limits]\n  memory = 1G\n", "/pol.ini:2: indented line");
	expect_bad_policy("[mounts]\nbind = relative:rw\n", "/pol.ini:2: bind: 'relative:rw' is not PATH");
	expect_bad_policy("[mounts]\nbind = /a/..\n", "'/a/..' is not PATH");
	expect_bad_policy("[mounts]\nbind = /*/*/*/*/*\n", "at most 4 '*'");
	expect_bad_policy("[network]\negress = all\n", "/pol.ini:2: egress: invalid value 'all'");
	/* absent: no ceiling; the extra file must exist and be a regular file */
	CHECK(policy_load_paths(&pol, "/nonexistent-sbx/policy.ini", NULL, &err) == 0 && pol.n == 0);
	CHECK(policy_load_paths(&pol, NULL, "/nonexistent-sbx/extra.ini", &err) < 0);
	CHECK_CONTAINS(err.msg, "policy '/nonexistent-sbx/extra.ini' (from $SBXRUN_POLICY)");
	CHECK(policy_load_paths(&pol, NULL, "/tmp", &err) < 0);
	CHECK_CONTAINS(err.msg, "policy: '/tmp'");
	CHECK(policy_load_paths(&pol, NULL, "/dev/zero", &err) < 0);
	CHECK_CONTAINS(err.msg, "'/dev/zero' is not a regular file");
	/* the system file below a directory others may write is not trusted */
	char dir[] = "/tmp/sbxunit.XXXXXX";
	CHECK(mkdtemp(dir) != NULL);
	char *p = xasprintf("%s/policy.ini", dir);
	write_file(p, "[limits]\nmemory = 1G\n");
	CHECK(policy_load_paths(&pol, p, NULL, &err) < 0);
	CHECK_CONTAINS(err.msg, "directory '/tmp' is writable by group or others (mode 1777)");
	CHECK_CONTAINS(err.msg, "the policy is not used, and nothing runs until it is fixed");
	CHECK(policy_load_paths(&pol, NULL, p, &err) == 0 && pol.n == 1); /* an extra one: anyone's */
	CHECK(pol.file[0].caps.memory == 1ULL << 30);
	policy_free(&pol);
	free(p);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
}

/* The proxy's default sets are defaults: a policy that leaves one out drops
 * it (they used to be added after the config was checked, past any ceiling). */
static void test_proxy_default_sets(void)
{
	char dir[] = "/tmp/sbxunit.XXXXXX";
	char *argv[] = { "proxy", "--listen", "127.0.0.1:0", "-p", "packages", NULL };
	struct sbx_config cfg;
	struct sbx_err err;
	int rest;

	CHECK(mkdtemp(dir) != NULL);
	char *pol = xasprintf("%s/pol.ini", dir);
	write_file(pol, "[network]\nallow = @apt\n");
	char *prof = xasprintf("%s/px.ini", dir);
	write_file(prof, "[network]\negress = packages\n");
	argv[4] = prof;
	unsetenv(SBX_POLICY_ENV);
	CHECK(cli_sandbox_config(5, argv, SBX_CMD_PROXY, "", &cfg, &rest, &err) == 0);
	CHECK(cfg.allow.n == SBX_SET__COUNT);
	config_free(&cfg);
	setenv(SBX_POLICY_ENV, pol, 1);
	CHECK(cli_sandbox_config(5, argv, SBX_CMD_PROXY, "", &cfg, &rest, &err) == 0);
	CHECK(cfg.allow.n == 1 && strcmp(cfg.allow.v[0], "@apt") == 0);
	config_free(&cfg);
	unsetenv(SBX_POLICY_ENV);
	free(pol);
	free(prof);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
}

static void test_upstream_entry(void)
{
	char e[320];

	CHECK(config_upstream_entry("https://npm.example.org/", e, sizeof(e)) == 0);
	CHECK_STR(e, "npm.example.org");
	CHECK(config_upstream_entry("https://u:pw@mirror.lab:8443/reg/?x#y", e, sizeof(e)) == 0);
	CHECK_STR(e, "mirror.lab:8443");
	CHECK(config_upstream_entry("https://[2001:db8::1]/", e, sizeof(e)) == 0);
	CHECK_STR(e, "[2001:db8::1]");
	CHECK(config_upstream_entry("http://host.sbxrun.internal:4873/", e, sizeof(e)) == 0);
	CHECK_STR(e, "host.sbxrun.internal:4873");
	CHECK(config_upstream_entry("http://npm.example.org/", e, sizeof(e)) == -1);
	CHECK(config_upstream_entry("https://mirror.lab:/", e, sizeof(e)) == -1);
	CHECK(config_upstream_entry("http://host.sbxrun.internal:/", e, sizeof(e)) == -1);
	CHECK(config_upstream_entry("https://host.sbxrun.internal/", e, sizeof(e)) == -1);
	CHECK(config_upstream_entry("https:///x", e, sizeof(e)) == -1);
	CHECK(config_upstream_entry(NULL, e, sizeof(e)) == -1);
}

int main(void)
{
	test_numbers();
	test_bad_profiles();
	test_good_profile();
	test_download_limits();
	test_packages();
	test_lookup_and_precedence();
	test_zero_refused();
	test_profile_files();
	test_policy_values();
	test_policy_lists();
	test_policy_files();
	test_policy_packages();
	test_proxy_default_sets();
	test_upstream_entry();
	return unit_done("test_config");
}
