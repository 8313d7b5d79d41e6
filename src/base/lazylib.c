/* lazylib.c - libarchive, libcurl, libcrypto, zlib and libxml2 are loaded on first use.
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
#include <string.h>
#include <unistd.h>

#include "base/lazylib.h"

#define LIBARCHIVE SBX_LIBARCHIVE

/* The Debian package of each library (its t64 name on Debian 13 and
 * Ubuntu 24.04), for the one line that says what to install. */
static const struct { const char *lib, *pkg; } packages[] = {
	{ SBX_LIBARCHIVE, "libarchive13 (libarchive13t64 on Debian 13 and Ubuntu 24.04)" },
	{ SBX_LIBCURL, "libcurl4 (libcurl4t64 on Debian 13 and Ubuntu 24.04)" },
	{ SBX_LIBCRYPTO, "libssl3 (libssl3t64 on Debian 13 and Ubuntu 24.04)" },
	{ SBX_LIBSSL, "libssl3 (libssl3t64 on Debian 13 and Ubuntu 24.04)" },
	{ SBX_LIBXML2, "libxml2 (libxml2-16 on Debian 14)" },
};

static const char *package_of(const char *lib)
{
	for (size_t i = 0; i < sizeof(packages) / sizeof(packages[0]); i++)
		if (strcmp(packages[i].lib, lib) == 0)
			return packages[i].pkg;
	return "the package that holds it";
}

int lazylib_load(const char *lib, struct sbx_err *err)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (h)
		return 0;
	err_plain(err, 0, "cannot load %s (%s)", lib, dlerror());
	err_hint(err, "apt-get install %s", package_of(lib));
	return -1;
}

