package httpclient

// The KServe v2 REST client, on fasthttp's HTTP/1.1 codec with our own
// keep-alive pool (so a request that finds its pooled connection closed by
// the server before it is written goes on a fresh connection, once, and is
// counted; one that was written is never sent twice).

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/netloadgen/netloadgen/kserve"
	"github.com/netloadgen/netloadgen/triton"
)

// Option configures a Client.
type Option func(*config)

type config struct {
	maxConns       int
	requestTimeout time.Duration
	dialTimeout    time.Duration
	idleTimeout    time.Duration
	binary         bool
	maxBody        int
	maxTotal       int64
	headers        []kserve.Header
	tls            *tls.Config
}

// MaxConns caps the open connections (default 64); callers beyond it wait.
func MaxConns(n int) Option { return func(c *config) { c.maxConns = n } }

// RequestTimeout bounds each call on top of its context (default: none).
func RequestTimeout(d time.Duration) Option {
	return func(c *config) { c.requestTimeout = d }
}

// DialTimeout bounds connecting (default 5 s).
func DialTimeout(d time.Duration) Option { return func(c *config) { c.dialTimeout = d } }

// IdleTimeout closes pooled connections idle longer than d instead of
// reusing them (default: none). Set it below a server's own idle limit
// (uvicorn: 5 s) to avoid the retry that a stale connection costs.
func IdleTimeout(d time.Duration) Option { return func(c *config) { c.idleTimeout = d } }

// Binary chooses binary tensor data (default true) or pure JSON for
// Infer and PrepareInfer.
func Binary(on bool) Option { return func(c *config) { c.binary = on } }

// Headers adds hs to every request, probes and inferences alike; one
// named Host (any case) replaces the Host header (the base URL's host) as
// an ingress that routes by it needs. The caller checks the names and
// values (kserve.CheckHeaderName, CheckHeaderValue).
func Headers(hs []kserve.Header) Option {
	return func(c *config) { c.headers = append(c.headers[:len(c.headers):len(c.headers)], hs...) }
}

// TLS is the configuration of an https:// base URL's connections (nil:
// the system's roots, the URL's host as the server name). Its ServerName,
// when empty, is the URL's host.
func TLS(cfg *tls.Config) Option { return func(c *config) { c.tls = cfg } }

// MaxResponseBytes caps a response body (0 or less: the default,
// DefaultMaxResponseBytes). An answer past it fails with an error matching
// kserve.ErrTooLarge as soon as its header announces it or its bytes pass
// it, and its connection is closed, not read to the end.
func MaxResponseBytes(n int) Option { return func(c *config) { c.maxBody = n } }

// MaxResponseBytesTotal caps the bytes the bodies of every answer being
// read or checked hold at once, over all the connections (0 or less:
// DefaultResponseBudget of the per-answer cap). An answer whose buffer
// would pass it fails as too large.
func MaxResponseBytesTotal(n int64) Option { return func(c *config) { c.maxTotal = n } }

// Client speaks KServe v2 REST to one server. It is safe for concurrent use.
type Client struct {
	cfg     config
	host    string // Host header
	origin  string // scheme://host[:port] of the base URL, to resolve a redirect's Location
	extra   []byte // the Headers' lines, "Name: value\r\n" each
	prefix  string // path prefix of the base URL, without a trailing slash
	pool    *connPool
	resps   sync.Pool // *answer
	budget  *Budget   // what the answers being read hold at once
	retries atomic.Uint64
}

