package daemon

import "github.com/netloadgen/netloadgen/pkg/serverview"

// scraping is the runner's Options.Scraping: the run (or a search's
// trial) started scraping the server's metrics, and latest reads the
// known metrics' latest values, which the progress events carry.
func (a *activeRun) scraping(latest func() []serverview.LiveValue) {
	a.serverMetrics.Store(&latest)
}
