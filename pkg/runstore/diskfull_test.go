package runstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// fullDisk is a file writer that fails with ENOSPC while full is set.
type fullDisk struct{ full atomic.Bool }

func (d *fullDisk) write(dir, name string, data []byte) error {
	if d.full.Load() {
		return &os.PathError{Op: "write", Path: filepath.Join(dir, name), Err: syscall.ENOSPC}
	}
	return atomicfile.WriteFile(dir, name, data)
}

// TestStateKeptInMemoryWhenTheDiskIsFull: a run that ends while its
// run.json cannot be written still ends: the store reports the new state
// (the API and the event stream read it), says it is not saved, and
// writes it once the disk has room.
func TestStateKeptInMemoryWhenTheDiskIsFull(t *testing.T) {
	dir := t.TempDir()
	var disk fullDisk
	s := openTest(t, dir, WithFileWriter(disk.write))
	r := mustCreate(t, s, `{"model":"m"}`)
	mustSet(t, s, r.ID, Running)

	disk.full.Store(true)
	got, err := s.Fail(r.ID, "the run's files could not be written", &os.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC})
	if !errors.Is(err, ErrNotSaved) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Fail on a full disk: %v, want ErrNotSaved wrapping ENOSPC", err)
	}
	if got.State != Failed {
		t.Fatalf("record %+v, want failed", got)
	}
	if now, err := s.Get(r.ID); err != nil || now.State != Failed || now.Error == "" {
		t.Fatalf("Get after the failed write: %+v, %v; want failed with its error", now, err)
	}
	if onDisk := readRecordState(t, dir, r.ID); onDisk != Running {
		t.Fatalf("run.json says %s while the disk is full, want the old running", onDisk)
	}
	if err := s.SaveUnsaved(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("SaveUnsaved while full: %v, want ENOSPC", err)
	}

	disk.full.Store(false)
	// The next change of any run writes the kept state first.
	other := mustCreate(t, s, `{"model":"n"}`)
	mustSet(t, s, other.ID, Cancelled)
	if onDisk := readRecordState(t, dir, r.ID); onDisk != Failed {
		t.Fatalf("run.json says %s once the disk has room, want failed", onDisk)
	}
}

// TestCloseSavesKeptStates: Close writes what a full disk kept in memory.
func TestCloseSavesKeptStates(t *testing.T) {
	dir := t.TempDir()
	var disk fullDisk
	s, err := Open(dir, WithLogger(quietLogger()), WithFileWriter(disk.write))
	if err != nil {
		t.Fatal(err)
	}
	r := mustCreate(t, s, `{"model":"m"}`)
	disk.full.Store(true)
	if _, err := s.SetState(r.ID, Cancelled, "cancelled"); !errors.Is(err, ErrNotSaved) {
		t.Fatalf("SetState on a full disk: %v", err)
	}
	disk.full.Store(false)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if onDisk := readRecordState(t, dir, r.ID); onDisk != Cancelled {
		t.Fatalf("after Close run.json says %s, want cancelled", onDisk)
	}
}

func readRecordState(t *testing.T, dir, id string) State {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "runs", id, RecordFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		State State `json:"state"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.State
}

// TestEveryStateReachesAnEnd: from every state the life of a run allows a
// path to a terminal one, so no check at any point can leave a run stuck.
func TestEveryStateReachesAnEnd(t *testing.T) {
	for _, from := range []State{Queued, Running, Done, Failed, Cancelled, Interrupted} {
		seen := map[State]bool{from: true}
		todo := []State{from}
		ends := false
		for len(todo) > 0 {
			st := todo[0]
			todo = todo[1:]
			if st.Terminal() {
				ends = true
			}
			for _, to := range next[st] {
				if !seen[to] {
					seen[to] = true
					todo = append(todo, to)
				}
			}
		}
		if !ends {
			t.Errorf("no terminal state is reachable from %s", from)
		}
		if !from.Terminal() && !seen[Failed] {
			t.Errorf("%s cannot fail: a check that fails there would leave the run stuck", from)
		}
	}
}
