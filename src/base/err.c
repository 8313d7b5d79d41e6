/* err.c - building and printing the one error message a user sees. */
#include "base/err.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"

static void vset(struct sbx_err *err, int errnum, const char *fmt, va_list ap)
{
	if (!err)
		return;
	err->errnum = errnum;
	err->plain = 0;
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	err->hint[0] = '\0';
}

int err_set(struct sbx_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int err_plain(struct sbx_err *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vset(err, errnum, fmt, ap);
	va_end(ap);
	if (err)
		err->plain = 1;
	return -1;
}

int err_sys(struct sbx_err *err, const char *fmt, ...)
{
	int e = errno;
	va_list ap;
	va_start(ap, fmt);
	vset(err, e, fmt, ap);
	va_end(ap);
	errno = e;
	return -1;
}

int err_wrap(struct sbx_err *err, const char *fmt, ...)
{
	char prefix[512], old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	snprintf(err->msg, sizeof(err->msg), "%s: %s", prefix, old);
	return -1;
}

void err_hint(struct sbx_err *err, const char *fmt, ...)
{
	va_list ap;
	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err->hint, sizeof(err->hint), fmt, ap);
	va_end(ap);
}

void err_print(const struct sbx_err *err)
{
	char clean[sizeof(err->msg)];

	log_sanitize(clean, sizeof(clean), err->msg);
	if (err->errnum && !err->plain)
		fprintf(stderr, "sbxrun: error: %s: %s\n", clean, strerror(err->errnum));
	else
		fprintf(stderr, "sbxrun: error: %s\n", clean);
	if (err->hint[0]) {
		log_sanitize(clean, sizeof(clean), err->hint);
		fprintf(stderr, "hint: %s\n", clean);
	}
}
