/* test_proxy.c - the egress proxy end to end on loopback: a door socket as
 * the sandbox would make, a tiny origin server, and real requests. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/proxy.h"
#include "unit.h"
#include "base/util.h"

static int origin_port, door_port;
static volatile int stop;
static char last_request[4096];
static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;

static int listen_loopback(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		abort();
	*port = ntohs(a.sin_port);
	return fd;
}

/* "PING..." is echoed until EOF (for CONNECT); anything else gets "hello". */
static void *origin(void *arg)
{
	int lfd = *(int *)arg;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		char buf[4096];
		ssize_t n, got = 0;
		if (fd < 0)
			return NULL;
		while ((n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0) {
			got += n;
			buf[got] = 0;
			if (strncmp(buf, "PING", 4) == 0) {
				(void)!write(fd, buf + got - n, (size_t)n);
				continue;
			}
			if (strstr(buf, "\r\n\r\n"))
				break;
		}
		if (got > 0 && strstr(buf, " /big ")) {
			static char chunk[65536];
			const char hdr[] = "HTTP/1.1 200 OK\r\nContent-Length: 8388608\r\n\r\n";
			(void)!write(fd, hdr, sizeof(hdr) - 1);
			for (int i = 0; i < 128; i++)
				if (write_all(fd, chunk, sizeof(chunk)) < 0)
					break;
		} else if (got > 0 && strncmp(buf, "PING", 4) != 0) {
			const char resp[] = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
			pthread_mutex_lock(&last_lock);
			snprintf(last_request, sizeof(last_request), "%s", buf);
			pthread_mutex_unlock(&last_lock);
			(void)!write(fd, resp, sizeof(resp) - 1);
		}
		close(fd);
	}
}

static void *run_proxy(void *arg)
{
	struct sbx_proxy *p = arg;
	struct pollfd pfd = { .fd = proxy_pollfd(p), .events = POLLIN };
	while (!stop) {
		if (poll(&pfd, 1, 50) > 0)
			proxy_dispatch(p);
	}
	return NULL;
}

/* Sends req (and more, after a CONNECT's 200) and reads until EOF. */
static char *ask(const char *req, size_t len, const char *more)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)door_port) };
	struct timeval tv = { 5, 0 };
	char *out = xcalloc(1, 65536);
	size_t got = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write(fd, req, len) != (ssize_t)len)
		abort();
	if (more) {
		while (!strstr(out, "\r\n\r\n") && (n = read(fd, out + got, 65535 - got)) > 0)
			got += (size_t)n;
		(void)!write(fd, more, strlen(more));
		shutdown(fd, SHUT_WR);  /* half-close: the echo must still come back */
	} else {
		shutdown(fd, SHUT_WR);  /* request and EOF in one go, as `printf | nc` */
	}
	while (got < 65535 && (n = read(fd, out + got, 65535 - got)) > 0)
		got += (size_t)n;
	close(fd);
	return out;
}

static char *asks(const char *req)
{
	return ask(req, strlen(req), NULL);
}

static void expect(const char *req, const char *status, const char *also)
{
	char *r = asks(req);
	CHECK_CONTAINS(r, status);
	if (also)
		CHECK_CONTAINS(r, also);
	free(r);
}

static void test_allowed(void)
{
	char req[256];
	snprintf(req, sizeof(req), "GET http://HOST.sbxrun.internal.:%d/pool/x.deb HTTP/1.1\r\n"
		 "Host: evil.test\r\nProxy-Connection: keep-alive\r\n\r\n", origin_port);
	expect(req, "HTTP/1.1 200 OK", "hello");
	pthread_mutex_lock(&last_lock);
	CHECK_CONTAINS(last_request, "GET /pool/x.deb HTTP/1.1\r\n");
	snprintf(req, sizeof(req), "Host: HOST.sbxrun.internal.:%d\r\n", origin_port);
	CHECK_CONTAINS(last_request, req);
	CHECK_CONTAINS(last_request, "Connection: close\r\n");
	CHECK(!strstr(last_request, "evil.test"));
	CHECK(!strstr(last_request, "Proxy-Connection"));
	pthread_mutex_unlock(&last_lock);

	snprintf(req, sizeof(req), "CONNECT host.sbxrun.internal:%d HTTP/1.1\r\n\r\n", origin_port);
	char *r = ask(req, strlen(req), "PING through the tunnel");
	CHECK_CONTAINS(r, "HTTP/1.1 200 Connection established\r\n\r\nPING through the tunnel");
	free(r);
}

