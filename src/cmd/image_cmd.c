/* image_cmd.c - `sbxrun image build|import|ls|rm|inspect`: the user-facing
 * side of the image store (store.c) and the safe importer (import.c); its
 * options and usage are the table's (src/base/options.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "store/import.h"
#include "store/store.h"

static void format_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M", &tm))
		snprintf(buf, size, "?");
}

static void ls_row(const char *name, const struct sbx_meta *m, const char *where, void *arg)
{
	char size[32], created[32], clean[128];
	(void)arg;
	format_size_human(m->size, size, sizeof(size));
	format_time(m->created, created, sizeof(created));
	log_sanitize(clean, sizeof(clean), name);
	printf("%-20s %-12.12s %8s  %-16s  %s\n", clean, m->digest, size, created, where);
}

static int image_ls(struct sbx_err *err)
{
	printf("%-20s %-12s %8s  %-16s  %s\n", "NAME", "DIGEST", "SIZE", "CREATED", "STORE");
	return store_list(ls_row, NULL, err);
}

static void print_list(const char *label, char **v)
{
	char clean[4096];
	printf("%-13s", label);
	if (!v || !*v)
		printf(" (none)\n");
	for (int i = 0; v && v[i]; i++) {
		log_sanitize(clean, sizeof(clean), v[i]);
		printf("%s%s\n", i ? "              " : " ", clean);
	}
}

static void print_field(const char *label, const char *value)
{
	char clean[4096];
	log_sanitize(clean, sizeof(clean), value && *value ? value : "(not recorded)");
	printf("%-13s %s\n", label, clean);
}

static int image_inspect(const char *name, struct sbx_err *err)
{
	struct sbx_meta m;
	const char *where;
	char size[32], created[32];

	if (store_inspect(name, &m, &where, err) < 0)
		return -1;
	format_size_human(m.size, size, sizeof(size));
	format_time(m.created, created, sizeof(created));
	print_field("name:", name);
	printf("%-13s sha256:%s\n", "digest:", m.digest);
	printf("%-13s %s (%" PRIu64 " bytes)\n", "size:", size, m.size);
	printf("%-13s %s\n", "created:", created);
	print_field("source:", m.source);
	printf("%-13s %s\n", "store:", where);
	print_list("apt hosts:", m.apt_hosts);
	print_list("env:", m.env);
	print_field("npm registry:", m.npm_registry);
	print_field("pypi index:", m.pypi_index);
	print_field("go proxy:", m.go_proxy);
	print_field("go sumdb:", m.go_sumdb);
	print_field("cargo index:", m.cargo_index);
	print_field("maven repo:", m.maven_repo);
	for (char **d = m.dropped; d && *d; d++) {
		char clean[4096];
		log_sanitize(clean, sizeof(clean), *d);
		printf("warning:      package source left out (an image may not grant it): %s\n", clean);
	}
	store_meta_free(&m);
	return 0;
}

/* The recipe's environment: a fixed PATH (mmdebstrap and every tool the
 * recipe runs come from the system's directories, never from the caller's
 * PATH) and only what says where and who, not what code to load: HOME,
 * USER, LOGNAME, TMPDIR and the proxy variables pass; PERL5LIB, PERL5OPT,
 * APT_CONFIG, LD_PRELOAD and the rest do not (docs/security.md,
 * "AppArmor"). */
#define RECIPE_PATH "PATH=/usr/sbin:/usr/bin:/sbin:/bin"
static char **recipe_env(void)
{
	static const char *const pass[] = { "HOME", "USER", "LOGNAME", "TMPDIR", "http_proxy",
		"https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY" };
	static char *env[ARRAY_SIZE(pass) + 3];
	size_t n = 0;

	env[n++] = RECIPE_PATH;
	env[n++] = "LANG=C.UTF-8";
	for (size_t i = 0; i < ARRAY_SIZE(pass); i++) {
		const char *v = getenv(pass[i]);
		if (v)
			env[n++] = xasprintf("%s=%s", pass[i], v);
	}
	env[n] = NULL;
	return env;
}

/* On a terminal the recipe's chatter goes to a log and a one-line progress
 * indicator stays; elsewhere (CI logs) the chatter passes through stderr. */
static pid_t spawn_recipe(const char *script, const char *recipe, const char *suite,
			  const char *out, const char *logpath, struct sbx_err *err)
{
	char **env = recipe_env();
	pid_t pid = fork();

	if (pid < 0)
		return err_sys(err, "fork");
	if (pid > 0)
		return pid;
	int fd = logpath ? open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : 2;
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	execle("/bin/sh", "sh", script, recipe, out, suite, (char *)NULL, env);
	_exit(127);
}

