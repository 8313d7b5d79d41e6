/* mcp_proto.h - the Model Context Protocol's wire layer for `sbxrun mcp`:
 * newline-delimited JSON-RPC 2.0 framing, message classification, replies,
 * tool-argument decoding, output capping and image sniffing. Pure: no I/O,
 * no sandbox; unit-tested (tests/unit/test_mcp.c) and fuzzed
 * (tests/fuzz/fuzz_mcp.c). */
#ifndef SBX_MCP_PROTO_H
#define SBX_MCP_PROTO_H

#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#define MCP_LINE_MAX (8u << 20)        /* longest message accepted */
#define MCP_OUTPUT_CAP (256u << 10)    /* per stream of one exec */
#define MCP_IMAGE_MAX (5u << 20)

enum {
	MCP_PARSE_ERROR = -32700,
	MCP_INVALID_REQUEST = -32600,
	MCP_METHOD_NOT_FOUND = -32601,
	MCP_INVALID_PARAMS = -32602,
	MCP_INTERNAL_ERROR = -32603,
};

/* Splits a byte stream into lines; a line longer than MCP_LINE_MAX is
 * dropped whole and reported once with too_long set. */
struct mcp_reader {
	char *buf;
	size_t len, cap;
	int discarding;
};
typedef void (*mcp_line_fn)(void *arg, const char *line, size_t len, int too_long);
void mcp_reader_feed(struct mcp_reader *r, const char *data, size_t n, mcp_line_fn fn, void *arg);
void mcp_reader_free(struct mcp_reader *r);

enum mcp_kind { MCP_REQUEST, MCP_NOTIFICATION, MCP_RESPONSE, MCP_INVALID };

struct mcp_msg {
	enum mcp_kind kind;
	struct json_object *root;   /* owned */
	struct json_object *id;     /* borrowed from root (NULL: none) */
	struct json_object *params; /* borrowed, an object or NULL */
	const char *method;
	int code;                   /* MCP_INVALID: the error to answer */
	char why[128];
};
/* Never fails: a message that is not a JSON-RPC 2.0 object is MCP_INVALID. */
void mcp_parse(const char *line, size_t len, struct mcp_msg *m);
void mcp_msg_free(struct mcp_msg *m);

/* Replies (new objects; id is copied, NULL becomes null). */
struct json_object *mcp_result(struct json_object *id, struct json_object *result);
struct json_object *mcp_error(struct json_object *id, int code, const char *msg);
struct json_object *mcp_notification(const char *method, struct json_object *params);
/* The protocol version to answer with for the client's requested one. */
const char *mcp_negotiate(const char *requested);

/* A tool result: one text item, optional structured content. */
struct json_object *mcp_tool_text(const char *text, int is_error, struct json_object *structured);

/* Decoded tool arguments; strings are borrowed from the JSON. */
struct mcp_args {
	const char **cmd;    /* NULL-ended, owned array */
	const char *session_name, *workdir, *user, *chars, *url, *filepath, *path, *content;
	char **env;          /* K=V, NULL-ended, owned */
	int64_t timeout_ms;  /* -1: not given */
	int64_t yield_ms;    /* -1: not given */
};
/* Fills a from the arguments of tool; on bad arguments returns -1 with
 * why naming the argument. Unknown tools return -2. */
int mcp_args_decode(const char *tool, struct json_object *args, struct mcp_args *a, char *why, size_t size);
void mcp_args_free(struct mcp_args *a);

/* Output kept up to a cap; what goes beyond is counted. */
struct mcp_out {
	char *data;
	size_t len, cap;
	uint64_t dropped;
};
void mcp_out_add(struct mcp_out *o, const char *p, size_t n);
/* The kept bytes as valid UTF-8 text with a marker when bytes were dropped
 * (a new string). */
char *mcp_out_text(const struct mcp_out *o);
void mcp_out_free(struct mcp_out *o);

/* The image type from its first bytes, or NULL. */
const char *mcp_image_mime(const unsigned char *p, size_t n);
char *mcp_base64(const unsigned char *p, size_t n);

#endif
