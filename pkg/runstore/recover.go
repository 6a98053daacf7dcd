package runstore

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// InterruptedReason is the reason recorded for a run that was running when
// the previous process stopped.
const InterruptedReason = "daemon stopped during the run"

// load builds the index from the run directories and recovers from a crash
// of the previous process. It fails only when the disk cannot be read or
// written; a run that cannot be loaded is recorded as a Problem.
func (s *Store) load() error {
	ents, err := os.ReadDir(s.runs)
	if err != nil {
		return fmt.Errorf("read %s: %w", s.runs, err)
	}
	var recs []Record
	removed, interrupted := false, 0
	for _, de := range ents {
		name := de.Name()
		path := filepath.Join(s.runs, name)
		if isTemp(name) {
			// A Create that did not finish: its directory was never
			// renamed into place, so no run is lost by removing it.
			if err := os.RemoveAll(path); err != nil {
				return fmt.Errorf("remove %s: %w", path, err)
			}
			s.log.Info("runstore: removed an unfinished run creation", "path", path)
			removed = true
			continue
		}
		if !de.IsDir() {
			s.problem(path, errors.New("not a run directory"))
			continue
		}
		if !ValidID(name) {
			s.problem(path, errors.New("not a run id"))
			continue
		}
		rec, recovered, err := s.loadRun(path, name)
		if err != nil {
			if errors.Is(err, errUnreadable) {
				s.problem(path, err)
				continue
			}
			return err
		}
		if recovered {
			interrupted++
		}
		recs = append(recs, rec)
	}
	if removed {
		if err := atomicfile.SyncDir(s.runs); err != nil {
			return err
		}
	}
	slices.SortFunc(recs, func(a, b Record) int {
		return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.ID, b.ID))
	})
	s.log.Info("runstore: opened", "dir", s.root, "runs", len(recs), "interrupted", interrupted, "problems", len(s.problems))
	for i, r := range recs {
		e := &entry{rec: r, pos: i}
		s.byID[r.ID] = e
		s.order = append(s.order, e)
		s.lastSeq = max(s.lastSeq, r.Seq)
		if t, _ := idTime(r.ID); t.After(s.lastTime) {
			s.lastTime = t
		}
	}
	return nil
}

// errUnreadable marks a run whose record cannot be loaded: reported, not
// fatal.
var errUnreadable = errors.New("unreadable run")

// loadRun removes the temporary files a crash left in run directory dir,
// reads its record and marks it interrupted if it was running (recovered).
func (s *Store) loadRun(dir, id string) (rec Record, recovered bool, err error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return Record{}, false, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	removed := false
	for _, de := range ents {
		if !isTemp(de.Name()) || de.IsDir() {
			continue
		}
		p := filepath.Join(dir, de.Name())
		if err := os.Remove(p); err != nil {
			return Record{}, false, fmt.Errorf("remove %s: %w", p, err)
		}
		s.log.Info("runstore: removed a temporary file left by a crash", "path", p)
		removed = true
	}
	if removed {
		if err := atomicfile.SyncDir(dir); err != nil {
			return Record{}, false, err
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return Record{}, false, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	rec, err = decodeRecord(b, id)
	if err != nil {
		return Record{}, false, fmt.Errorf("%w: %w", errUnreadable, err)
	}
	if rec.State == Running {
		rec.State = Interrupted
		rec.Reason = InterruptedReason
		// The moment the previous process died is unknown; the store
		// records when it noticed.
		rec.Ended = s.now().UTC()
		if err := s.writeRecord(rec); err != nil {
			return Record{}, false, err
		}
		s.log.Warn("runstore: run interrupted by a stop of the daemon", "run", id)
		recovered = true
	}
	return rec, recovered, nil
}

func (s *Store) problem(path string, err error) {
	s.log.Error("runstore: cannot load run, left in place", "path", path, "err", err)
	s.problems = append(s.problems, Problem{Path: path, Err: err})
}
