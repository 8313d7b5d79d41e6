/* test_malfeed.c - a malicious-package feed (OSV records) read and asked:
 * explicit versions, every version, semver ranges (introduced, fixed,
 * last_affected), ranges sbxrun cannot order (every version: deny when
 * unsure), withdrawn records, ecosystems mapped and names compared as the
 * ecosystem does; bad feeds refused whole; files and directories read
 * without following links; and the rules that ask it, with not_after. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/pkgrule.h"
#include "base/util.h"
#include "pkg/malfeed.h"
#include "pkg/rules.h"
#include "unit.h"

static const char *feed_json =
	"[{\"id\":\"MAL-2025-1\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"evil\"},"
	"\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"0\"}]}]}]},"
	"{\"id\":\"MAL-2025-2\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"hijacked\"},"
	"\"versions\":[\"1.2.4\",\"1.2.5\"]}]},"
	"{\"id\":\"MAL-2025-3\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"ranged\"},"
	"\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"2.0.0\"},{\"fixed\":\"2.1.0\"},"
	"{\"introduced\":\"3.0.0\"},{\"last_affected\":\"3.0.2\"}]}]}]},"
	"{\"id\":\"MAL-2025-4\",\"affected\":[{\"package\":{\"ecosystem\":\"PyPI\",\"name\":\"Bad_Pkg\"},"
	"\"ranges\":[{\"type\":\"ECOSYSTEM\",\"events\":[{\"introduced\":\"1.0\"},{\"fixed\":\"1.1\"}]}]}]},"
	"{\"id\":\"MAL-2025-5\",\"withdrawn\":\"2025-02-01T00:00:00Z\",\"affected\":[{\"package\":"
	"{\"ecosystem\":\"npm\",\"name\":\"cleared\"}}]},"
	"{\"id\":\"MAL-2025-6\",\"affected\":[{\"package\":{\"ecosystem\":\"Debian:12\",\"name\":\"badpkg\"},"
	"\"versions\":[\"1.0-1\"]},{\"package\":{\"ecosystem\":\"Go\",\"name\":\"example.com/m\"},"
	"\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"introduced\":\"0\"},{\"fixed\":\"1.0.1\"}]}]},"
	"{\"package\":{\"ecosystem\":\"Hackage\",\"name\":\"ignored\"}}]},"
	"{\"id\":\"MAL-2026-7\",\"affected\":[{\"package\":{\"ecosystem\":\"crates.io\",\"name\":\"Evil_Crate\"},"
	"\"versions\":[\"0.1.0\"]}]},"
	"{\"id\":\"MAL-2026-8\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"limited\"},"
	"\"ranges\":[{\"type\":\"SEMVER\",\"events\":[{\"limit\":\"2.0.0\"}]}]}]}]";

static void test_match(void)
{
	struct malfeed *f = malfeed_new();
	struct sbx_err err;
	const char *origin = NULL;

	CHECK(malfeed_add_json(f, feed_json, strlen(feed_json), "feed.json", &err) == 0);
	malfeed_finish(f);
	CHECK(malfeed_count(f) == 8);  /* the withdrawn and the unknown ecosystem name nothing */
	/* a range with no event sbxrun knows bounds nothing: every version */
	CHECK_STR(malfeed_match(f, "npm", "limited", "1.0.0", NULL), "MAL-2026-8");
	CHECK_STR(malfeed_match(f, "npm", "limited", "3.0.0", NULL), "MAL-2026-8");
	CHECK_STR(malfeed_match(f, "npm", "evil", "9.9.9", &origin), "MAL-2025-1");
	CHECK_STR(origin, "feed.json");
	CHECK_STR(malfeed_match(f, "npm", "evil", NULL, NULL), "MAL-2025-1");
	CHECK(malfeed_match(f, "npm", "evilx", "1.0.0", NULL) == NULL);
	CHECK(malfeed_match(f, "pypi", "evil", "1.0.0", NULL) == NULL);
	/* explicit versions: those alone, and never the whole package */
	CHECK_STR(malfeed_match(f, "npm", "hijacked", "1.2.5", NULL), "MAL-2025-2");
	CHECK(malfeed_match(f, "npm", "hijacked", "1.2.3", NULL) == NULL);
	CHECK(malfeed_match(f, "npm", "hijacked", NULL, NULL) == NULL);
	/* semver ranges: [2.0.0, 2.1.0) and [3.0.0, 3.0.2] */
	CHECK(malfeed_match(f, "npm", "ranged", "1.9.9", NULL) == NULL);
	CHECK_STR(malfeed_match(f, "npm", "ranged", "2.0.0", NULL), "MAL-2025-3");
	CHECK_STR(malfeed_match(f, "npm", "ranged", "2.0.9-beta.1", NULL), "MAL-2025-3");
	CHECK(malfeed_match(f, "npm", "ranged", "2.1.0", NULL) == NULL);
	CHECK_STR(malfeed_match(f, "npm", "ranged", "3.0.2", NULL), "MAL-2025-3");
	CHECK(malfeed_match(f, "npm", "ranged", "3.0.3", NULL) == NULL);
	/* a version semver cannot read, inside a semver range: deny */
	CHECK_STR(malfeed_match(f, "npm", "ranged", "latest-ish", NULL), "MAL-2025-3");
	/* PyPI's ECOSYSTEM range (PEP 440 order, not semver): every version,
	 * and the name as PyPI compares it */
	CHECK_STR(malfeed_match(f, "pypi", "bad-pkg", "0.1", NULL), "MAL-2025-4");
	CHECK_STR(malfeed_match(f, "pypi", "BAD.PKG", "5.0", NULL), "MAL-2025-4");
	CHECK(malfeed_match(f, "npm", "cleared", "1.0.0", NULL) == NULL);
	CHECK_STR(malfeed_match(f, "deb", "badpkg", "1.0-1", NULL), "MAL-2025-6");
	CHECK(malfeed_match(f, "deb", "badpkg", "1.0-2", NULL) == NULL);
	/* Go's v-prefixed versions, under [0, 1.0.1) */
	CHECK_STR(malfeed_match(f, "go", "example.com/m", "v1.0.0", NULL), "MAL-2025-6");
	CHECK(malfeed_match(f, "go", "example.com/m", "v1.0.1", NULL) == NULL);
	/* crates.io's names as crates.io compares them */
	CHECK_STR(malfeed_match(f, "cargo", "evil-crate", "0.1.0", NULL), "MAL-2026-7");
	CHECK_STR(malfeed_match(f, "cargo", "EVIL_CRATE", "0.1.0", NULL), "MAL-2026-7");
	CHECK(malfeed_match(f, "cargo", "evil-crate", "0.1.1", NULL) == NULL);
	malfeed_free(f);
	CHECK(malfeed_match(NULL, "npm", "evil", "1.0.0", NULL) == NULL);
}

