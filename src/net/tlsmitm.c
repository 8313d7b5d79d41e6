/* tlsmitm.c - see tlsmitm.h. Each brokered connection is a thread with
 * blocking TLS on both sockets under one-second socket timeouts, so that
 * a stop or an idle deadline is seen within a second. Requests are read
 * with their framing (Content-Length, chunked) so that every head of a
 * kept-alive connection passes cred_rewrite; responses go down as they come. */
#define _GNU_SOURCE
#include "net/tlsmitm.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "base/util.h"
#include "net/httpreq.h"
#include "net/proxy_event.h"

#define IDLE_MS 300000
#define HANDSHAKE_MS 15000
#define CHUNK 16384

struct sbx_tlsmitm {
	struct sbx_tlsca *ca;
	const struct sbx_creds *cr;
	int events_fd;
	SSL_CTX *client;      /* upstream: verified against the host's CA bundle */
	int stopfd;           /* eventfd: readable once stopping */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	unsigned active;
	bool stop;
	struct job *jobs;     /* the running ones, under mu (tlsmitm_cut) */
};

/* What the next bytes from the sandbox are. */
enum req_state { R_HEAD, R_BODY, R_CHUNK_SIZE, R_CHUNK_DATA, R_TRAILER, R_RAW };

struct job {
	struct job *next, *prev;
	bool cut;             /* a rule no longer lets it through: it ends */
	struct sbx_tlsmitm *m;
	int cfd, ufd;
	char host[272];
	int port;
	SSL *cs, *us;
	char *buf;            /* from the sandbox, not yet sent on */
	size_t len;
	enum req_state st;
	uint64_t left;        /* R_BODY, R_CHUNK_DATA: bytes still to pass */
	uint64_t deadline;
};

static bool stopping(struct job *j)
{
	return __atomic_load_n(&j->m->stop, __ATOMIC_RELAXED) || __atomic_load_n(&j->cut, __ATOMIC_RELAXED) ||
	       now_ms() > j->deadline;
}

/* Whether a TLS call that returned r may be tried again (a socket
 * timeout, not an error). */
static bool again(struct job *j, SSL *s, int r)
{
	int e = SSL_get_error(s, r);
	return (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) && !stopping(j);
}

static bool write_all_ssl(struct job *j, SSL *s, const char *p, size_t n)
{
	while (n > 0) {
		int r = SSL_write(s, p, n > CHUNK ? CHUNK : (int)n);
		if (r <= 0 && again(j, s, r))
			continue;
		if (r <= 0)
			return false;
		p += r;
		n -= (size_t)r;
	}
	return true;
}

static void answer(struct job *j, int status, const char *why)
{
	char body[600], msg[900];
	int bn = snprintf(body, sizeof(body), "sbxrun: %s\n", why);
	int n = snprintf(msg, sizeof(msg), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nConnection: close\r\n"
			 "Content-Length: %d\r\n\r\n%s", status, status == 403 ? "Forbidden" : "Bad Gateway", bn, body);
	write_all_ssl(j, j->cs, msg, (size_t)n);
}

static bool header_value(const char *head, size_t len, const char *name, char *out, size_t size)
{
	size_t k = strlen(name);
	for (const char *p = memmem(head, len, "\r\n", 2); p && p + 2 < head + len; p = memmem(p + 2, (size_t)(head + len - p - 2), "\r\n", 2)) {
		const char *l = p + 2;
		if ((size_t)(head + len - l) > k && l[k] == ':' && strncasecmp(l, name, k) == 0) {
			l += k + 1;
			l += strspn(l, " \t");
			snprintf(out, size, "%.*s", (int)strcspn(l, "\r\n"), l);
			return true;
		}
	}
	return false;
}

/* The body that follows a request head (RFC 9112 6.3: a request without
 * Content-Length or chunked has none). false: a framing refused. */
