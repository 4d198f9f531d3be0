// Scenario "agent-shell": a client that behaves like Emacs agent-shell
// (acp.el): it identifies itself as agent-shell, reads a select config
// option's options as one flat list of {value, name} (a group would be one
// option with no value), and its permission dialog's cancel answers the
// open request with outcome "cancelled" and then sends session/cancel.
//
//  - the model selector is a flat list whose every option has a value and a
//    human name naming its provider; setting the model by value works;
//  - a "cancelled" permission outcome ends the turn "cancelled" with no
//    further model request and the file unwritten, whether session/cancel
//    follows the outcome (agent-shell) or precedes it (cfg.rounds rounds of
//    each; the replay's next response would otherwise be consumed).

import fs from "node:fs";
import path from "node:path";

import { AcpdProcess, acp, assert, call, loadConfig, summary } from "./lib.mjs";

const cfg = loadConfig();
let ctx;
let sid;
let cancelFirst = false;
const out = { stopReasons: {}, permissions: 0 };
const app = acp
  .client({ name: "agent-shell" })
  .onNotification("session/update", () => {})
  .onRequest("session/request_permission", async () => {
    out.permissions++;
    if (cancelFirst) {
      await ctx.notify("session/cancel", { sessionId: sid });
    } else {
      // After the reply is on the wire, as agent-shell does.
      setImmediate(() => ctx.notify("session/cancel", { sessionId: sid }));
    }
    return { outcome: { outcome: "cancelled" } };
  });

const proc = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay["agent-shell"]}`]);
await proc.run(app, async (c) => {
  ctx = c;
  await ctx.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {},
    clientInfo: { name: "agent-shell", version: "0.74.3" },
  });
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  sid = created.sessionId;
  const sel = created.configOptions.find((o) => o.id === "model");
  assert.ok(sel, "no model selector");
  assert.ok(sel.options.length > 0, "empty model selector");
  for (const o of sel.options) {
    assert.equal(typeof o.value, "string", `an option without a value (a group?): ${JSON.stringify(o)}`);
    assert.ok(o.name && o.name !== o.value, `option ${o.value} has no human name: ${JSON.stringify(o)}`);
    assert.match(o.name, /\(Replay\)$/, `option ${o.value} does not name its provider`);
  }
  const current = sel.options.find((o) => o.value === sel.currentValue);
  assert.ok(current, `the current model ${sel.currentValue} is not among the options`);
  const set = await call(proc, ctx, "session/set_config_option", { sessionId: sid, configId: "model", value: current.value });
  assert.equal(set.error, undefined, `setting the model failed: ${set.error?.message}`);

  for (let i = 0; i < 2 * cfg.rounds; i++) {
    cancelFirst = i >= cfg.rounds;
    const r = await ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: `write ${i}` }] });
    out.stopReasons[r.stopReason] = (out.stopReasons[r.stopReason] ?? 0) + 1;
    assert.ok(!fs.existsSync(path.join(cfg.project, `cancelled-${i}.txt`)), `round ${i}: the file was written`);
  }
  // The session goes on: one more prompt gets its answer.
  const last = await ctx.request("session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "still there?" }] });
  assert.equal(last.stopReason, "end_turn");
});
assert.deepEqual(out.stopReasons, { cancelled: 2 * cfg.rounds }, "stop reasons after a cancelled permission outcome");
assert.equal(out.permissions, 2 * cfg.rounds);
summary(out);
