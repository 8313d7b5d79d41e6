/* mcp_tools.c - what `sbxrun mcp` tells the model about its tools: names,
 * descriptions and JSON Schemas (tools/list). The descriptions are what an
 * agent reads to decide how to call them, so they say what each tool can
 * and cannot do. Argument decoding is in mcp_proto.c. */
#include "mcp/mcp_tools.h"

static const char tools_json[] =
"["
"{\"name\":\"exec\",\"title\":\"Run a command in the sandbox\","
"\"description\":\"Run a command in this conversation's Linux sandbox (a Debian container on the user's machine; "
"files and installed packages persist between calls; the network reaches package registries only). "
"cmd is an argv array, not a shell line: use [\\\"bash\\\", \\\"-lc\\\", \\\"...\\\"] for pipes, redirection or globs. "
"Returns stdout, stderr and the exit status; a command that fails is a normal result (look at exit_code). "
"Output beyond 256 KiB per stream is cut, with a note saying how much was dropped. "
"The command is killed after 'timeout' seconds (default and maximum: the sandbox's per-command limit). "
"stdin is empty. With session_name, the command instead starts a named interactive process on its own terminal "
"(a shell, a Python REPL, a program that asks for input) that keeps running after the call; the call returns what "
"it printed within yield_time_ms, and feed_chars sends it input. If that session_name is still running, nothing new "
"is started and its new output is returned.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"cmd\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"description\":\"program and its arguments, e.g. [\\\"python3\\\", \\\"-c\\\", \\\"print(1)\\\"]\"},"
"\"session_name\":{\"type\":\"string\",\"description\":\"name of an interactive process to start on a terminal (see feed_chars)\"},"
"\"workdir\":{\"type\":\"string\",\"description\":\"absolute working directory inside the sandbox (default: the workspace)\"},"
"\"timeout\":{\"type\":\"number\",\"minimum\":0,\"description\":\"seconds before the command is killed (capped by the sandbox's limit)\"},"
"\"env\":{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\"},\"description\":\"extra environment variables\"},"
"\"user\":{\"type\":\"string\",\"description\":\"user to run as; only the sandbox's own user is available\"},"
"\"yield_time_ms\":{\"type\":\"number\",\"minimum\":0,\"description\":\"with session_name: how long to collect output before returning (default 2000)\"}"
"},\"required\":[\"cmd\"],\"additionalProperties\":false},"
"\"outputSchema\":{\"type\":\"object\",\"properties\":{"
"\"exit_code\":{\"type\":[\"integer\",\"null\"],\"description\":\"exit status (128+N when killed by signal N, 124 on timeout); null while still running\"},"
"\"signal\":{\"type\":\"integer\",\"description\":\"the signal that ended it, or 0\"},"
"\"reason\":{\"type\":\"string\",\"enum\":[\"exit\",\"signal\",\"timeout\",\"oom\",\"pids\",\"disk\",\"error\",\"running\"],\"description\":\"how it ended, as in run --json\"},"
"\"duration_ms\":{\"type\":\"integer\"},"
"\"stdout\":{\"type\":\"string\"},"
"\"stderr\":{\"type\":\"string\"},"
"\"truncated\":{\"type\":\"boolean\",\"description\":\"output beyond the cap was dropped\"},"
"\"session_name\":{\"type\":\"string\"}"
"},\"required\":[\"exit_code\",\"signal\",\"reason\",\"duration_ms\",\"stdout\",\"stderr\",\"truncated\"]}},"

"{\"name\":\"feed_chars\",\"title\":\"Type into an interactive process\","
"\"description\":\"Send input to an interactive process started by exec with session_name, then return the output it "
"printed since the last call (collected for yield_time_ms). chars is written to its terminal as typed: end a line with "
"\\\"\\\\n\\\"; control characters work (\\\"\\\\u0003\\\" is Ctrl-C, \\\"\\\\u0004\\\" is Ctrl-D). Send an empty string to only "
"read new output. When the process has exited, the result says so with its exit status. The terminal echoes input. "
"Output is kept in a bounded buffer between calls (oldest bytes dropped first).\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"session_name\":{\"type\":\"string\",\"description\":\"the name given to exec\"},"
"\"chars\":{\"type\":\"string\",\"description\":\"bytes to type\"},"
"\"yield_time_ms\":{\"type\":\"number\",\"minimum\":0,\"description\":\"how long to collect output (default 1000)\"}"
"},\"required\":[\"session_name\",\"chars\"],\"additionalProperties\":false}},"

