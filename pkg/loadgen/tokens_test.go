package loadgen

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/trace"
	"github.com/netloadgen/netloadgen/pkg/trace/tracetest"
)

// genLaw is a generative sample's scripted answer, by query ID.
type genLaw struct {
	ttft   time.Duration
	gap    time.Duration // every inter-token gap
	tokens int
	input  int
}

// lawOf varies every measurement from query to query, so that a mix-up of
// samples, a wrong divisor or an off-by-one shows.
func lawOf(id int) genLaw {
	return genLaw{
		ttft:   time.Duration(5+id%7) * time.Millisecond,
		gap:    time.Duration(1+id%3) * time.Millisecond,
		tokens: 1 + id%5,
		input:  10 + id%4,
	}
}

func (l genLaw) e2e() time.Duration { return l.ttft + time.Duration(l.tokens-1)*l.gap }

// genSUT answers each query inline as a generative server would: the first
// token ttft after the scheduled time, then a token every gap. It reuses
// one Gaps slice across completions (the engine must copy or fold it in).
type genSUT struct {
	law        func(id int) genLaw
	fromServer func(id int) bool
	fail       func(id int) error
	generative bool

	mu   sync.Mutex
	gaps []time.Duration
}

func (s *genSUT) Name() string     { return "gen (Network SUT)" }
func (s *genSUT) Generative() bool { return s.generative }

func (s *genSUT) IssueQuery(_ context.Context, q Query, done func(Completion)) {
	l := s.law(q.ID)
	var err error
	if s.fail != nil {
		err = s.fail(q.ID)
	}
	c := q.Done(err)
	c.At = q.Scheduled.Add(l.e2e())
	if err == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.gaps = s.gaps[:0]
		for range l.tokens - 1 {
			s.gaps = append(s.gaps, l.gap)
		}
		c.FirstToken = q.Scheduled.Add(l.ttft)
		c.Tokens, c.InputTokens, c.Gaps = l.tokens, l.input, s.gaps
		c.TokensFromServer = s.fromServer != nil && s.fromServer(q.ID)
	}
	done(c)
	for i := range s.gaps {
		s.gaps[i] = time.Hour // reused: the engine must not read it any more
	}
}

