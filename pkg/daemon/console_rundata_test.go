package daemon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The headline metric is shown by its unit: a SingleStream run's (a
// latency in ns) as a latency in ms, a Server run's as a rate; on the
// compare page the two are different rows.
func TestConsoleHeadlineByUnit(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
	type fig struct {
		Row   string `json:"row"`
		Label string `json:"label"`
		Text  string `json:"text"`
		Shown string `json:"shown"`
	}
	headline := func(result string) fig {
		t.Helper()
		var f fig
		tb.run(chromedp.Evaluate(`import('/ui/assets/rundata.js').then((m) => {
			const f = m.figures({ state: 'done' }, `+result+`).find((f) => f.key === 'metric.value');
			return { row: f.row, label: f.label, text: f.text, shown: m.formatFigure(f) };
		})`, &f, awaitPromise))
		return f
	}
	single := headline(`{ scenario: 'SingleStream', result_validity: 'VALID',
		metric: { name: '90.0th percentile latency (ns)', value: 1234567, unit: 'ns' } }`)
	if single.Shown != "1.23 ms" || strings.Contains(single.Label, "Rate") || !strings.Contains(single.Label, "latency") {
		t.Errorf("SingleStream's headline: %+v, want a latency labelled so, shown as 1.23 ms", single)
	}
	early := headline(`{ scenario: 'MultiStream', metric: { name: 'Early stopping 99.0th percentile estimate (ns)', value: 5e6, unit: 'ns' } }`)
	if early.Shown != "5.00 ms" || early.Row != single.Row {
		t.Errorf("MultiStream's early-stopping headline: %+v, want 5.00 ms on the latency row %q", early, single.Row)
	}
	server := headline(`{ scenario: 'Server', target_qps: 50, metric: { name: 'Completed samples per second', value: 49.5, unit: 'samples/s' } }`)
	if server.Shown != "49.5" || !strings.Contains(server.Label, "Rate achieved (samples/s)") {
		t.Errorf("Server's headline: %+v, want a rate in samples/s", server)
	}
	if server.Row == single.Row {
		t.Errorf("a rate and a latency share the compare page's row %q", server.Row)
	}
}

// A search's trials as the run page draws them (run.js trials, given a
// status): a failed tail (-1, or search.json's INT64_MAX ns) reads
// "failed" and is not plotted; trials that repeat a target, in one phase
// or several, are all plotted; a trial's row links to no page.
func TestConsoleTrialsChart(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
	var got struct {
		Tails   []string `json:"tails"`
		Points  []string `json:"points"`
		Links   int      `json:"links"`
		Buttons int      `json:"buttons"`
	}
	tb.run(chromedp.Evaluate(`import('/ui/assets/run.js').then(async (m) => {
		const trial = (index, phase, target, tail, verdict) => ({ index, run_id: 'r/trial-00' + index, phase, target, achieved: target - index / 10,
			tail_latency_ms: tail, percentile: 0.99, verdict, pass: verdict === 'VALID', failed_samples: 0 });
		const box = m.trials({ id: 'r', state: 'done', trials: [
			trial(1, 'base', 10, 5, 'VALID'), trial(2, 'boundary', 20, -1, 'INVALID'), trial(3, 'bisect', 15, 7, 'VALID'),
			trial(4, 'verify', 15, 7.5, 'VALID'), trial(5, 'verify', 15, 9223372036854.775, 'INVALID'), trial(6, 'verify', 15, 8, 'VALID')] });
		document.querySelector('main').append(box);
		await new Promise((r) => setTimeout(r, 0)); // the charts are drawn a microtask later
		return { tails: [...box.querySelectorAll('tr[data-trial] td.tail')].map((e) => e.textContent),
			points: [...box.querySelectorAll('.chart')].map((e) => e.dataset.points),
			links: box.querySelectorAll('#trials-table a').length,
			buttons: box.querySelectorAll('button[data-trial-file]').length };
	})`, &got, awaitPromise))
	wantTails := []string{"5.00 ms", "failed", "7.00 ms", "7.50 ms", "failed", "8.00 ms"}
	if strings.Join(got.Tails, "|") != strings.Join(wantTails, "|") {
		t.Errorf("tail latencies shown %q, want %q", got.Tails, wantTails)
	}
	// Latency: the four trials with a tail; achieved: all six.
	if strings.Join(got.Points, ",") != "4,6" {
		t.Errorf("the trial charts hold %v points, want 4 (latency: the failed left out) and 6 (achieved: none lost)", got.Points)
	}
	if got.Links != 0 || got.Buttons != 12 {
		t.Errorf("the trials table has %d links and %d file buttons, want none and 2 per trial", got.Links, got.Buttons)
	}
}

