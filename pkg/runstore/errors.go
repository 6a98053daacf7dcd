package runstore

import "errors"

var (
	// ErrNotFound is returned for a run id the store does not hold.
	ErrNotFound = errors.New("run not found")
	// ErrFileName is returned for a file name that is not a run's file:
	// not in the allowlist, a path, or a temporary-file name.
	ErrFileName = errors.New("not a run file name")
	// ErrPageToken is returned by List for a page token it did not make.
	ErrPageToken = errors.New("invalid page token")
	// ErrLocked is returned by Open when another process holds the data
	// directory: two daemons writing one history would corrupt it.
	ErrLocked = errors.New("data directory is in use by another process")
	// ErrClosed is returned by a Store after Close.
	ErrClosed = errors.New("store is closed")
	// ErrSpec is returned by Create for a spec that is not a JSON value.
	ErrSpec = errors.New("invalid run spec")
	// ErrNotSaved is wrapped by SetState and Fail when the new state could
	// not be written to disk (a full disk): the state is taken all the
	// same, kept in memory and written again by later calls until a write
	// succeeds, so the API reports it and no run is left in a state it has
	// left.
	ErrNotSaved = errors.New("state kept in memory, not yet saved")
)

// Problem is a run directory Open could not load. The directory is left as
// it is (never deleted) for a person to look at.
type Problem struct {
	Path string // the run directory or file
	Err  error
}

func (p Problem) Error() string { return p.Path + ": " + p.Err.Error() }

func (p Problem) Unwrap() error { return p.Err }
