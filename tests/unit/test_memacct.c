/* test_memacct.c - memacct.c: the figures read from /proc, when to sample
 * again, and one live sample of this process and a child. */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/memacct.h"
#include "unit.h"

static void test_parse(void)
{
	const char *rollup =
		"55d0c0a00000-7ffd1c3f2000 ---p 00000000 00:00 0                          [rollup]\n"
		"Rss:              214528 kB\nPss:              208041 kB\nPss_Dirty:        205000 kB\n"
		"Pss_Anon:         204800 kB\nPss_File:           3241 kB\nPss_Shmem:          1024 kB\n"
		"Shared_Clean:       1000 kB\nSwap:                  0 kB\nSwapPss:              16 kB\n";
	const char *status = "Name:\tprobe\nVmRSS:\t  214528 kB\nRssAnon:\t  204800 kB\n"
			     "RssFile:\t    3000 kB\nRssShmem:\t    2048 kB\nVmSwap:\t       4 kB\n";
	uint64_t v = 0;

	CHECK(memacct_parse_rollup(rollup, &v) == 0);
	CHECK(v == (204800ull + 1024 + 16) * 1024);
	CHECK(memacct_parse_status(status, &v) == 0);
	CHECK(v == (204800ull + 2048 + 4) * 1024);
	/* Pss_File, RssFile and Rss are not memory the sandbox holds alone */
	CHECK(memacct_parse_rollup("Rss: 5 kB\nPss: 5 kB\n", &v) < 0);
	CHECK(memacct_parse_status("Name:\tx\nVmRSS:\t 5 kB\n", &v) < 0);
	/* a key is matched whole: "RssAnonX" is not "RssAnon" */
	CHECK(memacct_parse_status("RssAnonX:\t 7 kB\nRssAnon:\t 3 kB\n", &v) == 0 && v == 3 * 1024);
	CHECK(memacct_parse_status("RssAnon:\t kB\n", &v) < 0);
}

static void test_next(void)
{
	uint64_t g = 1ull << 30;

	CHECK(memacct_next_ms(300, 0, g) == 250);
	CHECK(memacct_next_ms(300, g / 2, g) == 100);
	CHECK(memacct_next_ms(10000, 0, g) == 250);
	CHECK(memacct_next_ms(20000, g, g) == 400);   /* 20 times a 20 ms sample */
	CHECK(memacct_next_ms(1000000, 0, g) == 2000); /* at most 2 s */
}

/* A child holding 32 MiB of touched anonymous memory counts below us. */
static void test_live(void)
{
	struct sbx_memacct a;
	int p[2];
	uint64_t used;
	char c;

	CHECK(pipe(p) == 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		char *m = mmap(NULL, 32 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			memset(m, 1, 32 << 20);
		/* until the parent closes its end */
		_exit(read(p[0], &c, 1) < 0);
	}
	close(p[0]);
	memacct_init(&a, 16 << 20);
	pid_t self = getpid();
	uint64_t next = 0;
	for (int i = 0; i < 200; i++) { /* until the child has touched it all */
		used = memacct_sample(&a, &self, 1);
		if (used >= 32u << 20)
			break;
		usleep(10000);
	}
	CHECK(used >= 32u << 20);
	CHECK(memacct_check(&a, &self, 1, &next) == 1);
	CHECK(a.peak >= 32u << 20);
	close(p[1]);
	waitpid(pid, NULL, 0);
	used = memacct_sample(&a, &self, 1);
	CHECK(used < 32u << 20);
	CHECK(memacct_check(&a, &self, 1, &next) == 0 && next >= 100);
	memacct_free(&a);
}

int main(void)
{
	test_parse();
	test_next();
	test_live();
	return unit_done("test_memacct");
}