/* 8 MiB through the spliced relay, all of it, in order of arrival. */
static void test_big(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)door_port) };
	struct timeval tv = { 10, 0 };
	char req[128], buf[65536];
	size_t total = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(req, sizeof(req), "GET http://host.sbxrun.internal:%d/big HTTP/1.1\r\n\r\n", origin_port);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write_all(fd, req, strlen(req)) < 0)
		abort();
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	close(fd);
	if (total != 8388608 + 44)
		fprintf(stderr, "big: got %zu\n", total);
	CHECK(total == 8388608 + 44);

	/* A client that hangs up mid-download must not take the proxy down. */
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write_all(fd, req, strlen(req)) < 0)
		abort();
	CHECK(read(fd, buf, 1000) > 0);
	close(fd);
	usleep(200000);
	snprintf(req, sizeof(req), "GET http://host.sbxrun.internal:%d/ HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "200 OK", "hello");
}

static void test_refused(void)
{
	char req[256];
	expect("GET http://evil.test/ HTTP/1.1\r\n\r\n", "HTTP/1.1 403",
	       "X-Sbxrun-Refused: profile=testprof; host=evil.test");
	expect("CONNECT allowed.example.test.evil.test:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "not in profile");
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "HTTP/1.1 403", "loopback");
	snprintf(req, sizeof(req), "CONNECT localhost:%d HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "HTTP/1.1 403", "loopback");  /* after a real lookup */
	expect("CONNECT [::1]:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", NULL);
	expect("GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "metadata");
	expect("CONNECT 2130706433:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "numeric");
	expect("CONNECT 0x7f.1:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", NULL);
	expect("CONNECT host.sbxrun.internal:1 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", "port");
	expect("CONNECT host.sbxrun.internal:443 HTTP/1.1\r\n\r\n", "HTTP/1.1 403", NULL);
	expect("GET /index.html HTTP/1.1\r\nHost: allowed.example.test\r\n\r\n", "HTTP/1.1 400", "origin-form");
	expect("GET http://user@allowed.example.test/ HTTP/1.1\r\n\r\n", "HTTP/1.1 400", "userinfo");
}

static void test_garbage(void)
{
	char junk[3000];
	unsigned seed = 42;
	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (char)(rand_r(&seed) & 0xff);
		if (round % 2)
			memcpy(junk, "CONNECT ", 8);
		junk[sizeof(junk) - 4] = '\r', junk[sizeof(junk) - 3] = '\n';
		junk[sizeof(junk) - 2] = '\r', junk[sizeof(junk) - 1] = '\n';
		char *r = ask(junk, sizeof(junk), NULL);
		CHECK_CONTAINS(r, "HTTP/1.1 400");
		free(r);
	}
	/* Still serving after all that. */
	char req[128];
	snprintf(req, sizeof(req), "GET http://host.sbxrun.internal:%d/ HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "200 OK", "hello");
}

static char chain_request[4096];
#define CONN1 "CONNECT 203.0.113.5:443 HTTP/1.1\r\n\r\n"
#define CONN2 "CONNECT nowhere.example.test:443 HTTP/1.1\r\n\r\n"

/* A stand-in upstream proxy: records the CONNECT, says 200, then echoes. */
static void *fake_upstream(void *arg)
{
	int lfd = *(int *)arg;
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		char buf[4096] = "";
		ssize_t n, got = 0;
		if (fd < 0)
			return NULL;
		while (!strstr(buf, "\r\n\r\n") && (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0) {
			got += n;
			buf[got] = 0;
		}
		pthread_mutex_lock(&last_lock);
		snprintf(chain_request, sizeof(chain_request), "%s", buf);
		pthread_mutex_unlock(&last_lock);
		(void)!write(fd, "HTTP/1.1 200 OK\r\n\r\n", 19);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			(void)!write(fd, buf, (size_t)n);
		close(fd);
		buf[0] = 0;
	}
}

static void test_chain(const struct sbx_proxy_conf *conf0, pthread_t *pt, struct sbx_proxy **out)
{
	int ufd_port, ufd = listen_loopback(&ufd_port), dfd = listen_loopback(&door_port);
	struct sbx_proxy_conf conf = *conf0;
	struct sbx_err err;
	pthread_t ut;
	char url[64], req[128];

	snprintf(url, sizeof(url), "http://user:pw@127.0.0.1:%d/", ufd_port);
	setenv("https_proxy", url, 1);
	conf.events_fd = -1;
	CHECK(proxy_new(&conf, dfd, out, &err) == 0);
	unsetenv("https_proxy");
	pthread_create(&ut, NULL, fake_upstream, &ufd);
	pthread_create(pt, NULL, run_proxy, *out);

	char *r = ask(CONN1, strlen(CONN1), "PING chained");
	CHECK_CONTAINS(r, "200 Connection established\r\n\r\nPING chained");
	free(r);
	pthread_mutex_lock(&last_lock);
	CHECK_CONTAINS(chain_request, "CONNECT 203.0.113.5:443 HTTP/1.1\r\n");
	CHECK_CONTAINS(chain_request, "Proxy-Authorization: Basic dXNlcjpwdw==\r\n");
	pthread_mutex_unlock(&last_lock);
	/* Unresolvable here: the upstream proxy is asked by name. */
	r = ask(CONN2, strlen(CONN2), "PING");
	CHECK_CONTAINS(r, "200 Connection established");
	free(r);
	pthread_mutex_lock(&last_lock);
	CHECK_CONTAINS(chain_request, "CONNECT nowhere.example.test:443 HTTP/1.1\r\n");
	pthread_mutex_unlock(&last_lock);
	snprintf(req, sizeof(req), "CONNECT localhost:%d HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "HTTP/1.1 403", "loopback");
	/* The host's own loopback is never sent upstream. */
	snprintf(req, sizeof(req), "GET http://host.sbxrun.internal:%d/ HTTP/1.1\r\n\r\n", origin_port);
	expect(req, "200 OK", "hello");
}

/* A TCP connection to port from the loopback address 127.0.0.src. */
static int dial_from(int port, int src)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(0x7f000000u | (unsigned)src) };
	struct timeval tv = { 5, 0 };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (fd < 0 || bind(fd, (struct sockaddr *)&me, sizeof(me)) < 0 ||
	    connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0)
		abort();
	return fd;
}

/* Whether the proxy closed fd (EOF or reset waiting), without blocking. */
static int closed(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char c;
	if (poll(&pfd, 1, 0) <= 0)
		return 0;
	return recv(fd, &c, 1, MSG_DONTWAIT) <= 0;
}

static char *ask_from(int port, int src, const char *req)
{
	char *out = xcalloc(1, 65536);
	size_t got = 0;
	ssize_t n;
	int fd = dial_from(port, src);

	if (write_all(fd, req, strlen(req)) < 0)
		abort();
	while (got < 65535 && (n = read(fd, out + got, 65535 - got)) > 0)
		got += (size_t)n;
	close(fd);
	return out;
}

/* The --listen shape: a per-peer cap that sheds that peer's oldest idle
 * connection, a total cap that sheds the oldest idle one of anyone, the
 * head timeout, and the shared secret. */
static void test_hold_the_line(const struct sbx_proxy_conf *conf0)
{
	struct sbx_proxy_conf conf = *conf0;
	struct sbx_proxy *p;
	struct sbx_err err;
	pthread_t t;
	int port, lfd = listen_loopback(&port), one[6], two[4], three;
	char req[256];

	conf.events_fd = -1;
	conf.max_conns = 8;
	conf.max_per_peer = 4;
	conf.head_timeout_ms = 300;
	conf.auth = "sbx:s3cret:pw";
	CHECK(proxy_new(&conf, lfd, &p, &err) == 0);
	stop = 0;
	pthread_create(&t, NULL, run_proxy, p);
	for (int i = 0; i < 6; i++) {
		one[i] = dial_from(port, 1);
		usleep(20000);
	}
	usleep(100000);
	/* one peer: its two oldest were shed for its newest */
	CHECK(closed(one[0]) && closed(one[1]));
	CHECK(!closed(one[2]) && !closed(one[5]));
	for (int i = 0; i < 4; i++) {
		two[i] = dial_from(port, 2);
		usleep(20000);
	}
	three = dial_from(port, 3);
	usleep(100000);
	/* eight in all: the ninth shed the oldest of anyone's */
	CHECK(closed(one[2]) && !closed(one[3]));
	CHECK(!closed(two[0]) && !closed(three));
	/* a real client still gets through, with the secret only */
	snprintf(req, sizeof(req), "GET http://host.sbxrun.internal:%d/ HTTP/1.1\r\n"
		 "Proxy-Authorization: Basic c2J4OnMzY3JldDpwdw==\r\n\r\n", origin_port);
	char *r = ask_from(port, 4, req);
	CHECK_CONTAINS(r, "200 OK");
	CHECK_CONTAINS(r, "hello");
	free(r);
	snprintf(req, sizeof(req), "CONNECT host.sbxrun.internal:%d HTTP/1.1\r\n\r\n", origin_port);
	r = ask_from(port, 4, req);
	CHECK_CONTAINS(r, "HTTP/1.1 407 Proxy Authentication Required\r\n");
	CHECK_CONTAINS(r, "Proxy-Authenticate: Basic realm=\"sbxrun\"\r\n");
	CHECK(!strstr(r, "testprof"));
	free(r);
	snprintf(req, sizeof(req), "CONNECT host.sbxrun.internal:%d HTTP/1.1\r\n"
		 "Proxy-Authorization: Basic c2J4OnMzY3JldDpwVw==\r\n\r\n", origin_port);
	r = ask_from(port, 4, req);
	CHECK_CONTAINS(r, "HTTP/1.1 407");
	free(r);
	/* the idle ones end at the head timeout (the sweep runs each second) */
	usleep(1500000);
	CHECK(closed(one[5]) && closed(two[3]) && closed(three));
	for (int i = 0; i < 6; i++)
		close(one[i]);
	for (int i = 0; i < 4; i++)
		close(two[i]);
	close(three);
	/* a peer whose connections all relay: the next one is turned away */
	snprintf(req, sizeof(req), "CONNECT host.sbxrun.internal:%d HTTP/1.1\r\n"
		 "Proxy-Authorization: Basic c2J4OnMzY3JldDpwdw==\r\n\r\n", origin_port);
	int busy[4], extra;
	char buf[128];
	for (int i = 0; i < 4; i++) {
		busy[i] = dial_from(port, 5);
		CHECK(write_all(busy[i], req, strlen(req)) == 0);
		ssize_t n = read(busy[i], buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = 0;
		CHECK_CONTAINS(buf, "200 Connection established");
	}
	extra = dial_from(port, 5);
	CHECK(read(extra, buf, sizeof(buf)) <= 0);
	close(extra);
	for (int i = 0; i < 4; i++)
		close(busy[i]);
	stop = 1;
	pthread_join(t, NULL);
	struct sbx_proxy_counters c;
	proxy_counters(p, &c);
	/* 2 + 1, one for the first request, maybe one more as the others end */
	CHECK(c.shed >= 4 && c.shed <= 6 && c.turned_away == 1);
	proxy_free(p);
}

static void test_events(int efd, struct sbx_proxy *p)
{
	struct sbx_proxy_counters c;
	char buf[65536];
	ssize_t n = pread(efd, buf, sizeof(buf) - 1, 0);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = 0;
	CHECK_CONTAINS(buf, "\"host\":\"evil.test\",\"port\":80,\"decision\":\"refused\"");
	CHECK_CONTAINS(buf, "\"decision\":\"allowed\"");
	CHECK_CONTAINS(buf, "\"decision\":\"closed\"");
	CHECK_CONTAINS(buf, "\"bytes_up\":23,\"bytes_down\":62");
	CHECK_CONTAINS(buf, "\"time\":");
	proxy_counters(p, &c);
	CHECK(c.allowed == 6);
	CHECK(c.refused == 32);
	CHECK(c.bytes_down > 0 && c.bytes_up > 0);
}

int main(void)
{
	int ofd = listen_loopback(&origin_port), dfd = listen_loopback(&door_port);
	int efd = memfd_create("events", MFD_CLOEXEC);
	char internal[64], localhost[64], loop[64];
	pthread_t ot, pt;
	struct sbx_proxy *p;
	struct sbx_err err;

	snprintf(internal, sizeof(internal), "host.sbxrun.internal:%d", origin_port);
	snprintf(localhost, sizeof(localhost), "localhost:%d", origin_port);
	snprintf(loop, sizeof(loop), "127.0.0.1:%d", origin_port);
	char *pats[] = { internal, localhost, loop, "[::1]", "169.254.169.254", "*.example.test", "@apt",
			 "203.0.113.5" };
	struct sbx_strlist allow = { pats, NULL, ARRAY_SIZE(pats) };
	const char *apt[] = { "deb.example.test", NULL };
	struct sbx_proxy_conf conf = { .profile_name = "testprof", .allow = &allow, .sets = { .apt_hosts = apt },
					.events_fd = efd };

	if (proxy_new(&conf, dfd, &p, &err) < 0) {
		err_print(&err);
		return 1;
	}
	pthread_create(&ot, NULL, origin, &ofd);
	pthread_create(&pt, NULL, run_proxy, p);
	test_allowed();
	test_big();
	test_refused();
	test_garbage();

	struct sbx_proxy *p2;
	pthread_t pt2;
	test_chain(&conf, &pt2, &p2);
	stop = 1;
	pthread_join(pt, NULL);
	pthread_join(pt2, NULL);
	test_hold_the_line(&conf);
	test_events(efd, p);
	proxy_free(p);
	proxy_free(p2);
	return unit_done("proxy");
}
