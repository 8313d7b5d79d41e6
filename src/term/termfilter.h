/* termfilter.h - the sandbox's output on its way to the caller's terminal:
 * escape sequences that act beyond the text on the screen (the clipboard,
 * the window, answers typed back into the terminal's input) are dropped.
 * A streaming filter: a sequence may be split across any number of reads. */
#ifndef SBX_TERMFILTER_H
#define SBX_TERMFILTER_H

#include <stddef.h>

/* Longest sequence kept whole (a hyperlink's URL, a title); a longer one is
 * dropped, whatever it is. */
#define SBX_TF_SEQ_MAX 4096

/* Pass the queries whose answers have a fixed form (cursor position,
 * device attributes, colour queries): with -t they are answered into the
 * sandbox's own terminal, and full-screen programs inside need them. */
#define SBX_TF_ANSWERS 1

struct sbx_termfilter {
	int state;
	int flags;
	int drop;          /* the pending sequence outgrew seq: dropped */
	unsigned u8need;   /* UTF-8 continuation bytes still expected */
	unsigned modes;    /* input-changing modes the output left on */
	unsigned kitty;    /* kitty keyboard flags pushed and not popped */
	size_t len;
	unsigned char seq[SBX_TF_SEQ_MAX];
};

void termfilter_init(struct sbx_termfilter *f, int flags);
/* Filters n bytes of in into out, which must have room for
 * n + SBX_TF_SEQ_MAX bytes; returns how many bytes went to out. */
size_t termfilter_feed(struct sbx_termfilter *f, const char *in, size_t n, char *out);
/* At the end of the stream: drops a sequence left unfinished and writes
 * into out (room for SBX_TF_SEQ_MAX bytes) what turns off the modes that
 * would make the terminal type into the caller's input (mouse reports,
 * focus events, bracketed paste, the kitty keyboard protocol), leaves the
 * alternate screen and shows the cursor, where the output left them so;
 * returns how many bytes. */
size_t termfilter_finish(struct sbx_termfilter *f, char *out);

#endif
