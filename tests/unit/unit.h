/* unit.h - a tiny assert harness for the C unit tests. */
#ifndef SBX_UNIT_H
#define SBX_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed;

#define CHECK(cond) do { \
	if (cond) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: FAIL: %s\n", __FILE__, __LINE__, #cond); } \
} while (0)

#define CHECK_STR(a, b) do { \
	const char *_a = (a), *_b = (b); \
	if (_a && _b && strcmp(_a, _b) == 0) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: FAIL: '%s' != '%s'\n", __FILE__, __LINE__, \
			      _a ? _a : "(null)", _b ? _b : "(null)"); } \
} while (0)

#define CHECK_CONTAINS(hay, needle) do { \
	const char *_h = (hay), *_n = (needle); \
	if (_h && strstr(_h, _n)) unit_passed++; \
	else { unit_failed++; fprintf(stderr, "%s:%d: FAIL: '%s' does not contain '%s'\n", \
			      __FILE__, __LINE__, _h ? _h : "(null)", _n); } \
} while (0)

/* Prints the plain closing line and returns the exit status. */
static inline int unit_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
