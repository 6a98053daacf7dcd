package scrape

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// The error kinds counted in server_metrics.errors.
const (
	KindConnect       = "connect"         // no connection: refused, no route, a TLS handshake failed
	KindReset         = "reset"           // the connection was reset or closed before the whole answer
	KindTimeout       = "timeout"         // the scrape took longer than the interval: abandoned
	KindSkipped       = "skipped"         // a scrape was due while the last one to the endpoint still ran
	KindStatus        = "status"          // an answer other than 2xx (404 included)
	KindRedirect      = "redirect"        // a 3xx: redirects are not followed
	KindTooLarge      = "too_large"       // a body over the byte bound: dropped whole
	KindMalformed     = "malformed"       // a body the exposition-format parser refused: dropped whole
	KindTooManySeries = "too_many_series" // a scrape brought new series past the series bound: those were dropped
	KindNonFinite     = "non_finite"      // NaN or ±Inf values, left out (JSON cannot carry them)
	KindBackoff       = "backoff"         // a scrape not attempted: the endpoint failed its last ones (backoff)
	KindFileFull      = "file_full"       // a line not written: server_metrics.jsonl reached MaxFileBytes
)

// ErrScrape marks a failed scrape; its kind is one of the Kind
// constants (Kind).
var ErrScrape = errors.New("scrape failed")

// scrapeError is a failed scrape of a kind.
type scrapeError struct {
	kind string
	err  error
}

func (e *scrapeError) Error() string { return e.kind + ": " + e.err.Error() }
func (e *scrapeError) Unwrap() []error {
	return []error{ErrScrape, e.err}
}

// Kind is the kind of a failed scrape's error ("" when err is not one).
func Kind(err error) string {
	var se *scrapeError
	if errors.As(err, &se) {
		return se.kind
	}
	return ""
}

func failed(kind string, err error) error { return &scrapeError{kind: kind, err: err} }

// endpoint is one URL scraped.
type endpoint struct {
	u      *url.URL // with any credentials: sent, never shown
	shown  string
	client *http.Client
	// headers are the run's (only for a URL on the target's host).
	headers []Header
	// fails counts the endpoint's failed scrapes in a row, and wait the
	// ticks it sits out before the next (Scraper.mu held).
	fails, wait int
	// buf is the last body read whole, kept for the next scrape to read
	// into (readAll): at most --server-metrics-max-bytes, and a body past
	// it is not kept. Only the endpoint's one scrape at a time uses it.
	buf []byte
}

// maxBackoff is the most ticks an endpoint that keeps failing sits out.
const maxBackoff = 15

// noteOutcome notes one scrape's outcome: after n failures in a row the
// endpoint sits out 2^n − 1 ticks, at most maxBackoff (the run's first
// scrape, before its clock, already counts: a hostile endpoint is next
// tried at the second tick, then the sixth, the fourteenth...), so that a
// huge, endless, malformed or refusing endpoint costs the run a scrape
// every 16 intervals rather than every one; a success resets it.
//
// A scrape that brought series past the bound (overBound) counts as a
// failure: its endpoint costs a parse of more series than are kept (a
// 100,000-series scrape: ~150 ms of CPU), so its kept series are read less
// often rather than the run paying it every interval.
func (e *endpoint) noteOutcome(err error, overBound bool) {
	if (err == nil || Kind(err) == KindNonFinite) && !overBound {
		e.fails, e.wait = 0, 0
		return
	}
	e.fails++
	e.wait = min(1<<min(e.fails, 8)-1, maxBackoff)
}

// fetch is one scrape: the request, the bounds, the parse. ctx bounds
// it in time (the interval). A body of more than maxLines series lines
// (cutSeries) is parsed only up to them, and cut says so.
func (e *endpoint) fetch(ctx context.Context, maxBytes int64, rate float64, maxLines int) (fams []*dto.MetricFamily, cut bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.u.String(), nil)
	if err != nil {
		return nil, false, failed(KindConnect, err)
	}
	req.Header.Set("Accept", accept)
	for _, h := range e.headers {
		if strings.EqualFold(h.Name, "host") {
			req.Host = h.Value
			continue
		}
		req.Header.Add(h.Name, h.Value)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, false, failed(transportKind(ctx, err), bare(err))
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return nil, false, failed(KindRedirect, fmt.Errorf("HTTP %d (redirects are not followed: give the URL it points to)", resp.StatusCode))
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return nil, false, failed(KindStatus, fmt.Errorf("HTTP %d", resp.StatusCode))
	}
	// The body is read whole, up to the bound, before it is parsed: one
	// past the bound then costs its reading (a copy), never its parsing,
	// which costs ten times more (an 8 MB body: ~100 ms of CPU).
	body := &boundedReader{r: &paced{ctx: ctx, r: resp.Body, rate: rate}, left: maxBytes}
	buf := readAll(e.buf[:0], body)
	switch {
	case body.err != nil:
		return nil, false, failed(transportKind(ctx, body.err), bare(body.err))
	case body.over:
		e.buf = nil // not kept: such a body is never read whole
		return nil, false, failed(KindTooLarge, fmt.Errorf("body over %d bytes", maxBytes))
	}
	e.buf = buf
	buf, cut = cutSeries(buf, maxLines)
	fams, err = decode(yielding{bytes.NewReader(buf)}, format(resp.Header.Get("Content-Type")))
	if err != nil {
		return nil, false, failed(KindMalformed, errMalformed{err})
	}
	return fams, cut, nil
}