// New returns a client for baseURL, http[s]://host[:port][/prefix] (port 80
// or 443 when left out).
func New(baseURL string, opts ...Option) (*Client, error) {
	cfg := config{maxConns: 64, dialTimeout: 5 * time.Second, binary: true}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.maxBody <= 0 {
		cfg.maxBody = DefaultMaxResponseBytes
	}
	if cfg.maxTotal <= 0 {
		cfg.maxTotal = DefaultResponseBudget(cfg.maxBody)
	}
	if cfg.maxConns <= 0 {
		return nil, fmt.Errorf("kserve: max connections %d: must be positive", cfg.maxConns)
	}
	u, err := url.Parse(baseURL)
	switch {
	case err != nil:
		return nil, fmt.Errorf("kserve: base URL %q: %w", baseURL, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("kserve: base URL %q: scheme must be http or https, not %q", baseURL, u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return nil, fmt.Errorf("kserve: base URL %q has no host", baseURL)
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return nil, fmt.Errorf("kserve: base URL %q: no query, fragment or user info allowed", baseURL)
	}
	addr := u.Host
	var tlsCfg *tls.Config
	if u.Scheme == "https" {
		tlsCfg = &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.tls != nil {
			tlsCfg = cfg.tls.Clone()
		}
		if tlsCfg.ServerName == "" {
			tlsCfg.ServerName = u.Hostname()
		}
		// No resumption offered, so no session tickets: a TLS 1.3 server
		// sends them unasked, and an idle pooled connection holding them
		// would look written to (the idle probe) and be given up.
		tlsCfg.ClientSessionCache = nil
		tlsCfg.NextProtos = []string{"http/1.1"}
	}
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[bool]string{false: "80", true: "443"}[tlsCfg != nil])
	} else if p, err := strconv.Atoi(u.Port()); err != nil || p <= 0 || p > 65535 {
		return nil, fmt.Errorf("kserve: base URL %q: bad port %q", baseURL, u.Port())
	}
	c := &Client{
		cfg:    cfg,
		host:   u.Host,
		origin: u.Scheme + "://" + u.Host,
		prefix: strings.TrimSuffix(u.EscapedPath(), "/"),
		pool:   newConnPool(addr, cfg.maxConns, cfg.dialTimeout, cfg.idleTimeout, tlsCfg),
	}
	for _, h := range cfg.headers {
		if strings.EqualFold(h.Name, kserve.HeaderHost) {
			c.host = h.Value
			continue
		}
		c.extra = append(append(append(append(c.extra, h.Name...), ": "...), h.Value...), "\r\n"...)
	}
	c.resps.New = func() any { return new(answer) }
	c.budget = NewBudget(cfg.maxTotal)
	return c, nil
}

// ResponseBudget is the bound on what the client's answers hold at once,
// and its accounting (MaxResponseBytesTotal).
func (c *Client) ResponseBudget() *Budget { return c.budget }

// MaxResponseBytes is the bound on one answer's body (MaxResponseBytes).
func (c *Client) MaxResponseBytes() int { return c.cfg.maxBody }

// TLSConfig is the configuration of the client's TLS connections (nil
// for an http:// base URL): the given one, with the URL's host as its
// ServerName when it had none. Callers must not change it.
func (c *Client) TLSConfig() *tls.Config { return c.pool.tls }

// Retries is how many requests were sent on a fresh connection because
// their pooled connection was found closed (or reset) by the server before
// they were written: none of them had reached it.
func (c *Client) Retries() uint64 { return c.retries.Load() }

// Preconnect opens up to n more connections (within the cap) ahead of a run,
// so a burst does not meet a small listen backlog (PROTOCOL.md §4).
func (c *Client) Preconnect(ctx context.Context, n int) error {
	conns := make([]*httpConn, 0, n)
	defer func() {
		for _, conn := range conns {
			c.pool.put(conn)
		}
	}()
	for range min(n, c.cfg.maxConns-len(c.pool.slots)) {
		conn, err := c.pool.get(ctx, true)
		if err != nil {
			return fmt.Errorf("%w: preconnect: %w", kserve.ErrTransport, err)
		}
		conns = append(conns, conn)
	}
	return nil
}

// Close closes the idle connections; connections in use close when released.
func (c *Client) Close() error {
	c.pool.closeIdle()
	return nil
}

// ServerLive asks GET /v2/health/live; see health for the status rule.
func (c *Client) ServerLive(ctx context.Context) (bool, error) {
	return c.health(ctx, "/v2/health/live")
}

// ServerReady asks GET /v2/health/ready.
func (c *Client) ServerReady(ctx context.Context) (bool, error) {
	return c.health(ctx, "/v2/health/ready")
}

// ModelReady asks GET /v2/models/{model}[/versions/{version}]/ready; an
// unknown model is an error matching kserve.ErrNotFound.
func (c *Client) ModelReady(ctx context.Context, model, version string) (bool, error) {
	return c.health(ctx, c.modelPath(model, version)+"/ready")
}

// health decides by status code (PROTOCOL.md §1): 2xx is true; 400 (Triton)
// and 503 (KServe Python server) are false; anything else is an error.
func (c *Client) health(ctx context.Context, path string) (bool, error) {
	resp := c.acquireResponse()
	defer c.release(resp)
	if err := c.roundTrip(ctx, c.getRequest(path), resp); err != nil {
		return false, err
	}
	switch st := resp.StatusCode(); {
	case st >= 200 && st < 300:
		return true, nil
	case st == fasthttp.StatusBadRequest || st == fasthttp.StatusServiceUnavailable:
		return false, nil
	}
	return false, c.statusError(resp, c.prefix+path)
}

