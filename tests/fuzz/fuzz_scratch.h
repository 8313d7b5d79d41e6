/* fuzz_scratch.h - the scratch directory the importer harnesses
 * (fuzz_import.c, fuzz_oci.c) unpack into: a base directory holding a
 * sentinel file and, per input, "x"; anything else appearing next to "x"
 * (or a changed sentinel) is an escape, reported as a crash. Included by one
 * harness each, so everything here is static. */
#ifndef SBX_FUZZ_SCRATCH_H
#define SBX_FUZZ_SCRATCH_H

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"

static int scratch_base = -1;

static void scratch_setup(const char *tmpl_in)
{
	char tmpl[64];
	snprintf(tmpl, sizeof(tmpl), "%s", tmpl_in);
	if (!mkdtemp(tmpl))
		abort();
	scratch_base = open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int s = openat(scratch_base, "sentinel", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (scratch_base < 0 || s < 0 || write(s, "keep\n", 5) != 5)
		abort();
	close(s);
}

/* The input as a memfd, and a fresh "x" opened below the base. */
static int scratch_begin(const char *tmpl, const char *name, const uint8_t *data, size_t size,
			 int *xfd)
{
	if (scratch_base < 0)
		scratch_setup(tmpl);
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0 || write_all(fd, data, size) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (mkdirat(scratch_base, "x", 0700) < 0 ||
	    (*xfd = openat(scratch_base, "x", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		abort();
	return fd;
}

/* Only "sentinel" (unchanged) and "x" may exist next to the scratch dir;
 * then "x" goes. */
static void scratch_end(void)
{
	struct sbx_err err = { 0 };
	struct stat st;
	int fd = openat(scratch_base, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fdopendir(fd);
	if (!d)
		abort();
	for (struct dirent *e; (e = readdir(d));)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    strcmp(e->d_name, "sentinel") && strcmp(e->d_name, "x"))
			abort();
	closedir(d);
	if (fstatat(scratch_base, "sentinel", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size != 5 || st.st_nlink != 1)
		abort();
	if (rm_rf_at(scratch_base, "x", &err) < 0)
		abort();
}

#endif
