/* tlsca.c - see tlsca.h: the per-sandbox CA and its leaves (OpenSSL 3,
 * libssl and libcrypto loaded on first use: base/lazylib.c). */
#define _GNU_SOURCE
#include "net/tlsca.h"

#include <arpa/inet.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "base/lazylib.h"
#include "base/util.h"

#define CA_DAYS 30
#define LEAF_DAYS 7
#define MAX_LEAVES 64

struct leaf {
	char host[272];
	SSL_CTX *ctx;
};

struct sbx_tlsca {
	EVP_PKEY *key;       /* the CA's */
	X509 *cert;
	EVP_PKEY *leaf_key;  /* one for every leaf of this sandbox */
	char *pem;
	pthread_mutex_t mu;
	struct leaf leaves[MAX_LEAVES];
	size_t nleaves;
};

static int ssl_fail(struct sbx_err *err, const char *what)
{
	char buf[256] = "";
	unsigned long e = ERR_get_error();

	if (e)
		ERR_error_string_n(e, buf, sizeof(buf));
	ERR_clear_error();
	return err_set(err, 0, "%s: %s", what, buf[0] ? buf : "OpenSSL failed");
}

static EVP_PKEY *p256(void)
{
	EVP_PKEY *k = NULL;
	EVP_PKEY_CTX *c = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);

	if (c && EVP_PKEY_keygen_init(c) > 0 && EVP_PKEY_CTX_set_group_name(c, "P-256") > 0)
		EVP_PKEY_generate(c, &k);
	EVP_PKEY_CTX_free(c);
	return k;
}

static bool add_ext(X509 *x, X509 *issuer, int nid, const char *value)
{
	X509V3_CTX v3;
	X509V3_set_ctx(&v3, issuer, x, NULL, NULL, 0);
	X509_EXTENSION *e = X509V3_EXT_conf_nid(NULL, &v3, nid, value);
	bool ok = e && X509_add_ext(x, e, -1) == 1;
	X509_EXTENSION_free(e);
	return ok;
}

/* A certificate for key named cn, valid from an hour ago for days. */
static X509 *cert_new(EVP_PKEY *key, const char *cn, int days)
{
	uint64_t serial;
	X509 *x = X509_new();

	if (!x || getrandom(&serial, sizeof(serial), 0) != sizeof(serial))
		goto fail;
	serial &= ~(UINT64_C(1) << 63); /* positive */
	if (X509_set_version(x, 2) != 1 || ASN1_INTEGER_set_uint64(X509_get_serialNumber(x), serial | 1) != 1 ||
	    !X509_gmtime_adj(X509_getm_notBefore(x), -3600) ||
	    !X509_gmtime_adj(X509_getm_notAfter(x), (long)days * 86400) || X509_set_pubkey(x, key) != 1 ||
	    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC, (const unsigned char *)cn,
				       -1, -1, 0) != 1)
		goto fail;
	return x;
fail:
	X509_free(x);
	return NULL;
}

/* "DNS:name", or an IP literal as "IP:addr" (with a full mask for a
 * name constraint). */
static void general_name(const char *host, bool constraint, char *out, size_t size)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, host, a) == 1)
		snprintf(out, size, "IP:%s%s", host, constraint ? "/255.255.255.255" : "");
	else if (inet_pton(AF_INET6, host, a) == 1)
		snprintf(out, size, "IP:%s%s", host, constraint ? "/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff" : "");
	else
		snprintf(out, size, "DNS:%s", host);
}

