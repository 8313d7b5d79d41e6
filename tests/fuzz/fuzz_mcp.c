/* fuzz_mcp.c - libFuzzer harness for `sbxrun mcp`'s protocol layer: the
 * line framing (fed in two pieces, as reads split it), JSON-RPC
 * classification, replies, tool-argument decoding for every tool, and the
 * output text (UTF-8 repair, cap) and image sniffing on the same bytes. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const tools[] = { "exec", "feed_chars", "download", "open_image", "read_file",
				     "write_file", "bogus" };

static void on_line(void *arg, const char *line, size_t len, int too_long)
{
	struct mcp_msg m;
	struct json_object *args, *name;

	(void)arg;
	if (too_long)
		return;
	if (strlen(line) > len)
		abort();
	mcp_parse(line, len, &m);
	if (m.kind == MCP_INVALID && m.code != MCP_PARSE_ERROR && m.code != MCP_INVALID_REQUEST)
		abort();
	struct json_object *reply = m.kind == MCP_INVALID ? mcp_error(m.id, m.code, m.why) : mcp_result(m.id, NULL);
	json_object_put(reply);
	if (m.params && json_object_object_get_ex(m.params, "arguments", &args)) {
		for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
			struct mcp_args a;
			char why[300];
			int r = mcp_args_decode(tools[i], args, &a, why, sizeof(why));
			if (r == 0 && !strcmp(tools[i], "exec") && (!a.cmd || !a.cmd[0]))
				abort();
			mcp_args_free(&a);
		}
		if (json_object_object_get_ex(m.params, "name", &name) && json_object_is_type(name, json_type_string))
			(void)mcp_negotiate(json_object_get_string(name));
	}
	mcp_msg_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mcp_reader rd = { 0 };
	struct mcp_out o = { .cap = 64 };
	size_t half = size ? data[0] % (size + 1) : 0;

	mcp_reader_feed(&rd, (const char *)data, half, on_line, NULL);
	mcp_reader_feed(&rd, (const char *)data + half, size - half, on_line, NULL);
	mcp_reader_free(&rd);
	mcp_out_add(&o, (const char *)data, size);
	mcp_out_add(&o, (const char *)data, size / 2);
	char *t = mcp_out_text(&o);
	if (o.len > 64 || o.dropped + o.len != size + size / 2)
		abort();
	free(t);
	mcp_out_free(&o);
	(void)mcp_image_mime(data, size);
	free(mcp_base64(data, size));
	return 0;
}
