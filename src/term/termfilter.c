/* termfilter.c - what of the sandbox's output reaches the caller's terminal.
 *
 * Text, colours, cursor movement, erasing and titles pass. Dropped, because
 * they reach beyond the sandbox's own text on the screen:
 * - OSC 52 (write or read the clipboard of the caller's desktop), and every
 *   OSC but a short list of harmless ones (titles 0-2, the working directory
 *   7, hyperlinks 8, prompt marks 133, colours 4/10-19/104/110-119): among
 *   the others are iTerm2's 1337 and kitty's 5113, which write files on the
 *   caller's machine, 46 (xterm's log file), 50 (fonts), notifications;
 * - every DCS (ESC P): DECRQSS and XTGETTCAP answer into the terminal's
 *   input, DECUDK reprograms the caller's function keys, tmux's passthrough
 *   smuggles any sequence past tmux to the terminal behind it; and APC, PM,
 *   SOS strings (kitty's graphics protocol answers too);
 * - CSI ... t, the window operations: 20t/21t type the icon label or title
 *   (which the sandbox set) back into the input, others move, resize or
 *   iconify the caller's window (22t/23t, save and restore the title, pass);
 * - DECRQCRA (CSI ... * y): a checksum of a screen area, which reads back
 *   what is on the caller's screen;
 * - queries with an answer of fixed form: DSR and CPR (CSI ... n), DA
 *   (CSI ... c), DECRQM (CSI ... $ p), XTVERSION (CSI > q), DECREQTPARM,
 *   OSC colour queries ('?'), DECID (ESC Z), ENQ: an answer not read before
 *   the command ends is typed into the caller's shell. These pass with
 *   SBX_TF_ANSWERS (-t), where the answer goes to the sandbox's own terminal
 *   and full-screen programs (vim, fzf, prompt_toolkit) wait for it;
 * - C1 controls, raw (0x80-0x9f outside a UTF-8 character) or encoded as
 *   UTF-8 (U+0080-U+009F): some terminals read them as ESC [, ESC ] ...;
 *   text never holds them.
 * Modes that make the terminal type into the input (mouse, focus events,
 * bracketed paste, modifyOtherKeys, the kitty keyboard protocol) pass, and
 * are turned off at the end if the output left them on (a command killed
 * by the timeout leaves what it set); so are the alternate screen and a
 * hidden cursor. */
#include "term/termfilter.h"

#include <stdio.h>
#include <string.h>

enum {
	TF_GROUND, TF_C2, TF_ESC, TF_ESC_INTER, TF_CSI, TF_OSC, TF_OSC_ESC, TF_STR, TF_STR_ESC,
};

#define ESC 0x1b
#define CAN 0x18
#define SUB 0x1a
#define ENQ 0x05
#define BEL 0x07

/* Private modes (CSI ? N h) that send reports into the input, and the
 * alternate screen (left on, the caller's shell would print out of sight). */
static const unsigned input_modes[] = { 9, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 2004,
					47, 1047, 1049 };
#define MODE_MOK (1u << 31) /* xterm's modifyOtherKeys (CSI > 4 ; N m) */
#define MODE_KITTY_SET (1u << 30)
#define MODE_CURSOR_HIDDEN (1u << 29) /* CSI ? 25 l */

void termfilter_init(struct sbx_termfilter *f, int flags)
{
	memset(f, 0, offsetof(struct sbx_termfilter, seq));
	f->flags = flags;
}

struct out {
	char *p;
	size_t n;
};

static void put(struct out *o, unsigned char c)
{
	o->p[o->n++] = (char)c;
}

static void begin(struct sbx_termfilter *f, unsigned char c, int state)
{
	f->len = 0;
	f->drop = 0;
	f->seq[f->len++] = c;
	f->state = state;
}

static void push(struct sbx_termfilter *f, unsigned char c)
{
	if (f->len < SBX_TF_SEQ_MAX)
		f->seq[f->len++] = c;
	else
		f->drop = 1;
}

static void emit_seq(struct sbx_termfilter *f, struct out *o)
{
	if (!f->drop) {
		memcpy(o->p + o->n, f->seq, f->len);
		o->n += f->len;
	}
	f->len = 0;
	f->state = TF_GROUND;
}

static void drop_seq(struct sbx_termfilter *f)
{
	f->len = 0;
	f->state = TF_GROUND;
}

/* One parameter of a CSI sequence (p: its first byte); -1 if empty. */
static long param_at(const unsigned char *p, const unsigned char *end)
{
	long v = -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if (v < 1000000)
			v = (v < 0 ? 0 : v) * 10 + (*p - '0');
	return v;
}

