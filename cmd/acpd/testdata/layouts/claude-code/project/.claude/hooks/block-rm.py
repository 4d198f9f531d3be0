#!/usr/bin/env python3
# A PreToolUse hook as Claude Code users write them: block rm -rf.
import json
import sys

event = json.load(sys.stdin)
command = event.get("tool_input", {}).get("command", "")
if event.get("tool_name") == "Bash" and "rm -rf" in command:
    print("rm -rf is blocked by the project's hook", file=sys.stderr)
    sys.exit(2)
