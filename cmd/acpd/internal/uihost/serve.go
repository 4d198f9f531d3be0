package uihost

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"

	"acpd/acp"
	"acpd/acp/jsonrpc"
)

//go:embed page
var pageFS embed.FS

// page returns the embedded page name with each {{.Key}} replaced by the
// value of Key in vals, escaped for HTML. The pages put these values only
// in double-quoted attribute values (TestPagePlaceholders checks it),
// where escaping the five characters html.EscapeString does is all the
// context asks: no template engine is needed (escapeHTML, not package
// html, whose init would run in every acpd process).
func page(name string, vals map[string]string) ([]byte, error) {
	src, err := pageFS.ReadFile("page/" + name)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(src)+64)
	for {
		i := bytes.Index(src, []byte("{{."))
		if i < 0 {
			return append(out, src...), nil
		}
		j := bytes.Index(src[i:], []byte("}}"))
		if j < 0 {
			return nil, fmt.Errorf("page %s: unterminated placeholder", name)
		}
		key := string(src[i+3 : i+j])
		v, ok := vals[key]
		if !ok {
			return nil, fmt.Errorf("page %s: no value for {{.%s}}", name, key)
		}
		out = append(append(out, src[:i]...), escapeHTML(v)...)
		src = src[i+j+2:]
	}
}

// escapeHTML escapes what html.EscapeString does: <, >, &, ' and ".
func escapeHTML(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\'':
			b.WriteString("&#39;")
		case '"':
			b.WriteString("&#34;")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// keepAlive is how often an idle event stream gets a comment line.
const keepAlive = 15 * time.Second

// common sets the headers of every answer of both origins.
func common(w http.ResponseWriter) {
	hd := w.Header()
	hd.Set("Cache-Control", "no-store")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
}

// guard answers 404 unless the request's Host is addr and its path starts
// with the secret; it returns the rest of the path.
func guard(w http.ResponseWriter, r *http.Request, addr, secret string) (string, bool) {
	common(w)
	got, rest, ok := splitSecret(r.URL.Path)
	if r.Host != addr || !ok || !secretOK(got, secret) {
		http.NotFound(w, r)
		return "", false
	}
	return rest, true
}

// hostHandler serves the host origin (addr is its 127.0.0.1:port).
func (h *Host) hostHandler(addr string) http.Handler {
	origin := "http://" + addr
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := guard(w, r, addr, h.hostSecret)
		if !ok {
			return
		}
		if r.Method == http.MethodPost {
			ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if r.Header.Get("Origin") != origin || ct != "application/json" {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, maxBodyBytes)
			switch rest {
			case "call":
				h.serveCall(w, r)
			case "finish":
				h.finOnce.Do(func() { close(h.finished) })
				w.WriteHeader(http.StatusNoContent)
			case "answer":
				var a struct {
					ID    string `json:"id"`
					Allow bool   `json:"allow"`
				}
				if json.NewDecoder(r.Body).Decode(&a) != nil || !h.answer(a.ID, a.Allow) {
					http.Error(w, "no such question", http.StatusNotFound)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			case "torndown":
				h.tdOnce.Do(func() { close(h.torndown) })
				w.WriteHeader(http.StatusNoContent)
			default:
				http.NotFound(w, r)
			}
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch {
		case rest == "":
			h.mu.Lock()
			sand := h.sandURL
			h.mu.Unlock()
			w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src "+sand+"; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
			w.Header().Set("X-Frame-Options", "DENY")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			b, err := page("index.html", map[string]string{"Name": h.o.Name, "Version": h.o.Version})
			if err != nil {
				h.log.Error("uihost: the page", "err", err)
				http.Error(w, "internal error", http.StatusInternalServerError)
				return
			}
			w.Write(b)
		case rest == "host.js" || rest == "host.css":
			b, err := pageFS.ReadFile("page/" + rest)
			if err != nil {
				http.NotFound(w, r)
				return
			}
			ct := "text/javascript; charset=utf-8"
			if strings.HasSuffix(rest, ".css") {
				ct = "text/css; charset=utf-8"
			}
			w.Header().Set("Content-Type", ct)
			w.Write(b)
		case rest == "events":
			h.serveEvents(w, r)
		case strings.HasPrefix(rest, "view/"):
			h.serveView(w, strings.TrimPrefix(rest, "view/"))
		default:
			http.NotFound(w, r)
		}
	})
}

// sandboxHandler serves the sandbox origin: one proxy document per view,
// under the view's Content-Security-Policy.
func (h *Host) sandboxHandler(addr string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest, ok := guard(w, r, addr, h.sandboxSecret)
		if !ok {
			return
		}
		id, ok := strings.CutPrefix(rest, "proxy/")
		if !ok || r.Method != http.MethodGet {
			http.NotFound(w, r)
			return
		}
		h.mu.Lock()
		v := h.views[id]
		host := h.hostURL
		h.mu.Unlock()
		if v == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Security-Policy", v.csp.policy(h.log)+"; frame-ancestors "+host)
		if pp := permissionsPolicy(v.perms); pp != "" {
			w.Header().Set("Permissions-Policy", pp)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		b, err := page("proxy.html", map[string]string{"Host": host})
		if err != nil {
			h.log.Error("uihost: the proxy page", "err", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return
		}
		w.Write(b)
	})
}

// serveView answers the page's request for a view's document: the html
// (the CSP also as a meta element, besides the proxy's header the inner
// frame inherits), the declared csp and permissions, and the inner frame's
// sandbox and allow attributes.
func (h *Host) serveView(w http.ResponseWriter, id string) {
	h.mu.Lock()
	v := h.views[id]
	h.mu.Unlock()
	if v == nil {
		http.Error(w, "no such view", http.StatusNotFound)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"html":        withCSPMeta(v.html, v.csp.policy(h.log)),
		"csp":         v.csp,
		"permissions": v.perms,
		"sandbox":     "allow-scripts allow-forms",
		"allow":       allowAttr(v.perms),
	})
}

