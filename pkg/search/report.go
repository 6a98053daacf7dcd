package search

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// peakFiles are the peak trial's files copied to the search's directory:
// as LoadGen's FindPeakPerformance does, the search's own logs are those of
// the run that gave the answer.
var peakFiles = []string{"mlperf_log_summary.txt", "mlperf_log_detail.txt", "result.json", "latency.hlog"}

// writeRecord writes search.json, the summary table and the peak trial's
// logs into dir.
func writeRecord(dir string, res *Result) error {
	if err := writeJSON(filepath.Join(dir, ResultFile), res); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(dir, SummaryFile, []byte(Summary(res))); err != nil {
		return err
	}
	if !res.Found {
		return nil
	}
	src := filepath.Join(dir, TrialDir(res.PeakTrial))
	for _, name := range peakFiles {
		b, err := os.ReadFile(filepath.Join(src, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := atomicfile.WriteFile(dir, name, b); err != nil {
			return err
		}
	}
	return nil
}

// Summary is the search as text: how trials are judged, the trials as a
// table with each criterion apart, then the answer. A sweep's is its
// latency-vs-load table and plot (sweepSummary).
func Summary(res *Result) string {
	if res.Mode == ModeSweep {
		return sweepSummary(res)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Peak search: %s %s (%s)\n", res.Ruleset, res.Scenario, res.Algorithm)
	if res.JudgedBy != "" {
		fmt.Fprintln(&b, judgedLine(res))
	}
	fmt.Fprintln(&b)
	writeTable(&b, res)
	fmt.Fprintln(&b)
	writeRetries(&b, res)
	if t, ok := res.PeakRecord(); ok {
		fmt.Fprintln(&b, peakLine(res, t))
		if len(res.Verifying) > 0 {
			fmt.Fprintf(&b, "Verifying trials: %v, all passed\n", res.Verifying)
		}
	} else {
		fmt.Fprintln(&b, "Peak: none found")
	}
	fmt.Fprintf(&b, "Bracket: [%s, %s)\n", fmtNum(res.Lower), upperText(res.Upper))
	fmt.Fprintf(&b, "Ended: %s\n", res.EndReason)
	fmt.Fprintf(&b, "Trials: %d; total time %.1f s\n", len(res.Trials), res.DurationS)
	if l := strategyLine(res); l != "" {
		fmt.Fprintln(&b, l)
	}
	return b.String()
}

// writeRetries says, for each trial run again because it failed early,
// what the retry found, and when it changed the outcome: a search capped
// by a transient would otherwise not show it.
func writeRetries(w io.Writer, res *Result) {
	byIndex := make(map[int]Trial, len(res.Trials))
	for _, t := range res.Trials {
		byIndex[t.Index] = t
	}
	wrote := false
	for _, t := range res.Trials {
		first, ok := byIndex[t.RetryOf]
		if t.RetryOf == 0 || !ok {
			continue
		}
		why := "failed"
		if first.EarlyVerdict != "" {
			why = "stopped by its early verdict"
		}
		outcome := "failed again: the failure stands"
		if t.Pass {
			outcome = "passed: the retry changed the outcome"
		}
		if t.RetriedAs != 0 {
			outcome = "failed again, and was run once more"
		}
		fmt.Fprintf(w, "Retry: trial %d at %s %s after %.1f s of its timed run; trial %d ran it again and %s\n",
			first.Index, fmtNum(first.Target), why, first.RunS, t.Index, outcome)
		wrote = true
	}
	if wrote {
		fmt.Fprintln(w)
	}
}

// writeTable writes one row per trial: its figures, each criterion of its
// run (yes/no; "-" where the ruleset has none), the run's own verdict, and
// whether the search took it as a pass.
func writeTable(w io.Writer, res *Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	pct := "tail"
	if len(res.Trials) > 0 && res.Trials[0].Percentile > 0 {
		pct = pctName(res.Trials[0].Percentile)
	}
	lat := "latency"
	if b := boundText(res); b != "" {
		lat = b
	}
	if b := tokenBoundText(res); b != "" {
		lat = b
	}
	fmt.Fprintf(tw, "trial\tphase\ttarget\tachieved/s\t%s ms\t%s\tearly stopping\tmin duration\tmin queries\tno failed\t%srun verdict\tsearch pass\tduration s\tearly verdict\t\n", pct, lat, extraHead(res))
	for _, t := range res.Trials {
		ev := "-"
		if t.EarlyVerdict != "" {
			ev = "stopped"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%.1f\t%s\t%s\t%s%s\t%s\t%.1f\t%s\t\n", t.Index, phaseCell(t), fmtNum(t.Target),
			t.Achieved, tailCell(t), criteriaCells(res, t.Criteria), extraCells(res, t), t.Verdict, yesNo(t.Pass), t.DurationS, ev)
	}
	tw.Flush()
}

// phaseCell is a trial's phase, with the trial it ran again when it is a
// retry ("bisect, retry of 3").
func phaseCell(t Trial) string {
	p := string(t.Phase)
	if t.Stage == StageScout {
		p = "scout " + p
	}
	if t.RetryOf != 0 {
		return fmt.Sprintf("%s, retry of %d", p, t.RetryOf)
	}
	return p
}

// strategyLine is a scout search's stages, each with its trials and time,
// beside what the timed runs of as many trials would have taken at full
// length; "" for a full search.
func strategyLine(res *Result) string {
	if res.Strategy != StrategyScout {
		return ""
	}
	var b strings.Builder
	b.WriteString("Strategy: scout (short trials scout the peak, full-length ones verify it):")
	for i, st := range res.Stages {
		if i > 0 {
			b.WriteString(";")
		}
		fmt.Fprintf(&b, " %s %d %s in %.1f s", st.Stage, st.Trials, plural(st.Trials, "trial"), st.DurationS)
	}
	fmt.Fprintf(&b, ".\nTime: %.1f s spent; at full length, the timed runs alone of these %d trials would take %.1f s (%d × %.1f s minimum duration)",
		res.DurationS, len(res.Trials), res.FullLengthS, len(res.Trials), res.MinDurationS)
	return b.String()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// failedTailMs is where a tail latency in ms is a failed sample's
// (LoadGen's INT64_MAX ns is 9223372036854.775 ms), with float slack.
const failedTailMs = 9.2e12

// tailCell is a trial's tail latency in ms as the table shows it: over the
// answered samples with the failures counted beside it when any failed
// ("12.345 (8 failed)"), never a failed sample's INT64_MAX.
func tailCell(t Trial) string {
	if t.FailedSamples > 0 {
		v := "-"
		if a := t.TailLatencyAnsweredMs; a != nil {
			v = fmt.Sprintf("%.3f", *a)
		}
		return fmt.Sprintf("%s (%d failed)", v, t.FailedSamples)
	}
	if t.TailLatencyMs >= failedTailMs { // a record from before failed_samples
		return "failed"
	}
	return fmt.Sprintf("%.3f", t.TailLatencyMs)
}

// criteriaCells are a trial's criteria as table cells: "?" for a record
// that did not keep them.
func criteriaCells(res *Result, c *Criteria) string {
	if c == nil {
		return "?\t?\t?\t?\t?"
	}
	es := yesNo(c.EarlyStoppingMet)
	if res.JudgedBy == JudgedByValidity {
		es = "-" // v0.5 has no early stopping
	}
	return strings.Join([]string{yesNo(c.LatencyMet), es, yesNo(c.MinDurationMet), yesNo(c.MinQueriesMet), yesNo(c.NoFailedSamples)}, "\t")
}

// extraHead and extraCells are the token-latency and goodput columns,
// present when some trial has them.
func extraHead(res *Result) string {
	h := ""
	if hasTokens(res) {
		h += "TTFT ms\tTPOT ms\t"
	}
	if res.JudgedBy == JudgedByGoodput {
		h += "met SLO %\t"
	}
	return h
}

func extraCells(res *Result, t Trial) string {
	c := ""
	if hasTokens(res) {
		if tk := t.TokenLatencies; tk != nil {
			c += tokenCell(t, tk.TTFTMs, tk.TTFTAnsweredMs) + "\t" + tokenCell(t, tk.TPOTMs, tk.TPOTAnsweredMs) + "\t"
		} else {
			c += "-\t-\t"
		}
	}
	if res.JudgedBy == JudgedByGoodput {
		if g := t.Goodput; g != nil {
			c += fmt.Sprintf("%.2f\t", g.Percent)
		} else {
			c += "-\t"
		}
	}
	return c
}

// tokenCell is a TTFT or TPOT in ms as the table shows it: over the
// answered samples with the failures beside it when any failed, never -1.
func tokenCell(t Trial, ms float64, answered *float64) string {
	if t.FailedSamples > 0 && (answered != nil || ms == FailedPercentile) {
		v := "-"
		if answered != nil {
			v = fmt.Sprintf("%.3f", *answered)
		}
		return fmt.Sprintf("%s (%d failed)", v, t.FailedSamples)
	}
	if ms == FailedPercentile {
		return "failed"
	}
	return fmt.Sprintf("%.3f", ms)
}

func hasTokens(res *Result) bool {
	return slices.ContainsFunc(res.Trials, func(t Trial) bool { return t.TokenLatencies != nil })
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func upperText(u float64) string {
	if u == 0 {
		return "none failed"
	}
	return fmtNum(u)
}

func fmtNum(v float64) string { return fmt.Sprintf("%.6g", v) }

// writeJSON writes v to path whole (atomicfile), so a reader (the daemon's
// status) never sees half a file; path's directory is created if missing (a
// trial's directory may not exist yet).
func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(dir, filepath.Base(path), append(b, '\n'))
}

// Load reads a search's record from its directory.
func Load(dir string) (*Result, error) {
	f, err := os.Open(filepath.Join(dir, ResultFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f)
}

// Decode reads a search.json from r (opened by the caller, say through an
// os.Root).
func Decode(r io.Reader) (*Result, error) {
	var res Result
	if err := json.NewDecoder(r).Decode(&res); err != nil {
		return nil, fmt.Errorf("%s: %w", ResultFile, err)
	}
	return &res, nil
}
