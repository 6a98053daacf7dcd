package report_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scoutRun is testdata/peak made a scout search's record, in a directory
// named scout: its first five trials scouted (0.3 s each), its sixth
// verified the peak at full length (3 s). Trial 2's tail is a failed
// sample: no point on the tail chart, which leaves trial 1 alone in its
// segment.
func scoutRun(t *testing.T) string {
	t.Helper()
	src := copyRun(t, "peak")
	dir := filepath.Join(filepath.Dir(src), "scout")
	if err := os.Rename(src, dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "search.json")
	m := readJSON(t, p)
	m["strategy"] = "scout"
	trials := m["trials"].([]any)
	for i, tr := range trials {
		tr := tr.(map[string]any)
		tr["stage"], tr["min_duration_s"] = "scout", 0.3
		if i == 1 {
			tr["tail_latency_ms"] = 9223372036854.775
		}
		if i == len(trials)-1 {
			tr["stage"], tr["phase"], tr["min_duration_s"] = "verify", "verify", 3
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestScoutSearchTrials: a scout search's trials plot marks its stages
// (scouts as dots, verifications as squares, each marker's tooltip naming
// its stage and minimum duration), with a legend entry for each stage; the
// trials table names each trial's stage.
func TestScoutSearchTrials(t *testing.T) {
	page := render(t, scoutRun(t))
	for id, wantScouts := range map[string]int{"trials-achieved": 5, "trials-tail": 4} {
		svg := chartSVG(t, page, id)
		scouts := regexp.MustCompile(`<circle [^>]*data-trial-stage="scout"><title>scout scout trials \(short\): trial \d \(scout, 0\.3 s\), target`).FindAllString(svg, -1)
		verifies := regexp.MustCompile(`<rect [^>]*data-trial-stage="verify"><title>scout verify trials \(full length\): trial 6 \(verify, 3 s\), target`).FindAllString(svg, -1)
		if len(scouts) != wantScouts || len(verifies) != 1 || strings.Count(svg, "<circle") != wantScouts || strings.Count(svg, "<rect") != 1 {
			t.Errorf("%s: %d scout dots, %d verify squares, %d dots and %d squares in all; want %d, 1, %d, 1:\n%s",
				id, len(scouts), len(verifies), strings.Count(svg, "<circle"), strings.Count(svg, "<rect"), wantScouts, wantScouts, svg)
		}
		leg := regexp.MustCompile(`(?s)<ul class="series" data-legend="` + id + `">.*?</ul>`).FindString(page)
		if !strings.Contains(leg, `<li data-trial-stage="scout">`) || !strings.Contains(leg, "scout scout trials (short)</li>") ||
			!strings.Contains(leg, `<li data-trial-stage="verify">`) || !strings.Contains(leg, "scout verify trials (full length)</li>") {
			t.Errorf("%s's legend lacks a stage: %q", id, leg)
		}
	}
	rows := regexp.MustCompile(`<tr data-trial="(\d)"><td>\d</td><td class="l" data-trial-stage="(\w+)">([^<]*)</td>`).FindAllStringSubmatch(page, -1)
	var got []string
	for _, r := range rows {
		got = append(got, r[1]+" "+r[2]+": "+r[3])
	}
	want := []string{"1 scout: scout base", "2 scout: scout boundary", "3 scout: scout boundary", "4 scout: scout bisect", "5 scout: scout bisect", "6 verify: verify"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("trial rows %q, want %q", got, want)
	}
	if !strings.Contains(page, "full-length trials, which verify it, are squares") {
		t.Error("the caption does not say what the squares are")
	}
}

// TestFullSearchTrialsUnstaged: a full search's plot has no stage marks,
// no square and no legend: as before strategies.
func TestFullSearchTrialsUnstaged(t *testing.T) {
	page := render(t, copyRun(t, "peak"))
	for _, s := range []string{"data-trial-stage", `data-legend="trials-`, "<rect", "verify it, are squares"} {
		if strings.Contains(page, s) {
			t.Errorf("a full search's page has %q", s)
		}
	}
}
