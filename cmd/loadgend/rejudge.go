package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/netloadgen/netloadgen/internal/suggest"
	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/runspec"
)

// rejudgeCommand writes the LoadGen logs a run with the samples of a
// sample list (a run's samples.txt, or a LoadGen token vector's input)
// and the given settings would have: "would this run pass with a TPOT
// bound of 40 ms?" without another hour of load. Exit 0 VALID, 1 INVALID,
// 2 error.
func rejudgeCommand(args []string, stdout, stderr io.Writer) int {
	f := newSpecFlags()
	fs, o := f.fs, &f.spec.Overrides
	var samples, out string
	var tb runspec.TokenBounds
	fs.StringVar(&samples, "samples", "", "the sample list: a run's "+runlog.SamplesFile+" (required)")
	fs.StringVar(&out, "out", "", "directory for the summary, detail log and result.json (required)")
	f.float(&o.TargetQPS, "target-qps", "settings.target_qps", "server_target_qps (Server) or offline_expected_qps (Offline)")
	f.float(&o.TargetLatencyMs, "target-latency-ms", "settings.target_latency_ms", "server_target_latency_ns, in ms")
	f.float(&o.LatencyPercentile, "latency-percentile", "settings.latency_percentile", "target latency percentile, e.g. 0.99 or 99")
	f.uint(&o.MinDurationMs, "min-duration-ms", "settings.min_duration_ms", "min_duration_ms")
	f.uint(&o.MaxDurationMs, "max-duration-ms", "settings.max_duration_ms", "max_duration_ms")
	f.uint(&o.MinQueryCount, "min-query-count", "settings.min_query_count", "min_query_count")
	f.uint(&o.MaxQueryCount, "max-query-count", "settings.max_query_count", "max_query_count")
	f.boolean(&tb.UseTokenLatencies, "use-token-latencies", "use_token_latencies", "judge a Server run by TTFT and TPOT (LoadGen's use_token_latencies)")
	f.float(&tb.TTFTLatencyMs, "ttft-latency-ms", "ttft_latency_ms", "server_ttft_latency, in ms")
	f.float(&tb.TPOTLatencyMs, "tpot-latency-ms", "tpot_latency_ms", "server_tpot_latency, in ms")
	f.boolean(&o.InferTokenLatencies, "infer-token-latencies", "settings.infer_token_latencies", "infer_token_latencies: token rates inferred as --token-latency-scaling-factor tokens a sample (gptj)")
	f.uint(&o.TokenLatencyScalingFactor, "token-latency-scaling-factor", "settings.token_latency_scaling_factor", "token_latency_scaling_factor: tokens a sample when inferred")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fs.SetOutput(stderr)
			fmt.Fprintln(stderr, "usage: loadgend rejudge --samples FILE --out DIR [settings flags]")
			fs.PrintDefaults()
			return exitValid
		}
		fmt.Fprintf(stderr, "loadgend rejudge: %v\n", suggest.FlagError(fs, err))
		return exitError
	}
	f.applySet()
	res, err := rejudge(samples, out, f, tb)
	if err != nil {
		fmt.Fprintf(stderr, "loadgend rejudge: %v\n", err)
		return exitError
	}
	fmt.Fprintf(stdout, "%s\nlogs: %s\n", runlog.SummaryLine(res), out)
	if res.Valid {
		return exitValid
	}
	return exitInvalid
}

func rejudge(samples, out string, f *specFlags, tb runspec.TokenBounds) (*loadgen.Result, error) {
	switch {
	case f.fs.NArg() > 0:
		return nil, fmt.Errorf("unexpected argument %q", f.fs.Arg(0))
	case samples == "":
		return nil, errors.New("--samples: give the sample list to judge (a run's " + runlog.SamplesFile + ")")
	case out == "":
		return nil, errors.New("--out: give the directory for the logs")
	}
	in, err := os.Open(samples)
	if err != nil {
		return nil, fmt.Errorf("--samples: %w", err)
	}
	defer in.Close()
	base, rec, err := loadgen.ReadSampleList(in, loadgen.DefaultSettings(loadgen.RulesetLoadGen6))
	if err != nil {
		return nil, fmt.Errorf("--samples %s: %w", samples, err)
	}
	s, err := runspec.RejudgeSettings(base, f.spec.Overrides, tb)
	if err != nil {
		return nil, f.explain(err)
	}
	res, err := loadgen.Rejudge(s, rec)
	if err != nil {
		return nil, fmt.Errorf("--samples %s: %w", samples, err)
	}
	// Only errors: a sample list's SUT name need not be a network SUT's.
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := runlog.Write(out, nil, res, runlog.Options{Rejudged: true, Logger: log}); err != nil {
		return nil, err
	}
	return res, nil
}
