// Package trace computes, before any clock starts, exactly what MLPerf
// LoadGen 6.0.17 pre-generates for a performance run: its effective
// settings, the loaded performance set, and every query with its scheduled
// offset and sample indices, reproducing LoadGen's seeds, draw order and
// libstdc++ algorithms bit for bit (see design/LOADGEN-REFERENCE.md §1.2, §2,
// §3). It is pure. The Trace it returns holds the figures LoadGen logs and
// the generator's state, not the queries: the engine walks them with a
// Cursor, generated as it goes (memory bounded by the loaded set).
package trace
