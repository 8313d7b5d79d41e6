/* dnsstub.c - the DNS stub's loop on the host side: reads queries from the
 * socket the sandbox made, answers each from dnswire (no query is ever sent
 * on), and tells each lookup in the --events file.
 *
 * The loop runs on a host thread outside the sandbox's --cpus, so the
 * sandbox gets a token bucket of queries (RATE a second, BURST at once).
 * Past it the stub stops reading until tokens come back: a resolver that
 * waits for its answer is only slowed down, and a flood fills the socket's
 * small receive buffer, where the kernel drops the rest at the sender's
 * cost. What was dropped is told as a count (a dns_limit event at most
 * once a second, and at the end), never line by line. */
#define _GNU_SOURCE
#include "net/dnsstub.h"

#include <fcntl.h>
#include <linux/sock_diag.h>
#include <stdbool.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "net/dnswire.h"
#include "net/proxy_event.h"

/* Queries answered per dispatch, so a flood cannot starve the other fds. */
#define BATCH 64
/* Events per second: a loop of lookups must not fill the host's disk; what
 * is left out is counted in the next event told. */
#define EVENTS_PER_SECOND 200
/* The bucket: tokens in thousandths, so a millisecond refills RATE of them. */
#define RATE 200
#define BURST 100
#define TOKEN 1000
/* While throttled, wake when this many queries may be answered. */
#define WAKE_TOKENS 10
#define SUMMARY_MS 1000
/* Queries waiting beyond this are dropped by the kernel (which doubles
 * it: 128 KiB, about 170 small queries, a second's worth, or a few big
 * ones a resolver never sends). */
#define RCVBUF 65536

struct sbx_dnsstub {
	int fd, epfd, tfd;
	char *hostname;
	struct proxy_events ev;
	time_t second;        /* of the events counted in told */
	unsigned told;
	uint64_t left_out;
	uint64_t tokens;      /* thousandths of a query */
	int64_t refilled;     /* ms */
	bool throttled;
	bool summary_due;     /* drops may have happened since the last summary */
	int64_t last_summary; /* ms */
	uint32_t drops_told;  /* the socket's drop counter when last told */
	uint64_t dropped;     /* in all */
};

/* The kernel's count of datagrams this socket dropped (buffer full). */
static uint32_t socket_drops(int fd)
{
	uint32_t mem[SK_MEMINFO_VARS] = { 0 };
	socklen_t len = sizeof(mem);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) < 0 || len <= SK_MEMINFO_DROPS * sizeof(uint32_t))
		return 0;
	return mem[SK_MEMINFO_DROPS];
}

static int setup(struct sbx_dnsstub *d, struct sbx_err *err)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int fl = fcntl(d->fd, F_GETFL), rcv = RCVBUF;

	if (fl < 0 || fcntl(d->fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return err_sys(err, "dns stub: socket");
	(void)setsockopt(d->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	d->epfd = epoll_create1(EPOLL_CLOEXEC);
	d->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (d->epfd < 0 || d->tfd < 0)
		return err_sys(err, "dns stub: epoll");
	ev.data.fd = d->fd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->fd, &ev) < 0)
		return err_sys(err, "dns stub: epoll_ctl");
	ev.data.fd = d->tfd;
	if (epoll_ctl(d->epfd, EPOLL_CTL_ADD, d->tfd, &ev) < 0)
		return err_sys(err, "dns stub: epoll_ctl");
	d->tokens = (uint64_t)BURST * TOKEN;
	d->refilled = d->last_summary = now_ms();
	d->drops_told = socket_drops(d->fd);
	return 0;
}

int dnsstub_new(int fd, const char *profile, const char *hostname, int events_fd,
		struct sbx_dnsstub **out, struct sbx_err *err)
{
	struct sbx_dnsstub *d = xcalloc(1, sizeof(*d));

	d->fd = fd;
	d->epfd = d->tfd = -1;
	d->hostname = hostname ? xstrdup(hostname) : NULL;
	proxy_event_init(&d->ev, profile, events_fd);
	if (setup(d, err) < 0) {
		dnsstub_free(d);
		return -1;
	}
	*out = d;
	return 0;
}

int dnsstub_pollfd(const struct sbx_dnsstub *d)
{
	return d->epfd;
}