static void test_bad_feeds(void)
{
	static const char *bad[] = {
		"", "{", "[1]", "{\"id\":\"MAL-1\"}", "{\"affected\":[]}", "{\"id\":\"MAL-1\",\"affected\":[{}]}",
		"{\"id\":\"MAL-1\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"\"}}]}",
		"{\"id\":\"MAL-1\",\"affected\":[]} {}", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	};
	struct sbx_err err;

	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct malfeed *f = malfeed_new();
		CHECK(malfeed_add_json(f, bad[i], strlen(bad[i]), "bad.json", &err) < 0);
		CHECK_CONTAINS(err.msg, "bad.json");
		malfeed_free(f);
	}
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	CHECK(fd >= 0 && write_all(fd, text, strlen(text)) == 0);
	close(fd);
}

/* A directory as the OpenSSF repository lays it out: osv/ECO/NAME/MAL-*.json,
 * a text file beside, a link never followed, a bad file failing the whole load. */
static void test_load(void)
{
	char dir[] = "/tmp/test_malfeed.XXXXXX", p[300];
	struct sbx_strlist paths = { 0 };
	struct malfeed *f = NULL;
	struct sbx_err err;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(p, sizeof(p), "%s/osv/npm/evil", dir);
	CHECK(mkdir_p(p, 0755, &err) == 0);
	snprintf(p, sizeof(p), "%s/osv/npm/evil/MAL-2025-1.json", dir);
	put(p, "{\"id\":\"MAL-2025-1\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"evil\"}}]}");
	snprintf(p, sizeof(p), "%s/osv/notes.txt", dir);
	put(p, "not json");
	snprintf(p, sizeof(p), "%s/outside.json", dir);
	put(p, "{\"id\":\"MAL-9\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\",\"name\":\"linked\"}}]}");
	snprintf(p, sizeof(p), "%s/osv/npm/link.json", dir);
	CHECK(symlink("../../outside.json", p) == 0);
	snprintf(p, sizeof(p), "%s/osv", dir);
	config_strlist_add(&paths, xstrdup(p), "test");
	config_strlist_add(&paths, xstrdup("https://feeds.example.org/osv.json"), "test");  /* the gateway's to fetch */
	CHECK(malfeed_is_url(paths.v[1]) && !malfeed_is_url(paths.v[0]));
	CHECK(malfeed_load(&paths, &f, &err) == 0);
	CHECK(malfeed_count(f) == 1);
	CHECK_STR(malfeed_match(f, "npm", "evil", "1.0.0", NULL), "MAL-2025-1");
	CHECK(malfeed_match(f, "npm", "linked", "1.0.0", NULL) == NULL);
	/* a fetched feed merged in: both asked as one, its strings kept */
	struct malfeed *more = malfeed_new();
	CHECK(malfeed_add_json(more, feed_json, strlen(feed_json), "https://feeds.example.org/osv.json", &err) == 0);
	malfeed_finish(more);
	CHECK(malfeed_merge(f, more, &err) == 0);
	CHECK(malfeed_count(f) == 9);
	const char *origin = NULL;
	CHECK_STR(malfeed_match(f, "npm", "hijacked", "1.2.5", &origin), "MAL-2025-2");
	CHECK_STR(origin, "https://feeds.example.org/osv.json");
	CHECK_STR(malfeed_match(f, "npm", "evil", "1.0.0", &origin), "MAL-2025-1");
	CHECK_STR(malfeed_match(f, "cargo", "evil-crate", "0.1.0", NULL), "MAL-2026-7");
	/* past the bound: refused, both as they were */
	more = malfeed_new();
	malfeed_add_bytes(more, MALFEED_MAX_BYTES);
	CHECK(malfeed_merge(f, more, &err) < 0);
	CHECK_CONTAINS(err.msg, "in the feeds together");
	CHECK(malfeed_count(f) == 9);
	malfeed_free(more);
	malfeed_free(f);
	f = NULL;

	snprintf(p, sizeof(p), "%s/osv/npm/evil/MAL-2025-2.json", dir);
	put(p, "{\"id\":\"MAL-2025-2\"");
	CHECK(malfeed_load(&paths, &f, &err) < 0 && f == NULL);
	CHECK_CONTAINS(err.msg, "MAL-2025-2.json");
	config_strlist_free(&paths);

	config_strlist_add(&paths, xstrdup("relative/feed"), "test");
	CHECK(malfeed_load(&paths, &f, &err) < 0);
	CHECK_CONTAINS(err.msg, "not an absolute path");
	config_strlist_free(&paths);
	snprintf(p, sizeof(p), "%s/missing", dir);
	config_strlist_add(&paths, xstrdup(p), "test");
	CHECK(malfeed_load(&paths, &f, &err) < 0);
	CHECK_CONTAINS(err.msg, "missing");
	config_strlist_free(&paths);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
}

