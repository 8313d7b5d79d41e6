/* test_mcp.c - the MCP protocol layer of `sbxrun mcp` (src/mcp/mcp_proto.c):
 * framing, JSON-RPC classification, replies, argument decoding, output
 * capping and UTF-8 repair, image sniffing, base64. */
#include <stdlib.h>

#include "mcp/mcp_proto.h"
#include "mcp/mcp_tools.h"
#include "unit.h"

struct lines {
	int n, too_long;
	char got[4][64];
};

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
	struct lines *l = arg;
	if (too_long) {
		l->too_long++;
		return;
	}
	if (l->n < 4)
		snprintf(l->got[l->n], sizeof(l->got[0]), "%.*s", (int)len, line);
	l->n++;
}

static void test_framing(void)
{
	struct mcp_reader r = { 0 };
	struct lines l = { 0 };

	mcp_reader_feed(&r, "\n\r\nab", 5, on_line, &l);
	CHECK(l.n == 0);
	mcp_reader_feed(&r, "c\r\nde\nf", 7, on_line, &l);
	CHECK(l.n == 2);
	CHECK_STR(l.got[0], "abc");
	CHECK_STR(l.got[1], "de");
	size_t big = MCP_LINE_MAX + 10;
	char *huge = malloc(big);
	memset(huge, 'x', big);
	mcp_reader_feed(&r, huge, big, on_line, &l);
	mcp_reader_feed(&r, huge, 100, on_line, &l);
	CHECK(l.too_long == 1);
	mcp_reader_feed(&r, "\ng\n", 3, on_line, &l);
	CHECK(l.n == 3);
	CHECK_STR(l.got[2], "g"); /* the huge line is dropped whole, serving goes on */
	free(huge);
	mcp_reader_free(&r);
}

static enum mcp_kind kind_of(const char *s, int *code)
{
	struct mcp_msg m;
	mcp_parse(s, strlen(s), &m);
	enum mcp_kind k = m.kind;
	*code = m.code;
	mcp_msg_free(&m);
	return k;
}

static void test_classify(void)
{
	int code;
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}", &code) == MCP_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":\"a\",\"method\":\"ping\",\"params\":{}}", &code) == MCP_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}", &code) == MCP_NOTIFICATION);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}", &code) == MCP_RESPONSE);
	CHECK(kind_of("garbage", &code) == MCP_INVALID && code == MCP_PARSE_ERROR);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1} x", &code) == MCP_INVALID && code == MCP_PARSE_ERROR);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"", &code) == MCP_INVALID && code == MCP_PARSE_ERROR);
	CHECK(kind_of("[1]", &code) == MCP_INVALID && code == MCP_INVALID_REQUEST);
	CHECK(kind_of("{\"id\":1,\"method\":\"ping\"}", &code) == MCP_INVALID && code == MCP_INVALID_REQUEST);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", &code) == MCP_INVALID);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", &code) == MCP_INVALID);
	CHECK(kind_of("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\",\"params\":[1]}", &code) == MCP_INVALID);
}

static void test_replies(void)
{
	struct json_object *id = json_object_new_int(7);
	struct json_object *e = mcp_error(id, MCP_METHOD_NOT_FOUND, "method not found");
	CHECK_STR(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN),
		  "{\"jsonrpc\":\"2.0\",\"id\":7,\"error\":{\"code\":-32601,\"message\":\"method not found\"}}");
	json_object_put(e);
	e = mcp_error(NULL, MCP_PARSE_ERROR, "x");
	CHECK_CONTAINS(json_object_to_json_string_ext(e, JSON_C_TO_STRING_PLAIN), "\"id\":null");
	json_object_put(e);
	json_object_put(id);
	CHECK_STR(mcp_negotiate("2025-06-18"), "2025-06-18");
	CHECK_STR(mcp_negotiate("2025-11-25"), "2025-11-25");
	CHECK_STR(mcp_negotiate("2024-11-05"), "2025-11-25");
	CHECK_STR(mcp_negotiate(NULL), "2025-11-25");
	struct json_object *tools = mcp_tools_list(), *arr;
	CHECK(json_object_object_get_ex(tools, "tools", &arr) && json_object_array_length(arr) == 12);
	/* every tool listed is one the decoder knows, with no argument given
	 * or with its required ones missing: never "unknown tool" */
	for (size_t i = 0; arr && i < json_object_array_length(arr); i++) {
		struct json_object *t = json_object_array_get_idx(arr, i), *n;
		struct mcp_args a;
		char why[200];
		CHECK(json_object_object_get_ex(t, "name", &n));
		CHECK(mcp_args_decode(json_object_get_string(n), NULL, &a, why, sizeof(why)) != -2);
		mcp_args_free(&a);
	}
	json_object_put(tools);
}

/* The decoded strings are borrowed from the JSON: it lives until the end. */
static struct json_object *kept[64];
static size_t nkept;

static int decode(const char *tool, const char *json, struct mcp_args *a, char *why)
{
	struct json_object *o = json_tokener_parse(json);
	kept[nkept++ % 64] = o;
	return mcp_args_decode(tool, o, a, why, 300);
}

