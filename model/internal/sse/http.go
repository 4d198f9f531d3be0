package sse

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"acpd/model"
	"acpd/model/internal/body"
)

// DefaultIdleTimeout is the idle timeout [Open] applies when given zero.
const DefaultIdleTimeout = 5 * time.Minute

// errIdle is the cancellation cause of a request whose server went quiet.
var errIdle = errors.New("idle timeout")

// Call describes one HTTP request whose response is an event stream.
type Call struct {
	// Client sends the request; nil means http.DefaultClient.
	Client *http.Client
	Method string
	// URL is the full request URL. It is never included in errors, so a
	// secret in its query cannot leak.
	URL    string
	Header http.Header
	// Body is sent as is, again on a redirect; nil sends no body.
	Body *body.Payload
	// Idle is the longest time to wait for the response headers and,
	// afterwards, for each read of the body to return bytes (time the
	// consumer spends between reads does not count); 0 means
	// [DefaultIdleTimeout].
	Idle time.Duration
}

// Stream is the response of an opened [Call]. Its owner must call Close.
// It is not safe for concurrent use.
type Stream struct {
	// Response is the HTTP response. Read the body through the Stream
	// (Read, ReadAll), which applies the idle timeout, not Response.Body.
	Response *http.Response
	parent   context.Context
	rctx     context.Context
	cancel   context.CancelCauseFunc
	timer    *time.Timer
	idle     time.Duration
}

// Open sends c with ctx and returns the response, whatever its status.
// Errors are classified by [Stream.Err]: ctx's own error when ctx ended,
// otherwise a *model.Error (ErrNetwork for transport failures and idle
// timeouts, ErrInvalidRequest for a malformed URL).
func Open(ctx context.Context, c Call) (*Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.Idle <= 0 {
		c.Idle = DefaultIdleTimeout
	}
	client := sameHostRedirects(c.Client)
	var r io.Reader
	if c.Body != nil {
		r = c.Body.Reader()
	}
	rctx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(rctx, c.Method, c.URL, r)
	if err != nil {
		cancel(nil)
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &model.Error{Kind: model.ErrInvalidRequest, Message: "invalid endpoint URL: " + err.Error()}
	}
	if c.Body != nil {
		req.ContentLength = c.Body.Len()
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(c.Body.Reader()), nil }
		if req.ContentLength == 0 {
			req.Body = http.NoBody
		}
	}
	for k, vs := range c.Header {
		req.Header[k] = vs
	}
	s := &Stream{parent: ctx, rctx: rctx, cancel: cancel, idle: c.Idle}
	s.timer = time.AfterFunc(c.Idle, func() { cancel(errIdle) })
	resp, err := client.Do(req)
	s.timer.Stop()
	if err != nil {
		cancel(nil)
		return nil, s.Err(err)
	}
	s.Response = resp
	return s, nil
}

// sameHostRedirects returns a copy of client (http.DefaultClient when nil)
// that follows redirects only within the original scheme and host: a
// redirect elsewhere would carry the API key headers (x-api-key, api-key)
// to another server. A refused redirect returns the 3xx response itself.
func sameHostRedirects(client *http.Client) *http.Client {
	if client == nil {
		client = http.DefaultClient
	}
	c := *client
	next := client.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// Read reads the response body, failing with a timeout when no byte
// arrives within the idle time. Errors are raw; classify them with Err.
func (s *Stream) Read(p []byte) (int, error) {
	s.timer.Reset(s.idle)
	n, err := s.Response.Body.Read(p)
	s.timer.Stop()
	return n, err
}

// ReadAll reads at most limit bytes of the body, for error responses.
func (s *Stream) ReadAll(limit int64) ([]byte, error) {
	return io.ReadAll(io.LimitReader(s, limit))
}

// Err classifies a transport or read error of s: the parent context's
// error when it ended, ErrNetwork "no data from server" after an idle
// timeout, ErrNetwork otherwise. Errors are returned unchanged when they
// already are *model.Error. The request URL is never part of the message.
func (s *Stream) Err(err error) error {
	if e := s.parent.Err(); e != nil {
		return e
	}
	var me *model.Error
	if errors.As(err, &me) {
		return err
	}
	if context.Cause(s.rctx) == errIdle {
		return &model.Error{Kind: model.ErrNetwork, Message: fmt.Sprintf("no data from server for %v", s.idle), Err: errIdle}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &model.Error{Kind: model.ErrNetwork, Message: err.Error(), Err: err}
}

// Bounds of [Stream.drain].
const (
	drainBytes = 4 << 10
	drainWait  = 25 * time.Millisecond
)

// drain reads the rest of a response whose last event arrived, so that
// the transport keeps its connection for the next request: a body closed
// before its end closes the connection, and the next request pays a new
// one (and a TLS handshake). What follows the last event is normally the
// end of the chunked body, already on its way; a server that sends more
// than drainBytes, or keeps the stream open for drainWait, gets its
// connection closed as before. The caller then closes s.
func (s *Stream) drain() {
	s.idle = drainWait
	_, _ = io.CopyN(io.Discard, s, drainBytes)
}

// Close releases the response and stops the idle timer. It is idempotent.
func (s *Stream) Close() error {
	s.timer.Stop()
	var err error
	if s.Response != nil {
		err = s.Response.Body.Close()
	}
	s.cancel(nil)
	return err
}

// RetryAfter returns the delay a response asks for before the next
// attempt: "retry-after-ms" (milliseconds, OpenAI) takes precedence over
// "retry-after" (seconds or an HTTP date, relative to now). It returns 0
// when neither is present or valid.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("retry-after-ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("retry-after"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs > 0 && secs < 1e9 {
			return time.Duration(secs * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// MaxErrorMessage bounds the message kept from an error body (an HTML error
// page can be large); longer messages are cut by ErrorMessage.
const MaxErrorMessage = 1000

// ErrorMessage cuts s to MaxErrorMessage bytes at a rune boundary, marking
// the cut with "...", and replaces invalid UTF-8: the message every dialect
// keeps from a provider's error.
func ErrorMessage(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxErrorMessage {
		return s
	}
	cut := MaxErrorMessage
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}

// NewError starts the *model.Error of an error answer (the caller sets its
// Kind). Its message is msgs[0] trimmed and cut by [ErrorMessage], or else
// the first other non-empty msgs, the status text, or "unknown error"; its
// RetryAfter comes from h's Retry-After when h is not nil.
func NewError(status int, h http.Header, msgs ...string) *model.Error {
	msg := ""
	for i, m := range msgs {
		if i == 0 {
			m = ErrorMessage(strings.TrimSpace(m))
		}
		if m != "" {
			msg = m
			break
		}
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	if msg == "" {
		msg = "unknown error"
	}
	out := &model.Error{Status: status, Message: msg}
	if h != nil {
		out.RetryAfter = RetryAfter(h, time.Now())
	}
	return out
}
