/* proxy_bench.c - throughput through the egress proxy against a direct
 * loopback connection, and the time the proxy adds per connection.
 * Goals (issue 6): at least 0.8 of direct; under 1 ms per connection. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/proxy.h"
#include "base/util.h"

#define BIG (512UL << 20)

static int origin_port, door_port;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int listen_loopback(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0)
		_exit(1);
	*port = ntohs(a.sin_port);
	return fd;
}

/* Reads a request head; "/big" gets BIG bytes, anything else a tiny body. */
static void *origin(void *arg)
{
	static char chunk[1 << 16];
	int lfd = *(int *)arg;
	for (;;) {
		char buf[2048] = "";
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		ssize_t got = 0, n;
		while (!strstr(buf, "\r\n\r\n") && (n = read(fd, buf + got, sizeof(buf) - 1 - (size_t)got)) > 0)
			buf[got += n] = 0;
		if (strstr(buf, "/big")) {
			for (size_t sent = 0; sent < BIG; sent += sizeof(chunk))
				if (write_all(fd, chunk, sizeof(chunk)) < 0)
					break;
		} else {
			(void)!write(fd, "HTTP/1.1 204 No Content\r\n\r\n", 27);
		}
		close(fd);
	}
	return NULL;
}

static void *loop(void *arg)
{
	struct sbx_proxy *p = arg;
	struct pollfd pfd = { .fd = proxy_pollfd(p), .events = POLLIN };
	for (;;)
		if (poll(&pfd, 1, -1) > 0)
			proxy_dispatch(p);
	return NULL;
}

/* One request on a new connection; returns the bytes read to EOF. */
static size_t fetch(int port, const char *req)
{
	static char buf[1 << 16];
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				 .sin_port = htons((uint16_t)port) };
	size_t total = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || write_all(fd, req, strlen(req)) < 0)
		_exit(1);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += (size_t)n;
	close(fd);
	return total;
}

int main(void)
{
	int ofd = listen_loopback(&origin_port), dfd = listen_loopback(&door_port);
	char entry[64], via_big[128], via_small[128];
	struct sbx_proxy *p;
	struct sbx_err err;
	pthread_t t;

	snprintf(entry, sizeof(entry), "host.sbxrun.internal:%d", origin_port);
	char *pats[] = { entry };
	struct sbx_strlist allow = { pats, NULL, 1 };
	struct sbx_proxy_conf conf = { "bench", &allow, NULL, NULL, NULL, -1 };
	if (proxy_new(&conf, dfd, &p, &err) < 0) {
		err_print(&err);
		return 1;
	}
	pthread_create(&t, NULL, origin, &ofd);
	pthread_create(&t, NULL, loop, p);
	snprintf(via_big, sizeof(via_big), "GET http://%s/big HTTP/1.1\r\n\r\n", entry);
	snprintf(via_small, sizeof(via_small), "GET http://%s/ HTTP/1.1\r\n\r\n", entry);

	double t0 = now();
	size_t nd = fetch(origin_port, "GET /big HTTP/1.1\r\n\r\n");
	double direct = (double)nd / (now() - t0) / 1e6;
	t0 = now();
	size_t np = fetch(door_port, via_big);
	double proxied = (double)np / (now() - t0) / 1e6;
	printf("throughput: direct %.0f MB/s, proxy %.0f MB/s, ratio %.2f (goal >= 0.80)\n",
	       direct, proxied, proxied / direct);

	int rounds = 2000;
	t0 = now();
	for (int i = 0; i < rounds; i++)
		fetch(origin_port, "GET / HTTP/1.1\r\n\r\n");
	double d = (now() - t0) / rounds;
	t0 = now();
	for (int i = 0; i < rounds; i++)
		fetch(door_port, via_small);
	double v = (now() - t0) / rounds;
	printf("per connection: direct %.3f ms, proxy %.3f ms, added %.3f ms (goal < 1 ms)\n",
	       d * 1e3, v * 1e3, (v - d) * 1e3);
	return 0;
}
