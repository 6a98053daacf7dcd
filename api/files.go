package api

import (
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/serverview"
)

// A peak search's record and summary in its run's directory, and the record
// of why it stopped a trial early in the trial's (pkg/search's ResultFile,
// SummaryFile and EarlyVerdictFile).
const (
	SearchFile        = "search.json"
	SearchSummaryFile = "search_summary.txt"
	EarlyVerdictFile  = "early_verdict.json"
)

// runFiles are the names GET /v1/runs/{id}/files/{name} serves, with their
// media types. A fixed list, not a directory lookup, so no name can reach
// outside the run's directory.
var runFiles = []struct{ name, mediaType string }{
	{runlog.SummaryFile, "text/plain; charset=utf-8"},
	{runlog.DetailFile, "text/plain; charset=utf-8"},
	{runlog.AccuracyFile, "application/json"},
	{runlog.ResultFile, "application/json"},
	{runlog.HlogFile, "text/plain; charset=utf-8"},
	{runlog.TimeseriesCSVFile, "text/csv; charset=utf-8"},
	{runlog.TimeseriesJSONFile, "application/json"},
	{runlog.SpectrumFile, "text/plain; charset=utf-8"},
	{runlog.SamplesFile, "text/plain; charset=utf-8"},
	{runlog.SamplesJSONLFile, "application/x-ndjson"},
	{SearchFile, "application/json"},
	{SearchSummaryFile, "text/plain; charset=utf-8"},
	{EarlyVerdictFile, "application/json"},
	{serverview.MetricsFile, "application/x-ndjson"},
}

// RunFiles lists the file names a run may have (the search's only for a
// peak search).
func RunFiles() []string {
	names := make([]string, len(runFiles))
	for i, f := range runFiles {
		names[i] = f.name
	}
	return names
}

// FileMediaType is the Content-Type of a run file; ok is false for a name
// not in RunFiles (the server answers 404).
func FileMediaType(name string) (mediaType string, ok bool) {
	for _, f := range runFiles {
		if f.name == name {
			return f.mediaType, true
		}
	}
	return "", false
}
