// Package scrape reads a server's Prometheus metrics while a run goes:
// every interval, on its own goroutines and connections, bounded in time,
// bytes and series, so that a slow, huge, failing or malformed endpoint
// never slows or fails the run. Every sample goes to server_metrics.jsonl
// as scraped; the summary per series is serverview's.
package scrape

import (
	"bufio"
	"cmp"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// Defaults and bounds of the settings.
const (
	DefaultInterval  = time.Second
	MinInterval      = 100 * time.Millisecond
	DefaultMaxSeries = 5000
	DefaultMaxBytes  = 16 << 20
	// MaxFileBytes bounds server_metrics.jsonl: at 5,000 series a second
	// it grows ~1 MB a second (3.6 GB an hour, ten times that at 100 ms).
	// Past it no line is written; the summary goes on.
	MaxFileBytes = 1 << 30
)

// ErrConfig marks settings refused: the error names the flag.
var ErrConfig = errors.New("server metrics")

// Header is a request header sent to an endpoint on the target's host.
type Header struct{ Name, Value string }

// Config is what to scrape and how.
type Config struct {
	// URLs are the endpoints (http or https), scraped each interval.
	URLs []string
	// Interval between scrapes (0: DefaultInterval; at least
	// MinInterval); a scrape is abandoned after one interval.
	Interval time.Duration
	// MaxSeries bounds the series kept over all endpoints (0:
	// DefaultMaxSeries); MaxBytes one body (0: DefaultMaxBytes).
	MaxSeries int
	MaxBytes  int64
	// TargetHost is the run's target as host:port: a URL on it is
	// scraped with TLS and Headers, the run's; others get neither.
	TargetHost string
	TLS        *tls.Config
	Headers    []Header
	// Out receives server_metrics.jsonl's lines (nil: none written).
	Out    io.Writer
	Logger *slog.Logger
	// Scrub, when set, takes the run's secrets out of every series' name
	// and labels before anything keeps them: an endpoint on the target's
	// host gets the run's headers, and may echo one back in a label.
	Scrub func(string) string
}

// Check refuses settings out of bounds, naming the flag.
func (c Config) Check() error {
	if c.Interval != 0 && c.Interval < MinInterval {
		return fmt.Errorf("%w: --server-metrics-interval %v is below %v: scraping faster would load the server for little", ErrConfig, c.Interval, MinInterval)
	}
	if c.MaxSeries < 0 {
		return fmt.Errorf("%w: --server-metrics-max-series %d must not be negative (0: %d)", ErrConfig, c.MaxSeries, DefaultMaxSeries)
	}
	if c.MaxBytes < 0 {
		return fmt.Errorf("%w: --server-metrics-max-bytes %d must not be negative (0: %d)", ErrConfig, c.MaxBytes, DefaultMaxBytes)
	}
	for _, raw := range c.URLs {
		if _, err := parseURL(raw); err != nil {
			return err
		}
	}
	return nil
}

func parseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never quoted: it may hold credentials.
		return nil, fmt.Errorf("%w: --server-metrics: a URL is not http(s)://host[:port]/path", ErrConfig)
	}
	return u, nil
}

// Shown is u as logs and files show it: without credentials, and a
// query (which may carry a token) as "?<redacted>".
func Shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "<unparsable URL>"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "<redacted>"
	}
	u.Fragment = ""
	s := u.String()
	return strings.Replace(s, "%3Credacted%3E", "<redacted>", 1)
}

// hostPort is u's host:port with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return strings.ToLower(u.Host)
	}
	port := "80"
	if u.Scheme == "https" {
		port = "443"
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}

// Scraper scrapes its endpoints from Start to Stop.
type Scraper struct {
	cfg       Config
	endpoints []*endpoint
	log       *slog.Logger

	mu       sync.Mutex // the summary, the file, the counts
	sum      *serverview.Summarizer
	out      *bufio.Writer
	enc      *json.Encoder
	lines    *counting // what enc wrote: bounded by maxFile
	maxFile  int64
	writeErr error
	errs     map[string]int64
	scrapes  []int64 // per endpoint: that parsed
	failed   []int64
	warned   bool
	latest   map[string]Value // known metrics' latest values, by series

	origin  time.Time
	started bool
	stopped bool
	stop    chan struct{}
	done    chan struct{}
	wg      sync.WaitGroup
	busy    []atomic.Bool
}

