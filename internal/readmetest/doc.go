// Package readmetest keeps README.md and the pages of docs/ honest: their
// shell blocks marked "tested" run in order (the README's, then those of
// the pages docs/README.md links, in its order), as a newcomer would paste
// them, against the servers `make serve` starts; no relative link between
// them points nowhere; and `make demo`'s script must end VALID. The package
// has no code of its own; its tests are the point.
package readmetest
