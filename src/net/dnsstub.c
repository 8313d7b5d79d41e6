/* dnsstub.c - the DNS stub's loop on the host side: reads queries from the
 * socket the sandbox made, answers each from dnswire (no query is ever sent
 * on), and tells each lookup in the --events file. */
#define _GNU_SOURCE
#include "net/dnsstub.h"

#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/util.h"
#include "net/dnswire.h"
#include "net/proxy_event.h"

/* Queries answered per dispatch, so a flood cannot starve the other fds. */
#define BATCH 64
/* Events per second: a loop of lookups must not fill the host's disk; what
 * is left out is counted in the next event told. */
#define EVENTS_PER_SECOND 200

struct sbx_dnsstub {
	int fd;
	char *hostname;
	struct proxy_events ev;
	time_t second;        /* of the events counted in told */
	unsigned told;
	uint64_t left_out;
};

int dnsstub_new(int fd, const char *profile, const char *hostname, int events_fd,
		struct sbx_dnsstub **out, struct sbx_err *err)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0) {
		close(fd);
		return err_sys(err, "dns stub: socket");
	}
	struct sbx_dnsstub *d = xcalloc(1, sizeof(*d));
	d->fd = fd;
	d->hostname = hostname ? xstrdup(hostname) : NULL;
	proxy_event_init(&d->ev, profile, events_fd);
	*out = d;
	return 0;
}

int dnsstub_pollfd(const struct sbx_dnsstub *d)
{
	return d->fd;
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

void dnsstub_dispatch(struct sbx_dnsstub *d)
{
	uint8_t pkt[4096];

	for (int i = 0; i < BATCH; i++) {
		struct sockaddr_storage from;
		socklen_t fromlen = sizeof(from);
		ssize_t n = recvfrom(d->fd, pkt, sizeof(pkt), MSG_DONTWAIT | MSG_TRUNC,
				     (struct sockaddr *)&from, &fromlen);
		if (n < 0)
			return; /* EAGAIN, or an error queued by an ICMP: next time */
		if ((size_t)n > sizeof(pkt))
			continue; /* larger than any query: dropped */
		answer_one(d, pkt, (size_t)n, &from, fromlen);
	}
}

void dnsstub_free(struct sbx_dnsstub *d)
{
	if (!d)
		return;
	close(d->fd);
	free(d->hostname);
	proxy_event_fini(&d->ev);
	free(d);
}