static void track_private_modes(struct sbx_termfilter *f, const unsigned char *p,
				const unsigned char *end, int set)
{
	for (; p < end; p++) {
		long m = param_at(p, end);
		for (size_t i = 0; i < sizeof(input_modes) / sizeof(input_modes[0]); i++)
			if (m == (long)input_modes[i])
				f->modes = set ? f->modes | (1u << i) : f->modes & ~(1u << i);
		if (m == 25)
			f->modes = set ? f->modes & ~MODE_CURSOR_HIDDEN : f->modes | MODE_CURSOR_HIDDEN;
		while (p < end && *p != ';')
			p++;
	}
}

/* Bookkeeping of what a passed CSI sequence leaves on (see finish). */
static void track_csi(struct sbx_termfilter *f, unsigned char prefix, unsigned char final,
		      const unsigned char *p, const unsigned char *end)
{
	long first = param_at(p, end);
	const unsigned char *semi = memchr(p, ';', (size_t)(end - p));

	if (prefix == '?' && (final == 'h' || final == 'l'))
		track_private_modes(f, p, end, final == 'h');
	else if (prefix == '>' && final == 'm' && first == 4)
		f->modes = semi && param_at(semi + 1, end) > 0 ? f->modes | MODE_MOK : f->modes & ~MODE_MOK;
	else if (prefix == '>' && final == 'u' && f->kitty < 1000)
		f->kitty++;
	else if (prefix == '<' && final == 'u')
		f->kitty -= first > (long)f->kitty ? f->kitty : first > 0 ? (unsigned)first : f->kitty ? 1 : 0;
	else if (prefix == '=' && final == 'u')
		f->modes |= MODE_KITTY_SET;
}

/* seq holds ESC [ ... final. */
static int csi_passes(struct sbx_termfilter *f)
{
	const unsigned char *s = f->seq + 2, *end = f->seq + f->len - 1;
	unsigned char final = *end, prefix = 0, inter = 0;
	int answers = f->flags & SBX_TF_ANSWERS;

	if (s < end && *s >= '<' && *s <= '?')
		prefix = *s++;
	const unsigned char *params = s, *pend = s;
	while (pend < end && *pend >= 0x30 && *pend <= 0x3f)
		pend++;
	for (const unsigned char *q = pend; q < end; q++)
		if (*q >= 0x20 && *q <= 0x2f)
			inter = *q;
	long first = param_at(params, pend);
	if (final == 't' && !prefix && !inter && first != 22 && first != 23)
		return 0;
	if (final == 'y' && inter == '*')
		return 0;
	int query = final == 'n' || final == 'c' || (inter == '$' && (final == 'p' || final == 'w' || final == 'u')) ||
		    (prefix == '>' && final == 'q') || (!prefix && !inter && final == 'x') ||
		    (prefix == '?' && (final == 'u' || final == 'S' || final == 'm'));
	if (query && !answers)
		return 0;
	if (!inter)
		track_csi(f, prefix, final, params, pend);
	return 1;
}

/* seq holds ESC ] ... BEL or ESC ] ... ESC \. */
static int osc_passes(const struct sbx_termfilter *f)
{
	const unsigned char *s = f->seq + 2;
	const unsigned char *end = f->seq + f->len - (f->seq[f->len - 1] == BEL ? 1 : 2);
	long n = param_at(s, end);

	if (n == 0 || n == 1 || n == 2 || n == 7 || n == 8 || n == 133)
		return 1;
	if (n != 4 && n != 104 && !(n >= 10 && n <= 19) && !(n >= 110 && n <= 119))
		return 0;
	/* a colour query: a field that is just '?' */
	for (const unsigned char *p = s; p < end; p++)
		if (*p == '?' && p[-1] == ';' && (p + 1 == end || p[1] == ';'))
			return (f->flags & SBX_TF_ANSWERS) != 0;
	return 1;
}

/* A C0 control inside a sequence: the terminal acts on it there and then. */
static void c0_in_seq(struct sbx_termfilter *f, unsigned char c)
{
	if (c == ENQ && !(f->flags & SBX_TF_ANSWERS))
		return;
	push(f, c);
}

static void ground(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	if (c == ESC) {
		f->u8need = 0;
		begin(f, c, TF_ESC);
	} else if (c < 0x80) {
		f->u8need = 0;
		if (c != ENQ || (f->flags & SBX_TF_ANSWERS))
			put(o, c);
	} else if (f->u8need && c <= 0xbf) {
		f->u8need--;
		put(o, c);
	} else {
		f->u8need = c >= 0xc3 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
		if (c == 0xc2)
			begin(f, c, TF_C2);
		else if (c > 0x9f)
			put(o, c);
	}
}

/* The step_* functions return 1 when c is to be looked at again, in the
 * state set now. */

/* What every byte inside an escape or control sequence means alike: ESC
 * starts anew, CAN and SUB cancel, C1 bytes end it unfinished (1: look at
 * c again), C0 controls act in place. Returns -1 for the other bytes. */
