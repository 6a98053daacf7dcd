// Package secret reads the values a run spec gives by reference, so that a
// credential (a bearer token, an API key, a client key) need never be
// written in a spec, a command line or a file the run leaves behind:
// "@env:VAR" is an environment variable of the process, "@file:PATH" a
// file's contents. A value that is not a reference is itself (a literal).
//
// Where a value is shown (logs, stored specs, result files, API answers),
// Shown gives the reference, which names where the secret lives, or
// Redacted for a literal, which is the secret.
package secret

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// Reference prefixes.
const (
	EnvPrefix  = "@env:"
	FilePrefix = "@file:"
)

// Redacted stands for a literal secret value wherever one would be shown.
const Redacted = "<redacted>"

// MaxFileBytes bounds a file read by reference: a header value or a PEM
// key is a few KiB; a larger file is a mistake, not a credential.
const MaxFileBytes = 1 << 20

// Sources says where references may be read from.
type Sources struct {
	Env        func(string) (string, bool) // os.LookupEnv; nil: @env: refused
	AllowedEnv []string                    // nil: any variable (the CLI); else only these (the daemon's LOADGEND_SECRET_ENV)
	FilesDir   string                      // "": any path (the CLI); else @file: paths must resolve under it (the daemon's LOADGEND_SECRETS_DIR)
}

// ErrRef marks a reference that cannot be read. Its errors name the
// reference, never a value.
var ErrRef = errors.New("secret reference")

// IsRef reports whether v is a reference ("@env:" or "@file:" prefix).
func IsRef(v string) bool {
	return strings.HasPrefix(v, EnvPrefix) || strings.HasPrefix(v, FilePrefix)
}

// Shown is how value is shown where a secret may not be: a reference as
// itself, a literal as Redacted.
func Shown(value string) string {
	if IsRef(value) {
		return value
	}
	return Redacted
}

// Resolve is v's value: a literal is itself; @env:VAR is the variable's
// value; @file:PATH the file's contents, one trailing newline ("\n" or
// "\r\n") trimmed. Errors wrap ErrRef.
func Resolve(v string, src Sources) (string, error) {
	if name, ok := strings.CutPrefix(v, EnvPrefix); ok {
		return resolveEnv(v, name, src)
	}
	if path, ok := strings.CutPrefix(v, FilePrefix); ok {
		return resolveFile(v, path, src.FilesDir)
	}
	return v, nil
}

func resolveEnv(ref, name string, src Sources) (string, error) {
	switch {
	case name == "":
		return "", fmt.Errorf("%w %s: no variable named", ErrRef, ref)
	case src.Env == nil:
		return "", fmt.Errorf("%w %s: environment references are not accepted here", ErrRef, ref)
	case src.AllowedEnv != nil && !slices.Contains(src.AllowedEnv, name):
		return "", fmt.Errorf("%w %s: %s is not in LOADGEND_SECRET_ENV, the variables a run spec may read (add it there, comma-separated, and restart loadgend)", ErrRef, ref, name)
	}
	val, ok := src.Env(name)
	if !ok {
		if src.AllowedEnv != nil {
			return "", fmt.Errorf("%w %s: %s is in LOADGEND_SECRET_ENV but not set in loadgend's environment", ErrRef, ref, name)
		}
		return "", fmt.Errorf("%w %s: the environment variable %s is not set", ErrRef, ref, name)
	}
	return val, nil
}

func resolveFile(ref, path, dir string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w %s: no file named", ErrRef, ref)
	}
	var (
		f   *os.File
		err error
	)
	if dir == "" {
		f, err = os.Open(path)
	} else {
		f, err = openUnder(ref, path, dir)
	}
	if err != nil {
		if errors.Is(err, ErrRef) {
			return "", err
		}
		return "", fmt.Errorf("%w %s: %v", ErrRef, ref, plainPathError(err))
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		return "", fmt.Errorf("%w %s: %v", ErrRef, ref, plainPathError(err))
	case st.IsDir():
		return "", fmt.Errorf("%w %s: is a directory", ErrRef, ref)
	case dir != "" && !st.Mode().IsRegular():
		// Checked on the open file, not the name, so that nothing swapped
		// in between is read.
		return "", notRegular(ref, st.Mode())
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return "", fmt.Errorf("%w %s: %v", ErrRef, ref, plainPathError(err))
	}
	if len(b) > MaxFileBytes {
		return "", fmt.Errorf("%w %s: larger than %d bytes", ErrRef, ref, MaxFileBytes)
	}
	s := string(b)
	if t, ok := strings.CutSuffix(s, "\r\n"); ok {
		return t, nil
	}
	return strings.TrimSuffix(s, "\n"), nil
}

// openUnder opens path inside dir: relative to it, or absolute and within
// it. ".." anywhere is refused outright (even where it would stay inside:
// a caller has no reason to write it), and os.OpenInRoot refuses symbolic
// links that lead out of dir, and absolute ones even into it (a mounted
// Kubernetes secret's links are relative).
func openUnder(ref, path, dir string) (*os.File, error) {
	outside := fmt.Errorf("%w %s: outside LOADGEND_SECRETS_DIR (give a path under it)", ErrRef, ref)
	if slices.Contains(strings.Split(filepath.ToSlash(path), "/"), "..") {
		return nil, outside
	}
	name := path
	if filepath.IsAbs(path) {
		absDir, err := filepath.Abs(dir)
		if err != nil {
			return nil, fmt.Errorf("%w %s: LOADGEND_SECRETS_DIR: %v", ErrRef, ref, err)
		}
		rel, err := filepath.Rel(absDir, filepath.Clean(path))
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return nil, outside
		}
		name = rel
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w %s: LOADGEND_SECRETS_DIR: %v", ErrRef, ref, err)
	}
	defer root.Close()
	// A FIFO opened for reading blocks until a writer comes, a request with
	// it (issue 26 #4); a socket cannot be opened at all. Only a regular
	// file is a secret: looked at first, for the error to say so, then
	// opened without blocking whatever it has become (resolveFile checks
	// the open file again).
	st, err := root.Stat(name)
	if err == nil && !st.Mode().IsRegular() && !st.IsDir() {
		return nil, notRegular(ref, st.Mode())
	}
	f, err := root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil && strings.Contains(err.Error(), "escapes") {
		return nil, outside
	}
	return f, err
}

// notRegular refuses a special file under LOADGEND_SECRETS_DIR.
func notRegular(ref string, mode fs.FileMode) error {
	return fmt.Errorf("%w %s: not a regular file (%s) under LOADGEND_SECRETS_DIR: give a file holding the value", ErrRef, ref, kind(mode))
}

// kind names a file's type for an error.
func kind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	}
	return "type " + mode.Type().String()
}

// plainPathError drops the *PathError's own path, which the reference
// already names.
func plainPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
