package runlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/netloadgen/netloadgen/pkg/loadgen"
)

// ErrMalformedResult: result.json is not one JSON object of a Result.
var ErrMalformedResult = errors.New("runlog: malformed result.json")

// Load reads dir/result.json back. A missing file gives an error wrapping
// fs.ErrNotExist; a file that is not a single Result object, ErrMalformedResult.
// Unknown fields are accepted, so results written by a newer netloadgen load.
func Load(dir string) (*loadgen.Result, error) {
	f, err := os.Open(filepath.Join(dir, ResultFile))
	if err != nil {
		return nil, fmt.Errorf("load result: %w", err)
	}
	defer f.Close()
	return Decode(f)
}

// Decode reads a result.json from r (opened by the caller, say through an
// os.Root), with Load's checks.
func Decode(r io.Reader) (*loadgen.Result, error) {
	dec := json.NewDecoder(r)
	var res loadgen.Result
	if err := dec.Decode(&res); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformedResult, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: data after the result object", ErrMalformedResult)
	}
	if res.Scenario == "" {
		return nil, fmt.Errorf("%w: no scenario", ErrMalformedResult)
	}
	return &res, nil
}