// New checks cfg and builds a scraper; nothing is sent before Start.
func New(cfg Config) (*Scraper, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.MaxSeries == 0 {
		cfg.MaxSeries = DefaultMaxSeries
	}
	if cfg.MaxBytes == 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Scraper{cfg: cfg, log: log, sum: serverview.NewSummarizer(cfg.MaxSeries), errs: map[string]int64{},
		latest: map[string]Value{}, stop: make(chan struct{}), done: make(chan struct{})}
	if cfg.Out != nil {
		s.out = bufio.NewWriterSize(cfg.Out, 64<<10)
		s.lines, s.maxFile = &counting{w: s.out}, MaxFileBytes
		s.enc = json.NewEncoder(s.lines)
	}
	plain, secure := newClient(nil), newClient(cfg.TLS)
	for _, raw := range cfg.URLs {
		u, _ := parseURL(raw) // checked
		e := &endpoint{u: u, shown: Shown(raw), client: plain}
		if cfg.TargetHost != "" && hostPort(u) == strings.ToLower(cfg.TargetHost) {
			e.client, e.headers = secure, cfg.Headers
		}
		s.endpoints = append(s.endpoints, e)
	}
	s.scrapes, s.failed = make([]int64, len(s.endpoints)), make([]int64, len(s.endpoints))
	s.busy = make([]atomic.Bool, len(s.endpoints))
	return s, nil
}

// Start scrapes every endpoint once (the baseline the deltas count
// from, within one interval and at most edgeTimeout), then every interval
// on its own goroutine. The time axis of server_metrics.jsonl starts when
// Start returns: the runner calls it last before the run's clock starts.
func (s *Scraper) Start(ctx context.Context) {
	before := time.Now()
	base := s.scrapeAll(ctx, s.edge())
	s.origin = time.Now()
	s.started = true
	// The series bound is first come, first kept: the endpoints with the
	// fewest series claim theirs first, so that one flooding endpoint
	// does not leave the others none.
	slices.SortStableFunc(base, func(a, b result) int { return cmp.Compare(len(a.lines), len(b.lines)) })
	s.mu.Lock()
	for _, r := range base {
		s.fold(r, before)
	}
	s.mu.Unlock()
	go s.loop(ctx)
}

func (s *Scraper) loop(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-ctx.Done():
			return
		case <-tick.C:
			s.scrapeAsync(ctx)
		}
	}
}

// scrapeAsync starts a scrape of each endpoint not still busy with the
// last one (counted skipped): a slow endpoint never queues scrapes up.
func (s *Scraper) scrapeAsync(ctx context.Context) {
	for i, e := range s.endpoints {
		if s.sitOut(e) {
			s.count(i, KindBackoff)
			continue
		}
		if !s.busy[i].CompareAndSwap(false, true) {
			s.count(i, KindSkipped)
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.busy[i].Store(false)
			lowPriority()
			at := time.Now()
			r := s.scrapeOne(ctx, i, e, s.cfg.Interval)
			s.mu.Lock()
			s.fold(r, at)
			s.mu.Unlock()
		}()
	}
}

// Stop ends the scraping: the scrapes in flight end or are abandoned,
// then a last scrape of every endpoint (within one interval) closes the
// run, and the summary is returned. The lines are flushed to Out; an
// error writing them is returned with the summary.
//
// Stop must be called once, after Start returned; a scraper never
// started only returns its (empty) summary.
func (s *Scraper) Stop(ctx context.Context) (*serverview.Metrics, error) {
	if !s.started || s.stopped {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.summary(), s.writeErr
	}
	s.stopped = true
	close(s.stop)
	<-s.done
	s.wg.Wait()
	at := time.Now()
	// The run's context may be cancelled (a cancelled run): the last
	// scrape still closes what was scraped, bounded by the interval.
	last := s.scrapeAll(context.WithoutCancel(ctx), s.edge())
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range last {
		s.fold(r, at)
	}
	if s.out != nil && s.writeErr == nil {
		s.writeErr = s.out.Flush()
	}
	s.Close()
	return s.summary(), s.writeErr
}