"{\"name\":\"download\",\"title\":\"Download a file into the sandbox\","
"\"description\":\"Fetch an http(s) URL on the host side and save it in the sandbox's workspace. Only hosts the user's "
"profile allows ([download] allow) can be fetched, with a size cap; code inside the sandbox cannot reach them itself. "
"filepath is relative to the workspace or an absolute path inside it; its directory must exist.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"url\":{\"type\":\"string\",\"description\":\"http or https URL\"},"
"\"filepath\":{\"type\":\"string\",\"description\":\"where to save it in the workspace\"}"
"},\"required\":[\"url\",\"filepath\"],\"additionalProperties\":false}},"

"{\"name\":\"open_image\",\"title\":\"Show an image from the sandbox\","
"\"description\":\"Read an image file from the sandbox and show it (PNG, JPEG, WebP or GIF, up to 5 MiB). "
"path is absolute inside the sandbox or relative to the workspace; symbolic links are not followed.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"path\":{\"type\":\"string\",\"description\":\"the image file\"}"
"},\"required\":[\"path\"],\"additionalProperties\":false}},"

"{\"name\":\"read_file\",\"title\":\"Read a text file\","
"\"description\":\"Return the contents of a file in the sandbox as text (up to 256 KiB; invalid UTF-8 is replaced). "
"path is absolute inside the sandbox or relative to the workspace; symbolic links are not followed.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"path\":{\"type\":\"string\"}},\"required\":[\"path\"],\"additionalProperties\":false}},"

"{\"name\":\"write_file\",\"title\":\"Write a text file\","
"\"description\":\"Create or replace a file in the sandbox with content, exactly as given (no shell quoting involved). "
"path is absolute inside the sandbox or relative to the workspace; its directory must exist; symbolic links are not "
"followed.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"path\":{\"type\":\"string\"},\"content\":{\"type\":\"string\"}},\"required\":[\"path\",\"content\"],"
"\"additionalProperties\":false}},"

"{\"name\":\"snapshot\",\"title\":\"Keep the sandbox's files\","
"\"description\":\"Take a snapshot of the sandbox's file system (every file it wrote, installed packages, the "
"workspace) so that you can try something and go back with restore. Running processes and memory are not kept. "
"The sandbox pauses for the moment of the copy. Returns the snapshot's name; name is optional (letters, digits, "
"'.', '_', '-').\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"name\":{\"type\":\"string\",\"description\":\"the snapshot's name (default: one is made up)\"}"
"},\"additionalProperties\":false}},"

"{\"name\":\"list_snapshots\",\"title\":\"List the snapshots\","
"\"description\":\"The names of the snapshots taken in this conversation, oldest first.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}},"

"{\"name\":\"restore\",\"title\":\"Roll the sandbox back to a snapshot\","
"\"description\":\"Put the sandbox's files back as they were when the snapshot was taken. Every process in the "
"sandbox is ended (interactive ones too); files written since are gone. Only snapshots taken in this conversation "
"can be restored.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"snapshot\":{\"type\":\"string\",\"description\":\"a name that snapshot returned\"}"
"},\"required\":[\"snapshot\"],\"additionalProperties\":false}},"

"{\"name\":\"list_changes\",\"title\":\"List what changed in the project\","
"\"description\":\"When the user started this server on a project (a checkout of theirs, at the workspace), "
"list the files added, changed and deleted there so far (at most 1000 named; the counts cover all). The user's "
"copy is never written: the user reviews these changes and applies or discards them. Errors when the sandbox "
"works on no project.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}},"

"{\"name\":\"diff_changes\",\"title\":\"Diff what changed in the project\","
"\"description\":\"A unified diff of the project's changes against the user's copy (a line for a binary file), "
"for the given paths (relative to the workspace; a directory covers what is below it) or all. Cut at 256 KiB "
"with a note.\","
"\"inputSchema\":{\"type\":\"object\",\"properties\":{"
"\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"description\":\"files or directories to diff (default: all)\"}"
"},\"additionalProperties\":false}}"
"]";

struct json_object *mcp_tools_list(void)
{
	struct json_object *r = json_object_new_object();
	json_object_object_add(r, "tools", json_tokener_parse(tools_json));
	return r;
}
