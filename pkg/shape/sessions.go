package shape

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/netloadgen/netloadgen/pkg/genai"
	"github.com/netloadgen/netloadgen/pkg/trace"
)

// MaxTurns bounds a session's turns: a conversation's history grows with
// each, and the per-turn figures of result.json have a row for each index.
const MaxTurns = 256

// SessionsFlag is --sessions: RATE:TURNS (TURNS a length law, genai's
// syntax) or RATE:@FILE (a data set of conversations: each its own turns).
type SessionsFlag struct {
	Rate  float64
	Turns genai.Dist
	File  string
}

// String is f in ParseSessions' syntax.
func (f SessionsFlag) String() string {
	r := strconv.FormatFloat(f.Rate, 'g', -1, 64)
	if f.File != "" {
		return r + ":@" + f.File
	}
	return r + ":" + f.Turns.String()
}

// ParseSessions reads --sessions. Errors wrap ErrShape and name --sessions.
func ParseSessions(v string) (SessionsFlag, error) {
	bad := func(why string, a ...any) (SessionsFlag, error) {
		return SessionsFlag{}, fmt.Errorf("%w: --sessions %q: %s (want RATE:TURNS, e.g. 2:4 or 2:uniform:2:6, or RATE:@FILE for a data set of conversations)",
			ErrShape, v, fmt.Sprintf(why, a...))
	}
	rate, rest, ok := strings.Cut(strings.TrimSpace(v), ":")
	if !ok || rest == "" {
		return bad("no turns")
	}
	r, err := strconv.ParseFloat(rate, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) || r > 1e6 {
		return bad("the rate %q is not a number of new sessions a second in (0, 1e6]", rate)
	}
	f := SessionsFlag{Rate: r}
	if file, ok := strings.CutPrefix(rest, "@"); ok {
		if file == "" {
			return bad("no file after @")
		}
		f.File = file
		return f, nil
	}
	if f.Turns, err = genai.ParseDist(rest); err != nil {
		return bad("turns: %v", err)
	}
	if f.Turns.Law == genai.LawFixed && f.Turns.A > MaxTurns || f.Turns.Law == genai.LawUniform && f.Turns.B > MaxTurns {
		return bad("at most %d turns a session", MaxTurns)
	}
	return f, nil
}

// ThinkTime is --think-time: the time between an answer's end and the
// session's next turn. The zero ThinkTime is none.
type ThinkTime struct {
	// Law is "fixed", "uniform" or "exponential".
	Law  string
	A, B time.Duration // fixed: A; uniform: [A, B]; exponential: mean A
}

// maxThink bounds a think time: a session that waits longer is no
// conversation, and the run's duration would not hold it.
const maxThink = time.Hour

// ParseThinkTime reads --think-time: DURATION, uniform:MIN:MAX or
// exponential:MEAN (Go durations, at most an hour). Errors wrap ErrShape
// and name --think-time.
func ParseThinkTime(v string) (ThinkTime, error) {
	bad := func(why string) (ThinkTime, error) {
		return ThinkTime{}, fmt.Errorf("%w: --think-time %q: %s (want DURATION, uniform:MIN:MAX or exponential:MEAN, e.g. 2s or uniform:1s:3s, each at most 1h)", ErrShape, v, why)
	}
	parts := strings.Split(strings.TrimSpace(v), ":")
	ds := make([]time.Duration, 0, 2)
	for _, p := range parts[min(1, len(parts)-1):] {
		d, err := time.ParseDuration(p)
		if err != nil || d < 0 || d > maxThink {
			return bad(fmt.Sprintf("%q is not a duration in [0, 1h]", p))
		}
		ds = append(ds, d)
	}
	switch law := strings.ToLower(parts[0]); {
	case len(parts) == 1:
		return ThinkTime{Law: "fixed", A: ds[0]}, nil
	case law == "uniform" && len(ds) == 2:
		if ds[0] > ds[1] {
			return bad("MIN is over MAX")
		}
		return ThinkTime{Law: law, A: ds[0], B: ds[1]}, nil
	case law == "exponential" && len(ds) == 1:
		return ThinkTime{Law: law, A: ds[0]}, nil
	}
	return bad("unknown law or wrong number of durations")
}

// String is t in ParseThinkTime's syntax ("" for none).
func (t ThinkTime) String() string {
	switch t.Law {
	case "":
		return ""
	case "fixed":
		return t.A.String()
	case "uniform":
		return "uniform:" + t.A.String() + ":" + t.B.String()
	}
	return t.Law + ":" + t.A.String()
}

// Draw is the think time before session's turn (1-based), from seed: the
// same for the same three whatever the order the run asks in.
func (t ThinkTime) Draw(seed uint64, session, turn int) time.Duration {
	if t.Law == "" || t.Law == "fixed" {
		return t.A
	}
	g := rand.NewPCG(seed, uint64(session)<<16|uint64(turn))
	u := float64(g.Uint64()>>11) / (1 << 53)
	if t.Law == "uniform" {
		return t.A + time.Duration(u*float64(t.B-t.A))
	}
	return min(time.Duration(-math.Log(1-u)*float64(t.A)), maxThink)
}

