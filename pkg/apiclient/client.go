// Package apiclient is a client of loadgend's control API (api/openapi.yaml)
// for `loadgend run --coordinator`: submit a run, follow it, cancel it,
// fetch its files. The daemon it talks to is trusted with the runs, not
// with the client: every answer is bounded in size and time, a redirect is
// never followed (the token goes only to the URL given), and what the
// daemon writes back is scrubbed of the token and the run's secrets before
// it reaches an error.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// Bounds on what the daemon may send and how long it may take: the
// defaults of Options' fields.
const (
	// DefaultCallTimeout bounds one JSON call, from the dial to the last
	// byte of the answer: a status is a few KiB.
	DefaultCallTimeout = 30 * time.Second
	// DefaultFileTimeout bounds one file's download as a whole, and
	// DefaultIdleTimeout the wait for its next bytes: a run's samples.jsonl
	// may be gigabytes, so the whole is generous and the gaps are short.
	DefaultFileTimeout = 30 * time.Minute
	DefaultIdleTimeout = 30 * time.Second
	// DefaultMaxJSONBytes bounds a JSON answer: a status carries the spec
	// (at most the daemon's 1 MiB body) and a search's trials.
	DefaultMaxJSONBytes = 16 << 20
	// DefaultMaxFileBytes bounds one file: a samples.jsonl of the daemon's
	// largest trace (10^8 samples) at about 150 bytes a line is 15 GB.
	DefaultMaxFileBytes = 64 << 30
	// maxErrorBytes bounds an error answer's body: an ErrorBody is a line.
	maxErrorBytes = 64 << 10
	// maxHeaderBytes bounds an answer's header block.
	maxHeaderBytes = 64 << 10
	// dialTimeout bounds a connection's setup (TCP, then TLS).
	dialTimeout = 10 * time.Second
)

// Errors a call may wrap (errors.Is), besides *APIError for an answer
// 4xx or 5xx.
var (
	// ErrUnreachable: no answer came (connection refused, reset, a
	// timeout before the header).
	ErrUnreachable = errors.New("loadgend unreachable")
	// ErrProtocol: an answer came that is not the API's (a redirect, a
	// body too large, truncated or malformed, too slow).
	ErrProtocol = errors.New("not a loadgend answer")
)

// APIError is an answer 4xx or 5xx: the daemon's ErrorBody, scrubbed.
type APIError struct {
	Status int
	// Code, Message and Field are the ErrorBody's; Code is "" when the body
	// was not one (a proxy's page), and Message then the status's text.
	Code, Message, Field string
	// RetryAfter is the Retry-After header's delay (503, 429), 0 if none.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("loadgend answered %d: %s", e.Status, e.Message)
	}
	return fmt.Sprintf("loadgend answered %d %s: %s", e.Status, e.Code, e.Message)
}

// Options configure a Client; zero fields take the defaults above.
type Options struct {
	// Token is sent as "Authorization: Bearer Token" to the base URL's
	// host and no other; "" sends none.
	Token string
	// Secrets are further values scrubbed from what the daemon writes
	// back (the run's literal header values).
	Secrets                               []string
	CallTimeout, FileTimeout, IdleTimeout time.Duration
	MaxJSONBytes, MaxFileBytes            int64
}

// Client talks to one daemon.
type Client struct {
	base  string // scheme://host[:port][/prefix], no trailing slash
	token string
	hc    *http.Client
	scrub *secret.Scrubber
	o     Options
}

// New is a client of the daemon at base: http[s]://host[:port][/prefix],
// without credentials, query or fragment.
func New(base string, o Options) (*Client, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("%q is not a URL: %w", base, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%q: want http://host:port or https://host:port", base)
	case u.Host == "":
		return nil, fmt.Errorf("%q has no host", base)
	case u.User != nil:
		// Never quoted: the credentials would be printed.
		return nil, errors.New("the URL holds credentials: give the token in LOADGEND_API_TOKEN instead")
	case u.RawQuery != "" || u.Fragment != "" || u.Opaque != "":
		return nil, fmt.Errorf("%q: want no query or fragment", base)
	}
	o = withDefaults(o)
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            (&net.Dialer{Timeout: dialTimeout}).DialContext,
		TLSHandshakeTimeout:    dialTimeout,
		ResponseHeaderTimeout:  o.CallTimeout,
		MaxResponseHeaderBytes: maxHeaderBytes,
		ForceAttemptHTTP2:      true,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
	}
	hc := &http.Client{
		Transport: tr,
		// A redirect is answered as itself: following one could carry the
		// token to another host, or the run to another daemon.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return &Client{base: strings.TrimSuffix(u.String(), "/"), token: o.Token, hc: hc,
		scrub: secret.NewScrubber(append([]string{o.Token}, o.Secrets...)...), o: o}, nil
}

