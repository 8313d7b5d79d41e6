/* fuzz_dns.c - libFuzzer harness for the DNS stub's packet parser and
 * answer builder: any datagram from inside must be answered or dropped,
 * and an answer must stay within its buffer and echo the query's id. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/dnswire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dnswire_query q;
	/* exactly sized copies, so a read or write past either end is caught */
	uint8_t *pkt = malloc(size ? size : 1);
	uint8_t *out = malloc(DNSWIRE_ANSWER_MAX);
	uint8_t again[DNSWIRE_ANSWER_MAX];

	memcpy(pkt, data, size);
	int n = dnswire_answer(pkt, size, "sbxrun", out, &q);
	if (n > DNSWIRE_ANSWER_MAX || n == 0 || n < -1)
		abort();
	if (n > 0 && (n < 12 || memcmp(out, pkt, 2) != 0 || !(out[2] & 0x80)))
		abort();
	if (strlen(q.name) >= DNSWIRE_TEXT_MAX || strlen(q.answer) >= sizeof(q.answer))
		abort();
	/* an answer is never answered: no loops between two stubs */
	if (n > 0 && dnswire_answer(out, (size_t)n, NULL, again, &q) != -1)
		abort();
	free(pkt);
	free(out);
	return 0;
}