// ServerMetadata asks GET /v2.
func (c *Client) ServerMetadata(ctx context.Context) (kserve.ServerMetadata, error) {
	var m kserve.ServerMetadata
	err := c.getJSON(ctx, "/v2", &m)
	return m, err
}

// ModelMetadata asks GET /v2/models/{model}[/versions/{version}].
func (c *Client) ModelMetadata(ctx context.Context, model, version string) (kserve.ModelMetadata, error) {
	var m kserve.ModelMetadata
	err := c.getJSON(ctx, c.modelPath(model, version), &m)
	return m, err
}

// ModelConfig asks Triton's GET /v2/models/{model}[/versions/{version}]/config.
func (c *Client) ModelConfig(ctx context.Context, model, version string) (triton.ModelConfig, error) {
	var m triton.ModelConfig
	err := c.getJSON(ctx, c.modelPath(model, version)+"/config", &m)
	return m, err
}

// ModelStatistics asks Triton's GET /v2/models/{model}[/versions/{version}]/stats,
// or GET /v2/models/stats for every model when model is "".
func (c *Client) ModelStatistics(ctx context.Context, model, version string) (triton.StatisticsResponse, error) {
	path := "/v2/models/stats"
	if model != "" {
		path = c.modelPath(model, version) + "/stats"
	}
	var s triton.StatisticsResponse
	err := c.getJSON(ctx, path, &s)
	return s, err
}

// Infer sends one request (binary tensor data unless Binary(false)) and
// decodes the response.
func (c *Client) Infer(ctx context.Context, req *kserve.InferRequest) (*kserve.InferResponse, error) {
	p, err := c.PrepareInfer(req)
	if err != nil {
		return nil, err
	}
	return c.InferPrepared(ctx, p)
}

// RepositoryIndex asks Triton's POST /v2/repository/index for the models the
// server has (servers that list the model_repository extension).
func (c *Client) RepositoryIndex(ctx context.Context) ([]triton.RepositoryModel, error) {
	const path = "/v2/repository/index"
	resp := c.acquireResponse()
	defer c.release(resp)
	req := c.appendRequest(nil, "POST", c.prefix+path, "application/json", -1, []byte("{}"))
	if err := c.roundTrip(ctx, req, resp); err != nil {
		return nil, err
	}
	if st := resp.StatusCode(); st < 200 || st >= 300 {
		return nil, c.statusError(resp, c.prefix+path)
	}
	var models []triton.RepositoryModel
	if err := json.Unmarshal(resp.Body(), &models); err != nil {
		return nil, kserve.Malformedf("POST %s: %v", path, err)
	}
	return models, nil
}

func (c *Client) getJSON(ctx context.Context, path string, v any) error {
	resp := c.acquireResponse()
	defer c.release(resp)
	if err := c.roundTrip(ctx, c.getRequest(path), resp); err != nil {
		return err
	}
	if st := resp.StatusCode(); st < 200 || st >= 300 {
		return c.statusError(resp, c.prefix+path)
	}
	if err := json.Unmarshal(resp.Body(), v); err != nil {
		return kserve.Malformedf("GET %s: %v", path, err)
	}
	return nil
}

// modelPath is a model's path under /v2, without the base URL's prefix
// (getRequest adds it; the prepared infer request adds it itself).
func (c *Client) modelPath(model, version string) string {
	p := "/v2/models/" + url.PathEscape(model)
	if version != "" {
		p += "/versions/" + url.PathEscape(version)
	}
	return p
}

func (c *Client) getRequest(path string) []byte {
	return c.appendRequest(nil, "GET", c.prefix+path, "", -1, nil)
}

func (c *Client) acquireResponse() *answer {
	resp := c.resps.Get().(*answer)
	resp.Reset()
	return resp
}

// appendRequest writes an HTTP/1.1 request with the client's Host and
// added headers. contentType "" sends none (Triton's client sends none on
// binary requests; the KServe Python server treats any non-JSON type as
// binary); jsonLen >= 0 adds Inference-Header-Content-Length.
func (c *Client) appendRequest(dst []byte, method, path, contentType string, jsonLen int, body []byte) []byte {
	return c.appendRequestWith(dst, method, path, contentType, jsonLen, "", nil, body)
}

