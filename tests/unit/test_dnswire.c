/* test_dnswire.c - the DNS stub's query parser and answer builder. */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "net/dnswire.h"
#include "unit.h"

struct pkt {
	uint8_t b[600];
	size_t n;
};

static void put16(struct pkt *p, unsigned v)
{
	p->b[p->n++] = (uint8_t)(v >> 8);
	p->b[p->n++] = (uint8_t)v;
}

static void header(struct pkt *p, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		   unsigned ar)
{
	p->n = 0;
	put16(p, id);
	put16(p, flags);
	put16(p, qd);
	put16(p, an);
	put16(p, ns);
	put16(p, ar);
}

static void name(struct pkt *p, const char *dotted)
{
	while (*dotted) {
		const char *dot = strchr(dotted, '.');
		size_t l = dot ? (size_t)(dot - dotted) : strlen(dotted);
		p->b[p->n++] = (uint8_t)l;
		memcpy(p->b + p->n, dotted, l);
		p->n += l;
		dotted += l + (dot ? 1 : 0);
	}
	p->b[p->n++] = 0;
}

static struct pkt query(unsigned id, const char *n, unsigned type)
{
	struct pkt p;
	header(&p, id, 0x0100, 1, 0, 0, 0);
	name(&p, n);
	put16(&p, type);
	put16(&p, 1);
	return p;
}

static unsigned get16(const uint8_t *b)
{
	return (unsigned)(b[0] << 8 | b[1]);
}

/* Answers p; returns the rcode, or -1 for no answer; copies the address. */
static int ask(const struct pkt *p, char *addr, size_t size, struct dnswire_query *q)
{
	uint8_t out[DNSWIRE_ANSWER_MAX];
	int n = dnswire_answer(p->b, p->n, "box", out, q);

	addr[0] = '\0';
	if (n < 0)
		return -1;
	CHECK(n >= 12 && n <= DNSWIRE_ANSWER_MAX);
	CHECK(memcmp(out, p->b, 2) == 0);      /* the id */
	CHECK(out[2] & 0x80);                  /* QR */
	CHECK((out[2] & 1) == (p->b[2] & 1));  /* RD echoed */
	if (get16(out + 6) == 1) {
		/* an A record's rdlength sits 6 bytes from the end (an AAAA's
		 * rdata has zeros there) */
		size_t q_end = (size_t)n - 12 - (get16(out + (size_t)n - 6) == 4 ? 4u : 16u);
		const uint8_t *rr = out + q_end;
		CHECK(get16(rr) == 0xC00C);
		CHECK(get16(rr + 8) == 60);        /* TTL low half */
		inet_ntop(get16(rr + 10) == 4 ? AF_INET : AF_INET6, rr + 12, addr, (socklen_t)size);
		CHECK_STR(addr, q->answer);
	}
	return out[3] & 0x0f;
}

static void test_addresses(void)
{
	struct dnswire_query q;
	char a[64], b[64];
	struct pkt p = query(0xbeef, "example.com", 1);
	uint32_t v4;

	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_NOERROR);
	CHECK_STR(q.name, "example.com");
	CHECK(q.qtype == 1);
	CHECK(inet_pton(AF_INET, a, &v4) == 1);
	v4 = ntohl(v4);
	CHECK(v4 > 0xC6120000u && v4 < 0xC613FFFFu); /* inside 198.18.0.0/15 */
	p = query(1, "EXAMPLE.Com", 1);
	CHECK(ask(&p, b, sizeof(b), &q) == 0);
	CHECK_STR(b, a);                              /* the same name, the same address */
	CHECK_STR(q.name, "example.com");
	p = query(2, "example.org", 1);
	ask(&p, b, sizeof(b), &q);
	CHECK(strcmp(a, b) != 0);
	p = query(3, "example.com", 28);
	CHECK(ask(&p, a, sizeof(a), &q) == 0);
	CHECK(strncmp(a, "2001:2::", 8) == 0);
}

static void test_loopback_names(void)
{
	struct dnswire_query q;
	char a[64];
	struct pkt p = query(4, "localhost", 1);

	ask(&p, a, sizeof(a), &q);
	CHECK_STR(a, "127.0.0.1");
	p = query(5, "LocalHost", 28);
	ask(&p, a, sizeof(a), &q);
	CHECK_STR(a, "::1");
	p = query(6, "db.localhost", 1);
	ask(&p, a, sizeof(a), &q);
	CHECK_STR(a, "127.0.0.1");
	p = query(7, "notlocalhost", 1);
	ask(&p, a, sizeof(a), &q);
	CHECK(strncmp(a, "198.1", 5) == 0);
	p = query(8, "box", 1);
	ask(&p, a, sizeof(a), &q);
	CHECK_STR(a, "127.0.1.1");
}

