// A minimal MCP server (stdio, newline-delimited JSON-RPC, no dependency)
// with an MCP App view, for the test of a cancelled call's view
// (apps-cancel.mjs): the npm servers' tools answer at once, this one's
// "wait" never does. Tools:
//   wait        a view (ui://hang/view.html); never answers
//   echo        a view; answers its arguments (visible to model and app)
//   model-only  visibility ["model"]: no view may call it
import readline from "node:readline";

const VIEW = "ui://hang/view.html";
const HTML = "<!DOCTYPE html><html><head><title>hang</title></head><body>waiting</body></html>";
const tools = [
  { name: "wait", description: "Waits forever.", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: VIEW } } },
  { name: "echo", description: "Echoes.", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: VIEW } } },
  { name: "model-only", description: "For the model.", inputSchema: { type: "object" }, _meta: { ui: { visibility: ["model"] } } },
];

const send = (m) => process.stdout.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\n");
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  let m;
  try { m = JSON.parse(line); } catch { return; }
  if (m.id === undefined) return; // notifications (initialized, cancelled)
  switch (m.method) {
    case "initialize":
      return send({ id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {}, resources: {} }, serverInfo: { name: "hang", version: "1.0.0" } } });
    case "ping":
      return send({ id: m.id, result: {} });
    case "tools/list":
      return send({ id: m.id, result: { tools } });
    case "resources/list":
      return send({ id: m.id, result: { resources: [{ uri: VIEW, name: "view", mimeType: "text/html;profile=mcp-app" }] } });
    case "resources/templates/list":
      return send({ id: m.id, result: { resourceTemplates: [] } });
    case "resources/read":
      return send({ id: m.id, result: { contents: [{ uri: VIEW, mimeType: "text/html;profile=mcp-app", text: HTML }] } });
    case "tools/call":
      if (m.params.name === "wait") return; // never answered
      return send({ id: m.id, result: { content: [{ type: "text", text: "ok" }], structuredContent: { echoed: m.params.arguments ?? {} } } });
    default:
      return send({ id: m.id, error: { code: -32601, message: "method not found" } });
  }
});
