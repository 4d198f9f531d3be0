// Scenario "tools-editor": the client advertises fs.readTextFile,
// fs.writeTextFile and terminal, so acpd's tools go through the editor:
//
//  - fs/read_text_file is served from an in-memory "unsaved buffer" that
//    differs from the file on disk; fs/write_text_file writes into it;
//  - terminal/* really run the command (child_process.spawn, no shell);
//  - session/request_permission answers allow_once and is recorded.
//
// The replay script (cfg.replay.editor) reads a.txt, edits it, runs
// `echo hi-from-cmd` and updates the plan; its expect lines prove the model
// got each tool's result.

import fs from "node:fs";
import path from "node:path";

import { AcpdProcess, acp, assert, call, initParams, kinds, loadConfig, pick, startTerminalCommand, summary } from "./lib.mjs";

const cfg = loadConfig();
const file = path.join(cfg.project, "a.txt");
const diskText = fs.readFileSync(file, "utf8");
const bufferText = "first line\nUNSAVED-BUFFER-MARKER (only in the editor)\nlast line\n";
assert.notEqual(diskText, bufferText);

const buffers = new Map([[file, bufferText]]);
const reads = [];
const writes = [];
const permissions = [];
const terminals = new Map();
const terminalLog = [];
let terminalSeq = 0;

function sliceLines(text, line, limit) {
  if (line == null && limit == null) {
    return text;
  }
  const lines = text.split(/(?<=\n)/);
  const start = Math.max((line ?? 1) - 1, 0);
  const end = limit == null ? lines.length : start + limit;
  return lines.slice(start, end).join("");
}

function keepTail(buf, limit) {
  if (limit == null || buf.length <= limit) {
    return { output: buf.toString("utf8"), truncated: false };
  }
  let start = buf.length - limit;
  while (start < buf.length && (buf[start] & 0xc0) === 0x80) {
    start++; // never split a UTF-8 character
  }
  return { output: buf.subarray(start).toString("utf8"), truncated: true };
}

function exitStatus(t) {
  return t.exit ? { exitCode: t.exit.code, signal: t.exit.signal } : null;
}

function terminalOf(params) {
  const t = terminals.get(params.terminalId);
  if (!t || t.sessionId !== params.sessionId) {
    throw acp.RequestError.resourceNotFound(params.terminalId);
  }
  return t;
}

