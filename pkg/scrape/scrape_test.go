package scrape

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// counterServer answers a counter that grows by 10 each scrape, a gauge
// and a histogram.
func counterServer(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := n.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		fmt.Fprintf(w, "# TYPE req_total counter\nreq_total{route=\"infer\"} %d\n", 10*k)
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting %d\n", k)
		fmt.Fprintf(w, "# TYPE lat_seconds histogram\nlat_seconds_bucket{le=\"0.1\"} %d\nlat_seconds_bucket{le=\"+Inf\"} %d\nlat_seconds_sum %d\nlat_seconds_count %d\n", k, 2*k, k, 2*k)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func run(t *testing.T, cfg Config) (*serverview.Metrics, []serverview.Line) {
	t.Helper()
	var out bytes.Buffer
	cfg.Out = &out
	if cfg.Interval == 0 {
		cfg.Interval = MinInterval
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s.Start(ctx)
	m, err := s.Stop(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ls []serverview.Line
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l serverview.Line
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		ls = append(ls, l)
	}
	return m, ls
}

func find(m *serverview.Metrics, name string) *serverview.Series {
	for i := range m.Series {
		if m.Series[i].Name == name {
			return &m.Series[i]
		}
	}
	return nil
}

// The baseline at Start and the last scrape at Stop: the counter's delta
// is what it grew between them, and every sample is a line.
func TestScrapeSummaryAndLines(t *testing.T) {
	srv := counterServer(t)
	m, ls := run(t, Config{URLs: []string{srv.URL + "/metrics"}})
	c := find(m, "req_total")
	if c == nil || c.Delta == nil {
		t.Fatalf("no counter summary in %+v", m.Series)
	}
	// Scrape k answers 10k: Start's and Stop's at least, ticks between.
	if want := float64(10 * (c.Scrapes - 1)); *c.Delta != want {
		t.Fatalf("delta %g over %d scrapes, want %g", *c.Delta, c.Scrapes, want)
	}
	if m.Endpoints[0].Scrapes < 2 || len(m.Errors) != 0 {
		t.Fatalf("endpoints %+v errors %v: want 2+ scrapes, no errors", m.Endpoints, m.Errors)
	}
	h := find(m, "lat_seconds")
	if h == nil || h.Count == nil || *h.Count != float64(2*(h.Scrapes-1)) || h.P50Estimate == nil {
		t.Fatalf("histogram summary %+v", h)
	}
	if len(ls) != 3*int(c.Scrapes) {
		t.Fatalf("%d lines for %d scrapes of 3 series", len(ls), c.Scrapes)
	}
	if ls[0].T > 0 {
		t.Fatalf("the baseline's t %g: want ≤ 0 (before the run's start)", ls[0].T)
	}
	var hist *serverview.Line
	for i := range ls {
		if ls[i].Type == serverview.Histogram {
			hist = &ls[i]
			break
		}
	}
	if hist == nil || hist.Value != nil || len(hist.Buckets) != 2 || hist.Buckets[1].LE != "+Inf" || hist.Count == nil {
		t.Fatalf("histogram line %+v: want count, sum, buckets up to +Inf, no value", hist)
	}
}

// A URL's credentials and query never reach the file or the summary.
func TestShownHasNoSecrets(t *testing.T) {
	srv := counterServer(t)
	u := strings.Replace(srv.URL, "http://", "http://user:hunter22@", 1) + "/metrics?token=s3cret"
	m, ls := run(t, Config{URLs: []string{u}})
	all, _ := json.Marshal(m)
	for _, l := range ls {
		b, _ := json.Marshal(l)
		all = append(all, b...)
	}
	for _, secret := range []string{"hunter22", "s3cret", "user"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Fatalf("%q shown: %s", secret, all)
		}
	}
	if m.Endpoints[0].Scrapes < 2 {
		t.Fatalf("the URL with credentials was not scraped: %+v %v", m.Endpoints, m.Errors)
	}
}

// The run's headers go to a URL on the target's host only.
func TestHeadersOnlyToTarget(t *testing.T) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("Authorization"))
		fmt.Fprintln(w, "up 1")
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	hs := []Header{{"Authorization", "Bearer tok"}}
	run(t, Config{URLs: []string{srv.URL + "/metrics"}, TargetHost: host, Headers: hs})
	if got.Load() != "Bearer tok" {
		t.Fatalf("the target's own /metrics got Authorization %q", got.Load())
	}
	run(t, Config{URLs: []string{srv.URL + "/metrics"}, TargetHost: "127.0.0.1:1", Headers: hs})
	if got.Load() != "" {
		t.Fatalf("another host got the run's Authorization %q", got.Load())
	}
}

func TestCheckNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		flag string
	}{
		{Config{Interval: 50 * time.Millisecond}, "--server-metrics-interval"},
		{Config{MaxSeries: -1}, "--server-metrics-max-series"},
		{Config{MaxBytes: -1}, "--server-metrics-max-bytes"},
		{Config{URLs: []string{"ftp://h/metrics"}}, "--server-metrics"},
		{Config{URLs: []string{"http://user:pw@/x"}}, "--server-metrics"},
	} {
		err := c.cfg.Check()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%+v: %v, want ErrConfig naming %s", c.cfg, err, c.flag)
		}
		if err != nil && strings.Contains(err.Error(), "pw") {
			t.Errorf("the error quotes a credential: %v", err)
		}
	}
}

// resetListener accepts connections, reads the request and resets them.
func resetListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4096)
			_, _ = c.Read(buf)
			_ = c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	return "http://" + ln.Addr().String() + "/metrics"
}

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/metrics"
}

func handler(t *testing.T, h http.HandlerFunc) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// hostile are endpoints that fail a scrape each its own way, and the kind
// each is counted as.
func hostile(t *testing.T) map[string]string {
	manySeries := func(w http.ResponseWriter, _ *http.Request) {
		bw := bufio.NewWriter(w)
		fmt.Fprintln(bw, "# TYPE many gauge")
		for i := range 100_000 {
			fmt.Fprintf(bw, "many{i=\"%d\"} %d\n", i, i)
		}
		bw.Flush()
	}
	return map[string]string{
		KindStatus:    handler(t, func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) }),
		KindRedirect:  handler(t, func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/elsewhere", http.StatusFound) }),
		KindMalformed: handler(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "# TYPE x counter\nx{a=\"1\" 3\n") }),
		"too_large/10MB": handler(t, func(w http.ResponseWriter, _ *http.Request) {
			line := bytes.Repeat([]byte("# padding padding padding padding padding padding padding\n"), 1000)
			for range 10 << 20 / len(line) {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		}),
		"too_large/endless": handler(t, func(w http.ResponseWriter, r *http.Request) {
			line := bytes.Repeat([]byte("# endless\n"), 1000)
			for r.Context().Err() == nil {
				if _, err := w.Write(line); err != nil {
					return
				}
			}
		}),
		"timeout/5s": handler(t, func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}),
		"timeout/slow-body": handler(t, func(w http.ResponseWriter, r *http.Request) {
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					fmt.Fprint(w, "#")
					w.(http.Flusher).Flush()
				}
			}
		}),
		KindTooManySeries: handler(t, manySeries), // ~2.3 MB
		KindReset:         resetListener(t),
		KindConnect:       closedPort(t),
	}
}

// Each hostile endpoint is counted by its kind, and a good endpoint
// scraped beside them all is scraped as if they were not there.
func TestHostileEndpoints(t *testing.T) {
	good := counterServer(t).URL + "/metrics"
	for name, u := range hostile(t) {
		kind, _, _ := strings.Cut(name, "/")
		t.Run(name, func(t *testing.T) {
			interval := MinInterval
			if kind == KindTooLarge || kind == KindTooManySeries {
				// Parsing megabytes under -race on a busy machine takes
				// longer than the shortest interval.
				interval = 3 * time.Second
			}
			maxBytes := int64(1 << 20)
			if kind == KindTooManySeries {
				maxBytes = 0 // the default, 16 MiB
			}
			m, _ := run(t, Config{URLs: []string{u, good}, MaxBytes: maxBytes, Interval: interval})
			if m.Errors[kind] < 1 {
				t.Fatalf("errors %v: want %s counted", m.Errors, kind)
			}
			if c := find(m, "req_total"); c == nil || c.Delta == nil || *c.Delta <= 0 {
				t.Fatalf("the good endpoint beside it: %+v", c)
			}
			if kind == KindTooManySeries {
				if len(m.Series) != DefaultMaxSeries || len(m.Warnings) != 1 {
					t.Fatalf("%d series and warnings %q: want %d and one", len(m.Series), m.Warnings, DefaultMaxSeries)
				}
			} else if m.Endpoints[0].Failed < 2 || m.Endpoints[0].Scrapes != 0 {
				t.Fatalf("endpoint %+v: want every scrape failed", m.Endpoints[0])
			}
		})
	}
}

