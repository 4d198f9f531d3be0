// Scenario "core": the session lifecycle across three acpd processes, driven
// by the official ACP TypeScript SDK client.
//
//  1. initialize, session/new, a turn with reasoning, text and a call to a
//     tool that does not exist, a cancelled turn, session/list;
//  2. a new process: session/load replays the conversation, then
//     session/set_config_option switches to plan mode;
//  3. a new process: session/resume (no replay), a turn that proves the
//     model sees the whole transcript, session/close, session/delete.
//
// The replay script (cfg.replay.core) has four responses: 1 streams the
// tool call, 2 answers after the failed result (its expect line checks the
// model got "unknown tool"), 3 is the long answer that gets cancelled, 4
// expects the earlier prompts and answers.

import {
  AcpdProcess,
  acp,
  assert,
  assertSubsequence,
  call,
  chunkText,
  initParams,
  kinds,
  loadConfig,
  sleep,
  summary,
  waitFor,
} from "./lib.mjs";

const cfg = loadConfig();
const args = ["--model", `replay/${cfg.replay.core}`];
const PROMPT1 = "Please frobnicate the widget";
const PROMPT2 = "Tell me a long story";
const PROMPT3 = "What did we talk about?";
const out = {};

function newClient() {
  return acp
    .client({ name: "acpd-interop-core" })
    .onNotification("session/update", () => {})
    .onRequest("session/request_permission", () => {
      throw new Error("core scenario: no permission request expected");
    });
}

// ---- process 1 -------------------------------------------------------------
const p1 = new AcpdProcess(cfg, args);
let sid;
await p1.run(newClient(), async (ctx) => {
  const init = await ctx.request("initialize", initParams({}));
  assert.equal(init.protocolVersion, 1);
  const caps = init.agentCapabilities;
  assert.equal(caps.loadSession, true, "loadSession");
  for (const k of ["list", "resume", "close", "delete", "additionalDirectories"]) {
    assert.ok(caps.sessionCapabilities?.[k], `sessionCapabilities.${k}`);
  }
  assert.equal(caps.promptCapabilities?.image, true, "promptCapabilities.image");
  assert.equal(caps.promptCapabilities?.embeddedContext, true, "promptCapabilities.embeddedContext");
  assert.equal(init.agentInfo?.name, "acpd");
  out.agentVersion = init.agentInfo.version;

  const created = await call(p1, ctx, "session/new", { cwd: cfg.project, mcpServers: [] });
  sid = created.result.sessionId;
  assert.match(sid, /\S/);
  assert.equal(created.result.modes?.currentModeId, "ask");
  assert.deepEqual(
    created.result.configOptions.map((o) => o.id),
    ["mode", "model", "thought_level"],
  );
  // The session/new reply precedes the session's first update.
  assert.equal(p1.updates(sid, 0, created.reply).length, 0, "updates before the session/new reply");

  // Turn 1: reasoning, text, a call to the unknown tool "frobnicate", then the
  // answer after the failed result.
  const t1 = await call(p1, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: PROMPT1 }] });
  assert.equal(t1.result.stopReason, "end_turn");
  const u1 = p1.updates(sid, t1.from, t1.reply);
  assertSubsequence(
    kinds(u1),
    ["session_info_update", "agent_thought_chunk", "agent_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"],
    "turn 1 updates",
  );
  const info = u1.find((u) => u.sessionUpdate === "session_info_update");
  assert.equal(info.title, PROMPT1);
  assert.equal(chunkText(u1, "agent_thought_chunk"), "The user wants the widget frobnicated. I will try the frobnicate tool.");
  assert.equal(
    chunkText(u1, "agent_message_chunk"),
    "Let me frobnicate the widget.There is no frobnicate tool, so I could not frobnicate the widget.",
  );
  const tc = u1.find((u) => u.sessionUpdate === "tool_call");
  assert.equal(tc.toolCallId, "call_frob");
  assert.equal(tc.status, "pending");
  const tcu = u1.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_frob");
  assert.equal(tcu.at(-1).status, "failed", "the unknown tool's call failed");
  assert.ok(
    tcu.some((u) => (u.content ?? []).some((c) => c.type === "content" && /unknown tool "frobnicate"/.test(c.content.text))),
    "the failed call shows the error",
  );
  // Message ids tie the chunks of one message together.
  const msgIds = new Set(u1.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.messageId));
  assert.equal(msgIds.size, 2, "two assistant messages in turn 1");

  // Turn 2: cancelled after its first chunk.
  const t2p = call(p1, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: PROMPT2 }] });
  const from2 = p1.received.length;
  await waitFor("the first chunk of turn 2", () =>
    p1.updates(sid, from2).some((u) => u.sessionUpdate === "agent_message_chunk"),
  );
  await ctx.notify("session/cancel", { sessionId: sid });
  const t2 = await t2p;
  assert.equal(t2.result.stopReason, "cancelled");
  assert.equal(chunkText(p1.updates(sid, t2.from, t2.reply), "agent_message_chunk"), "Starting a long answer");
  await sleep(300);
  assert.deepEqual(p1.updates(sid, t2.reply + 1), [], "session/update after the cancelled prompt's reply");

  // session/list sees the session; the cwd filter works.
  const all = await ctx.request("session/list", {});
  const listed = all.sessions.find((s) => s.sessionId === sid);
  assert.ok(listed, "session/list lists the session");
  assert.equal(listed.title, PROMPT1);
  assert.equal(listed.cwd, cfg.project);
  assert.ok(listed.updatedAt && !Number.isNaN(Date.parse(listed.updatedAt)), `updatedAt ${listed.updatedAt}`);
  const mine = await ctx.request("session/list", { cwd: cfg.project });
  assert.deepEqual(mine.sessions.map((s) => s.sessionId), [sid]);
  const other = await ctx.request("session/list", { cwd: cfg.otherDir });
  assert.deepEqual(other.sessions, [], "cwd filter excludes the session");
});

