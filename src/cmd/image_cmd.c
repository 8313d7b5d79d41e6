/* image_cmd.c - `sbxrun image build|import|ls|rm|inspect`: the user-facing
 * side of the image store (store.c) and the safe importer (import.c). */
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
#include "cmd/commands.h"
#include "store/import.h"
#include "store/store.h"

static const char usage[] =
	"usage: sbxrun image build [minimal|full] [--name NAME]\n"
	"       sbxrun image import FILE [--name NAME]   (.tar, .tar.gz, .tar.xz, .tar.zst;\n"
	"                                                 a rootfs, an OCI layout or a docker-archive)\n"
	"       sbxrun image ls\n"
	"       sbxrun image rm NAME\n"
	"       sbxrun image inspect NAME\n";

/* The arguments after the subcommand: operands, --name, -v, -q, -h. */
struct image_args {
	const char *ops[2];
	int nops;
	const char *name;
	int help;
};

static int parse_args(int argc, char **argv, int max_ops, struct image_args *a,
		      struct sbx_err *err)
{
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];
		if (!strcmp(s, "--name") || !strcmp(s, "-n")) {
			if (++i >= argc)
				return err_set(err, 0, "option needs a value: '%s'", s);
			a->name = argv[i];
		} else if (str_has_prefix(s, "--name=")) {
			a->name = s + 7;
		} else if (!strcmp(s, "-h") || !strcmp(s, "--help")) {
			a->help = 1;
		} else if (!strcmp(s, "-v") || !strcmp(s, "--verbose")) {
			sbx_log_level = SBX_LOG_VERBOSE;
		} else if (!strcmp(s, "-q") || !strcmp(s, "--quiet")) {
			sbx_log_level = SBX_LOG_QUIET;
		} else if (s[0] == '-' && s[1]) {
			return err_set(err, 0, "unknown option '%s' (see 'sbxrun image --help')", s);
		} else if (a->nops >= max_ops) {
			return err_set(err, 0, "unexpected argument '%s' (see 'sbxrun image --help')", s);
		} else {
			a->ops[a->nops++] = s;
		}
	}
	return 0;
}

static void human_size(uint64_t b, char *buf, size_t size)
{
	static const char units[] = "BKMGT";
	double v = (double)b;
	int u = 0;
	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	snprintf(buf, size, u ? "%.1f%c" : "%.0f%c", v, units[u]);
}

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
	human_size(m->size, size, sizeof(size));
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
	human_size(m.size, size, sizeof(size));
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
	for (char **d = m.dropped; d && *d; d++) {
		char clean[4096];
		log_sanitize(clean, sizeof(clean), *d);
		printf("warning:      package source left out (an image may not grant it): %s\n", clean);
	}
	store_meta_free(&m);
	return 0;
}

/* On a terminal the recipe's chatter goes to a log and a one-line progress
 * indicator stays; elsewhere (CI logs) the chatter passes through stderr. */
static pid_t spawn_recipe(const char *script, const char *recipe, const char *out,
			  const char *logpath, struct sbx_err *err)
{
	pid_t pid = fork();

	if (pid < 0)
		return err_sys(err, "fork");
	if (pid > 0)
		return pid;
	int fd = logpath ? open(logpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : 2;
	if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
		_exit(127);
	execl("/bin/sh", "sh", script, recipe, out, (char *)NULL);
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

static int image_build(const char *recipe, const char *name, struct sbx_err *err)
{
	const char *stock = paths_stock_dir();
	_cleanup_free_ char *script = xasprintf("%s/rootfs/build.sh", stock);
	_cleanup_free_ char *list = xasprintf("%s/rootfs/%s.packages", stock, recipe);
	_cleanup_free_ char *out = NULL, *logpath = NULL;
	bool tty = isatty(STDERR_FILENO) && sbx_log_level >= SBX_LOG_NORMAL;

	if (store_name_check(recipe, err) < 0 || access(list, R_OK) < 0)
		return err_set(err, 0, "no recipe '%s' (minimal or full, in '%s/rootfs')", recipe, stock);
	if (store_name_check(name ? name : recipe, err) < 0)
		return -1;
	if (store_build_path(recipe, ".tar.zst", &out, err) < 0)
		return -1;
	if (tty)
		logpath = xasprintf("%s.log", out);
	pid_t pid = spawn_recipe(script, recipe, out, logpath, err);
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
	_cleanup_free_ char *source = xasprintf("recipe %s from %s/rootfs", recipe, stock);
	int r = err->msg[0] ? -1 : import_file(out, name ? name : recipe, source, err);
	unlink(out);
	if (logpath)
		unlink(logpath);
	return r;
}

int cmd_image(int argc, char **argv, struct sbx_err *err)
{
	struct image_args a = { 0 };
	const char *sub = argc > 1 ? argv[1] : NULL;
	int r;

	if (!sub)
		return err_set(err, 0, "image: which subcommand? (build, import, ls, rm, inspect, export)");
	if (!strcmp(sub, "export"))
		return cmd_image_export(argc - 1, argv + 1, err);
	if (!strcmp(sub, "-h") || !strcmp(sub, "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (parse_args(argc, argv, 1, &a, err) < 0)
		return -1;
	if (a.help) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "build"))
		r = image_build(a.nops ? a.ops[0] : "minimal", a.name, err);
	else if (!strcmp(sub, "import"))
		r = a.nops ? import_file(a.ops[0], a.name, NULL, err)
			   : err_set(err, 0, "image import: which FILE?");
	else if (!strcmp(sub, "ls"))
		r = a.nops ? err_set(err, 0, "image ls: unexpected argument '%s'", a.ops[0])
			   : image_ls(err);
	else if (!strcmp(sub, "rm"))
		r = a.nops ? store_remove(a.ops[0], err) : err_set(err, 0, "image rm: which NAME?");
	else if (!strcmp(sub, "inspect"))
		r = a.nops ? image_inspect(a.ops[0], err) : err_set(err, 0, "image inspect: which NAME?");
	else
		return err_set(err, 0, "unknown image subcommand '%s' (build, import, ls, rm, inspect, export)", sub);
	return r < 0 ? -1 : 0;
}
