// tests/mcp/client.mjs - drives `sbxrun mcp` with the official MCP TypeScript
// SDK client over stdio (tests/integration/70-mcp.sh installs the SDK next to
// a copy of this file). Usage: node client.mjs SBXRUN PORT [sbxrun args...]
// Prints "ok NAME" per check; exits 1 at the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const [sbx, port, ...extra] = process.argv.slice(2);
const fail = (what, detail) => {
	console.error(`FAIL ${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
	process.exit(1);
};
const check = (cond, what, detail) => (cond ? console.log(`ok ${what}`) : fail(what, detail));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

const transport = new StdioClientTransport({ command: sbx, args: ["mcp", ...extra], env: { ...process.env }, stderr: "inherit" });
const client = new Client({ name: "sbxrun-test", version: "1.0.0" });
await client.connect(transport);
check(client.getServerVersion()?.name === "sbxrun", "initialize", client.getServerVersion());
check(client.getServerCapabilities()?.tools, "tools capability", client.getServerCapabilities());

const { tools } = await client.listTools();
const names = tools.map((t) => t.name);
for (const n of ["exec", "feed_chars", "download", "open_image"])
	check(names.includes(n), `tools/list has ${n}`, names);
check(tools.find((t) => t.name === "exec").outputSchema, "exec has an outputSchema", tools[0]);

const exec = (args, opts) => client.callTool({ name: "exec", arguments: args }, undefined, opts);
let r = await exec({ cmd: ["python3", "-c", "import sys; print(6*7); print('oops', file=sys.stderr)"] });
let s = r.structuredContent;
check(!r.isError && s.exit_code === 0 && s.stdout === "42\n" && s.stderr === "oops\n" && s.reason === "exit",
      "exec python3 -c", r);
check(text(r).includes("42"), "exec text content", r);

r = await exec({ cmd: ["python3", "-c", "raise SystemExit(4)"] });
check(!r.isError && r.structuredContent.exit_code === 4, "a failing command is a normal result", r);

r = await exec({ cmd: ["python3", "-c", "print('x' * 400000)"] });
s = r.structuredContent;
check(s.truncated && s.stdout.length <= 262144 + 200 && s.stdout.includes("bytes of output dropped"),
      "output capped at 256 KiB with a marker", { truncated: s.truncated, len: s.stdout.length });

r = await exec({ cmd: ["no-such-program"] });
check(!r.isError && r.structuredContent.exit_code === 127, "a missing program exits 127", r);

let t0 = Date.now();
r = await exec({ cmd: ["sleep", "30"], timeout: 1 });
s = r.structuredContent;
check(s.reason === "timeout" && s.exit_code === 124 && Date.now() - t0 < 15000, "timeout", r);

let progress = 0;
r = await exec({ cmd: ["sleep", "2.5"] }, { onprogress: () => progress++ });
check(progress >= 1 && r.structuredContent.exit_code === 0, "progress notifications", { progress, r });

// cancellation kills the command: it would leave a file after 3 s
const ac = new AbortController();
const pending = exec({ cmd: ["sh", "-c", "sleep 3; touch /tmp/survived"] }, { signal: ac.signal });
await sleep(1000);
ac.abort("test");
let aborted = false;
try { await pending; } catch { aborted = true; }
await sleep(3500);
r = await exec({ cmd: ["sh", "-c", "test -e /tmp/survived && echo survived || echo killed"] });
check(aborted && r.structuredContent.stdout === "killed\n", "cancellation kills the command", r);

// an interactive Python REPL on a terminal
const feed = (chars, ms = 1000) =>
	client.callTool({ name: "feed_chars", arguments: { session_name: "py", chars, yield_time_ms: ms } });
r = await exec({ cmd: ["python3", "-q", "-i"], session_name: "py", yield_time_ms: 2000 });
check(text(r).includes(">>>") && r.structuredContent.reason === "running", "REPL started", r);
await feed("x = 6 * 7\n", 500);
r = await feed("print(x)\n");
check(/\b42\b/.test(text(r)), "REPL keeps a variable", r);
r = await feed("while True: pass\n\n", 1000);
check(!text(r).includes("KeyboardInterrupt"), "a loop runs", r);
r = await feed("\u0003", 1500);
check(text(r).includes("KeyboardInterrupt"), "Ctrl-C stops the loop", r);
r = await feed("print(x + 1)\n");
check(/\b43\b/.test(text(r)), "REPL alive after Ctrl-C", r);
r = await feed("exit(5)\n", 3000);
check(r.structuredContent.reason === "exit" && r.structuredContent.exit_code === 5, "REPL exit status", r);
r = await client.callTool({ name: "feed_chars", arguments: { session_name: "nope", chars: "x" } });
check(r.isError, "feed_chars to an unknown name is a tool error", r);

// download through host.sbxrun.internal, under the profile's [download] allow
r = await client.callTool({ name: "download", arguments: { url: `http://host.sbxrun.internal:${port}/small.txt`, filepath: "got.txt" } });
check(!r.isError, "download", r);
r = await exec({ cmd: ["cat", "got.txt"] });
check(r.structuredContent.stdout === "hello\n", "downloaded file in the workspace", r);
r = await client.callTool({ name: "download", arguments: { url: `http://127.0.0.1:${port}/small.txt`, filepath: "no.txt" } });
check(r.isError && text(r).includes("not in [download] allow"), "download refused outside the allow list", r);
r = await client.callTool({ name: "download", arguments: { url: `http://host.sbxrun.internal:${port}/small.txt`, filepath: "/etc/x" } });
check(r.isError && text(r).includes("filepath"), "download outside the workspace refused", r);

// a cancelled download is killed and leaves no temporary file behind
const ac2 = new AbortController();
const slow = client.callTool({ name: "download", arguments: { url: `http://host.sbxrun.internal:${port}/slow`, filepath: "slow.bin" } },
			     undefined, { signal: ac2.signal });
await sleep(1500);
r = await exec({ cmd: ["ls", "-A"] });
check(!r.structuredContent.stdout.includes(".sbxrun-download-") && !r.structuredContent.stdout.includes("slow.bin"),
      "a download in progress is staged outside the workspace", r);
ac2.abort("test");
try { await slow; } catch { /* aborted */ }
await sleep(500);
r = await exec({ cmd: ["ls", "-A"] });
check(!r.structuredContent.stdout.includes(".sbxrun-download-") && !r.structuredContent.stdout.includes("slow.bin"),
      "a cancelled download leaves nothing", r);

// open_image of a PNG written inside
const png = "import zlib,struct\n" +
	"def c(t,d): return struct.pack('>I',len(d))+t+d+struct.pack('>I',zlib.crc32(t+d))\n" +
	"raw=b''.join(b'\\x00'+b'\\xff\\x00\\x00'*4 for _ in range(4))\n" +
	"open('img.png','wb').write(b'\\x89PNG\\r\\n\\x1a\\n'+c(b'IHDR',struct.pack('>IIBBBBB',4,4,8,2,0,0,0))+c(b'IDAT',zlib.compress(raw))+c(b'IEND',b''))\n";
r = await exec({ cmd: ["python3", "-c", png] });
check(r.structuredContent.exit_code === 0, "PNG written", r);
r = await client.callTool({ name: "open_image", arguments: { path: "img.png" } });
const img = (r.content || []).find((c) => c.type === "image");
check(!r.isError && img && img.mimeType === "image/png" &&
      Buffer.from(img.data, "base64").subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
      "open_image returns the PNG", r);
await exec({ cmd: ["sh", "-c", "ln -s img.png link.png; ln -s /etc/passwd pw; echo text > t.txt"] });
r = await client.callTool({ name: "open_image", arguments: { path: "link.png" } });
check(r.isError, "open_image does not follow a symlink", r);
r = await client.callTool({ name: "open_image", arguments: { path: "t.txt" } });
check(r.isError && text(r).includes("not a PNG"), "open_image refuses a non-image", r);

// plain file tools
r = await client.callTool({ name: "write_file", arguments: { path: "q.txt", content: "it's \"quoted\" $HOME\n" } });
check(!r.isError, "write_file", r);
r = await client.callTool({ name: "read_file", arguments: { path: "q.txt" } });
check(text(r) === "it's \"quoted\" $HOME\n", "read_file reads it back", r);
r = await client.callTool({ name: "read_file", arguments: { path: "pw" } });
check(r.isError, "read_file does not follow a symlink", r);

// snapshot, change, restore (issue 36)
r = await client.callTool({ name: "snapshot", arguments: {} });
check(!r.isError && text(r).includes("taken"), "snapshot", r);
const snap = text(r).match(/snapshot '([^']+)'/)[1];
r = await client.callTool({ name: "write_file", arguments: { path: "q.txt", content: "changed\n" } });
r = await client.callTool({ name: "restore", arguments: { snapshot: snap } });
check(!r.isError, "restore", r);
r = await client.callTool({ name: "read_file", arguments: { path: "q.txt" } });
check(text(r) === "it's \"quoted\" $HOME\n", "restore brings the file back", r);
r = await client.callTool({ name: "list_snapshots", arguments: {} });
check(!r.isError && r.structuredContent.snapshots.includes(snap), "list_snapshots", r);

// on a project (sbxrun mcp --project DIR): list and diff what changed there
if (extra.includes("--project")) {
	r = await client.callTool({ name: "list_changes", arguments: {} });
	const s2 = r.structuredContent;
	check(!r.isError && s2.entries.some((e) => e.path === "q.txt" && e.kind === "added"), "list_changes names q.txt", r);
	r = await client.callTool({ name: "diff_changes", arguments: { paths: ["q.txt"] } });
	check(!r.isError && text(r).includes("+++ b/q.txt") && text(r).includes("+it's \"quoted\" $HOME"), "diff_changes of q.txt", r);
}

// bad input
try {
	await exec({ cmd: 5 });
	fail("bad arguments", "no error");
} catch (e) {
	check(e instanceof McpError && e.code === -32602 && e.message.includes("cmd"), "bad arguments: -32602 naming the argument", String(e));
}
r = await client.callTool({ name: "no_such_tool", arguments: {} });
check(r.isError, "unknown tool: a tool error", r);
await client.ping();
check(true, "ping");

await client.close();
console.log("ok closed");
