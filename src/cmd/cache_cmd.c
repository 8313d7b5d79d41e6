/* cache_cmd.c - `sbxrun cache ls|du|prune|fill`: the package gateway's
 * cache seen from the command line (the user's, or with --system the one
 * root fills and users read). fill runs a `packages` sandbox whose package
 * manager downloads what a lockfile or list names through the gateway, so
 * every artifact is verified as in a real install. The cache logic is
 * gateway/pkgcache.c. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/policy.h"
#include "base/profile.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "gateway/gateway.h"
#include "gateway/pkgcache.h"

#define FILL_DIR "sbxrun-fill"

/* The profile's [packages] settings (cache, cache_max, workspace). */
static int load_config(const char *profile, struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_policy pol;

	if (policy_load(&pol, err) < 0)
		return -1;
	config_init(cfg);
	int r = profile_load(cfg, profile ? profile : "default", err) < 0 ||
		policy_apply(&pol, cfg, err) < 0 || config_check(cfg, err) < 0 ? -1 : 0;
	policy_free(&pol);
	return r;
}

static int cache_root(const struct sbx_config *cfg, bool sys, char **out, struct sbx_err *err)
{
	if (!sys)
		return pkgcache_user_root(out, err);
	if (!cfg->pkg_cache || strcmp(cfg->pkg_cache, "none") == 0)
		return err_set(err, 0, "cache: --system: the profile's [packages] cache is none");
	*out = xstrdup(cfg->pkg_cache);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct pkgcache_entry *x = a, *y = b;
	int r = strcmp(x->eco, y->eco);
	if (!r)
		r = strcmp(x->name, y->name);
	if (!r)
		r = strcmp(x->version, y->version);
	return r ? r : strcmp(x->hex, y->hex);
}

static void when(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "?");
}

static bool is_index(const struct pkgcache_entry *e)
{
	return strcmp(e->algo, "index") == 0;
}

/* Artifacts and index documents alike; an index document's DIGEST column
 * names its upstream (the start of its digest, and its base URL). */
static int cache_ls(const char *root, struct sbx_err *err)
{
	_cleanup_free_ struct pkgcache_entry *v = NULL;
	size_t n;

	if (pkgcache_list(root, &v, &n, err) < 0)
		return -1;
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	printf("%-5s %-32s %-16s %8s  %-16s  %s\n", "ECO", "NAME", "VERSION", "SIZE", "LAST USE", "DIGEST");
	for (size_t i = 0; i < n; i++) {
		char size[32], used[32], name[256], version[160], from[300];
		format_size_human(v[i].size, size, sizeof(size));
		when(v[i].used, used, sizeof(used));
		log_sanitize(name, sizeof(name), v[i].name);
		log_sanitize(version, sizeof(version), v[i].version);
		from[0] = '\0';
		if (is_index(&v[i])) {
			from[0] = ' ';
			log_sanitize(from + 1, sizeof(from) - 1, v[i].file);
		}
		printf("%-5s %-32s %-16s %8s  %-16s  %s:%.16s%s\n", v[i].eco, name, version, size, used,
		       v[i].algo, v[i].hex, from);
	}
	return 0;
}

/* Per ecosystem, its artifacts and its index documents; then all. */
static int cache_du(const char *root, struct sbx_err *err)
{
	_cleanup_free_ struct pkgcache_entry *v = NULL;
	uint64_t bytes[2] = { 0 }, files[2] = { 0 }, total = 0;
	char size[32];
	size_t n;

	if (pkgcache_list(root, &v, &n, err) < 0)
		return -1;
	if (n)
		qsort(v, n, sizeof(*v), by_name);
	for (size_t i = 0; i < n; i++) {
		files[is_index(&v[i])]++;
		bytes[is_index(&v[i])] += v[i].size;
		total += v[i].size;
		if (i + 1 < n && strcmp(v[i].eco, v[i + 1].eco) == 0)
			continue;
		for (int k = 0; k < 2; k++) {
			if (!files[k])
				continue;
			format_size_human(bytes[k], size, sizeof(size));
			printf("%-5s %6" PRIu64 " %-9s %8s\n", v[i].eco, files[k], k ? "indexes" : "artifacts", size);
			files[k] = bytes[k] = 0;
		}
	}
	format_size_human(total, size, sizeof(size));
	printf("%-5s %6zu %-9s %8s  %s\n", "total", n, "files", size, root);
	return 0;
}

static int cache_prune(const struct cli_args *a, const struct sbx_config *cfg, const char *root, bool sys,
		       struct sbx_err *err)
{
	struct pkgcache_prune p = { .all = a->v[SBX_K_CACHE_ALL] != NULL };
	struct pkgcache_freed f;
	uint64_t ms = 0;
	char size[32], left[32];