static int step_in_seq(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	if (c == ESC) {
		begin(f, c, TF_ESC);
	} else if (c == CAN || c == SUB) {
		drop_seq(f);
		put(o, c);
	} else if (c >= 0x80) {
		drop_seq(f);
		return 1;
	} else if (c < 0x20) {
		c0_in_seq(f, c);
	} else {
		return -1;
	}
	return 0;
}

static int step_esc(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	int r = step_in_seq(f, c, o);

	if (r >= 0)
		return r;
	if (c <= 0x2f) {
		push(f, c);
		f->state = TF_ESC_INTER;
	} else if (f->state == TF_ESC && c == '[') {
		push(f, c);
		f->state = TF_CSI;
	} else if (f->state == TF_ESC && c == ']') {
		push(f, c);
		f->state = TF_OSC;
	} else if (f->state == TF_ESC && (c == 'P' || c == 'X' || c == '^' || c == '_')) {
		f->len = 0;
		f->state = TF_STR;
	} else if (c < 0x7f) {
		push(f, c);
		if (f->state == TF_ESC && c == 'Z' && !(f->flags & SBX_TF_ANSWERS))
			drop_seq(f);
		else
			emit_seq(f, o);
	} else {
		push(f, c);
	}
	return 0;
}

static int step_csi(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	int r = step_in_seq(f, c, o);

	if (r >= 0)
		return r;
	if (c >= 0x40 && c <= 0x7e) {
		push(f, c);
		if (!f->drop && csi_passes(f))
			emit_seq(f, o);
		else
			drop_seq(f);
	} else {
		push(f, c);
	}
	return 0;
}

static int step_string(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	int osc = f->state == TF_OSC || f->state == TF_OSC_ESC;

	if (f->state == TF_OSC_ESC || f->state == TF_STR_ESC) {
		if (c != '\\') {
			/* ESC and anything but '\' ends the string unfinished */
			begin(f, ESC, TF_ESC);
			return 1;
		}
		if (osc) {
			push(f, c);
			if (!f->drop && osc_passes(f))
				emit_seq(f, o);
			else
				drop_seq(f);
		} else {
			drop_seq(f);
		}
	} else if (c == CAN || c == SUB) {
		drop_seq(f);
		put(o, c);
	} else if (c == ESC) {
		if (osc)
			push(f, c);
		f->state = osc ? TF_OSC_ESC : TF_STR_ESC;
	} else if (osc && c == BEL) {
		push(f, c);
		if (!f->drop && osc_passes(f))
			emit_seq(f, o);
		else
			drop_seq(f);
	} else if (osc) {
		push(f, c);
	}
	return 0;
}

static void step(struct sbx_termfilter *f, unsigned char c, struct out *o)
{
	int again;
	do {
		again = 0;
		switch (f->state) {
		case TF_GROUND:
			ground(f, c, o);
			break;
		case TF_C2:
			drop_seq(f);
			if (c >= 0x80 && c <= 0x9f)
				break; /* U+0080-U+009F: a C1 control */
			put(o, 0xc2);
			if (c >= 0xa0 && c <= 0xbf)
				put(o, c);
			else
				again = 1;
			break;
		case TF_ESC:
		case TF_ESC_INTER:
			again = step_esc(f, c, o);
			break;
		case TF_CSI:
			again = step_csi(f, c, o);
			break;
		default:
			again = step_string(f, c, o);
			break;
		}
	} while (again);
}

size_t termfilter_feed(struct sbx_termfilter *f, const char *in, size_t n, char *out)
{
	struct out o = { out, 0 };
	for (size_t i = 0; i < n; i++)
		step(f, (unsigned char)in[i], &o);
	return o.n;
}

size_t termfilter_finish(struct sbx_termfilter *f, char *out)
{
	size_t n = 0;

	f->len = 0;
	f->state = TF_GROUND;
	f->u8need = 0;
	for (size_t i = 0; i < sizeof(input_modes) / sizeof(input_modes[0]); i++)
		if (f->modes & (1u << i))
			n += (size_t)snprintf(out + n, 16, "\033[?%ul", input_modes[i]);
	if (f->modes & MODE_MOK)
		n += (size_t)snprintf(out + n, 16, "\033[>4m");
	if (f->kitty)
		n += (size_t)snprintf(out + n, 16, "\033[<%uu", f->kitty);
	if (f->modes & MODE_KITTY_SET)
		n += (size_t)snprintf(out + n, 16, "\033[=0;1u");
	if (f->modes & MODE_CURSOR_HIDDEN)
		n += (size_t)snprintf(out + n, 16, "\033[?25h");
	f->modes = 0;
	f->kitty = 0;
	return n;
}
