package runstore

import (
	"errors"
	"fmt"
	"sync"
	"testing"
)

// TestConcurrentUse runs the daemon's calls from many goroutines at once
// (meant for -race) and checks that nothing was lost or duplicated.
func TestConcurrentUse(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	const writers, runsEach = 4, 5
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, writers+2)
	for w := range writers {
		wg.Go(func() {
			for i := range runsEach {
				r, err := s.Create([]byte(fmt.Sprintf(`{"w":%d,"i":%d}`, w, i)))
				if err != nil {
					errs <- err
					return
				}
				steps := []func() error{
					func() error { _, err := s.SetState(r.ID, Running, ""); return err },
					func() error { return s.WriteFile(r.ID, ProgressFile, []byte(r.ID)) },
					func() error { _, err := s.SetState(r.ID, Done, "completed"); return err },
				}
				for _, step := range steps {
					if err := step(); err != nil {
						errs <- err
						return
					}
				}
			}
		})
	}
	// A late writer racing the end of a run: either its write lands before
	// the run is done, or it is refused with ErrFinished; never after.
	r := mustCreate(t, s, `{}`)
	mustSet(t, s, r.ID, Running)
	var raceWG sync.WaitGroup
	raceWG.Go(func() {
		for {
			err := s.WriteFile(r.ID, ProgressFile, []byte("late"))
			if errors.Is(err, ErrFinished) {
				return
			}
			if err != nil {
				errs <- err
				return
			}
		}
	})
	readers := sync.WaitGroup{}
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rs, _, err := s.List("", 0, "")
				if err != nil {
					errs <- err
					return
				}
				for i := 1; i < len(rs); i++ {
					if rs[i].Seq >= rs[i-1].Seq {
						errs <- fmt.Errorf("List not newest first: %d after %d", rs[i].Seq, rs[i-1].Seq)
						return
					}
				}
				s.Queued()
			}
		})
	}
	mustSet(t, s, r.ID, Done)
	// What the run's directory holds once it is done must stay, whatever
	// the late writer still tries.
	before := hashTree(t, s.Dir(r.ID))
	raceWG.Wait()
	wg.Wait()
	close(stop)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	s.Close()
	s2 := openTest(t, dir)
	runs, _, err := s2.List(Done, 1000, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != writers*runsEach+1 {
		t.Errorf("%d done runs after reopen, want %d", len(runs), writers*runsEach+1)
	}
	seen := make(map[uint64]bool)
	for _, r := range runs {
		if seen[r.Seq] {
			t.Errorf("sequence number %d repeated", r.Seq)
		}
		seen[r.Seq] = true
	}
	after := hashTree(t, s2.Dir(r.ID))
	for k, v := range before {
		if after[k] != v {
			t.Errorf("%s changed after the run ended", k)
		}
	}
}