	if (a->v[SBX_K_CACHE_MAX] && parse_size(a->v[SBX_K_CACHE_MAX], &p.max, err) < 0)
		return err_wrap(err, "cache prune: --max");
	if (a->v[SBX_K_CACHE_MAX] && p.max == 0 && !p.all)
		return err_set(err, 0, "cache prune: --max: '%s': zero is not a size (use --all)",
			       a->v[SBX_K_CACHE_MAX]);
	if (a->v[SBX_K_CACHE_OLDER] && parse_duration_ms(a->v[SBX_K_CACHE_OLDER], &ms, err) < 0)
		return err_wrap(err, "cache prune: --older");
	p.older_s = (int64_t)(ms / 1000);
	if (a->v[SBX_K_CACHE_OLDER] && p.older_s == 0)
		return err_set(err, 0, "cache prune: --older: '%s': less than a second",
			       a->v[SBX_K_CACHE_OLDER]);
	if (!p.all && !p.max && !p.older_s) {
		if (!cfg->pkg_cache_max)
			return err_set(err, 0, "cache prune: no --max, --older or --all, and the profile's "
					       "[packages] cache_max is unlimited");
		p.max = cfg->pkg_cache_max;
	}
	if (sys && pkgcache_system_writable(root, false, err) < 0)
		return err_wrap(err, "cache prune --system: refused");
	if (pkgcache_prune(root, &p, &f, err) < 0)
		return -1;
	format_size_human(f.bytes, size, sizeof(size));
	format_size_human(f.left_bytes, left, sizeof(left));
	printf("evicted %" PRIu64 " files (%s); %" PRIu64 " left (%s)\n", f.files, size, f.left_files, left);
	return 0;
}

/* --- fill --- */

#define FILL_MAX (16 << 20)

static int read_small(const char *path, char **out, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return err_sys(err, "cache fill: '%s'", path);
	if (!S_ISREG(st.st_mode) || st.st_size > FILL_MAX)
		return err_set(err, 0, "cache fill: '%s' is not a regular file of at most 16M", path);
	char *buf = xcalloc(1, (size_t)st.st_size + 1);
	ssize_t n = read(fd, buf, (size_t)st.st_size);
	if (n < 0) {
		free(buf);
		return err_sys(err, "cache fill: '%s'", path);
	}
	if (memchr(buf, '\0', (size_t)n)) {
		free(buf);
		return err_set(err, 0, "cache fill: '%s' is not a text file", path);
	}
	*out = buf;
	return 0;
}

enum fill_kind { FILL_NPM, FILL_PIP, FILL_APT };

