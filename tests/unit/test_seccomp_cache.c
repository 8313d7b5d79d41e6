/* test_seccomp_cache.c - the per-user cache of the compiled seccomp filter:
 * a second prepare reads what the first compiled (byte for byte the program
 * libseccomp exports), and a cached file that was tampered with, truncated,
 * made writable by others or replaced by a symlink is not used but rebuilt.
 * Runs in a temporary XDG_CACHE_HOME. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "sandbox/seccomp_cache.h"
#include "unit.h"

static char base[] = "/tmp/sbx-unit-bpfcache-XXXXXX";
static char dir[256], file[512];

static int same(const struct sbx_bpf *a, const struct sbx_bpf *b)
{
	return a->len && a->len == b->len && !memcmp(a->insns, b->insns, a->len * sizeof(*a->insns));
}

/* The one cache file (there is one per set of inputs). */
static int find_file(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(file, sizeof(file), "%s/%s", dir, e->d_name);
			n++;
		}
	if (d)
		closedir(d);
	return n;
}

/* Prepares, and says whether the result is the reference program and
 * whether the file on disk was rewritten (its inode changed). */
static void prepare_check(const struct sbx_config *cfg, const struct sbx_bpf *ref, const char *what)
{
	struct sbx_bpf b;
	struct sbx_err err = { 0 };
	struct stat before, after;

	int had = stat(file, &before) == 0;
	CHECK(seccomp_prepare(cfg, 1, &b, &err) == 0);
	CHECK(same(&b, ref));
	if (!same(&b, ref))
		fprintf(stderr, "  after: %s\n", what);
	CHECK(stat(file, &after) == 0 && S_ISREG(after.st_mode) && (after.st_mode & 0777) == 0600);
	CHECK(!had || after.st_ino != before.st_ino); /* rebuilt and renamed into place */
	seccomp_bpf_free(&b);
}

int main(void)
{
	struct sbx_config cfg;
	struct sbx_bpf ref, b;
	struct sbx_err err = { 0 };
	struct stat st;

	if (!mkdtemp(base))
		return 1;
	setenv("XDG_CACHE_HOME", base, 1);
	snprintf(dir, sizeof(dir), "%s/sbxrun/seccomp", base);
	config_init(&cfg);
	cfg.seccomp = SBX_ON;
	cfg.ptrace = 1;

	CHECK(seccomp_compile(&cfg, 1, &ref, &err) == 0 && ref.len > 10);
	/* first prepare compiles and writes; the directory is private */
	CHECK(seccomp_prepare(&cfg, 1, &b, &err) == 0 && same(&b, &ref));
	seccomp_bpf_free(&b);
	CHECK(find_file() == 1);
	CHECK(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0700);
	/* second prepare reads the file as it is */
	stat(file, &st);
	ino_t ino = st.st_ino;
	CHECK(seccomp_prepare(&cfg, 1, &b, &err) == 0 && same(&b, &ref));
	seccomp_bpf_free(&b);
	CHECK(stat(file, &st) == 0 && st.st_ino == ino);

	/* one flipped bit in an instruction: the checksum refuses it */
	int fd = open(file, O_RDWR);
	off_t end = lseek(fd, 0, SEEK_END);
	unsigned char c;
	CHECK(pread(fd, &c, 1, end - 3) == 1);
	c ^= 1;
	CHECK(pwrite(fd, &c, 1, end - 3) == 1);
	close(fd);
	prepare_check(&cfg, &ref, "a flipped bit");
	/* truncated */
	CHECK(truncate(file, end - 8) == 0);
	prepare_check(&cfg, &ref, "truncation");
	/* writable by the group */
	CHECK(chmod(file, 0620) == 0);
	prepare_check(&cfg, &ref, "chmod g+w");
	/* a symlink to another file */
	char other[600];
	snprintf(other, sizeof(other), "%s/other", base);
	CHECK(rename(file, other) == 0 && symlink(other, file) == 0);
	prepare_check(&cfg, &ref, "a symlink");
	CHECK(lstat(file, &st) == 0 && S_ISREG(st.st_mode));
	/* other inputs, another file: ptrace = no is a different program */
	char mine[512];
	snprintf(mine, sizeof(mine), "%s", file);
	cfg.ptrace = 0;
	CHECK(seccomp_prepare(&cfg, 1, &b, &err) == 0 && b.len && !same(&b, &ref));
	seccomp_bpf_free(&b);
	CHECK(find_file() == 2);
	/* a write sweeps files of other keys untouched for a month, and
	 * nothing else: not a recent one, not a name of another form */
	char old[600], recent[600], foreign[600];
	snprintf(old, sizeof(old), "%s/00000000000000aa", dir);
	snprintf(recent, sizeof(recent), "%s/00000000000000bb", dir);
	snprintf(foreign, sizeof(foreign), "%s/notes", dir);
	const char *made[] = { old, recent, foreign };
	for (int i = 0; i < 3; i++)
		close(open(made[i], O_WRONLY | O_CREAT | O_EXCL, 0600));
	struct timespec t[2] = { { time(NULL) - 31 * 86400, 0 }, { time(NULL) - 31 * 86400, 0 } };
	CHECK(utimensat(AT_FDCWD, old, t, 0) == 0 && utimensat(AT_FDCWD, foreign, t, 0) == 0);
	t[0].tv_sec = t[1].tv_sec = time(NULL) - 20 * 86400;
	CHECK(utimensat(AT_FDCWD, recent, t, 0) == 0);
	cfg.ptrace = 1;
	snprintf(file, sizeof(file), "%s", mine);
	CHECK(truncate(file, 10) == 0); /* the next prepare rewrites it */
	prepare_check(&cfg, &ref, "a sweep");
	CHECK(access(old, F_OK) < 0 && access(recent, F_OK) == 0 && access(foreign, F_OK) == 0);
	CHECK(find_file() == 4);
	/* seccomp = off: no program */
	cfg.seccomp = SBX_OFF;
	CHECK(seccomp_prepare(&cfg, 1, &b, &err) == 0 && b.len == 0);

	seccomp_bpf_free(&ref);
	char cmd[300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", base);
	config_free(&cfg);
	return unit_done("test_seccomp_cache");
}