static int make_ca(struct sbx_tlsca *ca, const char *const *hosts, struct sbx_err *err)
{
	char nc[4096] = "critical", gn[320];

	for (size_t i = 0; hosts[i]; i++) {
		general_name(hosts[i], true, gn, sizeof(gn));
		if (strlen(nc) + strlen(gn) + 12 >= sizeof(nc))
			return err_set(err, 0, "credentials: too many hosts for one CA");
		strcat(nc, ",permitted;");
		strcat(nc, gn);
	}
	ca->key = p256();
	ca->leaf_key = p256();
	if (!ca->key || !ca->leaf_key)
		return ssl_fail(err, "credentials: P-256 key");
	ca->cert = cert_new(ca->key, "sbxrun credential broker (this sandbox only)", CA_DAYS);
	if (!ca->cert || X509_set_issuer_name(ca->cert, X509_get_subject_name(ca->cert)) != 1 ||
	    !add_ext(ca->cert, ca->cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
	    !add_ext(ca->cert, ca->cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
	    !add_ext(ca->cert, ca->cert, NID_subject_key_identifier, "hash") ||
	    !add_ext(ca->cert, ca->cert, NID_name_constraints, nc) ||
	    X509_sign(ca->cert, ca->key, EVP_sha256()) <= 0)
		return ssl_fail(err, "credentials: the CA certificate");
	return 0;
}

static int make_pem(struct sbx_tlsca *ca, struct sbx_err *err)
{
	BIO *b = BIO_new(BIO_s_mem());
	char *data = NULL;
	long n;

	if (!b || PEM_write_bio_X509(b, ca->cert) != 1 || (n = BIO_get_mem_data(b, &data)) <= 0) {
		BIO_free(b);
		return ssl_fail(err, "credentials: PEM");
	}
	ca->pem = xmalloc((size_t)n + 1);
	memcpy(ca->pem, data, (size_t)n);
	ca->pem[n] = '\0';
	BIO_free(b);
	return 0;
}

int tlsca_new(const char *const *hosts, struct sbx_tlsca **out, struct sbx_err *err)
{
	struct sbx_tlsca *ca;

	if (lazylib_load(SBX_LIBSSL, err) < 0)
		return err_wrap(err, "credentials");
	ca = xcalloc(1, sizeof(*ca));
	pthread_mutex_init(&ca->mu, NULL);
	if (make_ca(ca, hosts, err) < 0 || make_pem(ca, err) < 0) {
		tlsca_free(ca);
		return -1;
	}
	*out = ca;
	return 0;
}

const char *tlsca_pem(const struct sbx_tlsca *ca)
{
	return ca->pem;
}

/* Offers HTTP/1.1 alone: the broker reads HTTP/1.1 requests. */
static int alpn_select(SSL *s, const unsigned char **out, unsigned char *outlen, const unsigned char *in,
		       unsigned int inlen, void *arg)
{
	(void)s;
	(void)arg;
	for (unsigned i = 0; i < inlen; i += 1u + in[i])
		if (in[i] == 8 && i + 9 <= inlen && memcmp(in + i + 1, "http/1.1", 8) == 0) {
			*out = in + i + 1;
			*outlen = 8;
			return SSL_TLSEXT_ERR_OK;
		}
	return SSL_TLSEXT_ERR_NOACK;
}

static SSL_CTX *leaf_ctx(struct sbx_tlsca *ca, const char *host, struct sbx_err *err)
{
	char san[320];
	X509 *x = cert_new(ca->leaf_key, host, LEAF_DAYS);
	SSL_CTX *ctx = NULL;

	general_name(host, false, san, sizeof(san));
	if (!x || X509_set_issuer_name(x, X509_get_subject_name(ca->cert)) != 1 ||
	    !add_ext(x, ca->cert, NID_basic_constraints, "critical,CA:FALSE") ||
	    !add_ext(x, ca->cert, NID_key_usage, "critical,digitalSignature") ||
	    !add_ext(x, ca->cert, NID_ext_key_usage, "serverAuth") ||
	    !add_ext(x, ca->cert, NID_authority_key_identifier, "keyid:always") ||
	    !add_ext(x, ca->cert, NID_subject_alt_name, san) || X509_sign(x, ca->key, EVP_sha256()) <= 0)
		goto fail;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx || SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_use_certificate(ctx, x) != 1 || SSL_CTX_use_PrivateKey(ctx, ca->leaf_key) != 1)
		goto fail;
	SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
	X509_free(x);
	return ctx;
fail:
	X509_free(x);
	SSL_CTX_free(ctx);
	ssl_fail(err, "credentials: a certificate for the bound host");
	return NULL;
}

SSL_CTX *tlsca_server(struct sbx_tlsca *ca, const char *host, struct sbx_err *err)
{
	SSL_CTX *ctx = NULL;

	pthread_mutex_lock(&ca->mu);
	for (size_t i = 0; i < ca->nleaves && !ctx; i++)
		if (strcmp(ca->leaves[i].host, host) == 0)
			ctx = ca->leaves[i].ctx;
	if (!ctx && ca->nleaves == MAX_LEAVES)
		err_set(err, 0, "credentials: more than %d hosts", MAX_LEAVES);
	else if (!ctx && (ctx = leaf_ctx(ca, host, err))) {
		snprintf(ca->leaves[ca->nleaves].host, sizeof(ca->leaves[0].host), "%s", host);
		ca->leaves[ca->nleaves++].ctx = ctx;
	}
	pthread_mutex_unlock(&ca->mu);
	return ctx;
}

void tlsca_free(struct sbx_tlsca *ca)
{
	if (!ca)
		return;
	for (size_t i = 0; i < ca->nleaves; i++)
		SSL_CTX_free(ca->leaves[i].ctx);
	X509_free(ca->cert);
	EVP_PKEY_free(ca->key);
	EVP_PKEY_free(ca->leaf_key);
	free(ca->pem);
	pthread_mutex_destroy(&ca->mu);
	free(ca);
}
