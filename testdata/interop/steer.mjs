// Scenario "steer": prompts sent during a turn, driven by the official ACP
// TypeScript SDK client against the acpd binary with a replay model.
//
//  1. initialize advertises prompt queueing
//     (agentCapabilities._meta.claudeCode.promptQueueing) and steering
//     (_meta.steering.supported), as the Claude and Codex adapters do;
//  2. a session/prompt sent while a turn runs (its read_file is held by
//     the client's fs/read_text_file) is queued: it becomes the next turn,
//     streamed after the first turn's reply, and its model request has the
//     first turn's answer;
//  3. two _session/steering requests sent while a turn's read_file is held
//     are answered "injected" at once, reach the turn's very next model
//     request (the replay script's expect lines) and are shown as user
//     messages between the tool call and the answer;
//  4. a cancel while a prompt is queued and a steering message waits drops
//     both: every prompt is answered "cancelled" and each dropped one is
//     named in a card;
//  5. in a new process, session/load replays the user messages in order,
//     the steering ones in their place, the dropped ones nowhere, and the
//     model's transcript has the steering messages.
//
// The replay script is cfg.replay.steer (see TestInteropSteer).

import path from "node:path";

import { AcpdProcess, acp, assert, assertSubsequence, call, chunkText, initParams, loadConfig, summary, waitFor } from "./lib.mjs";

const cfg = loadConfig();
const args = ["--model", `replay/${cfg.replay.steer}`];
const out = {};

// Reads of a file are held until its gate opens.
const gates = new Map();
const held = new Set();
function gate(name) {
  let open;
  const p = new Promise((resolve) => (open = resolve));
  gates.set(path.join(cfg.project, name), p);
  return open;
}

function newClient() {
  return acp
    .client({ name: "acpd-interop-steer" })
    .onNotification("session/update", () => {})
    .onRequest("fs/read_text_file", async ({ params }) => {
      const g = gates.get(params.path);
      if (g) {
        held.add(params.path);
        await g;
      }
      return { content: `content of ${path.basename(params.path)}\n` };
    })
    .onRequest("session/request_permission", () => {
      throw new Error("steer scenario: no permission request expected");
    });
}

const caps = { fs: { readTextFile: true, writeTextFile: false } };
const text = (t) => [{ type: "text", text: t }];

/** The user messages' texts among updates, in order. */
function userTexts(updates) {
  return updates.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content.text);
}

/** A compact trace of updates: user texts, tool calls, agent texts. */
function trace(updates) {
  return updates.flatMap((u) => {
    switch (u.sessionUpdate) {
      case "user_message_chunk":
        return [`user:${u.content.text}`];
      case "tool_call":
        return [`tool:${u.toolCallId}`];
      case "agent_message_chunk":
        return [`agent:${u.content.text}`];
    }
    return [];
  });
}