static void test_rules(void)
{
	struct malfeed *f = malfeed_new();
	struct sbx_err err;
	struct gw_rules r = { 0 };
	char why[300], rule[100];
	int64_t d;

	CHECK(malfeed_add_json(f, feed_json, strlen(feed_json), "/srv/feed.json", &err) == 0);
	malfeed_finish(f);
	r.feed = f;
	CHECK(rules_name(&r, "npm", "evil", why, sizeof(why)) < 0);
	CHECK_STR(why, "npm 'evil' is known malicious (MAL-2025-1, [packages] malicious /srv/feed.json)");
	rules_which(why, rule, sizeof(rule));
	CHECK_STR(rule, "malicious = MAL-2025-1");
	CHECK(rules_name(&r, "npm", "hijacked", why, sizeof(why)) == 0);
	CHECK(rules_version(&r, "npm", "hijacked", "1.2.4", why, sizeof(why)) < 0);
	CHECK_STR(why, "npm 'hijacked@1.2.4' is known malicious (MAL-2025-2, [packages] malicious /srv/feed.json)");
	CHECK(rules_version(&r, "npm", "hijacked", "1.2.3", why, sizeof(why)) == 0);
	CHECK(rules_per_version(&r) && !rules_dated(&r));

	/* not_after: what was published by then; no date, no version */
	CHECK(pkgrule_date("2025-01-02", &d, &err) == 0 && d == 1735776000);
	CHECK(pkgrule_date("2025-01-02T03:04:05Z", &d, &err) == 0 && d == 1735776000 + 3 * 3600 + 4 * 60 + 5);
	r.not_after_s = 1735776000;
	r.not_after = "2025-01-02";
	CHECK(rules_dated(&r));
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 1735776000, 1800000000, why, sizeof(why)) == 0);
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 1735776001, 1800000000, why, sizeof(why)) < 0);
	CHECK_STR(why, "published 2025-01-02T00:00:01Z, after [packages] not_after = 2025-01-02");
	rules_which(why, rule, sizeof(rule));
	CHECK_STR(rule, "not_after = 2025-01-02");
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 0, 1800000000, why, sizeof(why)) < 0);
	CHECK_CONTAINS(why, "publication date is unknown");
	r.min_age_s = 7 * 86400;
	rules_hiding(&r, "npm", why, sizeof(why));
	CHECK_STR(why, "under [packages] min_age (7 days), not_after = 2025-01-02, malicious");
	r.not_after_s = 0;
	r.feed = NULL;
	rules_hiding(&r, "npm", why, sizeof(why));
	CHECK_STR(why, "younger than [packages] min_age (7 days)");
	malfeed_free(f);

	/* not_after = [ECO:]DATE: an ecosystem's own entry wins, ECO:none
	 * leaves it out, a date's own colons name no ecosystem */
	char *na_v[] = { "2025-01-02", "deb:none", "npm:2025-01-02T03:04:05Z", "2025-01-01T00:00:00Z", "go:2024-06-01" };
	char *na_o[] = { "p.ini:1", "p.ini:2", "p.ini:3", "p.ini:4", "p.ini:5" };
	struct sbx_strlist na = { na_v, na_o, 5 };
	struct gw_rules nr = { 0 };
	const char *entry;
	int eco;
	rules_set_not_after(&nr, &na);
	CHECK(rules_not_after(&nr, "pypi", &entry) == 1735689600);
	CHECK_STR(entry, "2025-01-01T00:00:00Z");
	CHECK(rules_not_after(&nr, "npm", &entry) == 1735776000 + 3 * 3600 + 4 * 60 + 5);
	CHECK_STR(entry, "npm:2025-01-02T03:04:05Z");
	CHECK(rules_not_after(&nr, "deb", NULL) == 0);
	CHECK(rules_not_after(&nr, "go", NULL) == 1717200000);
	CHECK(rules_dated(&nr));
	CHECK(rules_age(&nr, "deb", "hello", "2.10", 0, 1800000000, why, sizeof(why)) == 0);
	CHECK(rules_age(&nr, "npm", "x", "1.0.0", 1735776000 + 3 * 3600 + 4 * 60 + 6, 1800000000, why, sizeof(why)) < 0);
	CHECK_STR(why, "published 2025-01-02T03:04:06Z, after [packages] not_after = npm:2025-01-02T03:04:05Z");
	rules_which(why, rule, sizeof(rule));
	CHECK_STR(rule, "not_after = npm:2025-01-02T03:04:05Z");
	rules_hiding(&nr, "go", why, sizeof(why));
	CHECK_STR(why, "under [packages] not_after = go:2024-06-01");
	char *only_v[] = { "cargo:2025-01-02" };
	struct sbx_strlist only = { only_v, na_o, 1 };
	rules_set_not_after(&nr, &only);
	CHECK(rules_dated(&nr) && rules_not_after(&nr, "npm", NULL) == 0 && rules_not_after(&nr, "cargo", NULL) == 1735776000);
	CHECK(pkgrule_not_after("maven:none", &eco, &d, &err) == 0 && eco == 5 && d == 0);
	CHECK(pkgrule_not_after("none", &eco, &d, &err) == 0 && eco == -1 && d == 0);
	CHECK(pkgrule_not_after("pip:2025-01-02", &eco, &d, &err) < 0);
	CHECK_STR(err.msg, "'pip:2025-01-02': unknown ecosystem 'pip' (ECO:DATE, ECO one of npm, pypi, deb, go, cargo, maven)");
	static const char *nbad[] = { "npm:", "npm:2025-02-30", "npm:npm:2025-01-02", "2025-01-02T03:04:05", ":2025-01-02",
				      "NPM:2025-01-02", "deb:None", "" };
	for (size_t i = 0; i < ARRAY_SIZE(nbad); i++) {
		CHECK(pkgrule_not_after(nbad[i], &eco, &d, &err) < 0);
		CHECK_CONTAINS(err.msg, "is not [ECO:]DATE");
	}

	static const char *bad[] = { "2025-1-02", "2025-02-30", "1969-12-31", "2025-01-02T24:00:00Z",
				     "2025-01-02 03:04:05", "2025-01-02T03:04:05", "+025-01-02", "2025-01-0x", "",
				     "2025-13-01", "2025-01-02T03:04:05+01:00" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		CHECK(pkgrule_date(bad[i], &d, &err) < 0);
		CHECK_CONTAINS(err.msg, "is not a date");
	}
}

