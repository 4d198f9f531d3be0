// Shared harness of acpd's interop scripts: it spawns the acpd binary, connects
// the official ACP TypeScript SDK client to it over the child's stdio, and
// records every line that crosses the connection, byte for byte, so the Go
// test can validate each message acpd sent against the ACP JSON schema.
//
// The Go test (cmd/acpd/interop_test.go) runs `node <script>.mjs <config.json>`.
// The config names the acpd binary, the project directory, the replay scripts
// and the record directory. For every acpd process the harness writes, in the
// record directory:
//
//   acpd-<n>.out.jsonl  every line acpd wrote to stdout (what the client read)
//   acpd-<n>.in.jsonl   every line the client wrote to acpd's stdin
//   acpd-<n>.stderr     acpd's log
//
// A script asserts with node:assert (a failure exits non-zero with the stack)
// and prints one JSON summary line on stdout for the Go test.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import * as acp from "@agentclientprotocol/sdk";

export { acp, assert, sleep };

/** Reads the config file named by the first argument. */
export function loadConfig() {
  const file = process.argv[2];
  if (!file) {
    throw new Error("usage: node <script>.mjs <config.json>");
  }
  const cfg = JSON.parse(fs.readFileSync(file, "utf8"));
  for (const k of ["acpd", "project", "recordDir"]) {
    assert.ok(cfg[k], `config lacks ${k}`);
  }
  return cfg;
}

let procSeq = 0;

/**
 * An acpd child process with the byte-exact record of its connection.
 * `received` holds every message acpd sent, parsed, in arrival order (the tap
 * runs before the SDK sees the bytes); `sent` every message the client sent.
 */
export class AcpdProcess {
  constructor(cfg, args) {
    this.n = ++procSeq;
    this.received = [];
    this.sent = [];
    this.claimed = new Set(); // request ids matched by call()
    const base = path.join(cfg.recordDir, `acpd-${this.n}`);
    this.outFd = fs.openSync(`${base}.out.jsonl`, "w");
    this.inFd = fs.openSync(`${base}.in.jsonl`, "w");
    this.child = spawn(cfg.acpd, args, { stdio: ["pipe", "pipe", "pipe"], env: process.env });
    // Written synchronously, so a failing script still leaves the whole log.
    const errFd = fs.openSync(`${base}.stderr`, "w");
    this.child.stderr.on("data", (chunk) => fs.writeSync(errFd, chunk));
    this.child.stderr.on("close", () => fs.closeSync(errFd));
    // "close", not "exit": it fires once acpd's stdout is drained, so every
    // line is recorded before the record files are closed.
    this.exited = new Promise((resolve) => {
      this.child.on("close", (code, signal) => resolve({ code, signal }));
    });
    this.child.stdin.on("error", () => {}); // EPIPE after acpd exits is reported by exit status
    const outLines = lineSplitter((line) => {
      fs.writeSync(this.outFd, Buffer.concat([line, Buffer.from("\n")]));
      let msg;
      try {
        msg = JSON.parse(line.toString("utf8"));
      } catch {
        msg = { __invalid: line.toString("utf8") };
      }
      this.received.push(msg);
    });
    const inLines = lineSplitter((line) => {
      fs.writeSync(this.inFd, Buffer.concat([line, Buffer.from("\n")]));
      this.sent.push(JSON.parse(line.toString("utf8")));
    });
    const child = this.child;
    // The recording goes on after the SDK stops reading (it cancels the
    // stream when the connection closes): acpd's last words are recorded too.
    let open = true;
    const input = new ReadableStream({
      start(controller) {
        child.stdout.on("data", (chunk) => {
          outLines(chunk);
          if (open) {
            controller.enqueue(new Uint8Array(chunk));
          }
        });
        child.stdout.on("end", () => {
          if (open) {
            open = false;
            controller.close();
          }
        });
        child.stdout.on("error", (err) => {
          if (open) {
            open = false;
            controller.error(err);
          }
        });
      },
      cancel() {
        open = false;
      },
    });
    const output = new WritableStream({
      write(chunk) {
        inLines(Buffer.from(chunk));
        return new Promise((resolve, reject) => {
          child.stdin.write(chunk, (err) => (err ? reject(err) : resolve()));
        });
      },
    });
    this.stream = acp.ndJsonStream(output, input);
  }

  /**
   * Runs op with a connected client, then closes acpd's stdin and waits for
   * it to exit; acpd must exit 0.
   */
  async run(app, op) {
    let result;
    try {
      result = await app.connectWith(this.stream, op);
    } finally {
      this.child.stdin.end();
      const exit = await Promise.race([this.exited, sleep(15000, null, { ref: false })]);
      if (exit === null) {
        this.child.kill("SIGKILL");
        throw new Error(`acpd #${this.n} did not exit within 15s of stdin closing`);
      }
      fs.closeSync(this.outFd);
      fs.closeSync(this.inFd);
      this.exit = exit;
    }
    assert.deepEqual(this.exit, { code: 0, signal: null }, `acpd #${this.n} exit status`);
    return result;
  }

