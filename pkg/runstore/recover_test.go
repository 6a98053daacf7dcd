package runstore

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRecoveryAfterCrash lays out what a daemon killed during a run leaves
// behind and checks what Open makes of it.
func TestRecoveryAfterCrash(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, WithClock(newTestClock().now))
	done := mustCreate(t, s, `{"model":"done"}`)
	mustSet(t, s, done.ID, Running)
	for _, f := range []string{ResultFile, SummaryFile, HlogFile, ProgressFile} {
		if err := s.WriteFile(done.ID, f, []byte("final "+f)); err != nil {
			t.Fatal(err)
		}
	}
	mustSet(t, s, done.ID, Done)
	cancelled := mustCreate(t, s, `{"model":"cancelled"}`)
	mustSet(t, s, cancelled.ID, Cancelled)
	running := mustCreate(t, s, `{"model":"running"}`)
	mustSet(t, s, running.ID, Running)
	q1 := mustCreate(t, s, `{"model":"q1"}`)
	q2 := mustCreate(t, s, `{"model":"q2"}`)
	s.Close() // the process dies: what follows is what it left

	runDir := filepath.Join(dir, "runs", running.ID)
	// progress.json cut in the middle (written by something that is not
	// atomic, or an old version): it must be kept byte for byte.
	partial := []byte(`{"issued": 1200, "completed": 11`)
	if err := os.WriteFile(filepath.Join(runDir, ProgressFile), partial, 0o644); err != nil {
		t.Fatal(err)
	}
	strays := []string{
		filepath.Join(runDir, tempPrefix+"progress.json-123"),
		filepath.Join(runDir, ".atomic-tmp-result.json-456"),
		filepath.Join(dir, "runs", done.ID, tempPrefix+"progress.json-789"),
	}
	for _, p := range strays {
		if err := os.WriteFile(p, []byte("half a wr"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	stage := filepath.Join(dir, "runs", tempPrefix+"create-1")
	if err := os.MkdirAll(stage, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stage, RecordFile), []byte(`{"id":`), 0o600); err != nil {
		t.Fatal(err)
	}
	before := hashTree(t, filepath.Join(dir, "runs"))

	s2 := openTest(t, dir, WithClock(newTestClock().now))
	if p := s2.Problems(); len(p) != 0 {
		t.Errorf("problems: %v", p)
	}
	if tmp := tempFiles(t, dir); len(tmp) != 0 {
		t.Errorf("temporary files left: %v", tmp)
	}
	got, err := s2.Get(running.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != Interrupted || got.Reason != InterruptedReason || got.Ended.IsZero() {
		t.Errorf("running run recovered as %+v, want interrupted (%q) with an end time", got, InterruptedReason)
	}
	f, err := s2.OpenFile(running.ID, ProgressFile)
	if err != nil {
		t.Fatalf("partial progress not readable: %v", err)
	}
	f.Close()
	if _, err := s2.SetState(running.ID, Running, ""); !errors.Is(err, ErrFinished) {
		t.Errorf("interrupted run restarted: %v", err)
	}
	if q := ids(s2.Queued()); !slices.Equal(q, []string{q1.ID, q2.ID}) {
		t.Errorf("Queued = %v, want %v", q, []string{q1.ID, q2.ID})
	}
	// Every file that is not a temporary one is byte-identical, but the
	// interrupted run's record, which recovery rewrote.
	after := hashTree(t, filepath.Join(dir, "runs"))
	for name, sum := range before {
		if isTemp(filepath.Base(name)) || isTemp(filepath.Dir(name)) {
			continue
		}
		if name == filepath.Join(running.ID, RecordFile) {
			if after[name] == sum {
				t.Errorf("%s not rewritten as interrupted", name)
			}
			continue
		}
		if after[name] != sum {
			t.Errorf("%s changed by recovery", name)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("recovery made a new file %s", name)
		}
	}
}

func TestQueueOrderAcrossReopens(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	var want []string
	for i := range 5 {
		r := mustCreate(t, s, `{}`)
		if i == 2 {
			mustSet(t, s, r.ID, Cancelled)
			continue
		}
		want = append(want, r.ID)
	}
	for reopen := range 3 {
		s.Close()
		s = openTest(t, dir)
		if got := ids(s.Queued()); !slices.Equal(got, want) {
			t.Fatalf("reopen %d: Queued = %v, want %v", reopen, got, want)
		}
		// The daemon takes the head of the queue, then a new run arrives.
		mustSet(t, s, want[0], Running)
		mustSet(t, s, want[0], Done)
		want = append(want[1:], mustCreate(t, s, `{}`).ID)
	}
}

// TestReopenKeepsEveryFile checks the acceptance rule of issue 4: across a
// restart, every earlier run's files are byte-identical.
func TestReopenKeepsEveryFile(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	for i, end := range []State{Done, Failed, Cancelled, Interrupted, Done} {
		r := mustCreate(t, s, `{"i":`+strings.Repeat("1", i+1)+`}`)
		mustSet(t, s, r.ID, Running)
		for _, f := range FileNames() {
			if err := s.WriteFile(r.ID, f, []byte(strings.Repeat(f, i+1))); err != nil {
				t.Fatal(err)
			}
		}
		mustSet(t, s, r.ID, end)
	}
	mustCreate(t, s, `{"queued":true}`)
	before := hashTree(t, dir)
	s.Close()
	for range 2 {
		s = openTest(t, dir)
		s.Close()
	}
	if after := hashTree(t, dir); !maps.Equal(before, after) {
		t.Errorf("files changed across reopens:\nbefore %v\nafter  %v", before, after)
	}
}

func TestCorruptRecords(t *testing.T) {
	const id = "20260517T093012.123456Z-9f3a1c2e"
	valid := `{"version":1,"id":"` + id + `","seq":7,"state":"done","spec":{},"created":"2026-05-17T09:30:12Z"}`
	cases := []struct {
		name    string
		content *string // nil: no run.json at all
	}{
		{"truncated", new(valid[:40])},
		{"empty", new("")},
		{"not json", new("\x00\x01garbage")},
		{"other id", new(strings.Replace(valid, "9f3a1c2e", "00000000", 1))},
		{"unknown state", new(strings.Replace(valid, `"done"`, `"paused"`, 1))},
		{"future version", new(strings.Replace(valid, `"version":1`, `"version":2`, 1))},
		{"no seq", new(strings.Replace(valid, `"seq":7`, `"seq":0`, 1))},
		{"no spec", new(strings.Replace(valid, `"spec":{},`, ``, 1))},
		{"two records", new(valid + valid)},
		{"missing", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir)
			good := mustCreate(t, s, `{}`)
			s.Close()
			runDir := filepath.Join(dir, "runs", id)
			if err := os.MkdirAll(runDir, 0o700); err != nil {
				t.Fatal(err)
			}
			if c.content != nil {
				if err := os.WriteFile(filepath.Join(runDir, RecordFile), []byte(*c.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(runDir, ResultFile), []byte("keep me"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := hashTree(t, runDir)
			s = openTest(t, dir)
			probs := s.Problems()
			if len(probs) != 1 || probs[0].Path != runDir {
				t.Fatalf("Problems = %v, want one for %s", probs, runDir)
			}
			if _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
				t.Errorf("Get of the unreadable run: %v, want ErrNotFound", err)
			}
			if _, err := s.Get(good.ID); err != nil {
				t.Errorf("the readable run is lost: %v", err)
			}
			if after := hashTree(t, runDir); !maps.Equal(before, after) {
				t.Errorf("unreadable run's files changed: %v -> %v", before, after)
			}
		})
	}
	// The sanity of the table: the valid record loads.
	dir := t.TempDir()
	runDir := filepath.Join(dir, "runs", id)
	os.MkdirAll(runDir, 0o700)
	os.WriteFile(filepath.Join(runDir, RecordFile), []byte(valid), 0o644)
	s := openTest(t, dir)
	if r, err := s.Get(id); err != nil || r.Seq != 7 || r.State != Done {
		t.Errorf("valid record: %+v, %v (problems %v)", r, err, s.Problems())
	}
}

func TestStrangeEntriesInRuns(t *testing.T) {
	dir := t.TempDir()
	runs := filepath.Join(dir, "runs")
	os.MkdirAll(filepath.Join(runs, "not-an-id"), 0o700)
	os.WriteFile(filepath.Join(runs, "README"), []byte("hi"), 0o644)
	s := openTest(t, dir)
	if got := len(s.Problems()); got != 2 {
		t.Errorf("%d problems, want 2: %v", got, s.Problems())
	}
	for _, p := range []string{filepath.Join(runs, "not-an-id"), filepath.Join(runs, "README")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	mustCreate(t, s, `{}`)
}

func TestOpen(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "a", "data")
	s := openTest(t, dir)
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("data directory mode %v, want 0700", fi.Mode().Perm())
	}
	if _, err := Open(dir, WithLogger(quietLogger())); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	s.Close()
	if _, err := s.Create([]byte(`{}`)); !errors.Is(err, ErrClosed) {
		t.Errorf("Create after Close: %v, want ErrClosed", err)
	}
	s2 := openTest(t, dir)
	if _, err := s2.Create([]byte(`{}`)); err != nil {
		t.Errorf("Create after reopen: %v", err)
	}
	if _, err := Open("", WithLogger(quietLogger())); err == nil {
		t.Error("Open(\"\") succeeded")
	}
	file := filepath.Join(parent, "file")
	os.WriteFile(file, nil, 0o600)
	if _, err := Open(file, WithLogger(quietLogger())); err == nil {
		t.Error("Open of a regular file succeeded")
	}
	for _, spec := range []string{"", "{", "nul", `{"a":1} {}`} {
		if _, err := s2.Create([]byte(spec)); !errors.Is(err, ErrSpec) {
			t.Errorf("Create(%q): %v, want ErrSpec", spec, err)
		}
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestCreateFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, WithRandom(failingReader{}))
	if _, err := s.Create([]byte(`{}`)); err == nil {
		t.Fatal("Create succeeded without randomness")
	}
	ents, err := os.ReadDir(filepath.Join(dir, "runs"))
	if err != nil || len(ents) != 0 {
		t.Errorf("runs/ after a failed Create: %v, %v", ents, err)
	}
	if rs, _, _ := s.List("", 0, ""); len(rs) != 0 {
		t.Errorf("a failed Create is listed: %v", rs)
	}
}
