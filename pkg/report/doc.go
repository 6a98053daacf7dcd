// Package report turns run directories into one self-contained HTML page:
// the verdict and its reasons, the latency percentile spectrum (HdrHistogram's
// plot, from latency.hlog), throughput, latency and issue lateness second by
// second (timeseries.json), failures by kind (result.json's failures), a
// search's trials (search.json), with several runs overlaid for comparison.
//
// The page is html/template output with SVG drawn here: it runs no script
// and fetches nothing (its Content-Security-Policy forbids both), so it can
// be mailed, archived or opened offline and shows the same thing anywhere.
// Every figure it prints that result.json holds carries the exact value in a
// data-value attribute beside its rounded text, so a test (or a reader) can
// hold the page to the file.
//
// A file a run lacks leaves its section out with a note saying which file;
// a file that is there but unreadable is an error naming it.
package report
