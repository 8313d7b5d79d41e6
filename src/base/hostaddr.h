/* hostaddr.h - canonical host names and the address classes egress refuses. */
#ifndef SBX_HOSTADDR_H
#define SBX_HOSTADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#define HOSTADDR_INTERNAL "host.sbxrun.internal"
#define HOSTADDR_MAX 256

/* What an allow-list match grants after resolution. */
struct hostaddr_grant {
	bool private_ok;  /* named exactly by a profile or flag: a lab mirror may be private */
	bool internal;    /* host.sbxrun.internal: the host's loopback */
};

/* Canonicalises a host: lowercase, one trailing dot dropped, "[v6]" to its
 * compressed form without brackets (an IPv4-mapped one to its IPv4 address). Numeric IPv4 forms other than a plain
 * dotted quad (2130706433, 0x7f.1, 0177.0.0.1, 127.1) are neither names nor
 * addresses and are refused. Returns 0 or -1. */
int hostaddr_canon(const char *in, char *out, size_t size);
/* Whether a canonical host is an IP literal (AF_INET, AF_INET6) or 0. */
int hostaddr_literal(const char *canon);
/* Vets a resolved address: NULL if it may be dialled, else why not. */
const char *hostaddr_refusal(const struct sockaddr *sa, const struct hostaddr_grant *g);
/* host.sbxrun.internal is the host's loopback, opened one port at a time:
 * an entry (an allow list's, a [packages] upstream's) reaches it only when
 * it names it exactly, not as *.DOMAIN, and with its port. canon: the
 * entry's host (without "*."), suffix: a *.DOMAIN entry, port: 0 for none.
 * NULL if the entry may reach it or does not name it, else why not. */
const char *hostaddr_internal_refusal(const char *canon, bool suffix, unsigned port);
/* Whether a package source read from an image (a URL, HOST or HOST:PORT) may
 * enter an allow list: NULL if it names a public host, else why not
 * (loopback, private, link-local, metadata, *.sbxrun.internal, localhost).
 * An image grants nothing that only the person running sbxrun may grant. */
const char *hostaddr_image_refusal(const char *entry);

#endif
