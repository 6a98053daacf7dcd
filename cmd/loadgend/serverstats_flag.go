package main

// addServerStatisticsFlag registers --no-server-statistics (issue 30): a
// run, and each trial of a search or sweep, reads the server's statistics
// extension unless told not to.
func (f *runFlags) addServerStatisticsFlag() {
	f.fs.BoolVar(&f.spec.NoServerStatistics, "no-server-statistics", false,
		"do not read the server's statistics extension (Triton's /v2/models/MODEL/stats, gRPC ModelStatistics) before, during and after the run (result.json's server.statistics; docs/server-statistics.md)")
	f.flagOf["no_server_statistics"] = "no-server-statistics"
}
