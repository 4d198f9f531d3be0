// acpd's MCP Apps host page (docs/mcp-apps.md). Go → page: Server-Sent
// Events ("events"); page → Go: JSON POSTs ("call", "finish", "torndown"),
// all under this page's secret path. Each view runs in a sandbox proxy
// frame on a separate origin, which loads it into an inner frame and
// relays the JSON-RPC messages of MCP Apps between the view and this page.
"use strict";
(function () {
  const meta = (n) => document.querySelector(`meta[name="${n}"]`).content;
  const HOST_INFO = { name: meta("acpd-host-name"), version: meta("acpd-host-version") };
  const PROTOCOLS = ["2026-01-26", "2025-11-21"];
  const MODES = ["inline", "fullscreen"];
  const TEARDOWN_MS = 3000;

  const logEl = document.getElementById("log");
  const statusEl = document.getElementById("status");
  const tools = new Map(); // tool call id → {el, badge, title}
  const views = new Map(); // view id → View
  const messages = new Map(); // event seq → element
  let sandboxPrefix = "";
  let sandboxOrigin = "";
  let ended = false;

  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const setStatus = (s) => { statusEl.textContent = s; };
  const post = (path, body) => fetch(path, {
    method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
  });
  const darkQuery = matchMedia("(prefers-color-scheme: dark)");
  const theme = () => (darkQuery.matches ? "dark" : "light");

  // hostContext.styles: a small set of the schema's CSS variables in the
  // page's own palette (host.css) for the current theme; system fonts, so
  // no font CSS to load.
  const FONTS = {
    "--font-sans": 'system-ui, -apple-system, "Segoe UI", sans-serif',
    "--font-mono": "ui-monospace, Menlo, Consolas, monospace",
    "--font-text-sm-size": "13px", "--font-text-md-size": "14px",
    "--font-weight-normal": "400", "--font-weight-semibold": "600",
    "--border-radius-sm": "6px", "--border-radius-md": "8px",
  };
  const PALETTE = {
    light: {
      "--color-background-primary": "#ffffff", "--color-background-secondary": "#f6f7f9",
      "--color-text-primary": "#1d2128", "--color-text-secondary": "#6a7280",
      "--color-border-primary": "#dde1e7", "--color-ring-primary": "#2f6fde",
      "--color-text-danger": "#c43b3b", "--color-text-success": "#1f8a4c",
    },
    dark: {
      "--color-background-primary": "#1e2229", "--color-background-secondary": "#15181d",
      "--color-text-primary": "#e4e7ec", "--color-text-secondary": "#98a0ad",
      "--color-border-primary": "#323843", "--color-ring-primary": "#6b9cf5",
      "--color-text-danger": "#f07171", "--color-text-success": "#4cc38a",
    },
  };
  const styles = () => ({ variables: Object.assign({}, PALETTE[theme()], FONTS) });

  // ---- the conversation -------------------------------------------------

  function onMessage(ev) {
    let m = messages.get(ev.seq);
    if (!m) {
      m = el("div", "msg " + ev.role);
      m.append(el("span", "who", ev.role === "user" ? "You" : "Agent"), el("span", "text"));
      messages.set(ev.seq, m);
      logEl.append(m);
    }
    m.querySelector(".text").textContent = ev.text;
  }

  function onTool(t) {
    let row = tools.get(t.id);
    if (!row) {
      const e = el("section", "tool");
      e.dataset.toolCallId = t.id;
      const head = el("div", "head");
      const title = el("span", "title");
      const badge = el("span", "badge");
      head.append(title, badge);
      const details = el("details", "io");
      details.hidden = true;
      details.append(el("summary", "", "input and output"), el("pre", "in"), el("pre", "out"));
      e.append(head, details);
      row = { el: e, title, badge, details };
      tools.set(t.id, row);
      logEl.append(e);
    }
    row.title.textContent = t.title;
    row.badge.textContent = (t.status || "pending").replace("_", " ");
    row.badge.className = "badge " + (t.status || "pending");
    const input = t.input && Object.keys(t.input).length ? JSON.stringify(t.input, null, 2) : "";
    row.details.querySelector(".in").textContent = input;
    row.details.querySelector(".out").textContent = t.output || "";
    row.details.hidden = !input && !t.output;
  }

  // ---- views ------------------------------------------------------------

  class View {
    constructor(ev) {
      this.id = ev.view;
      this.ev = ev;
      this.input = ev.toolInput;
      this.partial = null;
      this.outcome = null; // {result} or {cancelled}
      this.initialized = false;
      this.sent = { input: false, outcome: false };
      this.mode = "inline";
      this.closed = false;
      this.nextId = 1;
      this.pending = new Map();
      this.doc = null;

      const row = tools.get(ev.toolCallId);
      this.el = el("div", "view" + (ev.prefersBorder === false ? " borderless" : ""));
      this.el.dataset.view = this.id;
      const bar = el("div", "bar");
      bar.append(el("span", "", `MCP App · ${ev.server} · ${ev.tool}`));
      this.modeBtn = el("button", "", "Full screen");
      this.modeBtn.type = "button";
      this.modeBtn.onclick = () => this.setMode(this.mode === "inline" ? "fullscreen" : "inline", true);
      const close = el("button", "", "Close");
      close.type = "button";
      close.onclick = () => this.teardown();
      bar.append(this.modeBtn, close);
      this.calls = el("div", "calls");
      this.el.append(bar);
      (row ? row.el : logEl).append(this.el);
      this.el.after(this.calls);
      this.load();
    }

    async load() {
      try {
        const r = await fetch("view/" + encodeURIComponent(this.id));
        if (!r.ok) throw new Error("the view is no longer available");
        this.doc = await r.json();
      } catch (e) {
        this.gone(String(e.message || e));
        return;
      }
      this.frame = el("iframe");
      this.frame.title = `${this.ev.server}: ${this.ev.tool}`;
      if (this.doc.allow) this.frame.allow = this.doc.allow;
      this.frame.referrerPolicy = "no-referrer";
      this.frame.src = sandboxPrefix + encodeURIComponent(this.id);
      this.el.append(this.frame);
    }

    send(m) {
      if (this.frame && this.frame.contentWindow) this.frame.contentWindow.postMessage(m, sandboxOrigin);
    }
    notify(method, params) { this.send({ jsonrpc: "2.0", method, params }); }
    reply(id, result) { this.send({ jsonrpc: "2.0", id, result }); }
    fail(id, code, message) { this.send({ jsonrpc: "2.0", id, error: { code, message } }); }
    request(method, params, ms) {
      const id = "host-" + this.nextId++;
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => { this.pending.delete(id); reject(new Error("timeout")); }, ms);
        this.pending.set(id, (m) => { clearTimeout(timer); m.error ? reject(m.error) : resolve(m.result); });
        this.send({ jsonrpc: "2.0", id, method, params });
      });
    }

    note(text, bad) {
      const d = el("div", bad ? "err" : "", text);
      this.calls.append(d);
      while (this.calls.childElementCount > 20) this.calls.firstElementChild.remove();
    }

    context() {
      const w = this.frame ? this.frame.clientWidth : 0;
      return {
        theme: theme(),
        styles: styles(),
        displayMode: this.mode,
        availableDisplayModes: MODES,
        containerDimensions: this.mode === "fullscreen" ? { width: innerWidth, height: innerHeight } : { width: w, maxHeight: 4000 },
        locale: navigator.language,
        timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
        userAgent: `${HOST_INFO.name}/${HOST_INFO.version}`,
        platform: "web",
        deviceCapabilities: { hover: matchMedia("(hover: hover)").matches, touch: navigator.maxTouchPoints > 0 },
        toolInfo: { tool: { name: this.ev.tool, inputSchema: { type: "object" } } },
      };
    }

    capabilities() {
      return {
        openLinks: {},
        downloadFile: {},
        serverTools: {},
        serverResources: {},
        logging: {},
        message: { text: {} },
        updateModelContext: { text: {} },
        sandbox: { csp: (this.doc && this.doc.csp) || {}, permissions: (this.doc && this.doc.permissions) || {} },
      };
    }

    setMode(mode, byHost) {
      if (!MODES.includes(mode) || mode === this.mode) return this.mode;
      this.mode = mode;
      this.el.classList.toggle("fullscreen", mode === "fullscreen");
      this.modeBtn.textContent = mode === "fullscreen" ? "Exit full screen" : "Full screen";
      if (this.initialized) this.notify("ui/notifications/host-context-changed", { displayMode: mode, containerDimensions: this.context().containerDimensions });
      if (byHost) this.note(`display mode → ${mode}`);
      return this.mode;
    }

    deliver() {
      if (!this.initialized || this.closed) return;
      if (!this.sent.input && this.input === undefined && this.outcome) this.input = this.partial || {};
      if (!this.sent.input && this.input === undefined && this.partial) {
        this.notify("ui/notifications/tool-input-partial", { arguments: this.partial });
      }
      if (!this.sent.input && this.input !== undefined) {
        this.sent.input = true;
        this.notify("ui/notifications/tool-input", { arguments: this.input || {} });
      }
      if (this.sent.input && !this.sent.outcome && this.outcome) {
        this.sent.outcome = true;
        if (this.outcome.result) this.notify("ui/notifications/tool-result", this.outcome.result);
        else this.notify("ui/notifications/tool-cancelled", this.outcome.cancelled);
      }
    }

    async relay(method, params) {
      try {
        const r = await post("call", { view: this.id, method, params: params || {} });
        if (!r.ok) return { error: { code: -32603, message: `host: HTTP ${r.status}` } };
        return await r.json();
      } catch (e) {
        return { error: { code: -32603, message: String(e.message || e) } };
      }
    }

    async onRequest(m) {
      const p = m.params || {};
      switch (m.method) {
        case "ui/initialize": {
          const v = PROTOCOLS.includes(p.protocolVersion) ? p.protocolVersion : PROTOCOLS[0];
          this.reply(m.id, { protocolVersion: v, hostInfo: HOST_INFO, hostCapabilities: this.capabilities(), hostContext: this.context() });
          return;
        }
        case "ping":
          this.reply(m.id, {});
          return;
        case "tools/call":
        case "resources/read":
        case "ui/update-model-context": {
          const what = m.method === "tools/call" ? `tools/call ${p.name}` : m.method === "resources/read" ? `resources/read ${p.uri}` : m.method;
          const r = await this.relay(m.method, p);
          if (r.error) {
            this.note(`${what} → ${r.error.message}`, true);
            this.fail(m.id, r.error.code || -32603, r.error.message);
          } else {
            this.note(`${what} → ok`);
            this.reply(m.id, r.result);
          }
          return;
        }
        case "ui/message": {
          this.note("ui/message → sending");
          const r = await this.relay(m.method, p);
          if (r.error) {
            this.note(`ui/message → ${r.error.message}`, true);
            this.reply(m.id, { isError: true });
          } else {
            this.note("ui/message → answered");
            this.reply(m.id, {});
          }
          return;
        }
        case "ui/open-link": {
          const ok = await confirmLink(String(p.url || ""), `${this.ev.server} · ${this.ev.tool}`);
          this.note(`ui/open-link ${p.url} → ${ok ? "opened" : "refused"}`, !ok);
          if (ok) window.open(p.url, "_blank", "noopener,noreferrer");
          this.reply(m.id, ok ? {} : { isError: true });
          return;
        }
        case "ui/download-file": {
          const r = await download(p.contents, `${this.ev.server} · ${this.ev.tool}`);
          this.note(`ui/download-file → ${r.ok ? "offered " + r.why : r.why}`, !r.ok);
          this.reply(m.id, r.ok ? {} : { isError: true });
          return;
        }
        case "ui/request-display-mode":
          this.reply(m.id, { mode: this.setMode(p.mode, false) });
          this.note(`ui/request-display-mode ${p.mode} → ${this.mode}`);
          return;
        default:
          this.fail(m.id, -32601, "method not supported by this host: " + m.method);
      }
    }

    onNotification(m) {
      const p = m.params || {};
      switch (m.method) {
        case "ui/notifications/sandbox-proxy-ready":
          this.notify("ui/notifications/sandbox-resource-ready", {
            html: this.doc.html, sandbox: this.doc.sandbox, csp: this.doc.csp || {}, permissions: this.doc.permissions || {},
          });
          return;
        case "ui/notifications/initialized":
          this.initialized = true;
          this.el.dataset.initialized = "true";
          this.deliver();
          return;
        case "ui/notifications/size-changed":
          if (this.mode === "inline" && typeof p.height === "number" && this.frame) {
            this.frame.style.height = Math.max(40, Math.min(4000, Math.ceil(p.height))) + "px";
          }
          return;
        case "notifications/message":
          this.relay("notifications/message", p);
          return;
        case "ui/notifications/request-teardown":
          this.teardown();
          return;
      }
    }

    onMessageFromView(m) {
      if (!m || typeof m !== "object" || m.jsonrpc !== "2.0" || this.closed) return;
      if (m.method && m.id !== undefined) this.onRequest(m);
      else if (m.method) this.onNotification(m);
      else if (m.id !== undefined && this.pending.has(m.id)) {
        const f = this.pending.get(m.id);
        this.pending.delete(m.id);
        f(m);
      }
    }

    async teardown() {
      if (this.closed) return;
      if (this.initialized) {
        try { await this.request("ui/resource-teardown", {}, TEARDOWN_MS); } catch (e) { /* the view did not answer */ }
      }
      this.gone("closed");
    }

    gone(why) {
      this.closed = true;
      if (this.frame) this.frame.remove();
      this.frame = null;
      this.el.classList.remove("fullscreen");
      this.el.querySelectorAll("button").forEach((b) => b.remove());
      if (!this.el.querySelector(".closed")) this.el.append(el("div", "closed", "The app was " + why + "."));
    }
  }

  window.addEventListener("message", (e) => {
    if (e.origin !== sandboxOrigin) return;
    for (const v of views.values()) {
      if (v.frame && e.source === v.frame.contentWindow) {
        v.onMessageFromView(e.data);
        return;
      }
    }
  });

  // ---- questions to the user: links, downloads, messages ---------------

  // confirm asks one question at a time in the page's dialog: text, the
  // detail (a link, a file, a message) and the label of the yes button.
  const dialog = document.getElementById("confirm");
  let asking = Promise.resolve();
  let shown = ""; // the key of the question the dialog shows
  const settled = new Set(); // keys of questions acpd no longer asks
  function confirm(text, detail, yes, key) {
    const ask = asking.then(() => new Promise((resolve) => {
      if (key && settled.has(key)) { resolve(null); return; }
      shown = key || "";
      document.getElementById("confirm-text").textContent = text;
      document.getElementById("confirm-url").textContent = detail;
      document.getElementById("confirm-yes").textContent = yes;
      dialog.returnValue = "";
      dialog.addEventListener("close", () => { shown = ""; resolve(key && settled.has(key) ? null : dialog.returnValue === "yes"); }, { once: true });
      dialog.showModal();
    }));
    asking = ask.catch(() => {});
    return ask;
  }

  // ui/open-link: http and https only, after the user confirms.
  function confirmLink(url, who) {
    let u;
    try { u = new URL(url); } catch (e) { return Promise.resolve(false); }
    if (u.protocol !== "https:" && u.protocol !== "http:") return Promise.resolve(false);
    return confirm(`The app ${who} asks to open a link:`, u.href, "Open");
  }

  // ui/download-file: the embedded resources a view offers (at most
  // MAX_FILES, MAX_DOWNLOAD bytes in all) become downloads of the browser
  // after the user confirms their names, sizes and types; acpd itself
  // writes nothing. Resource links (the host would fetch them) are refused.
  const MAX_FILES = 8;
  const MAX_DOWNLOAD = 10 * 1024 * 1024;
  const fileName = (uri) => {
    let n = String(uri || "").split(/[?#]/)[0].split("/").pop();
    try { n = decodeURIComponent(n); } catch (e) { /* keep it encoded */ }
    n = n.replace(/[\\/:*?"<>|\u0000-\u001f\u007f]/g, "_").replace(/^[.\s]+|[.\s]+$/g, "").slice(0, 120);
    return n || "download";
  };
  const byteSize = (n) => (n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1048576).toFixed(1)} MiB`);
  // files checks a download's contents: [{name, type, bytes}] or an error.
  function files(contents) {
    if (!Array.isArray(contents) || contents.length === 0) return "no contents";
    if (contents.length > MAX_FILES) return `more than ${MAX_FILES} files`;
    const out = [];
    let total = 0;
    for (const c of contents) {
      const r = c && c.type === "resource" && c.resource;
      if (!r || typeof r !== "object") return "only embedded resources can be downloaded";
      let bytes;
      if (typeof r.text === "string") {
        if (r.text.length > MAX_DOWNLOAD) return "too large";
        bytes = new TextEncoder().encode(r.text);
      } else if (typeof r.blob === "string") {
        if (r.blob.length > (MAX_DOWNLOAD / 3) * 4 + 4) return "too large";
        let bin;
        try { bin = atob(r.blob); } catch (e) { return "a blob that is not base64"; }
        bytes = Uint8Array.from(bin, (ch) => ch.charCodeAt(0));
      } else {
        return "a resource without text or blob";
      }
      total += bytes.length;
      if (total > MAX_DOWNLOAD) return `larger than ${byteSize(MAX_DOWNLOAD)}`;
      const type = typeof r.mimeType === "string" && /^[\w.+-]+\/[\w.+-]+$/.test(r.mimeType) ? r.mimeType : (typeof r.text === "string" ? "text/plain" : "application/octet-stream");
      out.push({ name: fileName(r.uri), type, bytes });
    }
    return out;
  }
  async function download(contents, who) {
    const fs = files(contents);
    if (typeof fs === "string") return { ok: false, why: fs };
    const detail = fs.map((f) => `${f.name} · ${byteSize(f.bytes.length)} · ${f.type}`).join("\n");
    if (!(await confirm(`The app ${who} offers ${fs.length === 1 ? "a file" : fs.length + " files"} to download:`, detail, "Download"))) {
      return { ok: false, why: "cancelled" };
    }
    for (const f of fs) {
      const url = URL.createObjectURL(new Blob([f.bytes], { type: f.type }));
      const a = el("a");
      a.href = url;
      a.download = f.name;
      a.rel = "noopener";
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60000);
    }
    return { ok: true, why: fs.map((f) => f.name).join(", ") };
  }

  // A view's ui/message, when acpd asks here (the --approve level leaves
  // it to the user): allowed only by Send. An answered, cancelled or
  // timed-out question closes its dialog ("consent-done").
  const questions = new Set();
  async function consent(ev) {
    if (questions.has(ev.id) || settled.has(ev.id)) return;
    questions.add(ev.id);
    const v = views.get(ev.view);
    const who = v ? `${v.ev.server} · ${v.ev.tool}` : "a view";
    const yes = await confirm(`The app ${who} asks to send this message to the conversation, as yours:`, ev.text, "Send", ev.id);
    if (yes === null) return;
    if (v) v.note(`ui/message → ${yes ? "allowed" : "refused"} here`, !yes);
    try { await post("answer", { id: ev.id, allow: yes }); } catch (e) { /* acpd is gone */ }
  }
  function consentDone(id) {
    settled.add(id);
    if (shown === id && dialog.open) dialog.close("");
  }

  // ---- events from acpd -------------------------------------------------

  async function end() {
    if (ended) return;
    ended = true;
    await Promise.all([...views.values()].map((v) => v.teardown()));
    try { await post("torndown", {}); } catch (e) { /* acpd is gone */ }
    es.close();
    setStatus("the run ended");
    logEl.append(el("div", "ended", "acpd run has ended. You can close this page."));
  }

  function handle(ev) {
    switch (ev.type) {
      case "hello":
        sandboxPrefix = ev.sandbox;
        sandboxOrigin = new URL(ev.sandbox).origin;
        return;
      case "message": onMessage(ev); return;
      case "tool": onTool(ev.tool); return;
      case "view":
        if (!views.has(ev.view) && !ended) views.set(ev.view, new View(ev));
        return;
      case "input-partial": {
        const v = views.get(ev.view);
        if (v && v.input === undefined) { v.partial = ev.toolInput; v.deliver(); }
        return;
      }
      case "result":
      case "cancelled": {
        const v = views.get(ev.view);
        if (v && !v.outcome) {
          v.outcome = ev.type === "result" ? { result: ev.toolResult } : { cancelled: ev.reason ? { reason: ev.reason } : {} };
          v.deliver();
        }
        return;
      }
      case "consent": consent(ev); return;
      case "consent-done": consentDone(ev.id); return;
      case "end": end(); return;
    }
  }

  const es = new EventSource("events");
  es.onopen = () => setStatus("connected");
  es.onerror = () => { if (!ended) setStatus("reconnecting…"); };
  es.onmessage = (e) => {
    let ev;
    try { ev = JSON.parse(e.data); } catch (err) { return; }
    handle(ev);
  };

  document.getElementById("finish").onclick = async () => {
    await Promise.all([...views.values()].map((v) => v.teardown()));
    try { await post("finish", {}); } catch (e) { /* acpd is gone */ }
    setStatus("finished");
  };

  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape") return;
    for (const v of views.values()) if (v.mode === "fullscreen") v.setMode("inline", true);
  });

  let resizeTimer = 0;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => {
      for (const v of views.values()) {
        if (v.initialized && !v.closed) v.notify("ui/notifications/host-context-changed", { containerDimensions: v.context().containerDimensions });
      }
    }, 200);
  });
  darkQuery.addEventListener("change", () => {
    for (const v of views.values()) if (v.initialized && !v.closed) v.notify("ui/notifications/host-context-changed", { theme: theme(), styles: styles() });
  });

  // Best effort when the page goes away: the views hear of their teardown.
  window.addEventListener("pagehide", () => {
    for (const v of views.values()) {
      if (v.initialized && !v.closed) v.send({ jsonrpc: "2.0", id: "host-unload", method: "ui/resource-teardown", params: {} });
    }
  });
})();