// ---- process 1 -------------------------------------------------------------
const p1 = new AcpdProcess(cfg, args);
let sid;
await p1.run(newClient(), async (ctx) => {
  const init = await ctx.request("initialize", initParams(caps));
  assert.equal(init._meta?.steering?.supported, true, "_meta.steering.supported");
  assert.equal(init.agentCapabilities?._meta?.claudeCode?.promptQueueing, true, "agentCapabilities._meta.claudeCode.promptQueueing");
  sid = (await call(p1, ctx, "session/new", { cwd: cfg.project, mcpServers: [] })).result.sessionId;

  // 2. A prompt sent during a turn is queued and becomes the next turn.
  const openA = gate("a.txt");
  const first = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: text("QUEUE-FIRST") });
  await waitFor("the first turn's read of a.txt", () => held.has(path.join(cfg.project, "a.txt")));
  const second = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: text("QUEUE-SECOND") });
  // A barrier: acpd reads in order, so it has read the second prompt.
  await call(p1, ctx, "session/list", {});
  openA();
  const t1 = await first;
  const t2 = await second;
  assert.equal(t1.result?.stopReason, "end_turn", `first turn: ${t1.error?.message}`);
  assert.equal(t2.result?.stopReason, "end_turn", `queued turn: ${t2.error?.message}`);
  assert.ok(t1.reply < t2.reply, "the queued prompt was answered before the turn it waited for");
  assert.equal(chunkText(p1.updates(sid, t1.from, t1.reply), "agent_message_chunk"), "First answer.");
  assert.equal(chunkText(p1.updates(sid, t1.reply, t2.reply), "agent_message_chunk"), "Second answer.");
  assert.equal(chunkText(p1.updates(sid, t1.from, t1.reply), "agent_message_chunk").includes("Second"), false);

  // 3. Steering messages reach the running turn's next model request.
  const openB = gate("b.txt");
  const steered = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: text("STEER-TURN") });
  await waitFor("the steered turn's read of b.txt", () => held.has(path.join(cfg.project, "b.txt")));
  for (const m of ["STEER-ONE", "STEER-TWO"]) {
    const r = await call(p1, ctx, "_session/steering", { sessionId: sid, prompt: text(m) });
    assert.deepEqual(r.result, { outcome: "injected" }, `steering ${m}: ${r.error?.message}`);
  }
  openB();
  const t3 = await steered;
  assert.equal(t3.result?.stopReason, "end_turn", `steered turn: ${t3.error?.message}`);
  const tr = trace(p1.updates(sid, t3.from, t3.reply));
  assertSubsequence(tr, ["tool:call_b", "user:STEER-ONE", "user:STEER-TWO", "agent:Steered answer."], "the steered turn");
  assert.equal(tr.indexOf("user:STEER-ONE") > tr.indexOf("tool:call_b"), true);

  // 4. A cancel drops the queued prompt and the waiting steering message.
  const cancelled = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: text("CANCEL-TURN") });
  await waitFor("the long answer to start", () =>
    chunkText(p1.updates(sid), "agent_message_chunk").includes("Starting the long one"),
  );
  const queued = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: text("CANCEL-QUEUED") });
  const st = await call(p1, ctx, "_session/steering", { sessionId: sid, prompt: text("CANCEL-STEER") });
  assert.deepEqual(st.result, { outcome: "injected" }, `steering during the long answer: ${st.error?.message}`);
  await ctx.notify("session/cancel", { sessionId: sid });
  const t4 = await cancelled;
  const t5 = await queued;
  assert.equal(t4.result?.stopReason, "cancelled", `cancelled turn: ${t4.error?.message}`);
  assert.equal(t5.result?.stopReason, "cancelled", `queued prompt: ${t5.error?.message}`);
  const dropped = () =>
    p1
      .updates(sid, t4.from)
      .filter((u) => u.sessionUpdate === "tool_call" && u.status === "failed" && u.title.startsWith("Not sent to the model: "))
      .map((u) => u.title)
      .sort();
  await waitFor("both dropped prompts to be named", () => dropped().length === 2);
  assert.deepEqual(dropped(), ["Not sent to the model: “CANCEL-QUEUED”", "Not sent to the model: “CANCEL-STEER”"]);
  assert.deepEqual(userTexts(p1.updates(sid, t4.from)), [], "a dropped prompt was shown as a user message");

  // Idle: the client may keep the message (promptRequired).
  const idle = await call(p1, ctx, "_session/steering", {
    sessionId: sid,
    prompt: text("IDLE"),
    _meta: { steering: { idleBehavior: "promptRequired" } },
  });
  assert.deepEqual(idle.result, { outcome: "promptRequired", reason: "noRunningTurn" });
  out.live = trace(p1.updates(sid));
});

// ---- process 2: session/load replays it all in its place ---------------------
const p2 = new AcpdProcess(cfg, args);
await p2.run(newClient(), async (ctx) => {
  await ctx.request("initialize", initParams(caps));
  const loaded = await call(p2, ctx, "session/load", { sessionId: sid, cwd: cfg.project, mcpServers: [] });
  assert.ok(loaded.result, `session/load: ${loaded.error?.message}`);
  const replayed = p2.updates(sid, 0, loaded.reply);
  assert.deepEqual(
    userTexts(replayed),
    ["QUEUE-FIRST", "QUEUE-SECOND", "STEER-TURN", "STEER-ONE", "STEER-TWO", "CANCEL-TURN"],
    "user messages replayed",
  );
  assertSubsequence(
    trace(replayed),
    ["user:STEER-TURN", "tool:call_b", "user:STEER-ONE", "user:STEER-TWO", "agent:Steered answer.", "user:CANCEL-TURN"],
    "the steered turn replayed",
  );
  // The model's transcript has the steering messages too (expect lines).
  const after = await call(p2, ctx, "session/prompt", { sessionId: sid, prompt: text("AFTER-LOAD") });
  assert.equal(after.result?.stopReason, "end_turn", `turn after load: ${after.error?.message}`);
  out.replayed = trace(replayed);
});

summary({ sessionId: sid, ...out });