func withDefaults(o Options) Options {
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.FileTimeout <= 0 {
		o.FileTimeout = DefaultFileTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxJSONBytes <= 0 {
		o.MaxJSONBytes = DefaultMaxJSONBytes
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	return o
}

// Base is the daemon's URL as the client uses it.
func (c *Client) Base() string { return c.base }

// Close drops the client's idle connections.
func (c *Client) Close() { c.hc.CloseIdleConnections() }

// Submit posts a run spec: the daemon's 202 answer.
func (c *Client) Submit(ctx context.Context, spec api.RunSpec) (api.RunCreated, error) {
	body, err := json.Marshal(spec)
	if err != nil {
		return api.RunCreated{}, fmt.Errorf("encoding the spec: %w", err)
	}
	var created api.RunCreated
	if err := c.callJSON(ctx, http.MethodPost, "/v1/runs", body, &created); err != nil {
		return created, err
	}
	if err := checkID(created.ID); err != nil {
		return created, err
	}
	return created, nil
}

// Status is GET /v1/runs/{id}.
func (c *Client) Status(ctx context.Context, id string) (api.RunStatus, error) {
	var st api.RunStatus
	if err := checkID(id); err != nil {
		return st, err
	}
	err := c.callJSON(ctx, http.MethodGet, "/v1/runs/"+id, nil, &st)
	return st, err
}

// Cancel is POST /v1/runs/{id}/cancel. A run already ended is an
// *APIError with Code api.CodeAlreadyFinished.
func (c *Client) Cancel(ctx context.Context, id string) error {
	if err := checkID(id); err != nil {
		return err
	}
	return c.callJSON(ctx, http.MethodPost, "/v1/runs/"+id+"/cancel", nil, nil)
}

// File copies file name of run id (GET /v1/runs/{id}/files/{name}) to w;
// name must be one of api.RunFiles, so that a name the daemon lists cannot
// lead a caller that writes it by name outside its directory.
func (c *Client) File(ctx context.Context, id, name string, w io.Writer) (int64, error) {
	if err := checkID(id); err != nil {
		return 0, err
	}
	if _, ok := api.FileMediaType(name); !ok {
		return 0, fmt.Errorf("%w: %q is not a run file's name (want one of %s)", ErrProtocol, name, strings.Join(api.RunFiles(), ", "))
	}
	return c.download(ctx, "/v1/runs/"+id+"/files/"+name, w)
}

// Samples copies run id's per-sample export (GET
// /v1/runs/{id}/samples.jsonl) to w.
func (c *Client) Samples(ctx context.Context, id string, w io.Writer) (int64, error) {
	if err := checkID(id); err != nil {
		return 0, err
	}
	return c.download(ctx, "/v1/runs/"+id+"/samples.jsonl", w)
}

// checkID refuses a run id that is not the daemon's kind: it goes into
// URL paths, and the daemon that sent it may be hostile.
func checkID(id string) error {
	ok := id != "" && len(id) <= 128 && id != "." && id != ".."
	for _, r := range id {
		ok = ok && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}
	if !ok {
		return fmt.Errorf("%w: %q is not a run id", ErrProtocol, Printable(id))
	}
	return nil
}

// callJSON makes one call bounded by CallTimeout; a 2xx answer's body is
// decoded into out (nil: read and dropped).
func (c *Client) callJSON(ctx context.Context, method, path string, body []byte, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	resp, err := c.send(ctx, method, path, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.o.MaxJSONBytes+1))
	if err != nil {
		return c.protocolErr(method, path, "the answer's body broke off: %v", err)
	}
	if int64(len(b)) > c.o.MaxJSONBytes {
		return c.protocolErr(method, path, "the answer is over %d bytes", c.o.MaxJSONBytes)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return c.protocolErr(method, path, "the answer is not the API's JSON (%v): %q", err, Printable(string(b)))
	}
	return nil
}

// send makes the request and returns a 2xx answer; a 3xx or 1xx is an
// ErrProtocol, a 4xx or 5xx an *APIError, no answer ErrUnreachable.
func (c *Client) send(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// The url.Error names the URL (no credentials: New refused them).
		return nil, fmt.Errorf("%w: %s %s: %v", ErrUnreachable, method, c.base+path, c.scrub.Error(unwrapURL(err)))
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return resp, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		resp.Body.Close()
		return nil, c.protocolErr(method, path, "it answered %d, a redirect to %q: the token is sent only to the URL given; give the URL the daemon is served at",
			resp.StatusCode, Printable(resp.Header.Get("Location")))
	case resp.StatusCode < 200:
		resp.Body.Close()
		return nil, c.protocolErr(method, path, "it answered %d, not an answer to this request", resp.StatusCode)
	}
	defer resp.Body.Close()
	return nil, c.apiError(resp)
}