// appendRequestWith is appendRequest with one more header, name: value,
// when name is not "".
func (c *Client) appendRequestWith(dst []byte, method, path, contentType string, jsonLen int, name string, value, body []byte) []byte {
	dst = append(dst, method...)
	dst = append(dst, ' ')
	dst = append(dst, path...)
	dst = append(dst, " HTTP/1.1\r\nHost: "...)
	dst = append(dst, c.host...)
	dst = append(dst, "\r\nUser-Agent: netloadgen\r\n"...)
	dst = append(dst, c.extra...)
	if name != "" {
		dst = append(dst, name...)
		dst = append(dst, ": "...)
		dst = append(dst, value...)
		dst = append(dst, "\r\n"...)
	}
	if method != "GET" {
		dst = append(dst, "Content-Length: "...)
		dst = strconv.AppendInt(dst, int64(len(body)), 10)
		dst = append(dst, "\r\n"...)
	}
	if contentType != "" {
		dst = append(dst, "Content-Type: "...)
		dst = append(dst, contentType...)
		dst = append(dst, "\r\n"...)
	}
	if jsonLen >= 0 {
		dst = append(dst, kserve.HeaderInferenceContentLength...)
		dst = append(dst, ": "...)
		dst = strconv.AppendInt(dst, int64(jsonLen), 10)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, body...)
}

// aLongTimeAgo interrupts blocked I/O when a context ends.
var aLongTimeAgo = time.Unix(1, 0)

// roundTrip sends raw and reads the answer into resp. A request is sent
// again, once, on a fresh connection, only when it provably never reached
// the server: its pooled connection was found closed before the write (the
// server closed it while idle: uvicorn does after 5 s), or the write failed
// before any byte left. A request that was written may have been read, and
// run: if the server closes or resets the connection before answering, it
// fails (kserve.ErrConnectionClosed).
func (c *Client) roundTrip(ctx context.Context, raw []byte, resp *answer) error {
	return c.roundTripAt(ctx, raw, resp, nil)
}

// roundTripAt is roundTrip that also sets *at, when not nil, to when the
// response arrived in the kernel (left alone when the connection has no
// receive timestamps).
func (c *Client) roundTripAt(ctx context.Context, raw []byte, resp *answer, at *time.Time) error {
	return c.roundTripWith(ctx, raw, resp, nil, at)
}

// roundTripWith is roundTripAt whose answer is read into resp, or by sr
// when resp is nil (a streamed answer: Stream).
func (c *Client) roundTripWith(ctx context.Context, raw []byte, resp *answer, sr StreamReader, at *time.Time) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", kserve.ErrTransport, err)
	}
	conn, err := c.pool.get(ctx, false)
	if err != nil {
		return c.transportError(ctx, err)
	}
	resent := false
	if conn.reused && (conn.br.Buffered() > 0 || conn.probe.closed()) {
		// Closed (or written to, unasked) while idle: nothing was sent.
		resent = true
		if conn, err = c.resend(ctx, conn); err != nil {
			return err
		}
	}
	wrote, err := c.exchange(ctx, conn, raw, resp, sr)
	if err != nil && !wrote && !resent && ctx.Err() == nil && !isTimeout(err) {
		// The write failed before any byte left: the server had reset
		// the connection and never saw the request.
		if conn, err = c.resend(ctx, conn); err != nil {
			return err
		}
		wrote, err = c.exchange(ctx, conn, raw, resp, sr)
	}
	if err != nil {
		c.pool.discard(conn)
		if protocolError(err) {
			return err // the answer was read, and was wrong: not the transport's
		}
		if wrote && closedBy(err) && ctx.Err() == nil {
			return fmt.Errorf("%w: %w: %w", kserve.ErrTransport, kserve.ErrConnectionClosed, err)
		}
		return c.transportError(ctx, err)
	}
	if at != nil && conn.rx != nil {
		if t, ok := conn.rx.Arrival(time.Now()); ok {
			*at = t
		}
	}
	// After a 101 the connection no longer speaks HTTP (a switch nobody
	// asked for): its bytes are not the next answer's.
	if (resp != nil && (resp.ConnectionClose() || resp.StatusCode() == fasthttp.StatusSwitchingProtocols)) || (sr != nil && !conn.keep) {
		c.pool.discard(conn)
	} else {
		c.pool.put(conn)
	}
	return nil
}

// resend gives up conn, which never carried the request, for a fresh
// connection, and counts the resend.
func (c *Client) resend(ctx context.Context, conn *httpConn) (*httpConn, error) {
	c.pool.discard(conn)
	c.retries.Add(1)
	fresh, err := c.pool.get(ctx, true)
	if err != nil {
		return nil, c.transportError(ctx, err)
	}
	return fresh, nil
}

