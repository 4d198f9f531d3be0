// Scenario "zed": a client that behaves like Zed's ACP client. It advertises
// fs.readTextFile, fs.writeTextFile, terminal and _meta.terminal_output;
// fs/read_text_file serves the project's files from "buffers" and answers
// "Resource not found" for any path outside the project (Zed's worktrees);
// terminal/* really run the command; session/request_permission records the
// request and allows once.
//
// It checks what the user sees in the permission prompts: every edit tool
// (edit_file, multi_edit, write_file, apply_patch) carries the proposed
// change as diff content, and run_command's title is the command verbatim.

import fs from "node:fs";
import path from "node:path";

import { AcpdProcess, acp, assert, call, initParams, loadConfig, pick, startTerminalCommand, summary } from "./lib.mjs";

const cfg = loadConfig();
const project = fs.realpathSync(cfg.project);
const buffers = new Map();
const permissions = [];
const terminals = new Map();
const terminalLog = [];
let terminalSeq = 0;

function inProject(p) {
  const rel = path.relative(project, p);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}

function terminalOf(params) {
  const t = terminals.get(params.terminalId);
  if (!t) {
    throw acp.RequestError.resourceNotFound(params.terminalId);
  }
  return t;
}

const status = (t) => (t.exit ? { exitCode: t.exit.code, signal: t.exit.signal } : null);