static void tell(struct sbx_dnsstub *d, const struct dnswire_query *q)
{
	struct timespec now;
	char tbuf[16];

	if (d->ev.fd < 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec != d->second) {
		d->second = now.tv_sec;
		d->told = 0;
	}
	if (d->told >= EVENTS_PER_SECOND) {
		d->left_out++;
		return;
	}
	d->told++;
	proxy_event_dns(&d->ev, q->name, dnswire_type_str(q->qtype, tbuf, sizeof(tbuf)), q->answer,
			q->rcode, d->left_out);
	d->left_out = 0;
}

static void answer_one(struct sbx_dnsstub *d, const uint8_t *pkt, size_t len,
		       const struct sockaddr_storage *from, socklen_t fromlen)
{
	uint8_t out[DNSWIRE_ANSWER_MAX];
	struct dnswire_query q;
	int n = dnswire_answer(pkt, len, d->hostname, out, &q);

	if (n < 0)
		return;
	/* a full socket buffer drops the answer; the resolver asks again */
	(void)!sendto(d->fd, out, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)from,
		      fromlen);
	if (q.name[0])
		tell(d, &q);
}

static void refill(struct sbx_dnsstub *d, int64_t now)
{
	if (now > d->refilled)
		d->tokens += (uint64_t)(now - d->refilled) * RATE;
	d->refilled = now;
	if (d->tokens > (uint64_t)BURST * TOKEN)
		d->tokens = (uint64_t)BURST * TOKEN;
}

static void arm(struct sbx_dnsstub *d, int64_t ms)
{
	struct itimerspec its = { .it_value = { ms / 1000, (ms % 1000) * 1000000 + (ms ? 0 : 1) } };
	timerfd_settime(d->tfd, 0, &its, NULL);
}

/* Stops reading the socket until enough tokens are back. */
static void throttle(struct sbx_dnsstub *d, bool on)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = d->fd };

	if (on == d->throttled)
		return;
	if (epoll_ctl(d->epfd, on ? EPOLL_CTL_DEL : EPOLL_CTL_ADD, d->fd, &ev) < 0)
		return;
	d->throttled = on;
	if (on)
		d->summary_due = true;
}

/* The drops since the last summary, as one event; at most once a second
 * unless final. */
static void summary(struct sbx_dnsstub *d, int64_t now, bool final)
{
	if (!d->summary_due || (!final && now - d->last_summary < SUMMARY_MS))
		return;
	uint32_t drops = socket_drops(d->fd), n = drops - d->drops_told;
	d->last_summary = now;
	d->drops_told = drops;
	d->summary_due = d->throttled;
	if (!n)
		return;
	d->dropped += n;
	proxy_event_dns_limit(&d->ev, n, d->dropped, RATE);
}

void dnsstub_dispatch(struct sbx_dnsstub *d)
{
	uint8_t pkt[4096];
	uint64_t ticks;
	int64_t now = now_ms();

	(void)!read(d->tfd, &ticks, sizeof(ticks));
	refill(d, now);
	if (d->tokens >= (uint64_t)WAKE_TOKENS * TOKEN)
		throttle(d, false);
	for (int i = 0; i < BATCH && !d->throttled; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		if (d->tokens < TOKEN) {
			throttle(d, true);
			break;
		}
		ssize_t n = recvfrom(d->fd, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fromlen);
		if (n < 0)
			break; /* EAGAIN, or an error queued by an ICMP: next time */
		d->tokens -= TOKEN;
		if ((size_t)n > sizeof(pkt))
			continue; /* larger than any query: dropped */
		answer_one(d, pkt, (size_t)n, &from, fromlen);
	}
	summary(d, now, false);
	if (d->throttled)
		arm(d, (int64_t)(WAKE_TOKENS * TOKEN - d->tokens) / RATE + 1);
	else if (d->summary_due)
		arm(d, d->last_summary + SUMMARY_MS - now > 0 ? d->last_summary + SUMMARY_MS - now : 1);
}

void dnsstub_free(struct sbx_dnsstub *d)
{
	if (!d)
		return;
	if (d->epfd >= 0)
		summary(d, now_ms(), true);
	close(d->fd);
	if (d->epfd >= 0)
		close(d->epfd);
	if (d->tfd >= 0)
		close(d->tfd);
	free(d->hostname);
	proxy_event_fini(&d->ev);
	free(d);
}
