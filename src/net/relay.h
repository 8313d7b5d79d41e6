/* relay.h - one direction of a proxied connection: socket to socket through
 * a pipe with splice (zero-copy), after a short prefix sent from memory. */
#ifndef SBX_RELAY_H
#define SBX_RELAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

struct relay_dir {
	char *pre;          /* bytes to send before relaying (a rewritten head) */
	size_t pre_len, pre_off;
	int pipe[2];
	size_t in_pipe;
	bool eof;           /* the source said EOF */
	bool shut;          /* the sink's write side is shut */
};

int relay_dir_init(struct relay_dir *d, struct sbx_err *err);
/* Queues bytes to go out before anything read from the source. */
void relay_dir_prefix(struct relay_dir *d, const char *s, size_t n);
/* Moves what it can without blocking; true if anything moved. Sets *err
 * when either socket fails; shuts the sink's write side after EOF. */
bool relay_pump(int from, int to, struct relay_dir *d, uint64_t *total, bool *err);
void relay_dir_free(struct relay_dir *d);

#endif
