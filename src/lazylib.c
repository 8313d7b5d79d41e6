/* lazylib.c - libarchive, libcurl and libcrypto are loaded on first use.
 * Linked normally, they would be mapped and relocated at every start: with
 * their dependencies (libxml2, ICU, TLS, LDAP...) that cost more than the
 * whole sandbox start (`run` measured 5.0 ms against bwrap's 3.4 ms). The
 * wrappers below keep the libraries' own prototypes (from their headers,
 * so the compiler checks each one) and forward to the real function. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <stdio.h>
#include <unistd.h>

#define LIBARCHIVE "libarchive.so.13"

static void *lazy_sym(const char *lib, const char *name)
{
	static struct { const char *lib; void *h; } libs[4];
	void *h = NULL;
	size_t i;

	for (i = 0; i < 4 && libs[i].lib; i++)
		if (libs[i].lib == lib)
			h = libs[i].h;
	if (!h) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "sbxrun: error: cannot load %s: %s\n", lib, dlerror());
			_exit(125);
		}
		if (i < 4)
			libs[i].lib = lib, libs[i].h = h;
	}
	void *f = dlsym(h, name);
	if (!f) {
		fprintf(stderr, "sbxrun: error: %s has no '%s'\n", lib, name);
		_exit(125);
	}
	return f;
}

#define LAZY(lib, ret, name, params, args)                                   \
	ret name params                                                       \
	{                                                                     \
		static ret(*fn) params;                                       \
		if (!fn)                                                      \
			fn = (ret(*) params)lazy_sym(lib, #name);             \
		return fn args;                                               \
	}
#define LAZY_VOID(lib, name, params, args)                                   \
	void name params                                                      \
	{                                                                     \
		static void(*fn) params;                                      \
		if (!fn)                                                      \
			fn = (void(*) params)lazy_sym(lib, #name);            \
		fn args;                                                      \
	}

/* libarchive */
#define A LIBARCHIVE
typedef struct archive ar;
typedef struct archive_entry ae;
LAZY(A, ar *, archive_write_new, (void), ())
LAZY(A, int, archive_write_free, (ar *a), (a))
LAZY(A, int, archive_write_close, (ar *a), (a))
LAZY(A, int, archive_write_open_fd, (ar *a, int fd), (a, fd))
LAZY(A, int, archive_write_set_format_pax_restricted, (ar *a), (a))
LAZY(A, int, archive_write_add_filter_gzip, (ar *a), (a))
LAZY(A, int, archive_write_add_filter_xz, (ar *a), (a))
LAZY(A, int, archive_write_add_filter_zstd, (ar *a), (a))
LAZY(A, int, archive_write_add_filter_none, (ar *a), (a))
LAZY(A, int, archive_write_header, (ar *a, ae *e), (a, e))
LAZY(A, la_ssize_t, archive_write_data, (ar *a, const void *b, size_t n), (a, b, n))
LAZY(A, const char *, archive_error_string, (ar *a), (a))
LAZY(A, ae *, archive_entry_new, (void), ())
LAZY_VOID(A, archive_entry_free, (ae *e), (e))
LAZY_VOID(A, archive_entry_set_pathname, (ae *e, const char *p), (e, p))
LAZY_VOID(A, archive_entry_set_filetype, (ae *e, unsigned int t), (e, t))
LAZY_VOID(A, archive_entry_set_perm, (ae *e, __LA_MODE_T m), (e, m))
LAZY_VOID(A, archive_entry_set_uid, (ae *e, la_int64_t u), (e, u))
LAZY_VOID(A, archive_entry_set_gid, (ae *e, la_int64_t g), (e, g))
LAZY_VOID(A, archive_entry_set_mtime, (ae *e, time_t t, long ns), (e, t, ns))
LAZY_VOID(A, archive_entry_set_size, (ae *e, la_int64_t s), (e, s))
LAZY_VOID(A, archive_entry_set_symlink, (ae *e, const char *l), (e, l))
#undef A
