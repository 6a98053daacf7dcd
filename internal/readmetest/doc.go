// Package readmetest keeps README.md honest: its shell blocks marked
// "tested" run in order, as a newcomer would paste them, against the servers
// `make serve` starts, and `make demo`'s script must end VALID. The package
// has no code of its own; its tests are the point.
package readmetest