// A scrape due while the last one still runs is skipped and counted,
// never queued.
func TestBusyEndpointSkipped(t *testing.T) {
	s, err := New(Config{URLs: []string{closedPort(t)}, Interval: MinInterval})
	if err != nil {
		t.Fatal(err)
	}
	s.busy[0].Store(true)
	s.scrapeAsync(context.Background())
	s.wg.Wait()
	if s.errs[KindSkipped] != 1 {
		t.Fatalf("errors %v: want one skipped", s.errs)
	}
}

// NaN values are left out of the file (JSON has no NaN) and counted.
func TestNonFiniteLeftOut(t *testing.T) {
	u := handler(t, func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "a NaN\nb +Inf\nc 1\n") })
	m, ls := run(t, Config{URLs: []string{u}})
	if len(m.Series) != 1 || m.Series[0].Name != "c" || m.Errors[KindNonFinite] < 2 {
		t.Fatalf("series %+v errors %v: want c only and non_finite counted", m.Series, m.Errors)
	}
	for _, l := range ls {
		if l.Name != "c" {
			t.Fatalf("line %+v written", l)
		}
	}
}

// An OpenMetrics answer is read by the library's parser too.
func TestOpenMetrics(t *testing.T) {
	u := handler(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/openmetrics-text; version=1.0.0; charset=utf-8")
		fmt.Fprint(w, "# TYPE q gauge\nq{m=\"x\"} 4\n# EOF\n")
	})
	m, _ := run(t, Config{URLs: []string{u}})
	if q := find(m, "q"); q == nil || q.Last == nil || *q.Last != 4 || len(m.Errors) != 0 {
		t.Fatalf("series %+v errors %v", m.Series, m.Errors)
	}
}

// A summary is its quantiles, sum and count, each summarised as a gauge.
func TestSummaryFlattened(t *testing.T) {
	u := handler(t, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "# TYPE s summary\ns{quantile=\"0.5\"} 0.2\ns_sum 3\ns_count 9\n")
	})
	m, _ := run(t, Config{URLs: []string{u}})
	if len(m.Series) != 3 {
		t.Fatalf("series %+v: want s{quantile}, s_sum, s_count", m.Series)
	}
	for _, s := range m.Series {
		if s.Type != serverview.Summary || s.Last == nil {
			t.Fatalf("series %+v: want a summary summarised as a gauge", s)
		}
	}
}

