package runstore

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/netloadgen/netloadgen/pkg/atomicfile"
)

// Store is the run history in one data directory. It is safe for
// concurrent use; reads (Get, List, Queued) are served from an in-memory
// index built at Open and never touch the disk.
type Store struct {
	root string // the data directory
	runs string // root/runs
	log  *slog.Logger
	now  func() time.Time
	rand io.Reader
	// write writes one file atomically (atomicfile.WriteFile; a fault in
	// tests).
	write func(dir, name string, data []byte) error
	lock  *os.File // holds the flock on root/.lock

	// createMu serialises Create, so that Seq and ids follow creation
	// order, without holding mu (and so List) across its fsyncs. It guards
	// lastSeq and lastTime.
	createMu sync.Mutex
	lastSeq  uint64
	lastTime time.Time // of the newest id, to keep ids increasing

	// mu guards the index. A run's record is changed holding both the
	// run's own mutex (which serialises its disk writes) and mu, so that
	// readers need only mu and List never waits for an fsync.
	mu       sync.RWMutex
	byID     map[string]*entry
	order    []*entry // by Seq, ascending
	problems []Problem
	closed   bool
}

// entry is one run in the index.
type entry struct {
	mu  sync.Mutex // serialises writes to the run's directory
	rec Record
	pos int // index in Store.order, which never changes
	// unsaved: rec's state could not be written to run.json yet; written
	// holding both mu and Store.mu, read under either; SaveUnsaved retries.
	unsaved bool
}

// Option configures Open.
type Option func(*Store)

// WithLogger sets where Open reports recoveries and unreadable runs
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// WithClock sets the clock of the records' times (default time.Now).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithRandom sets the source of the random part of run ids
// (default crypto/rand).
func WithRandom(r io.Reader) Option { return func(s *Store) { s.rand = r } }

// WithFileWriter replaces the atomic write of every file the store writes
// (default atomicfile.WriteFile): fault injection, for tests of a full
// disk.
func WithFileWriter(w func(dir, name string, data []byte) error) Option {
	return func(s *Store) { s.write = w }
}

// Open opens the run history in dir, creating dir (0700) if needed, and
// recovers from a crash of the previous process (see the package doc).
// Runs that cannot be loaded are logged and listed by Problems. The
// directory is locked until Close: a second Open of it fails with ErrLocked.
func Open(dir string, opts ...Option) (*Store, error) {
	if dir == "" {
		return nil, errors.New("runstore: no data directory (set LOADGEND_DATA_DIR)")
	}
	s := &Store{
		root:  dir,
		runs:  filepath.Join(dir, "runs"),
		log:   slog.Default(),
		now:   time.Now,
		rand:  rand.Reader,
		write: atomicfile.WriteFile,
		byID:  make(map[string]*entry),
	}
	for _, o := range opts {
		o(s)
	}
	if err := os.MkdirAll(s.runs, 0o700); err != nil {
		return nil, fmt.Errorf("runstore: create data directory: %w", err)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, fmt.Errorf("runstore: %s: %w", dir, err)
	}
	s.lock = lock
	if err := s.load(); err != nil {
		_ = unlockDir(s.lock)
		return nil, fmt.Errorf("runstore: %w", err)
	}
	return s, nil
}

// Close writes the states still kept only in memory, if it can, and
// releases the data directory. The Store must not be used after.
func (s *Store) Close() error {
	saveErr := s.SaveUnsaved()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(saveErr, unlockDir(s.lock))
}

