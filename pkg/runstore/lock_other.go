//go:build !unix

package runstore

import "os"

// lockDir does nothing where flock does not exist: one daemon per data
// directory is then the operator's responsibility.
func lockDir(dir string) (*os.File, error) { return nil, nil }

func unlockDir(f *os.File) error { return nil }
