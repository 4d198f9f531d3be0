// Scenario "fix-bug": one prompt turn against a real model dialect. The Go
// test (cmd/acpd/e2e_test.go) runs a fake provider server (OpenAI Chat
// Completions or Anthropic Messages) that streams, one response per request:
// update_plan, read_file main.txt, edit_file main.txt ("bug" -> "fix"),
// run_command `cat main.txt && env`, and the answer "Done.".
//
// The client advertises neither fs nor terminal, so acpd edits the disk and
// runs the command on its own PTY; it answers every permission request
// allow_once. cfg.args are acpd's arguments, cfg.ids the tool call ids the
// fake model uses (plan, read, edit, cmd). The Go side checks the file on
// disk, the requests the model server received and the logs.

import fs from "node:fs";
import path from "node:path";

import { AcpdProcess, acp, assert, assertSubsequence, call, chunkText, initParams, kinds, loadConfig, pick, summary, withoutEditor } from "./lib.mjs";

const cfg = loadConfig();
const ids = cfg.ids;
const mainTxt = path.join(cfg.project, "main.txt");
const permissions = [];

const app = withoutEditor(
  acp
    .client({ name: "acpd-e2e-fix-bug" })
    .onNotification("session/update", () => {})
    .onRequest("session/request_permission", ({ params }) => {
      permissions.push(params.toolCall.toolCallId);
      return pick(params, "allow_once");
    }),
);

const proc = new AcpdProcess(cfg, cfg.args);
const out = {};
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ fs: { readTextFile: false, writeTextFile: false }, terminal: false }));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  const sid = created.sessionId;

  const t = await call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "fix the bug" }] });
  assert.equal(t.error, undefined, `the turn failed: ${t.error?.message}`);
  assert.equal(t.result.stopReason, "end_turn");
  const ups = proc.updates(sid, t.from, t.reply);
  const of = (id) => ups.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);
  const finalStatus = (id) => of(id).filter((u) => u.status).at(-1)?.status;
  const contents = (id) => of(id).flatMap((u) => u.content ?? []);

  // The calls happen in order, each announced before it runs.
  assertSubsequence(
    ups.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.toolCallId),
    [ids.plan, ids.read, ids.edit, ids.cmd],
    "tool calls",
  );
  for (const id of [ids.plan, ids.read, ids.edit, ids.cmd]) {
    assert.equal(finalStatus(id), "completed", `final status of ${id}: ${JSON.stringify(of(id))}`);
  }
  assertSubsequence(kinds(ups), ["tool_call", "plan", "tool_call", "tool_call", "tool_call_update", "tool_call", "agent_message_chunk"], "turn updates");

  // (1) The plan reached the client.
  const plan = ups.find((u) => u.sessionUpdate === "plan");
  assert.deepEqual(
    plan.entries.map((e) => [e.content, e.status, e.priority]),
    [
      ["Read main.txt", "completed", "high"],
      ["Replace bug with fix", "in_progress", "high"],
      ["Check the result", "pending", "medium"],
    ],
  );
  // (2) read_file is a read: kind read, no permission asked.
  assert.equal(of(ids.read)[0].kind, "read");
  // (3) The edit shows a diff of the whole file.
  const diff = contents(ids.edit).find((c) => c.type === "diff");
  assert.ok(diff, `edit_file shows no diff: ${JSON.stringify(of(ids.edit))}`);
  assert.equal(diff.path, mainTxt);
  assert.equal(diff.oldText, "line one\nthis line has a bug\nlast line\n");
  assert.equal(diff.newText, "line one\nthis line has a fix\nlast line\n");
  assert.equal(of(ids.edit)[0].kind, "edit");
  // (4) The command's output streamed as text content.
  const cmdText = contents(ids.cmd)
    .filter((c) => c.type === "content" && c.content.type === "text")
    .map((c) => c.content.text);
  assert.ok(cmdText.some((s) => s.includes("this line has a fix")), `run_command output not shown: ${JSON.stringify(cmdText)}`);
  assert.equal(of(ids.cmd)[0].kind, "execute");
  // (5) The answer.
  assert.equal(chunkText(ups, "agent_message_chunk"), "Done.");
  assert.deepEqual(permissions, [ids.edit, ids.cmd], "permission asked for the edit and the command only");
  assert.equal(fs.readFileSync(mainTxt, "utf8"), "line one\nthis line has a fix\nlast line\n");

  const usage = proc.updates(sid).filter((u) => u.sessionUpdate === "usage_update");
  assert.ok(usage.length > 0, "no usage_update");
  assert.ok(usage.at(-1).used > 0 && usage.at(-1).size > 0, `usage_update ${JSON.stringify(usage.at(-1))}`);
  out.usage = usage.at(-1);
  out.kinds = kinds(ups);
  out.sessionId = sid;
});

out.permissions = permissions;
summary(out);