// SessionsOptions configure NewSessions.
type SessionsOptions struct {
	// Rate is new sessions a second (Poisson starts).
	Rate float64
	// Turns is each session's turns, drawn; unused with TurnsOf.
	Turns genai.Dist
	// TurnsOf, when set, are a data set's conversations' turns: session s
	// replays conversation s mod len(TurnsOf).
	TurnsOf []int
	// Duration: sessions start within [0, Duration).
	Duration time.Duration
	// Seed draws the starts, the turns and the think times (the run's
	// schedule seed).
	Seed  uint64
	Think ThinkTime
}

// Sessions is a run's multi-turn sessions: a trace.Shape whose arrivals
// are every planned turn at its session's start (the count sizes the
// run's record; the engine times the later turns from the answers), and
// a pass over the session starts.
type Sessions struct {
	o SessionsOptions
}

// NewSessions checks o and returns the sessions. Errors wrap ErrShape and
// name the flag.
func NewSessions(o SessionsOptions) (*Sessions, error) {
	switch {
	case !(o.Rate > 0) || math.IsInf(o.Rate, 0):
		return nil, fmt.Errorf("%w: --sessions: the rate must be positive, got %v", ErrShape, o.Rate)
	case o.Duration <= 0:
		return nil, fmt.Errorf("%w: --sessions: sessions start within the run's duration; set --min-duration-ms (settings.min_duration_ms) above 0", ErrShape)
	case o.TurnsOf == nil && o.Turns.IsZero():
		return nil, fmt.Errorf("%w: --sessions: no turns per session", ErrShape)
	}
	for i, n := range o.TurnsOf {
		if n < 1 || n > MaxTurns {
			return nil, fmt.Errorf("%w: --sessions: conversation %d has %d user turns; want 1 to %d", ErrShape, i, n, MaxTurns)
		}
	}
	if o.TurnsOf != nil && len(o.TurnsOf) == 0 {
		return nil, fmt.Errorf("%w: --sessions: the data set has no conversations", ErrShape)
	}
	s := &Sessions{o: o}
	p := s.Starts()
	if _, ok := p.Next(); !ok {
		return nil, fmt.Errorf("%w: --sessions: no session starts within the run's %v at %v a second; raise the rate or the duration", ErrShape, o.Duration, o.Rate)
	}
	return s, nil
}

// Think is the think time before session's turn (1-based).
func (s *Sessions) Think(session, turn int) time.Duration {
	return s.o.Think.Draw(s.o.Seed, session, turn)
}

// End is the window sessions start in.
func (s *Sessions) End() time.Duration { return s.o.Duration }

// Starts is a pass over the sessions in start order.
func (s *Sessions) Starts() *SessionPass {
	return &SessionPass{o: &s.o, gaps: rand.NewPCG(s.o.Seed, 0x5e55_1025), turns: rand.NewPCG(s.o.Seed, 0x7a27_5000)}
}

// SessionPass walks the session starts: each pass the same.
type SessionPass struct {
	o           *SessionsOptions
	gaps, turns *rand.PCG
	at          float64 // seconds
	next        int
}

// Next is the next session, false past the window.
func (p *SessionPass) Next() (trace.SessionStart, bool) {
	u := float64(p.gaps.Uint64()>>11) / (1 << 53)
	p.at += -math.Log(1-u) / p.o.Rate
	at := time.Duration(p.at * float64(time.Second))
	if at >= p.o.Duration || p.next > trace.MaxSamples {
		return trace.SessionStart{}, false
	}
	n := 0
	if p.o.TurnsOf != nil {
		n = p.o.TurnsOf[p.next%len(p.o.TurnsOf)]
	} else {
		n = min(p.o.Turns.Draw(p.turns), MaxTurns)
	}
	s := trace.SessionStart{Session: p.next, At: at, Turns: n}
	p.next++
	return s, true
}

// Arrivals is a pass yielding each planned turn at its session's start.
func (s *Sessions) Arrivals() (trace.Arrivals, error) {
	return &turnArrivals{p: s.Starts()}, nil
}

type turnArrivals struct {
	p    *SessionPass
	cur  trace.SessionStart
	left int
}

func (a *turnArrivals) Next() (trace.Arrival, bool) {
	if a.left == 0 {
		s, ok := a.p.Next()
		if !ok {
			return trace.Arrival{}, false
		}
		a.cur, a.left = s, s.Turns
	}
	a.left--
	return trace.Arrival{At: a.cur.At}, true
}

func (a *turnArrivals) Err() error   { return nil }
func (a *turnArrivals) Close() error { return nil }

// SessionStarts is Starts for the engine (loadgen.Sessions).
func (s *Sessions) SessionStarts() trace.SessionIter { return s.Starts() }
