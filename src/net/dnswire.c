/* dnswire.c - parses one DNS query and builds its answer (RFC 1035 4.1).
 * Hand-rolled on purpose: the stub needs the 12-byte header and one
 * question, nothing else, and runs on the host side, so the less it parses
 * the less a sandbox can reach; a full DNS library (ldns) would parse every
 * section and record type. It reads only the header and the question,
 * checks every length before it reads, refuses compression in the
 * question, and never follows an offset. tests/fuzz/fuzz_dns.c fuzzes it. */
#include "net/dnswire.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define HDR 12
#define TYPE_A 1
#define TYPE_AAAA 28
#define CLASS_IN 1
#define TTL 60

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The question's name from offset HDR: labels of 1..63 octets, at most 255
 * octets in all, ended by the root label. Writes it as lowercase text and
 * returns the offset after it, or -1. */
static long parse_name(const uint8_t *p, size_t len, char *text)
{
	size_t o = HDR, t = 0;

	for (;;) {
		if (o >= len)
			return -1;
		size_t l = p[o++];
		if (l == 0)
			break;
		/* 0xC0: a compression pointer; 0x40, 0x80: obsolete label types */
		if (l > 63 || l > len - o || o - HDR + l > 254)
			return -1;
		if (t)
			text[t++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = p[o + i];
			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c + 'a' - 'A');
			if (c > 0x20 && c < 0x7f && c != '.' && c != '\\' && c != '"')
				text[t++] = (char)c;
			else
				t += (size_t)snprintf(text + t, 5, "\\%03u", c);
		}
		o += l;
	}
	if (t == 0)
		text[t++] = '.';
	text[t] = '\0';
	return (long)o;
}

/* FNV-1a over the name: the same name always gets the same address. */
static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u;
	for (const char *s = name; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

static int is_localhost(const char *name)
{
	size_t n = strlen(name);
	return strcmp(name, "localhost") == 0 ||
	       (n > 10 && strcmp(name + n - 10, ".localhost") == 0);
}

/* The record data for name; returns its length, 0 for no record. */
static size_t rdata_for(const char *name, uint16_t qtype, const char *hostname, uint8_t *rd)
{
	uint32_t h = name_hash(name);

	if (qtype == TYPE_A) {
		uint32_t a = 0xC6120000u + 1 + h % 0x1FFFEu; /* 198.18.0.1 .. 198.19.255.254 */
		if (is_localhost(name))
			a = 0x7F000001u;
		else if (hostname && strcasecmp(name, hostname) == 0)
			a = 0x7F000101u;
		a = htonl(a);
		memcpy(rd, &a, 4);
		return 4;
	}
	if (qtype == TYPE_AAAA) {
		static const uint8_t net6[16] = { 0x20, 0x01, 0x00, 0x02 };
		memcpy(rd, net6, 16);
		if (is_localhost(name) || (hostname && strcasecmp(name, hostname) == 0)) {
			memset(rd, 0, 16);
			rd[15] = 1;
			return 16;
		}
		h = h ? h : 1;
		for (int i = 0; i < 4; i++)
			rd[12 + i] = (uint8_t)(h >> (24 - 8 * i));
		return 16;
	}
	return 0;
}

/* An answer carrying only the header: the id, RD echoed, the rcode. */
static int header_only(const uint8_t *pkt, uint8_t *out, int rcode, struct dnswire_query *q)
{
	memset(out, 0, HDR);
	memcpy(out, pkt, 2);
	out[2] = (uint8_t)(0x80 | (pkt[2] & 0x79)); /* QR, the opcode and RD echoed */
	out[3] = (uint8_t)(0x80 | rcode);
	q->rcode = rcode;
	return HDR;
}

static int answer_question(const uint8_t *pkt, size_t qend, const char *hostname, uint8_t *out,
			   struct dnswire_query *q)
{
	uint16_t qclass = get16(pkt + qend - 2);
	uint8_t rd[16];
	size_t n = 0;

	q->qtype = get16(pkt + qend - 4);
	q->rcode = qclass == CLASS_IN ? DNSWIRE_NOERROR : DNSWIRE_NOTIMP;
	if (qclass == CLASS_IN)
		n = rdata_for(q->name, q->qtype, hostname, rd);
	memcpy(out, pkt, 2);
	out[2] = (uint8_t)(0x84 | (pkt[2] & 0x01)); /* QR, AA, RD echoed */
	out[3] = (uint8_t)(0x80 | q->rcode);
	put16(out + 4, 1);
	put16(out + 6, n ? 1 : 0);
	put16(out + 8, 0);
	put16(out + 10, 0);
	memcpy(out + HDR, pkt + HDR, qend - HDR);
	if (!n)
		return (int)qend;
	uint8_t *rr = out + qend;
	put16(rr, 0xC000 | HDR); /* the name: a pointer to the question's */
	put16(rr + 2, q->qtype);
	put16(rr + 4, CLASS_IN);
	put16(rr + 6, 0);
	put16(rr + 8, TTL);
	put16(rr + 10, (uint16_t)n);
	memcpy(rr + 12, rd, n);
	inet_ntop(n == 4 ? AF_INET : AF_INET6, rd, q->answer, sizeof(q->answer));
	return (int)(qend + 12 + n);
}

int dnswire_answer(const uint8_t *pkt, size_t len, const char *hostname, uint8_t *out,
		   struct dnswire_query *q)
{
	memset(q, 0, sizeof(*q));
	if (len < HDR || (pkt[2] & 0x80))
		return -1; /* no id to answer, or an answer: never reply to one */
	if ((pkt[2] & 0x78) != 0)
		return header_only(pkt, out, DNSWIRE_NOTIMP, q);
	/* one question; no answers or authority in a query; at most an EDNS
	 * OPT record in the additional section, which is not read */
	if (get16(pkt + 4) != 1 || get16(pkt + 6) || get16(pkt + 8) || get16(pkt + 10) > 1)
		return header_only(pkt, out, DNSWIRE_FORMERR, q);
	long o = parse_name(pkt, len, q->name);
	if (o < 0 || (size_t)o + 4 > len || (get16(pkt + 10) == 0 && (size_t)o + 4 != len)) {
		q->name[0] = '\0';
		return header_only(pkt, out, DNSWIRE_FORMERR, q);
	}
	return answer_question(pkt, (size_t)o + 4, hostname, out, q);
}

const char *dnswire_type_str(uint16_t qtype, char *buf, size_t size)
{
	static const struct { uint16_t t; const char *s; } names[] = {
		{ 1, "A" }, { 2, "NS" }, { 5, "CNAME" }, { 6, "SOA" }, { 12, "PTR" }, { 15, "MX" },
		{ 16, "TXT" }, { 28, "AAAA" }, { 33, "SRV" }, { 64, "SVCB" }, { 65, "HTTPS" }, { 255, "ANY" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].t == qtype)
			return names[i].s;
	snprintf(buf, size, "TYPE%u", qtype);
	return buf;
}
