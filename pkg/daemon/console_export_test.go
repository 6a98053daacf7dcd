package daemon

import "testing"

// ConsoleHistory starts loadgend over a data directory holding n finished
// runs (one real Server run against sutproxy and n-1 copies of it, as
// seededDataDir makes them) and returns its base URL: the console's
// benchmark (package daemon_test) opens its runs page.
func ConsoleHistory(tb testing.TB, n int) string {
	tb.Helper()
	dir := seededDataDir(tb, n)
	_, base := startDaemon(tb, func(c *Config) { c.DataDir = dir })
	return base
}
