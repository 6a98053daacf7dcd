package runstore

import (
	"errors"
	"testing"
)

func TestSetStateTransitions(t *testing.T) {
	// paths reach each state from queued.
	paths := map[State][]State{
		Queued:      nil,
		Running:     {Running},
		Done:        {Running, Done},
		Failed:      {Running, Failed},
		Cancelled:   {Cancelled},
		Interrupted: {Running, Interrupted},
	}
	all := []State{Queued, Running, Done, Failed, Cancelled, Interrupted}
	// allowed is the life of a run as issue 4 defines it, and a queued run
	// that cannot start failing from queued (issue 15).
	allowed := map[[2]State]bool{
		{Queued, Running}:      true,
		{Queued, Failed}:       true,
		{Queued, Cancelled}:    true,
		{Running, Done}:        true,
		{Running, Failed}:      true,
		{Running, Cancelled}:   true,
		{Running, Interrupted}: true,
	}
	dir := t.TempDir()
	s := openTest(t, dir, WithClock(newTestClock().now))
	for _, from := range all {
		for _, to := range all {
			t.Run(string(from)+"_to_"+string(to), func(t *testing.T) {
				r := mustCreate(t, s, `{"model":"m"}`)
				for _, st := range paths[from] {
					mustSet(t, s, r.ID, st)
				}
				before, _ := s.Get(r.ID)
				got, err := s.SetState(r.ID, to, "why")
				switch {
				case allowed[[2]State{from, to}]:
					if err != nil {
						t.Fatalf("SetState: %v, want success", err)
					}
					if got.State != to || got.Reason != "why" {
						t.Fatalf("record %+v, want state %s reason why", got, to)
					}
					if to == Running && !got.Started.After(got.Created) {
						t.Errorf("Started %v not after Created %v", got.Started, got.Created)
					}
					if to.Terminal() && !got.Ended.After(got.Created) {
						t.Errorf("Ended %v not after Created %v", got.Ended, got.Created)
					}
				case from.Terminal():
					if !errors.Is(err, ErrFinished) {
						t.Fatalf("SetState: %v, want ErrFinished", err)
					}
				default:
					if !errors.Is(err, ErrTransition) {
						t.Fatalf("SetState: %v, want ErrTransition", err)
					}
				}
				if err != nil {
					after, _ := s.Get(r.ID)
					if after.State != before.State || after.Reason != before.Reason || !after.Ended.Equal(before.Ended) {
						t.Fatalf("a refused change altered the record: %+v -> %+v", before, after)
					}
				}
			})
		}
	}
	// The index and the disk agree: a reopened store sees the same records.
	want, _, err := s.List("", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2 := openTest(t, dir)
	got, _, err := s2.List("", 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("reopened: %d runs, want %d", len(got), len(want))
	}
	for i := range want {
		w := want[i]
		if w.State == Running { // recovery's job, tested elsewhere
			w.State = Interrupted
		}
		if got[i].ID != w.ID || got[i].State != w.State || got[i].Seq != w.Seq {
			t.Errorf("reopened run %d: %s %s, want %s %s", i, got[i].ID, got[i].State, w.ID, w.State)
		}
	}
}

func TestSetStateErrors(t *testing.T) {
	s := openTest(t, t.TempDir())
	r := mustCreate(t, s, `{}`)
	if _, err := s.SetState("20260517T093012.123456Z-9f3a1c2e", Running, ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, err := s.SetState(r.ID, "paused", ""); !errors.Is(err, ErrInvalidState) {
		t.Errorf("unknown state: %v, want ErrInvalidState", err)
	}
	mustSet(t, s, r.ID, Running)
	got, err := s.Fail(r.ID, "target unreachable", errors.New("dial tcp: refused"))
	if err != nil {
		t.Fatal(err)
	}
	if got.State != Failed || got.Error != "dial tcp: refused" || got.Reason != "target unreachable" {
		t.Errorf("Fail recorded %+v", got)
	}
	if _, err := s.Fail(r.ID, "again", nil); !errors.Is(err, ErrFinished) {
		t.Errorf("Fail of a failed run: %v, want ErrFinished", err)
	}
}

func TestParseState(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{"queued", true}, {"running", true}, {"done", true}, {"failed", true},
		{"cancelled", true}, {"interrupted", true},
		{"", false}, {"Done", false}, {"canceled", false}, {"paused", false},
	} {
		st, err := ParseState(c.in)
		if c.ok != (err == nil) || (c.ok && string(st) != c.in) {
			t.Errorf("ParseState(%q) = %q, %v", c.in, st, err)
		}
		if !c.ok && !errors.Is(err, ErrInvalidState) {
			t.Errorf("ParseState(%q): %v, want ErrInvalidState", c.in, err)
		}
	}
}