static void test_other_types_and_classes(void)
{
	struct dnswire_query q;
	char a[64];
	struct pkt p = query(9, "example.com", 15); /* MX */

	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_NOERROR);
	CHECK_STR(a, "");
	CHECK_STR(q.answer, "");
	header(&p, 10, 0x0100, 1, 0, 0, 0);
	name(&p, "version.bind");
	put16(&p, 16);
	put16(&p, 3); /* CHAOS */
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_NOTIMP);
	p = query(11, "example.com", 1);
	p.b[2] = 0x28; /* opcode UPDATE */
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_NOTIMP);
	CHECK_STR(q.name, "");
}

static void test_malformed(void)
{
	struct dnswire_query q;
	char a[64];
	struct pkt p = query(12, "example.com", 1);

	p.b[2] |= 0x80; /* an answer is never answered */
	CHECK(ask(&p, a, sizeof(a), &q) == -1);
	p.n = 11;
	CHECK(ask(&p, a, sizeof(a), &q) == -1);
	p = query(13, "example.com", 1);
	p.n -= 1;       /* the question cut short */
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	p = query(14, "example.com", 1);
	p.b[p.n++] = 0; /* trailing bytes, no additional record */
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	header(&p, 15, 0x0100, 2, 0, 0, 0);
	name(&p, "a.test");
	put16(&p, 1);
	put16(&p, 1);
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	header(&p, 16, 0x0100, 1, 0, 0, 0);
	put16(&p, 0xC00C); /* a compression pointer in the question */
	put16(&p, 1);
	put16(&p, 1);
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	header(&p, 17, 0x0100, 1, 0, 0, 0);
	p.b[p.n++] = 64; /* a label longer than 63 */
	memset(p.b + p.n, 'a', 64);
	p.n += 64;
	p.b[p.n++] = 0;
	put16(&p, 1);
	put16(&p, 1);
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	header(&p, 18, 0x0100, 1, 0, 0, 0);
	p.b[p.n++] = 5;  /* a label running past the end */
	p.b[p.n++] = 'a';
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
}

static void test_name_lengths(void)
{
	struct dnswire_query q;
	char a[64], n[300];
	struct pkt p;

	/* 63+1 + 63+1 + 63+1 + 61+1 + 1 = 255 octets: the longest name */
	memset(n, 'a', sizeof(n));
	n[63] = n[127] = n[191] = '.';
	n[253] = '\0';
	p = query(19, n, 28);
	CHECK(ask(&p, a, sizeof(a), &q) == 0);
	CHECK(strncmp(a, "2001:2::", 8) == 0);
	CHECK(strlen(q.name) == 253);
	n[253] = 'a';
	n[254] = '\0'; /* 256 octets */
	p = query(20, n, 1);
	CHECK(ask(&p, a, sizeof(a), &q) == DNSWIRE_FORMERR);
	header(&p, 21, 0x0100, 1, 0, 0, 1);
	name(&p, "a.test");
	put16(&p, 1);
	put16(&p, 1);
	memcpy(p.b + p.n, "\0\0\x29\x04\xd0\0\0\0\0\0\0", 11); /* EDNS OPT, not read */
	p.n += 11;
	CHECK(ask(&p, a, sizeof(a), &q) == 0);
	header(&p, 22, 0x0100, 1, 0, 0, 0);
	p.b[p.n++] = 3;
	memcpy(p.b + p.n, "a\x01\\", 3);
	p.n += 3;
	p.b[p.n++] = 0;
	put16(&p, 1);
	put16(&p, 1);
	CHECK(ask(&p, a, sizeof(a), &q) == 0);
	CHECK_STR(q.name, "a\\001\\092");
}

int main(void)
{
	char buf[16];

	test_addresses();
	test_loopback_names();
	test_other_types_and_classes();
	test_malformed();
	test_name_lengths();
	CHECK_STR(dnswire_type_str(28, buf, sizeof(buf)), "AAAA");
	CHECK_STR(dnswire_type_str(999, buf, sizeof(buf)), "TYPE999");
	return unit_done("test_dnswire");
}
