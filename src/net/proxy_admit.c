/* proxy_admit.c - who gets one of the proxy's connections: a peer's key
 * (an address, an IPv6 /64), the caps on open connections in all and per
 * peer, and which idle connection is shed to make room. A sandbox's door
 * queues instead of refusing (its one client); a sidecar's refuses. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <string.h>

#include "net/proxy_conn.h"

/* Who a connection comes from: the address, or an IPv6 address's /64
 * (what one host is given), a v4-mapped address as IPv4. */
void proxy_peer_key(const struct sockaddr_storage *ss, unsigned char key[PROXY_PEER_KEY])
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	memset(key, 0, PROXY_PEER_KEY);
	key[0] = (unsigned char)ss->ss_family;
	if (ss->ss_family == AF_INET) {
		memcpy(key + 1, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		key[0] = AF_INET;
		memcpy(key + 1, s6->sin6_addr.s6_addr + 12, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(key + 1, s6->sin6_addr.s6_addr, 8);
	}
}

/* Idle: no complete request head yet, or done and lingering after a reply. */
static bool idle(const struct conn *c)
{
	return c->state == C_HEAD || c->state == C_DRAIN;
}

/* Whether c may be closed for another connection: idle, and, for a
 * sandbox's own door (queue), one that has had its answer (kept open
 * between requests, or lingering), never one whose first request is
 * still on its way: npm 9 through a proxy opens a connection for each of
 * hundreds of requests at once, and its heads come late. */
static bool sheddable(const struct sbx_proxy *p, const struct conn *c)
{
	return idle(c) && (!p->queue || (c->kept && c->head_len == 0) || c->state == C_DRAIN);
}

/* Makes room for one more connection from peer (NULL: anyone): closes the
 * oldest sheddable one among those; false when none is. */
static bool shed_oldest(struct sbx_proxy *p, const unsigned char *peer)
{
	struct conn *old = NULL;

	for (struct conn *c = p->conns; c; c = c->next)
		if (sheddable(p, c) && (!peer || memcmp(c->peer, peer, sizeof(c->peer)) == 0) &&
		    (!old || c->id < old->id))
			old = c;
	if (!old)
		return false;
	proxy_conn_kill(p, old);
	p->count.shed++;
	return true;
}

/* Open now: the proxy's own and those the local service took from peer
 * (NULL: from anyone), which are busy (never shed). */
static size_t open_of(struct sbx_proxy *p, const unsigned char *peer)
{
	size_t n = p->local.host && p->local.clients_of ? p->local.clients_of(p->local.ctx, peer) : 0;

	if (!peer)
		return n + p->live;
	for (struct conn *c = p->conns; c; c = c->next)
		n += c->state != C_DEAD && memcmp(c->peer, peer, sizeof(c->peer)) == 0;
	return n;
}

/* Whether there is room for a connection from peer (NULL: the cap in
 * all alone), shedding if need be; without them one peer could hold all
 * of the local service's. */
bool proxy_room_for(struct sbx_proxy *p, const unsigned char *peer)
{
	if (peer && p->max_per_peer && open_of(p, peer) >= p->max_per_peer && !shed_oldest(p, peer))
		return false;
	return open_of(p, NULL) < p->max_conns || shed_oldest(p, NULL);
}

bool proxy_may_resume(struct sbx_proxy *p)
{
	if (open_of(p, NULL) < p->max_conns)
		return true;
	for (struct conn *c = p->conns; c; c = c->next)
		if (sheddable(p, c))
			return true;
	return false;
}
