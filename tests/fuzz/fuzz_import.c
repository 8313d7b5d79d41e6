/* fuzz_import.c - libFuzzer harness: the bytes are a tarball for the
 * importer's extractor, unpacked into a scratch directory; anything that
 * appears next to that directory (or changes the sentinel there) is a crash. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/import.h"
#include "base/util.h"

static const struct sbx_import_limits limits = {
	.max_entries = 2000, .max_bytes = 16 << 20, .max_depth = 32,
};

static int base = -1;

static void setup(void)
{
	char tmpl[] = "/tmp/sbx-fuzz-import.XXXXXX";
	if (!mkdtemp(tmpl))
		abort();
	base = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int s = openat(base, "sentinel", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (base < 0 || s < 0 || write(s, "keep\n", 5) != 5)
		abort();
	close(s);
}

/* Only "sentinel" (unchanged) and "x" may exist next to the scratch dir. */
static void check_outside(void)
{
	struct stat st;
	int fd = openat(base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	if (!d)
		abort();
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "sentinel") && strcmp(e->d_name, "x"))
			abort();
	closedir(d);
	if (fstatat(base, "sentinel", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 5 || st.st_nlink != 1)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sbx_import_stats st = { 0 };
	struct sbx_err err = { 0 };

	if (base < 0)
		setup();
	int fd = memfd_create("tar", MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (mkdirat(base, "x", 0700) < 0)
		abort();
	int dfd = openat(base, "x", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		abort();
	(void)import_extract_fd(fd, dfd, &limits, &st, &err);
	close(dfd);
	close(fd);
	check_outside();
	if (rm_rf_at(base, "x", &err) < 0)
		abort();
	return 0;
}