static int wait_recipe(pid_t pid, const char *recipe, bool tty)
{
	struct timespec start, now, tick = { 0, 200 * 1000 * 1000 };
	int status = 0;
	long shown = -1;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		pid_t r = waitpid(pid, &status, tty ? WNOHANG : 0);
		if (r == pid || (r < 0 && errno != EINTR))
			break;
		if (!tty || r != 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long secs = (long)(now.tv_sec - start.tv_sec);
		if (secs != shown) {
			fprintf(stderr, "\rsbxrun: building image '%s' with mmdebstrap %c %lds ",
				recipe, "|/-\\"[secs % 4], secs);
			shown = secs;
		}
		nanosleep(&tick, NULL);
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	return status;
}

static void print_log_tail(const char *logpath)
{
	char buf[2048];
	_cleanup_close_ int fd = open(logpath, O_RDONLY | O_CLOEXEC);
	off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
	if (end < 0)
		return;
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, end > (off_t)sizeof(buf) - 1
			  ? end - (off_t)sizeof(buf) + 1 : 0);
	if (n > 0) {
		buf[n] = '\0';
		fprintf(stderr, "%s", buf);
	}
}

/* The suites the recipes are built and tested for (rootfs/build.sh). */
static int check_suite(const char *suite, struct sbx_err *err)
{
	static const char *const known[] = { "bookworm", "trixie" };

	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (!strcmp(suite, known[i]))
			return 0;
	return err_set(err, 0, "image build: --suite '%s': the recipes build bookworm (Debian 12) "
		       "or trixie (Debian 13)", suite);
}

static int image_build(const char *recipe, const char *name, const char *suite, bool system,
		       struct sbx_err *err)
{
	const char *stock = paths_stock_dir();
	_cleanup_free_ char *script = xasprintf("%s/rootfs/build.sh", stock);
	_cleanup_free_ char *list = xasprintf("%s/rootfs/%s.packages", stock, recipe);
	_cleanup_free_ char *out = NULL, *logpath = NULL;
	bool tty = isatty(STDERR_FILENO) && sbx_log_level >= SBX_LOG_NORMAL;

	_cleanup_free_ char *derived = NULL;

	if (store_name_check(recipe, err) < 0 || access(list, R_OK) < 0)
		return err_set(err, 0, "no recipe '%s' (minimal or full, in '%s/rootfs')", recipe, stock);
	if (!suite)
		suite = "bookworm";
	if (check_suite(suite, err) < 0)
		return -1;
	/* another suite does not replace the recipe's default image */
	if (!name)
		name = derived = strcmp(suite, "bookworm") ? xasprintf("%s-%s", recipe, suite)
							   : xstrdup(recipe);
	if (store_name_check(name, err) < 0)
		return -1;
	if (store_build_path(recipe, ".tar.zst", &out, err) < 0)
		return -1;
	if (tty)
		logpath = xasprintf("%s.log", out);
	pid_t pid = spawn_recipe(script, recipe, suite, out, logpath, err);
	if (pid < 0)
		return -1;
	int status = wait_recipe(pid, recipe, tty);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		if (logpath)
			print_log_tail(logpath);
		err_set(err, 0, "recipe '%s' failed (%s %d)", recipe,
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	_cleanup_free_ char *source = xasprintf("recipe %s (%s) from %s/rootfs", recipe, suite, stock);
	int r = err->msg[0] ? -1 : import_file(out, name, source, system, err);
	unlink(out);
	if (logpath)
		unlink(logpath);
	return r;
}

/* One operand at most; *op: it, or NULL. */
static int one_operand(int argc, char **argv, const struct cli_args *a, const char **op,
		       struct sbx_err *err)
{
	*op = a->rest < argc ? argv[a->rest] : NULL;
	if (argc - a->rest > 1)
		return err_set(err, 0, "image %s: unexpected argument '%s' (see 'sbxrun image %s --help')",
			       argv[0], argv[a->rest + 1], argv[0]);
	return 0;
}

int cmd_image(int argc, char **argv, struct sbx_err *err)
{
	const struct sbx_command *verb;
	struct cli_args a;
	const char *op;
	int r = cli_verb(argc, argv, "image", NULL, &verb, err);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (verb->mask == SBX_CMD_IMAGE_EXPORT)
		return cmd_image_export(argc - 1, argv + 1, err);
	r = cli_parse(argc - 1, argv + 1, verb->mask, NULL, &a, err);
	if (r != 0)
		return r < 0 ? -1 : 0;
	if (one_operand(argc - 1, argv + 1, &a, &op, err) < 0)
		return -1;
	if (!op && verb->mask != SBX_CMD_IMAGE_BUILD && verb->mask != SBX_CMD_IMAGE_LS)
		return err_set(err, 0, "image %s: which %s? (see 'sbxrun image %s --help')", verb->name,
			       verb->mask == SBX_CMD_IMAGE_IMPORT ? "FILE" : "NAME", verb->name);
	switch (verb->mask) {
	case SBX_CMD_IMAGE_BUILD:
		r = image_build(op ? op : "minimal", a.v[SBX_K_NAME], a.v[SBX_K_SUITE],
				a.v[SBX_K_CACHE_SYSTEM] != NULL, err);
		break;
	case SBX_CMD_IMAGE_IMPORT:
		r = import_file(op, a.v[SBX_K_NAME], NULL, a.v[SBX_K_CACHE_SYSTEM] != NULL, err);
		break;
	case SBX_CMD_IMAGE_LS:
		r = op ? err_set(err, 0, "image ls: unexpected argument '%s'", op) : image_ls(err);
		break;
	case SBX_CMD_IMAGE_RM:
		r = store_remove(op, err);
		break;
	default:
		r = image_inspect(op, err);
	}
	return r < 0 ? -1 : 0;
}