static bool apt_name(const char *s, size_t n)
{
	if (n < 2 || !isalnum((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && !strchr("+-.", s[i]))
			return false;
	return true;
}

/* An apt list: package names, one or more a line, '#' comments. The names
 * come back space-separated in *names. */
static int apt_list(const char *path, const char *buf, char **names, struct sbx_err *err)
{
	size_t cap = strlen(buf) + 1, len = 0;
	char *out = xcalloc(1, cap + 1);
	int line = 1;

	for (const char *p = buf; *p;) {
		if (*p == '#') {
			p += strcspn(p, "\n");
		} else if (*p == '\n') {
			line++;
			p++;
		} else if (isspace((unsigned char)*p)) {
			p++;
		} else {
			size_t n = strcspn(p, " \t\r\n#");
			if (!apt_name(p, n)) {
				free(out);
				return err_set(err, 0, "cache fill: %s:%d: '%.*s' is not a Debian package name", path,
					       line, (int)(n > 64 ? 64 : n), p);
			}
			len += (size_t)snprintf(out + len, cap + 1 - len, "%s%.*s", len ? " " : "", (int)n, p);
			p += n;
		}
	}
	if (!len) {
		free(out);
		return err_set(err, 0, "cache fill: %s: names no package", path);
	}
	*names = out;
	return 0;
}

static int fill_kind(const char *path, const char *buf, enum fill_kind *k, char **names,
		     struct sbx_err *err)
{
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	size_t n = strlen(base);

	*names = NULL;
	if (n >= 5 && strcmp(base + n - 5, ".json") == 0) {
		*k = FILL_NPM;
		if (!strstr(buf, "\"lockfileVersion\"") || !strstr(buf, "\"packages\""))
			return err_set(err, 0, "cache fill: '%s' is not a package-lock.json of npm 7 or later "
					       "(lockfileVersion 2 or 3)", path);
		return 0;
	}
	if (strstr(base, "requirements")) {
		*k = FILL_PIP;
		return 0;
	}
	*k = FILL_APT;
	return apt_list(path, buf, names, err);
}

/* The sandbox's script: the package manager's own download-only command
 * (npm ci needs a package.json: the lockfile's root entry makes one). */
static char *fill_script(enum fill_kind k, const char *names)
{
	switch (k) {
	case FILL_NPM:
		return xstrdup("set -e; cd " FILL_DIR "; node -e '"
			       "const fs = require(\"fs\"), l = JSON.parse(fs.readFileSync(\"package-lock.json\"));"
			       "const r = (l.packages || {})[\"\"] || {}, p = { name: r.name || \"fill\", version: r.version || \"0.0.0\" };"
			       "for (const k of [\"dependencies\", \"devDependencies\", \"optionalDependencies\", \"peerDependencies\"])"
			       " if (r[k]) p[k] = r[k];"
			       "fs.writeFileSync(\"package.json\", JSON.stringify(p));'; "
			       "npm ci --ignore-scripts --no-audit --no-fund --loglevel=error");
	case FILL_PIP:
		return xstrdup("set -e; cd " FILL_DIR "; pip download --quiet --disable-pip-version-check "
			       "-r requirements.txt -d dl");
	default:
		return xasprintf("set -e; apt-get update -qq; apt-get install --download-only -y -qq "
				 "--no-install-recommends %s", names);
	}
}

static size_t count_artifacts(const struct pkgcache_entry *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !is_index(&v[i]);
	return k;
}

static int fill(const struct cli_args *a, int argc, char **argv, const struct sbx_config *cfg,
		const char *root, bool sys, struct sbx_err *err)
{
	static const char *const dest[] = { "package-lock.json", "requirements.txt", "packages.list" };
	_cleanup_free_ char *buf = NULL, *names = NULL, *script = NULL, *copy = NULL;
	_cleanup_free_ struct pkgcache_entry *before = NULL, *after = NULL;
	size_t nb, na;
	enum fill_kind k;

	if (argc - a->rest > 1)
		return err_set(err, 0, "cache fill: unexpected argument '%s' (options go before FILE)",
			       argv[a->rest + 1]);
	if (argc - a->rest != 1)
		return err_set(err, 0, "cache fill: which FILE? (a package-lock.json, a requirements.txt or an "
				       "apt package list; see 'sbxrun cache fill --help')");
	const char *path = argv[a->rest];
	if (!cfg->workspace)
		return err_set(err, 0, "cache fill: the profile has no workspace to copy '%s' into", path);
	if (read_small(path, &buf, err) < 0 || fill_kind(path, buf, &k, &names, err) < 0)
		return -1;
	/* root's, all the way down, before root writes a byte there (the
	 * gateway opens it again the same way) */
	if (sys && pkgcache_system_writable(root, true, err) < 0)
		return err_wrap(err, "cache fill --system: refused");
	if (pkgcache_list(root, &before, &nb, err) < 0)
		return -1;
	nb = count_artifacts(before, nb);
	if (sys)
		gateway_fill_system(root);
	script = fill_script(k, names);
	copy = xasprintf("%s:%s/%s", path, FILL_DIR, dest[k]);
	const char *av[20];
	int n = 0;
	av[n++] = "run";
	if (a->v[SBX_K_PROFILE])
		av[n++] = "-p", av[n++] = a->v[SBX_K_PROFILE];
	if (a->v[SBX_K_IMAGE])
		av[n++] = "--image", av[n++] = a->v[SBX_K_IMAGE];
	av[n++] = "--net", av[n++] = "packages";
	if (k == FILL_APT)
		av[n++] = "-u", av[n++] = "root";  /* apt-get update and install want root */
	av[n++] = "-w", av[n++] = cfg->workspace;
	av[n++] = "--copy", av[n++] = copy;
	av[n++] = "--", av[n++] = "sh", av[n++] = "-c", av[n++] = script;
	av[n] = NULL;
	int r = cmd_run(n, (char **)av, err);
	if (r != 0)
		return r < 0 ? -1 : r;
	if (pkgcache_list(root, &after, &na, err) < 0)
		return -1;
	na = count_artifacts(after, na);
	printf("cache fill: %zu artifacts in %s (%zu new)\n", na, root, na > nb ? na - nb : 0);
	return 0;
}

int cmd_cache(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	struct sbx_config cfg;
	_cleanup_free_ char *root = NULL;
	int r = cli_verb(argc, argv, "cache", NULL, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	r = cli_parse(argc - 1, argv + 1, verb->mask, NULL, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	bool sys = a.v[SBX_K_CACHE_SYSTEM] != NULL;
	if (verb->mask != SBX_CMD_CACHE_FILL && a.rest < argc - 1)
		return err_set(err, 0, "cache %s: unexpected argument '%s'", verb->name, argv[1 + a.rest]);
	if (sys && geteuid() != 0 && (verb->mask & (SBX_CMD_CACHE_PRUNE | SBX_CMD_CACHE_FILL)))
		return err_set(err, EPERM, "cache %s --system: only root writes the system cache", verb->name);
	if (load_config(a.v[SBX_K_PROFILE], &cfg, err) < 0)
		return -1;
	if (cache_root(&cfg, sys, &root, err) < 0) {
		config_free(&cfg);
		return -1;
	}
	switch (verb->mask) {
	case SBX_CMD_CACHE_LS:
		r = cache_ls(root, err);
		break;
	case SBX_CMD_CACHE_DU:
		r = cache_du(root, err);
		break;
	case SBX_CMD_CACHE_PRUNE:
		r = cache_prune(&a, &cfg, root, sys, err);
		break;
	default:
		r = fill(&a, argc - 1, argv + 1, &cfg, root, sys, err);
	}
	config_free(&cfg);
	return r;
}