const app = acp
  .client({ name: "acpd-interop-zed" })
  .onNotification("session/update", () => {})
  .onRequest("fs/read_text_file", ({ params }) => {
    if (!inProject(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path); // Zed: not in a worktree
    }
    if (buffers.has(params.path)) {
      return { content: buffers.get(params.path) };
    }
    if (!fs.existsSync(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    return { content: fs.readFileSync(params.path, "utf8") };
  })
  .onRequest("fs/write_text_file", ({ params }) => {
    if (!inProject(params.path)) {
      throw acp.RequestError.resourceNotFound(params.path);
    }
    buffers.set(params.path, params.content);
    return {};
  })
  .onRequest("terminal/create", ({ params }) => {
    const id = `term-${++terminalSeq}`;
    // As Zed: the command runs with the editor's environment plus env.
    const t = { out: "", calls: ["create"], line: [params.command, ...(params.args ?? [])] };
    startTerminalCommand(t, params, project, (c) => (t.out += c));
    terminals.set(id, t);
    terminalLog.push({ id, calls: t.calls, line: t.line });
    return { terminalId: id };
  })
  .onRequest("terminal/output", ({ params }) => {
    const t = terminalOf(params);
    t.calls.push("output");
    return { output: t.out, truncated: false, exitStatus: status(t) };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    const t = terminalOf(params);
    t.calls.push("wait_for_exit");
    await t.exited;
    return status(t);
  })
  .onRequest("terminal/kill", ({ params }) => {
    terminalOf(params).child.kill("SIGKILL");
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    const t = terminalOf(params);
    t.calls.push("release");
    terminals.delete(params.terminalId);
    return {};
  })
  .onRequest("session/request_permission", ({ params }) => {
    permissions.push(params);
    return pick(params, "allow_once");
  });

const zedCaps = {
  fs: { readTextFile: true, writeTextFile: true },
  terminal: true,
  _meta: { terminal_output: true, "terminal-auth": true },
};

const proc = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.zed}`]);
const out = {};
await proc.run(app, async (ctx) => {
  await ctx.request("initialize", initParams(zedCaps));
  const { result: created } = await call(proc, ctx, "session/new", { cwd: project, mcpServers: [] });
  const sid = created.sessionId;

  const turn = await call(proc, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: "Change a.txt" }] });
  assert.equal(turn.error, undefined, `the turn failed: ${turn.error?.message}`);
  assert.equal(turn.result.stopReason, "end_turn");

  const asked = (id) => {
    const p = permissions.find((p) => p.toolCall.toolCallId === id);
    assert.ok(p, `no permission request for ${id}: ${JSON.stringify(permissions.map((p) => p.toolCall.toolCallId))}`);
    return p.toolCall;
  };
  const diffOf = (id) => {
    const d = (asked(id).content ?? []).filter((c) => c.type === "diff");
    assert.ok(d.length > 0, `the permission request for ${id} shows no diff: ${JSON.stringify(asked(id))}`);
    return d;
  };
  const a = path.join(project, "a.txt");
  const v0 = "one\ntwo\nthree\n";
  const v1 = "one\nTWO\nthree\n";
  const v2 = "ONE\nTWO\nthree!\n";
  const v3 = "ONE\nTWO\nthree!\nfour\n";

  // edit_file: the prompt shows the buffer before and after.
  assert.deepEqual(diffOf("call_edit").map((d) => [d.path, d.oldText, d.newText]), [[a, v0, v1]]);
  // multi_edit: both edits, applied in order.
  assert.deepEqual(diffOf("call_multi").map((d) => [d.path, d.oldText, d.newText]), [[a, v1, v2]]);
  // write_file of a new file: no old text.
  const [w] = diffOf("call_write");
  assert.equal(w.path, path.join(project, "b.txt"));
  assert.equal(w.oldText ?? null, null);
  assert.equal(w.newText, "bee\n");
  // apply_patch: the patch's effect.
  assert.deepEqual(diffOf("call_patch").map((d) => [d.path, d.oldText, d.newText]), [[a, v2, v3]]);
  // Outside the worktree: asked, then served from the disk.
  asked("call_outread");
  asked("call_outwrite");
  const outStatus = (id) => proc.updates(sid, turn.from, turn.reply).filter((u) => u.toolCallId === id && u.status).at(-1)?.status;
  assert.equal(outStatus("call_outread"), "completed");
  assert.equal(outStatus("call_outwrite"), "completed");
  // An edit that does not apply asks without a diff and fails after.
  assert.equal((asked("call_badedit").content ?? []).filter((c) => c.type === "diff").length, 0);

  // run_command: the title is the command line, verbatim, newline and all.
  const cmd = "echo one\necho two";
  assert.equal(asked("call_cmd").title, cmd);
  const ups = proc.updates(sid, turn.from, turn.reply);
  const titles = ups.filter((u) => u.toolCallId === "call_cmd" && u.title).map((u) => u.title).filter((t) => t !== "run_command"); // the name until the input is known
  assert.ok(titles.length > 0 && titles.every((t) => t === cmd), `run_command titles ${JSON.stringify(titles)}`);

  assert.equal(buffers.get(a), v3);
  out.permissions = permissions.length;

  // The command ran in the editor's terminal, which stays the call's
  // content to the end: the final update shows it, and only then is it
  // released. Its output is read once, for the model; nothing polls it.
  assert.equal(terminalLog.length, 1, "terminal/create calls");
  const term = terminalLog[0];
  const at = proc.received.map((m, i) => [m, i]);
  const finals = at.filter(([m]) => m.method === "session/update" && m.params.update.toolCallId === "call_cmd" && m.params.update.status === "completed");
  assert.equal(finals.length, 1, "final updates of call_cmd");
  const [[final, finalAt]] = finals;
  assert.deepEqual(final.params.update.content, [{ type: "terminal", terminalId: term.id }], "the final update's content");
  assert.equal(final.params.update.rawOutput?.exitCode, 0, `rawOutput ${JSON.stringify(final.params.update.rawOutput)}`);
  const releaseAt = proc.received.findIndex((m) => m.method === "terminal/release" && m.params.terminalId === term.id);
  assert.ok(releaseAt > finalAt, `terminal/release (#${releaseAt}) came before the final update (#${finalAt})`);
  assert.ok(term.calls.filter((c) => c === "output").length <= 1, `terminal calls ${term.calls}`);
  // The terminal's command line, which Zed shows, ends with the command
  // verbatim and carries no sandbox policy.
  assert.equal(term.line.at(-1), cmd, `terminal command line ${JSON.stringify(term.line)}`);
  assert.ok(!term.line.some((a) => a.includes("{")), `terminal command line ${JSON.stringify(term.line)}`);
  out.sessionId = sid;
  out.terminalId = term.id;
});

