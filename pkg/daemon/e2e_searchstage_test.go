package daemon_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/api"
	"github.com/netloadgen/netloadgen/pkg/search"
)

// A scout search through the daemon shows its stage while it runs (issue
// 33 #4): the event stream's progress names the running trial and its
// stage, and the run's status (fetched on each progress event) gives the
// search's current stage, scout first, then verify; the finished status
// has the stages and the full-length equivalent, and no current stage.
// Scout trials of 1 s and a verify of 2 s each span progress ticks (every
// 500 ms). The identity model passes 50 and 100 queries/s: two scout
// trials (base, boundary) and one verification.
func TestScoutSearchShowsItsStage(t *testing.T) {
	target := e2eSUT(t)
	_, c := e2eService(t, nil)
	id := c.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"target_qps":50,"min_duration_ms":2000,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99},`+
		`"search":{"mode":"find-peak","lower_qps":50,"upper_qps":100,"strategy":"scout","scout_duration_ms":1000}}`, target))

	var events, statuses []string // stages in the order seen, repeats folded
	add := func(list *[]string, s string) {
		if s != "" && (len(*list) == 0 || (*list)[len(*list)-1] != s) {
			*list = append(*list, s)
		}
	}
	err := c.watch(t, id, 2*time.Minute, func(event string, data []byte) bool {
		switch event {
		case api.EventProgress:
			var p api.Progress
			if json.Unmarshal(data, &p) != nil || p.SearchTrial == nil {
				t.Errorf("progress of a search without its trial: %s", data)
				return false
			}
			add(&events, p.SearchTrial.Stage)
			if st := c.status(t, id); st.Search != nil {
				add(&statuses, st.Search.Stage)
			}
		case api.EventState:
			var ev api.StateEvent
			return json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{search.StageScout, search.StageVerify}
	if !slices.Equal(events, want) {
		t.Errorf("progress events' stages %v, want %v", events, want)
	}
	if !slices.Equal(statuses, want) {
		t.Errorf("status's search stage while running: %v, want %v", statuses, want)
	}

	st := c.status(t, id)
	s := st.Search
	if st.State != api.StateDone || s == nil || !s.Found || s.Peak != 100 {
		t.Fatalf("status %+v search %+v", st, s)
	}
	if s.Strategy != search.StrategyScout || s.Stage != "" || s.MinDurationS != 2 || s.FullLengthEquivalentS != 6 {
		t.Errorf("finished search: strategy %q stage %q min %v full-length %v, want scout, none, 2, 6",
			s.Strategy, s.Stage, s.MinDurationS, s.FullLengthEquivalentS)
	}
	if len(s.Stages) != 2 || s.Stages[0].Stage != search.StageScout || s.Stages[0].Trials != 2 ||
		s.Stages[1].Stage != search.StageVerify || s.Stages[1].Trials != 1 || s.Stages[0].DurationS <= 0 || s.Stages[1].DurationS <= 0 {
		t.Errorf("stages %+v", s.Stages)
	}
	var got []string
	for _, tr := range st.Trials {
		got = append(got, fmt.Sprintf("%s %s %g", tr.Phase, tr.Stage, tr.MinDurationS))
	}
	if w := []string{"base scout 1", "boundary scout 1", "verify verify 2"}; !slices.Equal(got, w) {
		t.Errorf("trials (phase stage min_duration_s) %q, want %q", got, w)
	}
}

// A full search shows no stage, while it runs or after, and says its
// strategy.
func TestFullSearchShowsNoStage(t *testing.T) {
	target := e2eSUT(t)
	_, c := e2eService(t, nil)
	id := c.submit(t, fmt.Sprintf(`{"target":%q,"model":"identity","scenario":"Server",`+
		`"settings":{"target_qps":50,"min_duration_ms":1000,"min_query_count":1,"target_latency_ms":100,"latency_percentile":0.99},`+
		`"search":{"mode":"find-peak","lower_qps":50,"upper_qps":100,"strategy":"full"}}`, target))
	var trials []int
	err := c.watch(t, id, 2*time.Minute, func(event string, data []byte) bool {
		switch event {
		case api.EventProgress:
			var p api.Progress
			if json.Unmarshal(data, &p) != nil || p.SearchTrial == nil || p.SearchTrial.Stage != "" || p.SearchTrial.Index < 1 {
				t.Errorf("a full search's progress: %s", data)
			} else if !slices.Contains(trials, p.SearchTrial.Index) {
				trials = append(trials, p.SearchTrial.Index)
			}
			if st := c.status(t, id); st.Search != nil && st.Search.Stage != "" {
				t.Errorf("a full search's status has stage %q", st.Search.Stage)
			}
		case api.EventState:
			var ev api.StateEvent
			return json.Unmarshal(data, &ev) == nil && ev.State.Terminal()
		}
		return false
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) == 0 {
		t.Error("no progress event named its trial")
	}
	st := c.status(t, id)
	s := st.Search
	if st.State != api.StateDone || s == nil || !s.Found || s.Peak != 100 || len(st.Trials) != 2 {
		t.Fatalf("status %+v search %+v", st, s)
	}
	if s.Strategy != search.StrategyFull || s.Stage != "" || len(s.Stages) != 0 {
		t.Errorf("full search: strategy %q stage %q stages %+v", s.Strategy, s.Stage, s.Stages)
	}
	for _, tr := range st.Trials {
		if tr.Stage != "" || tr.MinDurationS != 1 {
			t.Errorf("full search's trial %d: stage %q min_duration_s %v", tr.Index, tr.Stage, tr.MinDurationS)
		}
	}
}
