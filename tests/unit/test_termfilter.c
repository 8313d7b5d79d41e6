/* test_termfilter.c - the filter between the sandbox's output and the
 * caller's terminal: what passes, what is dropped, and that a sequence
 * split across reads at any byte is judged the same. */
#include <stdlib.h>

#include "term/termfilter.h"
#include "unit.h"

/* Filters s in pieces of `chunk` bytes (0: whole), then finishes. */
static char *filter(const char *s, int flags, size_t chunk)
{
	static struct sbx_termfilter f;
	size_t n = strlen(s), o = 0;
	char *out = malloc(n + 2 * SBX_TF_SEQ_MAX + 1);

	termfilter_init(&f, flags);
	for (size_t i = 0; i < n;) {
		size_t k = chunk && n - i > chunk ? chunk : n - i;
		o += termfilter_feed(&f, s + i, k, out + o);
		i += k;
	}
	o += termfilter_finish(&f, out + o);
	out[o] = '\0';
	return out;
}

/* Same result whole and at every split into pieces of 1..7 bytes. */
static void check(const char *in, int flags, const char *want)
{
	for (size_t chunk = 0; chunk < 8; chunk++) {
		char *got = filter(in, flags, chunk);
		CHECK_STR(got, want);
		free(got);
	}
}

static void test_text_and_colours_pass(void)
{
	check("plain text\r\n", 0, "plain text\r\n");
	check("\033[1;31mred\033[0m \033[38;5;208mx\033[m", 0, "\033[1;31mred\033[0m \033[38;5;208mx\033[m");
	check("\033[2J\033[H\033[?25l\033[?25h\033[10;20r", 0, "\033[2J\033[H\033[?25l\033[?25h\033[10;20r");
	check("caf\xc3\xa9 \xe2\x9b\x84 \xf0\x9f\x98\x80", 0, "caf\xc3\xa9 \xe2\x9b\x84 \xf0\x9f\x98\x80");
	check("\xc2\xa0nbsp", 0, "\xc2\xa0nbsp");
	check("\033(B\033)0\033=\033>\0337\0338", 0, "\033(B\033)0\033=\033>\0337\0338");
}

static void test_clipboard_is_dropped(void)
{
	check("a\033]52;c;aGk=\007b", 0, "ab");
	check("a\033]52;c;aGk=\033\\b", 0, "ab");
	check("a\033]52;c;?\007b", SBX_TF_ANSWERS, "ab");
	/* aborted by another sequence: the OSC goes, the colour stays */
	check("\033]52;c;aGk=\033[1mB", 0, "\033[1mB");
	check("x\033]1337;File=name=eA==:aGk=\007y", 0, "xy");
}

static void test_harmless_osc_pass(void)
{
	check("\033]0;title\007", 0, "\033]0;title\007");
	check("\033]2;t\033\\", 0, "\033]2;t\033\\");
	check("\033]8;;http://x/\033\\link\033]8;;\033\\", 0, "\033]8;;http://x/\033\\link\033]8;;\033\\");
	check("\033]11;#000000\007", 0, "\033]11;#000000\007");
	check("\033]11;?\007", 0, "");
	check("\033]4;1;?\007", 0, "");
	check("\033]11;?\007", SBX_TF_ANSWERS, "\033]11;?\007");
}

static void test_queries_are_dropped(void)
{
	check("a\033[6nb\033[5n\033[?6n", 0, "ab");
	check("\033[c\033[>c\033[=c", 0, "");
	check("\033[?2004$p\033[>q\033[x", 0, "");
	check("\033Z\005", 0, "");
	check("\033[6n\033[c\033Z", SBX_TF_ANSWERS, "\033[6n\033[c\033Z");
	/* always dropped, -t or not: title report, window ops, screen checksum */
	check("\033[21t\033[20t\033[8;1;1t\033[2t", SBX_TF_ANSWERS, "");
	check("\033[22;0t\033[23;0t", 0, "\033[22;0t\033[23;0t");
	check("\033[1;1;1;1;1;1*y", SBX_TF_ANSWERS, "");
	/* a C0 control inside a sequence: ENQ is an answerback query too */
	check("\033[1\005m", 0, "\033[1m");
}

static void test_strings_are_dropped(void)
{
	check("a\033P$qm\033\\b", SBX_TF_ANSWERS, "ab");
	check("a\033P+q544e\033\\b", 0, "ab");
	check("a\033_Gi=1;AAAA\033\\b", 0, "ab");
	check("a\033X sos \033\\\033^pm\033\\b", 0, "ab");
	/* tmux passthrough of a clipboard write: nothing of it gets out */
	check("\033Ptmux;\033\033]52;c;aGk=\007\033\\z", 0, "\033\\z");
	/* CAN ends a string; the rest is text again */
	check("\033Pxyz\030ok", 0, "\030ok");
}

static void test_c1_controls_are_dropped(void)
{
	check("a\x9b" "6nb", 0, "a6nb");
	check("a\x9d" "52;c;aGk=\x9c" "b", 0, "a52;c;aGk=b");
	check("a\xc2\x9b" "6n\xc2\x9d" "52;c;x\xc2\x9c" "b", 0, "a6n52;c;xb");
}

static void test_long_sequences_are_dropped(void)
{
	size_t n = SBX_TF_SEQ_MAX + 100;
	char *s = malloc(n + 16);
	memcpy(s, "\033]0;", 4);
	memset(s + 4, 'x', n);
	strcpy(s + 4 + n, "\007ok");
	check(s, 0, "ok");
	free(s);
}

static void test_input_modes_are_turned_off_at_the_end(void)
{
	check("\033[?1000;1006h\033[?2004h", 0, "\033[?1000;1006h\033[?2004h\033[?1000l\033[?1006l\033[?2004l");
	check("\033[?1000h\033[?1000l", 0, "\033[?1000h\033[?1000l");
	check("\033[>1u\033[>4;2m", 0, "\033[>1u\033[>4;2m\033[>4m\033[<1u");
	check("\033[>1u\033[<u", 0, "\033[>1u\033[<u");
	check("\033[<u", 0, "\033[<u");
	/* a full-screen program killed in the middle */
	check("\033[?1049h\033[?25lx", SBX_TF_ANSWERS, "\033[?1049h\033[?25lx\033[?1049l\033[?25h");
	check("\033[?1049h\033[?25l\033[?25h\033[?1049l", 0, "\033[?1049h\033[?25l\033[?25h\033[?1049l");
	/* unfinished at the end: dropped */
	check("a\033[1", 0, "a");
}

int main(void)
{
	test_text_and_colours_pass();
	test_clipboard_is_dropped();
	test_harmless_osc_pass();
	test_queries_are_dropped();
	test_strings_are_dropped();
	test_c1_controls_are_dropped();
	test_long_sequences_are_dropped();
	test_input_modes_are_turned_off_at_the_end();
	return unit_done("test_termfilter");
}