static void *lazy_sym(const char *lib, const char *name)
{
	static struct { const char *lib; void *h; } libs[8];
	void *h = NULL;
	size_t i;

	for (i = 0; i < 8 && libs[i].lib; i++)
		if (libs[i].lib == lib)
			h = libs[i].h;
	if (!h) {
		h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			struct sbx_err err = { 0 };
			lazylib_load(lib, &err);
			err_print(&err);
			_exit(125);
		}
		if (i < 8)
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
LAZY_VOID(A, archive_entry_sparse_add_entry, (ae *e, la_int64_t o, la_int64_t l), (e, o, l))
LAZY_VOID(A, archive_entry_set_hardlink, (ae *e, const char *l), (e, l))
LAZY(A, const char *, archive_entry_hardlink, (ae *e), (e))
LAZY(A, const char *, archive_entry_pathname, (ae *e), (e))
LAZY(A, __LA_MODE_T, archive_entry_filetype, (ae *e), (e))
LAZY(A, __LA_MODE_T, archive_entry_perm, (ae *e), (e))
LAZY(A, la_int64_t, archive_entry_size, (ae *e), (e))
LAZY(A, int, archive_errno, (ar *a), (a))
LAZY(A, ar *, archive_read_new, (void), ())
LAZY(A, int, archive_read_free, (ar *a), (a))
LAZY(A, int, archive_read_support_format_tar, (ar *a), (a))
LAZY(A, int, archive_read_support_filter_none, (ar *a), (a))
LAZY(A, int, archive_read_support_filter_gzip, (ar *a), (a))
LAZY(A, int, archive_read_support_filter_xz, (ar *a), (a))
LAZY(A, int, archive_read_support_filter_zstd, (ar *a), (a))
LAZY(A, int, archive_read_open_fd, (ar *a, int fd, size_t bs), (a, fd, bs))
LAZY(A, int, archive_read_next_header, (ar *a, ae **e), (a, e))
LAZY(A, int, archive_read_data_block, (ar *a, const void **b, size_t *n, la_int64_t *o), (a, b, n, o))
/* one compressed stream (the package gateway's Debian indexes) */
LAZY(A, int, archive_read_support_format_raw, (ar *a), (a))
LAZY(A, int, archive_read_support_format_zip_seekable, (ar *a), (a))
LAZY(A, int, archive_read_support_filter_all, (ar *a), (a))
LAZY(A, int, archive_read_open_memory, (ar *a, const void *b, size_t n), (a, b, n))
LAZY(A, la_ssize_t, archive_read_data, (ar *a, void *b, size_t n), (a, b, n))
LAZY(A, ar *, archive_write_disk_new, (void), ())
LAZY(A, int, archive_write_disk_set_options, (ar *a, int f), (a, f))
LAZY(A, int, archive_write_finish_entry, (ar *a), (a))
LAZY(A, la_ssize_t, archive_write_data_block, (ar *a, const void *b, size_t n, la_int64_t o), (a, b, n, o))
#undef A

/* libcurl: its two variadic entry points take one argument whose type the
 * option or info number encodes (as libcurl itself decodes it). */
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <stdarg.h>
#define C SBX_LIBCURL
LAZY(C, CURL *, curl_easy_init, (void), ())
LAZY_VOID(C, curl_easy_cleanup, (CURL *c), (c))
LAZY(C, CURLcode, curl_easy_perform, (CURL *c), (c))
LAZY(C, const char *, curl_easy_strerror, (CURLcode e), (e))
LAZY(C, CURLU *, curl_url, (void), ())
LAZY_VOID(C, curl_url_cleanup, (CURLU *u), (u))
LAZY(C, CURLUcode, curl_url_set, (CURLU *u, CURLUPart p, const char *s, unsigned int f), (u, p, s, f))
LAZY(C, CURLUcode, curl_url_get, (CURLU *u, CURLUPart p, char **s, unsigned int f), (u, p, s, f))
LAZY_VOID(C, curl_free, (void *p), (p))
LAZY(C, struct curl_slist *, curl_slist_append, (struct curl_slist *l, const char *s), (l, s))
LAZY_VOID(C, curl_slist_free_all, (struct curl_slist *l), (l))
/* the multi interface: the package gateway (src/gateway/) */
LAZY(C, CURLM *, curl_multi_init, (void), ())
LAZY(C, CURLMcode, curl_multi_cleanup, (CURLM *m), (m))
LAZY(C, CURLMcode, curl_multi_add_handle, (CURLM *m, CURL *c), (m, c))
LAZY(C, CURLMcode, curl_multi_remove_handle, (CURLM *m, CURL *c), (m, c))
LAZY(C, CURLMcode, curl_multi_socket_action, (CURLM *m, curl_socket_t s, int ev, int *running), (m, s, ev, running))
LAZY(C, CURLMsg *, curl_multi_info_read, (CURLM *m, int *left), (m, left))
LAZY(C, CURLMcode, curl_multi_assign, (CURLM *m, curl_socket_t s, void *p), (m, s, p))

CURLcode curl_easy_setopt(CURL *c, CURLoption o, ...)
{
	static CURLcode (*fn)(CURL *, CURLoption, ...);
	va_list ap;
	CURLcode r;

	if (!fn)
		fn = (CURLcode(*)(CURL *, CURLoption, ...))lazy_sym(C, "curl_easy_setopt");
	va_start(ap, o);
	if (o < CURLOPTTYPE_OBJECTPOINT)
		r = fn(c, o, va_arg(ap, long));
	else if (o >= CURLOPTTYPE_OFF_T && o < CURLOPTTYPE_BLOB)
		r = fn(c, o, va_arg(ap, curl_off_t));
	else
		r = fn(c, o, va_arg(ap, void *));
	va_end(ap);
	return r;
}

CURLcode curl_easy_getinfo(CURL *c, CURLINFO i, ...)
{
	static CURLcode (*fn)(CURL *, CURLINFO, ...);
	va_list ap;
	CURLcode r;

	if (!fn)
		fn = (CURLcode(*)(CURL *, CURLINFO, ...))lazy_sym(C, "curl_easy_getinfo");
	va_start(ap, i);
	r = fn(c, i, va_arg(ap, void *)); /* every info takes a pointer */
	va_end(ap);
	return r;
}

CURLMcode curl_multi_setopt(CURLM *m, CURLMoption o, ...)
{
	static CURLMcode (*fn)(CURLM *, CURLMoption, ...);
	va_list ap;
	CURLMcode r;

	if (!fn)
		fn = (CURLMcode(*)(CURLM *, CURLMoption, ...))lazy_sym(C, "curl_multi_setopt");
	va_start(ap, o);
	if (o < CURLOPTTYPE_OBJECTPOINT)
		r = fn(m, o, va_arg(ap, long));
	else
		r = fn(m, o, va_arg(ap, void *));
	va_end(ap);
	return r;
}
#undef C

/* libcrypto: SHA-256 for image digests and download checks, base64 and a
 * constant-time compare for the listen proxy's credentials */
#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#define O SBX_LIBCRYPTO
LAZY(O, EVP_MD_CTX *, EVP_MD_CTX_new, (void), ())
LAZY_VOID(O, EVP_MD_CTX_free, (EVP_MD_CTX *c), (c))
LAZY(O, const EVP_MD *, EVP_sha256, (void), ())
LAZY(O, const EVP_MD *, EVP_sha512, (void), ())
LAZY(O, const EVP_MD *, EVP_sha1, (void), ())
LAZY(O, int, EVP_DigestInit_ex, (EVP_MD_CTX *c, const EVP_MD *t, ENGINE *e), (c, t, e))
LAZY(O, int, EVP_DigestUpdate, (EVP_MD_CTX *c, const void *d, size_t n), (c, d, n))
LAZY(O, int, EVP_DigestFinal_ex, (EVP_MD_CTX *c, unsigned char *md, unsigned int *n), (c, md, n))
LAZY(O, int, EVP_EncodeBlock, (unsigned char *t, const unsigned char *f, int n), (t, f, n))
LAZY(O, int, EVP_DecodeBlock, (unsigned char *t, const unsigned char *f, int n), (t, f, n))
LAZY(O, int, CRYPTO_memcmp, (const void *a, const void *b, size_t n), (a, b, n))
/* the credential broker's CA and leaves (net/tlsca.c) */
LAZY(O, unsigned long, ERR_get_error, (void), ())
LAZY_VOID(O, ERR_error_string_n, (unsigned long e, char *b, size_t n), (e, b, n))
LAZY_VOID(O, ERR_clear_error, (void), ())
LAZY(O, EVP_PKEY_CTX *, EVP_PKEY_CTX_new_from_name, (OSSL_LIB_CTX *l, const char *n, const char *q), (l, n, q))
LAZY(O, int, EVP_PKEY_keygen_init, (EVP_PKEY_CTX *c), (c))
LAZY(O, int, EVP_PKEY_CTX_set_group_name, (EVP_PKEY_CTX *c, const char *n), (c, n))
LAZY(O, int, EVP_PKEY_generate, (EVP_PKEY_CTX *c, EVP_PKEY **k), (c, k))
LAZY_VOID(O, EVP_PKEY_CTX_free, (EVP_PKEY_CTX *c), (c))
LAZY_VOID(O, EVP_PKEY_free, (EVP_PKEY *k), (k))
LAZY_VOID(O, X509V3_set_ctx, (X509V3_CTX *c, X509 *i, X509 *s, X509_REQ *r, X509_CRL *l, int f), (c, i, s, r, l, f))
LAZY(O, X509_EXTENSION *, X509V3_EXT_conf_nid, (LHASH_OF(CONF_VALUE) *conf, X509V3_CTX *c, int nid, const char *v), (conf, c, nid, v))
LAZY(O, int, X509_add_ext, (X509 *x, X509_EXTENSION *e, int loc), (x, e, loc))
LAZY_VOID(O, X509_EXTENSION_free, (X509_EXTENSION *e), (e))
LAZY(O, X509 *, X509_new, (void), ())
LAZY_VOID(O, X509_free, (X509 *x), (x))
LAZY(O, int, X509_set_version, (X509 *x, long v), (x, v))
LAZY(O, ASN1_INTEGER *, X509_get_serialNumber, (X509 *x), (x))
LAZY(O, int, ASN1_INTEGER_set_uint64, (ASN1_INTEGER *a, uint64_t v), (a, v))
LAZY(O, ASN1_TIME *, X509_gmtime_adj, (ASN1_TIME *t, long adj), (t, adj))
LAZY(O, ASN1_TIME *, X509_getm_notBefore, (const X509 *x), (x))
LAZY(O, ASN1_TIME *, X509_getm_notAfter, (const X509 *x), (x))
LAZY(O, int, X509_set_pubkey, (X509 *x, EVP_PKEY *k), (x, k))
LAZY(O, X509_NAME *, X509_get_subject_name, (const X509 *x), (x))
LAZY(O, int, X509_set_issuer_name, (X509 *x, const X509_NAME *n), (x, n))
LAZY(O, int, X509_NAME_add_entry_by_txt, (X509_NAME *n, const char *f, int t, const unsigned char *b, int l, int loc, int set), (n, f, t, b, l, loc, set))
LAZY(O, int, X509_sign, (X509 *x, EVP_PKEY *k, const EVP_MD *md), (x, k, md))
LAZY(O, const char *, X509_verify_cert_error_string, (long n), (n))
LAZY(O, BIO *, BIO_new, (const BIO_METHOD *t), (t))
LAZY(O, const BIO_METHOD *, BIO_s_mem, (void), ())
LAZY(O, long, BIO_ctrl, (BIO *b, int cmd, long l, void *p), (b, cmd, l, p))
LAZY(O, int, BIO_free, (BIO *b), (b))
LAZY(O, int, PEM_write_bio_X509, (BIO *b, const X509 *x), (b, x))
/* ed25519: the Go checksum database's signed notes (pkg/gosum.c) */
LAZY(O, EVP_PKEY *, EVP_PKEY_new_raw_public_key, (int t, ENGINE *e, const unsigned char *k, size_t n), (t, e, k, n))
LAZY(O, int, EVP_DigestVerifyInit, (EVP_MD_CTX *c, EVP_PKEY_CTX **p, const EVP_MD *t, ENGINE *e, EVP_PKEY *k),
     (c, p, t, e, k))
LAZY(O, int, EVP_DigestVerify, (EVP_MD_CTX *c, const unsigned char *s, size_t sn, const unsigned char *m, size_t mn),
     (c, s, sn, m, mn))
#undef O

/* libssl: the credential broker's TLS (net/tlsca.c, net/tlsmitm.c) */
#include <openssl/ssl.h>
#define S SBX_LIBSSL
LAZY(S, const SSL_METHOD *, TLS_server_method, (void), ())
LAZY(S, const SSL_METHOD *, TLS_client_method, (void), ())
LAZY(S, SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *m), (m))
LAZY_VOID(S, SSL_CTX_free, (SSL_CTX *c), (c))
LAZY(S, long, SSL_CTX_ctrl, (SSL_CTX *c, int cmd, long l, void *p), (c, cmd, l, p))
LAZY(S, int, SSL_CTX_use_certificate, (SSL_CTX *c, X509 *x), (c, x))
LAZY(S, int, SSL_CTX_use_PrivateKey, (SSL_CTX *c, EVP_PKEY *k), (c, k))
LAZY_VOID(S, SSL_CTX_set_alpn_select_cb, (SSL_CTX *c, SSL_CTX_alpn_select_cb_func cb, void *a), (c, cb, a))
LAZY(S, int, SSL_CTX_set_alpn_protos, (SSL_CTX *c, const unsigned char *p, unsigned int n), (c, p, n))
LAZY(S, int, SSL_CTX_load_verify_locations, (SSL_CTX *c, const char *f, const char *d), (c, f, d))
LAZY(S, int, SSL_CTX_set_default_verify_paths, (SSL_CTX *c), (c))
LAZY_VOID(S, SSL_CTX_set_verify, (SSL_CTX *c, int mode, SSL_verify_cb cb), (c, mode, cb))
LAZY(S, SSL *, SSL_new, (SSL_CTX *c), (c))
LAZY_VOID(S, SSL_free, (SSL *s), (s))
LAZY(S, int, SSL_set_fd, (SSL *s, int fd), (s, fd))
LAZY(S, int, SSL_get_fd, (const SSL *s), (s))
LAZY(S, int, SSL_set1_host, (SSL *s, const char *h), (s, h))
LAZY(S, long, SSL_ctrl, (SSL *s, int cmd, long l, void *p), (s, cmd, l, p))
LAZY(S, int, SSL_accept, (SSL *s), (s))
LAZY(S, int, SSL_connect, (SSL *s), (s))
LAZY(S, int, SSL_read, (SSL *s, void *b, int n), (s, b, n))
LAZY(S, int, SSL_write, (SSL *s, const void *b, int n), (s, b, n))
LAZY(S, int, SSL_pending, (const SSL *s), (s))
LAZY(S, int, SSL_get_error, (const SSL *s, int r), (s, r))
LAZY(S, long, SSL_get_verify_result, (const SSL *s), (s))
#undef S

/* zlib: the deflated data of a binary file in `changes export --patch`
 * (git's binary patch format) */
#include <zlib.h>
#define Z "libz.so.1"
LAZY(Z, int, deflateInit_, (z_streamp s, int level, const char *version, int size), (s, level, version, size))
LAZY(Z, int, deflate, (z_streamp s, int flush), (s, flush))
LAZY(Z, int, deflateEnd, (z_streamp s), (s))
#undef Z

/* libxml2: Maven's maven-metadata.xml (pkg/mavenmeta.c); it brings ICU */
#include <libxml/parser.h>
#define X SBX_LIBXML2
LAZY(X, xmlDocPtr, xmlReadMemory, (const char *b, int n, const char *url, const char *enc, int opt),
     (b, n, url, enc, opt))
LAZY_VOID(X, xmlFreeDoc, (xmlDocPtr d), (d))
LAZY_VOID(X, xmlSetGenericErrorFunc, (void *c, xmlGenericErrorFunc f), (c, f))
LAZY_VOID(X, xmlSetStructuredErrorFunc, (void *c, xmlStructuredErrorFunc f), (c, f))
#undef X
