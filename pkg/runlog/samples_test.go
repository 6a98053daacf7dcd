package runlog_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
	"github.com/netloadgen/netloadgen/pkg/runlog"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// rejudgeDir reads a run directory's samples.txt and judges it again under
// the settings it holds.
func rejudgeDir(t *testing.T, dir string) (*loadgen.Result, loadgen.Recorded) {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, runlog.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, rec, err := loadgen.ReadSampleList(f, loadgen.DefaultSettings(loadgen.RulesetLoadGen6))
	if err != nil {
		t.Fatalf("ReadSampleList: %v", err)
	}
	res, err := loadgen.Rejudge(s, rec)
	if err != nil {
		t.Fatalf("Rejudge: %v", err)
	}
	return res, rec
}

// sameVerdict compares what LoadGen's logs print of two results.
func sameVerdict(t *testing.T, got, want *loadgen.Result) {
	t.Helper()
	if got.Validity != want.Validity || got.MinDurationMet != want.MinDurationMet || got.MinQueriesMet != want.MinQueriesMet ||
		got.PerfConstraintsMet != want.PerfConstraintsMet || got.EarlyStoppingMet != want.EarlyStoppingMet {
		t.Errorf("verdict %s/%v/%v/%v/%v, want %s/%v/%v/%v/%v (reasons %v)", got.Validity, got.MinDurationMet, got.MinQueriesMet,
			got.PerfConstraintsMet, got.EarlyStoppingMet, want.Validity, want.MinDurationMet, want.MinQueriesMet,
			want.PerfConstraintsMet, want.EarlyStoppingMet, want.InvalidReasons)
	}
	if resultJSON(t, &loadgen.Result{SampleLatency: got.SampleLatency, QueryLatency: got.QueryLatency}) !=
		resultJSON(t, &loadgen.Result{SampleLatency: want.SampleLatency, QueryLatency: want.QueryLatency}) {
		t.Errorf("latency tables differ:\n got %+v\nwant %+v", got.SampleLatency, want.SampleLatency)
	}
	if (got.EarlyStopping == nil) != (want.EarlyStopping == nil) || got.EarlyStopping != nil && got.EarlyStopping.Text != want.EarlyStopping.Text {
		t.Errorf("early stopping %+v, want %+v", got.EarlyStopping, want.EarlyStopping)
	}
	if got.OverLatencyCount != want.OverLatencyCount || got.CompletedSamplesPerSec != want.CompletedSamplesPerSec ||
		got.SamplesPerSecond != want.SamplesPerSecond || got.QPSWithLoadgenOverhead != want.QPSWithLoadgenOverhead ||
		got.SamplesFailed != want.SamplesFailed {
		t.Errorf("counts and rates differ: got %d %v %v %v %d, want %d %v %v %v %d", got.OverLatencyCount, got.CompletedSamplesPerSec,
			got.SamplesPerSecond, got.QPSWithLoadgenOverhead, got.SamplesFailed, want.OverLatencyCount, want.CompletedSamplesPerSec,
			want.SamplesPerSecond, want.QPSWithLoadgenOverhead, want.SamplesFailed)
	}
}

// streamTokens: TTFT 50 µs to 80 µs, 8 tokens, one sample in 40 of one.
func streamTokens(id int) (time.Duration, int) {
	if id%40 == 3 {
		return time.Duration(50+id%31) * time.Microsecond, 1
	}
	return time.Duration(50+id%31) * time.Microsecond, 8
}

// sameTokenVerdict compares the token verdicts of two results: present,
// the same tables, early-stopping texts and verdict.
func sameTokenVerdict(t *testing.T, got, want *loadgen.Result) {
	t.Helper()
	g, w := got.TokenLatencies, want.TokenLatencies
	if g == nil || w == nil {
		t.Fatalf("token_latencies %+v, want %+v (both present)", g, w)
	}
	if w.FewTokenSamples == 0 || w.TPOTEarlyStopping == nil || !w.EarlyStoppingMet {
		t.Errorf("the run's token verdict %+v: want samples of one token and early stopping passed", w)
	}
	if resultJSON(t, &loadgen.Result{TokenLatencies: g}) != resultJSON(t, &loadgen.Result{TokenLatencies: w}) {
		t.Errorf("token latencies differ:\n got %+v\nwant %+v", g, w)
	}
}

