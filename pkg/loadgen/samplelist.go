package loadgen

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/netloadgen/netloadgen/pkg/stats"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// The sample list (samples.txt) is a run as LoadGen's verdict reads it, in
// the layout of LoadGen's token-latency vectors (testdata/loadgen
// FORMAT.md): "## " comments; "# <key> <value>" lines holding every
// TestSettings field under its LoadGen name (server_ttft_latency and
// server_tpot_latency in ns), the QSL counts and the run's counts and final
// times; then one "latency_ns first_token_latency_ns n_tokens" line per
// sample. A failed sample (netloadgen's; LoadGen has none) is a line
// "failed 0 0". netloadgen adds "# ruleset" and "# task".

// settingKeys are the TestSettings fields of the header, in the vectors'
// order, each with its field.
func settingKeys(s *Settings) []struct {
	key string
	ptr any
} {
	type kp = struct {
		key string
		ptr any
	}
	return []kp{
		{"use_token_latencies", &s.UseTokenLatencies},
		{"server_ttft_latency", &s.ServerTTFTLatencyNs},
		{"server_tpot_latency", &s.ServerTPOTLatencyNs},
		{"infer_token_latencies", &s.InferTokenLatencies},
		{"token_latency_scaling_factor", &s.TokenLatencyScalingFactor},
		{"single_stream_expected_latency_ns", &s.SingleStreamExpectedLatencyNs},
		{"single_stream_target_latency_percentile", &s.SingleStreamTargetLatencyPercentile},
		{"multi_stream_expected_latency_ns", &s.MultiStreamExpectedLatencyNs},
		{"multi_stream_target_latency_percentile", &s.MultiStreamTargetLatencyPercentile},
		{"multi_stream_samples_per_query", &s.MultiStreamSamplesPerQuery},
		{"server_target_qps", &s.ServerTargetQPS},
		{"server_target_latency_ns", &s.ServerTargetLatencyNs},
		{"server_target_latency_percentile", &s.ServerTargetLatencyPercentile},
		{"server_coalesce_queries", &s.ServerCoalesceQueries},
		{"server_find_peak_qps_decimals_of_precision", &s.ServerFindPeakQPSDecimalsOfPrecision},
		{"server_find_peak_qps_boundary_step_size", &s.ServerFindPeakQPSBoundaryStepSize},
		{"server_max_async_queries", &s.ServerMaxAsyncQueries},
		{"server_num_issue_query_threads", &s.ServerNumIssueQueryThreads},
		{"offline_expected_qps", &s.OfflineExpectedQPS},
		{"sample_concatenate_permutation", &s.SampleConcatenatePermutation},
		{"min_duration_ms", &s.MinDurationMs},
		{"max_duration_ms", &s.MaxDurationMs},
		{"min_query_count", &s.MinQueryCount},
		{"max_query_count", &s.MaxQueryCount},
		{"qsl_rng_seed", &s.QSLRNGSeed},
		{"sample_index_rng_seed", &s.SampleIndexRNGSeed},
		{"schedule_rng_seed", &s.ScheduleRNGSeed},
		{"accuracy_log_rng_seed", &s.AccuracyLogRNGSeed},
		{"accuracy_log_probability", &s.AccuracyLogProbability},
		{"accuracy_log_sampling_target", &s.AccuracyLogSamplingTarget},
		{"print_timestamps", &s.PrintTimestamps},
		{"performance_issue_unique", &s.PerformanceIssueUnique},
		{"performance_issue_same", &s.PerformanceIssueSame},
		{"performance_issue_same_index", &s.PerformanceIssueSameIndex},
		{"performance_sample_count_override", &s.PerformanceSampleCountOverride},
		{"accuracy_sample_count_override", &s.AccuracySampleCountOverride},
	}
}

func formatSetting(p any) string {
	switch v := p.(type) {
	case *bool:
		if *v {
			return "1"
		}
		return "0"
	case *uint64:
		return strconv.FormatUint(*v, 10)
	case *int:
		return strconv.Itoa(*v)
	case *float64:
		return strconv.FormatFloat(*v, 'g', -1, 64)
	}
	panic(fmt.Sprintf("samplelist: no format for %T", p)) // settingKeys lists only the types above
}

func parseSetting(p any, text string) error {
	var err error
	switch v := p.(type) {
	case *bool:
		switch text {
		case "1", "true":
			*v = true
		case "0", "false":
			*v = false
		default:
			err = fmt.Errorf("%q is not 0 or 1", text)
		}
	case *uint64:
		*v, err = strconv.ParseUint(text, 10, 64)
	case *int:
		*v, err = strconv.Atoi(text)
	case *float64:
		*v, err = strconv.ParseFloat(text, 64)
	}
	return err
}