/* [packages] mode = report: each rule's refusal is told and passes; the
 * sentence is the enforced one, the hook gets the package */
static char reported[8][300];
static size_t nreported;

static void on_report(void *arg, const char *eco, const char *name, const char *version, const char *why)
{
	if (nreported < ARRAY_SIZE(reported))
		snprintf(reported[nreported++], sizeof(reported[0]), "%s|%s|%s|%s|%s", (const char *)arg, eco,
			 name ? name : "-", version ? version : "-", why);
}

static void test_report(void)
{
	struct malfeed *f = malfeed_new();
	struct sbx_err err;
	char *deny_v[] = { "npm:bad*" }, *allow_v[] = { "npm:*" }, *orig[] = { "lab.ini:3" };
	struct sbx_strlist deny = { deny_v, orig, 1 }, allow = { allow_v, orig, 1 };
	struct gw_rules r = { .deny = &deny, .allow = &allow, .min_age_s = 7 * 86400, .not_after_s = 1735776000,
			      .not_after = "2025-01-02", .report = true, .on_report = on_report, .report_arg = "gw" };
	char why[300];

	CHECK(malfeed_add_json(f, feed_json, strlen(feed_json), "/srv/feed.json", &err) == 0);
	malfeed_finish(f);
	r.feed = f;
	CHECK(rules_name(&r, "npm", "badger", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "npm", "evil", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "pypi", "numpy", why, sizeof(why)) == 0);
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) == 0);
	CHECK(rules_version(&r, "npm", "hijacked", "1.2.4", why, sizeof(why)) == 0);
	CHECK(rules_age(&r, "npm", "young", "2.0.0", 1735776000 - 86400, 1735776000, why, sizeof(why)) == 0);
	CHECK(rules_age(&r, "npm", "late", "3.0.0", 1735776001, 1800000000, why, sizeof(why)) == 0);
	/* what passes under enforce is not reported */
	CHECK(rules_age(&r, "npm", "old", "1.0.0", 1735776000 - 30 * 86400, 1735776000, why, sizeof(why)) == 0);
	CHECK(rules_version(&r, "npm", "hijacked", "1.2.3", why, sizeof(why)) == 0);
	CHECK(nreported == 7);
	CHECK_STR(reported[0], "gw|npm|badger|-|npm 'badger' is denied by [packages] deny = npm:bad* (lab.ini:3)");
	CHECK_STR(reported[1], "gw|npm|evil|-|npm 'evil' is known malicious (MAL-2025-1, [packages] malicious "
		  "/srv/feed.json)");
	CHECK_CONTAINS(reported[2], "gw|pypi|numpy|-|pypi 'numpy' is not on the allow list");
	CHECK_CONTAINS(reported[3], "gw|deb|-|-|deb is closed");
	CHECK_CONTAINS(reported[4], "gw|npm|hijacked|1.2.4|npm 'hijacked@1.2.4' is known malicious (MAL-2025-2");
	CHECK_STR(reported[5], "gw|npm|young|2.0.0|published 24 hours ago, [packages] min_age is 7 days");
	CHECK_STR(reported[6], "gw|npm|late|3.0.0|published 2025-01-02T00:00:01Z, after [packages] not_after = "
		  "2025-01-02");
	/* enforce again: the same calls refuse, and nothing is reported */
	r.report = false;
	CHECK(rules_name(&r, "npm", "badger", why, sizeof(why)) < 0);
	CHECK(rules_age(&r, "npm", "young", "2.0.0", 1735776000 - 86400, 1735776000, why, sizeof(why)) < 0);
	CHECK(rules_version(&r, "npm", "hijacked", "1.2.4", why, sizeof(why)) < 0);
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) < 0);
	CHECK(nreported == 7);
	malfeed_free(f);
}