// A second process loads the session: the replay never names the first
// connection's terminal; a client with Zed's terminal_output extension gets
// a display-only terminal with a fresh id (terminal_info, then the stored
// output and the exit status), never a terminal/* request.
const proc2 = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.zed}`]);
await proc2.run(app, async (ctx) => {
  await ctx.request("initialize", initParams(zedCaps));
  const loaded = await call(proc2, ctx, "session/load", { sessionId: out.sessionId, cwd: project, mcpServers: [] });
  assert.equal(loaded.error, undefined, `session/load failed: ${loaded.error?.message}`);
  const ups = proc2.updates(out.sessionId, loaded.from, loaded.reply).filter((u) => u.toolCallId === "call_cmd");
  const terms = ups.flatMap((u) => u.content ?? []).filter((c) => c.type === "terminal");
  assert.ok(terms.length > 0, `no replayed terminal content: ${JSON.stringify(ups)}`);
  const tid = terms[0].terminalId;
  assert.notEqual(tid, out.terminalId, "the replay named the first connection's terminal");
  assert.ok(terms.every((c) => c.terminalId === tid), `terminal ids ${JSON.stringify(terms)}`);
  const infoAt = ups.findIndex((u) => u._meta?.terminal_info);
  const outAt = ups.findIndex((u) => u._meta?.terminal_output);
  const exitAt = ups.findIndex((u) => u._meta?.terminal_exit);
  assert.ok(infoAt >= 0 && infoAt < outAt && outAt < exitAt, `terminal _meta order ${infoAt} ${outAt} ${exitAt}`);
  assert.equal(ups[infoAt]._meta.terminal_info.terminal_id, tid);
  // Zed opens a display-only terminal only from a tool_call's
  // terminal_info, and takes output and exit only on tool_call_updates.
  assert.equal(ups[infoAt].sessionUpdate, "tool_call", `terminal_info rides on ${JSON.stringify(ups[infoAt])}`);
  assert.equal(ups.filter((u) => u._meta?.terminal_info).length, 1, "terminal_info updates");
  assert.ok(ups.slice(0, infoAt).every((u) => !(u.content ?? []).some((c) => c.type === "terminal")), "terminal content before its terminal_info");
  assert.equal(ups[outAt].sessionUpdate, "tool_call_update");
  assert.equal(ups[exitAt].sessionUpdate, "tool_call_update");
  assert.deepEqual((ups[infoAt].content ?? []).filter((c) => c.type === "terminal"), [{ type: "terminal", terminalId: tid }]);
  assert.equal(ups[outAt]._meta.terminal_output.terminal_id, tid);
  assert.ok(ups[outAt]._meta.terminal_output.data.startsWith("one\r\ntwo\r\n"), `terminal_output ${JSON.stringify(ups[outAt]._meta)}`);
  assert.deepEqual(ups[exitAt]._meta.terminal_exit, { terminal_id: tid, exit_code: 0, signal: null });
  assert.equal(proc2.received.filter((m) => m.method?.startsWith("terminal/")).length, 0, "terminal/* requests during the replay");
});

// A client without the extension gets the command's output as fenced text.
const proc3 = new AcpdProcess(cfg, ["--model", `replay/${cfg.replay.zed}`]);
await proc3.run(app, async (ctx) => {
  await ctx.request("initialize", initParams({ fs: zedCaps.fs, terminal: true }));
  const loaded = await call(proc3, ctx, "session/load", { sessionId: out.sessionId, cwd: project, mcpServers: [] });
  assert.equal(loaded.error, undefined, `session/load failed: ${loaded.error?.message}`);
  const ups = proc3.updates(out.sessionId, loaded.from, loaded.reply).filter((u) => u.toolCallId === "call_cmd");
  const content = ups.flatMap((u) => u.content ?? []);
  assert.deepEqual(content.filter((c) => c.type === "terminal"), [], "replayed terminal content");
  assert.equal(ups.filter((u) => u._meta?.terminal_info || u._meta?.terminal_output || u._meta?.terminal_exit).length, 0, "terminal _meta without the extension");
  const texts = content.filter((c) => c.type === "content").map((c) => c.content.text);
  assert.ok(texts.some((t) => t.startsWith("```\none\ntwo\n")), `replayed call_cmd content ${JSON.stringify(texts)}`);
});

summary(out);
