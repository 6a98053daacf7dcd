// Package secret resolves the references a run's credentials are given by
// (@file:PATH), at run start, so that their values live only in memory: a
// stored spec keeps the reference.
//
// This is the minimal @file: version the TLS half of issue 19 compiles
// against; the headers half brings the full package (@env:) with the same
// API.
package secret

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Sources says where references may be read from.
type Sources struct {
	Env        func(string) (string, bool) // os.LookupEnv; nil: @env: refused
	AllowedEnv []string                    // nil: any variable (the CLI); else only these (the daemon's LOADGEND_SECRET_ENV)
	FilesDir   string                      // "": any path (the CLI); else @file: paths must resolve under it (the daemon's LOADGEND_SECRETS_DIR)
}

// ErrRef marks a reference that cannot be resolved.
var ErrRef = errors.New("secret reference")

const (
	envPrefix  = "@env:"
	filePrefix = "@file:"
)

// IsRef reports whether v is a reference rather than a literal.
func IsRef(v string) bool {
	return strings.HasPrefix(v, envPrefix) || strings.HasPrefix(v, filePrefix)
}

// Resolve is v's value: a literal is itself; @file:PATH the file's
// contents, one trailing newline trimmed. Errors wrap ErrRef and name the
// reference, never a value.
func Resolve(v string, src Sources) (string, error) {
	if strings.HasPrefix(v, envPrefix) {
		return "", fmt.Errorf("%w %q: @env: is not supported here", ErrRef, v)
	}
	name, ok := strings.CutPrefix(v, filePrefix)
	if !ok {
		return v, nil
	}
	if name == "" {
		return "", fmt.Errorf("%w %q: no file named", ErrRef, v)
	}
	b, err := readFile(name, src.FilesDir)
	if err != nil {
		return "", fmt.Errorf("%w %q: %v", ErrRef, v, err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// readFile reads name as given, or under dir: os.Root refuses a path that
// leaves dir, by "..", by an absolute path or by a symbolic link.
func readFile(name, dir string) ([]byte, error) {
	if dir == "" {
		return os.ReadFile(name)
	}
	if filepath.IsAbs(name) {
		rel, err := filepath.Rel(dir, name)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, fmt.Errorf("not under the secrets directory")
		}
		name = rel
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("the secrets directory: %v", err)
	}
	defer root.Close()
	b, err := root.ReadFile(name)
	if err != nil {
		// os.Root's error quotes the path; say what it means.
		if pe, ok := errors.AsType[*os.PathError](err); ok && strings.Contains(pe.Err.Error(), "escapes") {
			return nil, fmt.Errorf("not under the secrets directory")
		}
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("no such file in the secrets directory")
		}
		return nil, err
	}
	return b, nil
}
