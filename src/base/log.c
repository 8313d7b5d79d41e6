/* log.c - warnings and verbose notes on stderr, sanitized. */
#include "base/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

int sbx_log_level = SBX_LOG_NORMAL;

void log_sanitize(char *dst, size_t size, const char *src)
{
	size_t i = 0;

	if (size == 0)
		return;
	for (; *src && i + 1 < size; src++) {
		unsigned char c = (unsigned char)*src;
		dst[i++] = (c < 0x20 && c != '\t') || c == 0x7f ? '?' : (char)c;
	}
	dst[i] = '\0';
}

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char raw[2048], clean[2048];

	vsnprintf(raw, sizeof(raw), fmt, ap);
	log_sanitize(clean, sizeof(clean), raw);
	fprintf(stderr, "sbxrun: %s%s\n", prefix, clean);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;
	if (sbx_log_level < SBX_LOG_NORMAL)
		return;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;
	if (sbx_log_level < SBX_LOG_NORMAL)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_verbose(const char *fmt, ...)
{
	va_list ap;
	if (sbx_log_level < SBX_LOG_VERBOSE)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_trace(const char *fmt, ...)
{
	va_list ap;
	char raw[512];
	struct timespec ts;

	if (sbx_log_level < SBX_LOG_TRACE)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	fprintf(stderr, "sbxrun: trace %lld.%06ld [%d] %s\n", (long long)ts.tv_sec, ts.tv_nsec / 1000,
		(int)getpid(), raw);
}
