/* test_dnsstub.c - the DNS stub's rate limit on a real UDP socket: a flood
 * gets no more answers than the bucket allows and is told as a count in a
 * dns_limit event; a resolver that waits for its answers is only paced. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "net/dnsstub.h"
#include "unit.h"

static volatile int stop;

static void *loop(void *arg)
{
	struct sbx_dnsstub *d = arg;
	struct pollfd p = { .fd = dnsstub_pollfd(d), .events = POLLIN };
	while (!stop)
		if (poll(&p, 1, 20) > 0)
			dnsstub_dispatch(d);
	return NULL;
}

static size_t query(unsigned char *b, unsigned id)
{
	static const unsigned char q[] = { 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1, 'x', 4, 't', 'e', 's', 't',
					   0, 0, 1, 0, 1 };
	memcpy(b, q, sizeof(q));
	b[0] = (unsigned char)(id >> 8);
	b[1] = (unsigned char)id;
	return sizeof(q);
}

static double since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int sfd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), c = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int efd = memfd_create("events", MFD_CLOEXEC);
	struct sbx_dnsstub *d;
	struct sbx_err err;
	struct timespec t0;
	unsigned char b[512];
	pthread_t t;

	if (bind(sfd, (struct sockaddr *)&a, sizeof(a)) < 0 || getsockname(sfd, (struct sockaddr *)&a, &alen) < 0 ||
	    connect(c, (struct sockaddr *)&a, sizeof(a)) < 0 || dnsstub_new(sfd, "p", NULL, efd, &d, &err) < 0)
		abort();
	pthread_create(&t, NULL, loop, d);

	/* a flood for a second: the burst (100) and 200 a second, no more */
	unsigned sent = 0, answered = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (since(&t0) < 1.0) {
		size_t n = query(b, sent++);
		(void)!send(c, b, n, MSG_DONTWAIT);
		while (recv(c, b, sizeof(b), MSG_DONTWAIT) > 0)
			answered++;
	}
	usleep(300000);
	while (recv(c, b, sizeof(b), MSG_DONTWAIT) > 0)
		answered++;
	double secs = since(&t0);
	fprintf(stderr, "flood: %u sent, %u answered in %.2f s\n", sent, answered, secs);
	CHECK(sent > 2000);
	CHECK(answered >= 150 && answered <= 100 + 200 * secs + 20);

	/* then a resolver that waits for each answer: every one answered */
	struct timeval tv = { 2, 0 };
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	usleep(600000); /* the bucket fills up again */
	unsigned ok = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 0; i < 300; i++) {
		size_t n = query(b, 40000 + i);
		if (send(c, b, n, 0) < 0)
			break;
		ssize_t r;
		while ((r = recv(c, b, sizeof(b), 0)) > 0 && (b[0] << 8 | b[1]) != (int)(40000 + i))
			;
		ok += r > 0;
	}
	secs = since(&t0);
	fprintf(stderr, "paced: %u of 300 answered in %.2f s\n", ok, secs);
	CHECK(ok == 300);
	CHECK(secs > 0.8); /* (300 - 100) / 200 a second */
	stop = 1;
	pthread_join(t, NULL);
	dnsstub_free(d);

	char ev[65536];
	ssize_t n = pread(efd, ev, sizeof(ev) - 1, 0);
	ev[n > 0 ? n : 0] = 0;
	unsigned long long dropped = 0;
	for (char *p = ev; (p = strstr(p, "\"dropped\":")); p++)
		dropped += strtoull(p + 10, NULL, 10);
	fprintf(stderr, "events: %llu dropped\n", dropped);
	CHECK_CONTAINS(ev, "\"event\":\"dns_limit\"");
	CHECK(dropped > 1000 && dropped <= sent - answered);
	return unit_done("dnsstub");
}