static bool frame(struct job *j, const char *head, size_t len)
{
	char v[64];
	char *end;

	j->st = R_HEAD;
	if (header_value(head, len, "Transfer-Encoding", v, sizeof(v))) {
		if (strcasecmp(v, "chunked") != 0)
			return false;
		j->st = R_CHUNK_SIZE;
	} else if (header_value(head, len, "Content-Length", v, sizeof(v))) {
		errno = 0;
		unsigned long long n = strtoull(v, &end, 10);
		if (errno || end == v || *end)
			return false;
		j->left = n;
		j->st = n ? R_BODY : R_HEAD;
	}
	if (header_value(head, len, "Upgrade", v, sizeof(v)) || strncmp(head, "CONNECT ", 8) == 0)
		j->st = R_RAW; /* what follows is no longer HTTP/1.1 requests */
	return true;
}

/* One request head at j->buf: passed through cred_rewrite. */
static bool head_out(struct job *j, size_t hl)
{
	char *out = NULL;
	size_t olen = 0;
	const char *var = NULL, *why = NULL;
	enum cred_verdict v = cred_rewrite(j->m->cr, j->host, j->port, j->buf, hl, &out, &olen, &var);
	char msg[300];

	if (v == CRED_REFUSED) {
		proxy_event_credential(j->m->events_fd, var, j->host, j->port, "refused");
		snprintf(msg, sizeof(msg), "the placeholder of %s is not for this request (it is bound to another host "
			 "or path, and never goes in a URL)", var);
		answer(j, 403, msg);
		return false;
	}
	if (!frame(j, j->buf, hl))
		why = "a request framing the credential broker does not read (Transfer-Encoding other than chunked)";
	if (why) {
		answer(j, 403, why);
		free(out);
		return false;
	}
	if (v == CRED_USED)
		proxy_event_credential(j->m->events_fd, var, j->host, j->port, "used");
	bool ok = v == CRED_USED ? write_all_ssl(j, j->us, out, olen) : write_all_ssl(j, j->us, j->buf, hl);
	if (out) {
		explicit_bzero(out, olen);
		free(out);
	}
	return ok;
}

static void consume(struct job *j, size_t n)
{
	memmove(j->buf, j->buf + n, j->len - n);
	j->len -= n;
}

/* Passes what of j->buf is whole on; false ends the connection. */
static bool pump_requests(struct job *j)
{
	for (;;) {
		if (j->st == R_HEAD) {
			char *e = memmem(j->buf, j->len, "\r\n\r\n", 4);
			if (!e && j->len >= HTTPREQ_MAX_HEAD) {
				answer(j, 403, "request head too large");
				return false;
			}
			if (!e)
				return true;
			size_t hl = (size_t)(e - j->buf) + 4;
			if (!head_out(j, hl))
				return false;
			consume(j, hl);
			continue;
		}
		if (j->st == R_BODY || j->st == R_CHUNK_DATA || j->st == R_RAW) {
			size_t n = j->st == R_RAW || j->left > j->len ? j->len : (size_t)j->left;
			if (n == 0)
				return true;
			if (!write_all_ssl(j, j->us, j->buf, n))
				return false;
			consume(j, n);
			if (j->st != R_RAW && (j->left -= n) == 0)
				j->st = j->st == R_BODY ? R_HEAD : R_CHUNK_SIZE;
			continue;
		}
		/* a chunk's size line, or a trailer line */
		char *e = memmem(j->buf, j->len, "\r\n", 2);
		if (!e)
			return j->len < 1024;
		size_t ll = (size_t)(e - j->buf) + 2;
		if (j->st == R_CHUNK_SIZE) {
			char *end;
			unsigned long long n = strtoull(j->buf, &end, 16);
			if (end == j->buf)
				return false;
			j->left = n + 2; /* its CRLF too */
			j->st = n ? R_CHUNK_DATA : R_TRAILER;
		} else if (ll == 2) {
			j->st = R_HEAD;
		}
		if (!write_all_ssl(j, j->us, j->buf, ll))
			return false;
		consume(j, ll);
	}
}

/* One read from s; false at its end or an error. */
static bool from(struct job *j, SSL *s, char *tmp, int *n)
{
	int one = 1;

	*n = SSL_read(s, tmp, CHUNK);
	/* ACK at once: a server that writes a head and then a body (Nagle on
	 * its side) would otherwise wait for the delayed ACK, 40 ms */
	setsockopt(SSL_get_fd(s), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof(one));
	if (*n > 0) {
		j->deadline = now_ms() + IDLE_MS;
		return true;
	}
	*n = 0;
	return again(j, s, -1);
}

