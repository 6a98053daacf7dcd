package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/scrape"
	"github.com/netloadgen/netloadgen/pkg/serverview"
	"github.com/netloadgen/netloadgen/pkg/target"
)

// ServerMetrics are a run's settings for scraping the server's
// Prometheus metrics while it goes (package scrape).
type ServerMetrics struct {
	// URLs are the endpoints; none: the target's own /metrics (http and
	// https targets), scraped if it answers at the probe.
	URLs []string
	// Interval between scrapes (0: scrape.DefaultInterval).
	Interval time.Duration
	// MaxSeries and MaxBytes bound the series kept and one body (0: the
	// defaults).
	MaxSeries int
	MaxBytes  int64
	// Off scrapes nothing (--no-server-metrics).
	Off bool
}

// Check refuses settings out of bounds, naming the flag.
func (m ServerMetrics) Check() error {
	return m.config().Check()
}

func (m ServerMetrics) config() scrape.Config {
	return scrape.Config{URLs: m.URLs, Interval: m.Interval, MaxSeries: m.MaxSeries, MaxBytes: m.MaxBytes}
}

// metricsScrape is a run's scraper and the file its lines go to.
type metricsScrape struct {
	sc      *scrape.Scraper
	file    *os.File // nil: no run directory
	log     *slog.Logger
	stopped bool
}

// openServerMetrics builds the run's scraper, nil when it scrapes nothing:
// switched off, or no URL given and the target's own /metrics did not
// answer at the probe. Its failures never fail the run, but for settings
// refused (which name their flag).
func openServerMetrics(ctx context.Context, spec Spec, t target.Target, log *slog.Logger) (*metricsScrape, error) {
	m := spec.ServerMetrics
	if m.Off {
		return nil, nil
	}
	cfg := m.config()
	tlsCfg, err := tlsConfig(t, spec.TLS)
	if err != nil {
		return nil, err
	}
	cfg.TargetHost, cfg.TLS, cfg.Logger = t.Host, tlsCfg, log
	if scr := Scrubber(spec); scr != nil {
		cfg.Scrub = scr.String
	}
	for _, h := range spec.Headers {
		cfg.Headers = append(cfg.Headers, scrape.Header{Name: h.Name, Value: h.Value})
	}
	if len(cfg.URLs) == 0 {
		u, ok := defaultMetricsURL(t)
		if !ok {
			return nil, nil
		}
		cfg.URLs = []string{u}
		probe, err := scrape.New(cfg)
		if err != nil {
			return nil, err
		}
		err = probe.Probe(ctx)
		probe.Close()
		if err != nil {
			log.Info("server metrics: the target's /metrics did not answer at the probe; not scraped (give --server-metrics URL)", "err", err)
			return nil, nil
		}
	}
	ms := &metricsScrape{log: log}
	if spec.OutDir != "" {
		if err := os.MkdirAll(spec.OutDir, 0o755); err != nil {
			return nil, fmt.Errorf("create run dir: %w", err)
		}
		f, err := os.Create(filepath.Join(spec.OutDir, serverview.MetricsFile))
		if err != nil {
			return nil, fmt.Errorf("server metrics file: %w", err)
		}
		ms.file, cfg.Out = f, f
	}
	ms.sc, err = scrape.New(cfg)
	if err != nil {
		ms.closeFile()
		return nil, err
	}
	return ms, nil
}

// defaultMetricsURL is the target's own /metrics: its scheme, host and
// port (the path prefix dropped: servers export at the root); none for a
// gRPC target, whose metrics are on another port.
func defaultMetricsURL(t target.Target) (string, bool) {
	if t.Scheme != "http" && t.Scheme != "https" {
		return "", false
	}
	return t.Scheme + "://" + t.Host + "/metrics", true
}

func (ms *metricsScrape) closeFile() error {
	if ms.file == nil {
		return nil
	}
	err := ms.file.Close()
	ms.file = nil
	return err
}

// stop ends the scraping and returns the summary; a failure to write
// the file is logged and said in the summary's warnings, never the run's.
func (ms *metricsScrape) stop(ctx context.Context) *serverview.Metrics {
	ms.stopped = true
	m, err := ms.sc.Stop(ctx)
	if cerr := ms.closeFile(); err == nil {
		err = cerr
	}
	if err != nil {
		ms.log.Warn("server metrics: writing "+serverview.MetricsFile+" failed", "err", err)
		m.Warnings = append(m.Warnings, serverview.MetricsFile+" incomplete: "+errText(err))
	}
	return m
}

func errText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Op + ": " + pe.Err.Error()
	}
	return err.Error()
}

// beforeStart is the engine's hook that starts the scraping once the
// untimed part is done: the baseline scrape, then the ticks.
func (ms *metricsScrape) beforeStart(scraping func(func() []serverview.LiveValue)) loadgen.Option {
	return loadgen.WithBeforeStart(func(ctx context.Context) {
		ms.sc.Start(ctx)
		if scraping != nil {
			scraping(ms.sc.Latest)
		}
	})
}

// abandon ends a scraper the run did not stop (it failed before its end):
// its goroutines end and the file is closed.
func (ms *metricsScrape) abandon() {
	if !ms.stopped {
		ms.stopped = true
		_, _ = ms.sc.Stop(context.Background())
	}
	_ = ms.closeFile()
}