// Close drops the scraper's idle connections (after Probe; Stop does it
// itself).
func (s *Scraper) Close() {
	for _, e := range s.endpoints {
		e.client.CloseIdleConnections()
	}
}

// result is one endpoint's scrape: its lines, or why there are none.
type result struct {
	i     int
	err   error
	lines []*serverview.Line
	// dropped are series left out unbuilt: new ones past the bound.
	dropped int
}

// skipper is lines' skip for a scrape of e: nil while the summary has
// room (Add decides), else a check that the series is already kept,
// counting those that are not in r.dropped.
func (s *Scraper) skipper(e *endpoint, r *result) func(string, *dto.Metric) bool {
	s.mu.Lock()
	full := s.sum.Full()
	s.mu.Unlock()
	if !full {
		return nil
	}
	return func(name string, m *dto.Metric) bool {
		k := serverview.SeriesKey(e.shown, name, pairs(m))
		s.mu.Lock()
		known := s.sum.KnownKey(k)
		s.mu.Unlock()
		if !known {
			r.dropped++
		}
		return !known
	}
}

// edgeTimeout bounds the scrapes a run waits for: the first (its start
// waits), the last (its result waits) and the probe's. The others are
// bounded by the interval, up to an hour.
const edgeTimeout = 2 * time.Second

// edge is the timeout of a scrape the run waits for.
func (s *Scraper) edge() time.Duration { return min(s.cfg.Interval, edgeTimeout) }

// readRate is how fast a body is read (paced): twice the bound per
// interval, so the largest body allowed takes half an interval (32 MiB a
// second at the defaults; a body of 100 KB, 3 ms).
func (s *Scraper) readRate() float64 {
	return 2 * float64(s.cfg.MaxBytes) / s.cfg.Interval.Seconds()
}

// scrapeAll scrapes every endpoint at once, each within timeout, and waits
// for them all.
func (s *Scraper) scrapeAll(ctx context.Context, timeout time.Duration) []result {
	out := make([]result, len(s.endpoints))
	var wg sync.WaitGroup
	for i, e := range s.endpoints {
		wg.Go(func() {
			lowPriority()
			out[i] = s.scrapeOne(ctx, i, e, timeout)
		})
	}
	wg.Wait()
	return out
}

// scrapeOne fetches and parses one endpoint within one interval.
func (s *Scraper) scrapeOne(ctx context.Context, i int, e *endpoint, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fams, cut, err := e.fetch(ctx, s.cfg.MaxBytes, s.readRate(), s.cfg.MaxSeries)
	if err != nil {
		return result{i: i, err: err}
	}
	r := result{i: i}
	if cut {
		r.dropped++ // at least one series, past the bound: too_many_series
	}
	keep := func(l *serverview.Line) { r.lines = append(r.lines, l) }
	if scrub := s.cfg.Scrub; scrub != nil {
		keep = func(l *serverview.Line) { r.lines = append(r.lines, scrubbed(l, scrub)) }
	}
	if n := lines(fams, 0, e.shown, s.skipper(e, &r), keep); n > 0 {
		r.err = failed(KindNonFinite, fmt.Errorf("%d values NaN or infinite, left out", n))
	}
	return r
}

// scrubbed is l with its name and labels scrubbed.
func scrubbed(l *serverview.Line, scrub func(string) string) *serverview.Line {
	l.Name = scrub(l.Name)
	if len(l.Labels) > 0 {
		labels := make(map[string]string, len(l.Labels))
		for k, v := range l.Labels {
			labels[scrub(k)] = scrub(v)
		}
		l.Labels = labels
	}
	return l
}

// sitOut reports whether e sits this tick out (backoff), counting it down.
func (s *Scraper) sitOut(e *endpoint) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.wait > 0 {
		e.wait--
		return true
	}
	return false
}

