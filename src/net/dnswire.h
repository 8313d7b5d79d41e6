/* dnswire.h - the DNS stub's packet work: one question in, one answer out,
 * with an address from a block that has no route. */
#ifndef SBX_DNSWIRE_H
#define SBX_DNSWIRE_H

#include <stddef.h>
#include <stdint.h>

/* Where every name points (README "Network"): benchmarking blocks that no
 * sandbox has a route to, so connect() fails with ENETUNREACH. */
#define DNSWIRE_NET4 "198.18.0.0/15"
#define DNSWIRE_NET6 "2001:2::/48"

/* A name is at most 255 octets on the wire; as text each octet may take
 * four characters (\DDD). */
#define DNSWIRE_TEXT_MAX 1100
/* The largest answer: header, a 255-octet question, one AAAA record. */
#define DNSWIRE_ANSWER_MAX 512

enum { DNSWIRE_NOERROR = 0, DNSWIRE_FORMERR = 1, DNSWIRE_NOTIMP = 4 };

/* What a query asked and what it was told, for the events file. */
struct dnswire_query {
	char name[DNSWIRE_TEXT_MAX]; /* lowercase, "\DDD" for odd octets; "" if unparsed */
	uint16_t qtype;
	int rcode;
	char answer[48];             /* the address given, or "" */
};

/* Answers the query pkt[0..len). hostname (may be NULL) resolves to
 * 127.0.1.1, "localhost" and "*.localhost" to loopback, every other name to
 * an address in the blocks above, the same for the same name. Other query
 * types get an empty NOERROR, other classes and opcodes NOTIMP, malformed
 * queries FORMERR. Returns the answer's length (at most DNSWIRE_ANSWER_MAX,
 * out must hold that), or -1 when the packet gets no answer at all: too
 * short to carry an id, or itself an answer. */
int dnswire_answer(const uint8_t *pkt, size_t len, const char *hostname, uint8_t *out,
		   struct dnswire_query *q);

/* "A", "AAAA", ... or the number as text. */
const char *dnswire_type_str(uint16_t qtype, char *buf, size_t size);

#endif
