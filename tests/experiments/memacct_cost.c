/* memacct_cost.c - what one sample of sbxrun's memory accountant costs
 * (src/sandbox/memacct.c) with N processes of M MiB each below the caller:
 *   make && cc -O2 -iquote src -o /tmp/memacct_cost tests/experiments/memacct_cost.c \
 *      build/sandbox/memacct.o build/base/{log,util,err}.o && /tmp/memacct_cost 50 8
 * Prints the median of 50 samples, resident pass only (the sum stays under
 * the limit) and with the proportional pass (the limit is set below it). */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/memacct.h"

static uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t median_us(struct sbx_memacct *a, pid_t self)
{
	uint64_t t[50];
	for (int i = 0; i < 50; i++) {
		uint64_t t0 = now_us();
		memacct_sample(a, &self, 1);
		t[i] = now_us() - t0;
	}
	qsort(t, 50, sizeof(t[0]), cmp);
	return t[25];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 50, mib = argc > 2 ? atoi(argv[2]) : 8;
	pid_t self = getpid(), kids[4096];
	struct sbx_memacct a;

	for (int i = 0; i < n && i < 4096; i++)
		if ((kids[i] = fork()) == 0) {
			char *m = mmap(NULL, (size_t)mib << 20, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (m != MAP_FAILED)
				memset(m, 1, (size_t)mib << 20);
			pause();
			_exit(0);
		}
	sleep(1);
	memacct_init(&a, UINT64_MAX / 2);
	uint64_t used = memacct_sample(&a, &self, 1);
	printf("%d processes, %lu MiB in use\n", n, (unsigned long)(used >> 20));
	printf("resident pass: %lu us\n", (unsigned long)median_us(&a, self));
	a.limit = 1;
	printf("with the proportional pass: %lu us\n", (unsigned long)median_us(&a, self));
	memacct_free(&a);
	for (int i = 0; i < n && i < 4096; i++)
		kill(kids[i], SIGKILL);
	return 0;
}
