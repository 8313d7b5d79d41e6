/* test_diff.c - diff.c: a unified diff line by line, and a side too big to
 * hold streamed from its file as one hunk (the same text a reader would
 * get from a whole-file replacement), nothing for equal sides, binary
 * said as such, and a stream that stops at its first write error. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "undo/diff.h"
#include "unit.h"

/* A side held in memory, or (big) an unnamed file of those bytes. */
static struct diff_side side(const char *s, size_t n, int big)
{
	struct diff_side d = DIFF_SIDE_NONE;
	int fd = memfd_create("t", MFD_CLOEXEC);
	if (fd < 0 || write(fd, s, n) != (ssize_t)n || lseek(fd, 0, SEEK_SET) < 0)
		return d;
	if (big) /* as if past DIFF_MAX_BYTES: never read whole */
		d = (struct diff_side){ .fd = fd, .size = n };
	else if (diff_side_open(&d, fd, n) < 0)
		close(fd);
	return d;
}

static char *run(struct diff_side *a, struct diff_side *b)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	diff_sides(a, b, "a/x", "b/x", f);
	fclose(f);
	diff_side_free(a);
	diff_side_free(b);
	return buf;
}

static void test_held(void)
{
	struct diff_side a = side("one\ntwo\n", 8, 0), b = side("one\nthree\n", 10, 0);
	char *d = run(&a, &b);
	CHECK_STR(d, "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n one\n-two\n+three\n");
	free(d);
	a = side("same\n", 5, 0), b = side("same\n", 5, 1);
	d = run(&a, &b);
	CHECK_STR(d, "");
	free(d);
}

static void test_streamed(void)
{
	struct diff_side a = side("one\ntwo\n", 8, 1), b = side("one\nthree", 9, 1);
	char *d = run(&a, &b);
	CHECK_STR(d, "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n-one\n-two\n+one\n+three\n\\ No newline at end of file\n");
	free(d);
	a = DIFF_SIDE_NONE, b = side("\n\n\n", 3, 1);
	d = run(&a, &b);
	CHECK_STR(d, "--- a/x\n+++ b/x\n@@ -0,0 +1,3 @@\n+\n+\n+\n");
	free(d);
	a = side("x\n", 2, 1), b = side("x\0y", 3, 1);
	d = run(&a, &b);
	CHECK_STR(d, "Binary files a/x and b/x differ\n");
	free(d);
}

/* A stream that fails after a few bytes: the diff stops (put_all reads no
 * further than the failure). */
static ssize_t full(void *cookie, const char *buf, size_t size)
{
	size_t *n = cookie;
	(void)buf;
	*n += size;
	return -1;
}

static void test_stops_at_a_write_error(void)
{
	size_t n = 0, big = 1 << 20;
	char *s = malloc(big);
	memset(s, '\n', big);
	struct diff_side a = DIFF_SIDE_NONE, b = side(s, big, 1);
	FILE *f = fopencookie(&n, "w", (cookie_io_functions_t){ .write = full });
	setvbuf(f, NULL, _IOFBF, 4096);
	diff_sides(&a, &b, "a/x", "b/x", f);
	CHECK(ferror(f));
	CHECK(n < 2 * 65536 + 8192); /* one chunk written, not 2 MiB */
	fclose(f);
	diff_side_free(&b);
	free(s);
}

int main(void)
{
	test_held();
	test_streamed();
	test_stops_at_a_write_error();
	return unit_done("test_diff");
}
