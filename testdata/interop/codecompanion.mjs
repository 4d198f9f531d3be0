// Scenario "codecompanion": a client that behaves like CodeCompanion's ACP
// adapter in Neovim: it advertises fs.readTextFile and fs.writeTextFile but
// no terminal, sends prompt [] on an empty Enter, and its Stop sends
// session/cancel right after the prompt it stops.
//
//  - an empty prompt ends with end_turn and makes no model request (the
//    replay's first response expects the next, real prompt);
//  - a session/cancel written right after a session/prompt cancels that
//    prompt, every time (cfg.iterations rounds).

import fs from "node:fs";

import { AcpdProcess, acp, assert, call, chunkText, initParams, loadConfig, pick, summary } from "./lib.mjs";

const cfg = loadConfig();
const app = acp
  .client({ name: "acpd-interop-codecompanion" })
  .onNotification("session/update", () => {})
  .onRequest("fs/read_text_file", ({ params }) => {
    if (!fs.existsSync(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    return { content: fs.readFileSync(params.path, "utf8") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    fs.writeFileSync(params.path, params.content);
    return {};
  })
  .onRequest("session/request_permission", ({ params }) => pick(params, "allow_once"));

const proc = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.codecompanion}`]);
const out = { stopReasons: {} };
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ fs: { readTextFile: true, writeTextFile: true } }));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  const sid = created.sessionId;

  const empty = await call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [] });
  assert.equal(empty.error, undefined, `the empty prompt failed: ${empty.error?.message}`);
  assert.equal(empty.result.stopReason, "end_turn");

  const real = await call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "hello after empty" }] });
  assert.equal(real.error, undefined, `the prompt failed: ${real.error?.message}`);
  assert.equal(chunkText(proc.updates(sid, real.from, real.reply), "agent_message_chunk"), "Hello.");

  // Stop clicked at once: the cancel follows the prompt on the wire.
  for (let i = 0; i < cfg.iterations; i++) {
    const p = ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: `stop me ${i}` }] });
    await ctx.notify("session/cancel", { sessionId: sid });
    const r = await p;
    out.stopReasons[r.stopReason] = (out.stopReasons[r.stopReason] ?? 0) + 1;
  }
  assert.deepEqual(out.stopReasons, { cancelled: cfg.iterations }, "stop reasons of prompts cancelled right after they were sent");
});

summary(out);
