// Scenario "apps-host": a client that renders MCP App views (acpd's carrier,
// docs/mcp-apps.md) and acts as their host. The Go test
// (cmd/acpd/apps_test.go) runs a fake OpenAI server whose model calls
// mcp__basic__get-time (server-basic-vanillajs), then
// mcp__monitor__get-system-info (server-system-monitor), then answers.
//
// The client opts in with clientCapabilities._meta["io.modelcontextprotocol/ui"],
// checks the view and the complete result on the tool call updates, then
// sends the views' requests as _acpd/app/ extension methods: tool calls
// (its own server's, the app-only poll-system-stats included; another
// server's refused), a resource read, a model context update, a log and a
// message that becomes a user turn after the user's consent.
// cfg.servers are the MCP servers for session/new.

import { AcpdProcess, acp, assert, call, initParams, loadConfig, pick, summary } from "./lib.mjs";

const cfg = loadConfig();
const EXT = "io.modelcontextprotocol/ui";
const permissions = [];

const app = acp
  .client({ name: "acpd-apps-host" })
  .onNotification("session/update", () => {})
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params.toolCall.title ?? params.toolCall.toolCallId);
    return pick(params, "allow_once");
  });

const proc = new AcpdProcess(cfg, cfg.args);
const out = { permissions };
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ _meta: { [EXT]: { mimeTypes: ["text/html;profile=mcp-app"] } } }));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: cfg.servers });
  const sid = created.sessionId;

  const t = await call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "What time is it?" }] });
  assert.equal(t.error, undefined, `the turn failed: ${t.error?.message}`);
  assert.equal(t.result.stopReason, "end_turn");
  const ups = proc.updates(sid, t.from, t.reply);
  const of = (id) => ups.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);

  // The view, on an update of the call before its result.
  const view = (id) => of(id).find((u) => u._meta?.[EXT]?.html)?._meta[EXT];
  const time = view("call_time");
  assert.ok(time, `no view on get-time's updates: ${JSON.stringify(of("call_time"))}`);
  assert.equal(time.server, "basic");
  assert.equal(time.tool, "get-time");
  assert.equal(time.resourceUri, "ui://get-time/mcp-app.html");
  assert.equal(time.mimeType, "text/html;profile=mcp-app");
  assert.deepEqual(time.toolInput, {});
  assert.match(time.html, /<html/i);
  const monitor = view("call_info");
  assert.ok(monitor, "no view on get-system-info's updates");
  assert.equal(monitor.server, "monitor");

  // The final update carries the complete CallToolResult.
  const final = of("call_time").at(-1);
  assert.equal(final.status, "completed");
  const result = final._meta?.[EXT]?.toolResult;
  assert.ok(result, `no toolResult on the final update: ${JSON.stringify(final)}`);
  assert.ok(Array.isArray(result.content) && result.content.length > 0, "toolResult without content");
  assert.equal(typeof result.structuredContent?.time, "string");

  const ext = async (name, params) => call(proc, ctx, `_acpd/app/${name}`, { sessionId: sid, ...params });

  // The view calls its own server's tool.
  let r = await ext("tools/call", { toolCallId: "call_time", name: "get-time", arguments: {} });
  assert.equal(r.error, undefined, `tools/call: ${r.error?.message}`);
  assert.equal(typeof r.result.structuredContent?.time, "string");
  // The monitor's view calls its app-only tool.
  r = await ext("tools/call", { toolCallId: "call_info", name: "poll-system-stats", arguments: {} });
  assert.equal(r.error, undefined, `poll-system-stats from its app: ${r.error?.message}`);
  assert.ok(r.result.structuredContent?.cpu, `poll-system-stats: ${JSON.stringify(r.result)}`);
  // Another server's tool, an unknown tool call, a session's wrong method: refused.
  r = await ext("tools/call", { toolCallId: "call_time", name: "poll-system-stats", arguments: {} });
  assert.ok(r.error, "basic's view called the monitor's tool");
  r = await ext("tools/call", { toolCallId: "no-such-call", name: "get-time", arguments: {} });
  assert.ok(r.error, "a request naming no view was served");
  r = await call(proc, ctx, "_acpd/app/tools/call", { sessionId: "s_nope", toolCallId: "call_time", name: "get-time" });
  assert.ok(r.error, "a request naming no session was served");
  r = await ext("bogus", { toolCallId: "call_time" });
  assert.ok(r.error, "an unknown app method was served");

  // A resource of its server.
  r = await ext("resources/read", { toolCallId: "call_time", uri: "ui://get-time/mcp-app.html" });
  assert.equal(r.error, undefined, `resources/read: ${r.error?.message}`);
  assert.equal(r.result.contents[0].mimeType, "text/html;profile=mcp-app");

  // Log, model context, then a message that starts a turn after consent.
  r = await ext("log", { toolCallId: "call_time", level: "info", data: "view ready" });
  assert.equal(r.error, undefined, `log: ${r.error?.message}`);
  r = await ext("update-model-context", { toolCallId: "call_time", content: [{ type: "text", text: "The user picked 42." }] });
  assert.equal(r.error, undefined, `update-model-context: ${r.error?.message}`);
  const before = permissions.length;
  const m = await ext("message", { toolCallId: "call_time", role: "user", content: [{ type: "text", text: "Show the time again" }] });
  assert.equal(m.error, undefined, `message: ${m.error?.message}`);
  assert.ok(permissions.length > before, "the message was sent without asking the user");
  const ups2 = proc.updates(sid, m.from, m.reply);
  assert.ok(ups2.some((u) => u.sessionUpdate === "user_message_chunk" && u.content?.text === "Show the time again"), "the message was not shown as the user's");
  assert.ok(ups2.some((u) => u.sessionUpdate === "agent_message_chunk"), "no answer to the message");
  out.ok = true;
});
summary(out);
