package daemon

import (
	"context"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// scraping is the runner's Options.Scraping: the run (or a search's
// trial) started scraping the server's metrics, and latest reads the
// known metrics' latest values, which the progress events carry.
func (a *activeRun) scraping(latest func() []serverview.LiveValue) {
	a.serverMetrics.Store(&latest)
}

// disallowedMetrics is the first of spec's server_metrics endpoints whose
// host is outside LOADGEND_ALLOWED_TARGETS ("" when none is): a scrape is
// a request the daemon sends, so the fence that keeps its load in bounds
// keeps its scrapes there too. The target's own /metrics, the default, is
// the target's host.
func (s *Service) disallowedMetrics(ctx context.Context, spec api.RunSpec) string {
	for _, u := range spec.ServerMetrics {
		if !s.allow.Allows(ctx, hostOf(u)) {
			return u
		}
	}
	return ""
}
