/* test_profiles.c - every shipped profile (the .ini files of profiles/, read
 * from the current directory: the top of the checkout, where make unit and
 * tests/run.sh run the unit tests) loads through the real loader with its inherit chain
 * taken from the same folder, passes config_check, and each key it writes is
 * what the loaded configuration says came from that file and line. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/config.h"
#include "base/options.h"
#include "base/profile.h"
#include "base/util.h"
#include "unit.h"

/* What one profile file writes: checked against the loaded cfg. */
struct expect {
	const struct sbx_config *cfg;
	const char *path; /* the file's real path: the loader's label */
	int keys;
};

static int origin_is(const char *origin, const char *path, int line)
{
	char want[PATH_MAX + 32];
	snprintf(want, sizeof(want), "%s:%d", path, line);
	return origin && strcmp(origin, want) == 0;
}

static int check_entry(void *arg, const char *section, const char *key, const char *value,
		       int line, struct sbx_err *err)
{
	struct expect *x = arg;
	(void)value;
	(void)err;
	if (!section[0] && strcmp(key, "inherit") == 0)
		return 0;
	const struct sbx_option *o = options_by_profile_key(section, key);
	CHECK(o != NULL);
	if (!o)
		return 0;
	x->keys++;
	const struct sbx_strlist *l = config_list(x->cfg, o);
	int found = 0;
	if (l) {
		for (size_t i = 0; i < l->n; i++)
			found |= origin_is(l->origin[i], x->path, line);
	} else {
		found = origin_is(x->cfg->origin[o->key], x->path, line);
	}
	if (!found)
		fprintf(stderr, "%s:%d: [%s] %s: the loaded value does not come from this line\n",
			x->path, line, section, key);
	CHECK(found);
	return 0;
}

static void check_profile(const char *dir, const char *file)
{
	struct sbx_config cfg;
	struct sbx_err err = { 0 };
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, file);
	_cleanup_free_ char *real = realpath(path, NULL);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;

	config_init(&cfg);
	int r = profile_load(&cfg, path, &err);
	if (r < 0)
		fprintf(stderr, "%s: %s\n", path, err.msg);
	CHECK(r == 0);
	if (r < 0) {
		config_free(&cfg);
		return;
	}
	r = config_check(&cfg, &err);
	if (r < 0)
		fprintf(stderr, "%s: config_check: %s\n", path, err.msg);
	CHECK(r == 0);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && profile_read_fd(fd, path, &text, &len, &err) == 0);
	if (fd >= 0)
		close(fd);
	struct expect x = { .cfg = &cfg, .path = real };
	CHECK(text && profile_parse_ini(text, len, real, check_entry, &x, &err) == 0);
	CHECK(x.keys > 0); /* a shipped profile that sets nothing is a mistake */
	config_free(&cfg);
}

int main(void)
{
	char tmp[] = "/tmp/sbxunit.XXXXXX";
	struct sbx_err err;
	_cleanup_free_ char *top = get_current_dir_name();
	_cleanup_free_ char *stock = xasprintf("%s/profiles", top);
	int n = 0;

	/* "inherit = default" finds the checkout's default first (the user's
	 * profile folder is searched before the system's and the installed ones) */
	CHECK(mkdtemp(tmp) != NULL);
	_cleanup_free_ char *user = xasprintf("%s/sbxrun/profiles", tmp);
	CHECK(mkdir_p(user, 0700, &err) == 0);
	setenv("XDG_CONFIG_HOME", tmp, 1);
	DIR *d = opendir(stock);
	if (!d)
		fprintf(stderr, "test_profiles: no %s (run it from the top of the checkout)\n", stock);
	CHECK(d != NULL);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".ini") != 0)
			continue;
		_cleanup_free_ char *from = xasprintf("%s/%s", stock, e->d_name);
		_cleanup_free_ char *to = xasprintf("%s/%s", user, e->d_name);
		CHECK(symlink(from, to) == 0);
	}
	if (d)
		rewinddir(d);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".ini") != 0)
			continue;
		check_profile(stock, e->d_name);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n >= 4); /* default, agent, ci, packages at least */
	CHECK(rm_rf_at(AT_FDCWD, tmp, &err) == 0);
	printf("test_profiles: %d profiles checked\n", n);
	return unit_done("test_profiles");
}