const app = acp
  .client({ name: "acpd-interop-editor" })
  .onNotification("session/update", () => {})
  .onRequest("fs/read_text_file", ({ params }) => {
    reads.push(params);
    if (buffers.has(params.path)) {
      return { content: sliceLines(buffers.get(params.path), params.line, params.limit) };
    }
    if (!fs.existsSync(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    return { content: sliceLines(fs.readFileSync(params.path, "utf8"), params.line, params.limit) };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    writes.push(params);
    buffers.set(params.path, params.content);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    const id = `term-${++terminalSeq}`;
    const t = { sessionId: params.sessionId, params, out: Buffer.alloc(0) };
    const add = (chunk) => {
      t.out = Buffer.concat([t.out, chunk]);
      const limit = params.outputByteLimit;
      if (limit != null && t.out.length > 4 * limit) {
        t.out = t.out.subarray(t.out.length - limit); // bound memory; keepTail trims exactly
      }
    };
    startTerminalCommand(t, params, cfg.project, add, (err) => add(Buffer.from(String(err))));
    terminals.set(id, t);
    terminalLog.push({ id, command: params.command, args: params.args ?? [], env: params.env, cwd: params.cwd, calls: ["create"] });
    return { terminalId: id };
  })
  .onRequest("terminal/output", ({ params }) => {
    const t = terminalOf(params);
    terminalLog.find((l) => l.id === params.terminalId).calls.push("output");
    return { ...keepTail(t.out, t.params.outputByteLimit), exitStatus: exitStatus(t) };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    const t = terminalOf(params);
    terminalLog.find((l) => l.id === params.terminalId).calls.push("wait_for_exit");
    await t.exited;
    return exitStatus(t);
  })
  .onRequest("terminal/kill", ({ params }) => {
    const t = terminalOf(params);
    terminalLog.find((l) => l.id === params.terminalId).calls.push("kill");
    if (!t.exit) {
      t.child.kill("SIGKILL");
    }
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    const t = terminalOf(params);
    const log = terminalLog.find((l) => l.id === params.terminalId);
    log.calls.push("release");
    log.output = t.out.toString("utf8");
    log.exit = t.exit;
    if (!t.exit) {
      t.child.kill("SIGKILL");
    }
    terminals.delete(params.terminalId);
    return {};
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params);
    return pick(params, "allow_once");
  });

const proc = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.editor}`]);
const out = {};
await proc.run(app, async (ctx) => {
  await ctx.request(
    "initialize",
    initParams({ fs: { readTextFile: true, writeTextFile: true }, terminal: true }),
  );
  const { result: created } = await call(proc, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  const sid = created.sessionId;
  assert.equal(created.modes.currentModeId, "ask");

  const turn = await call(proc, ctx, "session/prompt", {
    sessionId: sid,
    prompt: [{ type: "text", text: "Fix a.txt, say hi and plan" }],
  });
  assert.equal(turn.error, undefined, `the turn failed: ${turn.error?.message}`);
  assert.equal(turn.result.stopReason, "end_turn");
  const ups = proc.updates(sid, turn.from, turn.reply);
  const byCall = (id) => ups.filter((u) => (u.sessionUpdate === "tool_call" || u.sessionUpdate === "tool_call_update") && u.toolCallId === id);
  const finalStatus = (id) => byCall(id).filter((u) => u.status).at(-1)?.status;
  const title = (id) => byCall(id).filter((u) => u.title).at(-1)?.title;
  const rawInput = (id) => byCall(id).filter((u) => u.rawInput).at(-1)?.rawInput;

  // Each call ends up titled from its input, which the client also gets.
  assert.equal(title("call_read"), "Read a.txt");
  assert.equal(title("call_edit"), "Edit a.txt");
  assert.equal(title("call_cmd"), "echo hi-from-cmd");
  assert.equal(title("call_plan"), "Update plan");
  assert.deepEqual(rawInput("call_read"), { path: "a.txt" });
  assert.deepEqual(rawInput("call_cmd"), { command: "echo hi-from-cmd" });

  // read_file went to the editor and returned the unsaved buffer.
  assert.ok(reads.some((r) => r.path === file && r.sessionId === sid), "read_file did not use fs/read_text_file");
  assert.equal(finalStatus("call_read"), "completed");
  assert.equal(byCall("call_read")[0].kind, "read");

  // edit_file: a diff of the buffer, written back through the editor.
  assert.equal(finalStatus("call_edit"), "completed");
  const diff = byCall("call_edit").flatMap((u) => u.content ?? []).find((c) => c.type === "diff");
  assert.ok(diff, "edit_file's tool_call_update has no diff content");
  assert.equal(diff.path, file);
  assert.equal(diff.oldText, bufferText);
  assert.equal(diff.newText, bufferText.replace("UNSAVED-BUFFER-MARKER", "EDITED-IN-EDITOR"));
  assert.deepEqual(
    writes.map((w) => [w.sessionId, w.path, w.content]),
    [[sid, file, diff.newText]],
    "fs/write_text_file calls",
  );
  assert.equal(fs.readFileSync(file, "utf8"), diskText, "the file on disk changed");

  // run_command ran in the client's terminal, shown as terminal content.
  assert.equal(terminalLog.length, 1, "terminal/create calls");
  const term = terminalLog[0];
  // The command runs through acpd's sandbox helper, whose command line
  // shows the command as is; the policy is in the environment.
  assert.deepEqual(term.args.slice(0, 2), ["sandbox", "--policy"], `terminal/create args ${JSON.stringify(term.args)}`);
  assert.equal(term.args[3], "--", `terminal/create args ${JSON.stringify(term.args)}`);
  assert.deepEqual(term.args.slice(-2), ["-c", "echo hi-from-cmd"], `terminal/create args ${JSON.stringify(term.args)}`);
  assert.ok((term.env ?? []).some((e) => e.name === "ACPD_SANDBOX_POLICY"), `terminal/create env ${JSON.stringify(term.env)}`);
  assert.equal(term.cwd, cfg.project);
  assert.ok(term.calls.includes("release"), `terminal ${term.id} was not released: ${term.calls}`);
  assert.equal(term.output, "hi-from-cmd\n");
  assert.deepEqual(term.exit, { code: 0, signal: null });
  const termContent = byCall("call_cmd").flatMap((u) => u.content ?? []).find((c) => c.type === "terminal");
  assert.ok(termContent, "run_command's tool_call_update has no terminal content");
  assert.equal(termContent.terminalId, term.id);
  assert.equal(finalStatus("call_cmd"), "completed");
  assert.equal(byCall("call_cmd")[0].kind, "execute");

  // update_plan: a plan update.
  const plan = ups.find((u) => u.sessionUpdate === "plan");
  assert.ok(plan, `no plan update in ${kinds(ups)}`);
  assert.deepEqual(
    plan.entries.map((e) => [e.content, e.status, e.priority]),
    [
      ["Fix a.txt", "completed", "high"],
      ["Say hi", "in_progress", "medium"],
    ],
  );

  // Ask mode: the edit and the command each asked once; the read did not.
  assert.deepEqual(permissions.map((p) => p.toolCall.toolCallId), ["call_edit", "call_cmd"]);
  for (const p of permissions) {
    assert.equal(p.sessionId, sid);
    assert.ok(p.options.some((o) => o.kind === "allow_once"));
    assert.ok(p.options.some((o) => o.kind === "reject_once"));
  }
  out.permissionKinds = permissions.map((p) => p.toolCall.kind ?? null);
  out.terminal = term;
  out.buffer = buffers.get(file);
});

summary(out);