static void relay(struct job *j)
{
	char tmp[CHUNK];
	int n;

	j->buf = xmalloc(HTTPREQ_MAX_HEAD + CHUNK);
	for (;;) {
		struct pollfd pf[3] = { { j->cfd, POLLIN, 0 }, { j->ufd, POLLIN, 0 }, { j->m->stopfd, POLLIN, 0 } };
		if (!SSL_pending(j->cs) && !SSL_pending(j->us) && poll(pf, 3, 1000) < 0 && errno != EINTR)
			break;
		if (stopping(j))
			break;
		if (SSL_pending(j->cs) || pf[0].revents) {
			if (!from(j, j->cs, tmp, &n))
				break;
			memcpy(j->buf + j->len, tmp, (size_t)n);
			j->len += (size_t)n;
			if (!pump_requests(j))
				break;
		}
		if (SSL_pending(j->us) || pf[1].revents) {
			if (!from(j, j->us, tmp, &n) || (n && !write_all_ssl(j, j->cs, tmp, (size_t)n)))
				break;
		}
	}
	explicit_bzero(j->buf, HTTPREQ_MAX_HEAD + CHUNK);
	explicit_bzero(tmp, sizeof(tmp));
	free(j->buf);
}

static bool handshake(struct job *j, SSL *s, bool server)
{
	for (;;) {
		int r = server ? SSL_accept(s) : SSL_connect(s);
		if (r == 1)
			return true;
		if (!again(j, s, r))
			return false;
	}
}

static bool upstream(struct job *j)
{
	char why[400];
	unsigned char a[16];
	bool literal = inet_pton(AF_INET, j->host, a) == 1 || inet_pton(AF_INET6, j->host, a) == 1;

	j->us = SSL_new(j->m->client);
	if (!j->us || SSL_set_fd(j->us, j->ufd) != 1 || SSL_set1_host(j->us, j->host) != 1 ||
	    (!literal && SSL_set_tlsext_host_name(j->us, j->host) != 1))
		return false;
	if (handshake(j, j->us, false))
		return true;
	long v = SSL_get_verify_result(j->us);
	snprintf(why, sizeof(why), "the upstream's TLS could not be verified: %s",
		 v != X509_V_OK ? X509_verify_cert_error_string(v) : "handshake failed");
	ERR_clear_error();
	proxy_event_decision_fd(j->m->events_fd, j->host, j->port, "refused", why);
	answer(j, 502, why);
	return false;
}

/* Blocking with one-second timeouts; no Nagle: a request head written
 * right after a handshake message must not wait for its ACK. */
