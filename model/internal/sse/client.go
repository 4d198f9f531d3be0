package sse

import (
	"context"
	"iter"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"acpd/model"
	"acpd/model/internal/body"
)

// maxErrorBody bounds how much of an error response is read.
const maxErrorBody = 1 << 20

// Dialect is what a [Client] needs to know about one API.
type Dialect struct {
	// BaseURL is the default API root.
	BaseURL string
	// Version, when set, is the version path every request goes under: a
	// base URL ending in it is accepted as one without it.
	Version string
	// KeyHeader and KeyPrefix carry model.HTTPOptions.APIKey
	// ("Authorization", "Bearer ").
	KeyHeader, KeyPrefix string
	// Header holds default headers as name, value pairs
	// (model.HTTPOptions.Headers override them): a slice literal, unlike
	// an http.Header, costs a dialect no code at start-up.
	Header [][2]string
	// MaxEventBytes bounds one event of the stream.
	MaxEventBytes int
	// Error classifies an error answer: the status (0 for an error body
	// sent with a 2xx status), the headers and at most 1 MiB of the body.
	// For status 0 it returns nil when the body is not an error.
	Error func(status int, h http.Header, body []byte) error
	// NotStreaming is the message of a 2xx JSON answer that is no error
	// (the server ignored the request to stream).
	NotStreaming string
}

// Answer is the body of a dialect's [Dialect.Error]: it parses the error
// body raw with parse (nil when it holds no error), falls back to
// fallback(body) for a body that holds none, and classifies the result. A
// 2xx answer (status 0) without an error is no error. A dialect's Error is
// a function of its own that calls Answer, not a closure built when the
// package is initialised, so that a dialect runs no code at start-up.
func Answer[E any](status int, h http.Header, raw []byte, parse func(body []byte) *E, fallback func(body string) *E, classify func(status int, h http.Header, e *E) *model.Error) error {
	e := parse(raw)
	if e == nil {
		if status == 0 {
			return nil
		}
		e = fallback(string(raw))
	}
	return classify(status, h, e)
}

// Client is the HTTP plumbing of one dialect's backend, built from its
// model.HTTPOptions. It is safe for concurrent use.
type Client struct {
	d      Dialect
	base   string
	query  url.Values
	header http.Header
	client *http.Client
	idle   time.Duration
}

// NewClient returns the client of d configured by o. o is copied.
func NewClient(o model.HTTPOptions, d Dialect) *Client {
	c := &Client{d: d, base: strings.TrimRight(o.BaseURL, "/"), query: url.Values{}, header: http.Header{},
		client: o.HTTPClient, idle: o.IdleTimeout}
	if c.base == "" {
		c.base = d.BaseURL
	}
	if base, rawQuery, ok := strings.Cut(c.base, "?"); ok {
		c.base = strings.TrimRight(base, "/")
		c.query, _ = url.ParseQuery(rawQuery) // keeps the valid pairs
	}
	if d.Version != "" {
		c.base = strings.TrimSuffix(c.base, d.Version) + d.Version
	}
	for k, v := range o.Query {
		c.query.Set(k, v)
	}
	for _, kv := range d.Header {
		c.header.Add(kv[0], kv[1])
	}
	if o.APIKey != "" {
		c.header.Set(d.KeyHeader, d.KeyPrefix+o.APIKey)
	}
	for k, v := range o.Headers {
		c.header.Set(k, v)
	}
	return c
}

// URL returns the URL of path (which may hold a query of its own) under
// the base URL, with the configured query.
func (c *Client) URL(path string) string {
	u := c.base + path
	if len(c.query) == 0 {
		return u
	}
	if strings.Contains(path, "?") {
		return u + "&" + c.query.Encode()
	}
	return u + "?" + c.query.Encode()
}

// Open sends a request to path with the configured headers plus header.
func (c *Client) Open(ctx context.Context, method, path string, header http.Header, body *body.Payload) (*Stream, error) {
	h := c.header.Clone()
	for k, vs := range header {
		h[k] = vs
	}
	return Open(ctx, Call{Client: c.client, Method: method, URL: c.URL(path), Header: h, Body: body, Idle: c.idle})
}

// Get fetches the JSON document at path (at most limit bytes),
// classifying error answers with the dialect's Error.
func (c *Client) Get(ctx context.Context, path string, limit int64) ([]byte, error) {
	s, err := c.Open(ctx, http.MethodGet, path, http.Header{"Accept": {"application/json"}}, nil)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	raw, err := s.ReadAll(limit)
	if err != nil {
		return nil, s.Err(err)
	}
	if s.Response.StatusCode/100 != 2 {
		return nil, c.d.Error(s.Response.StatusCode, s.Response.Header, raw)
	}
	return raw, nil
}

// Stream posts the JSON body returns (called when the iteration starts)
// to path and yields the events the decoder newDecoder returns (called
// once the answer is a stream) finds in the event stream answering it
// (see [Decode]). An error is yielded once, last: body's error, a
// classified error answer, the decoder's error, or a read error classified
// by [Stream.Err]. Stopping the iteration releases the connection; a
// response that completed leaves it to the transport for the next request
// (see [Stream.drain]).
func (c *Client) Stream(ctx context.Context, path string, body func() (*body.Payload, error),
	newDecoder func() Decoder) iter.Seq2[model.Event, error] {
	return func(yield func(model.Event, error) bool) {
		body, err := body()
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		s, err := c.Open(ctx, http.MethodPost, path, http.Header{
			"Content-Type": {"application/json"}, "Accept": {"text/event-stream"}}, body)
		if err != nil {
			yield(model.Event{}, err)
			return
		}
		defer s.Close()
		if err := c.check(s); err != nil {
			yield(model.Event{}, err)
			return
		}
		stopped := false
		r := NewReader(s, c.d.MaxEventBytes)
		err = Decode(r, newDecoder(), func(ev model.Event) bool {
			if !yield(ev, nil) {
				stopped = true
			}
			return !stopped
		})
		r.Release()
		if err != nil && !stopped {
			yield(model.Event{}, s.Err(err))
			return
		}
		if err == nil {
			s.drain()
		}
	}
}

// check turns an unsuccessful or non-streaming response into a classified
// error.
func (c *Client) check(s *Stream) error {
	resp := s.Response
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	ok := resp.StatusCode/100 == 2
	if ok && ct != "application/json" {
		return nil
	}
	raw, err := s.ReadAll(maxErrorBody)
	if err != nil && len(raw) == 0 && ok {
		return s.Err(err)
	}
	if !ok {
		return c.d.Error(resp.StatusCode, resp.Header, raw)
	}
	if err := c.d.Error(0, nil, raw); err != nil {
		return err
	}
	return &model.Error{Kind: model.ErrInvalidRequest, Status: resp.StatusCode, Message: c.d.NotStreaming}
}
