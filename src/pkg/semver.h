/* semver.h - semantic versions, parsed and ordered (semver 2.0.0, 11). */
#ifndef SBX_SEMVER_H
#define SBX_SEMVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct semver {
	uint64_t n[3];
	const char *pre;  /* after '-', up to '+' or the end; NULL: a release */
	size_t pre_len;
};

/* MAJOR.MINOR.PATCH[-PRE][+BUILD]; v points into s. false: not one. */
bool semver_parse(const char *s, struct semver *v);
/* <0, 0, >0 as a orders before, with, after b (build metadata ignored). */
int semver_cmp(const struct semver *a, const struct semver *b);

#endif
