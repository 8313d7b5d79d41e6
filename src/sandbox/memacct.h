/* memacct.h - sbxrun's own memory accounting where memory has no cgroup
 * (the rlimit fallback): the host side sums what the sandbox's processes
 * and its /dev/shm hold and ends the sandbox past the limit. */
#ifndef SBX_MEMACCT_H
#define SBX_MEMACCT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* No sample before this (a short command is never walked). */
#define MEMACCT_FIRST_MS 100

struct sbx_memacct {
	uint64_t limit;
	uint64_t peak;      /* the largest sum seen */
	int shm;            /* O_PATH fd of the sandbox's /dev/shm once found, else -1 */
	pid_t *pids;        /* scratch: the processes of one walk */
	size_t npids, cap;
};

void memacct_init(struct sbx_memacct *a, uint64_t limit);
void memacct_free(struct sbx_memacct *a);
/* One sample: every process below the roots (host pids; the roots
 * included), each by its proportional anon, shmem and swapped memory
 * (smaps_rollup; /proc/PID/status's RSS where that cannot be read), plus
 * what the sandbox's /dev/shm holds. Returns the sum in bytes. */
uint64_t memacct_sample(struct sbx_memacct *a, const pid_t *roots, size_t nroots);
/* Samples; 1 when the sum is past the limit, else 0 with *next_ms, when
 * to sample again. */
int memacct_check(struct sbx_memacct *a, const pid_t *roots, size_t nroots, uint64_t *next_ms);
/* When to sample again (ms): 250 far from the limit, 100 within half of
 * it, and never less than 20 times what a sample cost. */
uint64_t memacct_next_ms(uint64_t cost_us, uint64_t used, uint64_t limit);
/* Bytes of Pss_Anon + Pss_Shmem + SwapPss in smaps_rollup text; -1 if none
 * of them is there (a kernel before 5.7). */
int memacct_parse_rollup(const char *text, uint64_t *bytes);
/* Bytes of RssAnon + RssShmem + VmSwap in /proc/PID/status text; -1 if
 * RssAnon is missing. */
int memacct_parse_status(const char *text, uint64_t *bytes);

#endif