// SaveUnsaved writes again the states that could not be written when they
// were taken (ErrNotSaved). Every change of state calls it first; the
// daemon also calls it as a run's progress is saved.
func (s *Store) SaveUnsaved() error {
	s.mu.RLock()
	var pending []*entry
	for _, e := range s.order {
		if e.unsaved { // written holding both e.mu and s.mu
			pending = append(pending, e)
		}
	}
	s.mu.RUnlock()
	var errs []error
	for _, e := range pending {
		e.mu.Lock()
		if e.unsaved {
			if err := s.writeRecord(e.rec); err != nil {
				errs = append(errs, err)
			} else {
				s.mu.Lock()
				e.unsaved = false
				s.mu.Unlock()
			}
		}
		e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// Problems returns the run directories Open could not load.
func (s *Store) Problems() []Problem {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return append([]Problem(nil), s.problems...)
}

// Create records a new run in state queued with the given spec (any JSON
// value; the store does not interpret it) and returns its record.
func (s *Store) Create(spec json.RawMessage) (Record, error) {
	if len(spec) == 0 || !json.Valid(spec) {
		return Record{}, fmt.Errorf("runstore: %w: not a JSON value", ErrSpec)
	}
	// The directory is made under a temporary name and renamed into place
	// once run.json is in it, so a crash never leaves a run without its
	// record.
	stage, err := os.MkdirTemp(s.runs, tempPrefix+"create-*")
	if err != nil {
		return Record{}, fmt.Errorf("runstore: create run: %w", err)
	}
	defer os.RemoveAll(stage) // a no-op once renamed

	s.createMu.Lock()
	defer s.createMu.Unlock()
	s.mu.RLock()
	closed := s.closed
	s.mu.RUnlock()
	if closed {
		return Record{}, fmt.Errorf("runstore: %w", ErrClosed)
	}
	now := s.now().UTC()
	idt := now
	if !idt.After(s.lastTime) {
		idt = s.lastTime.Add(time.Microsecond)
	}
	id, err := newID(idt, s.rand)
	if err != nil {
		return Record{}, fmt.Errorf("runstore: %w", err)
	}
	rec := Record{ID: id, Seq: s.lastSeq + 1, State: Queued, Spec: spec, Created: now}
	b, err := encodeRecord(rec)
	if err != nil {
		return Record{}, fmt.Errorf("runstore: %w", err)
	}
	if err := s.writeFile(stage, RecordFile, b); err != nil {
		return Record{}, fmt.Errorf("runstore: create run: %w", err)
	}
	if err := os.Rename(stage, filepath.Join(s.runs, id)); err != nil {
		return Record{}, fmt.Errorf("runstore: create run: %w", err)
	}
	if err := atomicfile.SyncDir(s.runs); err != nil {
		return Record{}, fmt.Errorf("runstore: create run: %w", err)
	}
	s.lastSeq = rec.Seq
	s.lastTime = idt.Truncate(time.Microsecond)
	rec.Spec = append(json.RawMessage(nil), spec...)
	s.mu.Lock()
	e := &entry{rec: rec, pos: len(s.order)}
	s.byID[id] = e
	s.order = append(s.order, e)
	s.mu.Unlock()
	return rec.clone(), nil
}

// Get returns the record of run id, or an error wrapping ErrNotFound.
func (s *Store) Get(id string) (Record, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e, ok := s.byID[id]
	if !ok {
		return Record{}, fmt.Errorf("runstore: %w: %q", ErrNotFound, id)
	}
	return e.rec.clone(), nil
}

// Dir returns the directory of run id, where the run writes its files, or
// "" if the store holds no such run. The store's guarantees about finished
// runs hold only for writes made through the Store (WriteFile): a writer
// into Dir must stop before the run's state is set terminal.
func (s *Store) Dir(id string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, ok := s.byID[id]; !ok {
		return ""
	}
	return filepath.Join(s.runs, id)
}

// SetState moves run id to state to, recording reason (why, for people;
// may be empty) and the time it started or ended. It returns the new
// record, or an error wrapping ErrNotFound, ErrFinished (the run is already
// terminal), ErrTransition or ErrInvalidState.
func (s *Store) SetState(id string, to State, reason string) (Record, error) {
	return s.update(id, to, reason, "")
}

// Fail moves run id to failed, recording reason and the error's message.
func (s *Store) Fail(id string, reason string, cause error) (Record, error) {
	msg := ""
	if cause != nil {
		msg = cause.Error()
	}
	return s.update(id, Failed, reason, msg)
}

func (s *Store) update(id string, to State, reason, errMsg string) (Record, error) {
	if err := s.SaveUnsaved(); err != nil {
		s.log.Warn("runstore: a state kept in memory still cannot be saved", "error", err)
	}
	e, err := s.entry(id)
	if err != nil {
		return Record{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	// Under e.mu nobody else changes e.rec, so it is read without s.mu.
	rec := e.rec
	if err := checkTransition(rec.State, to); err != nil {
		return Record{}, fmt.Errorf("runstore: run %s: %w", id, err)
	}
	rec.State = to
	rec.Reason = reason
	rec.Error = errMsg
	now := s.now().UTC()
	if to == Running {
		rec.Started = now
	}
	if to.Terminal() {
		rec.Ended = now
	}
	// A state that cannot be written is taken all the same: a run whose
	// disk is full must still end, and the API say so.
	werr := s.writeRecord(rec)
	s.mu.Lock()
	e.rec = rec
	e.unsaved = werr != nil
	s.mu.Unlock()
	if werr != nil {
		return rec.clone(), fmt.Errorf("%w: %w", ErrNotSaved, werr)
	}
	return rec.clone(), nil
}

// writeRecord writes rec to its run.json.
func (s *Store) writeRecord(rec Record) error {
	b, err := encodeRecord(rec)
	if err != nil {
		return fmt.Errorf("runstore: %w", err)
	}
	if err := s.writeFile(filepath.Join(s.runs, rec.ID), RecordFile, b); err != nil {
		return fmt.Errorf("runstore: run %s: %w", rec.ID, err)
	}
	return nil
}

// entry returns the index entry of run id, refusing a closed store.
func (s *Store) entry(id string) (*entry, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, fmt.Errorf("runstore: %w", ErrClosed)
	}
	e, ok := s.byID[id]
	if !ok {
		return nil, fmt.Errorf("runstore: %w: %q", ErrNotFound, id)
	}
	return e, nil
}