// ---- process 2: load -------------------------------------------------------
const p2 = new AcpdProcess(cfg, args);
await p2.run(newClient(), async (ctx) => {
  await ctx.request("initialize", initParams({}));
  const load = await call(p2, ctx, "session/load", { sessionId: sid, cwd: cfg.project, mcpServers: [] });
  assert.equal(load.error, undefined, `session/load failed: ${load.error?.message}`);
  assert.equal(load.result.modes?.currentModeId, "ask");
  const replay = p2.updates(sid, load.from, load.reply);
  const at = assertSubsequence(
    kinds(replay),
    [
      "user_message_chunk",
      "agent_thought_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call_update",
      "agent_message_chunk",
      "user_message_chunk",
      "agent_message_chunk",
      "current_mode_update",
      "config_option_update",
    ],
    "session/load replay",
  );
  assert.equal(replay[at[0]].content.text, PROMPT1);
  assert.equal(replay[at[1]].content.text, "The user wants the widget frobnicated. I will try the frobnicate tool.");
  assert.equal(replay[at[2]].content.text, "Let me frobnicate the widget.");
  assert.equal(replay[at[3]].toolCallId, "call_frob");
  const replayedFailure = replay.filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_frob");
  assert.equal(replayedFailure.at(-1).status, "failed");
  assert.equal(replay[at[6]].content.text, PROMPT2);
  assert.equal(replay[at[7]].content.text, "Starting a long answer");
  assert.equal(replay[at[8]].currentModeId, "ask");
  // Nothing of the conversation follows the mode and config updates.
  for (const u of replay.slice(at[8])) {
    assert.ok(
      ["current_mode_update", "config_option_update", "session_info_update"].includes(u.sessionUpdate),
      `unexpected ${u.sessionUpdate} after the replayed conversation`,
    );
  }

  const set = await call(p2, ctx, "session/set_config_option", { sessionId: sid, configId: "mode", value: "plan" });
  assert.equal(set.result.configOptions.find((o) => o.id === "mode").currentValue, "plan");
  const after = await waitFor("config_option_update and current_mode_update after set_config_option", () => {
    const us = p2.updates(sid, set.reply);
    return us.some((u) => u.sessionUpdate === "config_option_update") &&
      us.some((u) => u.sessionUpdate === "current_mode_update")
      ? us
      : null;
  });
  assert.equal(after.find((u) => u.sessionUpdate === "current_mode_update").currentModeId, "plan");
  assert.equal(
    after.find((u) => u.sessionUpdate === "config_option_update").configOptions.find((o) => o.id === "mode").currentValue,
    "plan",
  );
});

// ---- process 3: resume, a further turn, close, delete -----------------------
const p3 = new AcpdProcess(cfg, args);
await p3.run(newClient(), async (ctx) => {
  await ctx.request("initialize", initParams({}));
  const res = await call(p3, ctx, "session/resume", { sessionId: sid, cwd: cfg.project, mcpServers: [] });
  assert.equal(res.error, undefined, `session/resume failed: ${res.error?.message}`);
  assert.equal(res.result.modes?.currentModeId, "plan", "the mode persisted across processes");
  await sleep(200);
  const extra = p3.updates(sid, res.from).filter((u) => u.sessionUpdate !== "available_commands_update");
  assert.deepEqual(extra, [], "session/resume replayed updates");

  // Response 4 expects the earlier prompts and the first answer.
  const t3 = await call(p3, ctx, "session/prompt", { sessionId: sid, prompt: [{ type: "text", text: PROMPT3 }] });
  assert.equal(t3.error, undefined, `turn 3 failed: ${t3.error?.message}`);
  assert.equal(t3.result.stopReason, "end_turn");
  assert.equal(chunkText(p3.updates(sid, t3.from, t3.reply), "agent_message_chunk"), "I remember everything.");

  assert.deepEqual(await ctx.request("session/close", { sessionId: sid }), {});
  assert.deepEqual(await ctx.request("session/delete", { sessionId: sid }), {});
  const list = await ctx.request("session/list", {});
  assert.ok(!list.sessions.some((s) => s.sessionId === sid), "deleted session still listed");
  const gone = await call(p3, ctx, "session/load", { sessionId: sid, cwd: cfg.project, mcpServers: [] });
  assert.ok(gone.error, "loading a deleted session succeeded");
  assert.equal(gone.error.code, -32002);
  assert.match(gone.error.message, /not found/);
  out.loadDeletedError = gone.error.message;
});

summary({ ...out, sessionId: sid, processes: 3 });