// exchange writes raw on conn and reads the answer into resp, or with sr
// when resp is nil; wrote is whether any byte of raw left.
func (c *Client) exchange(ctx context.Context, conn *httpConn, raw []byte, resp *answer, sr StreamReader) (wrote bool, err error) {
	deadline, _ := ctx.Deadline()
	if c.cfg.requestTimeout > 0 {
		if t := time.Now().Add(c.cfg.requestTimeout); deadline.IsZero() || t.Before(deadline) {
			deadline = t
		}
	}
	if err := conn.nc.SetDeadline(deadline); err != nil {
		return false, err
	}
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { conn.nc.SetDeadline(aLongTimeAgo) })
		defer stop()
	}
	if conn.rx != nil {
		conn.rx.Reset()
	}
	if n, err := conn.nc.Write(raw); err != nil {
		return n > 0, err
	}
	if sr != nil {
		conn.keep = false
		keep, err := sr.ReadStream((*Answer)(conn))
		conn.keep = keep && err == nil
		return true, err
	}
	return true, c.readAnswer(conn, resp)
}

// closedBy reports whether err is the server's close or reset of the
// connection: the end of the stream, at an answer's start or within it,
// a reset, or a write to a closed connection.
func closedBy(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNABORTED)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, fasthttp.ErrTimeout) || errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// transportError wraps a failure below the protocol, naming the context's
// error when the context ended (a deadline shows as a timeout on the socket).
func (c *Client) transportError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %w", kserve.ErrTransport, cerr)
	}
	if d, ok := ctx.Deadline(); ok && isTimeout(err) && !time.Now().Before(d) {
		return fmt.Errorf("%w: %w", kserve.ErrTransport, context.DeadlineExceeded)
	}
	if isTimeout(err) && c.cfg.requestTimeout > 0 {
		return fmt.Errorf("%w: request timeout %v: %w", kserve.ErrTransport, c.cfg.requestTimeout, os.ErrDeadlineExceeded)
	}
	return fmt.Errorf("%w: %w", kserve.ErrTransport, err)
}

// statusError builds the *kserve.Error for a non-2xx answer to the request
// for path (the base URL's prefix included): the message from {"error":
// "..."} when the body is that, else the raw body. A 3xx answer is an
// answer like any other: this client follows no redirect (a redirect to
// another host would carry the run's headers, credentials included, where
// the user did not send them), but it keeps the Location, resolved against
// the request's URL, so that the probe can say where the target points.
func (c *Client) statusError(resp *answer, path string) error {
	st := resp.StatusCode()
	err := StatusError(st, resp.Body())
	if st >= 300 && st < 400 {
		if ke, ok := err.(*kserve.Error); ok {
			ke.Location = ResolveLocation(c.origin+path, string(resp.Header.Peek("Location")))
			// The message travels where the status does not (a failed
			// sample's example, sutproxy's front, which answers its own
			// client with the upstream's error): it says what happened.
			ke.Message = fmt.Sprintf("%s: redirects to %s, which no client of netloadgen follows", ke.Message, ke.Location)
		}
	}
	return err
}

// ResolveLocation is a redirect's Location resolved against the URL of
// the request it answered, as a URL's Redacted spells it (no control
// characters, a password in it replaced: the text is shown and kept); the
// Location as sent, quoted and clipped, when either does not parse.
func ResolveLocation(requestURL, loc string) string {
	base, err := url.Parse(requestURL)
	if err == nil {
		var u *url.URL
		if u, err = base.Parse(loc); err == nil {
			return u.Redacted()
		}
	}
	return strconv.Quote(loc[:min(len(loc), 512)])
}

// StatusError builds the *kserve.Error for a non-2xx answer of status st
// and body: the message from {"error": "..."} (or OpenAI's {"error":
// {"message": "..."}}) when the body is that, else the raw body.
func StatusError(st int, body []byte) error {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	var obj struct {
		Message string `json:"message"`
	}
	msg := ""
	switch {
	case json.Unmarshal(body, &e) == nil && len(e.Error) > 0 && json.Unmarshal(e.Error, &msg) == nil:
	case len(e.Error) > 0 && json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
		msg = obj.Message
	default:
		const max = 512
		msg = strings.TrimSpace(string(body[:min(len(body), max)]))
		if msg == "" {
			msg = fasthttp.StatusMessage(st)
		}
	}
	return &kserve.Error{Code: kserve.CodeFromHTTP(st), HTTPStatus: st, Message: msg}
}
