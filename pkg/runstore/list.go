package runstore

import (
	"fmt"
)

// DefaultListLimit is the page size of List when limit is not positive.
const DefaultListLimit = 100

// List returns runs newest first, only those in state filter unless filter
// is "", at most limit of them (DefaultListLimit if limit <= 0). next is ""
// on the last page, else the pageToken that returns the following page.
// Pages stay consistent while runs are created: a token names the last run
// returned, and newer runs never appear on later pages.
func (s *Store) List(filter State, limit int, pageToken string) (runs []Record, next string, err error) {
	return s.list(filter, limit, pageToken, true)
}

// ListBrief is List without the runs' specs (Record.Spec is nil): for a
// caller that lists hundreds of runs often and has their specs already.
func (s *Store) ListBrief(filter State, limit int, pageToken string) (runs []Record, next string, err error) {
	return s.list(filter, limit, pageToken, false)
}

func (s *Store) list(filter State, limit int, pageToken string, spec bool) (runs []Record, next string, err error) {
	if filter != "" && !filter.Valid() {
		return nil, "", fmt.Errorf("runstore: %w: %q", ErrInvalidState, filter)
	}
	if limit <= 0 {
		limit = DefaultListLimit
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	i := len(s.order) - 1
	if pageToken != "" {
		e, ok := s.byID[pageToken]
		if !ok {
			return nil, "", fmt.Errorf("runstore: %w", ErrPageToken)
		}
		i = e.pos - 1
	}
	runs = make([]Record, 0, min(limit, i+1))
	for ; i >= 0; i-- {
		r := s.order[i].rec
		if filter != "" && r.State != filter {
			continue
		}
		if len(runs) == limit {
			return runs, runs[len(runs)-1].ID, nil
		}
		if spec {
			r = r.clone()
		} else {
			r.Spec = nil
		}
		runs = append(runs, r)
	}
	return runs, "", nil
}

// Queued returns the queued runs in the order they were created (FIFO): the
// order in which the daemon must run them, also after a restart.
func (s *Store) Queued() []Record {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var q []Record
	for _, e := range s.order {
		if e.rec.State == Queued {
			q = append(q, e.rec.clone())
		}
	}
	return q
}
