// tests/mcp/elicit.mjs - [network] ask through the official MCP SDK client
// (issue 42): the client declares elicitation, `sbxrun mcp` asks it about
// each connection the session holds, and the client's answer decides it.
// Usage: node elicit.mjs SBXRUN PROFILE (the profile has ask = yes; the
// hosts asked.invalid and no.invalid reach the test's server through its
// upstream proxy). Prints "ok NAME" per check; exits 1 at the first failure.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [sbx, profile] = process.argv.slice(2);
const fail = (what, detail) => {
	console.error(`FAIL ${what}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
	process.exit(1);
};
const check = (cond, what, detail) => (cond ? console.log(`ok ${what}`) : fail(what, detail));
const text = (r) => (r.content || []).filter((c) => c.type === "text").map((c) => c.text).join("");

const transport = new StdioClientTransport({
	command: sbx, args: ["mcp", "--image", "minimal", "-p", profile], env: { ...process.env }, stderr: "inherit",
});
const client = new Client({ name: "sbxrun-elicit-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
	const m = req.params.message;
	asked.push(m);
	// the agent's side, meanwhile: it can list what is held, never approve it
	const r = await client.callTool({ name: "network_requests", arguments: {} });
	const host = m.includes("asked.invalid") ? "asked.invalid" : "no.invalid";
	check(text(r).includes(`${host}:80 held`), `network_requests lists ${host} while it is asked`, r);
	const a = await client.callTool({ name: "allow_host", arguments: { host } }).catch((e) => ({ isError: true, e: String(e) }));
	check(a.isError, "no tool of the agent's approves a host", a);
	check(req.params.requestedSchema.properties.decision.enum.join() === "allow-once,allow-session,deny",
	      "the choices name the rules", req.params);
	return host === "asked.invalid" ? { action: "accept", content: { decision: "allow-once" } } : { action: "decline" };
});
await client.connect(transport);

const curl = (host) => ["sh", "-c", `curl -s -o /dev/null -w %{http_code} -x http://127.0.0.1:3128 http://${host}/hello.txt`];
let r = await client.callTool({ name: "exec", arguments: { cmd: curl("asked.invalid") } });
check(r.structuredContent.stdout === "200" && asked.length === 1 && asked[0].includes("asks to reach asked.invalid:80"),
      "accepted allow-once: the held request completed", { r, asked });
r = await client.callTool({ name: "exec", arguments: { cmd: curl("asked.invalid") } });
check(r.structuredContent.stdout === "200" ? asked.length === 2 : false, "allow-once: the next request is asked again",
      { r, asked });
r = await client.callTool({ name: "exec", arguments: { cmd: curl("no.invalid") } });
check(r.structuredContent.stdout === "403", "declined: refused", r);
await client.close();
console.log("ok closed");