static void test_args(void)
{
	struct mcp_args a;
	char why[300];

	CHECK(decode("exec", "{\"cmd\":[\"ls\",\"-l\"],\"timeout\":1.5,\"env\":{\"A\":\"b\"},\"workdir\":null}", &a, why) == 0);
	CHECK_STR(a.cmd[1], "-l");
	CHECK(a.cmd[2] == NULL && a.timeout_ms == 1500 && a.yield_ms == -1 && !a.workdir);
	CHECK_STR(a.env[0], "A=b");
	mcp_args_free(&a);
	CHECK(decode("exec", "{}", &a, why) == -1);
	CHECK_STR(why, "argument 'cmd': missing (required)");
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[]}", &a, why) == -1);
	CHECK_CONTAINS(why, "'cmd'");
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[\"a\",1]}", &a, why) == -1);
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[\"a\"],\"timeout\":-1}", &a, why) == -1);
	CHECK_CONTAINS(why, "'timeout'");
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[\"a\"],\"env\":{\"A\":1}}", &a, why) == -1);
	CHECK_CONTAINS(why, "'env'");
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[\"a\"],\"env\":{\"A=B\":\"c\"}}", &a, why) == -1);
	mcp_args_free(&a);
	CHECK(decode("exec", "{\"cmd\":[\"a\"],\"color\":1}", &a, why) == -1);
	CHECK_STR(why, "argument 'color': not an argument of this tool");
	mcp_args_free(&a);
	CHECK(decode("exec", "[1]", &a, why) == -1);
	mcp_args_free(&a);
	CHECK(decode("feed_chars", "{\"session_name\":\"py\",\"chars\":\"\\u0003\"}", &a, why) == 0);
	CHECK_STR(a.chars, "\003");
	mcp_args_free(&a);
	CHECK(decode("feed_chars", "{\"session_name\":\"py\",\"chars\":\"a\\u0000b\"}", &a, why) == -1);
	CHECK_CONTAINS(why, "NUL");
	mcp_args_free(&a);
	CHECK(decode("download", "{\"url\":\"http://x/\"}", &a, why) == -1);
	CHECK_CONTAINS(why, "'filepath'");
	mcp_args_free(&a);
	CHECK(decode("open_image", "{\"path\":\"a.png\"}", &a, why) == 0);
	mcp_args_free(&a);
	CHECK(decode("rm_rf", "{}", &a, why) == -2);
	CHECK_CONTAINS(why, "unknown tool 'rm_rf'");
	mcp_args_free(&a);
}

static void test_output(void)
{
	struct mcp_out o = { .cap = 4 };
	mcp_out_add(&o, "abcdef", 6);
	mcp_out_add(&o, "gh", 2);
	CHECK(o.len == 4 && o.dropped == 4);
	char *t = mcp_out_text(&o);
	CHECK_STR(t, "abcd\n[... 4 more bytes of output dropped ...]\n");
	free(t);
	mcp_out_free(&o);
	struct mcp_out u = { 0 };
	mcp_out_add(&u, "ok \xc3\xa9 \xff \xc3 \xed\xa0\x80 \xf0\x9f\x98\x80", 18);
	mcp_out_add(&u, "\0z", 2);
	t = mcp_out_text(&u);
	CHECK_STR(t, "ok \xc3\xa9 \xef\xbf\xbd \xef\xbf\xbd \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd \xf0\x9f\x98\x80\xef\xbf\xbdz");
	free(t);
	mcp_out_free(&u);
}

static void test_images(void)
{
	CHECK_STR(mcp_image_mime((const unsigned char *)"\x89PNG\r\n\x1a\nxx", 10), "image/png");
	CHECK_STR(mcp_image_mime((const unsigned char *)"\xff\xd8\xff\xe0", 4), "image/jpeg");
	CHECK_STR(mcp_image_mime((const unsigned char *)"GIF89a..", 8), "image/gif");
	CHECK_STR(mcp_image_mime((const unsigned char *)"RIFF\0\0\0\0WEBPVP8 ", 16), "image/webp");
	CHECK(mcp_image_mime((const unsigned char *)"RIFF\0\0\0\0WAVE", 12) == NULL);
	CHECK(mcp_image_mime((const unsigned char *)"\x89PNG", 4) == NULL);
	CHECK(mcp_image_mime((const unsigned char *)"<svg", 4) == NULL);
	char *b = mcp_base64((const unsigned char *)"Man", 3);
	CHECK_STR(b, "TWFu");
	free(b);
	b = mcp_base64((const unsigned char *)"Ma", 2);
	CHECK_STR(b, "TWE=");
	free(b);
	b = mcp_base64((const unsigned char *)"M", 1);
	CHECK_STR(b, "TQ==");
	free(b);
	b = mcp_base64((const unsigned char *)"", 0);
	CHECK_STR(b, "");
	free(b);
}

int main(void)
{
	test_framing();
	test_classify();
	test_replies();
	test_args();
	test_output();
	test_images();
	for (size_t i = 0; i < nkept && i < 64; i++)
		json_object_put(kept[i]);
	return unit_done("test_mcp");
}
