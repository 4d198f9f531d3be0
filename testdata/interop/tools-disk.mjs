// Scenario "tools-disk": the client advertises neither fs nor terminal, so
// acpd reads and writes the disk itself and runs commands on its own PTYs.
//
// Turn 1: read_file, edit_file and write_file on disk, and run_command
//         `printf 'a\nb\n'; exit 3` (each write and the command allowed once).
// Turn 2: an edit answered reject_once, then one answered with a forged
//         optionId ("allow_everything"): both rejected, the file unchanged.
// Turn 3: an edit whose permission request is never answered; the client
//         sends session/cancel: the turn ends cancelled, the edit never runs.
// Turn 4: sent right after that session/cancel; it waits for turn 3 and
//         streams only after turn 3's reply.

import fs from "node:fs";
import path from "node:path";

import { AcpdProcess, acp, assert, call, chunkText, initParams, loadConfig, pick, sleep, summary, waitFor, withoutEditor } from "./lib.mjs";

const cfg = loadConfig();
const fileA = path.join(cfg.project, "a.txt");
const fileNew = path.join(cfg.project, "new.txt");
const EDITED = "alpha\nDISK-EDITED here\nomega\n";

const permissions = [];
let pendingAborted = false;
// answers[i] answers the i-th permission request: an option kind, a forged
// option id, or "never".
const answers = ["allow_once", "allow_once", "allow_once", "reject_once", { forged: "allow_everything" }, "never"];

const app = withoutEditor(
  acp
    .client({ name: "acpd-interop-disk" })
    .onNotification("session/update", () => {})
    .onRequest("session/request_permission", ({ params, signal }) => {
      const answer = answers[permissions.length];
      permissions.push(params);
      if (answer === "never") {
        signal.addEventListener("abort", () => {
          pendingAborted = true;
        });
        return new Promise(() => {}); // never answered
      }
      if (answer?.forged) {
        return { outcome: { outcome: "selected", optionId: answer.forged } };
      }
      assert.ok(answer, `unexpected permission request #${permissions.length}: ${JSON.stringify(params.toolCall)}`);
      return pick(params, answer);
    }),
);

const proc = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.disk}`]);
const out = {};
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ fs: { readTextFile: false, writeTextFile: false }, terminal: false }));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  const sid = created.sessionId;
  const prompt = (text) => call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text }] });
  const calls = (ups, id) =>
    ups.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);
  const finalStatus = (ups, id) => calls(ups, id).filter((u) => u.status).at(-1)?.status;
  const texts = (ups, id) =>
    calls(ups, id)
      .flatMap((u) => u.content ?? [])
      .filter((c) => c.type === "content" && c.content.type === "text")
      .map((c) => c.content.text);

  // ---- turn 1: the disk tools and a command on acpd's PTY ----
  const t1 = await prompt("Work on the files on disk");
  assert.equal(t1.error, undefined, `turn 1 failed: ${t1.error?.message}`);
  assert.equal(t1.result.stopReason, "end_turn");
  const u1 = proc.updates(sid, t1.from, t1.reply);
  assert.equal(finalStatus(u1, "call_read"), "completed");
  assert.equal(finalStatus(u1, "call_edit"), "completed");
  assert.equal(finalStatus(u1, "call_write"), "completed");
  assert.equal(fs.readFileSync(fileA, "utf8"), EDITED, "edit_file on disk");
  assert.equal(fs.readFileSync(fileNew, "utf8"), "created by write_file\n", "write_file on disk");
  const title = (id) => calls(u1, id).filter((u) => u.title).at(-1)?.title;
  assert.equal(title("call_write"), "Write new.txt");
  assert.equal(title("call_cmd"), "printf 'a\\nb\\n'; exit 3");
  const writeDiff = calls(u1, "call_write").flatMap((u) => u.content ?? []).find((c) => c.type === "diff");
  assert.ok(writeDiff, "write_file shows a diff");
  assert.equal(writeDiff.path, fileNew);
  assert.equal(writeDiff.newText, "created by write_file\n");
  assert.equal(writeDiff.oldText ?? null, null, "a created file has no oldText");

  // The command failed with exit code 3; its output streamed as text content.
  assert.equal(finalStatus(u1, "call_cmd"), "failed");
  const cmdTexts = texts(u1, "call_cmd");
  assert.ok(cmdTexts.some((t) => t.includes("a\nb")), `run_command output not shown: ${JSON.stringify(cmdTexts)}`);
  assert.ok(cmdTexts.at(-1).includes("[exit code 3]"), `final run_command content: ${cmdTexts.at(-1)}`);
  const raw = calls(u1, "call_cmd").find((u) => u.rawOutput)?.rawOutput;
  assert.equal(raw?.exitCode, 3, `rawOutput ${JSON.stringify(raw)}`);
  assert.equal(chunkText(u1, "agent_message_chunk"), "The command failed with exit code 3.");
  assert.deepEqual(
    permissions.map((p) => p.toolCall.toolCallId),
    ["call_edit", "call_write", "call_cmd"],
    "turn 1 asked for the edit, the write and the command, not the read",
  );

  // ---- turn 2: rejected and forged answers ----
  const t2 = await prompt("Try those edits again");
  assert.equal(t2.error, undefined, `turn 2 failed: ${t2.error?.message}`);
  assert.equal(t2.result.stopReason, "end_turn");
  const u2 = proc.updates(sid, t2.from, t2.reply);
  assert.equal(finalStatus(u2, "call_reject"), "failed");
  assert.equal(finalStatus(u2, "call_forged"), "failed");
  assert.equal(fs.readFileSync(fileA, "utf8"), EDITED, "a rejected edit changed the file");
  assert.equal(chunkText(u2, "agent_message_chunk"), "I will not edit it.");

  // ---- turn 3: cancel while a permission request is pending, and send the
  // next prompt at once (as editors do) ----
  const t3p = prompt("Edit it once more");
  await waitFor("the permission request of turn 3", () => permissions.length === 6);
  await ctx.notify("session/cancel", { sessionId: sid });
  const t4p = prompt("Never mind, just say something");
  const t3 = await t3p;
  assert.equal(t3.error, undefined, `turn 3 failed: ${t3.error?.message}`);
  assert.equal(t3.result.stopReason, "cancelled");
  const u3 = proc.updates(sid, t3.from, t3.reply);
  assert.equal(finalStatus(u3, "call_pending"), "failed");
  await waitFor("acpd to withdraw the pending permission request ($/cancel_request)", () => pendingAborted);
  const t4 = await t4p;
  assert.equal(t4.error, undefined, `turn 4 failed: ${t4.error?.message}`);
  assert.equal(t4.result.stopReason, "end_turn");
  assert.ok(t3.reply < t4.reply);
  // Everything after the cancelled turn's reply belongs to turn 4.
  assert.deepEqual(
    proc.updates(sid, t3.reply + 1, t4.reply),
    proc.updates(sid, t3.reply + 1, t4.reply).filter((u) => u.sessionUpdate === "agent_message_chunk"),
    "an update of the cancelled turn after its reply",
  );
  assert.equal(chunkText(proc.updates(sid, t3.reply + 1, t4.reply), "agent_message_chunk"), "Back again.");
  assert.equal(fs.readFileSync(fileA, "utf8"), EDITED, "the cancelled edit ran");
  await sleep(300);
  assert.deepEqual(proc.updates(sid, t4.reply + 1), [], "session/update after the last prompt's reply");

  out.permissions = permissions.map((p) => ({ toolCallId: p.toolCall.toolCallId, kinds: p.options.map((o) => o.kind) }));
  out.pendingAborted = pendingAborted;
});

summary(out);
