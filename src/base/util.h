/* util.h - cleanup attributes, strict number parsing, small fd helpers. */
#ifndef SBX_UTIL_H
#define SBX_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/err.h"

void util_freep(void *p);
void util_closep(int *fd);
void util_fclosep(FILE **f);
void util_strvfreep(char ***v);
/* A copy of the NULL-terminated v, its strings copied too. */
char **util_strvdup(char *const *v);

#define _cleanup_free_ __attribute__((cleanup(util_freep)))
#define _cleanup_close_ __attribute__((cleanup(util_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(util_fclosep)))
#define _cleanup_strv_ __attribute__((cleanup(util_strvfreep)))

#define steal_ptr(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })
#define steal_fd(fd) ({ int _t = (fd); (fd) = -1; _t; })
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Strict parsers: the whole string, a known unit, no overflow. */
int parse_duration_ms(const char *s, uint64_t *out, struct sbx_err *err);
int parse_size(const char *s, uint64_t *out, struct sbx_err *err);
int parse_count(const char *s, uint64_t min, uint64_t max, uint64_t *out, struct sbx_err *err);
/* CPUs as a decimal with up to three places, in thousandths. */
int parse_cpus_milli(const char *s, uint64_t *out, struct sbx_err *err);
/* Formats back for display ("30s", "512M"). */
void format_duration(uint64_t ms, char *buf, size_t size);
void format_size(uint64_t bytes, char *buf, size_t size);
/* For a listing: to a tenth of its unit ("237.1M", "512B"). */
void format_size_human(uint64_t bytes, char *buf, size_t size);
/* CLOCK_MONOTONIC in milliseconds. */
uint64_t now_ms(void);

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Writes all of buf, retrying on EINTR and short writes. */
int write_all(int fd, const void *buf, size_t len);
/* Reads a whole small file below dirfd (beneath it, no symlinks) into a
 * NUL-terminated buffer; at most max bytes. */
int read_file_beneath(int dirfd, const char *path, size_t max, char **out, size_t *len,
		      struct sbx_err *err);
/* mkdir -p of an absolute host path owned by the caller, mode for new parts. */
int mkdir_p(const char *path, mode_t mode, struct sbx_err *err);
/* Removes a tree below dirfd without following symlinks, fixing modes that
 * would stop it (a rootfs holds read-only directories). */
int rm_rf_at(int dirfd, const char *name, struct sbx_err *err);
/* Calls fn(dirfd, name, arg) for each entry of the directory dirfd but "."
 * and "..", until one returns nonzero, and returns that (or -1 with err
 * when the directory cannot be read). dirfd stays open, its offset
 * untouched. */
int dir_each(int dirfd, int (*fn)(int dirfd, const char *name, void *arg), void *arg,
	     struct sbx_err *err);
bool str_has_prefix(const char *s, const char *prefix);
/* The n bytes of d as 2n lower-case hex digits and a NUL in out. */
void hex_encode(const unsigned char *d, size_t n, char *out);

#endif