// WriteSampleList writes the sample list of a run with settings s.
func WriteSampleList(w io.Writer, s Settings, rec Recorded) error {
	return writeSampleList(w, s, rec, func(fn func(TokenSample)) {
		for _, x := range rec.Samples {
			fn(x)
		}
	})
}

// writeSampleList writes the sample list of rec (its Samples unread) whose
// samples each yields, in sequence order, every time it is called: once for
// the header's figures, once for the lines, so that a run's list streams
// from its record instead of a copy of it (issue 28).
func writeSampleList(w io.Writer, s Settings, rec Recorded, each func(func(TokenSample))) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	firstTokens, count := 0, 0
	maxLatency := int64(0)
	each(func(x TokenSample) {
		count++
		if x.Tokens > 0 {
			firstTokens = 1
		}
		if !x.Failed {
			maxLatency = max(maxLatency, x.LatencyNs)
		}
	})
	fmt.Fprintf(bw, "## netloadgen sample list: the run's settings, then latency_ns first_token_latency_ns n_tokens per sample (ns from each sample's scheduled time)\n")
	fmt.Fprintf(bw, "# sut_name %s\n# ruleset %s\n", strings.Join(strings.Fields(rec.SUTName), " "), s.Ruleset)
	if s.Task != "" {
		fmt.Fprintf(bw, "# task %s\n", s.Task)
	}
	fmt.Fprintf(bw, "# scenario %s\n# mode %s\n", s.Scenario, s.Mode)
	for _, k := range settingKeys(&s) {
		fmt.Fprintf(bw, "# %s %s\n", k.key, formatSetting(k.ptr))
	}
	for _, kv := range []struct {
		key string
		v   int64
	}{
		{"qsl_total_sample_count", int64(rec.QSLTotalSampleCount)}, {"qsl_performance_sample_count", int64(rec.QSLPerformanceSampleCount)},
		{"first_token_complete", int64(firstTokens)}, {"sample_count", int64(count)}, {"queries_issued", rec.QueriesIssued},
		{"final_query_scheduled_time_ns", rec.FinalQueryScheduledTimeNs}, {"final_query_issued_time_ns", rec.FinalQueryIssuedTimeNs},
		{"final_query_all_samples_done_time_ns", rec.FinalQueryAllSamplesDoneTimeNs}, {"max_latency_ns", maxLatency},
	} {
		fmt.Fprintf(bw, "# %s %d\n", kv.key, kv.v)
	}
	bw.WriteString("# columns latency_ns first_token_latency_ns n_tokens\n")
	var b []byte
	each(func(x TokenSample) {
		b = b[:0]
		if x.Failed {
			b = append(b, "failed 0 0\n"...)
		} else {
			b = strconv.AppendInt(b, x.LatencyNs, 10)
			b = strconv.AppendInt(append(b, ' '), x.FirstTokenNs, 10)
			b = append(strconv.AppendInt(append(b, ' '), x.Tokens, 10), '\n')
		}
		bw.Write(b)
	})
	return bw.Flush()
}

// ReadSampleList reads a sample list. Its settings start from base (the
// ruleset's defaults) and take every header value; the samples and counts
// go into the Recorded. Errors name the line.
func ReadSampleList(r io.Reader, base Settings) (Settings, Recorded, error) {
	s, rec := base, Recorded{}
	fields := map[string]any{}
	for _, k := range settingKeys(&s) {
		fields[k.key] = k.ptr
	}
	counts := map[string]*int64{
		"queries_issued": &rec.QueriesIssued, "final_query_scheduled_time_ns": &rec.FinalQueryScheduledTimeNs,
		"final_query_issued_time_ns": &rec.FinalQueryIssuedTimeNs, "final_query_all_samples_done_time_ns": &rec.FinalQueryAllSamplesDoneTimeNs,
	}
	var want int64 = -1
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%w: line %d: "+format, append([]any{ErrInvalidRecord, n}, args...)...)
		}
		switch {
		case line == "" || strings.HasPrefix(line, "##"):
			continue
		case strings.HasPrefix(line, "#"):
			key, val, _ := strings.Cut(strings.TrimSpace(line[1:]), " ")
			val = strings.TrimSpace(val)
			if err := headerValue(&s, &rec, fields, counts, key, val, &want); err != nil {
				return s, rec, bad("%s: %v", key, err)
			}
		default:
			x, err := sampleLine(line)
			if err != nil {
				return s, rec, bad("%v", err)
			}
			rec.Samples = append(rec.Samples, x)
		}
	}
	if err := sc.Err(); err != nil {
		return s, rec, fmt.Errorf("reading the sample list: %w", err)
	}
	if want >= 0 && want != int64(len(rec.Samples)) {
		return s, rec, fmt.Errorf("%w: sample_count is %d but %d sample lines follow", ErrInvalidRecord, want, len(rec.Samples))
	}
	return s, rec, nil
}

