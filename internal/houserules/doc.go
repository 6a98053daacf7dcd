// Package houserules checks the repository's house rules with tests: which
// packages may import which (the load generator's core stays free of any
// transport), that `make fuzz` runs every fuzz target, and that no function
// grows past the size bounds unless it is on an explicit allowlist. The
// package has no code of its own; its tests are the point.
package houserules