// fold takes one scrape into the summary, the file and the counts
// (s.mu held). at is when the scrape began.
func (s *Scraper) fold(r result, at time.Time) {
	if r.err != nil {
		k := Kind(r.err)
		s.errs[k]++
		if k != KindNonFinite {
			s.endpoints[r.i].noteOutcome(r.err, false)
			s.failed[r.i]++
			s.log.Debug("server metrics scrape failed", "endpoint", s.endpoints[r.i].shown, "kind", k, "err", r.err)
			return
		}
	}
	s.scrapes[r.i]++
	t := at.Sub(s.origin).Seconds()
	dropped := r.dropped
	for i, l := range r.lines {
		if i%yieldEvery == yieldEvery-1 {
			runtime.Gosched() // as boundedReader's reads do
		}
		l.T = t
		if !s.sum.Add(l) {
			dropped++
			continue
		}
		s.noteLatest(l)
		s.write(l)
	}
	s.endpoints[r.i].noteOutcome(nil, dropped > 0)
	if dropped > 0 {
		s.errs[KindTooManySeries]++
		if !s.warned {
			s.warned = true
			s.log.Warn("server metrics: too many series, new ones dropped", "max_series", s.cfg.MaxSeries, "endpoint", s.endpoints[r.i].shown, "dropped", dropped)
		}
	}
}

func (s *Scraper) write(l *serverview.Line) {
	if s.enc == nil || s.writeErr != nil {
		return
	}
	if s.lines.n >= s.maxFile {
		if s.errs[KindFileFull] == 0 {
			s.log.Warn("server metrics: server_metrics.jsonl is full, no more lines written", "bytes", s.lines.n)
		}
		s.errs[KindFileFull]++ // a line not written
		return
	}
	s.writeErr = s.enc.Encode(l)
}

// counting counts the bytes written through it.
type counting struct {
	w io.Writer
	n int64
}

func (c *counting) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// count counts a scrape that did not happen (skipped).
func (s *Scraper) count(i int, kind string) {
	s.mu.Lock()
	s.errs[kind]++
	s.failed[i]++
	s.mu.Unlock()
}

// summary is result.json's server_metrics (s.mu held).
func (s *Scraper) summary() *serverview.Metrics {
	m := &serverview.Metrics{IntervalMs: s.cfg.Interval.Milliseconds(), Series: s.sum.Series(), Errors: map[string]int64{}}
	for i, e := range s.endpoints {
		m.Endpoints = append(m.Endpoints, serverview.Endpoint{URL: e.shown, Scrapes: s.scrapes[i], Failed: s.failed[i]})
	}
	for k, n := range s.errs {
		m.Errors[k] = n
	}
	if n := s.errs[KindFileFull]; n > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("server_metrics.jsonl reached %d bytes: %d lines past it were not written (the summary counts them)", s.maxFile, n))
	}
	if s.errs[KindTooManySeries] > 0 {
		m.Warnings = append(m.Warnings, fmt.Sprintf("more than %d series: new series past it were dropped in %d scrapes (--server-metrics-max-series)", s.cfg.MaxSeries, s.errs[KindTooManySeries]))
	}
	return m
}

// Value is a known metric's value in the latest scrape of its series.
type Value = serverview.LiveValue

// noteLatest keeps l's value when it is a known metric's
// (serverview.KnownMetrics) and not a histogram's (s.mu held).
func (s *Scraper) noteLatest(l *serverview.Line) {
	if l.Value == nil {
		return
	}
	if _, ok := serverview.LookUp(l.Name); !ok {
		return
	}
	s.latest[l.Key()] = Value{Name: l.Name, Labels: l.Labels, Endpoint: l.Endpoint, Value: *l.Value, T: l.T}
}

// Latest are the known metrics' values in their series' latest scrape,
// by name, labels and endpoint: what the daemon's event stream carries
// while the run goes. Safe to call at any time.
func (s *Scraper) Latest() []Value {
	s.mu.Lock()
	out := make([]Value, 0, len(s.latest))
	for _, v := range s.latest {
		out = append(out, v)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b Value) int {
		return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Endpoint, b.Endpoint), cmp.Compare(fmt.Sprint(a.Labels), fmt.Sprint(b.Labels)))
	})
	return out
}

// Probe scrapes every endpoint once, within edgeTimeout, keeping
// nothing: nil when each answered 2xx with a body the parser read (what
// keeps the default endpoint, the target's own /metrics), else the first
// failure, its kind told by Kind.
func (s *Scraper) Probe(ctx context.Context) error {
	for i, e := range s.endpoints {
		if r := s.scrapeOne(ctx, i, e, s.edge()); r.err != nil && Kind(r.err) != KindNonFinite {
			return fmt.Errorf("%s: %w", e.shown, r.err)
		}
	}
	return nil
}
