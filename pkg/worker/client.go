package worker

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
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/apiclient"
	"github.com/netloadgen/netloadgen/pkg/secret"
)

// maxAnswer bounds what the worker reads of any answer: an assignment
// carries a run spec (at most api.DefaultLimits' 1 MiB body) and little
// else.
const maxAnswer = 2 << 20

// requestTimeout bounds each request but the long poll, which gets its wait
// on top.
const requestTimeout = 5 * time.Second

// statusError is an answer of the coordinator other than 2xx.
type statusError struct {
	status int
	code   string
	msg    string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("the coordinator answered %d %s: %s", e.status, e.code, e.msg)
}

func isStatus(err error, status int) bool {
	var se *statusError
	return errors.As(err, &se) && se.status == status
}

// client speaks the worker routes of a coordinator's control API.
type client struct {
	base  *url.URL
	token string
	http  *http.Client
	// scrub takes the token out of what the coordinator sends back, which
	// goes into errors and logs: a proxy may repeat a request's
	// Authorization in its error page.
	scrub *secret.Scrubber
}

// newHTTPClient follows no redirect (the token must go only where the user
// pointed it) and bounds the dial, the TLS handshake and the headers; each
// request's context bounds the rest.
func newHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: requestTimeout, KeepAlive: 30 * time.Second}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  http.ProxyFromEnvironment,
			DialContext:            d.DialContext,
			TLSHandshakeTimeout:    requestTimeout,
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        time.Minute,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// do sends in (nil: no body) and decodes a 2xx answer into out (nil: the
// answer is not read). It returns the status, 0 when no answer came.
func (c *client) do(ctx context.Context, method, path, session string, in, out any, timeout time.Duration) (int, error) {
	status, err := c.send(ctx, method, path, session, in, out, timeout)
	return status, c.scrub.Error(err)
}

func (c *client) send(ctx context.Context, method, path, session string, in, out any, timeout time.Duration) (int, error) {
	if in == nil {
		return c.sendBytes(ctx, method, path, session, "", nil, out, timeout)
	}
	b, err := json.Marshal(in)
	if err != nil {
		return 0, err
	}
	return c.sendBytes(ctx, method, path, session, "application/json", b, out, timeout)
}

// sendBytes sends in (nil: no body) of type ctype and decodes a 2xx answer
// into out, as do does.
func (c *client) sendBytes(ctx context.Context, method, path, session, ctype string, in []byte, out any, timeout time.Duration) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		body = bytes.NewReader(in)
	}
	p, query, _ := strings.Cut(path, "?")
	u := c.base.JoinPath(p)
	u.RawQuery = query
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return 0, err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if session != "" {
		req.Header.Set(api.WorkerSessionHeader, session)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, u.Path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	switch {
	case err != nil:
		return resp.StatusCode, fmt.Errorf("%s %s: reading the answer: %w", method, u.Path, err)
	case len(b) > maxAnswer:
		return resp.StatusCode, fmt.Errorf("%s %s: the answer is over %d bytes", method, u.Path, maxAnswer)
	}
	return resp.StatusCode, decodeAnswer(method, u.Path, resp, b, out)
}

// decodeAnswer turns a read answer into out or an error.
func decodeAnswer(method, path string, resp *http.Response, b []byte, out any) error {
	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		return fmt.Errorf("%s %s: the coordinator redirects (%d to %q): give --coordinator the URL it serves at", method, path, resp.StatusCode, apiclient.Printable(resp.Header.Get("Location")))
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		var eb api.ErrorBody
		if json.Unmarshal(b, &eb) != nil || eb.Error.Message == "" {
			eb.Error.Message = fmt.Sprintf("%q", truncate(b, 200))
		}
		// What the coordinator wrote goes into errors and logs: short
		// and printable, as the CLI's client keeps it.
		return &statusError{status: resp.StatusCode, code: apiclient.Printable(eb.Error.Code), msg: apiclient.Printable(eb.Error.Message)}
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return fmt.Errorf("%s %s: the coordinator answered %d with an empty body", method, path, resp.StatusCode)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
	}
	return nil
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
