#!/usr/bin/env python3
"""A complete acpd model plug-in (protocol: model/exec/doc.go).

It serves one model, "echo". It answers the last user message word by word
("You said: ..."); when that message contains "use tool NAME JSON" it calls
the tool NAME with the JSON arguments instead; when the last message holds a
tool result it answers "Tool said: RESULT". Standard library only.
"""
import json
import sys
import uuid


def send(**line):
    sys.stdout.write(json.dumps({"v": 1, **line}) + "\n")
    sys.stdout.flush()  # one whole line at a time


def answer(rid, request):
    def event(**ev):
        send(id=rid, event=ev)

    messages = request.get("messages") or [{}]
    parts = messages[-1].get("parts") or []
    results = [p for p in parts if p.get("type") == "tool_result"]
    if results:
        content = results[-1].get("content") or []
        text = "Tool said: " + "".join(c.get("text", "") for c in content if c.get("type") == "text")
    else:
        text = "".join(p.get("text", "") for p in parts if p.get("type") == "text")
        if "use tool " in text:
            name, _, args = text.split("use tool ", 1)[1].strip().partition(" ")
            try:
                arguments = json.loads(args or "{}")
            except ValueError as e:
                send(id=rid, error={"kind": "invalid_request", "message": "bad tool arguments: %s" % e})
                return
            call = "call_" + uuid.uuid4().hex[:16]  # unique across restarts
            event(type="tool_start", toolCallId=call, toolName=name)
            event(type="tool_delta", toolCallId=call, text=json.dumps(arguments))
            event(type="tool_done", toolCallId=call, toolName=name, input=arguments)
            event(type="finish", finish="tool_use")
            return
        text = "You said: " + text
    words = text.split(" ")
    for i, word in enumerate(words):
        event(type="text", text=word if i == 0 else " " + word)
    event(type="usage", usage={"inputTokens": len(json.dumps(messages)) // 4, "outputTokens": len(words)})
    event(type="finish", finish="end_turn")


def main():
    for line in sys.stdin:  # ends when acpd closes our input
        if not line.strip():
            continue
        msg = json.loads(line)
        if msg.get("type") == "hello":
            if msg.get("v") != 1:
                send(type="hello", error={"message": "echo_plugin speaks protocol version 1"})
                return
            print("echo plug-in serving acpd %s" % msg.get("acpd"), file=sys.stderr, flush=True)
            send(type="hello", models=[{"id": "echo", "name": "Echo", "contextWindow": 100000, "tools": True}])
        elif msg.get("type") == "request":
            answer(msg["id"], msg["request"])
        # "cancel": every answer is complete before the next line is read,
        # so there is never anything to stop.


if __name__ == "__main__":
    main()