// Every run writes samples.txt; judged again under its own settings it
// gives the run's own verdict, tables and rates, in every loadgen6
// scenario, with failed samples too. A run without tokens writes
// first-token 0 and 0 tokens on every line.
func TestSampleListRejudgesToTheRunsVerdict(t *testing.T) {
	spread := func(id int) time.Duration { return time.Duration(200+id%97) * time.Microsecond }
	cases := []scenarioCase{
		{name: "Server", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread},
		{name: "Offline", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Offline, latency: constLatency(150 * time.Millisecond)},
		{name: "SingleStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: spread},
		{name: "MultiStream", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: spread},
		{name: "Server failures", ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: spread,
			fail: func(id int) error {
				if id%50 == 7 {
					return errors.New("boom")
				}
				return nil
			}},
		// With use_token_latencies, as LoadGen 6.0.17 judges SingleStream
		// and MultiStream: by early stopping over the token arrays
		// (MultiStream: over its query latencies), with a sample of one
		// token among them.
		{name: "SingleStream tokens", ruleset: loadgen.RulesetLoadGen6, scenario: trace.SingleStream, latency: spread,
			tokens: streamTokens, tweak: func(s *loadgen.Settings) { s.UseTokenLatencies = true }},
		{name: "MultiStream tokens", ruleset: loadgen.RulesetLoadGen6, scenario: trace.MultiStream, latency: spread,
			tokens: streamTokens, tweak: func(s *loadgen.Settings) { s.UseTokenLatencies = true }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			run, res := execute(t, c)
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			again, rec := rejudgeDir(t, dir)
			sameVerdict(t, again, res)
			// The list streams from the run's record (issue 28): the bytes
			// of the list written from a copy of it.
			var fromCopy bytes.Buffer
			if err := loadgen.WriteSampleList(&fromCopy, run.Settings(), run.Recorded(res)); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(dir, runlog.SamplesFile)); got != fromCopy.String() {
				t.Errorf("samples.txt is not the list of run.Recorded:\n%s\nwant\n%s", got, fromCopy.String())
			}
			if int64(len(rec.Samples)) != res.SamplesIssued {
				t.Fatalf("%d sample lines, want %d", len(rec.Samples), res.SamplesIssued)
			}
			if c.tokens != nil {
				sameTokenVerdict(t, again, res)
				return
			}
			for i, s := range rec.Samples {
				if !s.Failed && (s.FirstTokenNs != 0 || s.Tokens != 0) {
					t.Fatalf("sample %d: first token %d, tokens %d; want 0 0 for a run without tokens", i, s.FirstTokenNs, s.Tokens)
				}
			}
		})
	}
}

// A generative Server run with use_token_latencies is judged by TTFT and
// TPOT as LoadGen judges them: the TTFT and TPOT the SUT scripted, the
// run's own verdict equal to that of its samples.txt judged again, and a
// TPOT bound below the scripted TPOT makes it INVALID with LoadGen's
// message while the latency bound plays no part.
func TestGenerativeRunJudgedByTokenLatencies(t *testing.T) {
	const ttft, tokens = 2 * time.Millisecond, 21
	// latency = ttft + 20 gaps of 400 µs: TPOT is exactly 400 µs.
	lat := ttft + 20*400*time.Microsecond
	for _, tc := range []struct {
		name      string
		tpotBound uint64
		valid     bool
	}{
		{"within bounds", 500_000, true},
		{"TPOT over its bound", 300_000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := scenarioCase{name: tc.name, ruleset: loadgen.RulesetLoadGen6, scenario: trace.Server, latency: constLatency(lat),
				tokens: func(int) (time.Duration, int) { return ttft, tokens },
				tweak: func(s *loadgen.Settings) {
					s.UseTokenLatencies = true
					s.ServerTargetLatencyNs = 0 // LoadGen's LLM settings: judged by TTFT and TPOT only
					s.ServerTTFTLatencyNs, s.ServerTPOTLatencyNs = 5_000_000, tc.tpotBound
					s.ServerTargetQPS = 2_000
					// netloadgen's default: with token latencies it
					// counts samples over the TTFT and TPOT bounds.
					s.Engine.EarlyVerdict = true
				}}
			run, res := execute(t, c)
			tl := res.TokenLatencies
			if tl == nil {
				t.Fatal("no token_latencies in the result")
			}
			if tl.TTFTAtPercentileNs != int64(ttft) || tl.TPOTAtPercentileNs != 400_000 || tl.FewTokenSamples != 0 ||
				tl.OutputTokens != tokens*res.SamplesIssued {
				t.Errorf("token latencies %+v; want TTFT %d, TPOT 400000, %d tokens", tl, ttft, tokens*res.SamplesIssued)
			}
			if res.Valid != tc.valid || res.OverLatencyCount != res.SamplesIssued {
				t.Errorf("valid %v (reasons %v), over-latency %d; want valid %v and every sample over the 0 ns latency bound",
					res.Valid, res.InvalidReasons, res.OverLatencyCount, tc.valid)
			}
			dir := t.TempDir()
			if err := runlog.Write(dir, run, res, runlog.Options{Logger: quietLogger()}); err != nil {
				t.Fatalf("Write: %v", err)
			}
			again, _ := rejudgeDir(t, dir)
			sameVerdict(t, again, res)
			if again.TokenLatencies == nil || again.TokenLatencies.TPOTAtPercentileNs != tl.TPOTAtPercentileNs || again.TokenLatencies.EarlyStoppingMet != tl.EarlyStoppingMet {
				t.Errorf("rejudged token latencies %+v, want %+v", again.TokenLatencies, tl)
			}
			summary := readFile(t, filepath.Join(dir, runlog.SummaryFile))
			msg := "TPOT constrain not met: Reduce target QPS to improve latency."
			if strings.Contains(summary, msg) == tc.valid || !strings.Contains(summary, "TTFT Early Stopping Result:") {
				t.Errorf("summary (want the TPOT message: %v):\n%s", !tc.valid, summary)
			}
		})
	}
}