  /** Index of acpd's reply to the client request with this id. */
  replyIndex(id) {
    return this.received.findIndex((m) => !("method" in m) && m.id === id);
  }

  /** session/update params for sessionId received in [from, to). */
  updates(sessionId, from = 0, to = this.received.length) {
    return this.received
      .slice(from, to)
      .filter((m) => m.method === "session/update" && m.params?.sessionId === sessionId)
      .map((m) => m.params.update);
  }

  /** Requests acpd sent with this method. */
  requests(method) {
    return this.received.filter((m) => m.method === method && "id" in m);
  }
}

function lineSplitter(onLine) {
  let rest = Buffer.alloc(0);
  return (chunk) => {
    let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let i;
    while ((i = buf.indexOf(0x0a)) >= 0) {
      onLine(buf.subarray(0, i));
      buf = buf.subarray(i + 1);
    }
    rest = Buffer.from(buf);
  };
}

/**
 * Sends a request through the SDK and returns its result together with the
 * JSON-RPC id the SDK used and where the exchange sits in proc.received:
 * `from` (messages received before the request was sent) and `reply` (the
 * index of the reply).
 */
export async function call(proc, ctx, method, params) {
  const from = proc.received.length;
  const sentBefore = proc.sent.length;
  let result, error;
  try {
    result = await ctx.request(method, params);
  } catch (e) {
    error = e;
  }
  // Concurrent calls may interleave: claim the first unclaimed request with
  // this method and these params.
  const want = JSON.stringify(params);
  const req = proc.sent
    .slice(sentBefore)
    .find((m) => m.method === method && "id" in m && !proc.claimed.has(m.id) && JSON.stringify(m.params) === want);
  assert.ok(req, `request ${method} ${want} was not recorded`);
  proc.claimed.add(req.id);
  const reply = proc.replyIndex(req.id);
  assert.ok(reply >= 0, `reply to ${method} (id ${req.id}) was not recorded`);
  return { result, error, id: req.id, from, reply };
}

/** Polls cond every 10 ms until it returns a truthy value or timeoutMs passes. */
export async function waitFor(what, cond, timeoutMs = 15000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = cond();
    if (v) {
      return v;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await sleep(10);
  }
}

/** The kinds (sessionUpdate tags) of updates, in order. */
export function kinds(updates) {
  return updates.map((u) => u.sessionUpdate);
}

/** Concatenated text of the chunks of one kind. */
export function chunkText(updates, kind) {
  return updates
    .filter((u) => u.sessionUpdate === kind && u.content?.type === "text")
    .map((u) => u.content.text)
    .join("");
}

/**
 * Asserts that `want` occurs in `got` as a subsequence (in order, gaps
 * allowed) and returns the indexes where it matched.
 */
export function assertSubsequence(got, want, what) {
  const at = [];
  let j = 0;
  for (let i = 0; i < got.length && j < want.length; i++) {
    if (got[i] === want[j]) {
      at.push(i);
      j++;
    }
  }
  assert.equal(j, want.length, `${what}: expected ${JSON.stringify(want)} in order within ${JSON.stringify(got)}`);
  return at;
}

/** Initialize request params for a client with the given capabilities. */
export function initParams(clientCapabilities = {}) {
  return {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities,
    clientInfo: { name: "acpd-interop", title: "acpd interop test", version: "1.0.0" },
  };
}

/** Prints the summary line the Go test reads. */
export function summary(obj) {
  process.stdout.write(JSON.stringify(obj) + "\n");
}

/**
 * Makes client refuse acpd's fs/* and terminal/* requests, for scenarios
 * whose client advertises neither: acpd must then not send them.
 */
export function withoutEditor(client) {
  for (const method of ["fs/read_text_file", "fs/write_text_file", "terminal/create"]) {
    client = client.onRequest(method, () => {
      throw new Error(`${method} called although the client did not advertise it`);
    });
  }
  return client;
}

/** Selects the offered permission option of this kind. */
export function pick(params, kind) {
  const opt = params.options.find((o) => o.kind === kind);
  assert.ok(opt, `no ${kind} option in ${JSON.stringify(params.options)}`);
  return { outcome: { outcome: "selected", optionId: opt.optionId } };
}

/**
 * Runs a terminal/create request's command as an editor does: no shell,
 * in params.cwd (else cwd), with the editor's environment plus params.env.
 * Output of both streams goes to onOutput. It sets t.child, t.exit (null
 * while running; {code: 127} when it could not start, then what `close`
 * reports) and t.exited, a promise that settles at the first of the two;
 * onError, if given, sees the start failure.
 */
export function startTerminalCommand(t, params, cwd, onOutput, onError) {
  const env = { ...process.env };
  for (const e of params.env ?? []) {
    env[e.name] = e.value;
  }
  t.exit = null;
  t.child = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  t.child.stdout.on("data", onOutput);
  t.child.stderr.on("data", onOutput);
  t.exited = new Promise((resolve) => {
    t.child.on("error", (err) => {
      onError?.(err);
      t.exit = { code: 127, signal: null };
      resolve();
    });
    t.child.on("close", (code, signal) => {
      t.exit = { code, signal };
      resolve();
    });
  });
  return t;
}
