package shape

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
)

func TestParseSessions(t *testing.T) {
	f, err := ParseSessions("2.5:uniform:2:6")
	if err != nil || f.Rate != 2.5 || f.Turns != (genai.Dist{Law: genai.LawUniform, A: 2, B: 6}) || f.String() != "2.5:uniform:2:6" {
		t.Fatalf("got %+v, %v", f, err)
	}
	if f, err := ParseSessions("1:@chats.jsonl"); err != nil || f.File != "chats.jsonl" || f.String() != "1:@chats.jsonl" {
		t.Fatalf("got %+v, %v", f, err)
	}
	for _, bad := range []string{"", "2", "2:", "0:3", "-1:3", "x:3", "NaN:3", "Inf:3", "2:0", "2:257", "2:uniform:1:999", "2:@", "2:abc"} {
		if _, err := ParseSessions(bad); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--sessions") {
			t.Errorf("%q: got %v, want an ErrShape naming --sessions", bad, err)
		}
	}
}

func TestParseThinkTime(t *testing.T) {
	for in, want := range map[string]ThinkTime{
		"2s":                {Law: "fixed", A: 2 * time.Second},
		"uniform:1s:3s":     {Law: "uniform", A: time.Second, B: 3 * time.Second},
		"exponential:500ms": {Law: "exponential", A: 500 * time.Millisecond},
	} {
		got, err := ParseThinkTime(in)
		if err != nil || got != want {
			t.Errorf("%q: got %+v, %v", in, got, err)
		}
		if again, _ := ParseThinkTime(got.String()); again != got {
			t.Errorf("%q: String %q does not read back", in, got.String())
		}
	}
	for _, bad := range []string{"", "x", "-1s", "2h", "uniform:3s:1s", "uniform:1s", "exponential", "gamma:1s"} {
		if _, err := ParseThinkTime(bad); !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--think-time") {
			t.Errorf("%q: got %v, want an ErrShape naming --think-time", bad, err)
		}
	}
}

// Think times are deterministic by (seed, session, turn), within the
// law's range, and an exponential's mean is its parameter.
func TestThinkTimeDraws(t *testing.T) {
	u := ThinkTime{Law: "uniform", A: time.Second, B: 3 * time.Second}
	e := ThinkTime{Law: "exponential", A: time.Second}
	var sum float64
	const n = 20000
	for i := range n {
		d := u.Draw(7, i, 2)
		if d < time.Second || d > 3*time.Second || d != u.Draw(7, i, 2) {
			t.Fatalf("draw %d: %v", i, d)
		}
		sum += e.Draw(7, i, 3).Seconds()
	}
	// The mean of n exponentials has sd 1/sqrt(n): 4 sd.
	if m := sum / n; math.Abs(m-1) > 4/math.Sqrt(n) {
		t.Errorf("exponential mean %v, want 1 ± %v", m, 4/math.Sqrt(n))
	}
}

// The starts are a Poisson process at the rate within the window, the same
// each pass; the shape yields every planned turn.
func TestSessionsStartsAndTurns(t *testing.T) {
	s, err := NewSessions(SessionsOptions{Rate: 50, Turns: genai.Dist{Law: genai.LawUniform, A: 1, B: 5}, Duration: 100 * time.Second, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := s.Starts(), s.Starts()
	n, turns := 0, 0
	for a, ok := p1.Next(); ok; a, ok = p1.Next() {
		b, _ := p2.Next()
		if a != b || a.Session != n || a.At >= 100*time.Second || a.Turns < 1 || a.Turns > 5 {
			t.Fatalf("session %d: %+v, other pass %+v", n, a, b)
		}
		n++
		turns += a.Turns
	}
	// 5000 expected, Poisson sd 71: 4 sd.
	if math.Abs(float64(n)-5000) > 4*math.Sqrt(5000) {
		t.Errorf("%d sessions, want 5000 ± 283", n)
	}
	arr, _ := s.Arrivals()
	k := 0
	for _, ok := arr.Next(); ok; _, ok = arr.Next() {
		k++
	}
	if k != turns {
		t.Errorf("the shape yields %d arrivals, the sessions plan %d turns", k, turns)
	}
}

func TestNewSessionsRefuses(t *testing.T) {
	for name, o := range map[string]SessionsOptions{
		"no duration":    {Rate: 1, Turns: genai.Fixed(2)},
		"no turns":       {Rate: 1, Duration: time.Second},
		"empty data set": {Rate: 1, Duration: time.Second, TurnsOf: []int{}},
		"too many turns": {Rate: 1, Duration: time.Second, TurnsOf: []int{3, 300}},
		"no session":     {Rate: 1e-6, Turns: genai.Fixed(2), Duration: time.Millisecond},
	} {
		if _, err := NewSessions(o); !errors.Is(err, ErrShape) {
			t.Errorf("%s: got %v", name, err)
		}
	}
	// The duration's error names the flag and the spec field a user sets.
	_, err := NewSessions(SessionsOptions{Rate: 1, Turns: genai.Fixed(2)})
	if msg := err.Error(); !strings.Contains(msg, "--min-duration-ms") || !strings.Contains(msg, "settings.min_duration_ms") {
		t.Errorf("no duration: %q names neither --min-duration-ms nor settings.min_duration_ms", msg)
	}
}

// With a data set, session s replays conversation s mod N.
func TestSessionsFromConversations(t *testing.T) {
	s, err := NewSessions(SessionsOptions{Rate: 100, TurnsOf: []int{2, 5, 1}, Duration: time.Second, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	p := s.Starts()
	for a, ok := p.Next(); ok; a, ok = p.Next() {
		if want := []int{2, 5, 1}[a.Session%3]; a.Turns != want {
			t.Fatalf("session %d: %d turns, want %d", a.Session, a.Turns, want)
		}
	}
}

// Any text is a valid --sessions or --think-time, reading back as itself,
// or an ErrShape naming the flag; never a panic.
func FuzzParseSessionsAndThinkTime(f *testing.F) {
	for _, s := range []string{"2:4", "1.5:uniform:2:6", "3:@x.jsonl", "2s", "uniform:1s:2s", "exponential:1ms", ":"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if s, err := ParseSessions(v); err == nil {
			if s.Rate <= 0 || s.File == "" && (s.Turns.IsZero() || s.Turns.Law == genai.LawFixed && s.Turns.A > MaxTurns) {
				t.Fatalf("%q: %+v", v, s)
			}
		} else if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--sessions") {
			t.Fatalf("%q: %v", v, err)
		}
		if tt, err := ParseThinkTime(v); err == nil {
			if again, err := ParseThinkTime(tt.String()); err != nil || again != tt {
				t.Fatalf("%q: %+v reads back as %+v, %v", v, tt, again, err)
			}
		} else if !errors.Is(err, ErrShape) || !strings.Contains(err.Error(), "--think-time") {
			t.Fatalf("%q: %v", v, err)
		}
	})
}
