/* log.h - the log level (the one mutable global) and message helpers. */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <stddef.h>

enum sbx_loglevel { SBX_LOG_QUIET = 0, SBX_LOG_NORMAL = 1, SBX_LOG_VERBOSE = 2, SBX_LOG_TRACE = 3 };

extern int sbx_log_level;

void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_verbose(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* --trace (-v is --verbose alone): a step of start-up with a CLOCK_MONOTONIC
 * time stamp in µs and the pid (host side and sandbox side share the clock),
 * for bench/README.md's breakdown of where a start's time goes. */
void log_trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Copies src to dst, replacing control characters so that untrusted text
 * (file names from a tarball, hosts from a request) cannot drive the terminal. */
void log_sanitize(char *dst, size_t size, const char *src);

#endif