// apiError reads an error answer's ErrorBody, bounded.
func (c *Client) apiError(resp *http.Response) error {
	e := &APIError{Status: resp.StatusCode, Message: http.StatusText(resp.StatusCode)}
	if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 && s < 3600 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBytes))
	var eb api.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error.Message != "" {
		e.Code, e.Message, e.Field = Printable(eb.Error.Code), c.scrub.String(Printable(eb.Error.Message)), Printable(eb.Error.Field)
	} else if text := strings.TrimSpace(string(b)); text != "" {
		e.Message += ": " + c.scrub.String(Printable(text))
	}
	return e
}

func (c *Client) protocolErr(method, path, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s: %s", ErrProtocol, method, c.base+path, c.scrub.String(fmt.Sprintf(format, args...)))
}

// download copies a 2xx answer's body to w, bounded by FileTimeout as a
// whole, by IdleTimeout between reads and by MaxFileBytes.
func (c *Client) download(ctx context.Context, path string, w io.Writer) (int64, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, c.o.FileTimeout, fmt.Errorf("the download took over %v", c.o.FileTimeout))
	defer cancel()
	ctx, stall := context.WithCancelCause(ctx)
	defer stall(nil)
	resp, err := c.send(ctx, http.MethodGet, path, nil)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.o.MaxFileBytes {
		return 0, c.protocolErr(http.MethodGet, path, "the file is %d bytes, over the bound of %d", resp.ContentLength, c.o.MaxFileBytes)
	}
	idle := time.AfterFunc(c.o.IdleTimeout, func() {
		stall(fmt.Errorf("no bytes came for %v", c.o.IdleTimeout))
	})
	defer idle.Stop()
	r := &idleReader{r: io.LimitReader(resp.Body, c.o.MaxFileBytes+1), t: idle, d: c.o.IdleTimeout}
	n, err := io.Copy(w, r)
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			err = cause
		}
		return n, c.protocolErr(http.MethodGet, path, "the file broke off after %d bytes: %v", n, err)
	}
	if n > c.o.MaxFileBytes {
		return n, c.protocolErr(http.MethodGet, path, "the file is over the bound of %d bytes", c.o.MaxFileBytes)
	}
	if resp.ContentLength >= 0 && n != resp.ContentLength {
		return n, c.protocolErr(http.MethodGet, path, "the file is %d bytes of the %d announced", n, resp.ContentLength)
	}
	return n, nil
}

// idleReader pushes its timer back at each read that brings bytes.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.t.Reset(i.d)
	}
	return n, err
}

// unwrapURL is the cause of a *url.Error, whose text repeats the URL.
func unwrapURL(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// Printable keeps what a daemon wrote short and printable for an error or
// a log line: at most 512 bytes, control characters blanked.
func Printable(s string) string {
	const max = 512
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}