// wantStats computes TokenStats the test's own way: sort, take
// sorted[floor(n·p)], truncated mean.
func wantStats(ds []time.Duration) TokenStats {
	if len(ds) == 0 {
		return TokenStats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	var sum int64
	for _, d := range s {
		sum += int64(d)
	}
	at := func(p float64) int64 { return int64(s[min(int(float64(len(s))*p), len(s)-1)]) }
	return TokenStats{Count: int64(len(s)), Mean: sum / int64(len(s)), P50: at(0.5), P90: at(0.9), P99: at(0.99), Max: int64(s[len(s)-1])}
}

func genRun(t *testing.T, s Settings, sut *genSUT, opts ...Option) (*Run, *Result) {
	t.Helper()
	clk := newFakeClock()
	r, err := NewRun(s, sut, &fakeQSL{total: 1000, perf: 256}, append([]Option{WithClock(clk), quiet}, opts...)...)
	if err != nil {
		t.Fatalf("NewRun: %v", err)
	}
	res, err := r.Execute(context.Background())
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	return r, res
}

// A Server run of generative samples: TTFT, TPOT, E2E exactly as the
// samples had them (from the scheduled time), ITL from the gaps, token
// counts, rates and goodput against an SLO.
func TestTokenMeasurements(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.SLO = genai.SLO{TTFT: 9 * time.Millisecond, TPOT: 2 * time.Millisecond}
	sut := &genSUT{law: lawOf, generative: true}
	_, res := genRun(t, s, sut)
	tk := res.Tokens
	if tk == nil {
		t.Fatal("no tokens in the result of a generative run")
	}
	var ttft, tpot, e2e, gaps []time.Duration
	var out, in, met int64
	var perUser float64
	for id := range int(res.QueriesIssued) {
		l := lawOf(id)
		ttft, e2e = append(ttft, l.ttft), append(e2e, l.e2e())
		out, in = out+int64(l.tokens), in+int64(l.input)
		if l.tokens >= 2 {
			tpot = append(tpot, l.gap)
			perUser += 1 / l.gap.Seconds()
		}
		for range l.tokens - 1 {
			gaps = append(gaps, l.gap)
		}
		if l.ttft <= 9*time.Millisecond && (l.tokens < 2 || l.gap <= 2*time.Millisecond) {
			met++
		}
	}
	if tk.Samples != res.SamplesIssued || tk.OutputTokens != out || tk.InputTokens != in {
		t.Errorf("samples %d, output %d, input %d; want %d, %d, %d", tk.Samples, tk.OutputTokens, tk.InputTokens, res.SamplesIssued, out, in)
	}
	for _, c := range []struct {
		name      string
		got, want TokenStats
	}{{"ttft", tk.TTFT, wantStats(ttft)}, {"tpot", tk.TPOT, wantStats(tpot)}, {"e2e", tk.E2E, wantStats(e2e)}} {
		if c.got != c.want {
			t.Errorf("%s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	// The histogram is within 0.1%; the gaps are whole milliseconds.
	if w := wantStats(gaps); tk.ITL.Count != w.Count || !near(tk.ITL.P50, w.P50) || !near(tk.ITL.P99, w.P99) || !near(tk.ITL.Max, w.Max) || !near(tk.ITL.Mean, w.Mean) {
		t.Errorf("itl = %+v, want %+v within 0.1%%", tk.ITL, w)
	}
	secs := float64(res.FinalQueryAllSamplesDoneTimeNs) / 1e9
	if want := float64(out) / secs; !nearF(tk.OutputTokensPerSecond, want) {
		t.Errorf("output tokens/s %v, want %v", tk.OutputTokensPerSecond, want)
	}
	if want := perUser / float64(len(tpot)); !nearF(tk.OutputTokensPerSecondPerUser, want) {
		t.Errorf("output tokens/s per user %v, want %v", tk.OutputTokensPerSecondPerUser, want)
	}
	if tk.SamplesMeetingSLO == nil || *tk.SamplesMeetingSLO != met || met == 0 || met == tk.Samples {
		t.Fatalf("samples meeting the SLO %v, want %d (some, not all)", tk.SamplesMeetingSLO, met)
	}
	if want := float64(met) / secs; !nearF(*tk.GoodputSamplesPerSecond, want) {
		t.Errorf("goodput %v, want %v", *tk.GoodputSamplesPerSecond, want)
	}
	if tk.TokenCountSource != TokensFromResponses {
		t.Errorf("token_count_source %q, want %q", tk.TokenCountSource, TokensFromResponses)
	}
}

func near(got, want int64) bool {
	d := got - want
	return d >= -want/1000 && d <= want/1000
}

func nearF(got, want float64) bool { return got >= want*(1-1e-9) && got <= want*(1+1e-9) }

// The result.json keys of the contract.
func TestTokensJSONKeys(t *testing.T) {
	s := testSettings(t, RulesetLoadGen6, trace.Server)
	s.Engine.SLO = genai.SLO{E2E: time.Second}
	_, res := genRun(t, s, &genSUT{law: lawOf, fromServer: func(int) bool { return true }})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Tokens map[string]json.RawMessage `json:"tokens"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"ttft_ns", "tpot_ns", "itl_ns", "e2e_ns", "output_tokens", "input_tokens",
		"output_tokens_per_second", "goodput_samples_per_second", "token_count_source"} {
		if _, ok := m.Tokens[k]; !ok {
			t.Errorf("tokens has no %q: %s", k, b)
		}
	}
	var st map[string]int64
	if err := json.Unmarshal(m.Tokens["tpot_ns"], &st); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"mean", "p50", "p90", "p99", "max"} {
		if _, ok := st[k]; !ok {
			t.Errorf("tpot_ns has no %q", k)
		}
	}
	if string(m.Tokens["token_count_source"]) != `"server"` {
		t.Errorf("token_count_source %s, want \"server\" when every count came from the server", m.Tokens["token_count_source"])
	}
}

// A run whose completions carry no tokens has no tokens key, and no SLO
// means no goodput.
func TestNoTokensNoKey(t *testing.T) {
	clk := newFakeClock()
	_, res := execute(t, testSettings(t, RulesetLoadGen6, trace.Server), &fakeSUT{clock: clk, latency: constLatency(time.Millisecond)})
	if res.Tokens != nil {
		t.Errorf("tokens %+v in a run without tokens", res.Tokens)
	}
	_, res = genRun(t, testSettings(t, RulesetLoadGen6, trace.Server), &genSUT{law: lawOf})
	if res.Tokens == nil || res.Tokens.GoodputSamplesPerSecond != nil || res.Tokens.SamplesMeetingSLO != nil {
		t.Errorf("goodput without an SLO: %+v", res.Tokens)
	}
}

// Failed samples count in no token statistic, and the per-sample export
// names their outcome; the others' lines hold their times and tokens.
func TestTokensFailedSamplesAndExport(t *testing.T) {
	boom := errors.New("boom")
	sut := &genSUT{law: lawOf, generative: true, fail: func(id int) error {
		if id%10 == 3 {
			return boom
		}
		return nil
	}}
	classify := WithFailureClassifier(func(err error) (string, string) { return "malformed", "" })
	r, res := genRun(t, testSettings(t, RulesetLoadGen6, trace.Server), sut, classify)
	if res.SamplesFailed == 0 || res.Tokens.Samples != res.SamplesIssued-res.SamplesFailed {
		t.Fatalf("token samples %d, want issued %d − failed %d", res.Tokens.Samples, res.SamplesIssued, res.SamplesFailed)
	}
	var buf bytes.Buffer
	if err := r.WriteSamples(&buf); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	lines := 0
	qs := tracetest.Collect(r.Trace())
	for sc.Scan() {
		var l struct {
			Sample, Index, Scheduled, Sent int64
			FirstToken                     *int64 `json:"first_token"`
			LastToken                      *int64 `json:"last_token"`
			Tokens                         int
			Status                         string
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d: %v: %s", lines, err, sc.Bytes())
		}
		id := int(l.Sample) // one sample per query
		if l.Sample != int64(lines) || l.Index != int64(qs[id].Samples[0]) {
			t.Fatalf("line %d is sample %d index %d", lines, l.Sample, l.Index)
		}
		lines++
		law := lawOf(id)
		if id%10 == 3 {
			if l.Status != "malformed" || l.LastToken != nil || l.FirstToken != nil || l.Tokens != 0 {
				t.Errorf("failed sample %d: %s", id, sc.Bytes())
			}
			continue
		}
		if l.Status != SampleOK || l.FirstToken == nil || l.LastToken == nil ||
			*l.FirstToken-l.Scheduled != int64(law.ttft) || *l.LastToken-l.Scheduled != int64(law.e2e()) || l.Tokens != law.tokens || l.Sent < l.Scheduled {
			t.Errorf("sample %d: %s, want ttft %v e2e %v tokens %d", id, sc.Bytes(), law.ttft, law.e2e(), law.tokens)
		}
	}
	if int64(lines) != res.SamplesIssued {
		t.Errorf("%d lines for %d samples", lines, res.SamplesIssued)
	}
}

// Mixed counts say "responses": the count is not all the server's.
func TestTokenCountSourceMixed(t *testing.T) {
	_, res := genRun(t, testSettings(t, RulesetLoadGen6, trace.Server), &genSUT{law: lawOf, fromServer: func(id int) bool { return id != 7 }})
	if res.Tokens.TokenCountSource != TokensFromResponses {
		t.Errorf("token_count_source %q with one sample counted by responses", res.Tokens.TokenCountSource)
	}
}

// TPOT is LoadGen's (E2E − TTFT)/(n − 1), none below two tokens.
func TestSamplePOT(t *testing.T) {
	for _, c := range []struct {
		e2e, ttft, n int64
		want         time.Duration
	}{{100, 10, 10, 10}, {100, 10, 2, 90}, {100, 10, 1, 0}, {100, 100, 0, 0}, {10, 10, 5, 0}} {
		if got := samplePOT(c.e2e, c.ttft, c.n); got != c.want {
			t.Errorf("samplePOT(%d, %d, %d) = %v, want %v", c.e2e, c.ttft, c.n, got, c.want)
		}
	}
}

// tokenObs records what a TokenObserver sees.
type tokenObs struct {
	nopObserver
	mu          sync.Mutex
	samples     int
	out, gapSum int64
	tpotZero    int
}

func (o *tokenObs) Tokens(_, output, _ int, _, tpot time.Duration, gaps []time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.samples++
	o.out += int64(output)
	for _, g := range gaps {
		o.gapSum += int64(g)
	}
	if tpot == 0 {
		o.tpotZero++
	}
}

// A TokenObserver sees every successful generative sample once, its gaps
// before the SUT reuses them.
func TestTokenObserver(t *testing.T) {
	o := &tokenObs{}
	_, res := genRun(t, testSettings(t, RulesetLoadGen6, trace.Server), &genSUT{law: lawOf}, WithObserver(o))
	var gapSum int64
	ones := 0
	for id := range int(res.QueriesIssued) {
		l := lawOf(id)
		gapSum += int64(l.tokens-1) * int64(l.gap)
		if l.tokens < 2 {
			ones++
		}
	}
	if int64(o.samples) != res.Tokens.Samples || o.out != res.Tokens.OutputTokens || o.gapSum != gapSum || o.tpotZero != ones {
		t.Errorf("observer saw %d samples, %d tokens, gaps %d, %d without tpot; want %d, %d, %d, %d",
			o.samples, o.out, o.gapSum, o.tpotZero, res.Tokens.Samples, res.Tokens.OutputTokens, gapSum, ones)
	}
}

// Offline: one completion of a range gives each of its samples the
// range's tokens.
func TestTokensOfflineRange(t *testing.T) {
	_, res := genRun(t, testSettings(t, RulesetLoadGen6, trace.Offline), &genSUT{law: lawOf})
	l := lawOf(0)
	tk := res.Tokens
	if tk == nil || tk.Samples != res.SamplesIssued || tk.OutputTokens != res.SamplesIssued*int64(l.tokens) ||
		tk.TTFT.Max != int64(l.ttft) || tk.E2E.P50 != int64(l.e2e()) {
		t.Errorf("tokens %+v for %d samples of %d tokens each, TTFT %v, E2E %v", tk, res.SamplesIssued, l.tokens, l.ttft, l.e2e())
	}
}
