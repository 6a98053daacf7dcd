package trace

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// listShape is a shape of fixed arrivals; failAt > 0 ends each pass with
// an error after that many.
type listShape struct {
	arr    []Arrival
	end    time.Duration
	failAt int
	opened int
}

func (s *listShape) Arrivals() (Arrivals, error) {
	s.opened++
	return &listPass{s: s}, nil
}
func (s *listShape) End() time.Duration { return s.end }

type listPass struct {
	s      *listShape
	i      int
	err    error
	closed bool
}

func (p *listPass) Next() (Arrival, bool) {
	if p.s.failAt > 0 && p.i == p.s.failAt {
		p.err = errors.New("line 3: not JSON")
		return Arrival{}, false
	}
	if p.closed || p.i >= len(p.s.arr) {
		return Arrival{}, false
	}
	p.i++
	return p.s.arr[p.i-1], true
}
func (p *listPass) Err() error   { return p.err }
func (p *listPass) Close() error { p.closed = true; return nil }

func shapedRequest(s Shape) Requested {
	req := DefaultSettings()
	req.Scenario = Server
	req.Shape = s
	return req
}

// A shaped Server trace issues the shape's arrivals at their offsets with
// their stage, model and request, one sample each drawn from the loaded
// set, the same on every pass; its count and duration are the shape's,
// whatever min_duration and min_query_count say.
func TestShapedTrace(t *testing.T) {
	r := &Request{InputTokens: 10, OutputTokens: 3, HashIDs: []int{1, 2}}
	s := &listShape{end: 5 * time.Second, arr: []Arrival{
		{At: 0}, {At: 10 * time.Millisecond, Stage: 0, Model: 1},
		{At: 10 * time.Millisecond, Stage: 1, Model: 2, Request: r}, {At: 2 * time.Second, Stage: 2},
	}}
	tr, err := New(shapedRequest(s), QSL{TotalSampleCount: 100, PerformanceSampleCount: 50})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 4 || tr.Duration != 5*time.Second || tr.LastScheduled() != 2*time.Second || tr.Shape() != s {
		t.Fatalf("len %d, duration %v, last %v; want 4, 5s, 2s", tr.Len(), tr.Duration, tr.LastScheduled())
	}
	if got := tr.Settings.TargetQPS; got != 4.0/5 {
		t.Errorf("effective target QPS %v, want the mean rate 0.8", got)
	}
	var first []Query
	c := tr.Cursor()
	for pass := range 2 {
		var got []Query
		for q, ok := c.Next(); ok; q, ok = c.Next() {
			got = append(got, q)
		}
		if c.Err() != nil || len(got) != 4 {
			t.Fatalf("pass %d: %d queries, err %v", pass, len(got), c.Err())
		}
		for i, q := range got {
			a := s.arr[i]
			if q.Index != i || q.Scheduled != a.At || q.Stage != a.Stage || q.Model != a.Model || q.Request != a.Request || len(q.Samples) != 1 {
				t.Errorf("pass %d query %d: %+v, want the arrival %+v", pass, i, q, a)
			}
			if q.Samples[0] < 0 || q.Samples[0] >= 100 {
				t.Errorf("query %d: sample %d not in the QSL", i, q.Samples[0])
			}
			if pass == 1 && q.Samples[0] != first[i].Samples[0] {
				t.Errorf("query %d: sample %d on the second pass, %d on the first", i, q.Samples[0], first[i].Samples[0])
			}
		}
		first = got
		c.Reset()
	}
}

// What a shape may not do is refused before any clock starts, naming it.
func TestShapedTraceRefused(t *testing.T) {
	qsl := QSL{TotalSampleCount: 10, PerformanceSampleCount: 10}
	for _, c := range []struct {
		name string
		req  Requested
		want string
	}{
		{"unsorted", shapedRequest(&listShape{arr: []Arrival{{At: time.Second}, {At: 0}}}), "before the one before it"},
		{"negative", shapedRequest(&listShape{arr: []Arrival{{At: -time.Second}}}), "before the start"},
		{"empty", shapedRequest(&listShape{}), "no arrivals"},
		{"bad line", shapedRequest(&listShape{arr: []Arrival{{}, {}, {}, {}}, failAt: 2}), "line 3: not JSON"},
		{"not Server", func() Requested {
			r := shapedRequest(&listShape{arr: []Arrival{{}}})
			r.Scenario = Offline
			return r
		}(), "needs the Server scenario"},
	} {
		_, err := New(c.req, qsl)
		if !errors.Is(err, ErrInvalidSettings) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an invalid-settings error saying %q", c.name, err, c.want)
		}
	}
}

// A pass that fails after the counting pass (the file changed under the
// run) stops its cursor short and says why.
func TestShapedCursorErr(t *testing.T) {
	s := &listShape{arr: []Arrival{{}, {}, {}}}
	tr, err := New(shapedRequest(s), QSL{TotalSampleCount: 10, PerformanceSampleCount: 10})
	if err != nil {
		t.Fatal(err)
	}
	s.failAt = 1
	c := tr.Cursor()
	n := 0
	for _, ok := c.Next(); ok; _, ok = c.Next() {
		n++
	}
	if n != 1 || c.Err() == nil || !strings.Contains(c.Err().Error(), "not JSON") {
		t.Errorf("%d queries, err %v; want 1 and the pass's error", n, c.Err())
	}
	// The schedule's printout (loadgend schedule) says so too, not a
	// shorter schedule.
	var b strings.Builder
	if err := Write(&b, tr); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Errorf("Write of a pass that ends early: %v, want the pass's error", err)
	}
}

// A session's turn gets its sample from the sample index seed, the
// session and the turn alone: a loaded set's sample, the same from any
// trace of the same seeds, spread over the set, another with another
// seed.
func TestSessionSample(t *testing.T) {
	s := &listShape{arr: []Arrival{{At: 0}}}
	qsl := QSL{TotalSampleCount: 1000, PerformanceSampleCount: 64}
	tr, err := New(shapedRequest(s), qsl)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := New(shapedRequest(s), qsl)
	other := shapedRequest(s)
	other.SampleIndexRNGSeed++
	otr, _ := New(other, qsl)
	loaded := map[int]bool{}
	for _, x := range tr.LoadedSet[:tr.DistributionEnd] {
		loaded[x] = true
	}
	seen, differ := map[int]bool{}, 0
	for session := range 50 {
		for turn := 1; turn <= 4; turn++ {
			got := tr.SessionSample(session, turn)
			if len(got) != 1 || !loaded[got[0]] {
				t.Fatalf("session %d turn %d: %v, not one sample of the loaded set", session, turn, got)
			}
			if a := again.SessionSample(session, turn); a[0] != got[0] {
				t.Fatalf("session %d turn %d: %d then %d from the same seeds", session, turn, got[0], a[0])
			}
			if otr.SessionSample(session, turn)[0] != got[0] {
				differ++
			}
			seen[got[0]] = true
		}
	}
	if len(seen) < 50 || differ < 150 {
		t.Errorf("200 turns drew %d distinct samples of 64, %d differ with another seed", len(seen), differ)
	}
}