// headerValue applies one "# key value" line.
func headerValue(s *Settings, rec *Recorded, fields map[string]any, counts map[string]*int64, key, val string, want *int64) error {
	if p, ok := fields[key]; ok {
		return parseSetting(p, val)
	}
	if p, ok := counts[key]; ok {
		v, err := strconv.ParseInt(val, 10, 64)
		*p = v
		return err
	}
	var err error
	switch key {
	case "sut_name":
		rec.SUTName = val
	case "ruleset":
		s.Ruleset = Ruleset(val)
	case "task":
		s.Task = val
	case "scenario":
		s.Scenario, err = trace.ParseScenario(val)
	case "mode":
		err = s.Mode.UnmarshalText([]byte(val))
	case "qsl_total_sample_count":
		rec.QSLTotalSampleCount, err = strconv.Atoi(val)
	case "qsl_performance_sample_count":
		rec.QSLPerformanceSampleCount, err = strconv.Atoi(val)
	case "sample_count":
		*want, err = strconv.ParseInt(val, 10, 64)
	case "first_token_complete", "max_latency_ns", "columns":
		// Derived from the samples, or a label.
	default:
		err = fmt.Errorf("unknown key (the keys are LoadGen's TestSettings names, the QSL counts and the run's counts)")
	}
	return err
}

// sampleLine parses "latency first_token tokens" or "failed 0 0".
func sampleLine(line string) (TokenSample, error) {
	f := strings.Fields(line)
	if len(f) != 3 {
		return TokenSample{}, fmt.Errorf("want latency_ns first_token_latency_ns n_tokens, got %q", line)
	}
	if f[0] == "failed" {
		return TokenSample{LatencyNs: int64(stats.FailedLatency), FirstTokenNs: int64(stats.FailedLatency), Failed: true}, nil
	}
	var v [3]int64
	for i := range f {
		var err error
		if v[i], err = strconv.ParseInt(f[i], 10, 64); err != nil {
			return TokenSample{}, fmt.Errorf("column %d: %q is not an integer", i+1, f[i])
		}
	}
	if v[0] < 0 || v[1] < 0 {
		return TokenSample{}, fmt.Errorf("negative latency in %q", line)
	}
	return TokenSample{LatencyNs: v[0], FirstTokenNs: v[1], Tokens: v[2]}, nil
}

// Recorded returns what the run recorded, for its sample list: every
// issued sample in sequence order. A run whose answers carried no tokens
// has first-token latency 0 and 0 tokens on every line. Call it after
// Execute has returned.
func (r *Run) Recorded(res *Result) Recorded {
	rec := r.recordedHead(res)
	rec.Samples = make([]TokenSample, 0, r.samplesIssued())
	r.eachRecorded(func(x TokenSample) { rec.Samples = append(rec.Samples, x) })
	return rec
}

// recordedHead is the Recorded of res without its samples.
func (r *Run) recordedHead(res *Result) Recorded {
	return Recorded{
		SUTName: res.SUTName, QSLTotalSampleCount: res.QSLTotalSampleCount, QSLPerformanceSampleCount: res.QSLPerformanceSampleCount,
		QueriesIssued: res.QueriesIssued, FinalQueryScheduledTimeNs: res.FinalQueryScheduledTimeNs,
		FinalQueryIssuedTimeNs: res.FinalQueryIssuedTimeNs, FinalQueryAllSamplesDoneTimeNs: res.FinalQueryAllSamplesDoneTimeNs,
	}
}

// eachRecorded calls fn with every issued sample of the sample list in
// sequence order: tokenSamples's, with first-token latency 0 on the
// answered samples of a run whose answers carried no tokens.
func (r *Run) eachRecorded(fn func(TokenSample)) {
	gen := r.Generative()
	r.eachSample(func(x TokenSample) {
		if !gen && !x.Failed {
			x.FirstTokenNs = 0
		}
		fn(x)
	})
}

// WriteSampleList writes the run's sample list (samples.txt), streamed
// from the run's record: no copy of it (32 bytes a sample) is built.
func (r *Run) WriteSampleList(w io.Writer, res *Result) error {
	return writeSampleList(w, r.settings, r.recordedHead(res), r.eachRecorded)
}
