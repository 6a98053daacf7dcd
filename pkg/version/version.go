// Package version holds the build's version, stamped at link time by the
// Makefile (-X github.com/netloadgen/netloadgen/pkg/version.Version=...).
package version

import "runtime/debug"

// Version is the release or git description of this build.
var Version = "dev"

// String is the version, falling back to the module's VCS revision when the
// binary was built without the Makefile (go install, go run).
func String() string {
	if Version != "dev" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				return "dev-" + s.Value[:12]
			}
		}
	}
	return Version
}
