/* err.h - the error object every fallible function fills in (docs/style.md 3). */
#ifndef SBX_ERR_H
#define SBX_ERR_H

#include <stdarg.h>

struct sbx_err {
	int errnum;      /* errno of the first failure, 0 if none applies */
	int plain;       /* the message says it all: errnum is not printed */
	char msg[1024];  /* what failed, with context added on the way up */
	char hint[512];  /* at most one hint for known setup problems */
};

/* Sets the message and errno; always returns -1 so callers can `return`. */
int err_set(struct sbx_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same, for a message that already says what happened ("session 'x' is
 * running"): errnum stays for callers that branch on it, but is not printed
 * (no ": Device or resource busy" after a whole sentence). */
int err_plain(struct sbx_err *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Same as err_set, taking errno from the caller's errno. */
int err_sys(struct sbx_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prefixes "context: " to the message already there. */
int err_wrap(struct sbx_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void err_hint(struct sbx_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints "sbxrun: error: MSG[: strerror]" (strerror unless plain) and the
 * hint to stderr. */
void err_print(const struct sbx_err *err);

#endif
