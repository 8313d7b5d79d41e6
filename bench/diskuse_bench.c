/* diskuse_bench.c - what one walk of sbxrun's disk accounting costs
 * (storage = disk, the quota on kernels before 6.6): a tree of N empty files
 * in D directories, walked by diskuse_bytes; prints the median of 5 walks.
 * Built and run by bench/diskquota.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/diskuse.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: diskuse_bench DIR NFILES\n");
		return 2;
	}
	const char *dir = argv[1];
	long n = atol(argv[2]);
	char p[4096];
	for (long i = 0; i < n; i++) {
		if (i % 1000 == 0) {
			snprintf(p, sizeof(p), "%s/d%ld", dir, i / 1000);
			mkdir(p, 0755);
		}
		snprintf(p, sizeof(p), "%s/d%ld/f%ld", dir, i / 1000, i);
		int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
		if (fd < 0) {
			perror(p);
			return 1;
		}
		close(fd);
	}
	double t[5];
	uint64_t used = 0;
	for (int r = 0; r < 5; r++) {
		double t0 = now_ms();
		if (diskuse_bytes(dir, &used) < 0)
			return 1;
		t[r] = now_ms() - t0;
	}
	qsort(t, 5, sizeof(t[0]), cmp);
	printf("%ld files: walk %.1f ms (median of 5), %llu bytes counted\n", n, t[2], (unsigned long long)used);
	return 0;
}
