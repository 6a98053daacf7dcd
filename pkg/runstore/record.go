package runstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// RecordFile is the name of a run's record in its directory.
const RecordFile = "run.json"

// recordVersion is the format of run.json, written in it so that a later
// format can tell an old file from a corrupt one.
const recordVersion = 1

// Record is what the store knows of a run, as kept in its run.json.
type Record struct {
	ID string `json:"id"`
	// Seq orders runs by creation (1, 2, ...): the FIFO order of the queue
	// and the order of List. It never repeats within a data directory.
	Seq   uint64 `json:"seq"`
	State State  `json:"state"`
	// Spec is the run spec as submitted; the store does not interpret it.
	Spec    json.RawMessage `json:"spec"`
	Created time.Time       `json:"created"`
	Started time.Time       `json:"started,omitzero"` // when it became running
	Ended   time.Time       `json:"ended,omitzero"`   // when it reached a terminal state
	// Reason says why the run ended (or is in its state), for people.
	Reason string `json:"reason,omitempty"`
	// Error is the error message of a failed run.
	Error string `json:"error,omitempty"`
}

// clone returns r with its own copy of Spec, so a caller cannot change the
// store's index through a returned Record.
func (r Record) clone() Record {
	r.Spec = slices.Clone(r.Spec)
	return r
}

// diskRecord is run.json's layout.
type diskRecord struct {
	Version int `json:"version"`
	Record
}

func encodeRecord(r Record) ([]byte, error) {
	b, err := json.MarshalIndent(diskRecord{Version: recordVersion, Record: r}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode run %s: %w", r.ID, err)
	}
	return append(b, '\n'), nil
}

// decodeRecord parses run.json of the run directory named dirID and checks
// that it is a record the store could have written.
func decodeRecord(b []byte, dirID string) (Record, error) {
	var d diskRecord
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&d); err != nil {
		return Record{}, fmt.Errorf("parse %s: %w", RecordFile, err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("parse %s: data after the record", RecordFile)
	}
	r := d.Record
	switch {
	case d.Version != recordVersion:
		return Record{}, fmt.Errorf("%s: version %d, want %d", RecordFile, d.Version, recordVersion)
	case r.ID != dirID:
		return Record{}, fmt.Errorf("%s: id %q does not match its directory", RecordFile, r.ID)
	case r.Seq == 0:
		return Record{}, fmt.Errorf("%s: no sequence number", RecordFile)
	case !r.State.Valid():
		return Record{}, fmt.Errorf("%s: %w: %q", RecordFile, ErrInvalidState, r.State)
	case len(r.Spec) == 0 || !json.Valid(r.Spec):
		return Record{}, fmt.Errorf("%s: %w: missing or not JSON", RecordFile, ErrSpec)
	}
	return r, nil
}