static void timeouts(int fd)
{
	struct timeval tv = { 1, 0 };
	int one = 1, fl = fcntl(fd, F_GETFL);

	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void *job_main(void *arg)
{
	struct job *j = arg;
	struct sbx_err err;
	SSL_CTX *ctx = tlsca_server(j->m->ca, j->host, &err);

	timeouts(j->cfd);
	timeouts(j->ufd);
	j->deadline = now_ms() + HANDSHAKE_MS;
	j->cs = ctx ? SSL_new(ctx) : NULL;
	if (j->cs && SSL_set_fd(j->cs, j->cfd) == 1 && handshake(j, j->cs, true) && upstream(j)) {
		j->deadline = now_ms() + IDLE_MS;
		relay(j);
	}
	ERR_clear_error();
	if (j->us)
		SSL_free(j->us);
	if (j->cs)
		SSL_free(j->cs);
	close(j->cfd);
	close(j->ufd);
	struct sbx_tlsmitm *m = j->m;
	pthread_mutex_lock(&m->mu);
	if (j->prev)
		j->prev->next = j->next;
	else
		m->jobs = j->next;
	if (j->next)
		j->next->prev = j->prev;
	free(j);
	m->active--;
	pthread_cond_broadcast(&m->cv);
	pthread_mutex_unlock(&m->mu);
	return NULL;
}

/* The host's CA bundle, as the sandbox's ca = host finds it. */
static int client_ctx(struct sbx_tlsmitm *m, struct sbx_err *err)
{
	static const char *const known[] = { "/etc/ssl/certs/ca-certificates.crt",
					     "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem" };
	const char *env = getenv("SSL_CERT_FILE"), *file = NULL;

	if (env && env[0] == '/' && access(env, R_OK) == 0)
		file = env;
	for (size_t i = 0; !file && i < ARRAY_SIZE(known); i++)
		if (access(known[i], R_OK) == 0)
			file = known[i];
	m->client = SSL_CTX_new(TLS_client_method());
	if (!m->client || SSL_CTX_set_min_proto_version(m->client, TLS1_2_VERSION) != 1 ||
	    (file ? SSL_CTX_load_verify_locations(m->client, file, NULL) : SSL_CTX_set_default_verify_paths(m->client)) != 1 ||
	    SSL_CTX_set_alpn_protos(m->client, (const unsigned char *)"\x08http/1.1", 9) != 0) {
		ERR_clear_error();
		return err_set(err, 0, "credentials: cannot set up TLS to the upstreams (CA bundle %s)", file ? file : "default");
	}
	SSL_CTX_set_verify(m->client, SSL_VERIFY_PEER, NULL);
	return 0;
}

int tlsmitm_new(struct sbx_tlsca *ca, const struct sbx_creds *cr, int events_fd, struct sbx_tlsmitm **out,
		struct sbx_err *err)
{
	struct sbx_tlsmitm *m = xcalloc(1, sizeof(*m));

	m->ca = ca;
	m->cr = cr;
	m->events_fd = events_fd;
	pthread_mutex_init(&m->mu, NULL);
	pthread_cond_init(&m->cv, NULL);
	m->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (m->stopfd < 0) {
		free(m);
		return err_sys(err, "credentials: eventfd");
	}
	if (client_ctx(m, err) < 0) {
		tlsmitm_free(m);
		return -1;
	}
	*out = m;
	return 0;
}

int tlsmitm_start(struct sbx_tlsmitm *m, int cfd, int ufd, const char *host, int port, struct sbx_err *err)
{
	struct job *j = xcalloc(1, sizeof(*j));
	pthread_attr_t at;
	pthread_t t;

	j->m = m;
	j->cfd = cfd;
	j->ufd = ufd;
	j->port = port;
	snprintf(j->host, sizeof(j->host), "%s", host);
	pthread_mutex_lock(&m->mu);
	m->active++;
	j->next = m->jobs;
	if (m->jobs)
		m->jobs->prev = j;
	m->jobs = j;
	pthread_mutex_unlock(&m->mu);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 256 * 1024);
	int r = pthread_create(&t, &at, job_main, j);
	pthread_attr_destroy(&at);
	if (r != 0) {
		close(cfd);
		close(ufd);
		pthread_mutex_lock(&m->mu);
		m->jobs = j->next;
		if (j->next)
			j->next->prev = NULL;
		m->active--;
		pthread_mutex_unlock(&m->mu);
		free(j);
		return err_set(err, r, "credentials: pthread_create");
	}
	return 0;
}

void tlsmitm_cut(struct sbx_tlsmitm *m, bool (*cut)(void *arg, const char *host, int port), void *arg)
{
	pthread_mutex_lock(&m->mu);
	for (struct job *j = m->jobs; j; j = j->next)
		if (!__atomic_load_n(&j->cut, __ATOMIC_RELAXED) && cut(arg, j->host, j->port))
			__atomic_store_n(&j->cut, true, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&m->mu);
}

void tlsmitm_free(struct sbx_tlsmitm *m)
{
	struct timespec until;
	uint64_t one = 1;

	if (!m)
		return;
	__atomic_store_n(&m->stop, true, __ATOMIC_RELAXED);
	(void)!write(m->stopfd, &one, sizeof(one));
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 3;
	pthread_mutex_lock(&m->mu);
	while (m->active && pthread_cond_timedwait(&m->cv, &m->mu, &until) == 0)
		;
	unsigned left = m->active;
	pthread_mutex_unlock(&m->mu);
	if (left)
		return; /* a thread still holds it: the process ends soon anyway */
	SSL_CTX_free(m->client);
	close(m->stopfd);
	free(m);
}