// serveEvents streams the retained events, then every new one, as
// Server-Sent Events until the page goes, the host drops it or closes.
func (h *Host) serveEvents(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	s, replay, ok := h.subscribe()
	if !ok {
		http.Error(w, "closed", http.StatusServiceUnavailable)
		return
	}
	defer h.unsubscribe(s)
	h.mu.Lock()
	sand := h.sandURL + "/" + h.sandboxSecret + "/proxy/"
	h.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	write := func(b json.RawMessage) error {
		if _, err := io.WriteString(w, "data: "); err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n\n")
		return err
	}
	hello, _ := json.Marshal(map[string]any{"type": "hello", "sandbox": sand})
	if write(hello) != nil {
		return
	}
	for _, b := range replay {
		if write(b) != nil {
			return
		}
	}
	fl.Flush()
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case b := <-s.ch:
			if write(b) != nil {
				return
			}
			fl.Flush()
		case <-tick.C:
			if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-s.gone:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// pageCall is one request of a view the page relays.
type pageCall struct {
	View   string          `json:"view"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// rpcError is the error of a relayed request, as the page gets it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// serveCall relays a view's request to the agent as the _acpd/app/
// request of the view's own session and tool call.
func (h *Host) serveCall(w http.ResponseWriter, r *http.Request) {
	var c pageCall
	answer := func(result json.RawMessage, e *rpcError) {
		w.Header().Set("Content-Type", "application/json")
		if e != nil {
			json.NewEncoder(w).Encode(map[string]any{"error": e})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"result": result})
	}
	if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
		answer(nil, &rpcError{int(acp.ErrorCodeInvalidParams), "invalid request: " + err.Error()})
		return
	}
	h.mu.Lock()
	v := h.views[c.View]
	h.mu.Unlock()
	if v == nil {
		answer(nil, &rpcError{int(acp.ErrorCodeInvalidRequest), "no such view"})
		return
	}
	method, params, err := relayParams(c.Method, c.Params)
	if err != nil {
		answer(nil, err)
		return
	}
	params["sessionId"] = v.sessionID
	params["toolCallId"] = v.callID
	if h.o.Relay == nil {
		answer(nil, &rpcError{int(acp.ErrorCodeInvalidRequest), "this host relays no requests"})
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(h.base, cancel)
	defer stop()
	res, rerr := h.o.Relay(ctx, method, params)
	if rerr != nil {
		code := -32603
		var ae *jsonrpc.Error
		if errors.As(rerr, &ae) {
			code = ae.Code
		}
		answer(nil, &rpcError{code, rerr.Error()})
		return
	}
	if len(res) == 0 {
		res = json.RawMessage("{}")
	}
	answer(res, nil)
}

// relayParams maps a view's MCP Apps request to its _acpd/app/ method and
// the params it may set (anything else it sent is dropped).
func relayParams(method string, raw json.RawMessage) (string, map[string]any, *rpcError) {
	var p map[string]json.RawMessage
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &p); err != nil {
			return "", nil, &rpcError{int(acp.ErrorCodeInvalidParams), "params: " + err.Error()}
		}
	}
	var to string
	var keep []string
	switch method {
	case "tools/call":
		to, keep = MethodCallTool, []string{"name", "arguments"}
	case "resources/read":
		to, keep = MethodReadResource, []string{"uri"}
	case "ui/message":
		to, keep = MethodMessage, []string{"role", "content"}
	case "ui/update-model-context":
		to, keep = MethodModelContext, []string{"content", "structuredContent"}
	case "notifications/message":
		to, keep = MethodLog, []string{"level", "data", "logger"}
	default:
		return "", nil, &rpcError{int(acp.ErrorCodeMethodNotFound), "method not relayed: " + method}
	}
	out := map[string]any{}
	for _, k := range keep {
		if v, ok := p[k]; ok {
			out[k] = v
		}
	}
	return to, out, nil
}