// A scout search's trials as the run page draws them: the table has a
// stage column (with each trial's minimum duration), the plots a series
// per stage and phase (scouts apart from the verifications), the stages'
// time is said; a full search's table has no stage column and its series
// are its phases, as before. The live line names the running trial and
// its stage (progress.search_trial), and is empty for a run that is no
// search.
func TestConsoleTrialsChartStages(t *testing.T) {
	env := startConsole(t, nil)
	tb := newTab(t, 0)
	tb.run(chromedp.Navigate(env.base+"/ui/"), chromedp.WaitVisible("main[data-ready]", chromedp.ByQuery))
	type shown struct {
		Heads  []string `json:"heads"`
		Stages []string `json:"stages"`
		Charts []string `json:"charts"`
		Points []string `json:"points"`
		Note   string   `json:"note"`
	}
	var got struct {
		Scout shown    `json:"scout"`
		Full  shown    `json:"full"`
		Live  []string `json:"live"`
	}
	tb.run(chromedp.Evaluate(`import('/ui/assets/run.js').then(async (m) => {
		const trial = (index, phase, stage, target, min) => ({ index, run_id: 'r/trial-00' + index, phase, stage, min_duration_s: min, target,
			achieved: target, tail_latency_ms: 5, percentile: 0.99, verdict: 'VALID', pass: true, failed_samples: 0 });
		const show = async (st) => {
			const box = m.trials(st);
			document.querySelector('main').append(box);
			await new Promise((r) => setTimeout(r, 0)); // the charts are drawn a microtask later
			const out = { heads: [...box.querySelectorAll('#trials-table th')].map((e) => e.textContent),
				stages: [...box.querySelectorAll('tr[data-trial] td.stage')].map((e) => e.textContent),
				charts: [...box.querySelectorAll('.chart')].map((e) => e.getAttribute('aria-label')),
				points: [...box.querySelectorAll('.chart')].map((e) => e.dataset.points),
				note: (box.querySelector('#search-stages') || {}).textContent || '' };
			box.remove();
			return out;
		};
		const scout = await show({ id: 'r', state: 'done', search: { found: true, peak: 20, reported: 20, unit: 'queries/s', strategy: 'scout',
			stages: [{ stage: 'scout', trials: 3, duration_s: 1.5 }, { stage: 'verify', trials: 2, duration_s: 10 }], full_length_equivalent_s: 25 },
			trials: [trial(1, 'base', 'scout', 10, 0.5), trial(2, 'boundary', 'scout', 20, 0.5), trial(3, 'bisect', 'scout', 25, 0.5),
				trial(4, 'verify', 'verify', 25, 5), trial(5, 'verify', 'verify', 20, 5)] });
		const full = await show({ id: 'f', state: 'done', search: { found: true, peak: 20, reported: 20, unit: 'queries/s', strategy: 'full' },
			trials: [trial(1, 'base', undefined, 10, 5), trial(2, 'boundary', undefined, 20, 5)] });
		const live = [m.searchTrialText({ search_trial: { index: 2, target: 20, phase: 'boundary', stage: 'scout' } }),
			m.searchTrialText({ search_trial: { index: 4, target: 25, phase: 'verify', stage: 'verify' } }),
			m.searchTrialText({ search_trial: { index: 1, target: 10, phase: 'base' } }),
			m.searchTrialText({ issued: 3 })];
		return { scout, full, live };
	})`, &got, awaitPromise))

	s := got.Scout
	if !slices.Contains(s.Heads, "Stage") {
		t.Errorf("a scout search's trials table has no stage column: %q", s.Heads)
	}
	if w := []string{"scout (0.5 s)", "scout (0.5 s)", "scout (0.5 s)", "verify (5 s)", "verify (5 s)"}; !slices.Equal(s.Stages, w) {
		t.Errorf("stages shown %q, want %q", s.Stages, w)
	}
	for _, c := range s.Charts {
		if !strings.HasSuffix(c, ": scout base, scout boundary, scout bisect, verify") {
			t.Errorf("a scout search's trials chart %q: want series scout base, scout boundary, scout bisect, verify", c)
		}
	}
	if strings.Join(s.Points, ",") != "5,5" {
		t.Errorf("the scout search's charts hold %v points, want every trial in each", s.Points)
	}
	if !strings.Contains(s.Note, "scout 3 trial(s) in 1.5 s; verify 2 trial(s) in 10 s") || !strings.Contains(s.Note, "25 s") {
		t.Errorf("stages note %q", s.Note)
	}
	f := got.Full
	if slices.Contains(f.Heads, "Stage") || len(f.Stages) != 0 || f.Note != "" {
		t.Errorf("a full search shows stages: heads %q, stages %q, note %q", f.Heads, f.Stages, f.Note)
	}
	for _, c := range f.Charts {
		if !strings.HasSuffix(c, ": base, boundary") {
			t.Errorf("a full search's trials chart %q: want series base, boundary", c)
		}
	}
	wantLive := []string{"Search trial 2 (boundary, scout: a short trial) at 20", "Search trial 4 (verify, verify: a full-length trial) at 25",
		"Search trial 1 (base) at 10", ""}
	if !slices.Equal(got.Live, wantLive) {
		t.Errorf("live search trial lines %q, want %q", got.Live, wantLive)
	}
}