// cutSeries cuts buf after its first max series lines, at a line's end,
// and reports whether it did. A series line is a sample that is none of
// a bucket, a quantile, a _sum or a _created: a histogram or a summary
// counts once, by its _count line, and so a body never has fewer series
// than series lines and nothing the bound would keep is cut (a gauge
// named x_sum is not counted, which only cuts later). A body past that
// has more series than the bound keeps in all, so what follows could
// only be dropped: cut, it is never parsed, which is what such a body
// costs (BenchmarkScrapeManySeries). The series kept are a body's first
// ones, the same from one scrape to the next as servers write their
// metrics in a stable order.
func cutSeries(buf []byte, max int) ([]byte, bool) {
	n := 0
	for at := 0; at < len(buf); {
		end := bytes.IndexByte(buf[at:], '\n')
		if end < 0 {
			end = len(buf) - at
		}
		if line := buf[at : at+end]; isSeriesLine(line) {
			if n++; n > max {
				return buf[:at], true
			}
		}
		at += end + 1
	}
	return buf, false
}

// isSeriesLine reports whether line is a sample that counts as a series
// of its own (cutSeries).
func isSeriesLine(line []byte) bool {
	line = bytes.TrimLeft(line, " \t")
	if len(line) == 0 || line[0] == '#' {
		return false
	}
	name := line
	if i := bytes.IndexAny(line, "{ \t"); i >= 0 {
		name = line[:i]
	}
	for _, part := range [][]byte{[]byte("_bucket"), []byte("_sum"), []byte("_created")} {
		if bytes.HasSuffix(name, part) {
			return false
		}
	}
	return !bytes.Contains(line, []byte(`quantile="`))
}

// readAll appends r's bytes to buf up to its end, as io.ReadAll does, but
// into an endpoint's buffer of the scrape before: each scrape would
// otherwise allocate about twice its body.
func readAll(buf []byte, r io.Reader) []byte {
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, max(512, cap(buf))) // doubling, as io.ReadAll
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf
		}
	}
}

// yielding yields the P before each read: the parser's work comes in
// reads of a few KB, so a runnable issuer gets the P at once rather than
// after the scheduler's 10 ms slice, and it costs ~0.1 µs a read.
type yielding struct{ r io.Reader }

func (y yielding) Read(p []byte) (int, error) {
	runtime.Gosched()
	return y.r.Read(p)
}

// bare is err without the url.Error around it, which quotes the URL's
// query (a token may be there).
func bare(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// transportKind names a failure to get or read an answer.
func transportKind(ctx context.Context, err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil || (errors.As(err, &ne) && ne.Timeout()):
		return KindTimeout
	case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return KindReset
	}
	return KindConnect
}

// boundedReader reads at most left bytes: past them it stops, as at the
// end, and says so (over), so that an endless body is never read further
// than the bound. err keeps a read's own failure (a reset, a timeout).
type boundedReader struct {
	r    io.Reader
	left int64
	over bool
	err  error
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more says whether the body goes on.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.over = true
		} else if err != nil && err != io.EOF {
			b.err = err
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readChunk is the most a paced read takes at once: one loopback
// segment, and the receive window (scrapeRcvBuf) holds two.
const readChunk = 64 << 10

// paced reads a body no faster than rate bytes a second, in reads of at
// most readChunk, waiting between them. With the small receive window of
// a scrape's connection (dialer) the server can only send as fast as it
// is read, so a large body trickles in rather than bursting onto the link
// and the cores the run measures: read at full speed, the 8 MB of a
// hostile endpoint doubled the target's latency p99 on a shared host,
// through the kernel's loopback work (bench/RESULTS.md, issue 30).
type paced struct {
	ctx   context.Context
	r     io.Reader
	rate  float64 // bytes a second; 0: unpaced
	start time.Time
	read  int64
}

func (p *paced) Read(b []byte) (int, error) {
	if p.rate > 0 {
		if p.start.IsZero() {
			p.start = time.Now()
		}
		due := p.start.Add(time.Duration(float64(p.read) / p.rate * float64(time.Second)))
		if wait := time.Until(due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-p.ctx.Done():
				t.Stop()
				return 0, p.ctx.Err()
			}
		}
	}
	if len(b) > readChunk {
		b = b[:readChunk]
	}
	n, err := p.r.Read(b)
	p.read += int64(n)
	return n, err
}

// newClient is an endpoint's own HTTP client: its own connections (never
// the run's), no redirects followed, tlsCfg for https.
func newClient(tlsCfg *tls.Config) *http.Client {
	tr := &http.Transport{
		Proxy:                  nil,
		DialContext:            (&net.Dialer{KeepAlive: 30 * time.Second, Control: smallWindow}).DialContext,
		TLSClientConfig:        tlsCfg,
		MaxIdleConns:           4,
		MaxIdleConnsPerHost:    2,
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  0, // the scrape's context bounds it
		MaxResponseHeaderBytes: 64 << 10,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
