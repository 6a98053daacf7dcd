package runstore

import (
	"encoding/hex"
	"fmt"
	"io"
	"time"
)

// idTimeLayout makes ids sort by creation time as plain strings: fixed
// width, most significant field first, UTC, microseconds.
const idTimeLayout = "20060102T150405.000000Z"

// idSuffixBytes of randomness keep two stores (or a clock set back) from
// ever producing the same id.
const idSuffixBytes = 4

// idLen is the length of every run id.
const idLen = len(idTimeLayout) + 1 + 2*idSuffixBytes

// newID returns a run id for time t: "<UTC time>-<8 hex digits>", for
// example 20260517T093012.123456Z-9f3a1c2e. It is safe in a URL path and as
// a file name.
func newID(t time.Time, r io.Reader) (string, error) {
	var b [idSuffixBytes]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", fmt.Errorf("run id: %w", err)
	}
	return t.UTC().Format(idTimeLayout) + "-" + hex.EncodeToString(b[:]), nil
}

// idTime returns the creation time encoded in a run id, and whether id has
// the form newID makes.
func idTime(id string) (time.Time, bool) {
	if len(id) != idLen || id[len(idTimeLayout)] != '-' {
		return time.Time{}, false
	}
	for _, c := range id[len(idTimeLayout)+1:] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return time.Time{}, false
		}
	}
	t, err := time.Parse(idTimeLayout, id[:len(idTimeLayout)])
	if err != nil {
		return time.Time{}, false
	}
	return t, true
}

// ValidID reports whether id has the form of a run id. It lets an API
// answer 404 for a malformed id without consulting the store.
func ValidID(id string) bool {
	_, ok := idTime(id)
	return ok
}