// Latest carries the known metrics only.
func TestLatestKnownOnly(t *testing.T) {
	srv := counterServer(t)
	s, err := New(Config{URLs: []string{srv.URL + "/metrics"}, Interval: MinInterval, Out: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	lv := s.Latest()
	if _, err := s.Stop(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(lv) != 1 || lv[0].Name != "vllm:num_requests_waiting" || lv[0].Value < 1 {
		t.Fatalf("latest %+v: want vllm:num_requests_waiting only", lv)
	}
}

func TestProbe(t *testing.T) {
	good := counterServer(t).URL + "/metrics"
	s, err := New(Config{URLs: []string{good}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(t.Context()); err != nil {
		t.Fatalf("a good endpoint: %v", err)
	}
	s, err = New(Config{URLs: []string{hostile(t)[KindStatus]}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Probe(t.Context()); !errors.Is(err, ErrScrape) || Kind(err) != KindStatus {
		t.Fatalf("a 404: %v, want ErrScrape of kind status", err)
	}
}

// An endpoint that keeps failing sits out 1, 3, 7, then 15 ticks
// between tries, counted backoff; a success resets it.
func TestBackoff(t *testing.T) {
	s, err := New(Config{URLs: []string{closedPort(t)}, Interval: MinInterval})
	if err != nil {
		t.Fatal(err)
	}
	e := s.endpoints[0]
	var waits []int
	for range 6 {
		s.fold(result{i: 0, err: failed(KindStatus, errors.New("HTTP 404"))}, time.Now())
		waits = append(waits, e.wait)
	}
	if fmt.Sprint(waits) != "[1 3 7 15 15 15]" {
		t.Fatalf("waits %v, want [1 3 7 15 15 15]", waits)
	}
	s.scrapeAsync(context.Background())
	s.wg.Wait()
	if s.errs[KindBackoff] != 1 || e.wait != 14 {
		t.Fatalf("errors %v, wait %d: want one backoff, 14 ticks left", s.errs, e.wait)
	}
	s.fold(result{i: 0}, time.Now())
	if e.fails != 0 || e.wait != 0 {
		t.Fatalf("after a success: %d fails, wait %d; want 0 and 0", e.fails, e.wait)
	}
}

// A scrape with series past the bound backs its endpoint off too: it
// costs a parse of more series than are kept.
func TestTooManySeriesBacksOff(t *testing.T) {
	s, err := New(Config{URLs: []string{closedPort(t)}, Interval: MinInterval})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		s.fold(result{i: 0, dropped: 95_000}, time.Now())
	}
	if e := s.endpoints[0]; e.wait != 7 || s.errs[KindTooManySeries] != 3 {
		t.Fatalf("wait %d, errors %v: want 7 ticks out and too_many_series 3", e.wait, s.errs)
	}
}

// A scrape asks for the text format only: a server that offers OpenMetrics
// (Python's prometheus_client) answers it whenever Accept names it, and
// its counters then come out untyped.
func TestAcceptsTextOnly(t *testing.T) {
	accepts := make(chan string, 64)
	u := handler(t, func(w http.ResponseWriter, r *http.Request) {
		accepts <- r.Header.Get("Accept")
		fmt.Fprint(w, "# TYPE c_total counter\nc_total 1\n")
	})
	m, _ := run(t, Config{URLs: []string{u}})
	if c := find(m, "c_total"); c == nil || c.Type != serverview.Counter || c.Delta == nil {
		t.Errorf("series %+v: want the counter c_total with its delta", m.Series)
	}
	for len(accepts) > 0 {
		if a := <-accepts; !strings.HasPrefix(a, "text/plain;version=0.0.4") || strings.Contains(a, "openmetrics") {
			t.Errorf("Accept %q: want the text format only", a)
		}
	}
}

// server_metrics.jsonl stops at its bound: past it no line is written,
// each counted, and the summary still counts every scrape.
func TestFileBound(t *testing.T) {
	u := handler(t, func(w http.ResponseWriter, _ *http.Request) {
		for i := range 10 {
			fmt.Fprintf(w, "g{i=\"%d\"} %d\n", i, i)
		}
	})
	var out bytes.Buffer
	s, err := New(Config{URLs: []string{u}, Interval: MinInterval, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	s.maxFile = 300 // a few lines
	s.Start(t.Context())
	m, err := s.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 10 || m.Series[0].Scrapes < 2 || len(m.Warnings) == 0 {
		t.Fatalf("series %+v, warnings %q: want 10 series of 2 scrapes or more and a warning", m.Series, m.Warnings)
	}
	all := 10 * int(m.Series[0].Scrapes)
	lines := bytes.Count(out.Bytes(), []byte("\n"))
	if out.Len() < 300 || lines >= all || m.Errors[KindFileFull] != int64(all-lines) {
		t.Errorf("%d bytes, %d lines, file_full %d: want the lines up to 300 bytes, the other %d of the %d counted",
			out.Len(), lines, m.Errors[KindFileFull], all-lines, all)
	}
}

// An endpoint that echoes the run's header back in a series' labels and
// name leaves no trace of it in the lines, the summary or the live values.
func TestEchoedSecretScrubbed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		fmt.Fprintf(w, "# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{who=%q} 1\necho_%s 2\n", tok, tok)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	scrub := strings.NewReplacer("s3cr3t", "REDACTED").Replace
	var out bytes.Buffer
	s, err := New(Config{URLs: []string{srv.URL + "/metrics"}, Interval: MinInterval, TargetHost: host,
		Headers: []Header{{"Authorization", "Bearer s3cr3t"}}, Scrub: scrub, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	s.Start(t.Context())
	live := s.Latest()
	m, err := s.Stop(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := json.Marshal(m)
	lv, _ := json.Marshal(live)
	for what, b := range map[string][]byte{"lines": out.Bytes(), "summary": sum, "live": lv} {
		if bytes.Contains(b, []byte("s3cr3t")) || !bytes.Contains(b, []byte("REDACTED")) {
			t.Errorf("%s: %s", what, b)
		}
	}
}
