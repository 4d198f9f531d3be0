// Scenario "apps-cancel": a host of MCP App views (acpd's carrier,
// docs/mcp-apps.md) cancels a turn while a tool with a view runs. The Go
// test (cmd/acpd/apps_test.go) runs a fake OpenAI server whose model calls
// mcp__hang__wait (testdata/interop/hang-app-server.mjs, which never
// answers it). The call's final tool_call_update carries toolCancelled
// (ui/notifications/tool-cancelled), not a result; the view that stays
// open may call its server's tools, but not one without "app" visibility.
// cfg.servers are the MCP servers for session/new.

import { AcpdProcess, acp, assert, call, initParams, loadConfig, pick, summary, waitFor } from "./lib.mjs";

const cfg = loadConfig();
const EXT = "io.modelcontextprotocol/ui";

const app = acp
  .client({ name: "acpd-apps-cancel" })
  .onNotification("session/update", () => {})
  .onRequest("session/request_permission", ({ params }) => pick(params, "allow_once"));

const proc = new AcpdProcess(cfg, cfg.args);
const out = {};
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ _meta: { [EXT]: { mimeTypes: ["text/html;profile=mcp-app"] } } }));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: cfg.servers });
  const sid = created.sessionId;
  const of = (ups, id) => ups.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);

  const from = proc.received.length;
  const turn = call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "Wait for it." }] });
  await waitFor("the view of the waiting call", () => of(proc.updates(sid, from), "call_wait").some((u) => u._meta?.[EXT]?.html));
  await ctx.notify("session/cancel", { sessionId: sid });
  const t = await turn;
  assert.equal(t.error, undefined, `the turn failed: ${t.error?.message}`);
  assert.equal(t.result.stopReason, "cancelled");

  const ups = of(proc.updates(sid, t.from, t.reply), "call_wait");
  const final = ups.at(-1);
  assert.equal(final.status, "failed", `the cancelled call's last update: ${JSON.stringify(final)}`);
  const ui = final._meta?.[EXT];
  assert.ok(ui?.toolCancelled, `no toolCancelled on the final update: ${JSON.stringify(final)}`);
  assert.equal(typeof ui.toolCancelled.reason, "string");
  assert.equal(ui.toolResult, undefined, "a cancelled call carries a result");
  assert.ok(!ups.some((u) => u._meta?.[EXT]?.toolResult), "an update of the cancelled call carries a result");
  out.reason = ui.toolCancelled.reason;

  // The view stays a view of its server: its tools with "app" visibility
  // (the default) answer, a model-only one is refused.
  const ext = (name, params) => call(proc, ctx, `_acpd/app/${name}`, { sessionId: sid, toolCallId: "call_wait", ...params });
  let r = await ext("tools/call", { name: "echo", arguments: { n: 1 } });
  assert.equal(r.error, undefined, `echo from its view: ${r.error?.message}`);
  assert.deepEqual(r.result.structuredContent, { echoed: { n: 1 } });
  r = await ext("tools/call", { name: "model-only", arguments: {} });
  assert.ok(r.error, `the view called a tool without "app" visibility: ${JSON.stringify(r.result)}`);
  out.ok = true;
});
summary(out);