/* A feed fetched again replaces what its URL gave, and only that: the
 * file's records stay, the URL's dropped record is no longer named, and
 * the bytes it counted are given back (replacing the same 100 times
 * stays within the bounds). */
static void test_replace(void)
{
	static const char *a = "[{\"id\":\"MAL-1\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\","
			       "\"name\":\"gone\"}}]}]";
	static const char *b = "[{\"id\":\"MAL-2\",\"affected\":[{\"package\":{\"ecosystem\":\"npm\","
			       "\"name\":\"new\"}},{\"package\":{\"ecosystem\":\"npm\",\"name\":\"also\"}}]}]";
	struct malfeed *f = malfeed_new(), *add;
	struct sbx_err err;
	const char *origin = NULL;

	CHECK(malfeed_add_json(f, feed_json, strlen(feed_json), "feed.json", &err) == 0);
	malfeed_finish(f);
	add = malfeed_new();
	malfeed_add_bytes(add, strlen(a));
	CHECK(malfeed_add_json(add, a, strlen(a), "https://u/feed", &err) == 0);
	malfeed_finish(add);
	CHECK(malfeed_replace(f, "https://u/feed", 0, add, &err) == 0);
	CHECK(malfeed_count(f) == 9);
	CHECK_STR(malfeed_match(f, "npm", "gone", "1.0.0", &origin), "MAL-1");
	CHECK_STR(origin, "https://u/feed");
	for (int i = 0; i < 100; i++) {
		add = malfeed_new();
		malfeed_add_bytes(add, MALFEED_MAX_FILE);
		CHECK(malfeed_add_json(add, b, strlen(b), "https://u/feed", &err) == 0);
		malfeed_finish(add);
		CHECK(malfeed_replace(f, "https://u/feed", i ? MALFEED_MAX_FILE : strlen(a), add, &err) == 0);
	}
	CHECK(malfeed_count(f) == 10);
	CHECK(malfeed_match(f, "npm", "gone", "1.0.0", NULL) == NULL);
	CHECK_STR(malfeed_match(f, "npm", "also", "2.0.0", &origin), "MAL-2");
	CHECK_STR(origin, "https://u/feed");
	CHECK_STR(malfeed_match(f, "npm", "evil", "9.9.9", &origin), "MAL-2025-1");
	CHECK_STR(origin, "feed.json");
	/* past the bounds: refused, the feed as it was */
	add = malfeed_new();
	malfeed_add_bytes(add, MALFEED_MAX_BYTES + 1);
	CHECK(malfeed_add_json(add, a, strlen(a), "https://u/feed", &err) == 0);
	malfeed_finish(add);
	CHECK(malfeed_replace(f, "https://u/feed", MALFEED_MAX_FILE, add, &err) < 0);
	CHECK_STR(malfeed_match(f, "npm", "also", "2.0.0", NULL), "MAL-2");
	CHECK(malfeed_count(f) == 10);
	malfeed_free(add);
	malfeed_free(f);
}

int main(void)
{
	test_match();
	test_replace();
	test_bad_feeds();
	test_load();
	test_rules();
	test_report();
	return unit_done("test_malfeed");
}
