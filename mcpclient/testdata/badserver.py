#!/usr/bin/env python3
"""A deliberately misbehaving MCP stdio server for mcpclient's tests.

Usage: badserver.py MODE [LOGFILE]

Modes:
  hang        reads its input and never answers
  exit        writes an error to stderr and exits with status 2 at once
  legacy      a 2025-06-18 server that dies (status 1) when the first
              message is server/discover, like servers built on old SDKs
  junk        a working server that prints non-JSON banners and log lines on
              stdout before and between its messages
  notjsonrpc  answers with a JSON line that is not JSON-RPC
  ok          a working legacy server (answers server/discover with -32601)

Every working mode offers the tools echo {text}, pid {}, sleep {seconds,
announce} and progress {steps}; sleep with announce first sends a progress
notification (progress 0, "sleeping"), so a test knows the call arrived. With LOGFILE, each received method is appended to it
(one per line), so tests can see what the client sent.
"""
import json
import os
import sys
import time

MODE = sys.argv[1]
LOG = sys.argv[2] if len(sys.argv) > 2 else None
VERSIONS = ["2025-06-18", "2025-03-26", "2024-11-05"]

TOOLS = [
    {"name": "echo", "description": "echo text", "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}},
    {"name": "pid", "description": "the server's process id", "inputSchema": {"type": "object"}},
    {"name": "sleep", "description": "sleep", "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}, "announce": {"type": "boolean"}}}},
    {"name": "progress", "description": "report progress", "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}}}},
]


def send(msg):
    if MODE == "junk":
        sys.stdout.write("[junk] about to answer\n\n   \n")
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def log(method):
    if LOG:
        with open(LOG, "a") as f:
            f.write(method + "\n")


def result(mid, res):
    send({"jsonrpc": "2.0", "id": mid, "result": res})


def error(mid, code, message):
    send({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}})


def text(s):
    return {"content": [{"type": "text", "text": s}]}


def call_tool(mid, params):
    name = params.get("name")
    args = params.get("arguments") or {}
    if name == "echo":
        result(mid, text(args.get("text", "")))
    elif name == "pid":
        result(mid, text(str(os.getpid())))
    elif name == "sleep":
        token = (params.get("_meta") or {}).get("progressToken")
        if args.get("announce") and token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 0, "message": "sleeping"}})
        time.sleep(float(args.get("seconds", 60)))
        result(mid, text("slept"))
    elif name == "progress":
        token = (params.get("_meta") or {}).get("progressToken")
        steps = int(args.get("steps", 3))
        for i in range(steps):
            if token is not None:
                send({"jsonrpc": "2.0", "method": "notifications/progress",
                      "params": {"progressToken": token, "progress": i + 1, "total": steps, "message": "step %d" % (i + 1)}})
            time.sleep(0.02)
        result(mid, text("done"))
    else:
        error(mid, -32602, "unknown tool " + str(name))


def main():
    if MODE == "exit":
        sys.stderr.write("fatal: missing configuration file\n")
        sys.exit(2)
    if MODE == "junk":
        sys.stdout.write("Starting junk server v1.0...\nListening on stdio\n")
        sys.stdout.flush()
    first = True
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        msg = json.loads(line)
        method = msg.get("method", "")
        log(method)
        if MODE == "hang":
            continue
        if first and MODE == "legacy" and method == "server/discover":
            sys.stderr.write("unknown method server/discover\n")
            sys.exit(1)
        first = False
        if MODE == "notjsonrpc":
            sys.stdout.write('{"hello": "world"}\n')
            sys.stdout.flush()
            continue
        mid = msg.get("id")
        if mid is None:
            continue  # a notification
        params = msg.get("params") or {}
        if method == "initialize":
            v = params.get("protocolVersion")
            result(mid, {"protocolVersion": v if v in VERSIONS else VERSIONS[0],
                         "capabilities": {"tools": {}},
                         "serverInfo": {"name": "badserver", "version": "1"}})
        elif method == "tools/list":
            result(mid, {"tools": TOOLS})
        elif method == "tools/call":
            call_tool(mid, params)
        elif method == "ping":
            result(mid, {})
        else:
            error(mid, -32601, "method not found: " + method)


main()
