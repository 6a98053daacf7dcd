// Package trace computes, before any clock starts, exactly what MLPerf
// LoadGen 6.0.17 pre-generates for a performance run: its effective
// settings, the loaded performance set, and every query with its scheduled
// offset and sample indices, reproducing LoadGen's seeds, draw order and
// libstdc++ algorithms bit for bit (see design/LOADGEN-REFERENCE.md §1.2, §2,
// §3). It is pure: the engine walks the Trace it returns.
package trace
