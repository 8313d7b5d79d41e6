/* test_copyspec.c - run --copy PATH[:DEST] as text (relpath_copy_spec) and
 * through the option table (config_set): what is accepted, what is refused
 * and with which words. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/config.h"
#include "base/relpath.h"
#include "base/util.h"
#include "unit.h"

static void check_ok(const char *spec, const char *path, const char *dest)
{
	struct sbx_err err = { 0 };
	char *p = NULL, *d = NULL;

	CHECK(relpath_copy_spec(spec, &p, &d, &err) == 0);
	CHECK_STR(p, path);
	if (dest)
		CHECK_STR(d, dest);
	else
		CHECK(d == NULL);
	free(p);
	free(d);
}

static void check_bad(const char *spec, const char *words)
{
	struct sbx_err err = { 0 };
	char *p = NULL, *d = NULL;

	CHECK(relpath_copy_spec(spec, &p, &d, &err) < 0);
	CHECK(p == NULL && d == NULL);
	CHECK_CONTAINS(err.msg, words);
}

static void test_split(void)
{
	check_ok("x.py", "x.py", NULL);
	check_ok("./x.py", "./x.py", NULL);
	check_ok("/abs/dir", "/abs/dir", NULL);
	check_ok("src/", "src/", NULL);
	check_ok("x.py:y.py", "x.py", "y.py");
	check_ok("x.py:a/b/c.py", "x.py", "a/b/c.py");
	check_ok("dir:./in", "dir", "./in");
	check_ok("a:b:c", "a", "b:c"); /* the first ':' splits, as in --bind */
}

static void test_refused(void)
{
	check_bad("", "PATH is empty");
	check_bad(":y", "PATH is empty");
	check_bad("x:", "DEST is empty");
	check_bad("x:/etc/passwd", "must be a relative path");
	check_bad("x:..", "must not contain '..'");
	check_bad("x:../y", "must not contain '..'");
	check_bad("x:a/../../y", "must not contain '..'");
	check_bad("x:a/", "must name a file");
	check_bad("x:.", "must name a file");
	check_bad("x:/etc/passwd", "'x:/etc/passwd'"); /* the value is named */
}

/* Through the table: --copy accumulates, a bad DEST fails config_set. */
static void test_option(void)
{
	struct sbx_config cfg;
	struct sbx_err err = { 0 };
	const struct sbx_option *o = options_by_key(SBX_K_COPY);

	config_init(&cfg);
	CHECK(o && o->lname && strcmp(o->lname, "copy") == 0 && (o->flags & SBX_OPT_REPEAT));
	CHECK(config_set(&cfg, o, "a.py", "command line", 1, &err) == 0);
	CHECK(config_set(&cfg, o, "src:lib/src", "command line", 1, &err) == 0);
	CHECK(cfg.copies.n == 2);
	CHECK_STR(cfg.copies.v[1], "src:lib/src");
	CHECK(config_set(&cfg, o, "a.py:../a.py", "command line", 1, &err) < 0);
	CHECK(cfg.copies.n == 2);
	CHECK(config_set(&cfg, options_by_key(SBX_K_OUT), "", "command line", 1, &err) < 0);
	CHECK(config_set(&cfg, options_by_key(SBX_K_OUT), "results", "command line", 1, &err) == 0);
	CHECK_STR(cfg.out_dir, "results");
	config_free(&cfg);
}

int main(void)
{
	test_split();
	test_refused();
	test_option();
	return unit_done("test_copyspec");
}
